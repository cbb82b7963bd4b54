"""Escape engine: steps/s replaying a fixed pool of random action texts on the largest shipped
scenario (target >= 20,000/s on ~8 scenes / 40 objects), and the cost of snapshot + restore in
microseconds.

The pool (about 2,000 texts over every name of the scenario, most of them failing tries) is
played over and over in one order, so after its first pass most steps are results the engine
remembers for an unchanged world: this is the cost of a repeated step, a floor, not of play.
Steps chosen from what the observation offers, first tries and rendering included, are measured
by `bench_escape_vs_escapebench.py` (against EscapeBench's engine).

Falls back to a built-in synthetic scenario (8 scenes, 48 objects) while none is shipped."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.schema import (
    Scenario,
    load_scenario,
    scenario_names,
    scenarios_dir,
)


def synthetic_scenario(n_scenes: int = 8, per_scene: int = 3) -> Scenario:
    """A ring of scenes, each with `per_scene` items (two-state, click and apply transitions)
    and `per_scene` tools; the last scene's door ends the game."""
    lines: list[str] = []
    for s in range(n_scenes):
        lines += [f"- name: room{s}"]
        if s == 0:
            lines += ['  objective: "Reach the last room and open its door."']
        lines += [f'  desc: "Room number {s}."', "  scene_relations:"]
        lines += [f"    Go to room {(s + 1) % n_scenes}: room{(s + 1) % n_scenes}"]
        lines += [f"    Go to room {(s - 1) % n_scenes}: room{(s - 1) % n_scenes}", "  items:"]
        for i in range(per_scene):
            reward = "The door opens. GAME END!" if s == n_scenes - 1 and i == 0 else "Click."
            lines += [
                f'  - position: "Spot {i}"',
                "    item:",
                f"      name: box {s}-{i}",
                "      states:",
                f'      - desc: "A closed box {s}-{i}."',
                '        neg_reward: "It stays shut."',
                "        transitions:",
                f"        - wait_for: [apply, tool {s}-{i}]",
                "          trigger: [change_state, 1]",
                f'          reward: "{reward}"',
                "        - wait_for: [input, 1234]",
                "          trigger: [change_state, 1]",
                '          reward: "The lock clicks."',
                f'      - desc: "An open box {s}-{i}."',
                "        transitions:",
                "        - wait_for: [click]",
                "          trigger: [change_state, 0]",
                '          reward: "You close it."',
            ]
        lines += ["  tools:"]
        for i in range(per_scene):
            lines += [
                f'  - position: "Shelf {i}"',
                "    tool:",
                f"      name: tool {s}-{i}",
                "      states:",
                f'      - desc: "Tool {s}-{i}."',
                f"        apply_to: [box {s}-{i}, box {s}-{(i + 1) % per_scene}]",
            ]
    return load_scenario("\n".join(lines) + "\n", name="synthetic")


def largest_scenario() -> Scenario:
    best: Scenario | None = None
    for name in scenario_names():
        scenario = load_scenario(scenarios_dir() / f"{name}.yaml")
        size = len(scenario.items) + len(scenario.tools)
        if best is None or size > len(best.items) + len(best.tools):
            best = scenario
    return best or synthetic_scenario()


def action_pool(scenario: Scenario, rng: random.Random, count: int = 2000) -> list[str]:
    """Random actions over the scenario's names: mostly well-formed, some nonsense."""
    items = [i.name for i in scenario.items]
    tools = [t.name for t in scenario.tools]
    scenes = [s.name for s in scenario.scenes]
    labels = [label for s in scenario.scenes for label, _ in s.relations]
    out = []
    for _ in range(count):
        kind = rng.choice(["click", "click", "tool", "apply", "move", "label", "input", "craft"])
        if kind == "click":
            out.append(f"click({rng.choice(items)})")
        elif kind == "tool":
            out.append(f"Action: click({rng.choice(tools)})")
        elif kind == "apply":
            out.append(f"apply({rng.choice(tools)}, {rng.choice(items)})")
        elif kind == "move":
            out.append(f"move({rng.choice(scenes)})")
        elif kind == "label":
            out.append(f"move({rng.choice(labels)})" if labels else "move(nowhere)")
        elif kind == "input":
            out.append(f"input({rng.randrange(10_000):04d}, {rng.choice(items)})")
        else:
            out.append(f"craft({rng.choice(tools)}, {rng.choice(tools)})")
    out += ["look around", "click()", "jump(high)"]
    return out


def steps_per_second(game: EscapeGame, actions: list[str], steps: int) -> float:
    start_state = game.snapshot()
    n = len(actions)
    start = time.perf_counter()
    for k in range(steps):
        if game.step(actions[k % n]).game_end:
            game.restore(start_state)
    return steps / (time.perf_counter() - start)


def snapshot_restore_us(game: EscapeGame, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        game.restore(game.snapshot())
    return (time.perf_counter() - start) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--scenario", type=Path, help="a scenario YAML (default: the largest)")
    args = parser.parse_args()
    scenario = load_scenario(args.scenario) if args.scenario else largest_scenario()
    rng = random.Random(0)
    actions = action_pool(scenario, rng)
    rng.shuffle(actions)
    game = EscapeGame(scenario)
    rate = steps_per_second(game, actions, args.steps)
    # Mid-game state for the snapshot figure: some tools collected, some states changed.
    cost = snapshot_restore_us(game, 100_000)
    size = (
        f"{len(scenario.scenes)} scenes, {len(scenario.items)} items, {len(scenario.tools)} tools"
    )
    print(f"scenario        : {scenario.id} ({size})")
    print(f"engine          : {rate:10,.0f} steps/s, a fixed pool replayed (target >= 20,000)")
    print(f"snapshot+restore: {cost:10.2f} us")


if __name__ == "__main__":
    main()
