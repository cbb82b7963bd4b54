"""Gymnasium adapter: any forkingpaths Env as a `gymnasium.Env` with text spaces, and its ids."""

from __future__ import annotations

import asyncio
import string
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, OrderEnforcing
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.registry import (
    BUILTIN_BENCHMARKS,
    GYM_IDS,
    benchmark_table,
    load_entry_point,
    make_benchmark,
)
from forkingpaths.models.factory import close_models, make_model

if TYPE_CHECKING:
    import gymnasium

# Observations are prose in any language (TurtleSoup is bilingual): every printable character of
# the Basic Multilingual Plane, plus whitespace, may appear in them.
TEXT_CHARSET = string.whitespace + "".join(
    c for c in map(chr, range(0x20, 0x10000)) if c.isprintable()
)
MAX_TEXT_LENGTH = 1 << 16


def to_gymnasium(
    env: Env,
    *,
    max_text_length: int = MAX_TEXT_LENGTH,
    models: Sequence[ChatModel] = (),
) -> gymnasium.Env[str, str]:
    """Wrap `env` for reinforcement-learning code: observations and actions are strings,
    `step` returns Gymnasium's 5-tuple and `info["data"]` carries `Observation.data`. An env
    whose protocol awaits models or services is driven on an event loop the adapter owns, so
    the same envs the runner plays serve Gymnasium code.

    `models` (the env's role models) are closed with the env, on the adapter's loop.

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
            self._loop: asyncio.Runner | None = None
            self.observation_space = spaces.Text(max_text_length, charset=TEXT_CHARSET)
            self.action_space = spaces.Text(max_text_length, charset=TEXT_CHARSET)

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[str, dict[str, Any]]:
            super().reset(seed=seed)
            observation = self.env.reset(seed=seed, options=options)
            return observation.text, {"data": observation.data}

        def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
            if self._loop is None:
                self._loop = asyncio.Runner()
            result = self._loop.run(self.env.astep(action))
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
            if self._loop is None and models:
                self._loop = asyncio.Runner()
            if self._loop is not None:
                # The role models' clients (a local model's server) close on the loop they used.
                self._loop.run(close_models(models))
                self._loop.close()
                self._loop = None

    return GymnasiumEnv()


def make_instance_env(
    benchmark: str,
    prefix: str,
    index: int = 0,
    roles: Mapping[str, str] | None = None,
    **options: Any,
) -> gymnasium.Env[str, str]:
    """Entry point of the registered ids: the `index`-th instance whose id starts with
    `prefix` (e.g. "maze-l2-") of `benchmark`, built with the benchmark `options` and the
    protocol's `roles` (role -> model id, e.g. `{"responder": "openai/gpt-4.1"}`)."""
    bench = make_benchmark(benchmark, **options)
    pool = [i for split in bench.splits for i in bench.instances(split) if i.id.startswith(prefix)]
    pool = list({i.id: i for i in pool}.values())
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(pool):
        raise ConfigError(
            f"index: {benchmark} has {len(pool)} instances starting with {prefix!r}; "
            f"expected 0..{len(pool) - 1}, got {index!r}"
        )
    unknown = sorted(set(roles or {}) - set(bench.model_roles))
    if unknown:
        raise ConfigError(
            f"roles: {benchmark} has no role {', '.join(map(repr, unknown))}; "
            f"its roles: {', '.join(bench.model_roles) or '(none)'}"
        )
    models = {role: make_model(model_id) for role, model_id in (roles or {}).items()}
    env = OrderEnforcing(bench.make_env(pool[index], models))
    return to_gymnasium(env, models=list(models.values()))


def register_envs() -> list[str]:
    """Register the Gymnasium ids of every benchmark (built-in ones from `GYM_IDS`, plugins'
    from their `gym_ids`), e.g. `gymnasium.make("forkingpaths/Maze-L2-v0", index=3)`.
    `import forkingpaths` calls it when gymnasium is installed, Gymnasium's convention
    (`gymnasium.register_envs(forkingpaths)`); registering again is harmless."""
    import gymnasium

    table: dict[str, tuple[str, str]] = dict(GYM_IDS)
    for bid, path in benchmark_table().items():
        if bid in BUILTIN_BENCHMARKS:
            continue  # built-ins are listed in GYM_IDS: no benchmark module is imported
        cls = load_entry_point(path)
        table.update({env_id: (cls.name, p) for env_id, p in getattr(cls, "gym_ids", {}).items()})
    for env_id, (name, prefix) in table.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point="forkingpaths.gym:make_instance_env",
                kwargs={"benchmark": name, "prefix": prefix},
            )
    return list(table)
