"""Agent-ExpVer (§4, App. A, B.2): GeoLink play, InsightForce, verification, TruthWeaver, Delta."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, computed_field

from forkingpaths.benchmarks.eeb import expver_prompts as prompts
from forkingpaths.benchmarks.eeb.agents.truths import Truth, TruthRepository
from forkingpaths.benchmarks.eeb.games import Game
from forkingpaths.core.agent import Agent
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams, Usage
from forkingpaths.core.env import Env
from forkingpaths.core.errors import ConfigError, ModelError
from forkingpaths.core.protocol import play_episode
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, StepRecord, utc_now

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Version of the lines of `expver_rounds.jsonl`."""
TRUTHS_FILE = "truths.json"
ROUNDS_FILE = "expver_rounds.jsonl"
EPISODES_FILE = "expver_episodes.jsonl"
CURVE_FILE = "learning_curve.png"
CONFIG_FILE = "expver_config.json"

Phase = Literal["play", "verify", "eval"]
LevelT = TypeVar("LevelT")


class ExpVerConfig(BaseModel):
    """Settings of one Agent-ExpVer learning run; the paper gives no numbers, so the defaults are
    ours and every one can be overridden."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Config schema version."""
    game: Game
    """Which EvoEmpirBench game the truths are about."""
    rounds: int = Field(default=5, ge=1)
    """Learning rounds; Delta (Eq. 6) is checked after each."""
    levels_per_round: int = Field(default=3, ge=1)
    """Training levels played per round (the pool is walked in order and wraps around)."""
    verification: bool = True
    """Replay each experience before promoting it (Eq. 4); False promotes every experience."""
    truthweaver: bool = True
    """Organise the repository with TruthWeaver; False is the W/o.TW ablation (Table 6): verified
    truths are appended as they are."""
    max_truths: int = Field(default=20, ge=1)
    """Most truths kept; beyond it the oldest are dropped."""
    max_experience_items: int = Field(default=8, ge=1)
    """Most knowledge lines one experience contributes."""
    eval_levels: int | None = Field(default=None, ge=1)
    """How many of the held-out levels Delta is measured on (None: all given)."""
    delta_metric: Literal["score", "success"] = "score"
    """Eq. 6 averages the score; `success` uses the success rate instead."""
    seed: int = 0
    """Base of every episode seed."""
    max_steps: int = Field(default=1000, ge=1)
    """Safety cap on steps per episode (the games end their episodes earlier)."""
    head_steps: int = Field(default=2, ge=0)
    """GeoLink: steps kept from the beginning of the trace."""
    tail_steps: int = Field(default=2, ge=0)
    """GeoLink: steps kept from the end of the trace."""
    max_highlights: int = Field(default=6, ge=0)
    """GeoLink: most highlight steps kept besides the beginning and the end."""
    highlights_per_kind: int = Field(default=2, ge=1)
    """GeoLink: most highlights of one kind (life lost, invalid action...), earliest first."""
    thought_chars: int = Field(default=600, ge=20)
    """Characters of a key step's reasoning shown to InsightForce."""
    concurrency: int = Field(default=4, ge=1)
    """Evaluation episodes in flight at once."""
    module_max_tokens: int | None = Field(default=None, ge=1)
    """Completion cap of InsightForce and TruthWeaver calls (None: the run's setting)."""


@dataclass(frozen=True)
class KeyStep:
    """A step GeoLink kept for InsightForce, with why it was kept."""

    step: StepRecord
    why: tuple[str, ...]


class Experience(BaseModel):
    """A subjective experience e = f_sum(H, m) (Eq. 3) of one played level."""

    level_id: str
    """The level it was drawn from."""
    seed: int
    """Seed of the play it summarises (verification replays it)."""
    round: int
    """Learning round."""
    baseline_score: float
    """Score S of the play it summarises (Eq. 4)."""
    baseline_success: bool
    """Whether that play passed the level."""
    strengths: list[str] = Field(default_factory=list)
    """What went well."""
    weaknesses: list[str] = Field(default_factory=list)
    """What went wrong or could be better."""
    lessons: list[str] = Field(default_factory=list)
    """General rules of play."""

    def entries(self, limit: int) -> list[str]:
        """Knowledge lines for the policy prompt: lessons first (the most actionable), then
        weaknesses, then strengths (App. A: failures teach most), at most `limit`."""
        lines = list(self.lessons)
        lines += [prompts.WEAKNESS_ENTRY.substitute(text=w) for w in self.weaknesses]
        lines += [prompts.STRENGTH_ENTRY.substitute(text=s) for s in self.strengths]
        return lines[:limit]


class Verdict(BaseModel):
    """Outcome of replaying a level with an experience (Eq. 4)."""

    level_id: str
    """The replayed level."""
    passed: bool
    """P: the replay passed the level."""
    baseline_score: float
    """S: score of the unaided play."""
    score: float
    """S': score of the replay."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def improved(self) -> bool:
        """S' > S."""
        return self.score > self.baseline_score

    @computed_field  # type: ignore[prop-decorator]
    @property
    def promoted(self) -> bool:
        """Eq. 4: P and S' > S."""
        return self.passed and self.improved

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gain(self) -> float:
        """S' - S."""
        return self.score - self.baseline_score


class Evaluation(BaseModel):
    """A policy's results on the held-out levels (the S_i of Eq. 6)."""

    truths: int
    """Size of the truth list evaluated."""
    scores: dict[str, float]
    """Score per level id."""
    successes: dict[str, bool]
    """Success per level id."""

    @property
    def mean_score(self) -> float:
        return sum(self.scores.values()) / len(self.scores) if self.scores else 0.0

    @property
    def success_rate(self) -> float:
        return sum(self.successes.values()) / len(self.successes) if self.successes else 0.0

    def per_level(self, metric: str) -> dict[str, float]:
        if metric == "success":
            return {k: float(v) for k, v in self.successes.items()}
        return dict(self.scores)


class ExperienceLog(BaseModel):
    """What became of one training play's experience."""

    level_id: str
    """The level played."""
    outcome: Literal["dropped", "rejected", "promoted"]
    """dropped: InsightForce gave nothing usable; rejected: verification failed; promoted."""
    experience: Experience | None = None
    """The parsed experience (None when dropped)."""
    verdict: Verdict | None = None
    """The verification result (None when dropped or verification is off)."""
    added: list[str] = Field(default_factory=list)
    """Knowledge lines handed to TruthWeaver (or appended)."""


class RoundRecord(BaseModel):
    """One line of `expver_rounds.jsonl`: a learning round (round 0: the starting policy)."""

    schema_version: int = SCHEMA_VERSION
    """Line schema version."""
    round: int
    """0 for the evaluation of the starting truths, then 1, 2, ..."""
    truths_before: int
    """Truths at the start of the round."""
    truths_candidate: int
    """Truths after the round's additions, before the Delta check."""
    truths_after: int
    """Truths kept at the end of the round."""
    experiences_proposed: int = 0
    """Experiences InsightForce produced."""
    experiences_dropped: int = 0
    """Plays whose InsightForce answer was unusable."""
    experiences_verified: int = 0
    """Experiences promoted to truths (verified when verification is on)."""
    eval_score: float
    """Mean held-out score of the candidate policy (A.Score)."""
    eval_success: float
    """Held-out success rate of the candidate policy (Suc.Rate, 0-1)."""
    kept_score: float
    """Mean held-out score of the policy in force after the round."""
    kept_success: float
    """Held-out success rate of the policy in force after the round."""
    delta: float | None = None
    """Eq. 6 on `delta_metric`; None for round 0."""
    kept: bool = True
    """The round's truths were kept (Delta >= 0)."""
    reverted: bool = False
    """The round's truths were reverted (Delta < 0)."""
    experiences: list[ExperienceLog] = Field(default_factory=list)
    """Every training play of the round and what became of it."""
    module_calls: list[ModelCallRecord] = Field(default_factory=list)
    """InsightForce and TruthWeaver calls of the round."""
    episodes: int = 0
    """Episodes played in the round (training, verification, evaluation)."""
    n_calls: int = 0
    """Model calls of the round: the agents' and the modules'."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of those calls."""
    cost_usd: float = 0.0
    """Cost of those calls."""


class LearningResult(BaseModel):
    """What `ExpVerLearner.learn` returns; everything in it is also on disk."""

    config: ExpVerConfig
    """The settings used."""
    truths: list[Truth]
    """The final truth repository."""
    rounds: list[RoundRecord]
    """Round 0 and every learning round."""
    out_dir: str
    """Where the files are."""
    n_calls: int = 0
    """Model calls of the whole run."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of the whole run."""
    cost_usd: float = 0.0
    """Cost of the whole run."""

    @property
    def initial_eval(self) -> float:
        return self.rounds[0].kept_score

    @property
    def final_eval(self) -> float:
        return self.rounds[-1].kept_score


# ---- GeoLink: key-step selection ----

_LIFE_EVENTS = ("wall_hit", "monster_hit")
_GAIN_EVENTS = ("coin", "kill", "barrier", "locked")


def highlight_candidates(steps: Sequence[StepRecord]) -> list[tuple[int, int, str, str]]:
    """Every highlight the metrics point to, as (priority, step index, kind, reason).

    Priority 0: life lost (Rem.HP) and goal reached (Suc.Rate); 1: invalid action (API Eff.,
    wasted steps); 2: coin (A.Gold), kill (A.kills), wall broken (A.Barr), item picked up,
    goal locked, prop used (match-2 score trade-off); 3: the two largest clears (match-2
    Clear/Step, Score/Step); 4: the single largest loss and largest gain of reward (any game).
    """
    out: list[tuple[int, int, str, str]] = []
    for step in steps:
        seen: set[str] = set()
        if not step.valid:
            error = step.info.get("error")
            reason = (
                prompts.WHY_INVALID_ERROR.substitute(error=error) if error else prompts.WHY_INVALID
            )
            out.append((1, step.index, "invalid", reason))
        for event in step.info.get("events") or ():
            kind = event.get("event") if isinstance(event, Mapping) else None
            if not isinstance(kind, str) or kind in seen:
                continue
            seen.add(kind)
            if kind in _LIFE_EVENTS:
                out.append((0, step.index, "life", prompts.WHY_EVENT[kind]))
            elif kind == "goal":
                out.append((0, step.index, "goal", prompts.WHY_EVENT[kind]))
            elif kind == "item":
                item = str(event.get("item", "item"))
                out.append((2, step.index, "item", prompts.WHY_ITEM.substitute(item=item)))
            elif kind in _GAIN_EVENTS:
                out.append((2, step.index, kind, prompts.WHY_EVENT[kind]))
        action = step.info.get("action")
        if isinstance(action, Mapping) and action.get("type") not in (None, "eliminate"):
            why = prompts.WHY_PROP.substitute(prop=action["type"])
            out.append((2, step.index, "prop", why))
    clears = [s for s in steps if _number(s.info.get("cleared_total")) > 0]
    for step in sorted(clears, key=lambda s: (-_number(s.info["cleared_total"]), s.index))[:2]:
        tiles = int(_number(step.info["cleared_total"]))
        out.append((3, step.index, "clear", prompts.WHY_CLEAR.substitute(tiles=tiles)))
    if steps:
        worst = min(steps, key=lambda s: (s.reward, s.index))
        if worst.reward < 0:
            why = prompts.WHY_LOSS.substitute(reward=f"{worst.reward:+g}")
            out.append((4, worst.index, "loss", why))
        best = min(steps, key=lambda s: (-s.reward, s.index))
        if best.reward > 0:
            why = prompts.WHY_GAIN.substitute(reward=f"{best.reward:+g}")
            out.append((4, best.index, "gain", why))
    return out


def select_key_steps(
    record: EpisodeRecord,
    *,
    head: int = 2,
    tail: int = 2,
    max_highlights: int = 6,
    per_kind: int = 2,
) -> list[KeyStep]:
    """GeoLink's selection (§4.1, App. B.2 "Session Highlights"): the first `head` and last
    `tail` steps of the trace, plus up to `max_highlights` highlights from
    `highlight_candidates`, taken by priority then step order, at most `per_kind` of one kind.
    Returned in step order; a step kept for several reasons is listed once with all of them."""
    steps = record.steps
    why: dict[int, list[str]] = {}
    for position in range(len(steps)):
        if position < head:
            why.setdefault(position, []).append(prompts.WHY_BEGINNING)
        if position >= len(steps) - tail:
            why.setdefault(position, []).append(prompts.WHY_END)
    by_index = {step.index: position for position, step in enumerate(steps)}
    taken: dict[str, int] = {}
    picked = 0
    for _priority, index, kind, reason in sorted(highlight_candidates(steps)):
        if picked >= max_highlights:
            break
        if taken.get(kind, 0) >= per_kind:
            continue
        taken[kind] = taken.get(kind, 0) + 1
        picked += 1
        reasons = why.setdefault(by_index[index], [])
        if reason not in reasons:
            reasons.append(reason)
    return [KeyStep(steps[position], tuple(why[position])) for position in sorted(why)]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


# ---- InsightForce: prompt and lenient parsing ----


def render_insightforce_prompt(
    game: str,
    key_steps: Sequence[KeyStep],
    metrics: Mapping[str, Any],
    *,
    thought_chars: int = 600,
) -> str:
    """The session analysis prompt of App. B.2 for one episode."""
    metric_lines = [
        prompts.METRIC_LINE.substitute(name=name, value=_show_metric(value))
        for name, value in metrics.items()
        if isinstance(value, bool | int | float | str)
    ]
    blocks = []
    for key in key_steps:
        step = key.step
        thought = step.thought.strip() or (step.calls[-1].response.strip() if step.calls else "")
        outcome = [prompts.OUTCOME_REWARD.substitute(reward=f"{step.reward:+g}")]
        if step.terminated or step.truncated:
            outcome.append(prompts.OUTCOME_END)
        blocks.append(
            prompts.KEY_STEP.substitute(
                number=step.index + 1,
                why=", ".join(key.why),
                thought=_clip(thought, thought_chars) or prompts.NO_THOUGHT,
                action=_clip(step.action.strip(), 200),
                outcome="; ".join(outcome),
            )
        )
    return prompts.INSIGHTFORCE_PROMPT.substitute(
        game=prompts.GAME_TITLES.get(game, game),
        metrics="\n".join(metric_lines) or prompts.NO_METRICS,
        highlights="\n\n".join(blocks) or prompts.NO_STEPS,
    )


def _show_metric(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "n/a"
    return str(value)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + prompts.TRUNCATION_MARK


_BULLET = re.compile(r"^\s*(?:[-*•+·]|\d{1,2}[.)]|\(\d{1,2}\)|[a-z][.)](?=\s))\s*")
_DECORATION = re.compile(r"\*\*|__|`|^\s*(?:#+|>)\s*")
"""Markdown that wraps text (bold, code, heading and quote marks); single `*`/`_` stay, since
they also occur inside words such as max_steps."""
_PLACEHOLDER = re.compile(
    r"^(?:\[.*\]|\.{2,}|…|n/?a|none(?: identified)?|nothing|-+|tbd)\.?$", re.IGNORECASE
)
_MAX_ITEM_CHARS = 300
Section = Literal["strengths", "weaknesses", "lessons"]


def _section_of(words: str) -> Section | None:
    key = " ".join(re.sub(r"[^a-z ]+", " ", words.lower()).split())
    for section, prefixes in (
        ("weaknesses", prompts.WEAKNESS_WORDS),
        ("strengths", prompts.STRENGTH_WORDS),
        ("lessons", prompts.LESSON_WORDS),
    ):
        if any(key.startswith(prefix) for prefix in prefixes):
            return section  # type: ignore[return-value]
    return None


def _clean_item(text: str) -> str:
    text = " ".join(_DECORATION.sub("", text).split()).strip(" :;")
    if not text or _PLACEHOLDER.match(text):
        return ""
    return text if len(text) <= _MAX_ITEM_CHARS else _clip(text, _MAX_ITEM_CHARS)


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array embedded in `text` (prose and code fences around it are fine)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = 0
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found.append(value)
        position = end


_TEXT_FIELDS = ("text", "entry", "knowledge", "point", "lesson", "content")


def _item_text(value: Any) -> str | None:
    """The text of one listed item: a string, or an object's text field (or its only string);
    anything else is no item (logged by the caller), never raw JSON passed on as prose."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _TEXT_FIELDS:
            if isinstance(value.get(key), str):
                return value[key]
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
    return None


def _as_items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        items = [_item_text(v) for v in value if v is not None]
        if None in items:
            log.warning("InsightForce listed items without text; dropped them: %r", value)
        return [i for i in items if i is not None]
    if isinstance(value, dict):
        return [f"{k}: {v}" if isinstance(v, str) else str(k) for k, v in value.items()]
    return []


_HEADING = re.compile(
    r"^(?:\d{1,2}[.)]\s*)?(?P<name>[A-Za-z][A-Za-z /&'-]{0,60}?)\s*"
    r"(?:\([^)]*\))?\s*(?::\s*(?P<rest>.*))?$"
)
_DASH = re.compile(r"^[-*•+·]\s+")


def _heading(line: str) -> tuple[Section, str] | None:
    """(section, items written after its colon) when `line` opens a section, else None.

    A heading starts with a section's name (`Strengths`, `## 2. Areas for improvement`,
    `**Lessons learned:**`, `Weaknesses (other):`) and either has a colon after the name or at
    most three words. A dash or star bullet is a heading only as a bare `- Strengths:`, so
    `- Strength in planning` and `1. Positive use of the sword` stay items."""
    dash = _DASH.match(line)
    bare = _DECORATION.sub("", line[dash.end() :] if dash else line).strip(" *_")
    match = _HEADING.match(bare)
    section = _section_of(match["name"]) if match else None
    if match is None or section is None:
        return None
    rest = match["rest"]
    if dash is not None:
        return (section, "") if rest == "" else None
    if rest is None and len(match["name"].split()) > 3:
        return None
    return section, rest or ""


def _json_sections(value: Any, sections: dict[Section, list[str]], depth: int = 0) -> None:
    if not isinstance(value, dict) or depth > 2:
        return
    for key, items in value.items():
        section = _section_of(str(key).replace("_", " "))
        if section is not None:
            sections[section] += _as_items(items)
        else:
            # Models like to wrap the answer: {"analysis": {"strengths": [...]}}.
            _json_sections(items, sections, depth + 1)


def parse_experience(text: str) -> dict[Section, list[str]] | None:
    """Read InsightForce's answer leniently into strengths, weaknesses and lessons.

    Accepted: a JSON object (keys such as strengths / weaknesses / areas_for_improvement /
    lessons / insights, each a list or a string, possibly one level inside a wrapper object),
    or text with section headings (see `_heading`) followed by bulleted or numbered lines (a
    heading may also carry items after its colon, separated by `;`). Unbulleted lines under a
    heading count as items. Placeholders (`[Strength 1]`, `...`, `none`) are dropped, repeats
    removed. None when no section holds an item.
    """
    sections: dict[Section, list[str]] = {"strengths": [], "weaknesses": [], "lessons": []}
    for value in _json_values(text):
        _json_sections(value, sections)
    if not any(sections.values()):
        current: Section | None = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("```"):
                continue
            heading = _heading(line)
            if heading is not None:
                current, rest = heading
                sections[current] += [part for part in rest.split(";") if part.strip()]
            elif current is not None:
                sections[current].append(_BULLET.sub("", line, count=1))
    out: dict[Section, list[str]] = {}
    for section, items in sections.items():
        cleaned: list[str] = []
        seen: set[str] = set()
        for item in items:
            item = _clean_item(item)
            if item and item.lower() not in seen:
                seen.add(item.lower())
                cleaned.append(item)
        out[section] = cleaned
    return out if any(out.values()) else None


# ---- TruthWeaver: prompt and lenient parsing ----


def render_truthweaver_prompt(game: str, truths: Sequence[Truth]) -> str:
    """The knowledge organisation prompt of App. B.2 over `truths` (old ones first)."""
    lines = [
        prompts.ENTRY_LINE.substitute(number=number, text=truth.text, source=_source_label(truth))
        for number, truth in enumerate(truths, start=1)
    ]
    return prompts.TRUTHWEAVER_PROMPT.substitute(
        game=prompts.GAME_TITLES.get(game, game), entries="\n".join(lines)
    )


def _source_label(truth: Truth) -> str:
    source = truth.source or "unknown"
    return source if truth.round is None else f"{source}, round {truth.round}"


_SOURCE_SUFFIX = re.compile(r"\s*[(\[]\s*sources?\s*:[^)\]]*[)\]]\s*\.?$", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{4,}")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def parse_organised_truths(text: str, inputs: Sequence[str]) -> list[str] | None:
    """Read TruthWeaver's answer leniently: a JSON list of strings (or an object holding one),
    else one entry per line with bullets, numbers and `(source: ...)` tails stripped; heading
    and comment lines (`#...`, lines ending in `:`, `Note: ...`) are skipped.

    An organised entry restates knowledge it was given, so an entry sharing no word of four or
    more letters with `inputs` is noise and dropped. None when no entry survives."""
    candidates: list[str] = []
    parsed_json = False
    for value in _json_values(text):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, list)), None)
        if isinstance(value, list):
            parsed_json = True
            items = [_item_text(v) for v in value]
            if None in items:
                log.warning("TruthWeaver listed entries without text; dropped them: %r", value)
            candidates = [i for i in items if i is not None]
            break
    # An answer that was a JSON list is never re-read line by line: its lines are JSON, not prose.
    if not candidates and not parsed_json:
        for raw in text.splitlines():
            line = raw.strip()
            if (
                not line
                or line.startswith(("#", "```"))
                or line.endswith(":")
                or re.match(r"^\W*note\b", line, re.IGNORECASE)
            ):
                continue
            candidates.append(_BULLET.sub("", line, count=1))
    vocabulary = {w for entry in inputs for w in _WORD.findall(entry.lower())}
    out: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        # App. B.2 shows entries as `[entry]`; a model copying that format keeps its entry.
        candidate = re.sub(r"^\[(.*)\]$", r"\1", candidate.strip())
        entry = _clean_item(_SOURCE_SUFFIX.sub("", candidate))
        if not entry or _norm(entry) in seen:
            continue
        if not vocabulary & set(_WORD.findall(entry.lower())):
            continue
        seen.add(_norm(entry))
        out.append(entry)
    return out or None


# ---- levels and envs of the eeb games ----

MATCH2_TRAIN_SEED_BASE = 9000
"""Seeds of generated match-2 training levels start here, far from the test seeds 0-29."""
MATCH2_TRAIN_LEVELS = 30


def game_levels(game: Game, role: Literal["train", "eval"]) -> list[tuple[str, Any]]:
    """(id, level) pairs for a learning run, ids spelled as the eeb-v1 benchmark spells them.

    * eval: the test split (30 levels per difficulty), interleaved across difficulties (L1, L2,
      L3, L1, ... / easy, medium, hard, easy, ...) so that the first N held-out levels
      (`ExpVerConfig.eval_levels`) cover every difficulty. Eq. 6 measures Delta on test cases.
    * train, maze: the 30 shipped training maps (`maze-train-NNN`, levels cycling 1-3).
    * train, match2: the game ships no training split, so 30 levels are generated with
      difficulties cycling easy, medium, hard and seeds 9000 + i (`match2-train-<d>-<seed>`).
    """
    if game == "maze":
        from forkingpaths.benchmarks.eeb.maze_levels import load_maze_split

        if role == "train":
            return [
                (f"maze-train-{rel.rsplit('/', 1)[-1]}", lv) for rel, lv in load_maze_split("train")
            ]
        groups: dict[Any, list[tuple[str, Any]]] = {}
        for rel, lv in load_maze_split("test"):
            _, level_dir, number = rel.split("/")
            groups.setdefault(lv.level, []).append(
                (f"maze-l{level_dir.removeprefix('level')}-{number}", lv)
            )
        return _interleave(list(groups.values()))
    from forkingpaths.benchmarks.eeb.match2_levels import (
        MATCH2_DIFFICULTIES,
        generate_match2_level,
        load_match2_split,
    )

    difficulties = list(MATCH2_DIFFICULTIES)
    if role == "train":
        out = []
        for i in range(MATCH2_TRAIN_LEVELS):
            difficulty, seed = difficulties[i % len(difficulties)], MATCH2_TRAIN_SEED_BASE + i
            out.append(
                (f"match2-train-{difficulty}-{seed}", generate_match2_level(difficulty, seed))
            )
        return out
    by_difficulty: dict[str, list[tuple[str, Any]]] = {d: [] for d in difficulties}
    for key, lv in load_match2_split("test").items():
        by_difficulty[key.split("/")[0]].append((f"match2-{key.replace('/', '-')}", lv))
    return _interleave(list(by_difficulty.values()))


def _interleave(groups: list[list[tuple[str, Any]]]) -> list[tuple[str, Any]]:
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [group[i] for group in groups if i < len(group)]
    return out


def game_instance_params(level_id: str, level: Any) -> dict[str, Any]:
    """The `Instance.params` the eeb-v1 benchmark gives a level (`game` and `level` or
    `difficulty`), for agents that read them in `reset`."""
    difficulty = getattr(level, "difficulty", None)
    if difficulty is not None:
        return {"game": "match2", "difficulty": difficulty}
    return {"game": "maze", "level": level.level}


# ---- the learner ----


def derive_seed(base: int, *parts: object) -> int:
    """A seed stable across runs and processes for (base, parts)."""
    return (zlib.crc32("/".join(map(str, parts)).encode()) + base) % (2**31)


class ExpVerLearner(Generic[LevelT]):
    """The Agent-ExpVer online learning loop of §4 over one game.

    Per round, each training level is played with the current truths (GeoLink, Eqs. 1-2), its
    key steps selected, summarised into an experience by InsightForce (Eq. 3), replayed with the
    experience and promoted when the level is passed with a higher score (Eq. 4), then organised
    into the repository by TruthWeaver. The policy is the base agent plus the truths (Eq. 5),
    built by `make_agent`. After the round the candidate policy is evaluated on held-out levels;
    Delta (Eq. 6) < 0 restores the repository of the round's start. A reverted round is followed
    by the next round on fresh training levels (that is the paper's "abstraction is repeated": at
    temperature 0 redoing the same round in place would return the same experience).

    Everything reaching a model goes through `model` (the modules) or the agents `make_agent`
    builds, so the runner's retries, cache and accounting apply; every call is recorded, in the
    episodes' steps or the rounds' `module_calls`. A model outage (`ModelError`) ends `learn`
    with the files of the finished rounds on disk. Bad module answers never raise: an unusable
    InsightForce answer drops the experience, an unusable TruthWeaver answer keeps the old truths
    plus the new ones appended; both are logged as warnings.
    """

    def __init__(
        self,
        config: ExpVerConfig,
        *,
        make_agent: Callable[[list[str]], Agent],
        make_env: Callable[[LevelT], Env],
        episode_metrics: Callable[[EpisodeRecord], Mapping[str, Any]],
        model: ChatModel,
        out_dir: str | Path,
        train_levels: Sequence[tuple[str, LevelT]],
        eval_levels: Sequence[tuple[str, LevelT]],
        initial_truths: TruthRepository | Sequence[Truth | str] = (),
        run_id: str | None = None,
        benchmark_id: str = "eeb-v1",
        agent_name: str = "base",
        agent_model: str | None = None,
        instance_params: Callable[[str, LevelT], Mapping[str, Any]] | None = None,
    ) -> None:
        if not train_levels:
            raise ConfigError("train_levels: got none; pass at least one (level id, level) pair")
        if not eval_levels:
            raise ConfigError("eval_levels: got none; pass at least one (level id, level) pair")
        self.config = config
        self.make_agent = make_agent
        self.make_env = make_env
        self.episode_metrics = episode_metrics
        self.model = model
        self.out_dir = Path(out_dir)
        self.train_levels = list(train_levels)
        self.eval_levels = list(eval_levels)[: config.eval_levels]
        if isinstance(initial_truths, TruthRepository) and initial_truths.game != config.game:
            raise ConfigError(
                f"truths: the repository holds {initial_truths.game} truths; this run learns "
                f"{config.game} (pass a {config.game} truths file or none)"
            )
        self.initial_truths = TruthRepository(config.game, initial_truths)
        self.run_id = run_id or self.out_dir.name
        self.benchmark_id = benchmark_id
        self.agent_name = agent_name
        self.agent_model = agent_model if agent_model is not None else model.name
        self.instance_params = instance_params
        self.module_calls: list[ModelCallRecord] = []
        """Every InsightForce and TruthWeaver call so far, in order."""
        self.episode_totals: list[tuple[int, Usage, float]] = []
        """(calls, usage, cost) of every episode played so far, in order."""
        self._round = 0

    # ---- paths ----

    @property
    def truths_path(self) -> Path:
        return self.out_dir / TRUTHS_FILE

    @property
    def rounds_path(self) -> Path:
        return self.out_dir / ROUNDS_FILE

    @property
    def episodes_path(self) -> Path:
        return self.out_dir / EPISODES_FILE

    @property
    def curve_path(self) -> Path:
        return self.out_dir / CURVE_FILE

    @property
    def config_path(self) -> Path:
        return self.out_dir / CONFIG_FILE

    # ---- GeoLink: play and select ----

    async def play(
        self,
        level_id: str,
        level: LevelT,
        truths: Sequence[str],
        *,
        seed: int,
        phase: Phase = "play",
        round_index: int | None = None,
    ) -> EpisodeRecord:
        """One episode of the policy base prompt + `truths` (Eq. 5) on `level`; the record (with
        its metrics) is appended to `expver_episodes.jsonl`, errored ones included."""
        record, error = await self._play(level_id, level, truths, seed, phase, round_index)
        self._append(self.episodes_path, record.model_dump_json())
        if error is not None:
            raise error
        return record

    async def _play(
        self,
        level_id: str,
        level: LevelT,
        truths: Sequence[str],
        seed: int,
        phase: Phase,
        round_index: int | None,
    ) -> tuple[EpisodeRecord, ModelError | None]:
        round_index = self._round if round_index is None else round_index
        split = "eval" if phase == "eval" else "train"
        record = EpisodeRecord(
            run_id=self.run_id,
            benchmark=self.benchmark_id,
            split=split,
            instance_id=level_id,
            trial=round_index,
            seed=seed,
            agent=self.agent_name,
            agent_options={"truths": len(truths)},
            model=self.agent_model,
        )
        agent = self.make_agent(list(truths))
        params = dict(self.instance_params(level_id, level)) if self.instance_params else {}
        agent.reset(Instance(id=level_id, split=split, params=params), seed)
        env = self.make_env(level)
        started = time.perf_counter()
        error: ModelError | None = None
        try:
            await play_episode(env, agent, record, max_steps=self.config.max_steps)
        except ModelError as exc:
            # The outage ends the learning run, but the steps paid for so far stay on record.
            record.status, record.error, error = "error", f"{type(exc).__name__}: {exc}", exc
        finally:
            env.close()
        record.duration_s = time.perf_counter() - started
        record.finished_at = utc_now()
        record.tally_calls()
        state = agent.state() if hasattr(agent, "state") else {}
        record.agent_state = {
            **state,
            "expver": {"round": round_index, "phase": phase, "truths": list(truths)},
        }
        if record.status == "ok":
            record.metrics = dict(self.episode_metrics(record))
            _check_metrics(record.metrics)
        self.episode_totals.append((record.n_calls, record.usage, record.cost_usd))
        return record, error

    def select_key_steps(self, record: EpisodeRecord, metrics: Mapping[str, Any]) -> list[KeyStep]:
        """GeoLink's key steps of `record` (see `select_key_steps`; the metrics are those the
        highlights stand for, so the selection reads the steps' info directly)."""
        cfg = self.config
        return select_key_steps(
            record,
            head=cfg.head_steps,
            tail=cfg.tail_steps,
            max_highlights=cfg.max_highlights,
            per_kind=cfg.highlights_per_kind,
        )

    # ---- InsightForce ----

    async def summarize(
        self, record: EpisodeRecord, key_steps: Sequence[KeyStep], metrics: Mapping[str, Any]
    ) -> Experience | None:
        """Eq. 3: the experience InsightForce draws from the key steps and metrics, or None
        (logged) when its answer holds no strength, weakness or lesson."""
        prompt = render_insightforce_prompt(
            self.config.game, key_steps, metrics, thought_chars=self.config.thought_chars
        )
        text = await self._call(prompt, "insightforce")
        parsed = parse_experience(text)
        if parsed is None:
            log.warning(
                "InsightForce answer for %s (round %d) has no strengths, weaknesses or lessons; "
                "experience dropped. Answer began: %r",
                record.instance_id,
                record.trial,
                text[:200],
            )
            return None
        return Experience(
            level_id=record.instance_id,
            seed=record.seed,
            round=record.trial,
            baseline_score=float(metrics["score"]),
            baseline_success=bool(metrics["success"]),
            **parsed,
        )

    # ---- verification ----

    async def verify(self, level: LevelT, experience: Experience, truths: Sequence[str]) -> Verdict:
        """Eq. 4: replay the experience's level (same seed) with truths + the experience."""
        lines = list(truths) + experience.entries(self.config.max_experience_items)
        record = await self.play(
            experience.level_id,
            level,
            lines,
            seed=experience.seed,
            phase="verify",
            round_index=experience.round,
        )
        return Verdict(
            level_id=experience.level_id,
            passed=bool(record.metrics["success"]),
            baseline_score=experience.baseline_score,
            score=float(record.metrics["score"]),
        )

    # ---- TruthWeaver ----

    async def weave(self, truths: Sequence[Truth | str], new: Sequence[Truth | str]) -> list[Truth]:
        """Organise `truths` + `new` with TruthWeaver (merge, remove, insert; §4.2). Entries
        the answer keeps word for word keep their provenance; rewritten ones are marked
        `source="truthweaver"`. An unusable answer keeps everything, `new` appended (logged)."""
        merged = _as_truths(truths) + _as_truths(new)
        if not merged:
            return []
        prompt = render_truthweaver_prompt(self.config.game, merged)
        text = await self._call(prompt, "truthweaver")
        organised = parse_organised_truths(text, [t.text for t in merged])
        if organised is None:
            log.warning(
                "TruthWeaver answer is unusable; keeping the %d old truths and appending the %d "
                "new ones. Answer began: %r",
                len(truths),
                len(new),
                text[:200],
            )
            return self._cap(_dedupe(merged))
        known: dict[str, Truth] = {}
        for truth in merged:  # the oldest copy keeps its provenance (source, round, gain)
            known.setdefault(_norm(truth.text), truth)
        out = [
            known.get(_norm(entry))
            or Truth(text=entry, source="truthweaver", round=self._round or None)
            for entry in organised
        ]
        return self._cap(out)

    def _cap(self, truths: list[Truth]) -> list[Truth]:
        limit = self.config.max_truths
        if len(truths) > limit:
            log.info("%d truths exceed max_truths=%d; the oldest are dropped", len(truths), limit)
            return truths[-limit:]
        return truths

    # ---- Delta (Eq. 6) ----

    async def evaluate(
        self,
        truths: Sequence[str],
        levels: Sequence[tuple[str, LevelT]] | None = None,
        *,
        round_index: int | None = None,
    ) -> Evaluation:
        """Play every held-out level once with `truths`; each level's seed is the same in every
        round, so Delta compares the policies on identical episodes."""
        levels = self.eval_levels if levels is None else list(levels)
        limit = asyncio.Semaphore(self.config.concurrency)

        async def one(level_id: str, level: LevelT) -> tuple[EpisodeRecord, ModelError | None]:
            async with limit:
                seed = derive_seed(self.config.seed, "eval", level_id)
                return await self._play(level_id, level, truths, seed, "eval", round_index)

        results = await asyncio.gather(*(one(i, lv) for i, lv in levels))
        # Written in level order, not finishing order, so the file is the same on every run.
        for record, _ in results:
            self._append(self.episodes_path, record.model_dump_json())
        error = next((e for _, e in results if e is not None), None)
        if error is not None:
            raise error
        records = [record for record, _ in results]
        return Evaluation(
            truths=len(truths),
            scores={r.instance_id: float(r.metrics["score"]) for r in records},
            successes={r.instance_id: bool(r.metrics["success"]) for r in records},
        )

    def delta(self, new: Evaluation, old: Evaluation) -> float:
        """Eq. 6: mean over held-out levels of S_i^t - S_i^{t-1} on `delta_metric`."""
        after = new.per_level(self.config.delta_metric)
        before = old.per_level(self.config.delta_metric)
        common = [level for level in after if level in before]
        if not common:
            return 0.0
        return sum(after[level] - before[level] for level in common) / len(common)

    # ---- the loop ----

    def round_levels(self, round_index: int) -> list[tuple[str, LevelT]]:
        """Training levels of round `round_index` (1-based): the next `levels_per_round` of the
        pool, wrapping around."""
        k, pool = self.config.levels_per_round, self.train_levels
        return [pool[((round_index - 1) * k + j) % len(pool)] for j in range(k)]

    async def learn(self) -> LearningResult:
        """Run every round; write truths.json, expver_rounds.jsonl, expver_episodes.jsonl and
        learning_curve.png under `out_dir` and return what they hold."""
        self._prepare_out_dir()
        cfg = self.config
        self._write_spec()
        truths = list(self.initial_truths)
        self._save_truths(truths)
        mark = self._mark()
        self._round = 0
        current = await self.evaluate(_texts(truths), round_index=0)
        rounds = [
            self._round_record(
                0, mark, current, current, before=truths, candidate=truths, after=truths
            )
        ]
        self._append(self.rounds_path, rounds[-1].model_dump_json())
        for round_index in range(1, cfg.rounds + 1):
            self._round = round_index
            mark = self._mark()
            start = list(truths)
            logs: list[ExperienceLog] = []
            for level_id, level in self.round_levels(round_index):
                truths, entry = await self._learn_from(level_id, level, truths, round_index)
                logs.append(entry)
            candidate = list(truths)
            # Unchanged knowledge needs no new evaluation (metadata alone does not count).
            if _texts(candidate) == _texts(start):
                evaluation, delta = current, 0.0
            else:
                evaluation = await self.evaluate(_texts(candidate), round_index=round_index)
                delta = self.delta(evaluation, current)
            reverted = delta < 0
            if reverted:
                log.info("round %d: Delta %.3f < 0, its truths are reverted", round_index, delta)
                truths = start
            else:
                current = evaluation
            self._save_truths(truths)
            record = self._round_record(
                round_index,
                mark,
                evaluation,
                current,
                before=start,
                candidate=candidate,
                after=truths,
                delta=delta,
                reverted=reverted,
                logs=logs,
            )
            rounds.append(record)
            self._append(self.rounds_path, record.model_dump_json())
        plot_learning_curve(rounds, self.curve_path, title=f"Agent-ExpVer on {cfg.game}")
        return LearningResult(
            config=cfg,
            truths=truths,
            rounds=rounds,
            out_dir=str(self.out_dir),
            n_calls=sum(r.n_calls for r in rounds),
            usage=sum((r.usage for r in rounds), Usage()),
            cost_usd=sum(r.cost_usd for r in rounds),
        )

    async def _learn_from(
        self, level_id: str, level: LevelT, truths: list[Truth], round_index: int
    ) -> tuple[list[Truth], ExperienceLog]:
        cfg = self.config
        seed = derive_seed(cfg.seed, "train", level_id, round_index)
        record = await self.play(level_id, level, _texts(truths), seed=seed, phase="play")
        key_steps = self.select_key_steps(record, record.metrics)
        experience = await self.summarize(record, key_steps, record.metrics)
        if experience is None:
            return truths, ExperienceLog(level_id=level_id, outcome="dropped")
        verdict = None
        if cfg.verification:
            verdict = await self.verify(level, experience, _texts(truths))
            if not verdict.promoted:
                return truths, ExperienceLog(
                    level_id=level_id, outcome="rejected", experience=experience, verdict=verdict
                )
        lines = experience.entries(cfg.max_experience_items)
        gain = verdict.gain if verdict is not None else None
        new = [Truth(text=t, source=level_id, round=round_index, verified_gain=gain) for t in lines]
        if cfg.truthweaver:
            truths = await self.weave(truths, new)
        else:
            truths = self._cap(truths + new)
        entry = ExperienceLog(
            level_id=level_id,
            outcome="promoted",
            experience=experience,
            verdict=verdict,
            added=lines,
        )
        return truths, entry

    # ---- bookkeeping ----

    async def _call(self, prompt: str, purpose: str) -> str:
        params = (
            ModelParams(max_tokens=self.config.module_max_tokens)
            if self.config.module_max_tokens is not None
            else None
        )
        completion = await self.model.complete([Message(role="user", content=prompt)], params)
        self.module_calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
        return completion.text

    def _mark(self) -> tuple[int, int]:
        return len(self.module_calls), len(self.episode_totals)

    def _round_record(
        self,
        round_index: int,
        mark: tuple[int, int],
        evaluation: Evaluation,
        current: Evaluation,
        *,
        before: list[Truth],
        candidate: list[Truth],
        after: list[Truth],
        delta: float | None = None,
        reverted: bool = False,
        logs: Sequence[ExperienceLog] = (),
    ) -> RoundRecord:
        calls = self.module_calls[mark[0] :]
        episodes = self.episode_totals[mark[1] :]
        usage = sum(
            (
                Usage(
                    prompt_tokens=c.prompt_tokens,
                    completion_tokens=c.completion_tokens,
                    reasoning_tokens=c.reasoning_tokens,
                )
                for c in calls
            ),
            Usage(),
        )
        usage = sum((u for _, u, _ in episodes), usage)
        return RoundRecord(
            round=round_index,
            truths_before=len(before),
            truths_candidate=len(candidate),
            truths_after=len(after),
            experiences_proposed=sum(1 for e in logs if e.outcome != "dropped"),
            experiences_dropped=sum(1 for e in logs if e.outcome == "dropped"),
            experiences_verified=sum(1 for e in logs if e.outcome == "promoted"),
            eval_score=evaluation.mean_score,
            eval_success=evaluation.success_rate,
            kept_score=current.mean_score,
            kept_success=current.success_rate,
            delta=delta,
            kept=not reverted,
            reverted=reverted,
            experiences=list(logs),
            module_calls=list(calls),
            episodes=len(episodes),
            n_calls=len(calls) + sum(n for n, _, _ in episodes),
            usage=usage,
            cost_usd=sum(c.cost_usd for c in calls) + sum(cost for _, _, cost in episodes),
        )

    def _prepare_out_dir(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for path in (self.rounds_path, self.episodes_path):
            if path.exists() and path.stat().st_size:
                raise ConfigError(
                    f"out_dir: {path} already holds a learning run; choose a new output "
                    "directory (reuse its truths with --truths FILE)"
                )

    def _write_spec(self) -> None:
        """`expver_config.json`: everything that determines the run besides the models' answers."""
        spec = {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "benchmark": self.benchmark_id,
            "agent": self.agent_name,
            "agent_model": self.agent_model,
            "module_model": self.model.name,
            "config": self.config.model_dump(mode="json"),
            "train_levels": [level_id for level_id, _ in self.train_levels],
            "eval_levels": [level_id for level_id, _ in self.eval_levels],
            "initial_truths": self.initial_truths.to_json()["truths"],
            "created_at": utc_now(),
        }
        self.config_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    def _save_truths(self, truths: Sequence[Truth]) -> None:
        TruthRepository(self.config.game, truths).save(self.truths_path)

    def _append(self, path: Path, line: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def _check_metrics(metrics: Mapping[str, Any]) -> None:
    missing = [key for key in ("score", "success") if key not in metrics]
    if missing:
        raise ConfigError(
            f"episode_metrics returned keys {sorted(metrics)}; Agent-ExpVer needs "
            f"{', '.join(missing)} (use games.RECORD_METRICS[game] or the benchmark's "
            "episode_metrics)"
        )


def _as_truths(items: Sequence[Truth | str]) -> list[Truth]:
    return [item if isinstance(item, Truth) else Truth(text=item) for item in items]


def _texts(truths: Sequence[Truth]) -> list[str]:
    return [truth.text for truth in truths]


def _dedupe(truths: Sequence[Truth]) -> list[Truth]:
    seen: set[str] = set()
    out = []
    for truth in truths:
        if _norm(truth.text) not in seen:
            seen.add(_norm(truth.text))
            out.append(truth)
    return out


# ---- Figure 3b ----


def plot_learning_curve(rounds: Sequence[RoundRecord], path: str | Path, *, title: str) -> Path:
    """Figure 3b: held-out A.Score and Suc.Rate per learning round. The solid line is the policy
    evaluated that round, the dashed one the policy kept; reverted rounds are marked x."""
    from matplotlib.figure import Figure  # object API: no pyplot global state, no display

    xs = [r.round for r in rounds]
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (label, evaluated, kept) in zip(
        axes,
        (
            ("A.Score", [r.eval_score for r in rounds], [r.kept_score for r in rounds]),
            (
                "Suc.Rate (%)",
                [100 * r.eval_success for r in rounds],
                [100 * r.kept_success for r in rounds],
            ),
        ),
        strict=True,
    ):
        ax.plot(xs, evaluated, marker="o", color="#1f77b4", label="evaluated policy")
        ax.plot(xs, kept, linestyle="--", color="#2ca02c", label="kept policy")
        bad = [(x, y) for x, y, r in zip(xs, evaluated, rounds, strict=True) if r.reverted]
        if bad:
            bx, by = zip(*bad, strict=True)
            ax.scatter(bx, by, marker="x", color="#d62728", s=60, zorder=3, label="reverted")
        ax.set_xlabel("learning round")
        ax.set_ylabel(label)
        ax.set_xticks(xs)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
