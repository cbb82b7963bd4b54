"""Command-line text to run settings: `KEY=VALUE` options, benchmark flags and role models."""

from __future__ import annotations

from typing import Any

import yaml

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelOptions, RoleModel


def parse_options(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """`k=v` pairs -> dict; values read as YAML scalars (true, 3, 0.5, text)."""
    out: dict[str, Any] = {}
    for key, raw in parse_pairs(pairs, flag).items():
        try:
            out[key] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key] = raw
    return out


def parse_pairs(pairs: list[str] | None, flag: str) -> dict[str, str]:
    """`k=v` pairs -> dict of the values as typed (paths: `--input scores=1e3.csv`)."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {pair!r}")
        out[key.strip()] = raw
    return out


def parse_extra_options(args: list[str]) -> dict[str, Any]:
    """Options `run` does not know, read as benchmark options: `--puzzles PATH` is
    `-b puzzles=PATH` (dashes become underscores; a bare `--flag` is true)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise ConfigError(f"unexpected argument {token!r}; benchmark options read --NAME VALUE")
        name, sep, value = token[2:].partition("=")
        if not sep:
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                value, i = args[i + 1], i + 1
            else:
                value = "true"
        out[name.replace("-", "_")] = parse_options([f"x={value}"], token)["x"]
        i += 1
    return out


def parse_roles(
    models: list[str] | None, base_urls: list[str] | None, key_envs: list[str] | None
) -> dict[str, RoleModel]:
    """`--role judge=M` (+ `--role-base-url judge=URL`, `--role-api-key-env judge=VAR`) -> roles."""

    def pairs(values: list[str] | None, flag: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for pair in values or []:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise ConfigError(f"{flag} expects ROLE=VALUE, got {pair!r}")
            out[key.strip()] = value.strip()
        return out

    chosen = pairs(models, "--role")
    urls, envs = pairs(base_urls, "--role-base-url"), pairs(key_envs, "--role-api-key-env")
    stray = sorted((set(urls) | set(envs)) - set(chosen))
    if stray:
        raise ConfigError(
            f"endpoint given for role(s) {', '.join(stray)} without --role ROLE=MODEL"
        )
    return {
        role: RoleModel(
            model=model, options=ModelOptions(base_url=urls.get(role), api_key_env=envs.get(role))
        )
        for role, model in chosen.items()
    }
