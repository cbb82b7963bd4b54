"""ReDNA (§4, Table 11, Tables 13-14): target-centred failure memory and the Diverge-then-Narrowing
module on top of the Base policy, and its R-only ablation (§5.2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.benchmarks.escape.actions import fold_name, parse_action
from forkingpaths.benchmarks.escape.agents import redna_prompts as prompts
from forkingpaths.benchmarks.escape.agents.attempts import AttemptAgent
from forkingpaths.benchmarks.escape.agents.parsing import bag_lines, parse_reply
from forkingpaths.benchmarks.escape.agents.react import ReActAgent
from forkingpaths.benchmarks.escape.observation import render_diversity_constraint
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord

DEFAULT_TAU = 2
"""Failure threshold tau; the paper does not print its value (Table 14 names the trigger only)."""
MEMORY_KINDS: tuple[str, ...] = ("click", "apply", "input")
"""Failed actions Table 11 (line 20) stores in the memory M[I] under their own target item."""
SUBSTANTIVE_KINDS: tuple[str, ...] = ("apply", "craft", "input")
"""Failed actions that count towards c[I] (Table 11, line 26; Table 14 "Tracked actions")."""
DN_ACTION_KINDS: tuple[str, ...] = ("apply", "input", "craft")
"""What the DN module's final action must be (Table 14 "DN final actions")."""


@dataclass
class FailureEntry:
    """One distinct failed (action, response) pair on a target, with how often it recurred."""

    action: str
    response: str
    count: int = 1


@dataclass
class TargetMemory:
    """Everything Reflect knows about one target: M[I], c[I] and bookkeeping."""

    name: str
    """The target as the env named it."""
    entries: list[FailureEntry] = field(default_factory=list)
    """M[I]: failed click/apply/input pairs on I and the failed crafts credited to I, identical
    pairs merged, first occurrence first."""
    substantive: int = 0
    """c[I]: failed apply/craft/input actions on this target."""
    failures: int = 0
    """All failed actions on this target (clicks and credited crafts included)."""
    last_substantive: int = 0
    """When c[I] last grew (a counter over the attempt), to break ties towards recency."""
    armed: int = 0
    """Substantive failures since DN last worked on this target: DN fires when it reaches tau."""


class FailureMemory:
    """The Reflect module's target-centred memory of one attempt (§4.1, Table 13 stage 1)."""

    def __init__(self) -> None:
        self.targets: dict[str, TargetMemory] = {}
        self._clock = 0

    def record(self, kind: str, target: str, action: str, response: str) -> None:
        """Store one failed action under the item `target` (Table 11, lines 19-28; a craft
        arrives here already credited to an item, see `ReDNAAgent`)."""
        memory = self.targets.setdefault(fold_name(target), TargetMemory(target))
        memory.failures += 1
        for entry in memory.entries:
            if entry.action == action and entry.response == response:
                entry.count += 1
                break
        else:
            memory.entries.append(FailureEntry(action, response))
        if kind in SUBSTANTIVE_KINDS:
            self._clock += 1
            memory.substantive += 1
            memory.armed += 1
            memory.last_substantive = self._clock

    def get(self, target: str) -> TargetMemory | None:
        return self.targets.get(fold_name(target))

    def stalled(self, tau: int, names: set[str]) -> TargetMemory | None:
        """The target DN should work on: tau substantive failures since DN last worked on it and
        folded name in `names` (the items of the current scene); highest c wins, ties go to the
        one whose counter grew last."""
        ready = [m for key, m in self.targets.items() if m.armed >= tau and key in names]
        return max(ready, key=lambda m: (m.substantive, m.last_substantive), default=None)


class ReDNAAgent(AttemptAgent):
    """ReDNA: Reflect memory + Diverge-then-Narrowing over the Base ReAct policy (Table 11).

    Reflect (every step, from `Observation.data["last"]`): when the previous action failed
    (`success` false) and was a click, apply or input on an item the agent saw at that step
    (garbage names make no entries), (canonical action, response) is stored under that item in
    M[I], identical pairs raising a repetition count; apply and input also increment the
    substantive counter c[I] (click does not: it is inspection).

    Failed crafts: Table 11 (line 20) stores only click/apply/input in M and keys everything by
    the action's target item, which a craft does not have (it names two bag tools); §4.1 and
    Figure 3 on the other hand show `craft(long stick, plastic bag)` filed under the *beehive*,
    the item the agent was stuck on, and §4.1/Table 11 count crafts in c[I]. We follow §4.1: a
    failed craft (a valid one: both tools in the bag) is credited to the item the agent is
    currently stalled on, which is the DN target I* when DN issued the craft, otherwise the
    most recent item that received a failure in this attempt; it is stored in M[I] with its
    response (so Narrowing sees it) and counted in c[I]. Before any item has failed, a failed
    craft is ignored. Never is a bag tool a memory key or a DN target.

    DN (when some item of the current scene, `data["items"]`, has tau substantive failures since
    DN last worked on it): system = Prompt 10, user = Prompt 11, whose DIVERGENT PHASE INPUTS
    hold only the target, the scene description and the bag, and whose CONVERGENT PHASE INPUTS
    hold the objective, M[I*] (actions, responses, counts), the possible actions and the
    diversity constraint. I* is the item with the highest c (ties: the one that failed most
    recently). Table 14 restricts DN's final action to apply, input or craft: when the reply's
    action is no parsable apply/input/craft call, one corrective user turn follows the reply
    (the action must be apply(), input() or craft() on listed names); when the second reply is
    still none, the Base policy decides this step instead (all calls are recorded: "dn", "dn",
    "act") and `counts["dn_off_grammar"]` grows. `counts` also holds "dn_steps" (DN
    invocations) and "dn_retries" (corrective turns), over the agent's life, not reset between
    attempts.

    After DN fires (the paper leaves this open; §4 says DN "temporarily replaces the policy"): DN
    takes that one step, then I* needs tau more substantive failures before DN takes over for it
    again. c[I*] itself keeps counting (the prompt shows the whole count) and M[I*] keeps every
    entry. Otherwise the Base policy (a `ReActAgent`) decides; DN steps enter the same history,
    with their thought, so the Base prompt shows them. (Keeping DN in charge while c >= tau made
    it take 80-96 of ~150 steps per scenario in scripted runs: a takeover, not an intervention.)

    `divergent_narrowing=False` is the R-only ablation (§5.2): the same memory, no DN module; the
    Base user turn gets the memory appended as a "failures by target" block instead (tau then
    plays no part). Memory is per attempt: `start_attempt` clears it.
    """

    def __init__(
        self, model: ChatModel, *, tau: int = DEFAULT_TAU, divergent_narrowing: bool = True
    ) -> None:
        self.model = model
        self.tau = tau
        self.divergent_narrowing = divergent_narrowing
        self.base = ReActAgent(model)
        self.memory = FailureMemory()
        self.counts: Counter[str] = Counter()
        self._seen: set[str] | None = None
        """Folded names the agent could see at the previous step (None at an attempt's start)."""
        self._stalled_on: str | None = None
        """The item that received the most recent failure in this attempt."""
        self._dn_target: str | None = None
        """The DN target I* when DN issued the previous action (None otherwise)."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        self.base.start_attempt(instance, seed)
        self.memory = FailureMemory()
        self._seen = None
        self._stalled_on = None
        self._dn_target = None

    def reflect(self, last: Mapping[str, Any] | None) -> None:
        """Update the failure memory with the previous step (Table 13, stage 1)."""
        dn_target, self._dn_target = self._dn_target, None
        if not isinstance(last, Mapping) or last.get("success"):
            return
        kind, target = last.get("kind"), last.get("target")
        if kind not in (*MEMORY_KINDS, *SUBSTANTIVE_KINDS) or not isinstance(target, str):
            return
        if not target.strip() or (self._seen is not None and fold_name(target) not in self._seen):
            return
        # The canonical text merges spellings of one action; the raw text if the env gave none.
        action = str(last.get("canonical") or last.get("action") or "")
        response = str(last.get("response", ""))
        if kind == "craft":
            item = dn_target or self._stalled_on
            if item is not None:
                self.memory.record(kind, item, action, response)
            return
        self.memory.record(kind, target, action, response)
        self._stalled_on = target

    async def act(self, observation: Observation) -> Decision:
        self.follow_attempt(observation)
        data = observation.data
        self.reflect(data.get("last"))
        self._seen = in_view(data)
        if self.divergent_narrowing:
            items = {fold_name(str(n)) for n in data.get("items", []) if str(n).strip()}
            stalled = self.memory.stalled(self.tau, items)
            if stalled is not None:
                return await self.diverge_narrow(observation, stalled)
        return await self.base.decide(observation, self.failures_block())

    async def diverge_narrow(self, observation: Observation, target: TargetMemory) -> Decision:
        """The DN module's step: Prompt 10 and Prompt 11 (Table 13, stages 3-4), one corrective
        turn when the action is no apply/input/craft, the Base policy when it still is none."""
        messages = [
            Message(role="system", content=prompts.render_dn_system()),
            Message(role="user", content=self.dn_prompt(observation.data, target)),
        ]
        self.counts["dn_steps"] += 1
        target.armed = 0
        completion = await self.model.complete(messages, self.base.params)
        calls = [ModelCallRecord.from_completion(completion, purpose="dn")]
        reply = parse_reply(completion.text)
        if not is_dn_action(reply.action):
            self.counts["dn_retries"] += 1
            messages += [
                Message(role="assistant", content=completion.text),
                Message(role="user", content=prompts.render_dn_retry(reply.action)),
            ]
            completion = await self.model.complete(messages, self.base.params)
            calls.append(ModelCallRecord.from_completion(completion, purpose="dn"))
            reply = parse_reply(completion.text)
        if not is_dn_action(reply.action):
            self.counts["dn_off_grammar"] += 1
            decision = await self.base.decide(observation, self.failures_block())
            decision.calls = calls + decision.calls
            return decision
        self._dn_target = target.name
        self.base.remember(observation, reply.thought)
        return Decision(action=reply.action, thought=reply.thought, calls=calls)

    def dn_prompt(self, data: Mapping[str, Any], target: TargetMemory) -> str:
        """Prompt 11 for `target` on the observation `data`."""
        failures = "\n".join(
            prompts.render_failure_entry(i, e.action, e.response, e.count)
            for i, e in enumerate(target.entries, start=1)
        )
        return prompts.render_dn_user(
            step=data.get("step", "?"),
            scene=str(data.get("scene", "")),
            target=target.name,
            failure_count=target.failures,
            substantive_count=target.substantive,
            scene_description=str(data.get("scene_description", "")),
            tools_in_bag=bag_lines(str(data.get("tools_in_bag", ""))) or "(none)",
            objective=str(data.get("objective", "")),
            failures=failures,
            possible_actions=str(data.get("possible_actions", "")),
            diversity=render_diversity_constraint(list(data.get("forbidden", []))),
        )

    def failures_block(self) -> str:
        """R-only's "failures by target" block ("" for full ReDNA or an empty memory)."""
        if self.divergent_narrowing or not self.memory.targets:
            return ""
        lines = []
        for target in self.memory.targets.values():
            lines.append(
                prompts.render_target_header(target.name, target.failures, target.substantive)
            )
            lines += [
                prompts.render_target_entry(e.action, e.response, e.count) for e in target.entries
            ]
        return prompts.render_failures_by_target("\n".join(lines))

    def state(self) -> dict[str, Any]:
        return {}


def is_dn_action(action: str) -> bool:
    """Whether `action` is an apply, input or craft call (Table 14)."""
    call = parse_action(action)
    return call is not None and call.kind in DN_ACTION_KINDS


def in_view(data: Mapping[str, Any]) -> set[str]:
    """Folded names of the items, tools lying in the scene and bag tools of an observation."""
    names = [*data.get("items", []), *data.get("scene_tools", [])]
    names += [t.get("name", "") for t in data.get("bag", []) if isinstance(t, Mapping)]
    return {fold_name(str(n)) for n in names if str(n).strip()}


def resolve_tau(tau: Any) -> int:
    """`tau` as an int >= 1 (digit strings from a command line accepted), else ConfigError."""
    if isinstance(tau, str) and tau.strip().isdigit():
        tau = int(tau)
    if isinstance(tau, bool) or not isinstance(tau, int) or tau < 1:
        raise ConfigError(f"tau: got {shown(tau)}; allowed values: an integer >= 1")
    return tau


def make_redna(
    benchmark: Benchmark | None = None, model: ChatModel | None = None, tau: int = DEFAULT_TAU
) -> ReDNAAgent:
    """Factory of the `redna` agent (§4, App. D.4); `tau` is the DN trigger threshold."""
    tau = resolve_tau(tau)
    return ReDNAAgent(require_model(model, "redna"), tau=tau)


def make_reflect_only(
    benchmark: Benchmark | None = None, model: ChatModel | None = None, tau: int = DEFAULT_TAU
) -> ReDNAAgent:
    """Factory of the `r-only` ablation (§5.2): Reflect memory shown to the Base policy, no DN.
    `tau` is accepted (and validated) so both ablation arms take the same options; it has no
    effect here."""
    tau = resolve_tau(tau)
    return ReDNAAgent(require_model(model, "r-only"), tau=tau, divergent_narrowing=False)
