"""Metric 2, Divergence Momentum: an LLM judge of Originality, Elaboration and Groundedness.

The paper (§3.1, App. C.2) scores the apply, craft and input attempts of a trajectory that did
not succeed at once with an LLM-as-a-judge on three 1-5 criteria. The judge sees the scenario
objective, the current scene, the tools in the bag, the recent history, the agent's Thought, its
Action and the environment's response (`JudgeItem`), and answers one JSON object
(`judge_prompts`). Calls run at temperature 0.

A reply that is not a score is never coerced: it is retried with a short corrective user turn
(`retries` times) and then recorded as missing with the reason (`JudgeVerdict.missing_reason`).
Model outages raise `ModelError` as from any model call, and the runner records the episode as
errored. Every call is returned as a `ModelCallRecord` with `purpose="judge"`, for the caller to
append to the calls of the step it judged (so the run's cost includes the judge).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from forkingpaths.benchmarks.escape import judge_prompts as prompts
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelCallRecord, StepRecord
from forkingpaths.models.text import json_values

CRITERIA = ("originality", "elaboration", "groundedness")
"""The three Metric 2 criteria, in the paper's order."""

SCORE_RANGE = range(1, 6)
"""Allowed scores: whole numbers 1 to 5."""

HISTORY_SHOWN = 10
"""Recent steps shown to the judge (the agent's working memory, §3.3)."""

JUDGE_PARAMS = ModelParams(temperature=0.0)
"""Judge sampling: greedy, set explicitly so a run's --temperature does not reach the judge."""

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeItem:
    """Everything the judge sees about one Thought-Action step (App. C.2)."""

    objective: str
    """The scenario objective."""
    scene_context: str
    """The current scene as the agent saw it (description and visible objects)."""
    bag: tuple[str, ...]
    """Names of the tools in the agent's bag."""
    history: tuple[Mapping[str, Any], ...]
    """Recent steps before this one, oldest first: `{step, action, response}`."""
    thought: str
    """The agent's Thought ("" when it gave none)."""
    action: str
    """The Action it took."""
    response: str
    """What the environment answered."""

    def __post_init__(self) -> None:
        # Accept any sequences; store tuples so the item stays immutable and hashable by parts.
        object.__setattr__(self, "bag", tuple(self.bag))
        object.__setattr__(self, "history", tuple(dict(h) for h in self.history))


@dataclass(frozen=True)
class JudgeVerdict:
    """The judge's scores for one item, or why there are none."""

    scores: dict[str, int] | None
    """Criterion -> 1..5; None when no reply could be read as scores."""
    missing_reason: str | None
    """Why `scores` is None (None when scored)."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every judge call made for the item (`purpose="judge"`), retries included."""
    attempts: int = 0
    """Number of judge calls made (1 + retries used)."""

    @property
    def scored(self) -> bool:
        return self.scores is not None

    def as_info(self) -> dict[str, Any]:
        """The form stored in `StepRecord.info["judge"]`: the scores, or `{"missing": reason}`."""
        if self.scores is not None:
            return dict(self.scores)
        return {"missing": self.missing_reason or "no score"}


# ---- reading a reply ----

_NUMBER = r"(-?\d+(?:\.\d+)?)"


def _score_value(criterion: str, value: Any) -> tuple[int | None, str]:
    """A whole number 1..5, also as `{"score": n}`; anything else is refused with a reason."""
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        if "score" not in lowered:
            return None, f"{criterion}: expected a whole number 1-5, got an object"
        value = lowered["score"]
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"{criterion}: expected a whole number 1-5, got {json.dumps(value)}"
    if value not in SCORE_RANGE:
        return None, f"{criterion}: {value} is outside 1-5"
    return value, ""


def scores_from_object(
    obj: Mapping[str, Any], criteria: Sequence[str] = CRITERIA
) -> tuple[dict[str, int] | None, str]:
    """(scores, "") when `obj` holds every criterion as a whole number 1..5 (keys compared
    case-insensitively), else (None, reason)."""
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    missing = [c for c in criteria if c not in lowered]
    if missing:
        return None, f"missing {', '.join(missing)}"
    scores: dict[str, int] = {}
    for criterion in criteria:
        score, reason = _score_value(criterion, lowered[criterion])
        if score is None:
            return None, reason
        scores[criterion] = score
    return scores, ""


def _criteria_object(value: Any, criteria: Sequence[str]) -> Mapping[str, Any] | None:
    """The first object (breadth first, nested objects included) naming any criterion."""
    queue = [value]
    while queue:
        current = queue.pop(0)
        if isinstance(current, dict):
            keys = {str(k).strip().lower() for k in current}
            if keys & set(criteria):
                return current
            queue.extend(v for v in current.values() if isinstance(v, dict))
    return None


def read_scores(text: str, criteria: Sequence[str] = CRITERIA) -> tuple[dict[str, int] | None, str]:
    """The judge's scores in a reply as (scores, ""), or (None, why the reply is not a score).

    Accepted: a JSON object anywhere in the reply (also inside a ``` fence, also nested one level
    down as in `{"scores": {...}}`) whose keys include every criterion, case-insensitively, each
    a whole number 1-5 (or `{"score": n}`); otherwise lines such as `Originality: 4`,
    `**Elaboration** = 3` or `- Groundedness: 5/5`, one per criterion. Anything else (a missing
    criterion, 0 or 6, 3.5, "4" as a string, prose) is not a score.

    >>> read_scores('{"originality": 4, "elaboration": 2, "groundedness": 5}')
    ({'originality': 4, 'elaboration': 2, 'groundedness': 5}, '')
    >>> read_scores("Originality: 4\\nElaboration: 2\\nGroundedness: 9")
    (None, 'groundedness: 9 is outside 1-5')
    """
    for value in json_values(text):
        obj = _criteria_object(value, criteria)
        if obj is not None:
            return scores_from_object(obj, criteria)
    names = "|".join(re.escape(c) for c in criteria)
    line = re.compile(
        rf"^[\s>*_#`\-\d.)]*({names})[\s*_`]*(?:score)?[\s*_`]*[:=\-–]\s*[*_`]*\s*{_NUMBER}",
        re.IGNORECASE | re.MULTILINE,
    )
    raw: dict[str, list[str]] = {}
    for match in line.finditer(text):
        raw.setdefault(match.group(1).lower(), []).append(match.group(2))
    if not raw:
        return None, "no JSON object with the criteria and no 'Criterion: N' lines"
    scores: dict[str, int] = {}
    for criterion in criteria:
        values = raw.get(criterion)
        if not values:
            return None, f"missing {criterion}"
        if len(set(values)) > 1:
            return None, f"{criterion}: conflicting values {', '.join(values)}"
        if "." in values[0]:
            return None, f"{criterion}: expected a whole number 1-5, got {values[0]}"
        score, reason = _score_value(criterion, int(values[0]))
        if score is None:
            return None, reason
        scores[criterion] = score
    return scores, ""


# ---- asking ----


async def consult_judge(
    model: ChatModel,
    messages: list[Message],
    read: Callable[[str], tuple[T | None, str]],
    corrective: Callable[[str], str],
    *,
    retries: int = 2,
) -> tuple[T | None, str | None, list[ModelCallRecord], int]:
    """Ask `model` at temperature 0 until `read` accepts a reply, at most 1 + `retries` calls.

    After a refused reply the conversation goes on with that reply and a user turn
    `corrective(reason)`. Returns (value, None, calls, attempts) or (None, last reason, calls,
    attempts); calls carry `purpose="judge"`.
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries: expected an integer >= 0, got {retries!r}")
    conversation = list(messages)
    calls: list[ModelCallRecord] = []
    reason = "no reply"
    for _ in range(retries + 1):
        completion = await model.complete(conversation, JUDGE_PARAMS)
        calls.append(ModelCallRecord.from_completion(completion, purpose="judge"))
        value, reason = read(completion.text)
        if value is not None:
            return value, None, calls, len(calls)
        conversation += [
            Message(role="assistant", content=completion.text),
            Message(role="user", content=corrective(reason)),
        ]
    return None, f"{reason} (after {len(calls)} attempts)", calls, len(calls)


def render_judge_messages(item: JudgeItem) -> list[Message]:
    """The judge request for one item: the rubric as system turn, the step as user turn."""
    bag = "\n".join(prompts.BAG_LINE.substitute(name=n) for n in item.bag) or prompts.NOTHING
    history = (
        "\n".join(
            prompts.HISTORY_LINE.substitute(
                step=h.get("step", "?"),
                action=h.get("action", ""),
                response=" ".join(str(h.get("response", "")).split()),
            )
            for h in item.history[-HISTORY_SHOWN:]
        )
        or prompts.NOTHING
    )
    user = prompts.JUDGE_USER.substitute(
        objective=item.objective.strip() or prompts.NOTHING,
        scene_context=item.scene_context.strip() or prompts.NOTHING,
        bag=bag,
        history=history,
        thought=item.thought.strip() or prompts.NO_THOUGHT,
        action=item.action.strip(),
        response=item.response.strip() or prompts.NOTHING,
    )
    return [
        Message(role="system", content=prompts.JUDGE_SYSTEM),
        Message(role="user", content=user),
    ]


async def judge_step(model: ChatModel, item: JudgeItem, *, retries: int = 2) -> JudgeVerdict:
    """Score one Thought-Action step on the three criteria (never raises on a bad reply)."""
    scores, reason, calls, attempts = await consult_judge(
        model,
        render_judge_messages(item),
        read_scores,
        lambda why: prompts.CORRECTIVE.substitute(reason=why),
        retries=retries,
    )
    return JudgeVerdict(scores=scores, missing_reason=reason, calls=calls, attempts=attempts)


# ---- building items from records ----

_SCENE_START = "You are in the scene"
_BAG_LINE = re.compile(r"^<applicable tool>\s*(.+?):", re.MULTILINE)
_STEP_HEADER = re.compile(r"^\[Step (\d+)\]\s*$")


def judge_item_from_step(step: StepRecord, objective: str) -> JudgeItem:
    """The JudgeItem of an escape step record.

    Reads `step.info`: `scene_description`, the bag before the step (`bag_before`, else `bag`;
    names or `{name, desc}` objects), `history` (`{step, action, response}`, the steps before
    this one) and the response (`response`, else `last.response`). What `info` lacks is parsed
    from the rendered observations (Prompt 2, `observation.render_observation`): scene, bag and
    history from the text the agent read, the response from this step's entry in the history of
    the feedback (the step's feedback verbatim as a last resort). `objective` falls back to the
    observation's `YOUR OBJECTIVE:` line when empty.
    """
    info = step.info
    text = step.observation
    scene = info.get("scene_description") or _scene_from_text(text)
    bag_key = "bag_before" if "bag_before" in info else "bag" if "bag" in info else None
    if bag_key is not None:
        bag = [b["name"] if isinstance(b, Mapping) else str(b) for b in info[bag_key]]
    else:
        bag = _BAG_LINE.findall(text)
    history = info["history"] if "history" in info else _history_from_text(text)
    if not objective:
        match = re.search(r"^YOUR OBJECTIVE:\s*(.*)$", text, re.MULTILINE)
        objective = match.group(1).strip() if match else ""
    return JudgeItem(
        objective=objective,
        scene_context=scene,
        bag=tuple(bag),
        history=tuple(history),
        thought=step.thought,
        action=step.action,
        response=_response_of(step),
    )


def _response_of(step: StepRecord) -> str:
    """The environment's answer to the step (see `judge_item_from_step`)."""
    info = step.info
    if info.get("response") is not None:
        return str(info["response"])
    last = info.get("last")
    if isinstance(last, Mapping) and last.get("response") is not None:
        return str(last["response"])
    entries = _history_from_text(step.feedback)
    if entries:
        t = info.get("t")
        mine = [e for e in entries if e["step"] == t] if t is not None else []
        return (mine or entries)[-1]["response"]
    return step.feedback


def _scene_from_text(text: str) -> str:
    """The scene block of a rendered observation: from `You are in the scene` to a blank line."""
    start = text.find(_SCENE_START)
    if start < 0:
        return ""
    end = text.find("\n\n", start)
    return text[start : end if end >= 0 else len(text)].strip()


def _history_from_text(text: str) -> list[dict[str, Any]]:
    """History entries of a rendered `Recent history:` block (thought lines dropped)."""
    head = text.split("YOUR OBJECTIVE:", 1)[0]
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in head.splitlines():
        header = _STEP_HEADER.match(line.strip())
        if header:
            current = {"step": int(header.group(1)), "action": "", "response": ""}
            entries.append(current)
        elif current is not None:
            if line.startswith("Action:") and not current["action"]:
                current["action"] = line.removeprefix("Action:").strip()
            elif line.startswith("Thought:") and not current["action"]:
                continue
            elif current["action"]:
                joined = f"{current['response']} {line.strip()}".strip()
                current["response"] = joined
    return entries
