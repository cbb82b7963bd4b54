"""Tests of the MUTATE agents: reply parsing, Base/Self-Refine prompts, ReDNA's Reflect memory and
DN module, R-only, EscapeAgent's task list and forethought queue, and the scripted explorer."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from tests.doubles import FakeChatModel, PolicyModel

from forkingpaths.benchmarks.escape.actions import find_calls, parse_action
from forkingpaths.benchmarks.escape.agents import (
    escapeagent_prompts,
    react_prompts,
    redna_prompts,
)
from forkingpaths.benchmarks.escape.agents.attempts import AttemptAgent
from forkingpaths.benchmarks.escape.agents.escapeagent import (
    EscapeAgent,
    TaskListOp,
    make_escapeagent,
    parse_candidates,
    parse_task_op,
)
from forkingpaths.benchmarks.escape.agents.parsing import parse_reply
from forkingpaths.benchmarks.escape.agents.react import ReActAgent, make_base, make_self_refine
from forkingpaths.benchmarks.escape.agents.redna import (
    ReDNAAgent,
    make_redna,
    make_reflect_only,
)
from forkingpaths.benchmarks.escape.agents.scripted import EscapeExplorerPolicy, prompt_kind
from forkingpaths.benchmarks.escape.observation import render_observation
from forkingpaths.core.agent import Agent, Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError

INSTANCE = Instance(id="study", split="test")
OBJECTIVE = "Open the wall safe and leave the house."
SCENE_TEXT = "You are in the scene 'study'. A cramped study lit by one bulb."


def make_data(
    step: int = 1,
    *,
    items: tuple[str, ...] = ("wall safe", "desk"),
    scene_tools: tuple[str, ...] = ("pipe head",),
    bag: tuple[str, ...] = (),
    history: list[dict[str, Any]] | None = None,
    last: dict[str, Any] | None = None,
    forbidden: tuple[str, ...] = (),
    scene: str = "study",
    moves: tuple[tuple[str, str], ...] = (("Go to the hallway", "hallway"),),
) -> dict[str, Any]:
    """An `Observation.data` as the env builds it (docs/dev/escape-engine.md §3)."""
    possible = [f"<interactable item> {name}" for name in (*items, *scene_tools)]
    possible += [f"<interactable scene> {label}: It leads to {dest}" for label, dest in moves]
    tools = [f"<applicable tool> {name}: A heavy {name}." for name in bag]
    return {
        "scenario": "house",
        "objective": OBJECTIVE,
        "attempt": 0,
        "step": step,
        "scene": scene,
        "scene_description": SCENE_TEXT + "\n- On the wall, there is wall safe: A steel safe.",
        "possible_actions": "Possible actions:\n" + "\n".join(possible),
        "tools_in_bag": "Tools in bag:\n" + ("\n".join(tools) if tools else "(empty)"),
        "items": list(items),
        "scene_tools": list(scene_tools),
        "moves": [{"label": label, "scene": dest} for label, dest in moves],
        "valid_scene_names": [dest for _, dest in moves],
        "bag": [{"name": name, "desc": f"A heavy {name}."} for name in bag],
        "forbidden": list(forbidden),
        "history": history or [],
        "last": last,
    }


def observe(data: dict[str, Any]) -> Observation:
    return Observation(text=render_observation(data), data=data)


def failed(action: str, kind: str, target: str, response: str) -> dict[str, Any]:
    """A `last` entry for a failed step."""
    return {
        "action": action,
        "kind": kind,
        "target": target,
        "valid": True,
        "success": False,
        "response": response,
        "collected": None,
    }


class Routed:
    """A scripted policy from a function of the messages (for PolicyModel)."""

    def __init__(self, answer: Callable[[list[Message]], str]) -> None:
        self.answer = answer
        self.seen: list[list[Message]] = []

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        self.seen.append(list(messages))
        return self.answer(messages)


# ---- reply parsing ----


@pytest.mark.parametrize(
    ("reply", "thought", "action"),
    [
        ("Thought: the safe needs force\nAction: apply(pipe head, wall safe)", "the safe needs "
         "force", "apply(pipe head, wall safe)"),
        ("**Thought:** look first\n**Action:** `click(desk)`", "look first", "click(desk)"),
        ("- Thought: a\n- Action: ``move(hallway)``", "a", "move(hallway)"),
        ("Thought: two lines\nof thought\nACTION: click(desk)", "two lines\nof thought",
         "click(desk)"),
        ("Action: click(desk)\nThought: no, better\nAction: click(wall safe)", "no, better",
         "click(wall safe)"),
        ("Thought: next line\nAction:\n`input(2518, wall safe)`", "next line",
         "input(2518, wall safe)"),
        ("Thought: one line Action: click(desk)", "one line", "click(desk)"),
    ],
)  # fmt: skip
def test_parse_reply_takes_last_action_line_and_thought(reply: str, thought: str, action: str):
    parsed = parse_reply(reply)
    assert (parsed.thought, parsed.action) == (thought, action)


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("I would click the desk.\nclick(desk)", "I would click the desk."),
        ("\n\n  apply(a, b)  \nmore", "apply(a, b)"),
        ("", ""),
        ("   \n ", ""),
        ("Thought: only thinking", "Thought: only thinking"),
    ],
)
def test_parse_reply_without_action_line_passes_first_line(reply: str, action: str):
    assert parse_reply(reply).action == action


@pytest.mark.parametrize(
    ("reply", "thought", "action"),
    [
        ("Action:", "", ""),
        ("Action: (", "", "("),
        ("Thought:\nAction: ```", "", ""),
        ("*", "*", "*"),
        ("Action: click(", "", "click("),
        ("\x00)", "\x00)", "\x00)"),
    ],
)
def test_parse_reply_of_broken_replies(reply: str, thought: str, action: str):
    parsed = parse_reply(reply)
    assert (parsed.thought, parsed.action) == (thought, action)


def test_find_calls_reads_quotes_apostrophes_and_input_commas():
    # An unquoted comma in an input string makes three arguments: the engine refuses the call,
    # so it is no candidate either.
    calls = find_calls("click(driver's licence) then input('12,34', safe) and input(1,2, pad)")
    assert [(c.kind, c.args) for c in calls] == [
        ("click", ("driver's licence",)),
        ("input", ("12,34", "safe")),
    ]
    assert parse_action("I try apply(a, b)") is None
    assert parse_action("Apply( Pipe  Head , Safe )").key == "apply(pipe head, safe)"


# ---- Base and Self-Refine ----


async def test_base_sends_prompt_1_and_prompt_2_in_one_call():
    model = FakeChatModel(["Thought: look around\nAction: click(desk)"])
    agent = make_base(model=model)
    agent.reset(INSTANCE, 0)
    data = make_data(3, forbidden=("apply(pipe head, wall safe)",))
    decision = await agent.act(observe(data))
    assert decision.action == "click(desk)"
    assert decision.thought == "look around"
    assert [c.purpose for c in decision.calls] == ["act"]
    assert len(model.requests) == 1
    (system, user), params = model.requests[0]
    assert system.role == "system" and system.content == react_prompts.render_system()
    assert "craft(a, b) and craft(b, a) are different actions" in system.content
    assert system.content.rstrip().endswith("Thought: ...\nAction: ...")
    assert user.role == "user"
    assert f"YOUR OBJECTIVE: {OBJECTIVE}" in user.content
    assert "[Step 3]" in user.content
    assert "DIVERSITY CONSTRAINT" in user.content
    assert "* apply(pipe head, wall safe)" in user.content
    assert user.content.rstrip().endswith("Your Response:")
    assert params is not None and not params.model_fields_set  # the run's params decide


async def test_base_without_forbidden_actions_has_no_diversity_constraint():
    model = FakeChatModel(["Action: click(desk)"])
    agent = make_base(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data()))
    assert "DIVERSITY CONSTRAINT" not in model.requests[0][0][1].content


async def test_base_history_shows_own_thoughts_for_the_last_10_steps():
    model = FakeChatModel([f"Thought: idea-{n}\nAction: click(desk)" for n in range(1, 13)])
    agent = make_base(model=model)
    agent.reset(INSTANCE, 0)
    history: list[dict[str, Any]] = []
    for step in range(1, 14):
        await agent.act(observe(make_data(step, history=list(history))))
        history.append({"step": step, "action": "click(desk)", "response": f"resp-{step}"})
    user = model.requests[-1][0][1].content
    shown = [n for n in range(1, 13) if f"Thought: idea-{n}\n" in user]
    assert shown == list(range(3, 13))
    assert "[Step 2]" not in user and "resp-2\n" not in user
    assert "[Step 12]\nThought: idea-12\nAction: click(desk)\nresp-12" in user
    assert len(model.requests) == 13


async def test_reset_forgets_thoughts_between_attempts():
    model = FakeChatModel(["Thought: secret plan\nAction: click(desk)"])
    agent = make_base(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1)))
    agent.reset(INSTANCE, 0)
    history = [{"step": 1, "action": "click(desk)", "response": "A desk."}]
    await agent.act(observe(make_data(2, history=history)))
    assert "secret plan" not in model.requests[-1][0][1].content


async def test_self_refine_appends_prompt_9_in_one_call():
    model = FakeChatModel(["Thought: checked\nAction: click(desk)"])
    agent = make_self_refine(model=model)
    agent.reset(INSTANCE, 0)
    decision = await agent.act(observe(make_data(2)))
    assert decision.action == "click(desk)"
    assert len(model.requests) == 1
    user = model.requests[0][0][1].content
    suffix = react_prompts.render_self_refine()
    assert suffix in user
    assert user.index("YOUR OBJECTIVE") < user.index(suffix)
    assert user.rstrip().endswith("Your Response:")
    assert user.count("Your Response:") == 1
    assert model.requests[0][0][0].content == react_prompts.render_system()


async def test_base_prompt_has_no_self_refine_suffix():
    model = FakeChatModel(["Action: click(desk)"])
    agent = make_base(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data()))
    assert "FEASIBILITY SELF-CHECK" not in model.requests[0][0][1].content


async def test_unparsable_reply_goes_to_the_env_as_its_first_line():
    agent = make_base(model=FakeChatModel(["I am not sure.\nMaybe the desk?"]))
    agent.reset(INSTANCE, 0)
    decision = await agent.act(observe(make_data()))
    assert decision.action == "I am not sure."


# ---- ReDNA: Reflect memory ----


def reflected(agent: ReDNAAgent, *lasts: dict[str, Any]) -> None:
    """Feed `lasts` through Reflect as successive steps (the target is in view each time)."""
    agent._seen = {"wall safe", "desk", "pipe head", "rope"}
    for last in lasts:
        agent.reflect(last)


SAFE_FAIL = "The bolts do not move."


def test_reflect_merges_identical_pairs_with_a_count():
    agent = ReDNAAgent(FakeChatModel(["x"]))
    apply_fail = failed("apply(pipe head, wall safe)", "apply", "wall safe", SAFE_FAIL)
    reflected(agent, apply_fail, apply_fail, failed("input(1, wall safe)", "input", "wall safe",
                                                    "Wrong code."))  # fmt: skip
    memory = agent.memory.get("Wall Safe")
    assert memory is not None
    assert [(e.action, e.response, e.count) for e in memory.entries] == [
        ("apply(pipe head, wall safe)", SAFE_FAIL, 2),
        ("input(1, wall safe)", "Wrong code.", 1),
    ]
    assert memory.substantive == 3
    assert memory.failures == 3


def test_reflect_records_clicks_but_does_not_count_them():
    agent = ReDNAAgent(FakeChatModel(["x"]))
    click_fail = failed("click(wall safe)", "click", "wall safe", "A steel safe.")
    reflected(agent, click_fail, click_fail)
    safe = agent.memory.get("wall safe")
    assert safe is not None
    assert [(e.action, e.count) for e in safe.entries] == [("click(wall safe)", 2)]
    assert (safe.substantive, safe.failures) == (0, 2)


CRAFT_FAIL = failed("craft(pipe head, rope)", "craft", "pipe head", "They do not fit.")


def test_failed_craft_is_credited_to_the_item_that_failed_last():
    # §4.1 / Figure 3: craft(long stick, plastic bag) is filed under the beehive.
    agent = ReDNAAgent(FakeChatModel(["x"]))
    desk_fail = failed("apply(pipe head, desk)", "apply", "desk", "The desk creaks.")
    reflected(agent, APPLY_FAIL, desk_fail, CRAFT_FAIL, CRAFT_FAIL)
    desk = agent.memory.get("desk")
    assert desk is not None
    assert [(e.action, e.response, e.count) for e in desk.entries] == [
        ("apply(pipe head, desk)", "The desk creaks.", 1),
        ("craft(pipe head, rope)", "They do not fit.", 2),
    ]
    assert (desk.substantive, desk.failures) == (3, 3)
    assert agent.memory.get("wall safe").substantive == 1
    assert agent.memory.get("pipe head") is None  # a bag tool is never a memory key


def test_failed_craft_before_any_item_failure_is_ignored():
    agent = ReDNAAgent(FakeChatModel(["x"]))
    reflected(agent, CRAFT_FAIL, {**APPLY_FAIL, "success": True})
    assert agent.memory.targets == {}


async def test_failed_craft_issued_by_dn_is_credited_to_the_dn_target():
    model = FakeChatModel(["Thought: t\nAction: craft(pipe head, rope)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    desk_fail = failed("click(desk)", "click", "desk", "A plain desk.")
    bag = ("pipe head", "rope")
    decisions = await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL], bag=bag)
    assert decisions[-1].calls[0].purpose == "dn"
    await agent.act(observe(make_data(4, last=CRAFT_FAIL, bag=bag)))
    safe = agent.memory.get("wall safe")
    assert safe is not None and safe.substantive == 3
    assert ("craft(pipe head, rope)", "They do not fit.", 1) in [
        (e.action, e.response, e.count) for e in safe.entries
    ]
    # A later base-policy craft goes to the item that failed last, not to the old DN target.
    await agent.act(observe(make_data(5, last=desk_fail, bag=bag)))
    await agent.act(observe(make_data(6, last=CRAFT_FAIL, bag=bag)))
    assert agent.memory.get("desk").substantive == 1
    assert agent.memory.get("wall safe").substantive == 3


async def test_dn_craft_goes_to_dn_target_even_when_another_item_failed_last():
    model = FakeChatModel(["Thought: t\nAction: craft(pipe head, rope)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    desk_click = failed("click(desk)", "click", "desk", "A plain desk.")
    moved = {**failed("move(study)", "move", "", "You move to study."), "success": True}
    bag = ("pipe head", "rope")
    # The safe reaches c = 2 while out of view, the desk fails, then the safe is back in view.
    steps = [
        (None, ("wall safe", "desk")),
        (APPLY_FAIL, ("wall safe", "desk")),
        (APPLY_FAIL, ("desk",)),
        (desk_click, ("desk",)),
        (moved, ("wall safe", "desk")),
    ]
    for step, (last, items) in enumerate(steps, start=1):
        decision = await agent.act(observe(make_data(step, last=last, items=items, bag=bag)))
    assert decision.calls[0].purpose == "dn"
    assert "Feedback target item: wall safe" in model.requests[-1][0][1].content
    await agent.act(observe(make_data(6, last=CRAFT_FAIL, bag=bag)))
    assert agent.memory.get("wall safe").substantive == 3
    assert agent.memory.get("desk").substantive == 0


async def test_dn_prompt_shows_credited_crafts_in_the_failed_attempts():
    model = FakeChatModel(["Thought: t\nAction: input(7, wall safe)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    await run_steps(agent, [None, APPLY_FAIL, CRAFT_FAIL], bag=("pipe head", "rope"))
    (system, user), _ = model.requests[-1]
    assert system.content == redna_prompts.render_dn_system()
    _, _, convergent = user.content.partition(redna_prompts.CONVERGENT_INPUTS)
    assert "2. craft(pipe head, rope) (failed 1 time)\n   Response: They do not fit." in convergent


async def test_dn_targets_only_items_of_the_current_scene():
    model = FakeChatModel(["Thought: t\nAction: click(desk)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    # The safe has c = 2 but is not among the items of the scene (here only a lying tool).
    await run_steps(agent, [None, APPLY_FAIL])
    data = make_data(3, last=APPLY_FAIL, items=("desk",), scene_tools=("wall safe",))
    decision = await agent.act(observe(data))
    assert decision.calls[0].purpose == "act"


def test_reflect_ignores_successes_moves_and_unseen_targets():
    agent = ReDNAAgent(FakeChatModel(["x"]))
    ok = {**failed("apply(pipe head, wall safe)", "apply", "wall safe", "Done."), "success": True}
    reflected(
        agent,
        ok,
        failed("move(cellar)", "move", "cellar", "No such scene."),
        failed("apply(pipe head, ghost)", "apply", "ghost", "Unknown item."),
        None,  # type: ignore[arg-type]
    )
    assert agent.memory.targets == {}


async def run_steps(agent: Agent, lasts: list[dict[str, Any] | None], **kw: Any) -> list[Any]:
    decisions = []
    for step, last in enumerate(lasts, start=1):
        decisions.append(await agent.act(observe(make_data(step, last=last, **kw))))
    return decisions


APPLY_FAIL = failed("apply(pipe head, wall safe)", "apply", "wall safe", SAFE_FAIL)
INPUT_FAIL = failed("input(1234, wall safe)", "input", "wall safe", "The keypad beeps twice.")
CLICK_FAIL = failed("click(wall safe)", "click", "wall safe", "A steel safe with a keypad.")


async def test_dn_triggers_exactly_when_substantive_count_reaches_tau():
    model = FakeChatModel(["Thought: t\nAction: apply(pipe head, wall safe)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(
        agent, [None, CLICK_FAIL, CLICK_FAIL, APPLY_FAIL, INPUT_FAIL, APPLY_FAIL], bag=("rope",)
    )
    purposes = [[c.purpose for c in d.calls] for d in decisions]
    # DN steps in once c reaches tau, then needs tau more substantive failures.
    assert purposes == [["act"], ["act"], ["act"], ["act"], ["dn"], ["act"]]
    assert len(model.requests) == 6  # one call per step, DN steps included
    again = await agent.act(observe(make_data(7, last=APPLY_FAIL, bag=("rope",))))
    assert again.calls[0].purpose == "dn"


async def test_tau_option_moves_the_trigger():
    model = FakeChatModel(["Thought: t\nAction: apply(pipe head, wall safe)"])
    agent = make_redna(model=model, tau=3)
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(agent, [None, APPLY_FAIL, INPUT_FAIL, APPLY_FAIL])
    assert [d.calls[0].purpose for d in decisions] == ["act", "act", "act", "dn"]


async def test_dn_prompt_separates_divergent_and_convergent_inputs():
    model = FakeChatModel(["Thought: t\nAction: craft(pipe head, rope)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    forbidden = ("apply(crowbar, wall safe)",)
    decisions = await run_steps(
        agent, [None, APPLY_FAIL, APPLY_FAIL], bag=("pipe head", "rope"), forbidden=forbidden
    )
    assert decisions[-1].action == "craft(pipe head, rope)"
    (system, user), _ = model.requests[-1]
    assert system.content == redna_prompts.render_dn_system()
    head, _, rest = user.content.partition(redna_prompts.DIVERGENT_INPUTS)
    divergent, _, convergent = rest.partition(redna_prompts.CONVERGENT_INPUTS)
    assert "Feedback target item: wall safe" in head
    assert "Failures on this target other than click: 2" in head
    assert "Target item:\nwall safe" in divergent
    assert SCENE_TEXT in divergent
    assert "Tools in Bag:\n<applicable tool> pipe head: A heavy pipe head." in divergent
    assert "<applicable tool> rope" in divergent
    for withheld in (OBJECTIVE, SAFE_FAIL, "apply(pipe head, wall safe)", "crowbar"):
        assert withheld not in divergent
        assert withheld not in head
    assert f"Objective:\n{OBJECTIVE}" in convergent
    assert "1. apply(pipe head, wall safe) (failed 2 times)" in convergent
    assert f"Response: {SAFE_FAIL}" in convergent
    assert "<interactable item> desk" in convergent
    assert "* apply(crowbar, wall safe)" in convergent
    assert user.content.rstrip().endswith("Thought: ...\nAction: ...")


async def test_dn_off_grammar_reply_gets_one_corrective_turn():
    model = FakeChatModel(
        [
            "Thought: a\nAction: x",
            "Thought: a\nAction: x",
            "Thought: look again\nAction: click(wall safe)",
            "Thought: fixed\nAction: input(7, wall safe)",
        ]
    )
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL])
    dn = decisions[-1]
    assert dn.action == "input(7, wall safe)"
    assert dn.thought == "fixed"
    assert [c.purpose for c in dn.calls] == ["dn", "dn"]
    retry_messages, _ = model.requests[-1]
    assert [m.role for m in retry_messages] == ["system", "user", "assistant", "user"]
    assert retry_messages[2].content == "Thought: look again\nAction: click(wall safe)"
    correction = retry_messages[3].content
    assert correction.startswith(redna_prompts.DN_RETRY_MARKER)
    assert "click(wall safe)" in correction
    assert all(f"{kind}()" in correction for kind in ("apply", "input", "craft"))
    assert agent.counts == {"dn_steps": 1, "dn_retries": 1}


async def test_dn_falls_back_to_base_policy_when_still_off_grammar():
    model = FakeChatModel(
        [
            "Thought: a\nAction: x",
            "Thought: a\nAction: x",
            "Thought: look again\nAction: click(wall safe)",
            "Thought: still\nAction: move(hallway)",
            "Thought: base\nAction: click(desk)",
        ]
    )
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL])
    step = decisions[-1]
    assert step.action == "click(desk)"
    assert step.thought == "base"
    assert [c.purpose for c in step.calls] == ["dn", "dn", "act"]
    assert model.requests[-1][0][0].content == react_prompts.render_system()
    assert agent.counts == {"dn_steps": 1, "dn_retries": 1, "dn_off_grammar": 1}
    # A craft right after a fallback step is not credited to the DN target by DN's authority,
    # but the safe is still the item that failed last.
    await agent.act(observe(make_data(4, last=CRAFT_FAIL, bag=("pipe head", "rope"))))
    assert agent.memory.get("wall safe").substantive == 3


async def test_dn_picks_highest_counter_then_most_recent():
    model = FakeChatModel(["Thought: t\nAction: input(7, desk)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    desk_fail = failed("apply(pipe head, desk)", "apply", "desk", "The desk creaks.")
    await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL, desk_fail, desk_fail])
    user = model.requests[-1][0][1].content
    assert "Feedback target item: desk" in user  # tie 2-2: the desk failed last
    await agent.act(observe(make_data(6, last=APPLY_FAIL)))  # safe: armed again only at 1
    assert model.requests[-1][0][0].content != redna_prompts.render_dn_system()
    await agent.act(observe(make_data(7, last=APPLY_FAIL)))
    assert "Feedback target item: wall safe" in model.requests[-1][0][1].content  # c = 4


async def test_dn_stays_on_target_while_in_view_and_stops_when_it_leaves():
    model = FakeChatModel(["Thought: t\nAction: apply(pipe head, wall safe)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL])
    solved = {**APPLY_FAIL, "success": True}
    decision = await agent.act(observe(make_data(4, last=solved)))
    assert decision.calls[0].purpose == "act"  # DN took one step, then hands back
    assert agent.memory.get("wall safe").substantive == 2  # c keeps counting
    await agent.act(observe(make_data(5, last=APPLY_FAIL, items=("desk",))))
    gone = await agent.act(observe(make_data(6, last=APPLY_FAIL, items=("desk",))))
    assert gone.calls[0].purpose == "act"  # armed again, but the safe is out of view


async def test_dn_step_thought_enters_the_base_history():
    model = FakeChatModel(["Thought: dn idea\nAction: apply(pipe head, wall safe)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL])
    history = [
        {"step": 1, "action": "apply(pipe head, wall safe)", "response": SAFE_FAIL},
        {"step": 2, "action": "apply(pipe head, wall safe)", "response": SAFE_FAIL},
        {"step": 3, "action": "apply(pipe head, wall safe)", "response": SAFE_FAIL},
    ]
    ok = {**APPLY_FAIL, "success": True}
    await agent.act(observe(make_data(4, last=ok, history=history, items=("desk",))))
    assert "[Step 3]\nThought: dn idea\n" in model.requests[-1][0][1].content


async def test_reset_clears_redna_memory_between_attempts():
    model = FakeChatModel(["Thought: t\nAction: apply(pipe head, wall safe)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL])
    assert agent.memory.targets
    agent.reset(INSTANCE, 0)
    assert agent.memory.targets == {}
    decisions = await run_steps(agent, [None, APPLY_FAIL])
    assert [d.calls[0].purpose for d in decisions] == ["act", "act"]


async def test_reflect_only_never_calls_dn_and_shows_failures_by_target():
    model = FakeChatModel(["Thought: t\nAction: apply(pipe head, wall safe)"])
    agent = make_reflect_only(model=model)
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL, INPUT_FAIL, CLICK_FAIL])
    assert all(c.purpose == "act" for d in decisions for c in d.calls)
    assert len(model.requests) == 5
    assert "FAILURES BY TARGET" not in model.requests[0][0][1].content
    (system, last_user), _ = model.requests[-1]
    assert system.content == react_prompts.render_system()
    user = last_user.content
    assert "FAILURES BY TARGET" in user
    assert "- wall safe: 4 failed attempts (3 with apply/craft/input)" in user
    assert f"* apply(pipe head, wall safe) (x2) -> {SAFE_FAIL}" in user
    assert user.index("YOUR OBJECTIVE") < user.index("FAILURES BY TARGET")
    assert user.rstrip().endswith("Your Response:")
    assert agent.counts == {}


async def test_full_redna_does_not_show_the_failures_block_to_the_base_policy():
    model = FakeChatModel(["Thought: t\nAction: click(desk)"])
    agent = make_redna(model=model)
    agent.reset(INSTANCE, 0)
    await run_steps(agent, [None, APPLY_FAIL])
    assert "FAILURES BY TARGET" not in model.requests[-1][0][1].content


@pytest.mark.parametrize("tau", [0, -1, "two", True, 1.5, None])
@pytest.mark.parametrize("factory", [make_redna, make_reflect_only])
def test_tau_is_validated(factory: Callable[..., Any], tau: Any):
    with pytest.raises(ConfigError) as excinfo:
        factory(model=FakeChatModel(["x"]), tau=tau)
    message = str(excinfo.value)
    assert message.startswith("tau: got ")
    assert "an integer >= 1" in message


def test_tau_accepts_digit_strings():
    assert make_redna(model=FakeChatModel(["x"]), tau="3").tau == 3
    assert make_redna(model=FakeChatModel(["x"])).tau == 2


# ---- EscapeAgent ----


@pytest.mark.parametrize(
    ("reply", "op"),
    [
        ("new(open the safe, needs a code, maybe 4 digits)",
         TaskListOp("new", name="open the safe", feedback="needs a code, maybe 4 digits")),
        ("I think: update(2, rusty; try oil)", TaskListOp("update", 2, feedback="rusty; try oil")),
        ("update(task #1, more)", TaskListOp("update", 1, feedback="more")),
        ("delete(3)", TaskListOp("delete", 3)),
        ("none()", TaskListOp("none")),
        ("I see no reason to change anything.", TaskListOp("none")),
        ("update(two, x)", TaskListOp("none")),
        ("update(1)", TaskListOp("none")),
        ("new()", TaskListOp("none")),
        ("new(a, b", TaskListOp("none")),
    ],
)  # fmt: skip
def test_parse_task_op(reply: str, op: TaskListOp):
    assert parse_task_op(reply) == op


def test_task_list_operations():
    agent = EscapeAgent(FakeChatModel(["x"]))
    data = make_data()
    last = failed("apply(pipe head, wall safe)", "apply", "wall safe", SAFE_FAIL)
    task = agent.apply_op(parse_task_op("new(open safe, needs force)"), data, last)
    assert task is not None and (task.name, task.target, task.notes) == (
        "open safe", "wall safe", "needs force")  # fmt: skip
    agent.apply_op(parse_task_op("new(search the desk, look in drawers)"), data, None)
    assert agent.tasks[1].target == "desk"  # named in the task, no item target in the action
    agent.apply_op(parse_task_op("update(1, needs force; pipe slipped)"), data)
    assert agent.tasks[0].notes == "needs force; pipe slipped"
    agent.apply_op(parse_task_op("update(9, out of range)"), data)
    agent.apply_op(parse_task_op("delete(0)"), data)
    agent.apply_op(parse_task_op("gibberish"), data)
    assert len(agent.tasks) == 2
    agent.apply_op(parse_task_op("delete(1)"), data)
    assert [t.name for t in agent.tasks] == ["search the desk"]
    assert agent.render_tasks() == (
        "1. [Task] Name: search the desk, Target Item: desk\n   Notes: look in drawers"
    )


def test_parse_candidates_keeps_order_and_justifications():
    reply = (
        "Thought: the pipe is heavy\nActions:\n1. craft(pipe head, rope) | a weighted line\n"
        "2. apply(pipe head, wall safe) - task 1: heavy enough\nmove(hallway)\nclick(desk)\n"
    )
    candidates = parse_candidates(reply, ("craft", "apply"))
    assert [(c.call.text, c.justification) for c in candidates] == [
        ("craft(pipe head, rope)", "a weighted line"),
        ("apply(pipe head, wall safe)", "task 1: heavy enough"),
    ]
    bare = parse_candidates("Thought: just this\nActions:\nclick(desk)", ("click",))
    assert bare[0].justification == "just this"
    assert parse_candidates("Thought: nothing\nActions: none", ("click",)) == []


def escape_model(reflection: str, tool: str, task: str, act: str) -> tuple[PolicyModel, Routed]:
    def answer(messages: list[Message]) -> str:
        kind = prompt_kind(messages)
        return {"reflection": reflection, "tool-forethought": tool, "task-forethought": task}.get(
            kind, act
        )

    policy = Routed(answer)
    return PolicyModel(policy), policy


COLLECTED = {
    "action": "click(pipe head)",
    "kind": "click",
    "target": "pipe head",
    "valid": True,
    "success": True,
    "response": "You pick up the pipe head.",
    "collected": "pipe head",
}


async def test_escapeagent_forethought_on_new_tool_fills_queue_executed_in_order():
    tool_reply = (
        "Thought: heavy\nActions:\n"
        "apply(pipe head, wall safe) | task 1: force the door\n"
        "craft(pipe head, lantern) | lantern not in bag\n"
        "craft(pipe head, rope) | weighted rope\n"
    )
    model, policy = escape_model("none()", tool_reply, "Actions: none", "Action: click(desk)")
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    first = await agent.act(observe(make_data(1)))
    assert [c.purpose for c in first.calls] == ["act"]
    bag = ("pipe head", "rope")
    second = await agent.act(observe(make_data(2, last=COLLECTED, bag=bag, scene_tools=())))
    assert [c.purpose for c in second.calls] == ["forethought"]  # no reflection on a pick-up
    assert second.action == "apply(pipe head, wall safe)"
    assert second.thought == "task 1: force the door"
    tool_prompt = policy.seen[-1]
    assert tool_prompt[0].content == escapeagent_prompts.render_tool_forethought_system()
    assert "<new tool>: pipe head\nDescription: A heavy pipe head." in tool_prompt[1].content
    assert "<applicable tool> rope: A heavy rope." in tool_prompt[1].content
    no_news = failed("apply(pipe head, wall safe)", "apply", "wall safe", SAFE_FAIL)
    third = await agent.act(observe(make_data(3, last=no_news, bag=bag, scene_tools=())))
    assert third.action == "craft(pipe head, rope)"  # the lantern craft was skipped: not in bag
    assert [c.purpose for c in third.calls] == ["reflect"]
    history = [{"step": 3, "action": "craft(pipe head, rope)", "response": "They do not fit."}]
    data = make_data(4, last=no_news, bag=bag, scene_tools=(), history=history)
    fourth = await agent.act(observe(data))
    assert [c.purpose for c in fourth.calls] == ["reflect", "act"]
    user = policy.seen[-1][1].content
    assert escapeagent_prompts.render_free_exploration() in user
    assert user.count("Your Response:") == 1
    assert "[Step 3]\nThought: weighted rope\nAction: craft(pipe head, rope)" in user


async def test_escapeagent_new_task_triggers_task_forethought():
    task_reply = "Thought: t\nActions:\nclick(wall safe) | look\ninput(2518, wall safe) | note"
    model, policy = escape_model(
        "new(open the safe, needs a code)", "Actions: none", task_reply, "Action: click(desk)"
    )
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1)))
    history = [{"step": 1, "action": "click(wall safe)", "response": "Note says 2518."}]
    decision = await agent.act(observe(make_data(2, last=CLICK_FAIL, history=history)))
    assert [c.purpose for c in decision.calls] == ["reflect", "forethought"]
    # click(wall safe) was the failed step itself and nothing changed since: skipped.
    assert decision.action == "input(2518, wall safe)"
    assert decision.thought == "note"
    assert [(t.name, t.target) for t in agent.tasks] == [("open the safe", "wall safe")]
    reflection, forethought = policy.seen[-2], policy.seen[-1]
    assert reflection[0].content == escapeagent_prompts.render_reflection_system()
    assert "Your action: click(wall safe)" in reflection[1].content
    assert "Response from the environment:\nA steel safe with a keypad." in reflection[1].content
    assert "[Task] Name: open the safe, Target Item: wall safe" in forethought[1].content
    assert "- Note says 2518." in forethought[1].content  # memory pad
    agent.reset(INSTANCE, 0)
    assert agent.tasks == [] and not agent.queue


async def test_escapeagent_skips_forbidden_and_invalid_candidates():
    tool_reply = (
        "Actions:\napply(pipe head, wall safe) | forbidden finish\napply(pipe head, ghost) | no"
    )
    model, _ = escape_model("none()", tool_reply, "Actions: none", "Action: click(desk)")
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    data = make_data(
        2,
        last=COLLECTED,
        bag=("pipe head",),
        scene_tools=(),
        forbidden=("apply(pipe head, wall safe)",),
    )
    decision = await agent.act(observe(data))
    assert decision.action == "click(desk)"
    assert [c.purpose for c in decision.calls] == ["forethought", "act"]
    assert not agent.queue  # ghost is known nowhere: dropped


def sequenced(
    reflections: list[str], tool: str, task: str, acts: list[str]
) -> tuple[PolicyModel, Routed]:
    """A model answering reflections and act prompts from lists, in turn (the last repeats)."""
    counters = {"reflection": 0, "act": 0}

    def answer(messages: list[Message]) -> str:
        kind = prompt_kind(messages)
        if kind in ("tool-forethought", "task-forethought"):
            return tool if kind == "tool-forethought" else task
        replies = reflections if kind == "reflection" else acts
        key = "reflection" if kind == "reflection" else "act"
        reply = replies[min(counters[key], len(replies) - 1)]
        counters[key] += 1
        return reply

    policy = Routed(answer)
    return PolicyModel(policy), policy


MOVED = {
    "action": "move(hallway)",
    "kind": "move",
    "target": None,
    "valid": True,
    "success": True,
    "response": "You move to hallway.",
    "collected": [],
}


@pytest.mark.parametrize(
    ("last", "reflects"),
    [
        (CLICK_FAIL, True),
        (APPLY_FAIL, True),
        (INPUT_FAIL, True),
        (failed("craft(pipe head, rope)", "craft", "pipe head", "They do not fit."), True),
        ({**APPLY_FAIL, "success": True, "response": "It opens."}, True),
        (MOVED, False),
        (COLLECTED, False),
        ({**failed("apply(rope, ghost)", "apply", "", "No ghost here."), "valid": False}, False),
    ],
)
async def test_escapeagent_reflects_only_after_item_interactions_and_crafts(
    last: dict[str, Any], reflects: bool
):
    model, _ = escape_model("none()", "Actions: none", "Actions: none", "Action: click(desk)")
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1, bag=("pipe head", "rope"))))
    decision = await agent.act(observe(make_data(2, last=last, bag=("pipe head", "rope"))))
    assert ("reflect" in [c.purpose for c in decision.calls]) is reflects


async def test_escapeagent_new_task_for_a_tracked_target_updates_it():
    model, _ = sequenced(
        ["new(open the safe, needs force)", "new(crack the safe, the pipe slipped)"],
        "Actions: none",
        "Thought: t\nActions: none",
        ["Action: click(desk)"],
    )
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1)))
    first = await agent.act(observe(make_data(2, last=CLICK_FAIL)))
    assert [c.purpose for c in first.calls] == ["reflect", "forethought", "act"]
    second = await agent.act(observe(make_data(3, last=APPLY_FAIL)))
    assert [c.purpose for c in second.calls] == ["reflect", "act"]  # no second forethought
    assert [(t.name, t.target, t.notes) for t in agent.tasks] == [
        ("open the safe", "wall safe", "needs force; the pipe slipped")
    ]
    assert agent.tasks[0].scene == "study"


async def test_escapeagent_drops_candidates_tried_since_the_last_world_change():
    task_reply = "Thought: t\nActions:\napply(pipe head, wall safe) | force\nclick(desk) | look"
    model, _ = sequenced(
        ["new(open the safe, needs force)", "none()"],
        "Actions: none",
        task_reply,
        ["Action: click(desk)"],
    )
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    bag = ("pipe head",)

    async def step(n: int, last: dict[str, Any] | None) -> Decision:
        return await agent.act(observe(make_data(n, last=last, bag=bag, scene_tools=())))

    await step(1, None)
    # The apply that just failed is skipped; the click is tried.
    second = await step(2, APPLY_FAIL)
    assert [c.purpose for c in second.calls] == ["reflect", "forethought"]
    assert second.action == "click(desk)"
    desk_fail = failed("click(desk)", "click", "desk", "A plain desk.")
    await step(3, desk_fail)
    assert agent.executed == {"apply(pipe head, wall safe)", "click(desk)"}
    # A successful move changes only the position: both stay skipped.
    agent._enqueue(parse_candidates(task_reply, ("apply", "click")))
    fourth = await step(4, MOVED)
    assert [c.purpose for c in fourth.calls] == ["act"]
    assert not agent.queue
    # A successful step on an item changes the world: the same candidates are fair game again.
    opened = {**CLICK_FAIL, "success": True, "response": "A panel slides open."}
    agent._enqueue(parse_candidates(task_reply, ("apply", "click")))
    fifth = await step(5, opened)
    assert agent.executed == set()
    assert fifth.action == "apply(pipe head, wall safe)"


async def test_escapeagent_foresees_a_tool_changed_by_a_successful_craft():
    tool_reply = "Thought: t\nActions:\napply(pipe head, wall safe) | task 1: heavier now"
    model, policy = escape_model("none()", tool_reply, "Actions: none", "Action: click(desk)")
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1, bag=("pipe head", "rope"), scene_tools=())))
    crafted = {
        "action": "craft(pipe head, rope)",
        "canonical": "craft(pipe head, rope)",
        "kind": "craft",
        "target": "pipe head",
        "valid": True,
        "success": True,
        "response": "You craft the pipe head with the rope. Now: A pipe head on a rope.",
        "collected": [],
    }
    data = make_data(2, last=crafted, bag=("pipe head",), scene_tools=())
    data["bag"] = [{"name": "pipe head", "desc": "A pipe head on a rope."}]
    decision = await agent.act(observe(data))
    assert [c.purpose for c in decision.calls] == ["reflect", "forethought"]
    assert decision.action == "apply(pipe head, wall safe)"
    user = policy.seen[-1][1].content
    assert user.startswith(escapeagent_prompts.TOOL_FORETHOUGHT_MARKER)
    assert "<new tool>: pipe head\nDescription: A pipe head on a rope." in user


HALLWAY = (("Back to the study", "study"), ("Go to the cellar", "cellar"))
CELLAR = (("Up to the hallway", "hallway"),)


async def test_escapeagent_walks_to_the_scene_of_a_queued_candidate():
    tool_reply = "Thought: t\nActions:\napply(crowbar, wall safe) | task 1: pry the door"
    model, _ = sequenced(
        ["new(open the safe, needs force)"],
        tool_reply,
        "Thought: t\nActions: none",
        [
            "Action: click(wall safe)",
            "Action: move(hallway)",
            "Action: move(cellar)",
            "Action: click(crowbar)",
        ],
    )
    agent = make_escapeagent(model=model)
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1, scene_tools=())))
    # The safe fails in the study and becomes task 1; the agent walks to the cellar.
    step2 = await agent.act(observe(make_data(2, last=CLICK_FAIL, scene_tools=())))
    assert step2.action == "move(hallway)"
    assert agent.tasks[0].scene == "study"
    moved = {**MOVED, "action": "move(cellar)", "response": "You move to cellar."}
    cellar_items = ("barrel",)
    hallway = make_data(3, last=MOVED, items=("coat stand",), scene_tools=(), scene="hallway",
                        moves=HALLWAY)  # fmt: skip
    assert (await agent.act(observe(hallway))).action == "move(cellar)"
    cellar = make_data(4, last=moved, items=cellar_items, scene_tools=("crowbar",), scene="cellar",
                       moves=CELLAR)  # fmt: skip
    assert (await agent.act(observe(cellar))).action == "click(crowbar)"
    got = {**COLLECTED, "action": "click(crowbar)", "target": "crowbar", "collected": ["crowbar"]}
    cellar = make_data(5, last=got, items=cellar_items, scene_tools=(), bag=("crowbar",),
                       scene="cellar", moves=CELLAR)  # fmt: skip
    first_hop = await agent.act(observe(cellar))
    assert [c.purpose for c in first_hop.calls] == ["forethought"]
    assert first_hop.action == "move(hallway)"  # the first move of cellar -> hallway -> study
    assert "study" in first_hop.thought and "apply(crowbar, wall safe)" in first_hop.thought
    assert len(agent.queue) == 1  # the candidate waits at the front
    hallway = make_data(6, last=MOVED, items=("coat stand",), scene_tools=(), bag=("crowbar",),
                        scene="hallway", moves=HALLWAY)  # fmt: skip
    second_hop = await agent.act(observe(hallway))
    assert second_hop.action == "move(study)"
    assert second_hop.calls == []
    back = {**MOVED, "action": "move(study)", "response": "You move to study."}
    study = make_data(7, last=back, scene_tools=(), bag=("crowbar",))
    arrived = await agent.act(observe(study))
    assert arrived.action == "apply(crowbar, wall safe)"
    assert arrived.thought == "task 1: pry the door"
    assert not agent.queue


async def test_escapeagent_drops_a_candidate_whose_item_is_gone_or_unreachable():
    agent = EscapeAgent(FakeChatModel(["Action: click(desk)"]))
    agent.reset(INSTANCE, 0)
    hallway = make_data(1, items=("coat stand",), scene_tools=(), bag=("crowbar",),
                        scene="hallway", moves=HALLWAY)  # fmt: skip
    agent.observe(hallway)
    agent.observe(make_data(2, scene_tools=(), bag=("crowbar",)))  # the study: wall safe, desk
    agent.scene_names["attic"] = {"trunk"}  # seen, but no known way there
    agent._enqueue(
        parse_candidates(
            "Actions:\napply(crowbar, trunk) | x\napply(crowbar, wall safe) | y\n"
            "apply(crowbar, coat stand) | z",
            ("apply",),
        )
    )
    assert agent.route("hallway", "study") == ["study"]
    assert agent.route("study", "attic") == []
    decision = await agent.act(observe(hallway))
    assert decision.action == "move(study)"  # the trunk is unreachable: dropped
    gone = make_data(3, last=MOVED, items=("desk",), scene_tools=(), bag=("crowbar",))
    decision = await agent.act(observe(gone))
    # The wall safe is no longer in the study and nowhere else: dropped; the coat stand is in
    # the hallway, so the agent heads back there.
    assert decision.action == "move(hallway)"
    assert [c.call.text for c in agent.queue] == ["apply(crowbar, coat stand)"]


# ---- factories and protocol ----


@pytest.mark.parametrize(
    ("factory", "options", "name", "cls"),
    [
        (make_base, [], "base", ReActAgent),
        (make_self_refine, [], "self-refine", ReActAgent),
        (make_escapeagent, [], "escapeagent", EscapeAgent),
        (make_redna, ["tau"], "redna", ReDNAAgent),
        (make_reflect_only, ["tau"], "r-only", ReDNAAgent),
    ],
)
def test_factories_take_benchmark_model_and_explicit_options(
    factory: Any, options: list[str], name: str, cls: type
):
    params = inspect.signature(factory).parameters
    assert list(params) == ["benchmark", "model", *options]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params.values())
    with pytest.raises(ConfigError) as refused:
        factory(benchmark=None, model=None)
    assert str(refused.value) == (
        f"agent {name!r} needs a model: pass --model (e.g. openai/gpt-4.1 or a scripted/... "
        "policy), or model=... from Python"
    )
    agent = factory(benchmark=None, model=FakeChatModel(["x"]))
    assert type(agent) is cls
    assert agent.state() == {}


def test_agent_classes():
    model = FakeChatModel(["x"])
    assert type(make_base(model=model)) is ReActAgent
    assert make_self_refine(model=model).self_refine
    assert not make_reflect_only(model=model).divergent_narrowing


class SeedRecorder(AttemptAgent):
    """Records the seed of every attempt it starts."""

    def __init__(self) -> None:
        self.started: list[int] = []

    def start_attempt(self, instance: Instance, seed: int) -> None:
        self.started.append(seed)


def test_agents_start_afresh_when_the_env_starts_the_next_attempt():
    agent = SeedRecorder()
    agent.reset(INSTANCE, 7)
    for attempt in (0, 0, 1, 1, 3):
        agent.follow_attempt(observe({**make_data(1), "attempt": attempt}))
    # Seeded as the episode's seed plus the attempt's number, attempt 0 by `reset`.
    assert agent.started == [7, 8, 10]
    agent.reset(INSTANCE, 20)
    assert agent.started == [7, 8, 10, 20]


async def test_react_thoughts_belong_to_one_attempt():
    agent = ReActAgent(FakeChatModel(["Thought: look\nAction: click(desk)"] * 2))
    agent.reset(INSTANCE, 0)
    await agent.act(observe(make_data(1)))
    assert agent.thoughts == {1: "look"}
    agent.remember(observe(make_data(2)), "more")
    assert agent.thoughts == {1: "look", 2: "more"}
    await agent.act(observe({**make_data(1), "attempt": 1}))
    assert agent.thoughts == {1: "look"}  # the new attempt's step 1 only


# ---- the scripted explorer ----


def user_turn(text: str, system: str = "sys") -> list[Message]:
    return [Message(role="system", content=system), Message(role="user", content=text)]


def respond(text: str) -> str:
    policy = EscapeExplorerPolicy()
    first = policy.respond(user_turn(text), ModelParams())
    assert policy.respond(user_turn(text), ModelParams()) == first  # deterministic
    return first


def test_scripted_act_order_clicks_then_applies_then_crafts_then_moves():
    history: list[dict[str, Any]] = []
    actions = []
    bag = ("pipe head", "rope")
    for step in range(1, 12):
        text = render_observation(make_data(step, bag=bag, scene_tools=(), history=history))
        reply = parse_reply(respond(text))
        assert reply.thought
        actions.append(reply.action)
        history.append({"step": step, "action": reply.action, "response": "Nothing happens."})
    assert actions == [
        "click(wall safe)",
        "click(desk)",
        "apply(pipe head, wall safe)",
        "apply(pipe head, desk)",
        "apply(rope, wall safe)",
        "apply(rope, desk)",
        "craft(pipe head, rope)",
        "craft(rope, pipe head)",
        "move(hallway)",
        "click(wall safe)",  # everything tried: the oldest one again
        "click(desk)",
    ]


def test_scripted_act_never_picks_a_forbidden_finish_action():
    data = make_data(1, items=("wall safe",), scene_tools=(), bag=("pipe head",))
    data["forbidden"] = ["apply(pipe head, wall safe)"]
    history = [{"step": 1, "action": "click(wall safe)", "response": "A safe."}]
    data["history"] = history
    assert parse_reply(respond(render_observation(data))).action == "move(hallway)"


def test_scripted_answers_suffixed_act_prompts():
    text = render_observation(make_data(1))
    for suffix in (
        react_prompts.render_self_refine(),
        escapeagent_prompts.render_free_exploration(),
    ):
        assert prompt_kind(user_turn(text + "\n" + suffix)) == "act"
        assert parse_reply(respond(text + "\n" + suffix)).action == "click(wall safe)"


def reflection_prompt(action: str, response: str, tasks: str) -> str:
    return escapeagent_prompts.render_reflection_user(
        scene="study",
        scene_description=SCENE_TEXT,
        possible_actions="<interactable item> wall safe",
        task_list=tasks,
        action=action,
        response=response,
    )


def test_scripted_reflection_answers():
    none_tasks = escapeagent_prompts.NO_TASKS
    task = escapeagent_prompts.render_task_line(1, "open safe", "wall safe", "needs force")
    assert prompt_kind(user_turn(reflection_prompt("click(desk)", "x", none_tasks))) == "reflection"
    made = respond(reflection_prompt("apply(pipe head, wall safe)", SAFE_FAIL, none_tasks))
    assert parse_task_op(made).kind == "new"
    assert parse_task_op(made).name == "deal with wall safe"
    again = parse_task_op(
        respond(reflection_prompt("input(1, wall safe)", "It does not open.", task))
    )
    assert again == TaskListOp("update", 1, feedback="needs force; input(1, wall safe) failed too")
    solved = respond(reflection_prompt("input(2518, wall safe)", "The door swings open.", task))
    assert parse_task_op(solved) == TaskListOp("delete", 1)
    assert respond(reflection_prompt("move(hallway)", "You walk.", none_tasks)) == "none()"


def test_scripted_forethought_answers():
    tool = escapeagent_prompts.render_tool_forethought_user(
        tool="pipe head",
        description="A heavy pipe head.",
        bag="<applicable tool> rope: A rope.",
        task_list=escapeagent_prompts.render_task_line(1, "open safe", "wall safe", "stuck"),
    )
    assert prompt_kind(user_turn(tool)) == "tool-forethought"
    candidates = parse_candidates(respond(tool), ("craft", "apply"))
    assert [c.call.text for c in candidates] == [
        "apply(pipe head, wall safe)",
        "craft(pipe head, rope)",
    ]
    task = escapeagent_prompts.render_task_forethought_user(
        name="open safe", target="wall safe", notes="stuck", bag="<applicable tool> rope: A rope.",
        memory_pad="",
    )  # fmt: skip
    assert prompt_kind(user_turn(task)) == "task-forethought"
    candidates = parse_candidates(respond(task), ("click", "apply", "input"))
    assert [c.call.text for c in candidates] == ["click(wall safe)", "apply(rope, wall safe)"]


async def test_scripted_dn_answer_is_a_fresh_creative_action_on_the_target():
    captured = Routed(lambda messages: EscapeExplorerPolicy().respond(messages, ModelParams()))
    agent = make_redna(model=PolicyModel(captured))
    agent.reset(INSTANCE, 0)
    decisions = await run_steps(agent, [None, APPLY_FAIL, APPLY_FAIL], bag=("pipe head", "rope"))
    assert prompt_kind(captured.seen[-1]) == "dn"
    dn = decisions[-1]
    assert dn.calls[0].purpose == "dn"
    # c = 2 turns the search to the third candidate, apply(pipe head, ...) having failed anyway
    assert dn.action == "input(1234, wall safe)"
    assert "Divergent candidates" in dn.thought
    assert agent.counts["dn_off_grammar"] == 0
    await agent.act(observe(make_data(4, last=INPUT_FAIL, bag=("pipe head", "rope"))))
    again = await agent.act(observe(make_data(5, last=INPUT_FAIL, bag=("pipe head", "rope"))))
    assert again.calls[0].purpose == "dn"
    assert again.action == "craft(rope, pipe head)"  # c = 4: two candidates along


def test_scripted_act_avoids_actions_of_the_failures_by_target_block():
    text = render_observation(make_data(1, bag=("pipe head",), scene_tools=()))
    assert parse_reply(respond(text)).action == "click(wall safe)"
    agent = make_reflect_only(model=FakeChatModel(["x"]))
    agent.memory.record("click", "wall safe", "click(wall safe)", "A steel safe.")
    agent.memory.record("apply", "desk", "apply(pipe head, desk)", "It creaks.")
    block = agent.failures_block()
    suffixed = text.replace(
        react_prompts.RESPONSE_SLOT, block + "\n\n" + react_prompts.RESPONSE_SLOT
    )
    assert prompt_kind(user_turn(suffixed)) == "act"
    assert parse_reply(respond(suffixed)).action == "click(desk)"
    # Listed failures are a last resort, still preferred to repeating recent history.
    history = [{"step": 1, "action": "click(desk)", "response": "A desk."}]
    data = make_data(2, items=("wall safe", "desk"), scene_tools=(), history=history, moves=())
    only_failed = render_observation(data).replace(
        react_prompts.RESPONSE_SLOT, block + "\n\n" + react_prompts.RESPONSE_SLOT
    )
    assert parse_reply(respond(only_failed)).action == "click(wall safe)"


async def test_reflect_only_and_base_differ_under_the_scripted_policy():
    async def play(factory: Any) -> list[str]:
        agent = factory(model=PolicyModel(EscapeExplorerPolicy()))
        agent.reset(INSTANCE, 0)
        history: list[dict[str, Any]] = []
        actions = []
        last = None
        for step in range(1, 6):
            data = make_data(step, bag=("pipe head",), scene_tools=(), history=history, last=last)
            action = (await agent.act(observe(data))).action
            actions.append(action)
            call = parse_action(action)
            target = call.args[-1] if call and call.kind in ("click", "apply") else ""
            last = failed(action, call.kind if call else "", target, "Nothing happens.")
            history = [{"step": step, "action": action, "response": "Nothing happens."}]
        return actions

    assert await play(make_base) != await play(make_reflect_only)


def test_scripted_answers_the_dn_corrective_turn_from_prompt_11():
    dn_user = redna_prompts.render_dn_user(
        step=3, scene="study", target="wall safe", failure_count=2, substantive_count=0,
        scene_description=SCENE_TEXT, tools_in_bag="<applicable tool> rope: A rope.",
        objective=OBJECTIVE, failures="", possible_actions="<interactable item> wall safe",
        diversity="",
    )  # fmt: skip
    messages = [
        Message(role="system", content=redna_prompts.render_dn_system()),
        Message(role="user", content=dn_user),
        Message(role="assistant", content="Thought: t\nAction: click(wall safe)"),
        Message(role="user", content=redna_prompts.render_dn_retry("click(wall safe)")),
    ]
    assert prompt_kind(messages) == "dn"
    reply = EscapeExplorerPolicy().respond(messages, ModelParams())
    assert parse_reply(reply).action == "apply(rope, wall safe)"


def test_scripted_unknown_prompt_is_answered_without_raising():
    assert parse_reply(respond("hello")).action == "none()"


# ---- the loop, offline ----


class TinyEnv:
    """A two-item room: the safe opens with the pipe head after the rope is crafted into it."""

    def __init__(self) -> None:
        self.step, self.bag, self.crafted, self.history = 1, [], False, []
        self.last: dict[str, Any] | None = None
        self.done = False

    def observation(self) -> Observation:
        scene_tools = () if "pipe head" in self.bag else ("pipe head",)
        data = make_data(
            self.step, bag=tuple(self.bag), scene_tools=scene_tools,
            history=self.history[-10:], last=self.last, items=("wall safe", "desk"),
        )  # fmt: skip
        return observe(data)

    def act(self, action: str) -> None:
        call = parse_action(action)
        kind = call.kind if call else None
        target = call.args[-1] if call and call.args else None
        success, collected, response = False, None, "Nothing happens."
        if call and call.key == "click(pipe head)" and "pipe head" not in self.bag:
            success, collected, response = True, "pipe head", "You pick up the pipe head."
            self.bag += ["pipe head", "rope"]
        elif call and call.key == "craft(pipe head, rope)" and "rope" in self.bag:
            success, response, target = True, "The rope now weighs the pipe head.", "pipe head"
            self.bag.remove("rope")
        elif call and call.key == "apply(pipe head, wall safe)" and "rope" not in self.bag:
            success, response, self.done = True, "The safe bursts open. GAME END!", True
        self.last = {
            "action": action, "kind": kind, "target": target, "valid": call is not None,
            "success": success, "response": response, "collected": collected,
        }  # fmt: skip
        self.history.append({"step": self.step, "action": action, "response": response})
        self.step += 1


@pytest.mark.parametrize(
    "factory", [make_base, make_self_refine, make_escapeagent, make_redna, make_reflect_only]
)
async def test_every_agent_plays_offline_with_the_scripted_explorer(factory: Any):
    agent = factory(model=PolicyModel(EscapeExplorerPolicy()))
    for _attempt in range(2):
        agent.reset(INSTANCE, 0)
        env = TinyEnv()
        for _ in range(30):
            decision = await agent.act(env.observation())
            assert decision.calls  # EscapeAgent's queue steps still carry their reflection
            assert {c.purpose for c in decision.calls} <= {"act", "reflect", "forethought", "dn"}
            env.act(decision.action)
            if env.done:
                break
        assert env.done
