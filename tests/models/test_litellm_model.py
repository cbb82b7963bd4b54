"""Tests of the LiteLLM client's factory: the optional extra and the id format."""

from __future__ import annotations

import importlib.util

import pytest

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import check_model_access, make_model
from forkingpaths.models.runtime import ModelRuntime


@pytest.mark.skipif(importlib.util.find_spec("litellm") is not None, reason="litellm installed")
def test_litellm_without_the_extra_says_how_to_install() -> None:
    with pytest.raises(ConfigError, match=r"pip install 'forkingpaths\[litellm\]'"):
        check_model_access("litellm/anthropic/claude-sonnet-4")
    with pytest.raises(ConfigError, match=r"pip install 'forkingpaths\[litellm\]'"):
        make_model("litellm/anthropic/claude-sonnet-4", ModelOptions(), ModelRuntime(cache=False))


def test_litellm_id_needs_a_provider() -> None:
    with pytest.raises(ConfigError, match="litellm/<provider>/<model>"):
        make_model("litellm/claude", ModelOptions(), ModelRuntime(cache=False))
