"""Mosaic-Agent (§4.1, §4.3, App. D.2, E.2): deliberation, meta-cognition, action formulation."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.genres import GENRES, genre_by_id
from forkingpaths.benchmarks.turtlesoup.dialogue import question_key
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED, benchmark_seed, sampling
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import skip_nested, strip_reasoning

INITIAL_CONFIDENCE = 0.5
"""Policy confidence c at the start of a game (§4.1)."""
VOTES = 3
"""Classification calls per meta-cognition check (§4.1)."""
VOTE_TEMPERATURE = 0.7
VOTE_SEEDS = (1, 2, 3)
GENRE_VOTE_PARAMS: tuple[ModelParams, ...] = tuple(
    ModelParams(temperature=VOTE_TEMPERATURE, seed=seed) for seed in VOTE_SEEDS
)
"""Sampling of the three genre votes, one each. A majority of three means something only if the
votes can differ: the same prompt at temperature 0 gives one answer three times (and a response
cache returns the first as the other two). So each vote is sampled at temperature 0.7 with its
own seed (1, 2, 3): reproducible where the server honours seeds, independent draws otherwise,
and three different cache keys. The paper does not state the votes' sampling (App. D.1 fixes
temperature 0 for its generative calls, which would make the vote a single call)."""
CLUE_TRIGGER = 3
"""New key clues since the last check that trigger a check (App. D.2)."""
TURN_TRIGGER = 5
"""Answered questions since the last check that trigger a check (App. D.2)."""
CANDIDATE_COUNT = 3
"""Candidate questions per turn (§4.1)."""
NEGATIVE_ANSWERS = ("No", "Unknown")
"""Answers that, twice in a row on one direction, rule the direction out."""

# --- parsing ---------------------------------------------------------------------------------


def find_json(text: str, kind: type) -> Any | None:
    """The first JSON value of type `kind` (dict or list) anywhere in `text` (fences included),
    inline reasoning (`<think>...</think>`) removed first. A value nested too deeply to parse
    (RecursionError) is stepped over like any unreadable text."""
    text = strip_reasoning(text)
    decoder = json.JSONDecoder()
    opener = "{" if kind is dict else "["
    start = text.find(opener)
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        except RecursionError:
            start = text.find(opener, skip_nested(text, start))
            continue
        if isinstance(value, kind):
            return value
        start = text.find(opener, start + 1)
    return None


def _as_items(value: Any) -> list[str]:
    """A JSON list (or a text with one item per line) as clean strings."""
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, list):
        return []
    items = [re.sub(r"^\s*(?:[-*•]|\d+[.)、])\s*", "", str(v)).strip() for v in value]
    return [item for item in items if item]


_BELIEF_KEYS = MappingProxyType(
    {
        "logic": ("logic", "logical reasoning", "logics", "逻辑", "逻辑推理"),
        "details": ("details", "detail", "detail summary", "细节", "细节总结"),
        "conclusion": ("conclusion", "final conclusion", "结论", "最终结论"),
    }
)


@dataclass
class BeliefState:
    """The agent's structured understanding of the story (§4.1 Eq. 1): B = {logic, details,
    conclusion}."""

    logic: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    conclusion: str = ""

    def is_empty(self) -> bool:
        return not (self.logic or self.details or self.conclusion.strip())

    def to_dict(self) -> dict[str, Any]:
        return {
            "logic": list(self.logic),
            "details": list(self.details),
            "conclusion": self.conclusion,
        }

    def to_json(self) -> str:
        """The summary format of contract §3 (non-ASCII kept readable)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


def parse_belief(text: str) -> BeliefState | None:
    """A Belief State from a reply holding a JSON object with `logic`, `details` and/or
    `conclusion` (Chinese key names accepted); None when there is no such object or it is empty."""
    obj = find_json(text, dict)
    if obj is None:
        return None
    folded = {str(k).strip().lower(): v for k, v in obj.items()}
    found: dict[str, Any] = {}
    for name, keys in _BELIEF_KEYS.items():
        for key in keys:
            if key in folded:
                found[name] = folded[key]
                break
    if not found:
        return None
    conclusion = found.get("conclusion", "")
    if isinstance(conclusion, list):
        conclusion = " ".join(_as_items(conclusion))
    belief = BeliefState(
        logic=_as_items(found.get("logic", [])),
        details=_as_items(found.get("details", [])),
        conclusion=str(conclusion or "").strip(),
    )
    return None if belief.is_empty() else belief


@dataclass(frozen=True)
class Proposal:
    """One tuple of the Analysis and Proposal Set (§4.1 Eq. 2): a doubt, its analysis and a
    yes/no question proposed to resolve it."""

    doubt: str
    analysis: str
    proposal: str


_APS_KEYS = MappingProxyType(
    {
        "doubt": ("doubt", "point of doubt", "doubts", "疑点"),
        "analysis": ("analysis", "分析"),
        "proposal": (
            "proposal",
            "question",
            "suggestion",
            "question suggestion",
            "建议",
            "提问建议",
        ),
    }
)
_APS_LINE_LABELS = MappingProxyType(
    {
        "point of doubt": "doubt",
        "doubt": "doubt",
        "疑点": "doubt",
        "analysis": "analysis",
        "分析": "analysis",
        "question suggestion": "proposal",
        "proposal": "proposal",
        "suggestion": "proposal",
        "提问建议": "proposal",
        "建议": "proposal",
        "问题": "proposal",
    }
)
_APS_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(point of doubt|doubt|analysis|question suggestion|proposal|"
    r"suggestion|疑点|分析|提问建议|建议|问题)\s*\d*\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.*)$",
    re.IGNORECASE,
)


def parse_aps(text: str) -> list[Proposal]:
    """The Analysis and Proposal Set from a JSON list of `{doubt, analysis, proposal}` objects
    (or an object holding one), else from labelled lines (`Doubt 1: ...`, `Analysis: ...`,
    `Proposal: ...`, Chinese labels too); [] when nothing is readable. Inline reasoning is
    removed first."""
    text = strip_reasoning(text)
    value = find_json(text, list)
    if value is None:
        obj = find_json(text, dict)
        if obj is not None:
            value = next((v for v in obj.values() if isinstance(v, list)), None)
            if value is None and any(str(k).lower() in _APS_KEYS["doubt"] for k in obj):
                value = [obj]
    if isinstance(value, list):
        entries = [_aps_entry(item) for item in value if isinstance(item, Mapping)]
        entries = [e for e in entries if e is not None]
        if entries:
            return entries
    return _aps_from_lines(text)


def _aps_entry(item: Mapping[str, Any]) -> Proposal | None:
    folded = {str(k).strip().lower(): v for k, v in item.items()}
    parts = {}
    for name, keys in _APS_KEYS.items():
        parts[name] = next((str(folded[k]).strip() for k in keys if k in folded), "")
    if not (parts["doubt"] or parts["proposal"]):
        return None
    return Proposal(**parts)


def _aps_from_lines(text: str) -> list[Proposal]:
    entries: list[dict[str, str]] = []
    for line in text.splitlines():
        match = _APS_LINE.match(line)
        if not match:
            continue
        name = _APS_LINE_LABELS[match.group(1).lower()]
        body = match.group(2).strip().strip("*").strip()
        # A doubt opens a new tuple, and so does a part the current tuple already has.
        if name == "doubt" or not entries or entries[-1].get(name):
            entries.append({})
        entries[-1][name] = body
    out = []
    for entry in entries:
        proposal = Proposal(
            entry.get("doubt", ""), entry.get("analysis", ""), entry.get("proposal", "")
        )
        if proposal.doubt or proposal.proposal:
            out.append(proposal)
    return out


_NUMBERED = re.compile(r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:Q\s*)?\(?\d{1,2}\s*[.)、:：]\s*(.+)$")
_LABEL = re.compile(
    r"^\s*\**\s*(?:question|selected question|best question|chosen question|answer|问题|选择)"
    r"\s*\**\s*[:：]\s*\**\s*",
    re.IGNORECASE,
)
_WRAPPERS = "\"'“”‘’「」『』`*[]<> "


def clean_question(text: str) -> str:
    """A question line without list number, label, markdown or surrounding quotes/brackets."""
    line = text.strip()
    match = _NUMBERED.match(line)
    if match:
        line = match.group(1)
    line = _LABEL.sub("", line)
    return line.strip().strip(_WRAPPERS).strip()


def parse_candidates(text: str, limit: int = CANDIDATE_COUNT) -> list[str]:
    """Up to `limit` distinct candidate questions: the numbered lines of the reply, or, when
    there are none, its lines ending in a question mark (inline reasoning removed first)."""
    lines = [line for line in strip_reasoning(text).splitlines() if line.strip()]
    numbered = [clean_question(m.group(1)) for m in map(_NUMBERED.match, lines) if m]
    asked = [clean_question(line) for line in lines if line.strip().endswith(("?", "？"))]
    found = numbered or asked
    out: list[str] = []
    for question in found:
        if question and question.casefold() not in {q.casefold() for q in out}:
            out.append(question)
    return out[:limit]


def match_candidate(reply: str, candidates: Sequence[str]) -> int | None:
    """Index of the candidate the screening reply repeats verbatim (ignoring surrounding
    whitespace, quotes, markdown and a leading list number; inline reasoning removed), or None."""
    reply = strip_reasoning(reply)
    texts = [reply.strip(), clean_question(reply)]
    texts += [clean_question(line) for line in reply.splitlines() if line.strip()]
    for text in texts:
        for index, candidate in enumerate(candidates):
            if text and (text == candidate or text == clean_question(candidate)):
                return index
    return None


def parse_genre(text: str) -> str | None:
    """The genre id a classification reply names (any language's name, id or alias; the
    earliest mention wins; inline reasoning removed first), or None."""
    folded = strip_reasoning(text).strip().casefold()
    if not folded:
        return None
    best: tuple[int, int, str] | None = None
    for genre in GENRES:
        names = {genre.id, genre.id.replace("_", " "), *genre.names.values(), *genre.aliases}
        for name in names:
            position = folded.find(name.casefold())
            # Earliest mention first; a longer name at the same place beats its prefix.
            if position != -1 and (best is None or (position, -len(name)) < best[:2]):
                best = (position, -len(name), genre.id)
    return best[2] if best else None


# --- blacklist -------------------------------------------------------------------------------

_STOPWORD_TEXT = """
    a an the and or but of to in on at by for with from into onto about as is are was were be
    been being do does did done have has had having it its this that these those there their
    they them he him his she her hers i me my we us our you your who whom whose what which when
    where why how not no yes any some someone something anyone anything story surface really
    because before after than then so if can could would should will shall may might must one
    all also just very more most other such only own same too again ever person people
    thing"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Punctuation and function characters split Chinese text into content runs.
_ZH_BREAKS = re.compile(
    r"[\s，。？！、；：,.?!;:“”\"'（）()《》]|[是的了吗呢吧啊么在有和与或也都就被把对不没]"
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def direction_tokens(question: str) -> set[str]:
    """Content tokens of a question: English words of 3+ letters outside a stopword list
    (a plural s dropped), and Chinese character bigrams within function-character-free runs."""
    tokens: set[str] = set()
    for word in re.findall(r"[A-Za-z][A-Za-z'-]+", question.lower()):
        word = word.strip("'-")
        if len(word) >= 3 and word not in _STOPWORDS:
            tokens.add(word[:-1] if len(word) > 4 and word.endswith("s") else word)
    for run in _ZH_BREAKS.split(question):
        chars = "".join(_CJK.findall(run))
        if len(chars) == 1:
            tokens.add(chars)
        tokens.update(chars[i : i + 2] for i in range(len(chars) - 1))
    return tokens


def same_direction(first: str, second: str) -> bool:
    """Whether two questions probe one direction: their content tokens overlap by at least half
    of the smaller set."""
    a, b = direction_tokens(first), direction_tokens(second)
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) >= 0.5


def ruled_out(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """The blacklist: questions of two consecutive turns answered No or Unknown (neither a key
    clue) on the same direction, in order of first appearance."""
    out: list[str] = []
    for prev, cur in pairwise(history):
        if not (_negative(prev) and _negative(cur)):
            continue
        first, second = str(prev.get("question", "")), str(cur.get("question", ""))
        if same_direction(first, second):
            out += [q for q in (first, second) if q and q not in out]
    return out


def _negative(entry: Mapping[str, Any]) -> bool:
    return entry.get("answer") in NEGATIVE_ANSWERS and not entry.get("key_clue")


# --- meta-cognition --------------------------------------------------------------------------


def tally_votes(votes: Sequence[str | None]) -> tuple[str | None, float]:
    """(winner, vote share) of a classification round: the genre with strictly the most votes
    and its votes over all votes cast (unreadable ones included); (None, 0.0) on a tie."""
    counts = Counter(v for v in votes if v is not None)
    if not counts or not votes:
        return None, 0.0
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, 0.0
    return ranked[0][0], ranked[0][1] / len(votes)


def smoothed_confidence(previous: float, share: float, alpha: float) -> float:
    """Eq. 3: c_new = alpha * share + (1 - alpha) * c_old, `share` being the winning genre's
    vote share whether or not it is the current genre (see `MosaicAgent`)."""
    return alpha * share + (1 - alpha) * previous


@dataclass(frozen=True)
class GenreCheck:
    """One meta-cognition check: the votes and what they did to genre and confidence."""

    answered: int
    votes: tuple[str | None, ...]
    winner: str | None
    share: float
    confidence_before: float
    confidence_after: float
    genre_before: str | None
    genre_after: str | None
    settings: tuple[Mapping[str, Any], ...] = ()
    """Sampling of each vote (`temperature`, `seed`), in vote order."""

    @property
    def switched(self) -> bool:
        return self.genre_after != self.genre_before


class MetaCognition:
    """The genre belief with its smoothed confidence and the check trigger (§4.1, App. D.2)."""

    def __init__(self, alpha: float, threshold: float) -> None:
        self.alpha = alpha
        self.threshold = threshold
        self.genre: str | None = None
        self.confidence = INITIAL_CONFIDENCE
        self.checked_answered = 0
        self.checked_clues = 0
        self.checks: list[GenreCheck] = []

    def due(self, answered: int, clues: int) -> bool:
        """3+ new key clues or 5+ answered questions since the last check (or the start)."""
        return (
            clues - self.checked_clues >= CLUE_TRIGGER
            or answered - self.checked_answered >= TURN_TRIGGER
        )

    def update(
        self,
        votes: Sequence[str | None],
        answered: int,
        clues: int,
        settings: Sequence[Mapping[str, Any]] = (),
    ) -> GenreCheck:
        """Apply one round of votes: EMA update and switch rule (`MosaicAgent` docstring);
        `settings` (each vote's sampling) is recorded with the check."""
        winner, share = tally_votes(votes)
        before_c, before_g = self.confidence, self.genre
        if winner is not None:
            new = smoothed_confidence(self.confidence, share, self.alpha)
            if winner != self.genre and new > self.confidence + self.threshold:
                self.genre = winner
            self.confidence = new
        self.checked_answered, self.checked_clues = answered, clues
        check = GenreCheck(
            answered,
            tuple(votes),
            winner,
            share,
            before_c,
            self.confidence,
            before_g,
            self.genre,
            tuple(dict(s) for s in settings),
        )
        self.checks.append(check)
        return check


def first_fresh(
    candidates: Sequence[str], history: Sequence[Mapping[str, Any]], blacklist: Sequence[str]
) -> int:
    """Index of the first candidate neither asked already nor on the blacklist (both compared
    as `dialogue.question_key`: case, spacing and punctuation ignored); 0 when every one is."""
    asked = {question_key(str(e.get("question", ""))) for e in history}
    banned = {question_key(q) for q in blacklist}
    for index, candidate in enumerate(candidates):
        key = question_key(candidate)
        if key not in asked and key not in banned:
            return index
    return 0


def _describe_votes(check: GenreCheck) -> str:
    """`votes: Supernatural, Mind Game, - (temperature 0.7, seeds 1/2/3)` for a thought."""
    names = [genre_by_id(v).names["en"] if v else "-" for v in check.votes]
    temperatures = {s.get("temperature") for s in check.settings}
    seeds = "/".join(str(s.get("seed")) for s in check.settings)
    sampling = ""
    if check.settings:
        shown_t = ", ".join(str(t) for t in sorted(temperatures, key=str))
        sampling = f" (temperature {shown_t}, seeds {seeds})"
    return f"votes: {', '.join(names)}{sampling}"


def fallback_question(history: Sequence[Mapping[str, Any]], language: str) -> str:
    """A generic probe for a turn whose reply held no question: the first of
    `FALLBACK_QUESTIONS` not asked yet (all asked: cycling by turn)."""
    asked = {str(e.get("question", "")).strip() for e in history}
    pool = prompts.FALLBACK_QUESTIONS[prompts.resolve_language(language)]
    fresh = [q for q in pool if q not in asked]
    return fresh[0] if fresh else pool[len(history) % len(pool)]


# --- the agent -------------------------------------------------------------------------------


def history_entries(data: Mapping[str, Any], key: str = "history") -> list[Mapping[str, Any]]:
    """The list under `key` of the observation data, keeping only mapping entries."""
    value = data.get(key) or []
    return [e for e in value if isinstance(e, Mapping)] if isinstance(value, list) else []


def key_clue_records(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The Key Clue Records (§4.3): the observation's `key_clues`, else the flagged history."""
    if "key_clues" in data:
        return history_entries(data, "key_clues")
    return [e for e in history_entries(data) if e.get("key_clue")]


class MosaicAgent:
    """Mosaic-Agent's questioner; one instance plays one episode at a time.

    One `act` per dialogue turn (contract §3). In the `ask` phase the agent runs, in the paper's
    order (every reply is read after removing inline reasoning, `<think>...</think>`):

    1. Deliberation (option `deliberation`):
       - local analysis of the last question and answer, every turn from turn 2 (purpose `local`);
       - global deliberation every `deliberation_interval` answered questions (after turns 5, 10,
         ..., 25 with the defaults): the Belief State update (Eq. 1, purpose `belief`) from the
         surface, the Key Clue Records, the full history and the previous belief, parsed as JSON
         `{logic, details, conclusion}` (an unreadable reply keeps the previous belief), then the
         self-diagnosis (Eq. 2, purpose `aps`) producing the Analysis and Proposal Set, a list of
         `(doubt, analysis, proposal)` (an unreadable reply keeps the previous set).
    2. Meta-cognition (option `metacognition`): when at least 3 new key clues have arrived, or 5
       questions have been answered, since the last check (App. D.2; the game start counts as a
       check), three classification calls (purpose `genre`) vote for one of the five genres of
       App. E.2. Each vote is its own sample: temperature 0.7 with seeds 1, 2 and 3
       (`GENRE_VOTE_PARAMS`), so the three can disagree and never come back from a cache as
       copies of the first; each check records the votes and their settings (`GenreCheck`,
       `Decision.thought`). The genre with strictly the most votes wins; its vote share
       (votes / 3) is the new confidence score of Eq. 3, read as
       c_new = alpha * share + (1 - alpha) * c_old (c starts at 0.5). c is updated on every
       decided vote; the strategy switches to the winner only when c_new > c_old +
       switch_threshold. A vote for the current genre updates c without a switch. A tie (or no
       readable vote) changes nothing. Until a genre is chosen, and throughout without
       meta-cognition, the unknown-genre strategy guides the questions.

       A vote won by another genre than the current one updates c with that genre's share too
       (not with 1 - share). §4.1 says a new vote "yields a confidence score" that Eq. 3
       smooths, and that the agent "switches its strategy only if the new smoothed confidence
       exceeds the sum of the old confidence and a predefined threshold": a switch is a move to
       the vote's genre, so the score is the confidence in the voted genre. Read as 1 - share
       (support left for the current genre), a disagreeing vote would always lower c, the
       switch condition could never hold for another genre, and no "successful genre switch"
       (§4.1) could follow the first one. With share, a weak disagreeing majority lowers c and
       keeps the strategy (2/3 from c = 0.85 gives 0.72), while a unanimous one switches when
       it lifts c by more than the threshold (3/3 from c = 0.85 gives 0.955 > 0.95).
    3. Action formulation: three candidates (purpose `candidates`) from the APS, the genre strategy,
       the local analysis and the last `history_window` exchanges; then, with `pruning`, the
       screening call (purpose `screen`) against the last `screening_window` exchanges, every asked
       question and the blacklist, which must return one candidate verbatim (an optional leading
       number and surrounding quotes are ignored). Any other reply, and every turn without
       pruning, takes the first candidate that is neither asked already (compared as
       `dialogue.question_key`: case, spacing, punctuation) nor on the blacklist; only when all
       are does it take the first. Without deliberation there is no local
       analysis, belief or APS: candidates come from the history and the strategy alone. A
       single readable candidate is asked without screening; with none, the first unasked
       `FALLBACK_QUESTIONS` probe. `Decision.thought` records genre, confidence, blacklist size
       and how the question was chosen.

    Blacklist rule (the paper leaves it open): two consecutive questions that both got No or
    Unknown (neither flagged as a key clue) and share a direction (content words overlapping by
    at least half of the shorter question's, `same_direction`) both go on the blacklist; it is
    recomputed from the full history every turn.

    In the `summarize` phase (after the last turn): a final global deliberation (purpose `belief`)
    and the summary is the Belief State as a JSON string. Without deliberation one summary call
    (purpose `summary`) asks for the same JSON. When no belief could be read at all, the summary's
    conclusion is the model's reply as text, so the evaluation still sees what the model said.

    `key_clues` is read by the benchmark (`reset_options`), whose env then builds the responder
    without clue flags (Table 3 "w/o Key Clue"); the agent only stores it. Garbage replies never
    raise: they are recorded in `counts` and the agent falls back as described.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        deliberation: bool = True,
        metacognition: bool = True,
        pruning: bool = True,
        key_clues: bool = True,
        deliberation_interval: int = 5,
        ema_alpha: float = 0.7,
        switch_threshold: float = 0.1,
        history_window: int = 10,
        screening_window: int = 4,
        seed: int | None = MODEL_SEED,
    ) -> None:
        self.model = model
        self.deliberation = _check_bool("deliberation", deliberation)
        self.metacognition = _check_bool("metacognition", metacognition)
        self.pruning = _check_bool("pruning", pruning)
        self.key_clues = _check_bool("key_clues", key_clues)
        self.deliberation_interval = _check_int("deliberation_interval", deliberation_interval)
        self.ema_alpha = _check_unit("ema_alpha", ema_alpha, allow_zero=False)
        self.switch_threshold = _check_unit("switch_threshold", switch_threshold, allow_zero=True)
        self.history_window = _check_int("history_window", history_window)
        self.screening_window = _check_int("screening_window", screening_window)
        # Seed 42 on every call but the genre votes (App. D.1); None leaves the run's own.
        self.params = sampling(seed)
        self._start(None)

    def _start(self, puzzle_id: str | None) -> None:
        """Forget the episode: memory, belief, APS, genre and counters."""
        self.puzzle_id = puzzle_id
        self.history: list[Mapping[str, Any]] = []
        self.key_clue_records: list[Mapping[str, Any]] = []
        self.belief = BeliefState()
        self.belief_answered = -1
        self.aps: list[Proposal] = []
        self.analysis = ""
        self.meta = MetaCognition(self.ema_alpha, self.switch_threshold)
        self.blacklist: list[str] = []
        self.counts: Counter[str] = Counter()

    def reset(self, instance: Instance, seed: int) -> None:
        self._start(None)

    def state(self) -> dict[str, Any]:
        return {}

    @property
    def genre(self) -> str | None:
        return self.meta.genre

    @property
    def confidence(self) -> float:
        return self.meta.confidence

    async def act(self, observation: Observation) -> Decision:
        data = observation.data
        puzzle_id = data.get("puzzle_id")
        if puzzle_id is not None and puzzle_id != self.puzzle_id:
            # A new puzzle without reset() (direct use): start clean rather than mix memories.
            self._start(str(puzzle_id))
        self.history = history_entries(data)
        self.key_clue_records = key_clue_records(data)
        calls: list[ModelCallRecord] = []
        if data.get("phase") == "summarize":
            return await self._summarize(data, calls)
        return await self._ask(data, calls)

    # -- ask phase ----------------------------------------------------------------------------

    async def _ask(self, data: Mapping[str, Any], calls: list[ModelCallRecord]) -> Decision:
        lang = prompts.resolve_language(data.get("language"))
        answered = len(self.history)
        if self.deliberation and answered:
            await self._local_analysis(data, lang, calls)
            if answered % self.deliberation_interval == 0 and self.belief_answered != answered:
                await self._update_belief(data, lang, calls)
                await self._diagnose(data, lang, calls)
        check = None
        if self.metacognition and self.meta.due(answered, len(self.key_clue_records)):
            check = await self._classify(data, lang, calls)
        self.blacklist = ruled_out(self.history)
        candidates = await self._propose(data, lang, calls)
        question, how = await self._select(data, lang, candidates, calls)
        genre = genre_by_id(self.genre).names["en"] if self.genre else "unknown"
        thought = (
            f"genre: {genre} (c={self.confidence:.2f}); blacklist: {len(self.blacklist)}; "
            f"question: {how}"
        )
        if check is not None:
            thought += "; " + _describe_votes(check)
        return Decision(action=question, thought=thought, calls=calls)

    async def _local_analysis(
        self, data: Mapping[str, Any], lang: str, calls: list[ModelCallRecord]
    ) -> None:
        prompt = prompts.render_local(
            lang,
            surface=str(data.get("surface", "")),
            latest=prompts.render_exchange(self.history[-1], lang),
            history=prompts.render_history(self.history[:-1], lang),
        )
        self.analysis = strip_reasoning(await self._call(prompt, "local", calls)).strip()

    async def _update_belief(
        self, data: Mapping[str, Any], lang: str, calls: list[ModelCallRecord]
    ) -> str:
        """Eq. 1; returns the raw reply (the summary falls back on it)."""
        previous = "" if self.belief.is_empty() else self.belief.to_json()
        prompt = prompts.render_belief(
            lang,
            surface=str(data.get("surface", "")),
            key_clues=prompts.render_history(self.key_clue_records, lang),
            history=prompts.render_history(self.history, lang),
            previous=prompts.or_none(previous, lang),
        )
        reply = await self._call(prompt, "belief", calls)
        self.belief_answered = len(self.history)
        belief = parse_belief(reply)
        if belief is None:
            self.counts["belief_unreadable"] += 1
        else:
            self.belief = belief
        return reply

    async def _diagnose(
        self, data: Mapping[str, Any], lang: str, calls: list[ModelCallRecord]
    ) -> None:
        """Eq. 2: the Analysis and Proposal Set of the current belief."""
        prompt = prompts.render_aps(
            lang,
            surface=str(data.get("surface", "")),
            key_clues=prompts.render_history(self.key_clue_records, lang),
            logic=prompts.render_list(self.belief.logic, lang),
            details=prompts.render_list(self.belief.details, lang),
            conclusion=prompts.or_none(self.belief.conclusion, lang),
        )
        aps = parse_aps(await self._call(prompt, "aps", calls))
        if aps:
            self.aps = aps
        else:
            self.counts["aps_unreadable"] += 1

    async def _classify(
        self, data: Mapping[str, Any], lang: str, calls: list[ModelCallRecord]
    ) -> GenreCheck:
        prompt = prompts.render_genre(
            lang,
            surface=str(data.get("surface", "")),
            history=prompts.render_history(self.history, lang),
            key_clues=prompts.render_history(self.key_clue_records, lang),
        )
        votes = [
            parse_genre(await self._call(prompt, "genre", calls, params))
            for params in GENRE_VOTE_PARAMS
        ]
        self.counts["genre_votes_unreadable"] += sum(v is None for v in votes)
        settings = [{"temperature": p.temperature, "seed": p.seed} for p in GENRE_VOTE_PARAMS]
        return self.meta.update(votes, len(self.history), len(self.key_clue_records), settings)

    def _advice(self, lang: str) -> str:
        lines = []
        for item in self.aps:
            text = item.proposal or item.doubt
            if item.doubt and item.proposal:
                text = f"{item.proposal} ({item.doubt})"
            lines.append(text)
        return prompts.render_list(lines, lang)

    async def _propose(
        self, data: Mapping[str, Any], lang: str, calls: list[ModelCallRecord]
    ) -> list[str]:
        strategy = self.genre if self.metacognition else None
        prompt = prompts.render_candidates(
            lang,
            surface=str(data.get("surface", "")),
            advice=self._advice(lang) if self.deliberation else prompts.or_none("", lang),
            analysis=prompts.or_none(self.analysis if self.deliberation else "", lang),
            guidance=prompts.strategy_text(strategy, lang),
            history=prompts.render_history(self.history[-self.history_window :], lang),
        )
        candidates = parse_candidates(await self._call(prompt, "candidates", calls))
        if not candidates:
            self.counts["candidates_unreadable"] += 1
        return candidates

    async def _select(
        self,
        data: Mapping[str, Any],
        lang: str,
        candidates: list[str],
        calls: list[ModelCallRecord],
    ) -> tuple[str, str]:
        """The question to ask and how it was chosen."""
        if not candidates:
            return fallback_question(self.history, lang), "fallback (no readable candidate)"
        if len(candidates) == 1:
            return candidates[0], "candidate 1 of 1 (the only one)"
        if not self.pruning:
            index = first_fresh(candidates, self.history, self.blacklist)
            return candidates[index], (
                f"candidate {index + 1} of {len(candidates)} (first not asked, no screening)"
            )
        prompt = prompts.render_screen(
            lang,
            surface=str(data.get("surface", "")),
            advice=self._advice(lang) if self.deliberation else prompts.or_none("", lang),
            analysis=prompts.or_none(self.analysis if self.deliberation else "", lang),
            history=prompts.render_history(self.history[-self.screening_window :], lang),
            asked=prompts.render_numbered([str(e.get("question", "")) for e in self.history], lang),
            candidates=prompts.render_numbered(candidates, lang),
            blacklist=prompts.render_list(self.blacklist, lang),
        )
        index = match_candidate(await self._call(prompt, "screen", calls), candidates)
        if index is None:
            self.counts["screen_fallback"] += 1
            index = first_fresh(candidates, self.history, self.blacklist)
            return candidates[index], (
                f"candidate {index + 1} of {len(candidates)} (screening reply not verbatim; "
                "first not asked)"
            )
        return candidates[index], f"candidate {index + 1} of {len(candidates)} (screened)"

    # -- summarize phase ----------------------------------------------------------------------

    async def _summarize(self, data: Mapping[str, Any], calls: list[ModelCallRecord]) -> Decision:
        lang = prompts.resolve_language(data.get("language"))
        if self.deliberation:
            reply = await self._update_belief(data, lang, calls)
        else:
            prompt = prompts.render_summary(
                lang,
                surface=str(data.get("surface", "")),
                key_clues=prompts.render_history(self.key_clue_records, lang),
                history=prompts.render_history(self.history, lang),
            )
            reply = await self._call(prompt, "summary", calls)
            belief = parse_belief(reply)
            if belief is None:
                self.counts["summary_unreadable"] += 1
            else:
                self.belief = belief
        summary = self.belief
        if summary.is_empty():
            summary = BeliefState(conclusion=strip_reasoning(reply).strip())
        thought = f"final belief: {len(summary.logic)} logic points, {len(summary.details)} details"
        return Decision(action=summary.to_json(), thought=thought, calls=calls)

    async def _call(
        self,
        prompt: str,
        purpose: str,
        calls: list[ModelCallRecord],
        params: ModelParams | None = None,
    ) -> str:
        messages = [Message(role="user", content=prompt)]
        completion = await self.model.complete(messages, params or self.params)
        calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
        return completion.text


# --- options ---------------------------------------------------------------------------------


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name}: got {shown(value)}; allowed values: true or false")
    return value


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name}: got {shown(value)}; allowed values: an integer >= 1")
    return value


def _check_unit(name: str, value: Any, *, allow_zero: bool) -> float:
    """A number in (0, 1] (alpha) or, with `allow_zero`, in [0, 1) (the switch threshold)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if allow_zero:
        ok, allowed = number and 0 <= value < 1, "a number in [0, 1)"
    else:
        ok, allowed = number and 0 < value <= 1, "a number in (0, 1]"
    if not ok:
        raise ConfigError(f"{name}: got {shown(value)}; allowed values: {allowed}")
    return float(value)


def make_mosaic(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    deliberation: bool = True,
    metacognition: bool = True,
    pruning: bool = True,
    key_clues: bool = True,
    deliberation_interval: int = 5,
    ema_alpha: float = 0.7,
    switch_threshold: float = 0.1,
    history_window: int = 10,
    screening_window: int = 4,
) -> MosaicAgent:
    """Factory of the `mosaic` agent; the booleans are the Table 3 ablations, the numbers the
    App. D.2 hyperparameters (Table 5)."""
    return MosaicAgent(
        require_model(model, "mosaic"),
        deliberation=deliberation,
        metacognition=metacognition,
        pruning=pruning,
        key_clues=key_clues,
        deliberation_interval=deliberation_interval,
        ema_alpha=ema_alpha,
        switch_threshold=switch_threshold,
        history_window=history_window,
        screening_window=screening_window,
        seed=benchmark_seed(benchmark),
    )
