"""Tests of the EvoEmpirBench agents: base LLM agent, truths, reference, scripted and human."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import FakeChatModel, PolicyModel

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.base import BaseAgent, make_base
from forkingpaths.benchmarks.eeb.agents.human import HumanAgent, make_human
from forkingpaths.benchmarks.eeb.agents.reference import (
    Match2View,
    MazeView,
    make_random,
    make_reference,
    plan_match2_move,
    plan_maze_move,
)
from forkingpaths.benchmarks.eeb.agents.scripted import (
    EEBPolicy,
    Match2GreedyPolicy,
    MazeExplorerPolicy,
    parse_match2_text,
    parse_maze_text,
)
from forkingpaths.benchmarks.eeb.agents.truths import SCHEMA_VERSION, Truth, TruthRepository
from forkingpaths.benchmarks.eeb.match2 import Match2Env, parse_match2_action
from forkingpaths.benchmarks.eeb.match2_levels import (
    MATCH2_DIFFICULTIES,
    PROP_COSTS,
    Match2Level,
    load_match2_split,
)
from forkingpaths.benchmarks.eeb.maze import MazeEnv
from forkingpaths.benchmarks.eeb.maze_levels import MazeLevel, load_maze_split
from forkingpaths.core.agent import Agent
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import Completion, Message, ModelParams, ScriptedPolicy
from forkingpaths.core.env import Env, Observation
from forkingpaths.core.errors import ConfigError, InvalidFile, ModelError
from forkingpaths.core.human import HumanInputEnded
from forkingpaths.core.registry import load_entry_point

MAZE = {level: load_maze_split("test", level) for level in (1, 2, 3)}
MATCH2 = load_match2_split("test")


class FailingModel:
    name = "fake/down"

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        raise ModelError("service unavailable after 6 attempts")


def maze_instance(level: int = 1, **params: Any) -> Instance:
    return Instance(
        id=f"maze-{level}", split="test", params={"game": "maze", "level": level, **params}
    )


def match2_instance(difficulty: str = "easy", **params: Any) -> Instance:
    return Instance(
        id=f"match2-{difficulty}",
        split="test",
        params={"game": "match2", "difficulty": difficulty, **params},
    )


def seed_of(instance_id: str) -> int:
    return zlib.crc32(instance_id.encode()) % 1000


async def play(agent: Agent, env: Env, instance: Instance, seed: int) -> tuple[list[str], dict]:
    """Run one episode; returns (actions, the last step's info)."""
    agent.reset(instance, seed)
    current = env.reset(seed=seed)
    actions: list[str] = []
    info: dict[str, Any] = {}
    for _ in range(200):
        decision = await agent.act(current)
        actions.append(decision.action)
        result = env.step(decision.action)
        current, info = result.observation, result.info
        if result.done:
            break
    return actions, info


def small_maze(*grid: str, level: int | None = None) -> MazeLevel:
    data: dict[str, Any] = {"grid": list(grid)}
    if level is not None:
        data["level"] = level
    return MazeLevel.from_json(data)


# ---- factories and options ----


@pytest.mark.parametrize(
    ("option", "value", "got", "allowed"),
    [
        ("history", -1, "-1", "an integer >= 0"),
        ("history", "many", "'many'", "an integer >= 0"),
        ("max_tokens", 0, "0", "an integer >= 1"),
        ("truths", 42, "42", "a truth-repository JSON path, a list of strings, or none"),
        ("truths", ["fine", " "], "['fine', ' ']", "non-empty strings"),
    ],
)
def test_invalid_base_options_name_option_value_and_allowed(
    option: str, value: object, got: str, allowed: str
) -> None:
    with pytest.raises(ConfigError) as excinfo:
        make_base(benchmark=None, model=FakeChatModel(["Action: 0"]), **{option: value})
    assert str(excinfo.value).startswith(f"{option}: got {got}; allowed values: {allowed}")


def test_base_needs_a_model_and_accepts_cli_strings() -> None:
    with pytest.raises(ConfigError, match="model"):
        make_base(benchmark=None, model=None)
    agent = make_base(model=FakeChatModel(["x"]), history="2", max_tokens="300")
    assert (agent.history, agent.params) == (2, ModelParams(max_tokens=300))
    assert make_base(model=FakeChatModel(["x"])).params == ModelParams()


def test_other_factories_validate_their_options() -> None:
    with pytest.raises(ConfigError, match=r"seed_offset: got 'x'; allowed values: an integer"):
        make_random(seed_offset="x")
    assert make_random(seed_offset="3").seed_offset == 3
    with pytest.raises(ConfigError, match="input_fn: got 3"):
        make_human(input_fn=3)  # type: ignore[arg-type]


def test_agents_load_from_entry_points_and_satisfy_the_protocol() -> None:
    model = FakeChatModel(["Action: 0"])
    for path in (
        "forkingpaths.benchmarks.eeb.agents.base:make_base",
        "forkingpaths.benchmarks.eeb.agents.reference:make_reference",
        "forkingpaths.benchmarks.eeb.agents.reference:make_random",
        "forkingpaths.benchmarks.eeb.agents.human:make_human",
    ):
        agent = load_entry_point(path)(benchmark=None, model=model)
        assert isinstance(agent, Agent)
        assert agent.state() == {}
    for path in (
        "forkingpaths.benchmarks.eeb.agents.scripted:MazeExplorerPolicy",
        "forkingpaths.benchmarks.eeb.agents.scripted:Match2GreedyPolicy",
        "forkingpaths.benchmarks.eeb.agents.scripted:EEBPolicy",
    ):
        assert isinstance(load_entry_point(path)(), ScriptedPolicy)


@pytest.mark.parametrize("params", [{}, {"game": "chess"}])
def test_reset_refuses_an_instance_without_a_known_game(params: dict[str, Any]) -> None:
    instance = Instance(id="x", split="test", params=params)
    for agent in (make_base(model=FakeChatModel(["x"])), make_reference(), make_random()):
        with pytest.raises(ConfigError, match=r'params\["game"\].*allowed values: maze, match2'):
            agent.reset(instance, 0)


# ---- base agent: prompts (App. B.1) ----


async def first_request(
    instance: Instance, env: Env, *, truths: Any = None, reply: str = "Action: 0"
) -> tuple[str, str, Observation]:
    """(system prompt, user turn, observation) of the base agent's first call."""
    model = FakeChatModel([reply])
    agent = make_base(model=model, truths=truths)
    agent.reset(instance, 0)
    observation = env.reset(seed=0)
    await agent.act(observation)
    messages = model.requests[0][0]
    assert [m.role for m in messages] == ["system", "user"]
    return messages[0].content, messages[1].content, observation


@pytest.mark.parametrize("level", [1, 2, 3])
async def test_maze_prompt_per_level(level: int) -> None:
    system, turn, observation = await first_request(
        maze_instance(level), MazeEnv(MAZE[level][0][1])
    )
    # Role, legend and the five priorities in order.
    assert system.startswith("You are an agent finding your way through a maze.")
    for line in prompts.MAZE_LEGEND_BASE:
        assert line in system
    assert (prompts.MAZE_LEGEND_MONSTER in system) == (level >= 2)
    assert (prompts.MAZE_LEGEND_ITEMS in system) == (level >= 3)
    priorities = ["1. Survive", "2. Get to the goal", "3. Pick up coins", "4. Explore", "5. Use as"]
    positions = [system.index(p) for p in priorities]
    assert positions == sorted(positions)
    # Only this level's characteristics, with the board's size.
    for other in (1, 2, 3):
        assert (f"About level {other}:" in system) == (other == level)
    assert "a 9x9 board" in system
    assert ("wander at random" in system) == (level == 2)
    assert ("K: key, needed before the goal lets you in" in system) == (level == 3)
    assert "Training knowledge" not in system
    # The user turn: the env's text verbatim, the level's rules, the answer format.
    assert observation.text in turn
    assert turn.startswith("Current game state:\n" + observation.text)
    assert (prompts.MAZE_MONSTER_RULE in turn) == (level >= 2)
    assert ("Level 3 rules:" in turn) == (level == 3)
    assert '"Action: X" with X an action number from 0 to 11' in turn
    assert "Full vision is on" not in turn


async def test_maze_full_vision_note() -> None:
    level = MAZE[1][0][1]
    _, turn, _ = await first_request(
        maze_instance(1, full_vision=True), MazeEnv(level, full_vision=True)
    )
    assert "Full vision is on" in turn


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
async def test_match2_prompt_per_difficulty(difficulty: str) -> None:
    level = MATCH2[f"{difficulty}/000"]
    system, turn, observation = await first_request(
        match2_instance(difficulty), Match2Env(level), reply='{"action": null}'
    )
    assert "8x8 board" in system and "A, B, C and D" in system and "empty (null)" in system
    assert "tiles * 5 + 3 * max(0, tiles - 2)" in system
    for prop, cost in PROP_COSTS.items():
        assert f"{prop} (clears" in system and f"{cost} points" in system
    assert system.index("First priority: finish the level") < system.index("Second priority")
    ranges = MATCH2_DIFFICULTIES[difficulty]
    assert f"About this level ({difficulty}):" in system
    assert f"{ranges.steps[0]} to {ranges.steps[1]} steps allowed" in system
    assert f"{ranges.target[0]} to {ranges.target[1]} tiles to clear of each colour" in system
    assert "Training knowledge" not in system
    assert turn.startswith("Current game state:\n" + observation.text)
    assert prompts.MATCH2_ACTION_FORMAT_PROPS in turn
    assert 'If no action is possible, answer {"action": null}.' in turn


async def test_match2_prompt_without_props() -> None:
    level = MATCH2["easy/000"]
    system, turn, _ = await first_request(
        match2_instance("easy", props=False), Match2Env(level, props=False)
    )
    assert "Props (" not in system and "hammer" not in system
    assert prompts.MATCH2_ACTION_FORMAT_NO_PROPS in turn


async def test_training_knowledge_lists_truths_of_the_game() -> None:
    repo = TruthRepository("maze", ["Avoid cells next to a monster.", "Take coins on the way."])
    system, _, _ = await first_request(maze_instance(2), MazeEnv(MAZE[2][0][1]), truths=repo)
    assert "Training knowledge" in system
    assert "1. Avoid cells next to a monster.\n2. Take coins on the way." in system
    # A maze repository says nothing in a match-2 episode; plain strings go to both games.
    system, _, _ = await first_request(
        match2_instance(), Match2Env(MATCH2["easy/000"]), truths=repo, reply="x"
    )
    assert "Training knowledge" not in system
    system, _, _ = await first_request(
        match2_instance(), Match2Env(MATCH2["easy/000"]), truths=["Keep the bomb."], reply="x"
    )
    assert "Training knowledge" in system and "1. Keep the bomb." in system


async def test_truths_file_option_is_read_by_the_factory(tmp_path: Path) -> None:
    path = TruthRepository("maze", ["Go around walls."]).save(tmp_path / "truths.json")
    agent = make_base(model=FakeChatModel(["x"]), truths=str(path))
    assert agent.truth_texts("maze") == ["Go around walls."]
    with pytest.raises(InvalidFile, match=r"missing\.json"):
        make_base(model=FakeChatModel(["x"]), truths=str(tmp_path / "missing.json"))


# ---- base agent: replies, history, errors ----


async def test_maze_reply_with_prose_is_parsed() -> None:
    reply = (
        "### Situation\nThe coin at (8,2) is right next to me and the path is clear.\n\n"
        "**Action: 9**"
    )
    agent = make_base(model=FakeChatModel([reply]))
    agent.reset(maze_instance(1), 0)
    env = MazeEnv(MAZE[1][0][1])
    decision = await agent.act(env.reset(seed=0))
    assert decision.action == "9"
    assert decision.thought == (
        "### Situation\nThe coin at (8,2) is right next to me and the path is clear."
    )
    assert env.step(decision.action).info["valid"] is True
    call = decision.calls[0]
    assert (call.model, call.response, call.latency_s, call.purpose) == (
        "fake/model",
        reply,
        0.25,
        "act",
    )


async def test_match2_reply_with_prose_is_parsed() -> None:
    reply = (
        "The B group of 6 at (4,1) is the largest and B is still needed.\n\n"
        '```json\n{"action": {"type": "eliminate", "pos": [4, 1]}}\n```'
    )
    agent = make_base(model=FakeChatModel([reply]))
    agent.reset(match2_instance("hard"), 0)
    env = Match2Env(MATCH2["hard/000"])
    decision = await agent.act(env.reset(seed=0))
    assert json.loads(decision.action) == {"action": {"type": "eliminate", "pos": [4, 1]}}
    assert decision.thought == "The B group of 6 at (4,1) is the largest and B is still needed."
    assert env.step(decision.action).info["valid"] is True


@pytest.mark.parametrize("game", ["maze", "match2"])
@pytest.mark.parametrize(
    "reply", ["I would rather not move.", "", '{"action": null}', "Action: 12"]
)
async def test_garbage_reply_goes_to_the_env_verbatim(game: str, reply: str) -> None:
    agent = make_base(model=FakeChatModel([reply]))
    if game == "maze":
        instance, env = maze_instance(1), MazeEnv(MAZE[1][0][1])
    else:
        instance, env = match2_instance(), Match2Env(MATCH2["easy/000"])
    agent.reset(instance, 0)
    decision = await agent.act(env.reset(seed=0))
    assert decision.action == reply
    result = env.step(decision.action)
    assert result.info["valid"] is False


@pytest.mark.parametrize(("history", "kept"), [(0, []), (1, [1]), (2, [0, 1]), (5, [0, 1])])
async def test_history_keeps_the_last_pairs(history: int, kept: list[int]) -> None:
    replies = ["Action: 9", "Action: 0", "Action: 9"]
    model = FakeChatModel(replies)
    agent = make_base(model=model, history=history)
    agent.reset(maze_instance(1), 0)
    env = MazeEnv(MAZE[1][0][1])
    current = env.reset(seed=0)
    turns = []
    for _ in range(3):
        turns.append(prompts.render_maze_turn(current.text, 1, full_vision=False))
        current = env.step((await agent.act(current)).action).observation
    messages = model.requests[-1][0]
    expected: list[str] = []
    for i in kept:
        expected += [turns[i], replies[i]]
    assert [m.content for m in messages[1:]] == [*expected, turns[2]]
    # A new episode starts without history.
    agent.reset(maze_instance(1), 1)
    await agent.act(env.reset(seed=1))
    assert [m.role for m in model.requests[-1][0]] == ["system", "user"]


async def test_model_error_propagates() -> None:
    agent = make_base(model=FailingModel())
    agent.reset(maze_instance(1), 0)
    with pytest.raises(ModelError):
        await agent.act(MazeEnv(MAZE[1][0][1]).reset(seed=0))


async def test_act_before_reset_is_refused() -> None:
    agent = BaseAgent(FakeChatModel(["x"]))
    with pytest.raises(ConfigError, match="before reset"):
        await agent.act(Observation(text=""))


# ---- reference agents on the shipped test levels ----


async def wins(agent: Agent, game: str, group: str) -> int:
    won = 0
    if game == "maze":
        level = int(group)
        for instance_id, board in MAZE[level]:
            instance = maze_instance(level)
            _, info = await play(agent, MazeEnv(board), instance, seed_of(instance_id))
            won += bool(info["success"])
    else:
        for key, board in MATCH2.items():
            if key.startswith(group):
                _, info = await play(agent, Match2Env(board), match2_instance(group), seed_of(key))
                won += bool(info["success"])
    return won


@pytest.mark.parametrize(
    ("game", "group", "at_least"),
    [
        # Measured: 30, 26, 28 of 30 mazes; 30, 30, 7 of 30 match-2 levels.
        ("maze", "1", 29),
        ("maze", "2", 24),
        ("maze", "3", 26),
        ("match2", "easy", 29),
        ("match2", "medium", 28),
        ("match2", "hard", 5),
    ],
)
async def test_reference_agent_wins_the_shipped_test_levels(
    game: str, group: str, at_least: int
) -> None:
    assert await wins(make_reference(), game, group) >= at_least


async def test_random_agent_is_seeded_and_plays_valid_looking_actions() -> None:
    agent = make_random(seed_offset=5)
    env = Match2Env(MATCH2["easy/003"])
    first, _ = await play(agent, env, match2_instance(), 11)
    again, _ = await play(agent, env, match2_instance(), 11)
    assert first == again
    for action in first:
        parsed, _ = parse_match2_action(action)
        assert parsed is not None and parsed["type"] == "eliminate"
    maze_actions, _ = await play(agent, MazeEnv(MAZE[1][3][1]), maze_instance(1), 11)
    assert {int(a) for a in maze_actions} <= set(range(12))
    assert len(set(maze_actions)) > 3
    other, _ = await play(make_random(seed_offset=6), env, match2_instance(), 11)
    assert other != first


# ---- the maze explorer and the match-2 greedy on hand-made states ----


def test_explorer_uses_long_moves_on_clear_known_lines_and_grabs_coins() -> None:
    env = MazeEnv(small_maze("....G", ".....", ".....", ".....", "S.C.."), full_vision=True)
    plan = plan_maze_move(MazeView.from_data(env.reset(seed=0).data))
    assert (plan.kind, plan.target, plan.action) == ("pickup", (4, 2), 10)  # right 2 cells
    # With every coin taken, it heads for the goal in as few moves as it can (3: four rows up
    # take two moves of at most three cells, and two columns right take one).
    env.step("10")
    plan = plan_maze_move(MazeView.from_data(env.render().data))
    assert plan.kind == "goal" and plan.distance == 3
    for _ in range(3):
        result = env.step(str(plan_maze_move(MazeView.from_data(env.render().data)).action))
    assert result.info["success"] is True and result.info["t"] == 4


def test_explorer_never_walks_into_a_wall_or_next_to_a_monster() -> None:
    env = MazeEnv(small_maze("....G", ".....", ".....", "#M...", "S...."), full_vision=True)
    observation = env.reset(seed=0)
    plan = plan_maze_move(MazeView.from_data(observation.data))
    # Up is a wall; right ends next to the monster; the start-corner bump keeps it in place.
    assert plan.action in (3, 6)  # down or left: an edge bump
    assert env.step(str(plan.action)).info["lives"] == 3


def test_greedy_finishes_the_level_when_it_can() -> None:
    board = ("AABBCCDD", "ABCDABCD", "BCDABCDA", "CDABCDAB", "DABCDABC", "ABCDABCD",
             "BCDABCDA", "CDABCDAB")  # fmt: skip
    view = Match2View(board, score=0, steps_remaining=5, remaining={"A": 0, "B": 2, "C": 0, "D": 0})
    plan = plan_match2_move(view)
    assert plan.action == {"type": "eliminate", "pos": [0, 2]}


def test_greedy_uses_a_prop_only_when_it_pays() -> None:
    # No two neighbours share a colour: no group exists.
    board = tuple("".join("ABCD"[(2 * i + j) % 4] for j in range(8)) for i in range(8))
    remaining = {"A": 5, "B": 5, "C": 5, "D": 5}
    broke = Match2View(board, 0, 5, remaining, {"row": 1, "col": 1, "bomb": 1, "hammer": 1})
    assert plan_match2_move(broke).action is None
    rich = Match2View(board, 40, 5, remaining, {"row": 1, "col": 1, "bomb": 1, "hammer": 1})
    assert plan_match2_move(rich).action["type"] == "bomb"  # type: ignore[index]  # 9 tiles
    no_props = Match2View(board, 40, 5, remaining, {})
    assert plan_match2_move(no_props).action is None


# ---- scripted policies read the observation text ----


@pytest.mark.parametrize("level", [1, 2, 3])
async def test_maze_text_holds_everything_the_explorer_reads(level: int) -> None:
    agent = make_reference()
    env = MazeEnv(MAZE[level][1][1])
    agent.reset(maze_instance(level), 3)
    current = env.reset(seed=3)
    for _ in range(40):
        assert parse_maze_text(current.text) == MazeView.from_data(current.data)
        result = env.step((await agent.act(current)).action)
        current = result.observation
        if result.done:
            break


@pytest.mark.parametrize("props", [True, False])
async def test_match2_text_holds_everything_the_greedy_reads(props: bool) -> None:
    agent = make_reference()
    env = Match2Env(MATCH2["medium/004"], props=props)
    agent.reset(match2_instance("medium"), 3)
    current = env.reset(seed=3)
    for _ in range(20):
        assert parse_match2_text(current.text) == Match2View.from_data(current.data)
        result = env.step((await agent.act(current)).action)
        current = result.observation
        if result.done:
            break


def test_policies_answer_like_a_model() -> None:
    maze_obs = MazeEnv(MAZE[1][0][1]).reset(seed=0)
    match2_obs = Match2Env(MATCH2["easy/000"]).reset(seed=0)
    maze_turn = prompts.render_maze_turn(maze_obs.text, 1, full_vision=False)
    match2_turn = prompts.render_match2_turn(match2_obs.text, props=True)
    params = ModelParams()

    def ask(policy: ScriptedPolicy, turn: str) -> str:
        return policy.respond(
            [Message(role="system", content="s"), Message(role="user", content=turn)], params
        )

    maze_reply = ask(MazeExplorerPolicy(), maze_turn)
    reasoning, last = maze_reply.rsplit("\n", 1)
    assert (
        reasoning.endswith(".")
        and last == f"Action: {plan_maze_move(MazeView.from_data(maze_obs.data)).action}"
    )
    match2_reply = ask(Match2GreedyPolicy(), match2_turn)
    reasoning, last = match2_reply.rsplit("\n", 1)
    assert reasoning.endswith(".")
    assert json.loads(last) == {
        "action": plan_match2_move(Match2View.from_data(match2_obs.data)).action
    }
    assert ask(EEBPolicy(), maze_turn) == maze_reply
    assert ask(EEBPolicy(), match2_turn) == match2_reply
    for policy in (EEBPolicy(), MazeExplorerPolicy(), Match2GreedyPolicy()):
        assert ask(policy, "What is the weather like?") == prompts.SCRIPTED_NO_STATE
    assert ask(MazeExplorerPolicy(), match2_turn) == prompts.SCRIPTED_NO_STATE


@pytest.mark.parametrize(
    ("game", "group", "index"),
    [("maze", 1, 4), ("maze", 2, 0), ("maze", 3, 2), ("match2", "easy", 1), ("match2", "hard", 7)],
)
async def test_base_agent_with_scripted_policy_plays_like_the_reference(
    game: str, group: Any, index: int
) -> None:
    if game == "maze":
        instance, make_env = maze_instance(group), lambda: MazeEnv(MAZE[group][index][1])
    else:
        level: Match2Level = MATCH2[f"{group}/{index:03d}"]
        instance, make_env = match2_instance(group), lambda: Match2Env(level)
    reference = await play(make_reference(), make_env(), instance, 21)
    scripted = await play(make_base(model=PolicyModel(EEBPolicy())), make_env(), instance, 21)
    assert scripted == reference
    assert reference[1]["success"] is True


# ---- truth repository ----


def test_truth_repository_round_trip(tmp_path: Path) -> None:
    repo = TruthRepository("match2")
    repo.add("Save the row clear for the last steps.", source="easy/004", round=1, verified_gain=36)
    repo.add("Clear low groups first to make tiles fall.")
    repo.replace([*repo, "Count the targets before using a prop."])
    assert len(repo) == 3
    assert repo.texts()[2] == "Count the targets before using a prop."
    removed = repo.remove(1)
    assert removed == Truth(text="Clear low groups first to make tiles fall.")
    path = repo.save(tmp_path / "deep" / "truths.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["game"] == "match2"
    assert data["truths"][0] == {
        "text": "Save the row clear for the last steps.",
        "source": "easy/004",
        "round": 1,
        "verified_gain": 36.0,
    }
    loaded = TruthRepository.load(path)
    assert loaded == repo and list(loaded) == list(repo)


def test_truth_repository_edits_are_validated() -> None:
    repo = TruthRepository("maze", ["a"])
    with pytest.raises(ConfigError, match=r"index: got 4; allowed values: 0 to 0"):
        repo.remove(4)
    with pytest.raises(ConfigError, match=r"text: .*non-empty"):
        repo.add("   ")
    with pytest.raises(ConfigError, match="colour"):
        repo.add("fine", colour="red")
    with pytest.raises(ConfigError, match=r"game: got 'chess'; allowed values: maze, match2"):
        TruthRepository("chess")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"schema_version": 1, "truths": []}', "game: Field required"),
        ('{"schema_version": 1, "game": "chess", "truths": []}', "game: got 'chess'"),
        ('{"schema_version": 2, "game": "maze", "truths": []}', "schema_version 2 is newer"),
        ('{"schema_version": 0, "game": "maze", "truths": []}', "schema_version: got 0"),
        ('{"schema_version": 1, "game": "maze", "truths": [{"text": ""}]}', r"truths\[0\].text"),
        ('{"schema_version": 1, "game": "maze", "truths": [{"txt": "a"}]}', r"truths\[0\].text"),
        (
            '{"schema_version": 1, "game": "maze", "truths": [{"text": "a", "round": "x"}]}',
            r"truths\[0\].round",
        ),
        ('{"schema_version": 1, "game": "maze", "truths": {}}', "truths: "),
    ],
)
def test_malformed_truth_files_name_the_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InvalidFile, match=message) as excinfo:
        TruthRepository.load(path)
    assert str(path) in str(excinfo.value)


# ---- human play ----


async def test_human_agent_plays_with_injected_input(capsys: pytest.CaptureFixture[str]) -> None:
    typed = ["  9 ", "Action: 0", "banana"]
    prompts_seen: list[str] = []

    def fake_input(prompt: str) -> str:
        prompts_seen.append(prompt)
        if not typed:
            raise EOFError  # what input() raises when the terminal closes
        return typed.pop(0)

    agent = make_human(input_fn=fake_input)
    assert isinstance(agent, HumanAgent)
    env = MazeEnv(MAZE[1][0][1])
    agent.reset(maze_instance(1), 0)
    current = env.reset(seed=0)
    valid = []
    for _ in range(3):
        decision = await agent.act(current)
        result = env.step(decision.action)
        valid.append(result.info["valid"])
        current = result.observation
    assert prompts_seen == ["action> "] * 3
    assert valid == [True, True, False]
    out = capsys.readouterr().out
    assert prompts.HUMAN_HINTS["maze"] in out
    assert "Current position (row,col): (8,0)" in out
    with pytest.raises(HumanInputEnded):
        await agent.act(current)


async def test_human_match2_text_keeps_its_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    agent = make_human(input_fn=lambda prompt: "eliminate 4,1")
    env = Match2Env(MATCH2["hard/000"])
    agent.reset(match2_instance("hard"), 0)
    decision = await agent.act(env.reset(seed=0))
    assert decision.action == "eliminate 4,1"
    assert env.step(decision.action).info["valid"] is True
    assert "Tile [i, j] is row i" in capsys.readouterr().out
