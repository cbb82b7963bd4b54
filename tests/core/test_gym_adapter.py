"""Every registered benchmark's env passes Gymnasium's env checker through the adapter."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.registry import benchmark_names, make_benchmark
from forkingpaths.gym import make_instance_env, to_gymnasium

gymnasium = pytest.importorskip("gymnasium")


@pytest.mark.parametrize("name", benchmark_names())
def test_check_env_passes(name: str) -> None:
    from gymnasium.utils.env_checker import check_env

    bench = make_benchmark(name)
    env = to_gymnasium(bench.make_env(bench.instances(bench.default_split)[0]))
    check_env(env, skip_render_check=True)


def test_five_tuple_and_info_data() -> None:
    bench = make_benchmark("griddag")
    env = to_gymnasium(bench.make_env(bench.instances("main")[0]))
    text, info = env.reset(seed=0)
    assert text.startswith("OBSERVATION:") and "position" in info["data"]
    direction = info["data"]["available"][0]
    text, reward, terminated, truncated, info = env.step(direction)
    assert isinstance(reward, float) and info["valid"] is True
    assert not truncated and isinstance(terminated, bool)


def test_registered_ids_make_envs() -> None:
    from forkingpaths.gym import register_envs

    ids = register_envs()
    assert {
        "forkingpaths/Maze-L2-v0",
        "forkingpaths/Match2-Hard-v0",
        "forkingpaths/GridDag-v1",
    } <= set(ids)
    env = gymnasium.make("forkingpaths/Maze-L2-v0", index=3)
    text, info = env.reset(seed=1)
    maze = make_benchmark("eeb")
    instance = [i for i in maze.instances("test") if i.id.startswith("maze-l2-")][3]
    expected = maze.make_env(instance).reset(seed=1)
    assert text == expected.text and info["data"] == expected.data
    env.close()


def test_importing_forkingpaths_makes_the_ids_available() -> None:
    # Gymnasium's convention, in a fresh interpreter: no explicit registration call.
    script = (
        "import forkingpaths, gymnasium; gymnasium.register_envs(forkingpaths); "
        "env = gymnasium.make('forkingpaths/GridDag-v1', index=0); "
        "print(env.reset(seed=0)[0].split('.')[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip().startswith("OBSERVATION: You are at")


def test_a_protocol_env_steps_through_the_adapter() -> None:
    # TurtleSoup's step awaits its responder: the adapter drives it on a loop of its own.
    bench = make_benchmark("turtlesoup")
    instance = bench.instances(bench.default_split)[0]
    adapted = make_instance_env(
        "turtlesoup", instance.id, roles={"responder": "scripted/turtlesoup-responder"}
    )
    text, _ = adapted.reset(seed=0)
    assert text
    text, reward, terminated, truncated, info = adapted.step("Is the man alive?")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["answer"] in {"Yes", "No", "Unknown"} and info.get("valid", True)
    adapted.close()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"index": 10_000}, "index: griddag has"),
        ({"index": True}, "got True"),
        ({"roles": {"judge": "scripted/echo"}}, "roles: griddag has no role 'judge'"),
    ],
)
def test_bad_arguments_of_a_registered_id_are_named(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(needle)):
        make_instance_env("griddag", "", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("env_id", ["forkingpaths/Match2-Hard-v0", "forkingpaths/Maze-L3-v0"])
def test_registered_game_envs_pass_check_env(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    from forkingpaths.gym import register_envs

    register_envs()
    env = gymnasium.make(env_id, index=1)
    check_env(env.unwrapped, skip_render_check=True)


def test_closing_the_adapter_closes_the_role_models_it_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[list[str]] = []

    async def record(models: list[object]) -> None:
        closed.append([m.name for m in models])  # type: ignore[attr-defined]

    monkeypatch.setattr("forkingpaths.gym.close_models", record)
    bench = make_benchmark("turtlesoup")
    instance = bench.instances(bench.default_split)[0]
    env = make_instance_env(
        "turtlesoup", instance.id, roles={"responder": "scripted/turtlesoup-responder"}
    )
    env.reset(seed=0)
    env.close()
    assert closed == [["scripted/turtlesoup-responder"]]
