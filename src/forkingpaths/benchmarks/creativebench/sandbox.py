"""The CreativeBench sandbox: verdicts for untrusted Python programs from warm, isolated workers.

The paper validates every solution by executing it in AutoCodeBench's sandbox (§4.2 Quality;
App. B.2). Ours runs `source + "\\n\\n" + tests` as `__main__` (the source without its own
top-level `if __name__ == "__main__":` block: the tests' guard is the one that runs) and
classifies the outcome (`docs/dev/creativebench.md` §2):

- SYNTAX_ERROR: the program does not compile (SyntaxError, IndentationError, null bytes).
- WRONG_ANSWER: an AssertionError escaped; `detail` names the line of the program and the message.
- TIME_LIMIT_EXCEEDED: the wall-clock or CPU-time limit was hit.
- MEMORY_LIMIT_EXCEEDED: MemoryError, or a crash at the address-space limit.
- RUNTIME_ERROR: any other exception, a non-zero exit status, a signal, a program that killed
  its worker, or an exit with status 0 before the program's last top-level statement ran
  (`sys.exit(0)`, `os._exit(0)`, `unittest.main()`, an exit handler): "exited before the tests
  finished", with the reason in `detail`.
- PASSED: exit status 0 and the harness's report that the whole program ran to its end. The report
  carries a per-job nonce the harness gets from the worker through a pipe once the program is over
  (never in the program text or environment), so printing a fake report does not pass. Tests
  must end by falling off their last line, as CreativeBench's `if __name__ == "__main__": test()`
  does; tests that end in `unittest.main()` or `sys.exit(0)` are judged RUNTIME_ERROR. (The
  program shares its process with the harness: code written to cheat, reading the harness's
  nonce descriptor itself before signing a report, is not what the nonce stops.)

Isolation (`ExecResult.isolation`, strongest first; `isolation="auto"` takes the first that starts
and passes a smoke test, and logs a warning once per Sandbox when that is not bwrap):

- "bwrap": bubblewrap around each worker with a root built from scratch: /usr, /bin, /lib*, the
  loader cache and a few other files of /etc, and the interpreter's prefixes, all read-only;
  private /tmp, /var/tmp and /dev/shm; fresh /proc and /dev; no network; a PID namespace. /root,
  /home, /run, /var and the project checkout do not exist inside.
- "namespaces": the worker does it itself with Linux user, mount, network, IPC, UTS and PID
  namespaces (`sandbox_worker.py`): the host's mounts read-only, empty read-only tmpfs over
  /root, /home, /run, /var and the project checkout (the interpreter's prefixes bound back at the
  same paths), private /tmp, /var/tmp and /dev/shm.
- "rlimits": resource limits, a private working directory and a stripped environment only; no
  network or filesystem isolation. As a non-root user the job runs as that user and CAN READ
  THAT USER'S OWN FILES (and leave files in /tmp); as root it runs as a uid of its own, reads
  only world-readable files, and what that uid leaves in /tmp, /var/tmp and /dev/shm is deleted
  after each job.

Every job runs in a child forked from a warm worker with: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE (for
files the program writes), RLIMIT_NPROC and no core files; a fresh private working directory (also
HOME and TMPDIR) removed afterwards; the environment PATH, HOME, LANG, TMPDIR, PYTHONHASHSEED (0)
plus OMP/OPENBLAS/MKL_NUM_THREADS=1; no capabilities at all (none ambient) and no_new_privs.
stdout and stderr go through pipes the worker drains as the job runs, keeping the last
`output_bytes` of each: a program that prints gigabytes gets its own verdict with the tails.
RLIMIT_NPROC counts a user's threads and the kernel does not enforce it for root, so as root
each worker gives its jobs an unprivileged uid of their own (inside a user namespace where there is
one); then the limit counts only that worker's job processes, and the program can neither signal
the worker nor read or write files root owns. Such a uid cannot search /root, so an interpreter
under it (pyenv) is shown to jobs by binding exactly its prefixes into an otherwise empty /root
(at rlimits level through a mount namespace of the worker's), never through a capability. After
each job every process it left behind is killed: the worker is a child subreaper, so processes in
a new session or double-forked are still below it.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError, ForkingPathsError, InvalidFile, shown

log = logging.getLogger(__name__)

ISOLATION_LEVELS = ("bwrap", "namespaces", "rlimits")
"""Isolation levels, strongest first; `Sandbox(isolation=...)` also takes "auto"."""

PYTHON_ENV = "FORKINGPATHS_SANDBOX_PYTHON"
"""Environment variable naming the interpreter that runs programs."""

SANDBOX_VENV = ".sandbox-venv"
"""The virtual environment `scripts/make_sandbox_env.sh` makes: what the paper's rows import
(numpy < 2.4, scipy, pandas, scikit-learn, beautifulsoup4, pillow, requests, pytest)."""

RELEASE_TIMEOUT_S = 30.0
"""Seconds per execution the paper's release asks its sandbox for (`request_extensions` timeout
30 at every call site of CreativeGen and evaluation/)."""

DEFAULT_MEMORY_MB = 2048
"""Address-space limit of a job by default. The paper's sandbox states none, but its release rows
passed it: problem_152 L4-L6 build a 10-million-entry dict (about 1.3 GB), refused under 1024 MB."""

WORKER_START_S = 30.0
"""Longest wait for a worker to announce itself."""

RESPONSE_GRACE_S = 30.0
"""A worker enforces the wall limit itself; past the limit plus this it is deemed hung. What it
does after a job is bounded well below this (`sandbox_worker.LEFTOVER_KILL_S` killing leftovers,
then retiring; `OUTPUT_DRAIN_S` reading the last output)."""

SMOKE_PROGRAM = (
    "import colorsys, decimal, json, os\n"
    "open(os.__file__, 'rb').close()\n"
    "print(json.dumps({'sandbox': 'ok'}))\n"
)
"""What the first worker of a level runs before the level is trusted (it reads the standard
library from disk: the job uid must reach the interpreter without any capability)."""


class Verdict(StrEnum):
    """How one execution ended."""

    PASSED = "PASSED"
    WRONG_ANSWER = "WRONG_ANSWER"
    TIME_LIMIT_EXCEEDED = "TIME_LIMIT_EXCEEDED"
    MEMORY_LIMIT_EXCEEDED = "MEMORY_LIMIT_EXCEEDED"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    SYNTAX_ERROR = "SYNTAX_ERROR"


class SandboxUnavailable(ForkingPathsError):
    """No worker could be started at the requested isolation, or the sandbox is closed."""


@dataclass(frozen=True)
class Limits:
    """Per-execution limits."""

    wall_s: float = 10.0
    cpu_s: float = 10.0
    memory_mb: int = DEFAULT_MEMORY_MB
    file_mb: int = 16
    nproc: int = 32
    output_bytes: int = 65536

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ConfigError(f"Limits.{name}: expected seconds > 0, got {shown(value)}")
        for name, least in (("memory_mb", 64), ("file_mb", 1), ("nproc", 1), ("output_bytes", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(
                    f"Limits.{name}: expected a whole number >= {least}, got {shown(value)}"
                )


@dataclass(frozen=True)
class ExecResult:
    """The verdict of one execution and what it printed."""

    verdict: Verdict
    isolation: str
    duration_s: float
    stdout_tail: str
    stderr_tail: str
    detail: str
    python: str = ""
    """The interpreter the program ran under (`sandbox_python()` or the Sandbox's `python`)."""

    def to_json(self) -> dict:
        return {
            "verdict": str(self.verdict),
            "isolation": self.isolation,
            "duration_s": self.duration_s,
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
            "python": self.python,
        }


def strip_main_guard(source: str) -> str:
    """`source` with each top-level `if __name__ == "__main__":` block blanked out (its lines
    left empty, so that line numbers hold); unchanged when it does not parse or has none."""
    if "__main__" not in source:
        return source  # no guard, and no parse on the way to every job
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, ast.If) and _is_main_test(node.test)
    ]
    if not spans:
        return source
    lines = source.splitlines(keepends=True)
    for start, end in spans:
        for i in range(start - 1, min(end, len(lines))):
            lines[i] = "\n" if lines[i].endswith(("\n", "\r")) else ""
    return "".join(lines)


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def program_text(source: str, tests: str) -> str:
    """The program a job runs: the solution without its main guard, a blank line, the tests."""
    return strip_main_guard(source) + "\n\n" + tests


def sandbox_python() -> str:
    """$FORKINGPATHS_SANDBOX_PYTHON, else .sandbox-venv/bin/python, else sys.executable (warned)."""
    named = os.environ.get(PYTHON_ENV)
    if named:
        return named
    roots = [Path.cwd()]
    checkout = Path(__file__).resolve().parents[4]  # src/forkingpaths/benchmarks/creativebench
    if (checkout / "pyproject.toml").is_file():
        roots.append(checkout)
    for root in roots:
        candidate = root / SANDBOX_VENV / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    log.warning(
        "no %s (run scripts/make_sandbox_env.sh) and no $%s: programs run under %s, "
        "without numpy, pandas or scikit-learn unless it has them",
        SANDBOX_VENV,
        PYTHON_ENV,
        sys.executable,
    )
    return sys.executable


def _check_python(python: str) -> str:
    path = Path(python)
    if not path.exists():
        raise ConfigError(f"sandbox python: {python!r} does not exist (set ${PYTHON_ENV})")
    if not os.access(path, os.X_OK) or path.is_dir():
        raise ConfigError(f"sandbox python: {python!r} is not an executable file")
    return os.path.abspath(python)


def _checkouts() -> list[str]:
    """The project checkout(s) a namespaced worker hides: ours, and the current directory when
    it is a project (the worker refuses to hide anything the system needs)."""
    found = []
    checkout = Path(__file__).resolve().parents[4]  # src/forkingpaths/benchmarks/creativebench
    if (checkout / "pyproject.toml").is_file():
        found.append(str(checkout))
    with contextlib.suppress(OSError):
        cwd = Path.cwd().resolve()
        if any((cwd / marker).exists() for marker in ("pyproject.toml", ".git")):
            found.append(str(cwd))
    return sorted(set(found))


@functools.cache
def bwrap_options(bwrap: str) -> tuple[str, ...]:
    """Of the bubblewrap options the worker uses when they exist (`--perms`, `--size`), those
    this `bwrap` lists in its help."""
    try:
        text = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(option for option in ("--perms", "--size") if option in text)


def _worker_env(hash_seed: str) -> dict[str, str]:
    # Built from scratch, never copied from os.environ: no API key reaches a worker or a program.
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/",
        "LANG": "C.UTF-8",
        "TMPDIR": tempfile.gettempdir(),
        "PYTHONHASHSEED": hash_seed,
    }


class _Worker:
    """One warm worker process (with its launcher) and the JSON-lines conversation with it."""

    def __init__(self, python: str, source: str, config: dict[str, Any], limit: int) -> None:
        self.python, self.source, self.config, self.limit = python, source, config, limit
        self.proc: asyncio.subprocess.Process | None = None
        self.base: str | None = None
        self.next_id = 0
        self.broken = False
        self._stderr: list[bytes] = []
        self._drain: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return not self.broken and self.proc is not None and self.proc.returncode is None

    async def start(self) -> None:
        await self.close()
        self._stderr, self.broken = [], False
        self.proc = await asyncio.create_subprocess_exec(
            self.python,
            "-s",
            "-c",
            self.source,
            json.dumps(self.config),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_worker_env(str(self.config.get("hash_seed", "0"))),
            start_new_session=True,  # Ctrl-C at a terminal reaches us, not the workers
            limit=self.limit,
        )
        self._drain = asyncio.create_task(self._keep_stderr(self.proc))
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), WORKER_START_S)
        except TimeoutError:
            line = b""
        try:
            ready = json.loads(line) if line.strip() else {}
        except ValueError:
            ready = {}
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            reason = ready.get("error") if isinstance(ready, dict) else None
            await self.close()
            tail = b"".join(self._stderr).decode("utf-8", "replace").strip()[-500:]
            raise SandboxUnavailable(reason or tail or "the worker exited before it was ready")
        self.base = ready.get("base")

    async def _keep_stderr(self, proc: asyncio.subprocess.Process) -> None:
        # Drained so that a chatty launcher (bubblewrap's messages) never blocks on a full pipe.
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(4096):
            self._stderr = [*self._stderr[-3:], chunk]

    async def execute(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """The worker's answer; None when the worker died or hung (it is then killed)."""
        if self.proc is None or self.proc.stdin is None or self.proc.stdout is None:
            return None
        self.next_id += 1
        job = {**job, "id": self.next_id}
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            await self.proc.stdin.drain()
            deadline = float(job["wall_s"]) + RESPONSE_GRACE_S
            while True:
                line = await asyncio.wait_for(self.proc.stdout.readline(), deadline)
                if not line:
                    break
                reply = json.loads(line)
                if reply.get("id") == job["id"]:
                    if reply.get("retire"):
                        self.broken = True  # it could not clean up after the job: replaced
                    return reply
        except (TimeoutError, ConnectionError, ValueError, asyncio.LimitOverrunError):
            pass
        self.kill()
        return None

    def kill(self) -> None:
        self.broken = True  # restarted before its next job, even if not yet reaped
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.returncode is None and proc.stdin is not None:
                proc.stdin.close()  # the worker leaves its loop on end of input
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 2.0)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            await proc.wait()
        if self._drain is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._drain, 2.0)
            self._drain = None
        if self.base and self.config["isolation"] == "rlimits":
            # Only an rlimits worker keeps its job directories on the real filesystem.
            shutil.rmtree(self.base, ignore_errors=True)
        self.base = None


class Sandbox:
    """A pool of warm workers that run programs in parallel, one job per worker at a time.

    Use `async with Sandbox() as sandbox:` or call `aclose()`; workers start on first use. A
    worker that dies (a program that killed it) or hangs is replaced on its next job.
    """

    def __init__(
        self,
        *,
        python: str | None = None,
        workers: int | None = None,
        limits: Limits = Limits(),
        isolation: str = "auto",
    ) -> None:
        if isolation != "auto" and isolation not in ISOLATION_LEVELS:
            raise ConfigError(
                f"isolation: unknown level {shown(isolation)}; "
                f"allowed: auto, {', '.join(ISOLATION_LEVELS)}"
            )
        if workers is None:
            workers = os.cpu_count() or 1
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers: expected a whole number >= 1, got {shown(workers)}")
        if not isinstance(limits, Limits):
            raise ConfigError(f"limits: expected a Limits, got {type(limits).__name__}")
        self.python = _check_python(python or sandbox_python())
        self.workers = workers
        self.limits = limits
        self.requested = isolation
        self._source = Path(__file__).with_name("sandbox_worker.py").read_text(encoding="utf-8")
        self._isolation: str | None = None
        self._pool: list[_Worker] = []
        self._idle: asyncio.Queue[_Worker] | None = None
        self._lock: asyncio.Lock | None = None
        self._closed = False

    @property
    def isolation(self) -> str | None:
        """The level in use, once started (None before)."""
        return self._isolation

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _candidates(self) -> list[str]:
        if self.requested != "auto":
            return [self.requested]
        levels = []
        if shutil.which("bwrap"):
            levels.append("bwrap")
        if sys.platform.startswith("linux"):
            levels.append("namespaces")
        return [*levels, "rlimits"]

    def _config(self, level: str) -> dict[str, Any]:
        bwrap = shutil.which("bwrap") or "bwrap"
        return {
            "isolation": level,
            "stage": "launch",
            "bwrap": bwrap,
            "bwrap_options": list(bwrap_options(bwrap)) if level == "bwrap" else [],
            "hide": _checkouts(),
            "tmpfs_mb": max(256, 8 * self.limits.file_mb),
            "hash_seed": "0",
        }

    def _new_worker(self, level: str) -> _Worker:
        limit = 4 * self.limits.output_bytes * 6 + (1 << 20)  # JSON escaping can grow text 6x
        return _Worker(self.python, self._source, self._config(level), limit)

    async def start(self) -> None:
        """Start the workers (the first one probes the isolation level); idempotent."""
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._idle is not None:
                return
            first, failures = None, []
            for level in self._candidates():
                worker = self._new_worker(level)
                try:
                    await worker.start()
                    await self._smoke_test(worker, level)
                except SandboxUnavailable as exc:
                    await worker.close()
                    failures.append(f"{level}: {exc}")
                    log.debug("sandbox isolation %s unavailable: %s", level, exc)
                    continue
                first = worker
                break
            if first is None:
                raise SandboxUnavailable("no sandbox worker could start: " + "; ".join(failures))
            self._isolation = first.config["isolation"]
            if self._isolation != "bwrap":
                weaker = (
                    "no network or filesystem isolation"
                    + (
                        "; jobs run as this user and can read this user's files"
                        if os.geteuid() != 0
                        else ""
                    )
                    if self._isolation == "rlimits"
                    else "namespaces set up by the worker"
                )
                log.warning(
                    "sandbox isolation is %r, weaker than bwrap (%s)%s",
                    self._isolation,
                    weaker,
                    f"; tried {'; '.join(failures)}" if failures else "",
                )
            others = [self._new_worker(self._isolation) for _ in range(self.workers - 1)]
            results = await asyncio.gather(*(w.start() for w in others), return_exceptions=True)
            self._pool = [first, *others]
            for result in results:
                if isinstance(result, BaseException):
                    # A worker that failed to start now is retried when a job reaches it.
                    log.warning("sandbox worker failed to start: %s", result)
            self._idle = asyncio.Queue()
            for worker in self._pool:
                self._idle.put_nowait(worker)

    async def _smoke_test(self, worker: _Worker, level: str) -> None:
        limits = Limits(wall_s=WORKER_START_S, cpu_s=WORKER_START_S)
        reply = await worker.execute(self._job(SMOKE_PROGRAM, limits))
        if (
            reply is None
            or reply.get("verdict") != Verdict.PASSED
            or "ok" not in str(reply.get("stdout_tail"))
        ):
            detail = "worker died" if reply is None else f"{reply.get('verdict')}: {reply}"
            raise SandboxUnavailable(f"smoke test under {level} failed ({detail})"[:800])

    def _job(self, program: str, limits: Limits) -> dict[str, Any]:
        return {
            "program": program,
            "wall_s": limits.wall_s,
            "cpu_s": limits.cpu_s,
            "memory_mb": limits.memory_mb,
            "file_mb": limits.file_mb,
            "nproc": limits.nproc,
            "output_bytes": limits.output_bytes,
        }

    def _limits_for(self, timeout: float | None) -> Limits:
        if timeout is None:
            return self.limits
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigError(f"timeout: expected seconds > 0, got {shown(timeout)}")
        # `timeout` is the per-call budget: it replaces both the wall and the CPU limit.
        return Limits(
            wall_s=float(timeout),
            cpu_s=float(timeout),
            memory_mb=self.limits.memory_mb,
            file_mb=self.limits.file_mb,
            nproc=self.limits.nproc,
            output_bytes=self.limits.output_bytes,
        )

    async def run(self, source: str, tests: str, *, timeout: float | None = None) -> ExecResult:
        """Run `source + "\\n\\n" + tests` as __main__ and classify the outcome.

        `timeout` (seconds) replaces the wall and CPU limits for this call.
        """
        return await self.run_program(program_text(source, tests), timeout=timeout)

    async def run_program(self, program: str, *, timeout: float | None = None) -> ExecResult:
        """Run a whole program as __main__ (what `run` does after joining source and tests)."""
        limits = self._limits_for(timeout)
        await self.start()
        assert self._idle is not None and self._isolation is not None
        worker = await self._idle.get()
        try:
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            if not worker.alive:
                await worker.start()
            reply = await worker.execute(self._job(program, limits))
        except BaseException:
            worker.kill()  # cancelled mid-job: its answer must not reach the next job
            raise
        finally:
            self._idle.put_nowait(worker)
        if reply is None:
            return ExecResult(
                verdict=Verdict.RUNTIME_ERROR,
                isolation=self._isolation,
                duration_s=0.0,
                stdout_tail="",
                stderr_tail="",
                detail="the sandbox worker died or hung during the job (a program that kills "
                "its parent ends here); it is replaced for the next job",
                python=self.python,
            )
        return ExecResult(
            verdict=Verdict(reply["verdict"]),
            isolation=self._isolation,
            duration_s=float(reply["duration_s"]),
            stdout_tail=str(reply["stdout_tail"]),
            stderr_tail=str(reply["stderr_tail"]),
            detail=str(reply["detail"]),
            python=self.python,
        )

    async def aclose(self) -> None:
        """Stop every worker; later runs raise SandboxUnavailable."""
        self._closed = True
        pool, self._pool = self._pool, []
        await asyncio.gather(*(worker.close() for worker in pool), return_exceptions=True)


def run_once(source: str, tests: str, **kwargs: Any) -> ExecResult:
    """One execution from synchronous code (CLI, scripts): a one-worker Sandbox, then closed.

    `timeout` goes to `Sandbox.run`; every other keyword to `Sandbox`.
    """
    timeout = kwargs.pop("timeout", None)
    kwargs.setdefault("workers", 1)

    async def go() -> ExecResult:
        async with Sandbox(**kwargs) as sandbox:
            return await sandbox.run(source, tests, timeout=timeout)

    return asyncio.run(go())


def exec_json(
    solution: Path,
    tests: Path,
    timeout: float | None,
    *,
    memory_mb: int = DEFAULT_MEMORY_MB,
    python: str | None = None,
) -> dict:
    """`forkingpaths creativebench exec SOLUTION --tests TESTS --json`: the result as JSON."""
    texts = []
    for role, path in (("solution", solution), ("tests", tests)):
        try:
            texts.append(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidFile(f"{path}: {role} file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidFile(f"{path}: {role} file unreadable: {exc}") from None
    limits = Limits(memory_mb=memory_mb)
    return run_once(texts[0], texts[1], timeout=timeout, limits=limits, python=python).to_json()
