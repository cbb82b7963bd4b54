"""Gymnasium adapter: any forkingpaths Env as a `gymnasium.Env` with text spaces."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

from forkingpaths.core.errors import ConfigError

if TYPE_CHECKING:
    import gymnasium

    from forkingpaths.core.env import Env

# Observations are prose in any language (TurtleSoup is bilingual): every printable character of
# the Basic Multilingual Plane, plus whitespace, may appear in them.
TEXT_CHARSET = string.whitespace + "".join(
    c for c in map(chr, range(0x20, 0x10000)) if c.isprintable()
)
MAX_TEXT_LENGTH = 1 << 16


def to_gymnasium(env: Env, *, max_text_length: int = MAX_TEXT_LENGTH) -> gymnasium.Env[str, str]:
    """Wrap `env` for reinforcement-learning code: observations and actions are strings,
    `step` returns Gymnasium's 5-tuple and `info["data"]` carries `Observation.data`.

    Needs the `gymnasium` package (`pip install 'forkingpaths[gym]'`).
    """
    try:
        import gymnasium
        from gymnasium import spaces
    except ImportError as exc:  # an optional extra
        raise ConfigError(
            "the Gymnasium adapter needs gymnasium: pip install 'forkingpaths[gym]'"
        ) from exc

    class GymnasiumEnv(gymnasium.Env[str, str]):
        """A forkingpaths Env behind Gymnasium's API (P1 of STYLE.md: the 5-tuple)."""

        metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - Gymnasium's convention

        def __init__(self) -> None:
            self.env = env
            self.observation_space = spaces.Text(max_text_length, charset=TEXT_CHARSET)
            self.action_space = spaces.Text(max_text_length, charset=TEXT_CHARSET)

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[str, dict[str, Any]]:
            super().reset(seed=seed)
            observation = self.env.reset(seed=seed, options=options)
            return observation.text, {"data": observation.data}

        def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
            result = self.env.step(action)
            info = {**result.info, "data": result.observation.data}
            return (
                result.observation.text,
                float(result.reward),
                result.terminated,
                result.truncated,
                info,
            )

        def close(self) -> None:
            self.env.close()

    return GymnasiumEnv()


def make_instance_env(
    benchmark: str, prefix: str, index: int = 0, **options: Any
) -> gymnasium.Env[str, str]:
    """Entry point of the registered ids: the `index`-th instance whose id starts with
    `prefix` (e.g. "maze-l2-") of `benchmark`, built with the benchmark `options`."""
    from forkingpaths.core.registry import make_benchmark

    bench = make_benchmark(benchmark, **options)
    pool = [i for split in bench.splits for i in bench.instances(split) if i.id.startswith(prefix)]
    pool = list({i.id: i for i in pool}.values())
    if not 0 <= index < len(pool):
        raise ConfigError(
            f"index: {benchmark} has {len(pool)} instances starting with {prefix!r}; "
            f"expected 0..{len(pool) - 1}, got {index!r}"
        )
    return to_gymnasium(bench.make_env(pool[index]))


def register_envs() -> list[str]:
    """Register every benchmark's Gymnasium ids (`Benchmark.gym_ids`), e.g.
    `gymnasium.make("forkingpaths/Maze-L2-v0", index=3)`. Explicit, not at import: registering
    mutates Gymnasium's global registry, which only the caller should decide to do."""
    import gymnasium

    from forkingpaths.core.registry import benchmark_table, load_entry_point

    registered = []
    for path in benchmark_table().values():
        cls = load_entry_point(path)
        for env_id, prefix in getattr(cls, "gym_ids", {}).items():
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id,
                    entry_point="forkingpaths.core.gym:make_instance_env",
                    kwargs={"benchmark": cls.name, "prefix": prefix},
                )
            registered.append(env_id)
    return registered
