"""Content digests that pin a run's input files (`levels_sha256`, `truths_sha256`)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError

SHA256 = re.compile(r"[0-9a-f]{64}")
"""A digest as `content_digest` writes it: 64 lowercase hex digits."""


def content_digest(path: str | Path, option: str) -> str:
    """sha256 (hex) of what a run reads from `path`: a file's bytes; for a folder, every
    `*.json` under it (what `load_level_path` reads), each by its relative path and bytes, in
    path order. `option` names the option that gave the path, for the refusal of a missing
    one."""
    root = Path(path)
    if root.is_file():
        return hashlib.sha256(root.read_bytes()).hexdigest()
    if not root.is_dir():
        raise ConfigError(f"{option}: {str(path)!r} does not exist; give a file or folder")
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*.json"), key=lambda f: f.relative_to(root).as_posix()):
        rel = file.relative_to(root).as_posix()
        digest.update(f"{rel}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def check_digest(digest: Any, option: str) -> str:
    """`digest` if it reads as a sha256, else refused in one line naming `option`."""
    if not isinstance(digest, str) or not SHA256.fullmatch(digest):
        raise ConfigError(f"{option}: got {digest!r}; allowed values: 64 lowercase hex digits")
    return digest


def check_pinned(path: str | Path, option: str, digest: str, digest_option: str) -> None:
    """Refuse `path` (given as `option`) in one line unless its content is the one the run
    pinned as `digest` (`digest_option`): a file edited since the run was planned must not
    feed the old run's remaining episodes."""
    got = content_digest(path, option)
    if got != digest:
        raise ConfigError(
            f"{digest_option}: {option} {str(path)!r} no longer holds the content the run was "
            f"made with (sha256 {got}, pinned {digest}); give that content back, or start a "
            "new run"
        )
