"""forkingpaths: benchmarks of how language-model agents explore, diverge and imagine."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("forkingpaths")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
