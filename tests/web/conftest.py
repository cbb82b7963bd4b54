"""Fixtures of the viewer tests: a runs folder of every benchmark, played once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.web.runs import play, small_quick_specs


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs folder holding one small run of each quick-suite configuration."""
    runs_dir = tmp_path_factory.mktemp("viewer-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORKINGPATHS_CACHE_DIR", str(runs_dir.parent / "viewer-cache"))
        play(small_quick_specs(), runs_dir)
    return runs_dir
