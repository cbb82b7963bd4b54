"""Escape engine vs EscapeBench's own engine on EscapeBench's released games: describe + step.

Per game, the same seeded random-action workload through both engines: build the game, then N
steps of (render the observation an agent reads: scene description, possible actions, tools in
the bag; pick one random action among those the observation offers; play it). The random
numbers are drawn before the clock starts and the pick is written out, for both engines alike:
the workload's own cost is no part of either engine's. Steps/s per game and overall (medians of
interleaved rounds, CPU time of this process), load time per game, ratios side by side.

EscapeBench's engine runs from its release, exported at run time from the fetched mirror (`git
archive` into a temporary folder, imported from there); nothing of it lives in this repository.
Without the mirror the script says so and measures ours alone, on the shipped scenarios. Also
prints ours through `EscapeEnv` (the whole Prompt 2 per step, as agents get it), which has no
peer. Every game of the release that both engines load is measured (the issue counted 7; all 36
load today).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import io
import logging
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.env import EscapeEnv
from forkingpaths.benchmarks.escape.schema import (
    Scenario,
    load_scenario,
    scenario_names,
    scenarios_dir,
)

MIRROR = Path("/work/.mirror/qiancheng0+EscapeBench/repo")
PEER_PACKAGE = "escapebench_upstream_env"
"""Name the peer's `src/env` package is imported under (its modules import each other
relatively, so the folder can be renamed)."""
clock = time.process_time
"""CPU seconds of this process: the loops are single-threaded and CPU-bound, and on a shared
machine wall time would count the other processes' turns too."""


# ---- the peer, exported from the mirror ----


@contextlib.contextmanager
def exported_release(mirror: Path) -> Iterator[Path | None]:
    """The release's `src/env` (renamed `PEER_PACKAGE`) and `data/` in a temporary folder; None
    when the mirror is absent or unreadable."""
    if not mirror.exists():
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="escapebench-") as tmp:
        root = Path(tmp)
        archive = subprocess.run(
            ["git", "--git-dir", str(mirror), "archive", "HEAD", "src/env", "data"],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            yield None
            return
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
                tar.extractall(root, filter="data")
            else:
                tar.extractall(root)  # our own mirror's archive
        (root / "src" / "env").rename(root / PEER_PACKAGE)
        yield root


class Peer:
    """EscapeBench's engine: `Graph(path)` loads a game, `describe()` renders what its agent
    reads, `react(text)` plays one action; the bag and counters are module globals."""

    def __init__(self, root: Path) -> None:
        sys.path.insert(0, str(root))
        self.graph_mod: ModuleType = importlib.import_module(f"{PEER_PACKAGE}.graph")
        self.globals: ModuleType = importlib.import_module(f"{PEER_PACKAGE}.global_vars")

    def load(self, path: Path) -> Any:
        self.globals.reset_global_vars()
        return self.graph_mod.Graph(str(path))

    def fresh(self, pristine: Any) -> Any:
        """A new game from an already loaded one (its own state lives in the objects and the
        module's globals)."""
        self.globals.reset_global_vars()
        return copy.deepcopy(pristine)

    def play(self, pristine: Any, steps: int, seed: int, codes: list[str]) -> tuple[float, int]:
        """Seconds for `steps` describe + random-action steps; restarts (untimed) at GAME END."""
        roll = rolls(seed, steps)
        graph = self.fresh(pristine)
        restarts = 0
        start = clock()
        for _ in range(steps):
            graph.describe()
            items: list[str] = []
            moves: list[str] = []
            for entry in graph.action_cache.values():
                if entry[0] == "scene":
                    moves.append(entry[1])
                else:
                    items.append(entry[1])
            bag = list(self.globals.bag.tools)
            action = choose(roll, items, items, moves, bag, codes)
            reward = graph.react(action)
            if "game end" in reward.lower():  # its rewards are capitalize()d: "game end!"
                paused = clock()
                graph = self.fresh(pristine)
                restarts += 1
                start += clock() - paused  # a restart is no step: not timed
        return clock() - start, restarts


# ---- ours ----


def ours_play(scenario: Scenario, steps: int, seed: int, codes: list[str]) -> tuple[float, int]:
    """Seconds for `steps` describe + random-action steps; restarts (untimed) at GAME END."""
    roll = rolls(seed, steps)
    game = EscapeGame(scenario)
    start_state = game.snapshot()
    restarts = 0
    start = clock()
    for _ in range(steps):
        view = game.view()  # scene description, possible actions, tools in bag, their names
        action = choose(roll, view.items, view.click_targets, view.move_labels, view.bag, codes)
        if game.step(action).game_end:
            paused = clock()
            game.restore(start_state)
            restarts += 1
            start += clock() - paused  # a restart is no step: not timed
    return clock() - start, restarts


def ours_env_play(scenario: Scenario, steps: int, seed: int, codes: list[str]) -> float:
    """Seconds for `steps` EscapeEnv steps (Prompt 2 rendered each step), same choice rule."""
    roll = rolls(seed, steps)
    env = EscapeEnv(EscapeGame(scenario), None)
    env.reset(seed=seed)
    game = env.game
    start = clock()
    for _ in range(steps):
        view = game.view()
        action = choose(roll, view.items, view.click_targets, view.move_labels, view.bag, codes)
        step = env.step(action)
        if step.terminated or step.truncated:
            env.reset(seed=seed)
    return clock() - start


ROLLS_PER_STEP = 4
"""The most `choose` draws for one action (a craft of a tool with itself falls through)."""


def rolls(seed: int, steps: int) -> Callable[[], float]:
    """The random floats of `steps` choices, drawn before the clock starts (both engines alike:
    the workload's own random numbers are no part of either engine's cost)."""
    rng = random.Random(seed)
    return iter([rng.random() for _ in range(ROLLS_PER_STEP * steps)]).__next__


def choose(
    roll: Callable[[], float],
    items: Sequence[str],
    targets: Sequence[str],
    moves: Sequence[str],
    bag: Sequence[str],
    codes: Sequence[str],
) -> str:
    """One random action among those the observation offers: `items` (interactable items),
    `targets` (those and the tools lying here), `moves` (move labels), `bag` (tool names);
    inputs from the game's own codes or a wrong one. `roll` gives floats in [0, 1); a pick from
    a sequence `seq` is `seq[int(roll() * len(seq))]`, written out (both engines pay this loop,
    so it is kept as cheap as it goes)."""
    r = roll()
    if r < 0.15 and items:
        return f"input({codes[int(roll() * len(codes))]}, {items[int(roll() * len(items))]})"
    if r < 0.4 and bag and items:
        return f"apply({bag[int(roll() * len(bag))]}, {items[int(roll() * len(items))]})"
    if r < 0.5 and len(bag) >= 2:
        base = bag[int(roll() * len(bag))]
        ingredient = bag[int(roll() * len(bag))]
        if ingredient != base:
            return f"craft({base}, {ingredient})"
    if r < 0.75 and moves:
        return f"move({moves[int(roll() * len(moves))]})"
    if targets:
        return f"click({targets[int(roll() * len(targets))]})"
    return f"move({moves[int(roll() * len(moves))]})" if moves else "click(nothing)"


def input_codes(scenario: Scenario) -> list[str]:
    codes = {
        w.arg
        for item in scenario.items
        for state in item.states
        for tr in state.transitions
        for w in tr.wait_for
        if w.kind == "input" and w.arg
    }
    return [*sorted(codes), "0000"]


# ---- measuring ----


@dataclass
class GameFigures:
    name: str
    ours_s: list[float]
    peer_s: list[float]
    env_s: list[float]
    ours_load: list[float]
    peer_load: list[float]
    restarts: tuple[int, int] = (0, 0)


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of one call."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def ours_load(path: Path) -> EscapeGame:
    return EscapeGame(load_scenario(path))


def measure(
    games: list[Path], peer: Peer | None, steps: int, rounds: int, load_repeat: int
) -> list[GameFigures]:
    figures: list[GameFigures] = []
    loaded: list[tuple[Scenario, Any, list[str]]] = []
    for path in games:
        scenario = load_scenario(path)
        pristine = peer.load(path) if peer else None
        loaded.append((scenario, pristine, input_codes(scenario)))
        figures.append(GameFigures(path.stem, [], [], [], [], []))
    sink = io.StringIO()
    for rnd in range(rounds):
        for k, (path, (scenario, pristine, codes)) in enumerate(zip(games, loaded, strict=True)):
            fig = figures[k]
            seed = 1000 * rnd + k
            # Alternate who goes first, so neither always runs on a warmer cache.
            order = [0, 1] if (rnd + k) % 2 == 0 else [1, 0]
            for who in order:
                if who == 0:
                    seconds, r_ours = ours_play(scenario, steps, seed, codes)
                    fig.ours_s.append(seconds)
                    fig.env_s.append(ours_env_play(scenario, steps, seed, codes))
                    fig.ours_load.append(timed(lambda p=path: ours_load(p), load_repeat))
                    fig.restarts = (r_ours, fig.restarts[1])
                elif peer is not None:
                    # The peer prints every input it checks; keep that off the terminal.
                    with contextlib.redirect_stdout(sink):
                        seconds, r_peer = peer.play(pristine, steps, seed, codes)
                    sink.seek(0)
                    sink.truncate()
                    fig.peer_s.append(seconds)
                    fig.peer_load.append(timed(lambda p=path: peer.load(p), load_repeat))
                    fig.restarts = (fig.restarts[0], r_peer)
    return figures


def report(figures: list[GameFigures], steps: int, has_peer: bool) -> None:
    med = statistics.median
    head = f"{'game':<16} {'ours steps/s':>13} {'peer steps/s':>13} {'ratio':>6}"
    head += f" {'ours load ms':>13} {'peer load ms':>13} {'ratio':>6} {'env steps/s':>12}"
    print(head)
    tot_ours = tot_peer = tot_env = tot_lo = tot_lp = 0.0
    for f in figures:
        ours, env, lo = med(f.ours_s), med(f.env_s), med(f.ours_load)
        tot_ours, tot_env, tot_lo = tot_ours + ours, tot_env + env, tot_lo + lo
        line = f"{f.name:<16} {steps / ours:13,.0f}"
        if has_peer:
            peer, lp = med(f.peer_s), med(f.peer_load)
            tot_peer, tot_lp = tot_peer + peer, tot_lp + lp
            line += f" {steps / peer:13,.0f} {peer / ours:5.2f}x"
            line += f" {lo * 1e3:13.2f} {lp * 1e3:13.2f} {lp / lo:5.2f}x"
        else:
            line += f" {'-':>13} {'-':>6} {lo * 1e3:13.2f} {'-':>13} {'-':>6}"
        print(line + f" {steps / env:12,.0f}")
    n = len(figures) * steps
    line = f"{'overall':<16} {n / tot_ours:13,.0f}"
    if has_peer:
        line += f" {n / tot_peer:13,.0f} {tot_peer / tot_ours:5.2f}x"
        line += f" {tot_lo * 1e3:13.2f} {tot_lp * 1e3:13.2f} {tot_lp / tot_lo:5.2f}x"
    else:
        line += f" {'-':>13} {'-':>6} {tot_lo * 1e3:13.2f} {'-':>13} {'-':>6}"
    print(line + f" {n / tot_env:12,.0f}")
    if has_peer:
        # The first round's games find nothing their scenario's earlier games read or built.
        first_ours, first_peer = (
            sum(f.ours_s[0] for f in figures),
            sum(f.peer_s[0] for f in figures),
        )
        print(
            f"{'first round':<16} {n / first_ours:13,.0f} {n / first_peer:13,.0f}"
            f" {first_peer / first_ours:5.2f}x  (each scenario's first games: nothing shared yet)"
        )
    restarts = sum(f.restarts[0] for f in figures), sum(f.restarts[1] for f in figures)
    peer_restarts = f", peer {restarts[1]}" if has_peer else ""
    print(
        f"(load: total ms over the games; GAME END restarts in the last round: ours "
        f"{restarts[0]}{peer_restarts}; env: ours through EscapeEnv, Prompt 2 at every step; "
        "goal: overall steps/s ratio >= 5x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4000, help="steps per game per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--load-repeat", type=int, default=3, help="loads per game per round")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help="EscapeBench's bare git dir")
    parser.add_argument("--games", default="game*.yaml", help="glob over the release's data/")
    args = parser.parse_args()
    # The release's slips are repaired with a logged warning per load; not news here.
    logging.getLogger("forkingpaths.benchmarks.escape.schema").setLevel(logging.ERROR)
    with exported_release(args.mirror) as root:
        if root is None:
            print(f"EscapeBench's mirror not found at {args.mirror}: measuring ours alone")
            games = [scenarios_dir() / f"{name}.yaml" for name in scenario_names()]
            print(f"{len(games)} shipped scenarios, {args.steps} steps each, {args.rounds} rounds")
            figures = measure(games, None, args.steps, args.rounds, args.load_repeat)
            report(figures, args.steps, has_peer=False)
            return
        peer = Peer(root)
        games = [path for path in sorted((root / "data").glob(args.games)) if loads(peer, path)]
        print(
            f"{len(games)} games of EscapeBench's release that both engines load, {args.steps} "
            f"steps each, {args.rounds} interleaved rounds, medians"
        )
        figures = measure(games, peer, args.steps, args.rounds, args.load_repeat)
        report(figures, args.steps, has_peer=True)


def loads(peer: Peer, path: Path) -> bool:
    """Both engines load the game (the issue counted 7 of the release's 36; all load today)."""
    try:
        load_scenario(path)
        peer.load(path)
    except Exception as exc:  # the peer's loader raises whatever its code meets
        print(f"{path.name}: skipped, does not load: {exc}")
        return False
    return True


if __name__ == "__main__":
    main()
