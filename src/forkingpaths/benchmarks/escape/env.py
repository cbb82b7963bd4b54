"""A MUTATE scenario as an Env: four attempts, forbidden finish actions, budgets (§3.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.escape.actions import action_key
from forkingpaths.benchmarks.escape.engine import (
    BLOCKED,
    MEMO_LIMIT,
    ActionResult,
    EscapeGame,
    View,
)
from forkingpaths.benchmarks.escape.metadata import ScenarioMeta
from forkingpaths.benchmarks.escape.metrics import JUDGED_KINDS
from forkingpaths.benchmarks.escape.observation import WORKING_MEMORY, render_observation
from forkingpaths.core.env import Env, Observation, Step

DEFAULT_ATTEMPTS = 4
"""Attempts per scenario (§3.3)."""
DEFAULT_MAX_STEPS = 50
"""Step budget of one attempt. The paper does not state it. 50 covers the Avg Step figures of
Table 1 (24.6-36.3); Table 2 reports up to 52.7 (EscapeAgent), which a 50-step budget cannot
produce if Avg Step is the mean per attempt, so the paper's budget was likely larger or its Avg
Step counted differently: set `-b max_steps=N` to match another budget."""
HISTORY_ACTION_CHARS = 200
"""Raw text kept in the history for an action the env could not execute (a model may append
pages of text to an action; the next ten prompts should not carry them)."""
DEFAULT_MEANINGLESS_LIMIT = 20
"""Consecutive meaningless steps that end an attempt (§3.3)."""


@dataclass(frozen=True)
class AttemptEnd:
    """How an attempt that another one follows ended, as of the step that ended it."""

    observation: Observation
    """The attempt's last view (what the step's feedback shows)."""
    terminated: bool
    """The attempt reached `GAME END!`."""
    truncated: bool
    """It stopped at its step budget or after too many meaningless steps."""


class EscapeEnv(Env):
    """A MUTATE scenario played under the paper's protocol (mutate-redna.txt §3.1, §3.3,
    Prompts 2-3).

    ## Description

    One episode is one scenario played `attempts` (4) times; every attempt seeks a different
    gold path, the finish actions of paths already found being forbidden.

    ## Rules

    - Every attempt restarts the game from the scenario's start.
    - A path is discovered when its finish action succeeds with its phase's marker in the
      reward (`CHECKPOINT!` for phase 1 of two-phase scenarios, `GAME END!` for the last
      phase); an attempt credits at most one path per phase, the first one completed in it.
    - The finish actions of the paths discovered in earlier attempts are forbidden: listed in
      the prompt (Prompt 3), and refused with feedback, changing nothing, when they would
      complete their path (the env plays the action on the game and puts the snapshot back when
      it carries the phase marker), so the item one targets can still be examined or worked on
      otherwise.
    - An attempt ends at `GAME END!`, at `max_steps` (50) steps, or after `meaningless_limit`
      (20) consecutive meaningless steps (§3.3: the agent "repeats meaningless actions"). A step
      is meaningless when the action is invalid (unparsable, names nothing present, refused), or
      when it changes nothing in the world (item, tool and scene states, visibility, the bag;
      the agent's position excluded), enters no scene not yet visited in this attempt, returns a
      response already returned in this attempt, and repeats an action already taken since the
      world last changed: no state change and nothing new learned. A first try of an action is
      never meaningless, even when it fails like others before it.
    - The observation shows the last `WORKING_MEMORY` (10) steps of history of the attempt.

    ## Episode end

    The step that ends an attempt other than the last comes back neither terminated nor
    truncated, its observation the first of the next attempt (`data["attempt"]` one higher);
    `attempt_end` then holds the ended attempt's last view and how it ended, which
    `EscapeBenchmark.step_hook` records as that step's feedback and end flags. The step that
    ends the last attempt ends the episode: terminated at `GAME END!`, truncated otherwise, with
    the episode's outcome in `observation.data["outcome"]`: `scenario`, `paths_found` (in order
    of discovery), `paths_total`, `paths_extra` (those of `paths_total` the paper's catalog lacks),
    `escapes` and `attempts` (one `{attempt, paths, checkpoints,
    game_end, stop, steps, meaningless, invalid}` per attempt).

    ## Info

    Every step: `attempt`, `t` (1-based within the attempt), `canonical`, `kind`, `target`,
    `success`, `changed`, `meaningless`, `forbidden`, `checkpoint`, `game_end`, `path` (the path
    completed, or None), `phase`, `response`, `scene`, `bag`; `stop` on the step that ends an
    attempt; for an apply/craft/input that completes no path, what Metric 2's judge reads
    besides the step (`scene_description`, `bag_before`, `history`).

    ## Version History

    - v1 (escape-v1): as above.
    """

    def __init__(
        self,
        game: EscapeGame,
        meta: ScenarioMeta | None,
        *,
        attempts: int = DEFAULT_ATTEMPTS,
        max_steps: int = DEFAULT_MAX_STEPS,
        meaningless_limit: int = DEFAULT_MEANINGLESS_LIMIT,
    ) -> None:
        self.game = game
        self.meta = meta
        self.initial = game.snapshot()
        self.attempts = attempts
        self.max_steps = max_steps
        self.meaningless_limit = meaningless_limit
        self.attempt_end: AttemptEnd | None = None
        """Set by the step that ended an attempt another one follows (None after other steps)."""
        self._keys: dict[str, str | None] = {}
        """Canonical action -> its `action_key` (read at every step)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self.attempt = 0
        self.found: list[str] = []
        """Paths discovered so far, in order."""
        self.forbidden: list[str] = []
        """Finish actions of the paths discovered in earlier attempts."""
        self.attempt_outcomes: list[dict[str, Any]] = []
        self.attempt_end = None
        self._start_attempt()
        return self._observe(None)

    def _start_attempt(self) -> None:
        self.game.restore(self.initial)
        self._forbidden_keys = frozenset(k for k in map(action_key, self.forbidden) if k)
        self.t = 0
        self.history: list[dict[str, Any]] = []
        self.responses: set[str] = set()
        self.visited = {self.game.scene}
        self.meaningless_run = 0
        self.tried: set[str] = set()
        """Canonical actions taken since the world last changed."""
        self.n_meaningless = 0
        self.n_invalid = 0
        self.phase = 1
        self.paths: list[str] = []
        self.checkpoints = 0
        self.stop: str | None = None

    def step(self, action: str) -> Step:
        self.attempt_end = None
        # What the judge reads of the world before the step, kept as the (immutable) view.
        before_view = self.game.view()
        before_history = self.history[-WORKING_MEMORY:]
        fingerprint = self.game.fingerprint()
        result = self._play(action)
        self.t += 1
        moved_new = self.game.scene not in self.visited
        self.visited.add(self.game.scene)
        changed = result.changed or self.game.fingerprint() != fingerprint
        new_response = result.response not in self.responses
        self.responses.add(result.response)
        key = self._key(result.action or "") or action.strip()
        repeated = key in self.tried
        if changed:
            self.tried.clear()
        else:
            self.tried.add(key)
        meaningless = not result.valid or not (changed or moved_new or new_response or not repeated)
        self.meaningless_run = self.meaningless_run + 1 if meaningless else 0
        self.n_meaningless += meaningless
        self.n_invalid += not result.valid
        path = self._credit(result)
        if result.checkpoint:
            self.checkpoints += 1
            self.phase += 1
        shown = result.action if result.valid and result.action else action.strip()
        if len(shown) > HISTORY_ACTION_CHARS:
            shown = shown[:HISTORY_ACTION_CHARS] + "..."
        self.history.append({"step": self.t, "action": shown, "response": result.response})
        if result.game_end:
            self.stop = "goal"
        elif self.t >= self.max_steps:
            self.stop = "budget"
        elif self.meaningless_run >= self.meaningless_limit:
            self.stop = "meaningless"
        info: dict[str, Any] = {
            "valid": result.valid,
            "attempt": self.attempt,
            "t": self.t,
            "canonical": result.action,
            "kind": result.kind,
            "target": result.target,
            "success": result.success,
            "changed": changed,
            "meaningless": meaningless,
            "forbidden": result.forbidden,
            "checkpoint": result.checkpoint,
            "game_end": result.game_end,
            "path": path,
            "phase": self.phase - 1 if result.checkpoint else self.phase,
            "response": result.response,
            "scene": self.game.scene,
            "bag": list(self.game.bag),
        }
        if result.kind in JUDGED_KINDS and path is None and not result.forbidden:
            # What Metric 2's judge reads besides the step itself (App. C.2).
            info.update(_context(before_view, before_history))
        if self.stop is not None:
            info["stop"] = self.stop
        reward = 0.0 if path is None else 1.0
        if self.stop is None:
            return Step(self._observe(result), reward, False, False, info)
        return self._end_attempt(result, reward, info)

    def _end_attempt(self, result: ActionResult, reward: float, info: dict[str, Any]) -> Step:
        """Close the attempt: record its outcome, forbid the finish actions of the paths it
        found, and start the next attempt (or end the episode after the last one)."""
        view = self._observe(result)  # as the attempt saw it, before its paths are forbidden
        outcome = self._attempt_outcome()
        self.attempt_outcomes.append(outcome)
        if self.meta is not None:
            for path_id in outcome["paths"]:
                if path_id not in self.found:
                    self.found.append(path_id)
                    self.forbidden += [p.finish for p in self.meta.paths if p.id == path_id]
        terminated = self.stop == "goal"
        if self.attempt + 1 >= self.attempts:
            last = Observation(view.text, {**view.data, "outcome": self.outcome()})
            return Step(last, reward, terminated, not terminated, info)
        self.attempt_end = AttemptEnd(view, terminated, not terminated)
        self.attempt += 1
        self._start_attempt()
        return Step(self._observe(None), reward, False, False, info)

    def _play(self, action: str) -> ActionResult:
        """One engine step; a forbidden finish action that would complete its path is undone
        and refused (changing nothing)."""
        if not self._forbidden_keys:
            return self.game.step(action)
        snapshot = self.game.snapshot()
        result = self.game.step(action)
        completes = result.success and (result.checkpoint or result.game_end)
        if completes and self._key(result.action or "") in self._forbidden_keys:
            self.game.restore(snapshot)
            return ActionResult(
                result.action, result.kind, result.target, False, False, BLOCKED, forbidden=True
            )
        return result

    def _credit(self, result: ActionResult) -> str | None:
        """The path this step completes, if it is one (first per phase and attempt)."""
        if not (result.success and (result.checkpoint or result.game_end)):
            return None
        if self.meta is None:
            return None
        key = self._key(result.action or "")
        spec = self.meta.path_by_finish_key(key) if key else None
        if spec is None or spec.phase != self.phase:
            return None
        if any(p.startswith(f"P{spec.phase}_") for p in self.paths):
            return None
        self.paths.append(spec.id)
        return spec.id

    def _key(self, action: str) -> str | None:
        """`action_key(action)`, cached: the engine's canonical actions repeat."""
        keys = self._keys
        if action in keys:
            return keys[action]
        if len(keys) >= MEMO_LIMIT:
            keys.clear()
        key = keys[action] = action_key(action)
        return key

    def _observe(self, last: ActionResult | None) -> Observation:
        game = self.game
        view = game.view()
        data: dict[str, Any] = {
            "scenario": game.scenario.id,
            "objective": game.objective,
            "attempt": self.attempt,
            "step": self.t + 1,
            "phase": self.phase,
            "scene": view.scene,
            "scene_description": view.scene_description,
            "possible_actions": view.possible_actions,
            "tools_in_bag": view.tools_in_bag,
            "items": list(view.items),
            "scene_tools": list(view.scene_tools),
            "moves": [{"label": label, "scene": scene} for label, scene in view.moves],
            "valid_scene_names": list(view.valid_scene_names),
            "bag": [{"name": name, "desc": desc} for name, desc in view.bag_tools],
            "forbidden": list(self.forbidden),
            "history": self.history[-WORKING_MEMORY:],
            "last": None
            if last is None
            else {
                "action": self.history[-1]["action"],
                "canonical": last.action,
                "kind": last.kind,
                "target": last.target,
                "valid": last.valid,
                "success": last.success,
                "response": last.response,
                "collected": list(last.collected),
            },
        }
        return Observation(render_observation(data), data)

    def _attempt_outcome(self) -> dict[str, Any]:
        """How the current attempt ended."""
        return {
            "attempt": self.attempt,
            "paths": list(self.paths),
            "checkpoints": self.checkpoints,
            "game_end": self.stop == "goal",
            "stop": self.stop,
            "steps": self.t,
            "meaningless": self.n_meaningless,
            "invalid": self.n_invalid,
        }

    def outcome(self) -> dict[str, Any]:
        """The episode so far: paths found, paths there are, escapes and the ended attempts."""
        return {
            "scenario": self.game.scenario.id,
            "paths_found": list(self.found),
            "paths_total": [p.id for p in self.meta.paths] if self.meta else [],
            "paths_extra": self.meta.extra_ids if self.meta else [],
            "escapes": sum(a["game_end"] for a in self.attempt_outcomes),
            "attempts": list(self.attempt_outcomes),
        }


def _context(view: View, history: list[dict[str, Any]]) -> dict[str, Any]:
    """What Metric 2's judge reads of the world before a step: its view and recent history."""
    return {
        "scene_description": view.scene_description,
        "bag_before": [{"name": n, "desc": d} for n, d in view.bag_tools],
        "history": history,
    }
