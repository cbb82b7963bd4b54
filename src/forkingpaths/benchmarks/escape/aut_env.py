"""The Alternate Uses Test as an env: one object answered `runs` times, each run's uses judged."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.aut_judge import judge_uses
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import InvalidFile, shown
from forkingpaths.core.records import ModelCallRecord

DEFAULT_RUNS = 3
"""Runs per object (App. D.6: three runs per condition)."""

INVALID_USES = "expected a JSON list of at least one use (strings)"
"""`info["error"]` of a run whose action carries no uses."""


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


def dedupe_uses(uses: Sequence[str]) -> list[str]:
    """The uses with whitespace folded, empty ones dropped and repeats (case-insensitive) kept
    once, in their first spelling.

    >>> dedupe_uses(["a  doorstop", "A doorstop", " ", "a bob"])
    ['a doorstop', 'a bob']
    """
    seen: dict[str, str] = {}
    for use in uses:
        clean = " ".join(use.split())
        if clean:
            seen.setdefault(clean.lower(), clean)
    return list(seen.values())


def uses_of_action(action: str) -> list[str] | None:
    """The uses an action carries: a JSON list of at least one non-empty string; None when the
    action is anything else (empty, prose, other JSON)."""
    try:
        value = json.loads(action)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    uses = dedupe_uses(value)
    return uses or None


class AUTEnv(Env):
    """One object of the Alternate Uses Test, answered `runs` times (mutate-redna.txt §5.3,
    Table 4, App. D.6).

    ## Description
    The agent lists unusual uses of a common object (Guilford's test). The paper averages three
    independent runs per condition; here the runs of one object are the steps of one episode,
    so ReDNA's Narrowing call can see the uses of the earlier runs (`memory`), its
    non-interactive analogue of failure memory. With a `judge` role model, every run's uses are
    rated for Originality and Elaboration (1-5) in one call at temperature 0 (`aut_judge`).

    ## Action Space
    The uses as a JSON list of strings; whitespace is folded and repeats within a run
    (case-insensitive) count once. Anything else is invalid (`info["valid"] = False`,
    `info["error"]`) and the run has no uses.

    ## Observation Space
    `text`: the task (`aut_prompts.TASK`), the same for every run. `data`: `object` (name),
    `object_id`, `description`, `run` (0-based, the run about to be answered), `runs`, `memory`
    (the uses of the earlier runs, in order), and `outcome` (`runs`, `uses`) at the end.

    ## Rewards
    Always 0: the judge's ratings are the score (`info["judge"]`).

    ## Step info
    `run`, `object` (id), `uses`; with a judge, `judge` = `{"scores": [{"originality": o,
    "elaboration": e}, ...]}` (one per use, in order; `[]` for a run without uses, no call) or
    `{"missing": reason}` when no reply could be read as ratings after the retries. The judge's
    calls are the step's `calls` (`purpose="judge"`).

    ## Starting State
    Run 0, empty memory.

    ## Episode End
    Terminated after the last run.

    ## Arguments
    `obj`: the object; `runs`: runs per object (default 3, App. D.6); `judge`: the judge role
    model (None: runs are not rated).

    ## Version History
    - v1 (aut-v1): initial version.
    """

    def __init__(
        self, obj: AUTObject, runs: int = DEFAULT_RUNS, judge: ChatModel | None = None
    ) -> None:
        self.obj = obj
        self.runs = runs
        self.judge = judge
        self.run = 0
        self.memory: list[str] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self.run, self.memory = 0, []
        return self._observe()

    async def astep(self, action: str) -> Step:
        uses = uses_of_action(action)
        info: dict[str, Any] = {
            "valid": uses is not None,
            "run": self.run,
            "object": self.obj.id,
            "uses": uses or [],
        }
        if uses is None:
            info["error"] = INVALID_USES
        calls: list[ModelCallRecord] = []
        if self.judge is not None:
            verdict = await judge_uses(self.judge, self.obj.object_line, uses or [])
            info["judge"] = verdict.as_info()
            calls = verdict.calls
        self.memory.extend(uses or [])
        self.run += 1
        return Step(self._observe(), 0.0, self.run >= self.runs, False, info, calls)

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
