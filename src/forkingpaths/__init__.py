"""forkingpaths: benchmarks of how language-model agents explore, diverge and imagine."""

from importlib.util import find_spec

from forkingpaths.core.version import __version__

# Gymnasium's convention for environment packages: importing the package makes its ids
# available (`import forkingpaths; gymnasium.make("forkingpaths/Maze-L2-v0")`). Only where the
# `gym` extra is installed; registration imports no benchmark code.
if find_spec("gymnasium") is not None:
    from forkingpaths.gym import register_envs

    register_envs()

__all__ = ["__version__"]
