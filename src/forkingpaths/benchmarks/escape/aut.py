"""The Alternate Uses Test transfer of ReDNA (§5.3, Table 4, App. D.6): benchmark, env, agents.

One episode is one object; within it the agent answers `runs` times (default 3, App. D.6), each
run one step: the observation is the task, the action the uses as a JSON list. ReDNA's Narrowing
call sees the uses of the earlier runs of its episode, its analogue of failure memory; Base sees
only the task, so its runs are independent. A `judge` role model rates every use for Originality
and Elaboration (1-5), one call per run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any

import yaml

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.judge import consult_judge, scores_from_object
from forkingpaths.core.agent import Agent, Decision
from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, QuickConfig
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError, InvalidFile, ResetNeeded, shown
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, StepRecord
from forkingpaths.models.text import json_values

AUT_CRITERIA = ("originality", "elaboration")
"""What the AUT judge rates (App. D.6)."""

DEFAULT_RUNS = 3
"""Runs per object (App. D.6: three runs per condition)."""

DEFAULT_TEMPERATURE = 0.7
"""Agents' sampling temperature (App. D.6)."""

_THIS = "forkingpaths.benchmarks.escape.aut"
_TEXT_KEYS = ("use", "text", "idea", "description")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\(\d+\))\s+(.+?)\s*$")


@dataclass(frozen=True)
class AUTObject:
    """One object of the test."""

    id: str
    """Instance id."""
    name: str
    """How the prompts name it."""
    description: str
    """One neutral line on what it is."""

    @property
    def object_line(self) -> str:
        return prompts.OBJECT_LINE.substitute(name=self.name, description=self.description)


@cache
def load_aut_objects() -> tuple[AUTObject, ...]:
    """The shipped objects (`data/aut_objects.yaml`), in file order."""
    resource = files("forkingpaths.benchmarks.escape") / "data" / "aut_objects.yaml"
    where = "aut_objects.yaml"
    data = yaml.safe_load(resource.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list):
        raise InvalidFile(f"{where}: expected a mapping with an 'objects' list")
    out: list[AUTObject] = []
    for index, entry in enumerate(data["objects"]):
        fields = ("id", "name", "description")
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(f), str) and entry[f].strip() for f in fields
        ):
            raise InvalidFile(
                f"{where}: objects[{index}]: expected non-empty strings id, name, description; "
                f"got {shown(entry)}"
            )
        out.append(AUTObject(entry["id"], entry["name"], entry["description"]))
    ids = [o.id for o in out]
    if len(set(ids)) != len(ids):
        raise InvalidFile(
            f"{where}: object ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}"
        )
    return tuple(out)


# ---- reading uses ----


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _dedupe(uses: Sequence[str]) -> list[str]:
    seen: dict[str, str] = {}
    for use in uses:
        clean = _normalise(use)
        if clean:
            seen.setdefault(clean.lower(), clean)
    return list(seen.values())


def _text_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        lowered = {str(k).lower(): v for k, v in item.items()}
        for key in _TEXT_KEYS:
            if isinstance(lowered.get(key), str):
                return lowered[key]
    return None


def parse_uses(text: str) -> list[str]:
    """The uses in a model's reply: the first JSON list of strings (or of objects with a
    `use`/`text`/`idea`/`description` string) anywhere in it, else its numbered or bulleted lines;
    whitespace folded, empty and repeated (case-insensitive) uses dropped.

    >>> parse_uses('Here: ["a doorstop", "A  doorstop", "a pendulum"]')
    ['a doorstop', 'a pendulum']
    >>> parse_uses("1. a doorstop\\n2) a pendulum")
    ['a doorstop', 'a pendulum']
    """
    for value in json_values(text):
        if isinstance(value, list) and value:
            texts = [_text_of(item) for item in value]
            if all(t is not None for t in texts):
                return _dedupe([t for t in texts if t is not None])
    return _dedupe([m.group(1) for line in text.splitlines() if (m := _LIST_ITEM.match(line))])


def uses_of_action(action: str) -> list[str] | None:
    """The uses an action carries: a JSON list of at least one non-empty string; None when the
    action is anything else (empty, prose, other JSON)."""
    try:
        value = json.loads(action)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    uses = _dedupe(value)
    return uses or None


# ---- environment ----


class AUTEnv(Env):
    """One object of the Alternate Uses Test, answered `runs` times.

    ## Observation
    `text`: the task (`aut_prompts.TASK`). `data`: `object` (name), `object_id`, `description`,
    `run` (0-based, the run about to be answered), `runs`, `memory` (the uses of the earlier runs,
    in order), and `outcome` at the end.

    ## Action
    The uses as a JSON list of strings. Repeats within a run (case-insensitive) count once.
    Anything else is invalid (`info["valid"] = False`) and the run has no uses.

    ## Episode end
    Terminated after the last run; stepping again raises `ResetNeeded`.
    """

    def __init__(self, obj: AUTObject, runs: int = DEFAULT_RUNS) -> None:
        self.obj = obj
        self.runs = runs
        self.run = 0
        self.memory: list[str] = []
        self._started = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self.run, self.memory, self._started = 0, [], True
        return self._observe()

    def step(self, action: str) -> Step:
        if not self._started or self.run >= self.runs:
            raise ResetNeeded("AUTEnv.step called before reset() or after the last run")
        uses = uses_of_action(action)
        info: dict[str, Any] = {
            "valid": uses is not None,
            "run": self.run,
            "object": self.obj.id,
            "uses": uses or [],
        }
        if uses is None:
            info["error"] = "expected a JSON list of at least one use (strings)"
        self.memory.extend(uses or [])
        self.run += 1
        done = self.run >= self.runs
        return Step(self._observe(), 0.0, done, False, info)

    def _observe(self) -> Observation:
        data: dict[str, Any] = {
            "object": self.obj.name,
            "object_id": self.obj.id,
            "description": self.obj.description,
            "run": self.run,
            "runs": self.runs,
            "memory": list(self.memory),
        }
        if self.run >= self.runs:
            data["outcome"] = {"runs": self.runs, "uses": len(self.memory)}
        return Observation(prompts.TASK.substitute(object_line=self.obj.object_line), data)


# ---- agents ----


def _object_line(observation: Observation) -> str:
    data = observation.data
    return prompts.OBJECT_LINE.substitute(
        name=data.get("object", ""), description=data.get("description", "")
    )


def _listing(items: Sequence[str]) -> str:
    return "\n".join(prompts.LIST_LINE.substitute(text=t) for t in items) or prompts.NOTHING


class _AUTAgent:
    """What both AUT agents share: one model, its sampling parameters, no state of their own."""

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.params = ModelParams(
            temperature=temperature, **({"max_tokens": max_tokens} if max_tokens else {})
        )

    def state(self) -> dict[str, Any]:
        return {}


class AUTBaseAgent(_AUTAgent):
    """Base (App. D.6): one call per run produces all the uses; earlier runs are not shown."""

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget: every run is answered from the task alone."""

    async def act(self, observation: Observation) -> Decision:
        messages = [Message(role="user", content=observation.text)]
        completion = await self.model.complete(messages, self.params)
        uses = parse_uses(completion.text)
        return Decision(
            action=json.dumps(uses),
            thought=_prose_before_answer(completion.text),
            calls=[ModelCallRecord.from_completion(completion, purpose="act")],
        )


class AUTReDNAAgent(_AUTAgent):
    """ReDNA on the AUT (§5.3, App. D.6): a Diverge call conditioned only on the object proposes
    candidate uses; a Narrowing call, given the creativity criterion and the uses of the earlier
    runs of the episode (`observation.data["memory"]`), selects and elaborates them."""

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget: the memory of earlier runs comes with each observation."""

    async def act(self, observation: Observation) -> Decision:
        line = _object_line(observation)
        diverge = await self.model.complete(
            [Message(role="user", content=prompts.DIVERGE.substitute(object_line=line))],
            self.params,
        )
        candidates = parse_uses(diverge.text)
        memory = [str(u) for u in observation.data.get("memory", [])]
        narrow_prompt = prompts.NARROW.substitute(
            object_line=line, candidates=_listing(candidates), memory=_listing(memory)
        )
        narrow = await self.model.complete(
            [Message(role="user", content=narrow_prompt)], self.params
        )
        uses = parse_uses(narrow.text)
        thought = f"Diverge proposed {len(candidates)} candidates: " + (
            "; ".join(candidates) or "none"
        )
        return Decision(
            action=json.dumps(uses),
            thought=thought,
            calls=[
                ModelCallRecord.from_completion(diverge, purpose="diverge"),
                ModelCallRecord.from_completion(narrow, purpose="narrow"),
            ],
        )


def _prose_before_answer(text: str) -> str:
    """A reply's words before its list (a fence or a `[`), as the run's thought."""
    cut = min((i for i in (text.find("```"), text.find("[")) if i >= 0), default=-1)
    return text[:cut].strip() if cut >= 0 else ""


def _temperature(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise ConfigError(f"temperature: got {value!r}; allowed values: a number >= 0")
    return number


def _max_tokens(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_tokens: got {value!r}; allowed values: an integer >= 1")
    return value


def _need_model(name: str, model: ChatModel | None) -> ChatModel:
    if model is None:
        raise ConfigError(
            f"model: agent {name} needs one; got none (e.g. --model scripted/aut-scripted)"
        )
    return model


def make_aut_base(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int | None = None,
) -> AUTBaseAgent:
    """Factory of the `base` agent."""
    return AUTBaseAgent(
        _need_model("base", model),
        temperature=_temperature(temperature),
        max_tokens=_max_tokens(max_tokens),
    )


def make_aut_redna(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int | None = None,
) -> AUTReDNAAgent:
    """Factory of the `redna` agent."""
    return AUTReDNAAgent(
        _need_model("redna", model),
        temperature=_temperature(temperature),
        max_tokens=_max_tokens(max_tokens),
    )


# ---- judge ----


def read_use_scores(text: str, count: int) -> tuple[list[dict[str, int]] | None, str]:
    """(one score object per use, "") or (None, why not), from a JSON list of `count` objects
    each holding originality and elaboration as whole numbers 1-5 (also under a `scores` key).
    Objects carrying `use` numbers 1..count are put in that order; otherwise the list's order is
    the uses' order."""
    for value in json_values(text):
        if isinstance(value, dict):
            nested = [v for v in value.values() if isinstance(v, list)]
            value = nested[0] if len(nested) == 1 else value
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            continue
        if len(value) != count:
            return None, f"expected {count} ratings, got {len(value)}"
        numbers = [v.get("use") for v in value]
        if sorted(n for n in numbers if isinstance(n, int)) == list(range(1, count + 1)):
            value = sorted(value, key=lambda v: v["use"])
        out = []
        for index, item in enumerate(value, start=1):
            scores, reason = scores_from_object(item, AUT_CRITERIA)
            if scores is None:
                return None, f"use {index}: {reason}"
            out.append(scores)
        return out, ""
    return None, "no JSON list of rating objects"


@dataclass(frozen=True)
class UseVerdict:
    """The judge's ratings of one run's uses, or why there are none."""

    scores: list[dict[str, int]] | None
    """One `{originality, elaboration}` per use, in the uses' order; None when unreadable."""
    missing_reason: str | None
    """Why `scores` is None (None when rated)."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every judge call made (`purpose="judge"`), retries included."""
    attempts: int = 0
    """Number of judge calls made."""

    def as_info(self) -> dict[str, Any]:
        """The form stored in `StepRecord.info["judge"]`."""
        if self.scores is not None:
            return {"scores": [dict(s) for s in self.scores]}
        return {"missing": self.missing_reason or "no rating"}


async def judge_uses(
    model: ChatModel, obj: AUTObject, uses: Sequence[str], *, retries: int = 2
) -> UseVerdict:
    """Rate one run's uses in one call at temperature 0; a reply that is not a rating is retried
    with a corrective turn, then recorded as missing. No uses: no call, an empty rating."""
    if not uses:
        return UseVerdict(scores=[], missing_reason=None)
    user = prompts.JUDGE_USER.substitute(
        object_line=obj.object_line,
        uses="\n".join(
            prompts.USE_LINE.substitute(number=i, text=u) for i, u in enumerate(uses, start=1)
        ),
        count=len(uses),
    )
    messages = [
        Message(role="system", content=prompts.JUDGE_SYSTEM),
        Message(role="user", content=user),
    ]
    scores, reason, calls, attempts = await consult_judge(
        model,
        messages,
        lambda text: read_use_scores(text, len(uses)),
        lambda why: prompts.JUDGE_CORRECTIVE.substitute(reason=why, count=len(uses)),
        retries=retries,
    )
    return UseVerdict(scores=scores, missing_reason=reason, calls=calls, attempts=attempts)


# ---- benchmark ----


class AUTBenchmark(Benchmark):
    """The Alternate Uses Test transfer study of the MUTATE paper (mutate-redna.txt §5.3, Table
    4, App. D.6).

    ## Description
    Twenty common objects (`data/aut_objects.yaml`, our choice; the paper lists none). One
    episode per object holds `runs` runs (default 3). Agents: `base` (one call per run) and
    `redna` (Diverge on the object alone, then Narrowing with the creativity criterion and the
    uses of earlier runs), both at temperature 0.7 by default (App. D.6).

    ## Scoring
    With a `judge` role model, every use is rated for Originality and Elaboration (1-5), one
    call per run at temperature 0; a reply that is not a rating is retried twice and then
    recorded as missing (`step.info["judge"] = {"missing": reason}`). Scores are stored as
    `step.info["judge"] = {"scores": [{"originality": o, "elaboration": e}, ...]}`, one per use.
    Episode metrics: fluency (uses per run), originality and elaboration means over the rated
    uses (None when nothing was rated; `judged` tells whether a judge ran). The aggregate follows
    Table 4 and App. D.5: per run index, the mean over every object's uses; then the mean and
    sample standard deviation of those run means.

    ## Arguments
    `runs`: runs per object (integer >= 1, default 3).

    ## Version History
    - v1: initial version.
    """

    id = "aut-v1"
    name = "aut"
    description = "Alternate Uses Test transfer of ReDNA (MUTATE §5.3): originality, elaboration"
    splits = ("objects",)
    default_split = "objects"
    agents = MappingProxyType(
        {
            "base": AgentSpec(
                f"{_THIS}:make_aut_base",
                needs_model=True,
                description="one call lists all uses (App. D.6)",
                default_options=MappingProxyType({"temperature": DEFAULT_TEMPERATURE}),
            ),
            "redna": AgentSpec(
                f"{_THIS}:make_aut_redna",
                needs_model=True,
                description="Diverge on the object, then Narrow with the criterion and earlier "
                "runs' uses (App. D.6)",
                default_options=MappingProxyType({"temperature": DEFAULT_TEMPERATURE}),
            ),
        }
    )
    estimate_policy = "aut-scripted"
    model_roles = MappingProxyType(
        {"judge": "rates every use for originality and elaboration, 1-5 (App. D.6)"}
    )
    quick = (
        QuickConfig(
            split="objects",
            agent="redna",
            model="scripted/aut-scripted",
            instances=("brick", "paperclip"),
            roles=MappingProxyType({"judge": "scripted/aut-judge"}),
        ),
    )
    headline_metrics = ("originality", "elaboration", "fluency")

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - {"runs"})
        if unknown:
            raise ConfigError(f"unknown aut option(s) {unknown}; allowed: runs")
        runs = options.get("runs", DEFAULT_RUNS)
        if isinstance(runs, str) and runs.strip().isdigit():
            runs = int(runs)
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ConfigError(f"runs: got {runs!r}; allowed values: an integer >= 1 (default 3)")
        super().__init__(**options)
        self.runs = runs

    def instances(self, split: str) -> list[Instance]:
        if split != "objects":
            return self.select_instances(split, None)  # raises NameNotFound listing the splits
        return [
            Instance(id=o.id, split=split, params={"object": o.name, "description": o.description})
            for o in load_aut_objects()
        ]

    def aut_object(self, instance: Instance) -> AUTObject:
        return AUTObject(instance.id, instance.params["object"], instance.params["description"])

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        return AUTEnv(self.aut_object(instance), self.runs)

    def max_steps(self, instance: Instance) -> int:
        return self.runs

    async def run_episode(
        self,
        instance: Instance,
        agent: Agent,
        record: EpisodeRecord,
        roles: Mapping[str, ChatModel] = MappingProxyType({}),
    ) -> EpisodeRecord:
        """The runs of one object, each judged right after it when a `judge` role is given."""
        obj = self.aut_object(instance)
        judge = roles.get("judge")
        env = self.make_env(instance)
        observation = env.reset(seed=record.seed)
        record.initial_observation = observation.text
        record.initial_info = dict(observation.data)
        for index in range(self.runs):
            decision = await agent.act(observation)
            result = env.step(decision.action)
            info = {k: v for k, v in result.info.items() if k != "valid"}
            step = StepRecord(
                index=index,
                observation=observation.text,
                thought=decision.thought,
                action=decision.action,
                feedback=result.observation.text,
                valid=bool(result.info["valid"]),
                terminated=result.terminated,
                truncated=result.truncated,
                info=info,
                calls=list(decision.calls),
            )
            record.steps.append(step)
            if judge is not None:
                verdict = await judge_uses(judge, obj, step.info["uses"])
                step.calls.extend(verdict.calls)
                step.info["judge"] = verdict.as_info()
            observation = result.observation
            if result.done:
                break
        record.outcome = {**record.outcome, **observation.data.get("outcome", {})}
        return record

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        runs = [_run_scores(step) for step in record.steps]
        rated = [s for run in runs for s in run["scores"]]
        judged = any(run["judged"] for run in runs)
        return {
            "object": record.instance_id,
            "runs": len(runs),
            "fluency": _mean([run["fluency"] for run in runs]),
            **{c: _mean([s[c] for s in rated]) for c in AUT_CRITERIA},
            "judged": judged,
            "rated_uses": len(rated),
            "judge_missing": sum(run["missing"] for run in runs),
            "by_run": [
                {
                    "run": run["run"],
                    "fluency": run["fluency"],
                    **{c: _mean([s[c] for s in run["scores"]]) for c in AUT_CRITERIA},
                }
                for run in runs
            ],
        }

    def aggregate(self, records: list[EpisodeRecord]) -> dict[str, Any]:
        """Table 4 with App. D.5's spread: per run index, fluency is the mean number of uses per
        object and each criterion the mean over every rated use of that run; the headline values
        are the means of these run values and `<metric>_std` their sample standard deviations
        (None below two runs). Errored episodes are left out and counted."""
        ok = [r for r in records if r.status == "ok"]
        by_run: dict[int, list[dict[str, Any]]] = {}
        for record in ok:
            for step in record.steps:
                run = _run_scores(step)
                by_run.setdefault(run["run"], []).append(run)
        table = []
        for index in sorted(by_run):
            runs = by_run[index]
            rated = [s for run in runs for s in run["scores"]]
            table.append(
                {
                    "run": index,
                    "objects": len(runs),
                    "fluency": _mean([run["fluency"] for run in runs]),
                    **{c: _mean([s[c] for s in rated]) for c in AUT_CRITERIA},
                    "rated_uses": len(rated),
                }
            )
        out: dict[str, Any] = {}
        for metric in ("originality", "elaboration", "fluency"):
            values = [row[metric] for row in table if row[metric] is not None]
            out[metric] = _mean(values)
            out[f"{metric}_std"] = _sample_std(values)
        runs_all = [run for runs in by_run.values() for run in runs]
        out.update(
            {
                "objects": len(ok),
                "errored": len(records) - len(ok),
                "runs": len(table),
                "judged": any(run["judged"] for run in runs_all),
                "rated_uses": sum(len(run["scores"]) for run in runs_all),
                "judge_missing": sum(run["missing"] for run in runs_all),
                "by_run": table,
            }
        )
        return out


def _run_scores(step: StepRecord) -> dict[str, Any]:
    """One run's uses and ratings, read from its step record."""
    uses = step.info.get("uses", [])
    judge = step.info.get("judge")
    scores: list[dict[str, int]] = []
    if isinstance(judge, dict) and isinstance(judge.get("scores"), list):
        scores = [s for s in judge["scores"] if isinstance(s, dict)]
    return {
        "run": int(step.info.get("run", step.index)),
        "fluency": len(uses),
        "scores": scores,
        "judged": judge is not None,
        "missing": isinstance(judge, dict) and "missing" in judge,
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _sample_std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
