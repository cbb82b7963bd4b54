"""The Responder ("God", §4.2): answers Yes/No/Unknown and flags key clues; a lexical stand-in.

`Responder` makes two model calls per question, as App. E.1 describes: the answer call judges the
question against the soup surface and bottom (`purpose="respond"`), then, when the key clue
mechanism is on and the puzzle has a Key Clue Library, the key clue call decides whether the
question hits a clue (`purpose="key_clue"`). Both run at temperature 0, set explicitly so a run's
sampling settings never reach the environment. The questioner sees `"Yes"`, `"No"` or `"Unknown"`,
with `<Key Clue>` appended when flagged (`"Yes<Key Clue>"`, §4.2); a Chinese puzzle shows the
same in Chinese (`"是<关键线索>"`, `answer_text`), while `ResponderAnswer.answer` stays one of
`ANSWERS`. The paper's fourth storyteller reply, "Irrelevant" (App. A.1), is folded into Unknown,
as §4.2 does. Inline reasoning (`<think>...</think>`) is removed from every reply before it is
read (`forkingpaths.models.text.strip_reasoning`).

A reply that cannot be read is never coerced silently: it is retried with a corrective turn, and
after `retries` retries the answer is recorded as Unknown with `failed=True` (the key clue as
not flagged with `failed_key_clue=True`) and a warning is logged. Model outages raise
`ModelError` from the model call, as anywhere.

`LexicalResponder` answers from word overlap (character bigrams for Chinese) with the story,
without a model: a deterministic stand-in for offline runs and tests, not a judge of meaning.
`judge_accuracy` measures a responder on TurtleBench's labelled guesses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from forkingpaths.benchmarks.turtlesoup import responder_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.importers import CASE_LABEL_NAMES, CASE_LABELS
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED, sampling
from forkingpaths.core.chat import ChatModel, Message
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import strip_reasoning

log = logging.getLogger(__name__)

ANSWERS = ("Yes", "No", "Unknown")
"""The Responder's answers (§4.2); "Irrelevant" is folded into Unknown."""

KEY_CLUE_TAG = "<Key Clue>"
"""Appended to the answer text when the question hits a key clue (§4.2: "Yes<Key Clue>")."""

KEY_CLUE_TAGS: Mapping[str, str] = MappingProxyType({"en": KEY_CLUE_TAG, "zh": "<关键线索>"})
"""The key clue tag by puzzle language (the Chinese one is the tag the Chinese prompts show)."""

ANSWER_WORDS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "en": MappingProxyType({"Yes": "Yes", "No": "No", "Unknown": "Unknown"}),
        "zh": MappingProxyType({"Yes": "是", "No": "否", "Unknown": "不知道"}),
    }
)
"""The answers of ANSWERS as a player of each language reads them."""

RESPONDER_PARAMS = sampling(MODEL_SEED, temperature=0.0)
"""Both calls are greedy (App. D.1), whatever the run's sampling settings."""

ANSWER_THRESHOLD = 0.6
"""LexicalResponder: share of the question's terms a story sentence must contain for Yes/No."""
CLUE_THRESHOLD = 0.6
"""LexicalResponder: share of the question's terms a clue must contain to flag a key clue."""
NEGATION_WINDOW = 3
"""LexicalResponder: a negation word this many tokens before a matched term negates it."""

T = TypeVar("T")


@dataclass(frozen=True)
class ResponderAnswer:
    """The Responder's feedback on one question: the answer, the key clue flag, and the calls."""

    answer: str
    """One of ANSWERS."""
    key_clue: bool
    """The question hit a key clue."""
    text: str
    """What the questioner sees: the answer, with `<Key Clue>` appended when flagged, in the
    puzzle's language (`answer_text`)."""
    raw: str
    """The model's reply to the answer call (the last one when all were refused)."""
    failed: bool
    """No reply could be normalized after the retries: the answer was recorded as Unknown."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every model call made, retries included (purposes "respond" and "key_clue")."""
    failed_key_clue: bool = False
    """No key clue reply could be read after the retries: recorded as not a key clue."""

    def as_info(self) -> dict[str, Any]:
        """The JSON-ready form a step record stores (everything but the calls)."""
        return {
            "answer": self.answer,
            "key_clue": self.key_clue,
            "text": self.text,
            "raw": self.raw,
            "failed": self.failed,
            "failed_key_clue": self.failed_key_clue,
        }


def answer_text(answer: str, key_clue: bool, language: str = "en") -> str:
    """What the questioner sees, in the puzzle's language: `"No"`, `"Yes<Key Clue>"`, ...;
    `"否"`, `"是<关键线索>"`, ... for Chinese. `answer` is one of ANSWERS (any other text is
    shown as it is)."""
    lang = language if language in ANSWER_WORDS else "en"
    shown_answer = ANSWER_WORDS[lang].get(answer, answer)
    return shown_answer + (KEY_CLUE_TAGS[lang] if key_clue else "")


class Answerer(Protocol):
    """Anything that answers a question about one puzzle as the Responder does."""

    async def answer(self, question: str) -> ResponderAnswer: ...


# ---- reading a reply ----

# Terms a whole reply, or its first word(s), may consist of; longest first where prefixes clash.
_REPLY_TERMS: tuple[tuple[str, str], ...] = (
    ("cannot be determined", "Unknown"), ("can't be determined", "Unknown"),
    ("cannot determine", "Unknown"), ("not relevant", "Unknown"), ("not mentioned", "Unknown"),
    ("not sure", "Unknown"), ("irrelevant", "Unknown"), ("unknown", "Unknown"),
    ("uncertain", "Unknown"), ("undetermined", "Unknown"), ("unclear", "Unknown"),
    ("unanswerable", "Unknown"), ("no idea", "Unknown"),
    ("affirmative", "Yes"), ("correct", "Yes"), ("true", "Yes"),
    ("yeah", "Yes"), ("yes", "Yes"), ("yep", "Yes"), ("yup", "Yes"),
    ("incorrect", "No"), ("negative", "No"), ("wrong", "No"), ("false", "No"), ("nope", "No"),
    ("no", "No"),
    ("不是很确定", "Unknown"), ("不是很清楚", "Unknown"), ("不太确定", "Unknown"),
    ("不太清楚", "Unknown"), ("说不准", "Unknown"), ("不好说", "Unknown"),
    ("无关紧要", "Unknown"), ("无法确定", "Unknown"), ("无法判断", "Unknown"),
    ("不知道", "Unknown"), ("不确定", "Unknown"), ("不重要", "Unknown"), ("不相关", "Unknown"),
    ("不清楚", "Unknown"), ("未提及", "Unknown"), ("未知", "Unknown"), ("无关", "Unknown"),
    ("不正确", "No"), ("不是的", "No"), ("不是", "No"), ("不对", "No"), ("没有", "No"),
    ("错误", "No"), ("否", "No"), ("错", "No"), ("不", "No"),
    ("是的", "Yes"), ("没错", "Yes"), ("正确", "Yes"), ("对的", "Yes"), ("是", "Yes"),
    ("对", "Yes"),
)  # fmt: skip

# Terms also searched for inside longer replies: only those unambiguous in running text.
_SCAN_EN = re.compile(r"\b(not relevant|not mentioned|no idea|irrelevant|unknown|yes|no)\b")
_SCAN_ZH = re.compile(
    "不是很确定|不是很清楚|不太确定|不太清楚|说不准|不好说|"
    "无关紧要|无法确定|无法判断|不知道|不确定|不重要|不相关|未提及|未知|无关|不是的|不是|不对|是的|没错"
)
_SCAN_LABELS: Mapping[str, str] = MappingProxyType(dict(_REPLY_TERMS))

# Replies that decline to answer or answer both ways: never read as an answer (the caller
# retries). "No comment" is a refusal, not "No"; 是也不是 ("yes and no") is no single answer.
_NON_ANSWERS = re.compile(r"\bno comment\b|是也不是|是又不是|也是也不是")

# A leading answer followed by these words is not an answer but a disjunction ("yes or no").
_JOINERS = ("or ", "and ", "nor ", "/", "或", "还是")
_PREFIX = re.compile(
    r"^(?:(?:the|my)\s+)?(?:final\s+|correct\s+)?(?:answer|reply|response|verdict|judgement|judgment)"
    r"\s*(?:is\s*:?|:|-)\s*"
    r"|^(?:最终|正确)?(?:回答|答案|答|结论|判断|回复)\s*(?:是|为|:)\s*"
)
_MARKUP = re.compile(r"[*_`~#>]+")
_TAGS = re.compile(r"<\s*(?:key\s*clue|关键线索)\s*>")
_CJK_PUNCT = MappingProxyType(str.maketrans(
    {"。": ".", "、": ",", "「": '"', "」": '"', "『": '"', "』": '"', "【": "[", "】": "]",
     "《": '"', "》": '"', "“": '"', "”": '"', "‘": "'", "’": "'", "〈": "<", "〉": ">"}
))  # fmt: skip
_EDGE = " \t\r\n\"'()[]{}.,!?;:-—…"


def _clean_reply(text: str) -> str:
    """Reply text reduced to what can carry the answer: NFKC (full-width forms to ASCII), CJK
    punctuation mapped, markdown and key clue tags removed, lowercased, answer prefixes and
    surrounding quotes and punctuation stripped."""
    text = unicodedata.normalize("NFKC", text).translate(_CJK_PUNCT).lower()
    text = _MARKUP.sub("", _TAGS.sub(" ", text))
    text = " ".join(text.split()).strip(_EDGE)
    for _ in range(3):  # "Final answer: **Answer: Yes**" nests prefixes
        stripped = _PREFIX.sub("", text).strip(_EDGE)
        if stripped == text:
            break
        text = stripped
    return text


def _leading(text: str) -> str | None:
    """The label of the answer term `text` opens with, when a word boundary follows it."""
    for term, label in _REPLY_TERMS:
        if not text.startswith(term):
            continue
        rest = text[len(term) :]
        if not rest:
            return label
        nxt = rest[0]
        single_cjk = len(term) == 1 and not term.isascii()
        if nxt.isalnum() and (term.isascii() or single_cjk):
            continue  # "nothing", "not", "是不是": the term is only the start of a word
        if rest.lstrip(" ,").startswith(_JOINERS):
            return None
        return label
    return None


def _scanned(text: str) -> set[str]:
    """Labels of the unambiguous answer terms found anywhere in `text`."""
    found = {_SCAN_LABELS[m] for m in _SCAN_EN.findall(text)}
    found |= {_SCAN_LABELS[m] for m in _SCAN_ZH.findall(text)}
    return found


def normalize_answer(text: str) -> str | None:
    """The Yes/No/Unknown a reply gives, or None when it gives none or several.

    Inline reasoning (`<think>...</think>`, `strip_reasoning`) is removed first. Case, markdown,
    quotes, full-width forms, a `<Key Clue>` tag and prefixes such as "Answer:" or "答案：" are
    ignored. A reply that is, or opens with, an answer term decides ("Yes.", "**No**",
    "yes, because...", "不是的，..."); otherwise the unambiguous terms found in the text must
    agree. "Irrelevant", "Not relevant", "No idea", 无关, 不重要, 不知道, 不确定, 不是很确定,
    不太清楚 and the like are Unknown (§4.2). A reply that says both yes and no ("Yes and no",
    是也不是) or declines to answer ("No comment") is None.

    >>> normalize_answer("**Yes.**"), normalize_answer("答案：不是"), normalize_answer("Irrelevant")
    ('Yes', 'No', 'Unknown')
    >>> normalize_answer("Yes or no, hard to say") is None
    True
    """
    cleaned = _clean_reply(strip_reasoning(text))
    if not cleaned or _NON_ANSWERS.search(cleaned):
        return None
    found = _scanned(cleaned)
    if {"Yes", "No"} <= found:
        return None
    label = _leading(cleaned)
    if label is not None:
        return label
    return next(iter(found)) if len(found) == 1 else None


def parse_key_clue(text: str) -> bool | None:
    """The key clue call's decision: True for Yes (是/对...), False for No (否/不是...), None
    otherwise (Unknown is not a decision)."""
    label = normalize_answer(text)
    return {"Yes": True, "No": False}.get(label) if label else None


# ---- asking ----


def _language_prompts(puzzle: Puzzle) -> prompts.ResponderPrompts:
    if puzzle.language not in prompts.PROMPTS:
        raise ConfigError(
            f"puzzle {puzzle.id}: language: expected one of {', '.join(prompts.PROMPTS)}, "
            f"got {shown(puzzle.language)}"
        )
    return prompts.PROMPTS[puzzle.language]


def render_answer_messages(puzzle: Puzzle, question: str) -> list[Message]:
    """The answer call: rules and the two texts as system turn, the question as user turn."""
    p = _language_prompts(puzzle)
    system = p.answer_system.substitute(
        surface=puzzle.surface.strip(), bottom=puzzle.bottom.strip()
    )
    return [
        Message(role="system", content=system),
        Message(role="user", content=p.answer_user.substitute(question=question.strip())),
    ]


def render_key_clue_messages(puzzle: Puzzle, question: str) -> list[Message]:
    """The key clue call: the task as system turn, texts, clue library and question as user
    turn."""
    p = _language_prompts(puzzle)
    clues = "\n".join(
        p.clue_line.substitute(number=i, clue=clue.strip())
        for i, clue in enumerate(puzzle.key_clues, 1)
    )
    user = p.clue_user.substitute(
        surface=puzzle.surface.strip(),
        bottom=puzzle.bottom.strip(),
        clues=clues,
        question=question.strip(),
    )
    return [Message(role="system", content=p.clue_system), Message(role="user", content=user)]


def _quoted(reply: str) -> str:
    flat = " ".join(reply.split())
    cut = prompts.REPLY_SHOWN
    return flat if len(flat) <= cut else flat[: cut - 3] + "..."


class Responder:
    """The model-backed Responder of one puzzle (§4.2, App. E.1).

    Arguments:
        model: the model that judges (in the paper the questioner's own model).
        puzzle: the puzzle; its language selects the prompts.
        key_clues: run the key clue check (False: Table 3's "w/o Key Clue", one call per question).
        retries: corrective retries of an unreadable reply, per call, before giving up.
        seed: the seed of every call (App. D.1: 42); None sends none.
    """

    def __init__(
        self,
        model: ChatModel,
        puzzle: Puzzle,
        *,
        key_clues: bool = True,
        retries: int = 2,
        seed: int | None = MODEL_SEED,
    ) -> None:
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ConfigError(f"retries: expected an integer >= 0, got {shown(retries)}")
        _language_prompts(puzzle)
        self.params = sampling(seed, temperature=0.0)
        self.model = model
        self.puzzle = puzzle
        self.key_clues = key_clues
        self.retries = retries

    async def answer(self, question: str) -> ResponderAnswer:
        """Answer one question: the answer call, then the key clue call when enabled."""
        p = _language_prompts(self.puzzle)
        calls: list[ModelCallRecord] = []
        label, raw = await self._consult(
            render_answer_messages(self.puzzle, question),
            normalize_answer,
            p.answer_corrective,
            "respond",
            calls,
        )
        failed = label is None
        if label is None:
            log.warning(
                "responder: puzzle %s: no reply read as Yes/No/Unknown after %d attempts "
                "(last %r) to question %r; recorded as Unknown",
                self.puzzle.id, self.retries + 1, _quoted(raw), question,
            )  # fmt: skip
            label = "Unknown"
        key_clue, failed_key_clue = False, False
        if self.key_clues and self.puzzle.key_clues:
            flag, clue_raw = await self._consult(
                render_key_clue_messages(self.puzzle, question),
                parse_key_clue,
                p.clue_corrective,
                "key_clue",
                calls,
            )
            if flag is None:
                failed_key_clue = True
                log.warning(
                    "responder: puzzle %s: no key clue reply read as Yes/No after %d attempts "
                    "(last %r) to question %r; recorded as not a key clue",
                    self.puzzle.id, self.retries + 1, _quoted(clue_raw), question,
                )  # fmt: skip
            key_clue = bool(flag)
        return ResponderAnswer(
            answer=label,
            key_clue=key_clue,
            text=answer_text(label, key_clue, self.puzzle.language),
            raw=raw,
            failed=failed,
            calls=calls,
            failed_key_clue=failed_key_clue,
        )

    async def _consult(
        self,
        messages: list[Message],
        read: Callable[[str], T | None],
        corrective: Template,
        purpose: str,
        calls: list[ModelCallRecord],
    ) -> tuple[T | None, str]:
        """Ask until `read` accepts a reply, at most 1 + retries calls, appending each call's
        record to `calls`; (value or None, the reply read last)."""
        conversation = list(messages)
        reply = ""
        for _ in range(self.retries + 1):
            completion = await self.model.complete(conversation, self.params)
            calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
            reply = completion.text
            value = read(reply)
            if value is not None:
                return value, reply
            conversation += [
                Message(role="assistant", content=reply),
                Message(role="user", content=corrective.substitute(reply=_quoted(reply))),
            ]
        return None, reply


# ---- the lexical stand-in ----

_EN_UNIT = re.compile(r"[a-z0-9]+(?:'[a-z]+)*|[^\sa-z0-9]")
_ZH_UNIT = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[a-z0-9]+|[^\s]")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"[.!?;\n。！？；]+")
# "是不是", "有没有": a yes/no question form, not a negation.
_ZH_AB_QUESTION = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff])[不没]\1")

EN_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "nowhere"}
)
"""English negation words (any word ending in n't is one too)."""
ZH_NEGATIONS = frozenset("没不未")
"""Chinese negation characters."""
EN_CONTRASTS = frozenset({"but", "however", "although", "though", "yet", "instead", "rather"})
ZH_CONTRASTS = frozenset("但而却")
"""Words that end the reach of a negation ("not vandalism but a signal")."""
EN_STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "if", "so", "of", "to", "in", "on", "at", "by", "for",
        "with", "from", "into", "onto", "over", "under", "about", "as", "than", "then", "that",
        "this", "these", "those", "there", "here", "it", "its", "he", "him", "his", "she", "her",
        "hers", "they", "them", "their", "theirs", "we", "us", "our", "you", "your", "i", "me",
        "my", "mine", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does",
        "did", "done", "doing", "have", "has", "had", "having", "can", "could", "would",
        "should", "will", "shall", "may", "might", "must", "what", "who", "whom", "whose",
        "which", "why", "how", "when", "where", "whether", "any", "some", "all", "each", "every",
        "one", "someone", "something", "anyone", "anything", "somebody", "anybody", "like", "other",
        "another", "just", "very", "really", "also", "too", "only", "because", "while", "after",
        "before", "again", "ever", "still", "out", "up", "down", "off", "much", "many", "more",
        "most", "such", "own", "same",
    }
)  # fmt: skip
"""English words that carry no content for the overlap."""
ZH_STOPCHARS = frozenset("吗呢吧嘛啊呀么了的")
"""Chinese particles dropped before forming bigrams."""


@dataclass(frozen=True)
class _Term:
    text: str
    negated: bool


def _stem(word: str) -> str:
    """A light English stemmer, so "painted", "paints" and "painting" meet at "paint"."""
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix != "s" and word[-1] == word[-2] and word[-1] not in "aeioulsz":
                word = word[:-1]  # "slipped" -> "slip", but "called" stays "call"
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _is_negation(unit: str, language: str) -> bool:
    if language == "zh":
        return unit in ZH_NEGATIONS or unit in EN_NEGATIONS or unit.endswith("n't")
    return unit in EN_NEGATIONS or unit.endswith("n't")


def _is_break(unit: str) -> bool:
    """Punctuation and contrast words: negation does not reach across them."""
    return not unit[0].isalnum() or unit in EN_CONTRASTS or unit in ZH_CONTRASTS


def _negated(units: Sequence[str], start: int, end: int, language: str) -> bool:
    """A negation among the units from NEGATION_WINDOW before `start` up to `end`, with no
    break (punctuation, "but") between it and the term."""
    for index in range(end, max(-1, start - NEGATION_WINDOW - 1), -1):
        unit = units[index]
        if _is_negation(unit, language):
            return True
        if index < start and _is_break(unit):
            return False
    return False


def _units(text: str, language: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).replace("’", "'").lower()
    if language == "zh":
        return _ZH_UNIT.findall(_ZH_AB_QUESTION.sub(r"\1", text))
    return _EN_UNIT.findall(text)


def _terms(text: str, language: str) -> list[_Term]:
    """The content terms of `text` with their negation: stemmed words without stopwords
    (English), character bigrams of each run of characters (Chinese, particles and negations
    skipped, so "没死" and "死" share the same term)."""
    units = _units(text, language)
    terms: list[_Term] = []
    if language != "zh":
        for i, unit in enumerate(units):
            if unit[0].isalnum() and unit not in EN_STOPWORDS and not _is_negation(unit, "en"):
                terms.append(_Term(_stem(unit), _negated(units, i, i, language)))
        return terms
    run: list[int] = []

    def flush() -> None:
        if len(run) == 1:
            terms.append(_Term(units[run[0]], _negated(units, run[0], run[0], language)))
        for a, b in itertools.pairwise(run):
            terms.append(_Term(units[a] + units[b], _negated(units, a, b, language)))
        run.clear()

    for i, unit in enumerate(units):
        if _is_negation(unit, language) or unit in ZH_STOPCHARS:
            continue
        if _is_break(unit) or not _CJK.match(unit):
            flush()
            if unit.isalnum() and unit not in EN_STOPWORDS:
                terms.append(_Term(_stem(unit), _negated(units, i, i, language)))
            continue
        run.append(i)
    flush()
    return terms


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(unicodedata.normalize("NFKC", text)) if s.strip()]


def _question_negated(question: str, language: str) -> bool:
    return any(_is_negation(u, language) for u in _units(question, language))


def lexical_answer(
    question: str,
    story: Sequence[str],
    clues: Sequence[str],
    language: str,
    *,
    answer_threshold: float = ANSWER_THRESHOLD,
    clue_threshold: float = CLUE_THRESHOLD,
) -> tuple[str, bool]:
    """(answer, key clue flag) by overlap of content terms, deterministic and model-free.

    The question's terms (`_terms`) are compared with each sentence of the `story` texts
    (surface and bottom); the sentence holding the largest share of them decides (on a tie, the
    one whose own terms are most covered, i.e. the most specific). Below `answer_threshold` the
    answer is Unknown; otherwise Yes, turned into No when exactly one of the question and that
    sentence is negated: the question when it holds a negation word (not/never/no/n't/没/不/未),
    the sentence when at least half of the matched terms are negated in it (a negation word
    shortly before them, see `_negated`). The key clue flag is set when some clue holds at least
    `clue_threshold` of the question's terms.
    """
    asked = {t.text for t in _terms(question, language)}
    if not asked:
        return "Unknown", False
    best: tuple[float, float] = (0.0, 0.0)
    best_negated = False
    for text in story:
        for sentence in _sentences(text):
            terms = _terms(sentence, language)
            negated: dict[str, bool] = {}
            for term in terms:
                if term.text in asked:
                    negated[term.text] = negated.get(term.text, False) or term.negated
            own = len({t.text for t in terms})
            rank = (len(negated) / len(asked), len(negated) / own if own else 0.0)
            if rank > best:
                best = rank
                best_negated = 2 * sum(negated.values()) >= len(negated)
    best_share = best[0]
    answer = "Unknown"
    if best_share >= answer_threshold:
        flipped = best_negated != _question_negated(question, language)
        answer = "No" if flipped else "Yes"
    key_clue = any(
        len(asked & {t.text for t in _terms(clue, language)}) / len(asked) >= clue_threshold
        for clue in clues
    )
    return answer, key_clue


class LexicalResponder:
    """A model-free stand-in for the Responder: `lexical_answer` on the puzzle's surface and
    bottom. Deterministic and makes no calls; it does not understand the story.

    Arguments:
        puzzle: the puzzle; its language selects words (English) or bigrams (Chinese).
        key_clues: flag key clues (False: never flagged).
        answer_threshold, clue_threshold: see `lexical_answer`.
    """

    def __init__(
        self,
        puzzle: Puzzle,
        key_clues: bool = True,
        *,
        answer_threshold: float = ANSWER_THRESHOLD,
        clue_threshold: float = CLUE_THRESHOLD,
    ) -> None:
        for name, value in (
            ("answer_threshold", answer_threshold),
            ("clue_threshold", clue_threshold),
        ):
            if not 0.0 < value <= 1.0:
                raise ConfigError(f"{name}: expected a number in (0, 1], got {shown(value)}")
        _language_prompts(puzzle)
        self.puzzle = puzzle
        self.key_clues = key_clues
        self.answer_threshold = answer_threshold
        self.clue_threshold = clue_threshold

    async def answer(self, question: str) -> ResponderAnswer:
        label, flag = lexical_answer(
            question,
            (self.puzzle.surface, self.puzzle.bottom),
            self.puzzle.key_clues if self.key_clues else (),
            self.puzzle.language,
            answer_threshold=self.answer_threshold,
            clue_threshold=self.clue_threshold,
        )
        return ResponderAnswer(
            answer=label,
            key_clue=flag,
            text=answer_text(label, flag, self.puzzle.language),
            raw=label,
            failed=False,
            calls=[],
        )


# ---- accuracy on TurtleBench ----


def case_label(label: str) -> str:
    """Our answer for a TurtleBench label: `importers.CASE_LABELS` (T/F/N, Yes/No/Unknown/
    Irrelevant, Correct/Incorrect, 对/错/是/否/不知道/无关), case-insensitive; the same table
    `load_turtlebench_cases` reads `cases.list` with."""
    key = str(label).strip().lower()
    if key not in CASE_LABELS:
        raise ConfigError(f"label: expected one of {CASE_LABEL_NAMES}, got {shown(label)}")
    return CASE_LABELS[key]


def _case_fields(case: Any, index: int) -> tuple[str, str, str]:
    """(guess, title, label) of a case: a mapping, a (guess, title, label) sequence, or an object
    with those attributes."""
    if isinstance(case, Mapping):
        values = [case.get(k) for k in ("guess", "title", "label")]
    elif isinstance(case, Sequence) and not isinstance(case, str) and len(case) == 3:
        values = list(case)
    else:
        values = [getattr(case, k, None) for k in ("guess", "title", "label")]
    if any(not isinstance(v, str) for v in values):
        raise ConfigError(
            f"cases[{index}]: expected guess, title and label strings, got {shown(case)}"
        )
    return values[0], values[1], values[2]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


async def judge_accuracy(
    cases: Iterable[Any],
    stories: Mapping[str, Puzzle] | Iterable[Puzzle],
    responder_factory: Callable[[Puzzle], Answerer],
    *,
    concurrency: int = 8,
) -> dict[str, Any]:
    """Accuracy and per-label precision, recall, F1 and support of a responder on TurtleBench.

    Each case is a labelled guess about a story (`guess`, `title`, `label`; see `_case_fields`),
    its label T/F/N (or Yes/No/Unknown/Irrelevant) read as Yes/No/Unknown. The story is looked
    up by its title among `stories` (puzzles, or a mapping whose values are puzzles); cases of
    unknown titles are counted and skipped. `responder_factory` builds one responder per story
    (the CLI passes key clues off: TurtleBench stories have no library). At most `concurrency`
    questions are in flight. Precision, recall and F1 are None where undefined (nothing
    predicted, no support), never a silent zero. `macro_f1` averages F1 over every label with
    support (a label that occurs among the cases); a label with support whose F1 is undefined
    (the responder never answered it, so precision is undefined) counts 0 in that average, as
    scikit-learn's `zero_division=0` does: a label the responder never gives is one it fails on.
    Labels without support are left out. None when no case was scored.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency: expected an integer >= 1, got {shown(concurrency)}")
    pool = stories.values() if isinstance(stories, Mapping) else stories
    by_title = {puzzle.title.strip(): puzzle for puzzle in pool}
    parsed = [_case_fields(case, i) for i, case in enumerate(cases)]
    gold = []
    for i, (_, _, label) in enumerate(parsed):
        try:
            gold.append(case_label(label))
        except ConfigError as exc:
            raise ConfigError(f"cases[{i}]: {exc}") from None
    responders: dict[str, Answerer] = {}
    missing: dict[str, int] = {}
    jobs: list[tuple[int, Answerer]] = []
    for i, (_, title, _) in enumerate(parsed):
        key = title.strip()
        if key not in by_title:
            missing[key] = missing.get(key, 0) + 1
            continue
        if key not in responders:
            responders[key] = responder_factory(by_title[key])
        jobs.append((i, responders[key]))
    gate = asyncio.Semaphore(concurrency)

    async def ask(i: int, responder: Answerer) -> ResponderAnswer:
        async with gate:
            return await responder.answer(parsed[i][0])

    answers = await asyncio.gather(*(ask(i, responder) for i, responder in jobs))

    confusion = {g: dict.fromkeys(ANSWERS, 0) for g in ANSWERS}
    predictions = []
    for (i, _), reply in zip(jobs, answers, strict=True):
        guess, title, _ = parsed[i]
        confusion[gold[i]][reply.answer] += 1
        predictions.append(
            {
                "guess": guess,
                "title": title,
                "label": gold[i],
                "answer": reply.answer,
                "correct": reply.answer == gold[i],
                "failed": reply.failed,
            }
        )
    labels: dict[str, dict[str, Any]] = {}
    for label in ANSWERS:
        hits = confusion[label][label]
        support = sum(confusion[label].values())
        predicted = sum(confusion[g][label] for g in ANSWERS)
        precision, recall = _ratio(hits, predicted), _ratio(hits, support)
        f1 = None
        if precision is not None and recall is not None:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        labels[label] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": support,
            "predicted": predicted,
        }
    f1s = [v["f1"] or 0.0 for v in labels.values() if v["support"]]
    scored = len(predictions)
    return {
        "n": scored,
        "n_cases": len(parsed),
        "unknown_titles": sum(missing.values()),
        "missing_titles": sorted(missing),
        "accuracy": _ratio(sum(p["correct"] for p in predictions), scored),
        "macro_f1": sum(f1s) / len(f1s) if f1s else None,
        "labels": labels,
        "confusion": confusion,
        "responder_failures": sum(p["failed"] for p in predictions),
        "predictions": predictions,
    }
