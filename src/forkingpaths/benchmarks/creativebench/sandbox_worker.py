"""Runs under the sandbox interpreter: isolation set-up, the warm worker, one child per job.

Standard library only: this module runs under whatever interpreter `sandbox_python()` names
(usually `.sandbox-venv`, which does not have forkingpaths installed). `sandbox.py` starts it as
`python -s -c <this source> <config JSON>`, so nothing here is read from disk after start-up.

Process layout per isolation level (the parent talks JSON lines with the worker over its stdin and
stdout; the worker forks one child per job and the child runs the program in-process):

- `rlimits`: launcher = worker. The job child gets rlimits, a fresh temp dir, a stripped env and,
  when we are root, a per-worker unprivileged real uid (`UID_BASE + worker pid`) so that the kernel
  enforces RLIMIT_NPROC (it exempts uid 0) and the program cannot write files root owns.
- `namespaces`: the launcher joins or makes a user namespace, unshares mount, network, IPC, UTS
  and PID namespaces, remounts every mount read-only, puts private tmpfs on /tmp, /var/tmp and
  /dev/shm, brings up a private loopback, and forks an init (pid 1, mounts a fresh /proc) that forks
  the worker (pid 2). As root the user namespace maps inside uid 0 to root and inside uid 1 to an
  unprivileged uid, and job children run as uid 1: RLIMIT_NPROC then counts only that worker's job
  processes, and the program cannot signal the worker.
- `bwrap`: the launcher execs bubblewrap (read-only root, tmpfs /tmp, new /proc and /dev, no
  network) around the worker; as root it hands bubblewrap the same two-uid user namespace.

Verdicts follow the exit status: status 0 is PASSED whatever the program printed or wrote to the
report pipe (so a program cannot forge a failure into a pass, and `os._exit(0)` before the tests
ran is a pass too: documented in `sandbox.py`); a non-zero status or a signal is classified with the
child's report (assertion, memory, syntax, exception) and the resource usage.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import stat
import struct
import sys
import tempfile
import time

PASSED = "PASSED"
WRONG_ANSWER = "WRONG_ANSWER"
TIME_LIMIT_EXCEEDED = "TIME_LIMIT_EXCEEDED"
MEMORY_LIMIT_EXCEEDED = "MEMORY_LIMIT_EXCEEDED"
RUNTIME_ERROR = "RUNTIME_ERROR"
SYNTAX_ERROR = "SYNTAX_ERROR"

UID_BASE = 1_500_000_000
"""Job uids are UID_BASE + a launcher or worker pid: unused by any account, unique per worker."""

DETAIL_CHARS = 2000
"""Longest `detail` a result carries (the assertion line or the traceback tail)."""

PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
"""World-writable directories that the namespaced worker replaces with private tmpfs."""

PRELOADED = (
    "abc",
    "bisect",
    "collections",
    "copy",
    "dataclasses",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "math",
    "operator",
    "re",
    "statistics",
    "string",
    "threading",
    "traceback",
    "typing",
)
"""Modules the warm worker imports once so that jobs do not pay for them (no `random`: each job
must draw its own seed, as a fresh interpreter would)."""

JOB_ENV_KEYS = ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONHASHSEED")
"""The environment a program sees, besides the thread-count variables below."""

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One BLAS thread per job: jobs already run one per core, and BLAS thread pools would count
against the process limit and reserve address space past the memory limit at import."""

MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")
"""Text on stderr that marks a crash (signal) as caused by the address-space limit."""

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000
MOUNT_FLAG_OPTIONS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
SYS_MOUNT_SETATTR = 442  # same number on every architecture (new syscalls share one table)
MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
PR_SET_PDEATHSIG = 1
PR_SET_KEEPCAPS = 8
PR_SET_SECUREBITS = 28
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_RAISE = 2
SECBIT_NOROOT = 0x1
SECBIT_NOROOT_LOCKED = 0x2
CAP_DAC_READ_SEARCH = 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522
M_ARENA_MAX = -8
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


class SetupError(Exception):
    """Isolation could not be set up (reported to the parent, which falls back or refuses)."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


# ---------------------------------------------------------------------------------------------
# Thin libc wrappers (Python 3.11 has no os.unshare/os.setns; ctypes is in the standard library)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result == -1:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {err})")
    return result


def _prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    libc = _libc()
    return _check(
        libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg2),
            ctypes.c_ulong(arg3),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        ),
        f"prctl({option})",
    )


def _unshare(flags: int) -> None:
    unshare = getattr(os, "unshare", None)
    if unshare is not None:  # Python 3.12+
        try:
            unshare(flags)
        except OSError as exc:
            raise SetupError(f"unshare({flags:#x}): {exc.strerror}") from exc
        return
    _check(_libc().unshare(ctypes.c_int(flags)), f"unshare({flags:#x})")


def _setns(fd: int, nstype: int) -> None:
    _check(_libc().setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None):
    libc = _libc()
    enc = os.fsencode
    result = libc.mount(
        enc(source) if source is not None else None,
        enc(target),
        enc(fstype) if fstype is not None else None,
        ctypes.c_ulong(flags),
        enc(data) if data is not None else None,
    )
    _check(result, f"mount {target}")


def _capset(caps: frozenset[int]) -> None:
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    for cap in caps:
        bit = 1 << (cap % 32)
        data[cap // 32].effective |= bit
        data[cap // 32].permitted |= bit
        data[cap // 32].inheritable |= bit
    _check(_libc().capset(ctypes.byref(header), data), "capset")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError as exc:
        raise SetupError(f"write {path}: {exc.strerror}") from exc


# ---------------------------------------------------------------------------------------------
# Isolation set-up (launcher side)


def _two_uid_userns(job_kuid: int) -> int:
    """A user namespace mapping inside 0 -> root and inside 1 -> `job_kuid`; returns its fd.

    Only a process in the parent namespace with CAP_SETUID may write a map with two ranges, so a
    helper child unshares and waits while we (root, outside) write its maps and open its namespace.
    """
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        try:
            _unshare(CLONE_NEWUSER)
            os.write(ready_w, b"1")
        except BaseException:
            os.write(ready_w, b"0")
        os.read(go_r, 1)
        os._exit(0)
    os.close(ready_w)
    os.close(go_r)
    try:
        if os.read(ready_r, 1) != b"1":
            raise SetupError("the helper could not unshare a user namespace")
        mapping = f"0 0 1\n1 {job_kuid} 1\n"
        _write(f"/proc/{pid}/uid_map", mapping)
        _write(f"/proc/{pid}/gid_map", mapping)
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    finally:
        os.write(go_w, b"1")
        os.close(go_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


def _enter_user_namespace() -> int | None:
    """Join a fresh user namespace; returns the inside uid jobs run as (None: the worker's own)."""
    if os.geteuid() == 0:
        fd = _two_uid_userns(UID_BASE + os.getpid())
        try:
            _setns(fd, CLONE_NEWUSER)
        finally:
            os.close(fd)
        return 1
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER)
    with contextlib.suppress(SetupError):  # absent on old kernels
        _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1\n")
    _write("/proc/self/gid_map", f"0 {gid} 1\n")
    return None


def _unescape_mountinfo(field: str) -> str:
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _make_readonly() -> None:
    """Every mount of this mount namespace read-only (one syscall where the kernel has it)."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    libc = _libc()
    result = libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        b"/",
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    if result == 0:
        return
    # Older kernels: remount each mount, keeping the flags a user namespace may not clear.
    with open("/proc/self/mountinfo") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        fields = line.split()
        target, options = _unescape_mountinfo(fields[4]), fields[5].split(",")
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in options:
            flags |= MOUNT_FLAG_OPTIONS.get(option, 0)
        try:
            _mount(None, target, None, flags, None)
        except SetupError:
            if target == "/":
                raise


def _private_tmpfs(size_mb: int, keep: list[str]) -> list[str]:
    """Private tmpfs on the world-writable directories; `keep` paths under them stay visible."""
    mounted = []
    for directory in PRIVATE_DIRS:
        if not os.path.isdir(directory) or os.path.islink(directory):
            continue
        held = []
        for path in keep:
            if path == directory or path.startswith(directory + "/"):
                held.append((path, os.open(path, os.O_PATH)))
        _mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=1777")
        for path, fd in held:
            os.makedirs(path, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC, None)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
            os.close(fd)
        mounted.append(directory)
    return mounted


def _loopback_up() -> None:
    """A private loopback, as bubblewrap gives: programs may serve themselves on 127.0.0.1."""
    import fcntl

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _network_isolated() -> bool:
    return {name for _, name in socket.if_nameindex()} <= {"lo"}


def _launch_namespaces(config: dict) -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    job_uid = _enter_user_namespace()
    _unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID)
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    _make_readonly()
    private = _private_tmpfs(int(config.get("tmpfs_mb", 256)), list(config.get("keep", [])))
    _loopback_up()
    init = os.fork()
    if init == 0:
        _init_process(dict(config, job_uid=job_uid, private=private, pidns=True))
    # The launcher only waits: the worker talks to the parent through the inherited pipes.
    _detach_stdio()
    _, status = os.waitpid(init, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _init_process(config: dict) -> None:
    """Pid 1 of the new PID namespace: fresh /proc, then the worker as pid 2; reaps orphans."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    except SetupError as exc:
        _announce({"ready": False, "error": str(exc)})
        os._exit(1)
    worker = os.fork()
    if worker == 0:
        _serve(config)
        os._exit(0)
    _detach_stdio()
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == worker:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _launch_bwrap(config: dict) -> None:
    bwrap = config["bwrap"]
    args = [bwrap]
    job_uid = None
    if os.geteuid() == 0:
        # bubblewrap maps root to root, which RLIMIT_NPROC exempts: hand it our two-uid namespace.
        fd = _two_uid_userns(UID_BASE + os.getpid())
        os.set_inheritable(fd, True)
        args += ["--userns", str(fd)]
        job_uid = 1
    else:
        args += ["--unshare-user"]
    args += [
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/",
        "/",
        "--tmpfs",
        "/tmp",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    for path in config.get("keep", []):
        if path == "/tmp" or path.startswith("/tmp/"):
            args += ["--ro-bind", path, path]
    inner = dict(config, stage="serve", job_uid=job_uid, private=["/tmp", "/dev/shm"], pidns=True)
    args += ["--", sys.executable, "-s", "-c", _own_source(), json.dumps(inner)]
    os.execv(bwrap, args)


def _own_source() -> str:
    argv = sys.orig_argv
    return argv[argv.index("-c") + 1]


def _detach_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _announce(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


# ---------------------------------------------------------------------------------------------
# The warm worker


def _world_accessible(path: str) -> bool:
    """Can a process with no capabilities and a foreign uid reach `path`?"""
    path = os.path.realpath(path)
    parts = path.split("/")
    for i in range(2, len(parts) + 1):
        try:
            st = os.stat("/".join(parts[:i]) or "/")
        except OSError:
            return False
        if stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH:
            return False
    return True


def _needs_read_capability() -> bool:
    """An interpreter under a private home (pyenv in /root) is unreadable by the job uid."""
    paths = [sys.executable, sys.prefix, sys.base_prefix, os.path.dirname(os.__file__)]
    paths += [p for p in sys.path if p and os.path.isdir(p)]
    return not all(_world_accessible(p) for p in paths)


def _serve(config: dict) -> None:
    """Answer one JSON line per job line until stdin closes."""
    with contextlib.suppress(SetupError):
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a job come back here to be reaped
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.dup(1)
    os.set_inheritable(proto_out, False)
    _detach_stdio()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    state = _WorkerState(config)
    if config.get("pidns") and not _network_isolated():
        os.write(proto_out, b'{"ready": false, "error": "network namespace not isolated"}\n')
        return
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            __import__(name)
    libc = _libc()
    for symbol in ("prctl", "capset", "mallopt"):  # resolved once here, not in every child
        getattr(libc, symbol, None)
    import gc

    gc.freeze()  # the collector of a child then leaves the worker's objects (and pages) alone
    ready = {"ready": True, "isolation": config["isolation"], "pid": os.getpid()}
    if not state.pidns:
        ready["base"] = state.base
    os.write(proto_out, (json.dumps(ready) + "\n").encode())
    reader = _LineReader(proto_in)
    while True:
        line = reader.readline()
        if not line:
            if not state.pidns:
                _remove(state.base)
            return
        job = json.loads(line)
        result = state.run(job)
        result["id"] = job.get("id")
        os.write(proto_out, (json.dumps(result) + "\n").encode())


class _LineReader:
    """Unbuffered line reader: a forked child must not inherit half-read protocol bytes."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.pending = b""

    def readline(self) -> bytes:
        while b"\n" not in self.pending:
            chunk = self.raw.read(1 << 20)
            if not chunk:
                return b""
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line


class _WorkerState:
    """Per-worker facts the jobs need: where to put them, which uid they run as, how to clean."""

    def __init__(self, config: dict) -> None:
        self.isolation = config["isolation"]
        self.python = sys.executable
        self.pidns = bool(config.get("pidns"))
        self.private = list(config.get("private", []))
        self.hash_seed = str(config.get("hash_seed", "0"))
        job_uid = config.get("job_uid")
        if job_uid is None and not self.pidns and os.geteuid() == 0:
            job_uid = UID_BASE + os.getpid()  # rlimits as root: a uid no other process has
        self.job_uid = job_uid
        self.read_cap = job_uid is not None and _needs_read_capability()
        self.base = "/tmp" if self.pidns else tempfile.mkdtemp(prefix="forkingpaths-sandbox-")
        os.chmod(self.base, 0o711 if not self.pidns else 0o1777)

    def run(self, job: dict) -> dict:
        jobdir = os.path.join(self.base, "job")
        outdir = os.path.join(self.base, ".out")
        for path in (jobdir, outdir):
            _remove(path)
            os.mkdir(path, 0o700)
        if self.job_uid is not None:
            os.chown(jobdir, self.job_uid, self.job_uid)
        main_path = os.path.join(jobdir, "main.py")
        with open(main_path, "w", encoding="utf-8") as fh:
            fh.write(job["program"])
        if self.job_uid is not None:
            os.chown(main_path, self.job_uid, self.job_uid)
        out_path, err_path = os.path.join(outdir, "stdout"), os.path.join(outdir, "stderr")
        report_r, report_w = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            _child(job, self, jobdir, main_path, out_path, err_path, report_w)
        os.close(report_w)
        wall = float(job["wall_s"])
        status, usage, timed_out = _wait(pid, wall)
        duration = time.monotonic() - started
        self.kill_leftovers(pid)
        report = _read_report(report_r)
        os.close(report_r)
        limit = int(job["output_bytes"])
        stdout, stderr = _tail(out_path, limit), _tail(err_path, limit)
        verdict, detail = classify(status, usage, timed_out, report, stderr, job)
        self.clean()
        return {
            "verdict": verdict,
            "duration_s": round(duration, 6),
            "stdout_tail": stdout,
            "stderr_tail": stderr,
            "detail": detail[-DETAIL_CHARS:],
        }

    def kill_leftovers(self, pid: int) -> None:
        """Kill and reap every process the job left behind (fork bombs, daemons)."""
        me = os.getpid()
        for attempt in range(2000):
            victims = self._leftovers(pid, me)
            _reap()
            if not victims:
                return
            if self.pidns:
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)  # everything in our PID namespace but init and us
            for victim in victims:
                with contextlib.suppress(OSError):
                    os.kill(victim, signal.SIGKILL)
            time.sleep(min(0.001 * (attempt + 1), 0.02))

    def _leftovers(self, pid: int, me: int) -> list[int]:
        """In a PID namespace everything but init and us; else the job uid's or session's."""
        found = []
        for entry in _proc_pids():
            if entry == me or (self.pidns and entry == 1):
                continue
            if self.pidns:
                found.append(entry)
            elif self.job_uid is not None:
                if _real_uid(entry) == self.job_uid:
                    found.append(entry)
            elif _session(entry) == pid:
                found.append(entry)
        return found

    def clean(self) -> None:
        for path in (os.path.join(self.base, "job"), os.path.join(self.base, ".out")):
            _remove(path)
        for directory in self.private:  # our own tmpfs: wipe what the job left anywhere in it
            with contextlib.suppress(OSError):
                for name in os.listdir(directory):
                    _remove(os.path.join(directory, name))


def _proc_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _real_uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _session(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _remove(path: str) -> None:
    if os.path.islink(path) or os.path.isfile(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    if os.path.isdir(path):

        def unlock(function, failed, _exc) -> None:
            # A job may chmod 000 its own directories; the worker restores access and retries.
            with contextlib.suppress(OSError):
                os.chmod(os.path.dirname(failed), 0o700)
                os.chmod(failed, 0o700)
                function(failed)

        shutil.rmtree(path, onerror=unlock)


def _wait(pid: int, wall: float) -> tuple[int, resource.struct_rusage | None, bool]:
    """Wait for the job child up to `wall` seconds; kill its process group past that."""
    deadline = time.monotonic() + wall
    timed_out = False
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
    try:
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                return status, usage, timed_out
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                return status, usage, timed_out
            if pidfd is not None:
                select.select([pidfd], [], [], remaining)
            else:
                time.sleep(min(remaining, 0.002))
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _read_report(fd: int) -> dict:
    os.set_blocking(fd, False)
    chunks = []
    with contextlib.suppress(BlockingIOError, OSError):
        while len(chunks) < 64:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    lines = b"".join(chunks).decode("utf-8", "replace").strip().splitlines()
    for line in reversed(lines):  # the harness writes last; anything earlier is the program's
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, dict):
            return report
    return {}


def _tail(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def classify(
    status: int,
    usage: resource.struct_rusage | None,
    timed_out: bool,
    report: dict,
    stderr: str,
    job: dict,
) -> tuple[str, str]:
    """The verdict and its detail from how the child ended (see the module docstring)."""
    cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    kind, detail = str(report.get("kind", "")), str(report.get("detail", ""))
    if job.get("cold") and not kind:
        kind, detail = _kind_from_stderr(stderr), stderr.strip()[-DETAIL_CHARS:]
    if timed_out:
        return TIME_LIMIT_EXCEEDED, f"wall-clock limit of {job['wall_s']} s exceeded"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = _signal_name(sig)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= float(job["cpu_s"])):
            return TIME_LIMIT_EXCEEDED, f"CPU-time limit of {job['cpu_s']} s exceeded ({name})"
        if sig == signal.SIGXFSZ:
            return RUNTIME_ERROR, f"file-size limit of {job['file_mb']} MB exceeded ({name})"
        if kind == "memory" or any(hint in stderr for hint in MEMORY_HINTS):
            return MEMORY_LIMIT_EXCEEDED, f"killed by {name} at the {job['memory_mb']} MB limit"
        return RUNTIME_ERROR, f"killed by {name}" + (f": {detail}" if detail else "")
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        if kind in ("", "setup") and not job.get("cold"):
            return PASSED, "exit status 0 before the program finished (os._exit(0))"
        return PASSED, ""
    if kind == "syntax":
        return SYNTAX_ERROR, detail
    if kind == "assertion":
        return WRONG_ANSWER, detail
    if kind == "memory":
        return MEMORY_LIMIT_EXCEEDED, detail or f"MemoryError at the {job['memory_mb']} MB limit"
    if cpu >= float(job["cpu_s"]):
        return TIME_LIMIT_EXCEEDED, f"CPU-time limit of {job['cpu_s']} s exceeded"
    if kind == "setup":
        return RUNTIME_ERROR, "sandbox set-up failed: " + detail
    return RUNTIME_ERROR, detail or f"exit status {code}"


def _kind_from_stderr(stderr: str) -> str:
    """A fresh interpreter's failure kind, from the last line of its traceback."""
    lines = stderr.strip().splitlines()
    last = lines[-1] if lines else ""
    if last.startswith(("SyntaxError", "IndentationError", "TabError")):
        return "syntax"
    if last.startswith("AssertionError"):
        return "assertion"
    if last.startswith("MemoryError"):
        return "memory"
    return "exception" if last else ""


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


# ---------------------------------------------------------------------------------------------
# The job child


def _child(job, state, jobdir, main_path, out_path, err_path, report_w) -> None:
    """Runs in the forked child; never returns."""
    code = 1
    try:
        _prepare_child(job, state, jobdir, out_path, err_path, report_w)
    except BaseException as exc:
        _report(3, {"kind": "setup", "detail": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    try:
        if job.get("cold"):
            # The baseline of benchmarks/bench_sandbox.py: a fresh interpreter per job.
            os.execv(state.python, [state.python, "-s", main_path])
        code = _run_program(job, main_path)
    finally:
        os._exit(code)


def _prepare_child(job, state, jobdir, out_path, err_path, report_w) -> None:
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.dup2(report_w, 3)
    keep = {0, 1, 2, 3}
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.set_inheritable(3, False)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(jobdir)
    _drop_privileges(state)
    _set_limits(job, state)
    env = {
        "PATH": f"{os.path.dirname(state.python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": jobdir,
        "LANG": "C.UTF-8",
        "TMPDIR": jobdir,
        "PYTHONHASHSEED": state.hash_seed,
        **THREAD_ENV,
    }
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
        2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
    )


def _drop_privileges(state: _WorkerState) -> None:
    """Give up every capability; as root also the uid (keeping only read access if needed)."""
    # The bounding set is left alone: with no_new_privs and an empty permitted set, exec (of a
    # set-uid or file-capability binary, or as uid 0 under SECBIT_NOROOT) grants nothing.
    keep = frozenset({CAP_DAC_READ_SEARCH}) if state.read_cap else frozenset()
    if state.job_uid is None:
        with contextlib.suppress(SetupError):
            _prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED)
        _capset(frozenset())
    else:
        uid = state.job_uid
        _prctl(PR_SET_KEEPCAPS, 1)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        _prctl(PR_SET_KEEPCAPS, 0)
        _capset(keep)
        for cap in keep:  # ambient, so that programs the job execs can still reach the interpreter
            _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _set_limits(job: dict, state: _WorkerState) -> None:
    cpu = max(1, math.ceil(float(job["cpu_s"])))
    file_bytes = int(job["file_mb"]) * 1024 * 1024
    nproc = int(job["nproc"])
    if state.job_uid is None:
        # Without a uid of its own the job shares the count with its user's other processes.
        same = sum(1 for pid in _proc_pids() if _real_uid(pid) == os.getuid())
        nproc += same + 4
    with contextlib.suppress(OSError, AttributeError):
        _libc().mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(2))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    memory = int(job["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _report(fd: int, report: dict) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, ("\n" + json.dumps(report) + "\n").encode("utf-8", "replace"))


def _run_program(job: dict, main_path: str) -> int:
    """Compile, then run as __main__; returns the exit status a fresh interpreter would give."""
    import builtins
    import types

    source = job["program"]
    sys.argv = [main_path]
    sys.path[0] = os.path.dirname(main_path)
    try:
        code = compile(source, main_path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        import traceback

        text = "".join(traceback.format_exception_only(type(exc), exc))
        sys.stderr.write(text)
        sys.stderr.flush()
        _report(3, {"kind": "syntax", "detail": text.strip()})
        return 1
    main = types.ModuleType("__main__")
    main.__file__ = main_path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    status, report = 0, {"kind": "done"}
    try:
        exec(code, main.__dict__)
    except SystemExit as exc:
        status, report = _exit_status(exc), {"kind": "exit", "detail": f"SystemExit({exc.code!r})"}
    except MemoryError:
        # Nothing that allocates until the failed frames are gone.
        status, report = 1, {"kind": "memory", "detail": "MemoryError"}
        sys.stderr.write("MemoryError\n")
    except BaseException as exc:
        status, report = 1, _describe(exc, main_path, source)
    status = _finish(status)
    if status != 0 and report.get("kind") == "done":
        report = {"kind": "exit", "detail": f"exit status {status}"}
    _report(3, report)
    return status


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{exc.code}\n")
    return 1


def _describe(exc: BaseException, main_path: str, source: str) -> dict:
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != main_path:
        tb = tb.tb_next  # drop the harness's own frame, as if the program ran as a script
    text = "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__))
    with contextlib.suppress(Exception):
        sys.stderr.write(text)
    if isinstance(exc, AssertionError):
        line = 0
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename == main_path:
                line = lineno
        lines = source.splitlines()
        code_line = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        message = str(exc)
        detail = f"line {line}: {code_line}" + (f" -- {message}" if message else "")
        return {"kind": "assertion", "detail": detail}
    kind = "memory" if isinstance(exc, MemoryError) else "exception"
    return {"kind": kind, "detail": text.strip()}


def _finish(status: int) -> int:
    """What interpreter shutdown does: join threads, run atexit, flush; may change the status."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
        import atexit

        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:
        status = status or 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = status or 120  # CPython exits 120 when flushing stdout fails at shutdown
    return status


# ---------------------------------------------------------------------------------------------
# Entry point


def main(argv: list[str]) -> None:
    config = json.loads(argv[1])
    isolation = config["isolation"]
    try:
        if config.get("stage", "launch") == "serve":
            _serve(config)
        elif isolation == "namespaces":
            _launch_namespaces(config)
        elif isolation == "bwrap":
            _launch_bwrap(config)
        else:
            with contextlib.suppress(SetupError):
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            _serve(config)
    except SetupError as exc:
        with contextlib.suppress(OSError):
            _announce({"ready": False, "error": str(exc)})
        os._exit(1)
    except OSError as exc:
        with contextlib.suppress(OSError):
            _announce({"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
