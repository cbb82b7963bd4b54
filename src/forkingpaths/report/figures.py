"""A run report's figures drawn in a process of their own, so a finished run returns the terminal
(matplotlib costs seconds) and its report.html gains them a moment later."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from forkingpaths.runner.rundir import RunDirectory

FigureMode = Literal["inline", "background", "none"]
"""How a run report gets its figures: drawn before the page is written, drawn by a background
process that writes the page again, or left out."""

PENDING_FILE = ".drawing"
"""In the run's plots folder while a background process draws its figures; that process holds
a lock on it (released however it ends) and removes it when done."""
LOG_FILE = ".figures.log"
"""In the run's plots folder: what the background process logged (a figure that failed)."""


@dataclass
class Figures:
    """A background process drawing a run report's figures."""

    run_path: Path
    process: subprocess.Popen[bytes]

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the figures are drawn and report.html holds them; False on timeout."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True


def pending_path(run_path: Path) -> Path:
    return Path(run_path) / "plots" / PENDING_FILE


def start_figures(run_dir: RunDirectory) -> Figures:
    """Start the process that draws the run's figures and rewrites its report.html; it runs on
    when this process exits (its own session: a Ctrl-C at the terminal does not stop it)."""
    plots = run_dir.path / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    # Locked before the process starts and inherited by it: a waiter never sees the figures
    # as done before they are, and a killed drawer leaves no lock behind.
    fd = os.open(pending_path(run_dir.path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _replace_drawer(fd)
        os.ftruncate(fd, 0)
        with (plots / LOG_FILE).open("ab") as log_file:
            process = subprocess.Popen(
                [sys.executable, "-m", "forkingpaths.report.figures_worker", str(run_dir.path)],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
                pass_fds=(fd,),
            )
        os.write(fd, f"{process.pid}\n".encode())
    finally:
        os.close(fd)
    return Figures(run_dir.path, process)


def _replace_drawer(fd: int) -> None:
    """Take the pending mark's lock. A drawer of this run still at work (a resumed run ended
    before it did) draws records that are no longer the latest: it is stopped, by the pid this
    package wrote into the mark when it started it, and its lock taken once it has gone."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    if text.isdigit():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(text), signal.SIGTERM)
    fcntl.flock(fd, fcntl.LOCK_EX)


def figures_pending(run_path: Path) -> bool:
    """Whether a background process is drawing the run's figures now."""
    try:
        fd = os.open(pending_path(run_path), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False  # a marker nobody holds: its drawer was killed


def wait_for_figures(run_path: Path, timeout: float = 120.0) -> bool:
    """Wait (from any process) until no background process is drawing the run's figures; False
    when one still is after `timeout` seconds. For a script that reads the figures right after
    `forkingpaths run` returns."""
    deadline = time.monotonic() + timeout
    while figures_pending(run_path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
