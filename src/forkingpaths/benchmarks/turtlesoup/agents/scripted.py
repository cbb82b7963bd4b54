"""Scripted questioner model `turtlesoup-questioner`: answers every questioner prompt, offline."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from forkingpaths.benchmarks.turtlesoup.agents import baseline_prompts
from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.genres import GENRES
from forkingpaths.benchmarks.turtlesoup.agents.mosaic import same_direction
from forkingpaths.core.chat import Message, ModelParams

KIND_MARKERS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("local", prompts.LOCAL_MARKER),
    ("belief", prompts.BELIEF_MARKER),
    ("aps", prompts.APS_MARKER),
    ("genre", prompts.GENRE_MARKER),
    ("candidates", prompts.CANDIDATES_MARKER),
    ("screen", prompts.SCREEN_MARKER),
    ("summary", prompts.SUMMARY_MARKER),
    ("question", baseline_prompts.QUESTION_MARKER),
    ("final", baseline_prompts.FINAL_MARKER),
)
"""Prompt kind -> its marker lines by language (the first line of every questioner prompt)."""

UNRECOGNISED = "I cannot tell what this request asks for."
"""The reply to a prompt with no known marker."""

_TEMPLATES = MappingProxyType(
    {
        "en": (
            "Is {w} essential to what really happened?",
            "Is {w} different from what it first seems?",
            "Did someone die because of {w}?",
            "Was {w} part of a deliberate plan?",
            "Does {w} explain how someone in the story felt?",
            "Did {w} matter before the events of the surface?",
        ),
        "zh": (
            "{w}是解开谜题的关键吗？",
            "{w}和表面看起来的不一样吗？",
            "有人因为{w}而死吗？",
            "{w}是某个计划的一部分吗？",
            "{w}能解释某个人物的情绪吗？",
            "{w}在汤面的事件之前就起了作用吗？",
        ),
    }
)
"""The template bank: questions about one salient word of the surface or of a Yes answer."""
_PAIR_TEMPLATE = MappingProxyType(
    {"en": "Is {a} connected to {b}?", "zh": "{a}、{b}，两者有关吗？"}
)
"""Questions about two salient words at once."""

_GENRE_CUES = MappingProxyType(
    {
        "crime_thriller": (
            "kill", "murder", "blood", "knife", "police", "corpse", "poison", "victim", "kidnap",
            "杀", "尸", "血", "刀", "凶", "警", "毒",
        ),
        "mind_game": (
            "dream", "mind", "memory", "hallucinat", "insane", "obsess", "mad", "voices",
            "梦", "幻", "疯", "记忆", "精神", "执念",
        ),
        "supernatural": (
            "ghost", "spirit", "loop", "curse", "magic", "reincarnat", "future", "time machine",
            "鬼", "魂", "循环", "诅咒", "穿越", "轮回",
        ),
        "constant_change": (
            "accident", "mistake", "misunderstand", "illness", "sick", "hospital", "regret",
            "tears", "sorry", "意外", "误会", "病", "医院", "后悔", "眼泪",
        ),
        "clever_logic": (
            "game", "joke", "trick", "actually", "animal", "pun", "游戏", "玩笑", "其实", "动物",
        ),
    }
)  # fmt: skip
"""Words that vote for a genre when they occur in the surface, Yes answers or key clues."""

_SECTION = re.compile(r"^<([^<>/\n]+)>\n(.*?)\n</\1>$", re.MULTILINE | re.DOTALL)
_QUESTION_LINE = re.compile(r"^(?:Q|问)(\d+)\s*[:：]\s*(.*)$")
_ANSWER_LINE = re.compile(r"^(?:A|答)(\d+)\s*[:：]\s*(.*)$")
_NUMBERED_LINE = re.compile(r"^\s*\d+\.\s*(.+?)\s*$")
_DETERMINED = re.compile(r"\b(the|a|an|his|her|their|my|its|our|your)\s+([a-z][a-z-]{2,})\b")
_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_ZH_SPLIT = re.compile(
    r"[\s，。？！、；：,.?!;:“”\"'（）()《》]|[的了是在他她我你们和也就都着把被吗呢又很]"
)
_NOT_NOUNS = frozenset((
    "one", "way", "time", "day", "night", "thing", "something", "nothing", "anything",
    "everything", "first", "last", "same", "other", "next", "every", "each", "most",
))  # fmt: skip


@dataclass(frozen=True)
class Exchange:
    """One question and answer read back from a rendered history block."""

    turn: int
    question: str
    answer: str
    """"Yes", "No", "Unknown" or the text as shown."""
    key_clue: bool


def last_user(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def prompt_kind(messages: Sequence[Message]) -> tuple[str | None, str]:
    """(kind, language) of the last user turn by its marker line; (None, "en") if unknown."""
    first = last_user(messages).strip().split("\n", 1)[0].strip()
    for kind, markers in KIND_MARKERS:
        for language, marker in markers.items():
            if first == marker:
                return kind, language
    return None, "en"


def read_sections(text: str) -> dict[str, str]:
    """Every `<Label>` block of a prompt: label -> content."""
    return {m.group(1): m.group(2).strip() for m in _SECTION.finditer(text)}


def section(sections: Mapping[str, str], kind: str) -> str:
    """The block of an input kind (either language's label), "" if absent or "(none yet)"."""
    for label in prompts.SECTION_LABELS[kind].values():
        if label in sections:
            text = sections[label]
            return "" if text in prompts.NONE_TEXT.values() else text
    return ""


def parse_history(text: str) -> list[Exchange]:
    """Exchanges of a rendered history block (`Q3: ...` / `A3: Yes<Key Clue>`, or Chinese)."""
    questions: dict[int, str] = {}
    out = []
    answer_words = {
        word: answer for table in prompts.ANSWER_WORDS.values() for answer, word in table.items()
    }
    for line in text.splitlines():
        line = line.strip()
        if match := _QUESTION_LINE.match(line):
            questions[int(match.group(1))] = match.group(2).strip()
        elif match := _ANSWER_LINE.match(line):
            turn, shown = int(match.group(1)), match.group(2).strip()
            key_clue = any(tag in shown for tag in prompts.KEY_CLUE_TAG.values())
            for tag in prompts.KEY_CLUE_TAG.values():
                shown = shown.replace(tag, "").strip()
            out.append(
                Exchange(turn, questions.get(turn, ""), answer_words.get(shown, shown), key_clue)
            )
    return out


def numbered_items(text: str) -> list[str]:
    return [m.group(1) for m in map(_NUMBERED_LINE.match, text.splitlines()) if m]


def listed_items(text: str) -> list[str]:
    return [line.strip()[2:].strip() for line in text.splitlines() if line.strip().startswith("- ")]


def salient_words(text: str, language: str) -> list[str]:
    """Noun-like phrases of a text in order of appearance: English `the X` phrases and proper
    names; Chinese runs between punctuation and function characters (2-4 characters, the last
    three of longer runs)."""
    found: list[str] = []
    if language == "zh":
        for run in _ZH_SPLIT.split(text):
            run = "".join(ch for ch in run if "\u4e00" <= ch <= "\u9fff")
            if len(run) > 4:
                run = run[-3:]
            if len(run) >= 2 and run not in found:
                found.append(run)
        return found
    seen: set[str] = set()
    for match in sorted(
        [*_DETERMINED.finditer(text), *_PROPER.finditer(text)], key=lambda m: m.start()
    ):
        if match.re is _DETERMINED:
            noun = match.group(2).lower()
            phrase = f"the {noun}" if match.group(1).lower() in ("a", "an") else match.group(0)
        else:
            noun = match.group(1).lower()
            phrase = match.group(1)
        if noun in _NOT_NOUNS or noun in seen:
            continue
        seen.add(noun)
        found.append(phrase)
    return found


def question_pool(surface: str, exchanges: Sequence[Exchange], language: str) -> list[str]:
    """The generic probes, then each salient word paired with the next two, then every template
    filled with every salient word (template-major, so consecutive questions differ in kind);
    words from the surface come before those of Yes answers."""
    words = salient_words(surface, language)
    for exchange in exchanges:
        if exchange.answer == "Yes":
            words += [w for w in salient_words(exchange.question, language) if w not in words]
    pool = list(prompts.FALLBACK_QUESTIONS[language])
    # Pairs of neighbouring words first: they ask how two elements of the story connect.
    pair = _PAIR_TEMPLATE[language]
    pool += [pair.format(a=a, b=b) for i, a in enumerate(words) for b in words[i + 1 : i + 3]]
    for template in _TEMPLATES[language]:
        pool += [template.format(w=word) for word in words]
    return pool


class TurtleSoupQuestionerPolicy:
    """`scripted/turtlesoup-questioner`: a scripted, deterministic questioner for every prompt
    of the Mosaic and baseline agents.

    A deterministic stand-in for a model, not a solver: it recognises each prompt the Mosaic and
    baseline questioners send by its marker line, reads the `<Label>` input blocks and answers in
    that prompt's format, so both agents run end to end without a network. It keeps no state
    (ScriptedPolicy contract): everything comes from the messages.

    Candidates: three questions of the template bank (`question_pool`) not among the shown
    history, starting at an offset given by the latest turn shown. Screening: the first
    candidate neither asked already nor in the direction of a ruled-out question, else the
    first. Genre: the genre whose cue words occur most in the surface, the Yes answers and the
    key clues (ties: list order; no cue at all: Clever Logic). Belief and summary: a JSON
    belief whose details are the Yes answers, whose logic is the Yes answers flagged as key
    clues, and whose conclusion joins the surface with them. APS: a doubt for each of the first
    two salient surface words the theory does not mention. Local analysis: three short points
    on the latest answer. Baseline: the first pool question not asked yet; its final summary is
    the same JSON belief.
    """

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        kind, language = prompt_kind(messages)
        if kind is None:
            return UNRECOGNISED
        sections = read_sections(last_user(messages))
        answer = {
            "local": answer_local,
            "belief": answer_belief,
            "summary": answer_belief,
            "aps": answer_aps,
            "genre": answer_genre,
            "candidates": answer_candidates,
            "screen": answer_screen,
            "question": answer_question,
            "final": answer_final,
        }[kind]
        return answer(sections, language)


def answer_local(sections: Mapping[str, str], language: str) -> str:
    latest = parse_history(section(sections, "latest"))
    if not latest:
        return "1. -\n2. -\n3. -" if language == "en" else "1. 无\n2. 无\n3. 无"
    ex = latest[-1]
    if language == "zh":
        word = {"Yes": "是", "No": "否"}.get(ex.answer, "不知道")
        clue = "，并且是关键线索" if ex.key_clue else ""
        step = {"Yes": "沿这个方向继续追问细节。", "No": "放弃这个假设。"}.get(
            ex.answer, "这个方向无关，换一个方向。"
        )
        return (
            f"1. 新信息：对“{ex.question}”的回答是{word}{clue}。\n"
            f"2. 冲突：未发现。\n3. 调整：{step}"
        )
    clue = ", and it is a key clue" if ex.key_clue else ""
    step = {"Yes": "follow this line with more specific questions.", "No": "drop this hypothesis."}
    return (
        f'1. New information: the answer to "{ex.question}" is {ex.answer}{clue}.\n'
        "2. Conflicts: none found with earlier answers.\n"
        f"3. Adjustment: {step.get(ex.answer, 'this line seems irrelevant; change direction.')}"
    )


def _yes(exchanges: Sequence[Exchange]) -> list[Exchange]:
    return [e for e in exchanges if e.answer == "Yes"]


def answer_belief(sections: Mapping[str, str], language: str) -> str:
    surface = section(sections, "surface")
    confirmed = _yes(parse_history(section(sections, "history")))
    first = re.split(r"(?<=[.!?。！？])\s*", surface, maxsplit=1)[0].strip()
    if language == "zh":
        details = [f"已确认：{e.question}" for e in confirmed]
        logic = [f"关键：{e.question}" for e in confirmed if e.key_clue]
        logic = logic or ["汤面背后隐藏着一个原因，问答正在逐步揭开它。"]
        facts = "；".join(e.question.rstrip("？?") for e in confirmed) or "尚无确认的事实"
        conclusion = f"{first} 目前确认的事实：{facts}。"
    else:
        details = [f"Yes to: {e.question}" for e in confirmed]
        logic = [f"Key point: {e.question}" for e in confirmed if e.key_clue]
        logic = logic or ["A hidden cause behind the surface is being uncovered by the answers."]
        facts = "; ".join(e.question.rstrip("?") for e in confirmed) or "nothing yet"
        conclusion = f"{first} The answers so far establish: {facts}."
    belief = {"logic": logic, "details": details, "conclusion": conclusion}
    return json.dumps(belief, ensure_ascii=False)


def answer_aps(sections: Mapping[str, str], language: str) -> str:
    covered = " ".join(section(sections, k) for k in ("logic", "details", "conclusion")).casefold()
    words = salient_words(section(sections, "surface"), language)
    open_words = [w for w in words if w.casefold() not in covered][:2]
    template = _TEMPLATES[language][0]
    entries = []
    for word in open_words:
        if language == "zh":
            entries.append(
                {
                    "doubt": f"“{word}”还没有得到解释",
                    "analysis": f"{word}可能是隐藏的原因、一种伪装，或只是干扰项。",
                    "proposal": template.format(w=word),
                }
            )
        else:
            entries.append(
                {
                    "doubt": f'"{word}" is not explained yet',
                    "analysis": f"{word} may be the hidden cause, a disguise, or a red herring.",
                    "proposal": template.format(w=word),
                }
            )
    if not entries:
        doubt = "整体原因仍不清楚" if language == "zh" else "the overall cause is still unclear"
        entries.append(
            {"doubt": doubt, "analysis": doubt, "proposal": prompts.FALLBACK_QUESTIONS[language][0]}
        )
    return json.dumps(entries, ensure_ascii=False)


def answer_genre(sections: Mapping[str, str], language: str) -> str:
    exchanges = parse_history(section(sections, "history"))
    text = " ".join(
        [section(sections, "surface"), section(sections, "key_clues")]
        + [e.question for e in _yes(exchanges)]
    ).casefold()
    listed = section(sections, "genres")
    offered = [g for g in GENRES if g.names[language] in listed] or list(GENRES)
    scores = [sum(_count_cue(text, cue) for cue in _GENRE_CUES[g.id]) for g in offered]
    if max(scores) == 0:
        # No cue at all: the everyday-logic genre, the least committal reading of a surface.
        fallback = [g for g in offered if g.id == "clever_logic"]
        return (fallback or offered)[0].names[language]
    return offered[scores.index(max(scores))].names[language]


def _count_cue(text: str, cue: str) -> int:
    """Occurrences of a cue: English cues at word starts ("mad" not in "made"), Chinese anywhere."""
    if cue.isascii():
        return len(re.findall(rf"\b{re.escape(cue)}", text))
    return text.count(cue)


def answer_candidates(sections: Mapping[str, str], language: str) -> str:
    shown = parse_history(section(sections, "recent"))
    asked = {e.question for e in shown}
    pool = question_pool(section(sections, "surface"), shown, language)
    offset = (max((e.turn for e in shown), default=0) * 3) % len(pool)
    rotated = pool[offset:] + pool[:offset]
    chosen = [q for q in rotated if q not in asked][:3]
    return "\n".join(f"{i}. {q}" for i, q in enumerate(chosen, start=1))


def answer_screen(sections: Mapping[str, str], language: str) -> str:
    candidates = numbered_items(section(sections, "candidates"))
    if not candidates:
        return ""
    asked = set(numbered_items(section(sections, "asked")))
    banned = listed_items(section(sections, "blacklist"))
    for candidate in candidates:
        if candidate in asked or any(same_direction(candidate, b) for b in banned):
            continue
        return candidate
    return candidates[0]


def answer_question(sections: Mapping[str, str], language: str) -> str:
    history = parse_history(section(sections, "history"))
    asked = {e.question for e in history}
    pool = question_pool(section(sections, "surface"), history, language)
    fresh = [q for q in pool if q not in asked]
    return fresh[0] if fresh else pool[len(history) % len(pool)]


def answer_final(sections: Mapping[str, str], language: str) -> str:
    """The baseline's final summary: the JSON belief, as for Mosaic's summary prompt."""
    return answer_belief(sections, language)
