"""forkingpaths: benchmarks of how language-model agents explore, diverge and imagine."""

from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec

try:
    __version__ = version("forkingpaths")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

# Gymnasium's convention for environment packages: importing the package makes its ids
# available (`import forkingpaths; gymnasium.make("forkingpaths/Maze-L2-v0")`). Only where the
# `gym` extra is installed; registration imports no benchmark code.
if find_spec("gymnasium") is not None:
    from forkingpaths.gym import register_envs

    register_envs()

__all__ = ["__version__"]
