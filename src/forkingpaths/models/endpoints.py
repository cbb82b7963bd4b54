"""Endpoints and keys of the remote model APIs, and each provider's access check: light
modules only, so refusing a bad model costs no SDK import."""

from __future__ import annotations

import importlib.util
import os

from forkingpaths.core.errors import ConfigError, MissingAPIKey
from forkingpaths.core.records import ModelOptions

OPENAI_KEY_ENV = "OPENAI_API_KEY"
"""Where `openai/...` models read their key unless `api_key_env` names another variable."""

PLACEHOLDER_KEY = "EMPTY"
"""Key sent to OpenAI-compatible servers that need none (vLLM, Ollama, llama.cpp accept it)."""

LITELLM_MISSING = (
    "model {model_id!r} needs LiteLLM, which is an optional extra:"
    " pip install 'forkingpaths[litellm]'"
)


def openai_api_key(options: ModelOptions) -> str:
    """Key of an `openai/...` model: from `api_key_env` if set, else OPENAI_API_KEY."""
    env = options.api_key_env or OPENAI_KEY_ENV
    key = os.environ.get(env)
    if not key:
        raise MissingAPIKey(
            f"openai models need an API key: environment variable {env} is not set"
            f" (export {env}=..., or name another variable with --api-key-env)"
        )
    return key


def named_api_key(options: ModelOptions, without_it: str) -> str | None:
    """The key in the variable `--api-key-env` names (then required), None when none is named;
    `without_it` tells the user what dropping the flag does."""
    if options.api_key_env is None:
        return None
    key = os.environ.get(options.api_key_env)
    if not key:
        raise MissingAPIKey(
            f"--api-key-env names {options.api_key_env!r}, but that environment variable is not"
            f" set; export it, or drop --api-key-env {without_it}"
        )
    return key


def openai_compat_api_key(options: ModelOptions) -> str:
    """Key of an `openai-compat/...` model: from `api_key_env` if set (then required), else the
    placeholder local servers accept."""
    return named_api_key(options, "for servers that need no key") or PLACEHOLDER_KEY


def checked_base_url(base_url: str | None, *, required: bool) -> str | None:
    """`base_url` validated as an http(s) URL; ConfigError naming --base-url otherwise."""
    if base_url is None or not base_url.strip():
        if required:
            raise ConfigError(
                "openai-compat models need --base-url (the server's OpenAI-compatible endpoint,"
                " e.g. http://localhost:8000/v1); got none"
            )
        return None
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"--base-url must be an http:// or https:// URL (e.g. http://localhost:8000/v1),"
            f" got {base_url!r}"
        )
    return base_url


def litellm_api_key(options: ModelOptions) -> str | None:
    """Key from `api_key_env` when given (then required); None lets LiteLLM read its provider's
    usual variable (ANTHROPIC_API_KEY, GEMINI_API_KEY...)."""
    return named_api_key(options, "to use the provider's usual variable")


def check_openai(name: str, options: ModelOptions) -> None:
    """`openai/...`: an optional http(s) base URL and a key."""
    checked_base_url(options.base_url, required=False)
    openai_api_key(options)


def check_openai_compat(name: str, options: ModelOptions) -> None:
    """`openai-compat/...`: a base URL, and the key `--api-key-env` names if it names one."""
    checked_base_url(options.base_url, required=True)
    openai_compat_api_key(options)


def check_litellm(name: str, options: ModelOptions) -> None:
    """`litellm/...`: the extra installed and the named key set."""
    if importlib.util.find_spec("litellm") is None:
        raise ConfigError(LITELLM_MISSING.format(model_id=f"litellm/{name}"))
    checked_base_url(options.base_url, required=False)
    litellm_api_key(options)
