"""CreativeBench novelty: pairs scored per second (Eq. 3) with the 4-gram term alone (`none`)
and with the offline embedding backend (`ast-tfidf`), on pairs of realistic 30-80 line
solutions (two solutions per problem, plus renamed and reformatted variants, App. F)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from forkingpaths.benchmarks.creativebench.metrics import reformat_code, rename_identifiers
from forkingpaths.benchmarks.creativebench.novelty import (
    canonicalize,
    make_embedding_backend,
    novelty,
)

KITS_BISECT = '''"""How many kits can be assembled from stock plus purchases within a budget."""

from collections import Counter


def parts_per_kit(pattern: str) -> dict[str, int]:
    """Units of each part letter one kit consumes."""
    counts = Counter(ch for ch in pattern if ch.isalpha())
    return dict(counts)


def purchase_cost(kits: int, need: dict[str, int], stock: dict[str, int],
                  price: dict[str, int]) -> int:
    # Only the shortfall of each part has to be bought.
    total = 0
    for part, per_kit in need.items():
        missing = kits * per_kit - stock.get(part, 0)
        if missing > 0:
            total += missing * price.get(part, 0)
    return total


def max_kits(pattern: str, stock: dict[str, int], price: dict[str, int], budget: int) -> int:
    need = parts_per_kit(pattern)
    if not need:
        return 10**18
    # The cost grows with the number of kits, so the answer is the last affordable count.
    low = 0
    high = max(stock.values(), default=0) + budget + 1
    while low < high:
        mid = (low + high + 1) // 2
        if purchase_cost(mid, need, stock, price) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def report(pattern: str, stock: dict[str, int], price: dict[str, int], budget: int) -> str:
    kits = max_kits(pattern, stock, price, budget)
    spent = purchase_cost(kits, parts_per_kit(pattern), stock, price)
    return f"{kits} kits, {spent} spent of {budget}"
'''

KITS_STEP_DOWN = '''"""Kits from stock and purchases: the answer digit by digit, largest first."""


def max_kits(pattern, stock, price, budget):
    need = {}
    for ch in pattern:
        if ch.isalpha():
            need[ch] = need.get(ch, 0) + 1
    if not need:
        return 10**18

    def affordable(count):
        spent = 0
        for part, per_kit in need.items():
            short = count * per_kit - stock.get(part, 0)
            if short > 0:
                spent += short * price.get(part, 0)
                if spent > budget:
                    return False
        return True

    # No answer exceeds the largest stock plus one kit per unit of budget.
    ceiling = max(stock.values(), default=0) + budget + 1
    step = 1
    while step * 10 <= ceiling:
        step *= 10
    count = 0
    # Climb in steps of 10^k, then 10^(k-1)...: each digit of the answer is set in turn,
    # using only that affordability is monotone in the number of kits.
    while step:
        while affordable(count + step):
            count += step
        step //= 10
    return count


def report(pattern, stock, price, budget):
    kits = max_kits(pattern, stock, price, budget)
    return "%d kits within %d" % (kits, budget)
'''

MERGE_SORTED = '''"""Merge overlapping booking intervals and report the busy time."""

from typing import Iterable


def normalise(bookings: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    cleaned = []
    for start, end in bookings:
        if end < start:
            start, end = end, start
        if end > start:
            cleaned.append((start, end))
    return cleaned


def merge(bookings: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of the intervals as disjoint, ordered intervals."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(normalise(bookings)):
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def busy_time(bookings: Iterable[tuple[int, int]]) -> int:
    return sum(end - start for start, end in merge(bookings))


def free_slots(bookings, day_start, day_end):
    slots = []
    cursor = day_start
    for start, end in merge(bookings):
        if start > cursor:
            slots.append((cursor, min(start, day_end)))
        cursor = max(cursor, end)
    if cursor < day_end:
        slots.append((cursor, day_end))
    return [s for s in slots if s[0] < s[1]]
'''

MERGE_SWEEP = '''"""Busy intervals by a sweep over boundary events, without sorting the bookings."""


def boundary_counts(bookings):
    """Net number of bookings opening (+1) or closing (-1) at each time point."""
    delta = {}
    low = high = None
    for a, b in bookings:
        start, end = (a, b) if a <= b else (b, a)
        if start == end:
            continue
        delta[start] = delta.get(start, 0) + 1
        delta[end] = delta.get(end, 0) - 1
        low = start if low is None else min(low, start)
        high = end if high is None else max(high, end)
    return delta, low, high


def merge(bookings):
    delta, low, high = boundary_counts(bookings)
    if low is None:
        return []
    merged = []
    open_count = 0
    opened_at = None
    # Walk every time point between the extremes; a busy stretch is where the count is > 0.
    t = low
    while t <= high:
        if t in delta:
            before = open_count
            open_count += delta[t]
            if before == 0 and open_count > 0:
                opened_at = t
            elif before > 0 and open_count == 0:
                merged.append((opened_at, t))
        t += 1
    return merged


def busy_time(bookings):
    total = 0
    for start, end in merge(bookings):
        total += end - start
    return total


def free_slots(bookings, day_start, day_end):
    slots, cursor = [], day_start
    for start, end in merge(bookings) + [(day_end, day_end)]:
        if cursor < min(start, day_end):
            slots.append((cursor, min(start, day_end)))
        cursor = max(cursor, end)
    return slots
'''

WORDS_COUNTER = '''"""The most frequent words of a text, ties broken alphabetically."""

import re
from collections import Counter

WORD = re.compile(r"[a-z']+")
STOP = frozenset({"the", "a", "an", "and", "or", "of", "to", "in"})


def words(text: str) -> list[str]:
    return [w.strip("'") for w in WORD.findall(text.lower()) if w.strip("'")]


def top_words(text: str, k: int = 3, keep_stopwords: bool = False) -> list[tuple[str, int]]:
    counts = Counter(w for w in words(text) if keep_stopwords or w not in STOP)
    # most_common keeps insertion order among ties; sort explicitly for a stable answer.
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:k]


def summary(text: str, k: int = 3) -> str:
    ranked = top_words(text, k)
    if not ranked:
        return "no words"
    parts = [f"{word} x{count}" for word, count in ranked]
    return "; ".join(parts)


def vocabulary_growth(lines: list[str]) -> list[int]:
    seen: set[str] = set()
    growth = []
    for line in lines:
        seen.update(words(line))
        growth.append(len(seen))
    return growth
'''

WORDS_MANUAL = '''"""Most frequent words by a hand-written tokenizer and repeated selection."""

STOP = ("the", "a", "an", "and", "or", "of", "to", "in")
LETTERS = "abcdefghijklmnopqrstuvwxyz'"


def words(text):
    out, current = [], []
    for ch in text.lower() + " ":
        if ch in LETTERS:
            current.append(ch)
        elif current:
            word = "".join(current).strip("'")
            if word:
                out.append(word)
            current = []
    return out


def tally(text, keep_stopwords=False):
    names, counts = [], []
    for word in words(text):
        if not keep_stopwords and word in STOP:
            continue
        if word in names:
            counts[names.index(word)] += 1
        else:
            names.append(word)
            counts.append(1)
    return names, counts


def top_words(text, k=3, keep_stopwords=False):
    names, counts = tally(text, keep_stopwords)
    chosen = []
    # Select the best remaining word k times instead of ordering the whole tally.
    for _ in range(min(k, len(names))):
        best = None
        for i in range(len(names)):
            if names[i] is None:
                continue
            if best is None or (counts[i], names[best]) > (counts[best], names[i]):
                best = i
        chosen.append((names[best], counts[best]))
        names[best] = None
    return chosen


def summary(text, k=3):
    ranked = top_words(text, k)
    return "; ".join(word + " x" + str(count) for word, count in ranked) or "no words"


def vocabulary_growth(lines):
    seen, growth = [], []
    for line in lines:
        for word in words(line):
            if word not in seen:
                seen.append(word)
        growth.append(len(seen))
    return growth
'''

SOLUTIONS = (
    (KITS_BISECT, KITS_STEP_DOWN),
    (MERGE_SORTED, MERGE_SWEEP),
    (WORDS_COUNTER, WORDS_MANUAL),
)


def pairs() -> list[tuple[str, str]]:
    """Each problem's two solutions, and each solution against its renamed and its reformatted
    self: 9 pairs."""
    out: list[tuple[str, str]] = []
    for first, second in SOLUTIONS:
        out.append((first, second))
        out.append((first, rename_identifiers(first)))
        out.append((second, reformat_code(second)))
    return out


async def rate(spec: str, work: list[tuple[str, str]], rounds: int) -> tuple[float, list[float]]:
    """Median pairs/s over `rounds` passes over `work`, and the novelty of each pair."""
    backend = make_embedding_backend(spec)
    scores = [(await novelty(a, b, backend)).novelty for a, b in work]
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        for a, b in work:
            await novelty(a, b, backend)
        rates.append(len(work) / (time.perf_counter() - started))
    return statistics.median(rates), scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="timed passes (median reported)")
    parser.add_argument("--repeat", type=int, default=20, help="copies of the 9 pairs per pass")
    args = parser.parse_args()
    work = pairs() * args.repeat
    lines = [len(s.splitlines()) for pair in SOLUTIONS for s in pair]
    print(f"{len(pairs())} pairs of solutions with {min(lines)}-{max(lines)} lines")
    started = time.perf_counter()
    for a, _ in work:
        canonicalize(a)
    per_canonical = (time.perf_counter() - started) / len(work) * 1e3
    print(f"canonicalize: {per_canonical:.3f} ms per solution")
    print(f"{'backend':<10} {'pairs/s':>9} {'ms/pair':>9}   novelty of the 9 pairs")
    for spec in ("none", "ast-tfidf"):
        per_second, scores = asyncio.run(rate(spec, work, args.rounds))
        shown = " ".join(f"{s:.2f}" for s in scores[: len(pairs())])
        print(f"{spec:<10} {per_second:>9.0f} {1e3 / per_second:>9.3f}   {shown}")


if __name__ == "__main__":
    main()
