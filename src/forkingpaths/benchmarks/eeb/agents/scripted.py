"""Scripted EvoEmpirBench models: the maze explorer and match-2 greedy, answering like a model."""

from __future__ import annotations

import re

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.reference import (
    Match2View,
    MazeView,
    match2_action_text,
    maze_reasoning,
    plan_match2_move,
    plan_maze_move,
)
from forkingpaths.benchmarks.eeb.match2_levels import BOARD_SIZE, COLOURS, PROPS
from forkingpaths.core.chat import Message, ModelParams

# The observation texts these read are MazeEnv._text and Match2Env._text (maze.py, match2.py).
_MAZE_HEADER = re.compile(r"Maze level (\d+) \((\d+)x\d+\), step (\d+) of (\d+)\.")
_MAZE_ROW = re.compile(r"^ *(\d+) \| (.*)$", re.MULTILINE)
_MAZE_POSITION = re.compile(r"Current position \(row,col\): \((\d+),(\d+)\)")
_MAZE_COINS = re.compile(r"Coins: (\d+) of (\d+) collected")
_MAZE_SHOVEL = re.compile(r"- Shovel: held \((\d+) uses? left\)")
_MAZE_SWORD = re.compile(r"- Sword: held")
_MAZE_KEY = re.compile(r"- Key: (collected|not collected)")
_TILE = f"[{''.join(COLOURS)}]"
_MATCH2_ROW = re.compile(rf"^ *(\d+)  ((?:{_TILE} ){{{BOARD_SIZE - 1}}}{_TILE})$", re.MULTILINE)
_MATCH2_STATUS = re.compile(r"Score: (-?\d+)\. Steps remaining: (\d+) of (\d+)\.")
_MATCH2_TARGETS = re.compile(r"Colour targets \(cleared/target\): ([^\n]*)")
_MATCH2_TARGET = re.compile(r"([A-D]) (\d+)/(\d+)")
_MATCH2_PROPS = re.compile(r"Props left \(cost in points\): ([^\n]*)")
_MATCH2_PROP = re.compile(rf"({'|'.join(PROPS)}) x(\d+)")


def parse_maze_text(text: str) -> MazeView | None:
    """The explorer's view of a maze observation text (None when `text` holds none): the map
    block, position, step counter, coins and held items."""
    header = _MAZE_HEADER.search(text)
    position = _MAZE_POSITION.search(text)
    if header is None or position is None:
        return None
    size = int(header.group(2))
    rows = [m.group(2).split() for m in _MAZE_ROW.finditer(text, header.end())][:size]
    if len(rows) != size or any(len(row) != size for row in rows):
        return None
    coins = _MAZE_COINS.search(text)
    shovel = _MAZE_SHOVEL.search(text)
    key = _MAZE_KEY.search(text)
    return MazeView(
        rows=tuple("".join(row) for row in rows),
        position=(int(position.group(1)), int(position.group(2))),
        level=int(header.group(1)),
        steps=int(header.group(3)),
        max_steps=int(header.group(4)),
        shovel_uses=int(shovel.group(1)) if shovel else 0,
        sword=_MAZE_SWORD.search(text) is not None,
        # The items block lists the key on boards that hold one; the goal stays shut without it.
        key_required=key is not None,
        key=key is not None and key.group(1) == "collected",
        coins_collected=int(coins.group(1)) if coins else 0,
        coins_total=int(coins.group(2)) if coins else 0,
    )


def parse_match2_text(text: str) -> Match2View | None:
    """The greedy player's view of a match-2 observation text (None when `text` holds none):
    board, score, steps left, colour targets and props."""
    rows = [m.group(2).replace(" ", "") for m in _MATCH2_ROW.finditer(text)]
    status = _MATCH2_STATUS.search(text)
    targets = _MATCH2_TARGETS.search(text)
    if len(rows) != BOARD_SIZE or status is None or targets is None:
        return None
    remaining = {
        colour: max(0, int(target) - int(cleared))
        for colour, cleared, target in _MATCH2_TARGET.findall(targets.group(1))
    }
    props = _MATCH2_PROPS.search(text)
    inventory = (
        {name: int(count) for name, count in _MATCH2_PROP.findall(props.group(1))} if props else {}
    )
    return Match2View(
        board=tuple(rows),
        score=int(status.group(1)),
        steps_remaining=int(status.group(2)),
        remaining=remaining,
        inventory=inventory,
    )


def _last_user(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def answer_maze(view: MazeView) -> str:
    """A reply in the base agent's format: a sentence of reasoning, then `Action: X`."""
    plan = plan_maze_move(view)
    return f"{maze_reasoning(plan)}\nAction: {plan.action}"


def answer_match2(view: Match2View) -> str:
    """A reply in the base agent's format: a sentence of reasoning, then the action JSON."""
    plan = plan_match2_move(view)
    return f"{plan.reason}\n{match2_action_text(plan.action)}"


class MazeExplorerPolicy:
    """`scripted/eeb-maze-explorer`: the reference explorer (reference.plan_maze_move) on the
    state in the last user message. Stateless and deterministic."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        view = parse_maze_text(_last_user(messages))
        return answer_maze(view) if view is not None else prompts.SCRIPTED_NO_STATE


class Match2GreedyPolicy:
    """`scripted/eeb-match2-greedy`: the reference greedy player (reference.plan_match2_move)
    on the board in the last user message. Stateless and deterministic."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        view = parse_match2_text(_last_user(messages))
        return answer_match2(view) if view is not None else prompts.SCRIPTED_NO_STATE


class EEBPolicy:
    """`scripted/eeb-reference`: whichever of the two policies the last user message's game
    calls for, so one scripted model serves a run over both games."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        text = _last_user(messages)
        if (maze := parse_maze_text(text)) is not None:
            return answer_maze(maze)
        if (match2 := parse_match2_text(text)) is not None:
            return answer_match2(match2)
        return prompts.SCRIPTED_NO_STATE
