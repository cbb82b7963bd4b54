"""Gymnasium adapter: any forkingpaths Env as a `gymnasium.Env` with text spaces."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

from forkingpaths.core.errors import ConfigError

if TYPE_CHECKING:
    import gymnasium

    from forkingpaths.core.env import Env

# Observations are prose: every printable ASCII character may appear in them.
TEXT_CHARSET = string.printable
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
