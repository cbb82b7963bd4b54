"""Every registered benchmark's env passes Gymnasium's env checker through the adapter."""

from __future__ import annotations

import pytest

from forkingpaths.core.registry import benchmark_names, make_benchmark
from forkingpaths.gym import to_gymnasium

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
    assert "position" in text.lower() or info["data"]
    env.close()


@pytest.mark.parametrize("env_id", ["forkingpaths/Match2-Hard-v0", "forkingpaths/Maze-L3-v0"])
def test_registered_game_envs_pass_check_env(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    from forkingpaths.gym import register_envs

    register_envs()
    env = gymnasium.make(env_id, index=1)
    check_env(env.unwrapped, skip_render_check=True)
