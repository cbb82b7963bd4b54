"""Runs under the sandbox interpreter: isolation set-up, the warm worker, one child per job.

Standard library only: this module runs under whatever interpreter `sandbox_python()` names
(usually `.sandbox-venv`, which does not have forkingpaths installed). `sandbox.py` starts it as
`python -s -c <this source> <config JSON>`, so nothing here is read from disk after start-up.
The launcher starts the worker (the serve stage) from this module's code object, marshalled into
a memory file (`SERVE_BOOTSTRAP`): compiling the source in the worker would leave megabytes of
parser garbage in its heap, which every job's fork copies and every job's exit unmaps.

Process layout per isolation level (the parent talks JSON lines with the worker over its stdin and
stdout; the worker forks one child per job and the child runs the program in-process):

- `rlimits`: launcher = worker. The job child gets rlimits, a fresh temp dir, a stripped env and,
  when we are root, a per-worker unprivileged real uid (`UID_BASE + worker pid`) so that the kernel
  enforces RLIMIT_NPROC (it exempts uid 0) and the program can neither read nor write files root
  owns. Such a uid cannot reach an interpreter under a private directory (pyenv under /root): the
  worker then makes a private mount namespace in which that directory is an empty read-only tmpfs
  with only the interpreter's prefixes bound back (no capability is kept for it).
- `namespaces`: the launcher joins or makes a user namespace, unshares mount, network, IPC, UTS
  and PID namespaces, remounts every mount read-only, hides /root, /home, /run, /var and the
  project checkout under empty read-only tmpfs (the interpreter's prefixes bound back at the same
  paths), puts private writable tmpfs on /tmp, /var/tmp and /dev/shm, brings up a private
  loopback, and forks an init (pid 1, mounts a fresh /proc) that forks the worker (pid 2). As root
  the user namespace maps inside uid 0 to root and inside uid 1 to an unprivileged uid, and job
  children run as uid 1: RLIMIT_NPROC then counts only that worker's job processes, and the
  program cannot signal the worker.
- `bwrap`: the launcher execs bubblewrap around the worker with a root built from scratch: /usr,
  /bin, /lib*, a few files of /etc (the loader cache, passwd, time zone, certificates) and the
  interpreter's prefixes read-only; private /tmp, /var/tmp and /dev/shm; new /proc and /dev; no
  network. As root it hands bubblewrap the same two-uid user namespace.

Jobs keep no capability (no ambient ones either) and run with no_new_privs.

Verdicts: PASSED needs exit status 0 and the harness's "done" report, written once the program's
last top-level statement has run; it carries a per-job nonce the worker draws after the fork and
hands the harness through a pipe the harness reads only once the program is over, so a program
cannot print a report of its own (it would have to dig the nonce out of the harness's pipe). Any
exit with status 0 before the end (`sys.exit(0)`, `os._exit(0)`, an exit handler) is a
RUNTIME_ERROR "exited before the tests finished". A non-zero status or a signal is classified with
the harness's report (assertion, memory, syntax, exception) and the resource usage.

stdout and stderr go through pipes the worker reads while the job runs, keeping the last
`output_bytes` of each: printing gigabytes costs the program wall time, not its verdict.
"""

from __future__ import annotations

import _signal
import atexit
import builtins
import contextlib
import ctypes
import errno
import fcntl
import functools
import gc
import json
import marshal
import math
import os
import resource
import select
import signal
import stat
import struct
import sys
import time
import types

# Every module imported here is held by the warm worker and copied by each job's fork: only what
# is built in, loaded anyway (struct and types, by ctypes and functools) or used by every job
# (fcntl). Heavier modules are imported where they are used, each saying why: socket (the
# launcher's), shutil (after a job that left a tree), traceback (one of PRELOADED).

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
"""World-writable directories a namespaced worker replaces with private writable tmpfs."""

HIDDEN_DIRS = ("/root", "/home", "/run", "/var")
"""Directories a namespaced worker hides under an empty read-only tmpfs (plus the checkout)."""

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""What bubblewrap's fresh root gets read-only (symbolic links stay links)."""

ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "os-release",
    "mime.types",
    "alternatives",
    "ssl",
    "ca-certificates",
    "pki",
    "crypto-policies",
)
"""The parts of /etc bubblewrap's root gets (no resolv.conf: there is no network)."""

NEVER_HIDDEN = ("/usr", "/bin", "/sbin", "/etc", "/proc", "/dev", "/sys", "/lib", "/lib64")
"""Directories (and their ancestors) that a hide request from the parent may not cover."""

SERVE_BOOTSTRAP = (
    "import marshal, os, sys\n"
    "with os.fdopen(int(sys.argv.pop(2)), 'rb') as fh:\n"
    "    code = marshal.load(fh)\n"
    "exec(code, {'__name__': '__main__', '__builtins__': __builtins__})\n"
)
"""The serve stage's `-c` program: load this module's code from the memory file whose descriptor
follows the config on the command line, and run it as the worker."""

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
    "string",
    "traceback",
    "typing",
)
"""Modules the warm worker imports once so that jobs do not pay for them. Not `threading`,
`random` or what imports them (`statistics`, `tempfile`): their at-fork hooks would run in every
job's child (about 0.3 ms for threading, more than most programs save by finding it imported)."""

JOB_ENV_KEYS = ("PATH", "HOME", "LANG", "TMPDIR", "PYTHONHASHSEED")
"""The environment a program sees, besides the thread-count variables below."""

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""One BLAS thread per job: jobs already run one per core, and BLAS thread pools would count
against the process limit and reserve address space past the memory limit at import."""

MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")
"""Text on stderr that marks a crash (signal) as caused by the address-space limit."""

FAILURE_KINDS = ("syntax", "assertion", "memory", "exception")
"""Report kinds that say how the program failed (they decide even when the status is 0)."""

REPORT_FD = 3
"""The harness writes its one JSON report here (the worker reads the other end)."""

NONCE_FD = 4
"""The harness reads the job's nonce here, once the program is over."""

REPORT_BYTES = 1 << 20
"""How much of the report pipe the worker keeps (its tail: the harness writes last)."""

LEFTOVER_KILL_S = 10.0
"""Longest the worker spends killing what a job left behind; past it the worker retires (the
parent replaces it). With OUTPUT_DRAIN_S it stays well under sandbox.RESPONSE_GRACE_S (30 s)."""

OUTPUT_DRAIN_S = 1.0
"""Longest the worker reads output still in the pipes once the job and its leftovers are gone."""

PIPE_BYTES = 1 << 20
"""Pipe buffer asked for the output pipes (fewer wake-ups when a program prints a lot)."""

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
F_SETPIPE_SZ = 1031
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_KEEPCAPS = 8
PR_SET_SECUREBITS = 28
PR_SET_CHILD_SUBREAPER = 36
WALL = 0x40000000
"""waitid's __WALL: wait for every child, whatever signal it reports its exit with."""
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECBIT_NOROOT = 0x1
SECBIT_NOROOT_LOCKED = 0x2
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
    libc = ctypes.CDLL(None, use_errno=True)
    # Declared once: a job child then calls these without building ctypes arguments.
    libc.prctl.argtypes = (
        ctypes.c_int,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
    )
    libc.capset.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    with contextlib.suppress(AttributeError):  # glibc only
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    with contextlib.suppress(AttributeError):  # glibc 2.34+
        libc.close_range.argtypes = (ctypes.c_uint, ctypes.c_uint, ctypes.c_uint)
    return libc


def _check(result: int, what: str) -> int:
    if result == -1:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {err})")
    return result


def _prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    return _check(_libc().prctl(option, arg2, arg3, 0, 0), f"prctl({option})")


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


def _capset_args(caps: frozenset[int]) -> tuple[_CapHeader, ctypes.Array]:
    """capset(2)'s header and data giving exactly `caps` (effective, permitted, inheritable)."""
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    for cap in caps:
        bit = 1 << (cap % 32)
        data[cap // 32].effective |= bit
        data[cap // 32].permitted |= bit
        data[cap // 32].inheritable |= bit
    return header, data


def _capset(args: tuple[_CapHeader, ctypes.Array]) -> None:
    header, data = args
    _check(_libc().capset(ctypes.addressof(header), ctypes.addressof(data)), "capset")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError as exc:
        raise SetupError(f"write {path}: {exc.strerror}") from exc


def _under(path: str, directory: str) -> bool:
    """Is `path` `directory` or inside it (both absolute, normalised)?"""
    return directory == "/" or path == directory or path.startswith(directory + "/")


# ---------------------------------------------------------------------------------------------
# Isolation set-up (launcher side)


def _interpreter_paths() -> list[str]:
    """The prefixes this interpreter needs (venv and base), outside the system directories.

    Each as written and resolved: a sandbox root binds both, so that the venv's `bin/python`
    link and its `pyvenv.cfg` home both resolve.
    """
    found = set()
    executable = os.path.abspath(sys.executable)
    candidates = [
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(executable)),
        os.path.dirname(os.path.dirname(os.path.realpath(executable))),
    ]
    for candidate in candidates:
        for path in (os.path.abspath(candidate), os.path.realpath(candidate)):
            if os.path.isdir(path) and not any(_under(path, d) for d in SYSTEM_DIRS):
                found.add(path)
    return sorted(found)


def _blocking_dirs(paths: list[str]) -> list[str]:
    """The topmost directories on the way to `paths` that other users may not search."""
    found = set()
    for path in paths:
        parts = path.split("/")
        for i in range(2, len(parts) + 1):
            directory = "/".join(parts[:i])
            try:
                st = os.stat(directory)
            except OSError:
                break
            if stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH:
                found.add(directory)
                break
    return sorted(found)


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


def _setattr_readonly(path: str) -> bool:
    """mount_setattr(2): `path`'s mount and those below it read-only; False where unsupported."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    result = _libc().syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        os.fsencode(path),
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    return result == 0


def _remount_readonly(target: str, options: list[str]) -> None:
    """Remount one mount read-only, keeping the flags a user namespace may not clear."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for option in options:
        flags |= MOUNT_FLAG_OPTIONS.get(option, 0)
    _mount(None, target, None, flags, None)


def _mount_options(path: str) -> list[str]:
    """The per-mount options of the mount at `path` (from /proc/self/mountinfo)."""
    options: list[str] = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            if _unescape_mountinfo(fields[4]) == path:
                options = fields[5].split(",")  # the last (topmost) mount there wins
    return options


def _make_readonly() -> None:
    """Every mount of this mount namespace read-only (one syscall where the kernel has it)."""
    if _setattr_readonly("/"):
        return
    # Older kernels: remount each mount, keeping the flags a user namespace may not clear.
    with open("/proc/self/mountinfo") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        fields = line.split()
        target = _unescape_mountinfo(fields[4])
        try:
            _remount_readonly(target, fields[5].split(","))
        except SetupError:
            if target == "/":
                raise


def _bind_readonly(fd: int, path: str) -> None:
    """Bind the directory open as `fd` (O_PATH) at `path`, read-only."""
    os.makedirs(path, exist_ok=True)
    _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC, None)
    if not _setattr_readonly(path):
        _remount_readonly(path, _mount_options(path))


def _overlay(hidden: list[str], private: list[str], keep: list[str], size_mb: int) -> list[str]:
    """Empty read-only tmpfs over `hidden`, private writable tmpfs over `private`; every `keep`
    path under either is bound back read-only at the same path. Returns the private directories
    mounted. The caller has unshared a mount namespace and made / private."""
    old_umask = os.umask(0o022)  # the directories made for `keep` must be searchable by jobs
    held: dict[str, int] = {}
    try:
        for path in keep:
            with contextlib.suppress(OSError):  # opened before anything above it is hidden
                held[path] = os.open(path, os.O_PATH | os.O_DIRECTORY)
        targets = sorted(
            {(d, False) for d in hidden} | {(d, True) for d in private},
            key=lambda item: (item[0].count("/"), item[0]),
        )
        covered: list[str] = []
        mounted: list[str] = []
        for directory, is_private in targets:
            inside = any(_under(directory, d) for d in covered)
            if inside and not is_private:
                continue  # already hidden
            if inside:
                os.makedirs(directory, exist_ok=True)  # a hidden tmpfs is writable until sealed
            elif not os.path.isdir(directory) or os.path.islink(directory):
                continue
            options = f"size={size_mb}m,mode=1777" if is_private else "size=1m,mode=0755"
            _mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, options)
            (mounted if is_private else covered).append(directory)
        for path, fd in held.items():
            if any(_under(path, d) for d in covered + mounted):
                _bind_readonly(fd, path)
        for directory in covered:  # sealed: nothing can be added where the host's files were
            _remount_readonly(directory, ["nosuid", "nodev"])
        return mounted
    finally:
        for fd in held.values():
            os.close(fd)
        os.umask(old_umask)


def _hide_requests(config: dict) -> list[str]:
    """The parent's extra directories to hide (the checkout), minus any the system needs."""
    found = []
    for path in config.get("hide", []):
        path = os.path.normpath(os.path.abspath(str(path)))
        if path == "/" or any(
            _under(system, path) or _under(path, system) for system in NEVER_HIDDEN
        ):
            continue
        found.append(path)
    return found


def _loopback_up() -> None:
    """A private loopback, as bubblewrap gives: programs may serve themselves on 127.0.0.1."""
    import socket  # deferred: the launcher's; the worker, which every job forks from, has none

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _network_isolated() -> bool:
    """Is loopback the only network interface? Read from /proc, so that the worker need not
    import socket (every module it holds is copied by each job's fork)."""
    try:
        with open("/proc/self/net/dev") as fh:
            names = {line.split(":", 1)[0].strip() for line in fh.readlines()[2:]}
    except OSError:
        import socket  # deferred: only where /proc cannot say (see the docstring)

        names = {name for _, name in socket.if_nameindex()}
    return names <= {"lo"}


def _launch_namespaces(config: dict) -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    keep = _interpreter_paths()
    job_uid = _enter_user_namespace()
    _unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID)
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    _make_readonly()
    hidden = [*HIDDEN_DIRS, *_hide_requests(config)]
    private = _overlay(hidden, list(PRIVATE_DIRS), keep, int(config.get("tmpfs_mb", 256)))
    os.chdir("/")
    _loopback_up()
    init = os.fork()
    if init == 0:
        _init_process(dict(config, job_uid=job_uid, private=private, pidns=True, keep=keep))
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
        _exec_serve(config)
    _detach_stdio()
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == worker:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def bwrap_mounts(keep: list[str], tmpfs_mb: int, options: frozenset[str]) -> list[str]:
    """bubblewrap arguments for the sandbox root: system directories, some of /etc and `keep`
    read-only; private /tmp, /var/tmp and /dev/shm; fresh /proc and /dev. Nothing else of the
    host (/root, /home, /run, /var, the checkout) exists inside."""
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):
            args += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for directory in PRIVATE_DIRS:
        if "--perms" in options:
            args += ["--perms", "1777"]
        if "--size" in options:
            args += ["--size", str(tmpfs_mb << 20)]
        args += ["--tmpfs", directory]
    made = {"/", *PRIVATE_DIRS, "/dev", "/proc"}
    for path in keep:
        # bubblewrap makes missing parents 0700, which another uid cannot search.
        parts = path.split("/")
        for i in range(2, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in made and not any(_under(parent, d) for d in SYSTEM_DIRS):
                made.add(parent)
                if "--perms" in options:
                    args += ["--perms", "0755"]
                args += ["--dir", parent]
        args += ["--ro-bind", path, path]
    args += ["--remount-ro", "/", "--chdir", "/"]
    return args


def _launch_bwrap(config: dict) -> None:
    bwrap = config["bwrap"]
    keep = _interpreter_paths()
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
    ]
    options = frozenset(config.get("bwrap_options", []))  # what `bwrap --help` lists
    args += bwrap_mounts(keep, int(config.get("tmpfs_mb", 256)), options)
    inner = dict(
        config, stage="serve", job_uid=job_uid, private=list(PRIVATE_DIRS), pidns=True, keep=keep
    )
    args += ["--", *_serve_command(inner)]
    os.execv(bwrap, args)


def _launch_rlimits(config: dict) -> None:
    with contextlib.suppress(SetupError):
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    keep: list[str] = []
    if os.geteuid() == 0:
        # Jobs run as an unprivileged uid with no capability: an interpreter under a directory
        # that uid may not search (pyenv under /root) is shown to them through a mount namespace.
        keep = _interpreter_paths()
        blocking = _blocking_dirs(keep)
        if blocking:
            try:
                _unshare(CLONE_NEWNS)
                _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
                _overlay(blocking, [], keep, 1)
            except SetupError as exc:
                raise SetupError(
                    f"the interpreter is under {', '.join(blocking)}, which the job uid cannot "
                    f"search, and no mount namespace could show it ({exc}); set "
                    "$FORKINGPATHS_SANDBOX_PYTHON to an interpreter outside private directories"
                ) from exc
            os.chdir("/")
    _exec_serve(dict(config, keep=keep))


def _own_source() -> str:
    argv = sys.orig_argv
    return argv[argv.index("-c") + 1]


def _serve_command(config: dict) -> list[str]:
    """The command line of the serve stage: the bootstrap and an inherited memory file holding
    our code, marshalled; our source again where no memory file can be made."""
    config = dict(config, stage="serve")
    from_source = [sys.executable, "-s", "-c", _own_source(), json.dumps(config)]
    try:
        code = compile(_own_source(), "<sandbox-worker>", "exec", dont_inherit=True)
        fd = os.memfd_create("forkingpaths-sandbox-worker", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        return from_source
    try:
        data = memoryview(marshal.dumps(code))
        while data:
            data = data[os.write(fd, data) :]
        # Sealed: nobody, not even a process that reaches it through /proc, can change it now.
        seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except (AttributeError, OSError):
        os.close(fd)
        return from_source
    return [sys.executable, "-s", "-c", SERVE_BOOTSTRAP, json.dumps(config), str(fd)]


def _exec_serve(config: dict) -> None:
    """Become the serve stage (same pid, namespaces, limits and descriptors); never returns."""
    command = _serve_command(config)
    os.execv(command[0], command)


def _detach_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _announce(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


# ---------------------------------------------------------------------------------------------
# The warm worker


def _serve(config: dict) -> None:
    """Answer one JSON line per job line until stdin closes."""
    subreaper = True
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of a job come back here to be killed, reaped
    except SetupError:
        subreaper = False
    with contextlib.suppress(SetupError):
        _prctl(PR_SET_DUMPABLE, 0)  # a job running as our own uid cannot read our memory
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.dup(1)
    os.set_inheritable(proto_out, False)
    _detach_stdio()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Inherited by every job child, which then need not set them itself: nothing gained on exec
    # (no set-uid, no file capabilities) and no ambient capabilities.
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    with contextlib.suppress(SetupError):  # absent before Linux 4.3, when there are none
        _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    with contextlib.suppress(AttributeError):
        # Few malloc arenas, so that a job's threads do not reserve address space past its limit.
        _libc().mallopt(M_ARENA_MAX, 2)
    state = _WorkerState(config)
    state.subreaper = subreaper
    state.adopt_env()
    state.null_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    state.std_streams = _std_streams()
    if config.get("pidns") and not _network_isolated():
        os.write(proto_out, b'{"ready": false, "error": "network namespace not isolated"}\n')
        return
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            __import__(name)
    gc.freeze()  # the collector of a child then leaves the worker's objects (and pages) alone
    ready = {"ready": True, "isolation": config["isolation"], "pid": os.getpid()}
    if not state.pidns:
        ready["base"] = state.base
    os.write(proto_out, (json.dumps(ready) + "\n").encode())
    reader = _LineReader(proto_in)
    me = os.getpid()
    while True:
        line = reader.readline()
        if not line:
            if not state.pidns:
                _remove(state.base)
            return
        job: dict = {}
        try:
            job = json.loads(line)
            result = state.run(job)
        except Exception as exc:
            if os.getpid() != me:  # a job child must never answer for the worker
                os._exit(1)
            result = state.recover(exc)
        result["id"] = job.get("id") if isinstance(job, dict) else None
        if state.retire:
            result["retire"] = True
        os.write(proto_out, (json.dumps(result) + "\n").encode())
        if state.retire:
            return


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


class _Tail:
    """The last `limit` bytes of a stream, and how many bytes it carried in all."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.data = bytearray()
        self.total = 0
        self.eof = False

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if not self.limit:
            return
        if len(chunk) >= self.limit:
            self.data = bytearray(chunk[-self.limit :])
            return
        self.data += chunk
        if len(self.data) > 2 * self.limit + PIPE_BYTES:
            del self.data[: -self.limit]

    def text(self) -> str:
        data = bytes(self.data[-self.limit :]) if self.limit else b""
        if self.total > len(data):
            # Cut mid-stream: drop a partial UTF-8 sequence at the start.
            skip = 0
            while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
                skip += 1
            data = data[skip:]
        return data.decode("utf-8", "replace")


class _WorkerState:
    """Per-worker facts the jobs need: where to put them, which uid they run as, how to clean."""

    def __init__(self, config: dict) -> None:
        self.isolation = config["isolation"]
        self.python = sys.executable
        self.pidns = bool(config.get("pidns"))
        self.private = list(config.get("private", []))
        self.keep = [str(path) for path in config.get("keep", [])]
        self.hash_seed = str(config.get("hash_seed", "0"))
        job_uid = config.get("job_uid")
        if job_uid is None and not self.pidns and os.geteuid() == 0:
            job_uid = UID_BASE + os.getpid()  # rlimits as root: a uid no other process has
        self.job_uid = job_uid
        self.shared_tmp = not self.pidns and job_uid is not None  # rlimits as root
        self.tmp_watch = _TmpWatch.start(PRIVATE_DIRS, job_uid) if self.shared_tmp else None
        self.retire = False
        self.subreaper = False
        if self.pidns:
            self.base = "/tmp"
        else:
            # Not tempfile.mkdtemp: tempfile imports random, whose at-fork hook every job would run.
            tmp = os.environ.get("TMPDIR") or "/tmp"
            self.base = os.path.join(tmp, f"forkingpaths-sandbox-{os.urandom(8).hex()}")
            os.mkdir(self.base, 0o700)
        self.env_adopted = False
        self.null_fd = -1
        self.std_streams: tuple = (sys.stdin, sys.stdout, sys.stderr)
        # Held so that a job replacing them does not free (and flush) the worker's own streams.
        self.own_streams = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
        self.no_caps = _capset_args(frozenset())
        os.chmod(self.base, 0o711 if not self.pidns else 0o1777)
        jobdir = os.path.join(self.base, "job")
        self.env = {
            "PATH": f"{os.path.dirname(self.python)}:/usr/local/bin:/usr/bin:/bin",
            "HOME": jobdir,
            "LANG": "C.UTF-8",
            "TMPDIR": jobdir,
            "PYTHONHASHSEED": self.hash_seed,
            **THREAD_ENV,
        }

    def adopt_env(self) -> None:
        """Give the worker itself the jobs' environment, once: a forked child then starts with
        it and need not rebuild it (each job checks, and rebuilds it if it differs)."""
        os.environ.clear()
        os.environ.update(self.env)
        self.env_adopted = True

    def run(self, job: dict) -> dict:
        jobdir = os.path.join(self.base, "job")
        try:
            os.mkdir(jobdir, 0o700)
        except FileExistsError:  # left over (a failed clean): removed, then made afresh
            _remove(jobdir)
            os.mkdir(jobdir, 0o700)
        if self.job_uid is not None:
            os.chown(jobdir, self.job_uid, self.job_uid)
        main_path = os.path.join(jobdir, "main.py")
        # A lone surrogate is written as the bytes a fresh interpreter would refuse (SyntaxError);
        # the harness compiles the text and refuses it the same way.
        with open(main_path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(job["program"])
        if self.job_uid is not None:
            os.chown(main_path, self.job_uid, self.job_uid)
        limit = int(job["output_bytes"])
        pipes = [os.pipe() for _ in range(4)]  # stdout, stderr, report, nonce
        (out_r, out_w), (err_r, err_w), (report_r, report_w), (nonce_r, nonce_w) = pipes
        closing = [fd for pair in pipes for fd in pair]
        for fd in (out_w, err_w):
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
        try:
            started = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    for fd in (out_r, err_r, report_r, nonce_w):
                        os.close(fd)
                    _child(job, self, jobdir, main_path, (out_w, err_w, report_w, nonce_r))
                finally:
                    os._exit(1)
            for fd in (out_w, err_w, report_w, nonce_r):
                closing.remove(fd)
                os.close(fd)
            # Drawn after the fork: the child's copy of our memory never held it.
            nonce = os.urandom(16).hex()
            with contextlib.suppress(OSError):
                os.write(nonce_w, nonce.encode())
            closing.remove(nonce_w)
            os.close(nonce_w)  # read once: a second reader finds end of file, not a nonce
            streams = {out_r: _Tail(limit), err_r: _Tail(limit), report_r: _Tail(REPORT_BYTES)}
            status, usage, timed_out = _wait(pid, float(job["wall_s"]), streams)
            duration = time.monotonic() - started
            self.kill_leftovers()
            _drain(streams, OUTPUT_DRAIN_S)
        finally:
            for fd in closing:
                with contextlib.suppress(OSError):
                    os.close(fd)
        report = _trusted_report(streams[report_r].data, nonce)
        stdout, stderr = streams[out_r].text(), streams[err_r].text()
        verdict, detail = classify(status, usage, timed_out, report, stderr, job)
        self.clean()
        return {
            "verdict": verdict,
            "duration_s": round(duration, 6),
            "stdout_tail": stdout,
            "stderr_tail": stderr,
            "detail": detail[-DETAIL_CHARS:],
        }

    def recover(self, exc: BaseException) -> dict:
        """After a job failed inside the worker: nothing of it left, a RUNTIME_ERROR with why."""
        with contextlib.suppress(Exception):
            self.kill_leftovers()
        with contextlib.suppress(Exception):
            self.clean()
        return {
            "verdict": RUNTIME_ERROR,
            "duration_s": 0.0,
            "stdout_tail": "",
            "stderr_tail": "",
            "detail": f"the sandbox worker failed on this job: {type(exc).__name__}: {exc}"[
                :DETAIL_CHARS
            ],
        }

    def kill_leftovers(self) -> None:
        """Kill and reap every process the job left behind (fork bombs, daemons), for at most
        LEFTOVER_KILL_S; a worker that could not is retired after its answer."""
        if self.subreaper and not _children_left():
            # Every process a job makes stays below us (orphans come back to a subreaper), so
            # with no child left there is nothing to kill: no scan of /proc on the common path.
            return
        me = os.getpid()
        deadline = time.monotonic() + LEFTOVER_KILL_S
        attempt = 0
        while True:
            victims = self._leftovers(me)
            _reap()
            if not victims:
                return
            if time.monotonic() >= deadline:
                self.retire = True
                return
            if self.pidns:
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)  # everything in our PID namespace but init and us
            for victim in victims:
                _kill(victim)
            attempt += 1
            time.sleep(min(0.001 * attempt, 0.02))

    def _leftovers(self, me: int) -> list[int]:
        """In a PID namespace everything but init and us; else every live process below us (we
        are a subreaper: orphans of a job, double-forked or in a new session, are reparented to
        us; where we could not become one, every process of the job uid too)."""
        table = _process_table()
        if self.pidns:
            return [pid for pid, (_, state) in table.items() if pid not in (1, me) and state != "Z"]
        below, frontier = set(), {me}
        while frontier:
            frontier = {pid for pid, (ppid, _) in table.items() if ppid in frontier} - below
            below |= frontier
        if self.job_uid is not None and not self.subreaper:
            below |= {pid for pid in table if pid != me and _real_uid(pid) == self.job_uid}
        return sorted(pid for pid in below if table.get(pid, (0, ""))[1] != "Z")

    def clean(self) -> None:
        jobdir = os.path.join(self.base, "job")
        try:  # the common case: the job left nothing but its program
            os.unlink(os.path.join(jobdir, "main.py"))
            os.rmdir(jobdir)
        except OSError:
            _remove(jobdir)
        for directory in self.private:  # our own tmpfs: wipe what the job left anywhere in it
            with contextlib.suppress(OSError):
                for name in os.listdir(directory):
                    path = os.path.join(directory, name)
                    if not any(_under(keep, path) for keep in self.keep):
                        _remove(path)
        if self.shared_tmp:  # the host's /tmp & co: what the job uid owns there
            watch = self.tmp_watch
            changed = watch.changed() if watch is not None else None
            for directory in PRIVATE_DIRS:
                if changed is not None and not any(_under(path, directory) for path in changed):
                    continue  # nothing was made there since the last look: no scan
                if watch is None:
                    _remove_owned(directory, self.job_uid, depth=2)
                elif not watch.scan(directory, self.job_uid):
                    watch.close()
                    self.tmp_watch = watch = None


class _TmpWatch:
    """inotify on the shared temporary directories and their world-writable subdirectories, so
    that after a job only a directory in which something was made, moved in or had its mode
    changed is scanned for what the job's uid left: a scan reads every entry, slow in a big /tmp.
    A top-level directory that cannot be watched (absent, refused) is scanned after every job;
    when events overflow or the mount table changes (a mount sends no events), everything is."""

    EVENTS = 0x100 | 0x80 | 0x4  # IN_CREATE | IN_MOVED_TO | IN_ATTRIB
    ONLY_DIRECTORY, NO_FOLLOW = 0x1000000, 0x2000000  # IN_ONLYDIR, IN_DONT_FOLLOW
    OVERFLOW, IGNORED = 0x4000, 0x8000  # IN_Q_OVERFLOW; IN_IGNORED: the watch is gone

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.watched: dict[int, str] = {}
        self.unwatchable: set[str] = set()
        self.mounts = _MountTableWatch()

    @classmethod
    def start(cls, directories: tuple[str, ...], uid: int) -> _TmpWatch | None:
        """Watching `directories` (and, after removing what `uid` owns there, their world-writable
        subdirectories); None where inotify is unavailable (then every job scans)."""
        try:
            libc = _libc()
            libc.inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except AttributeError:
            return None
        if fd < 0:
            return None
        watch = cls(fd)
        if not all([watch.scan(directory, uid) for directory in directories]):
            watch.close()
            return None
        return watch

    def scan(self, directory: str, uid: int) -> bool:
        """Watch `directory` (whatever inode is there now: a directory renamed and made afresh,
        or mounted over, is a new one), remove what `uid` owns in it, then watch its
        world-writable subdirectories; False when out of watches (the removal is done anyway)."""
        watching = self.add_top(directory)  # first: nothing made during the scan goes unseen
        open_to_all = _remove_owned(directory, uid, depth=2)
        return watching and self.add(open_to_all)

    def add_top(self, directory: str) -> bool:
        """Watch a top-level directory, following a symlink as its scan does; False when out of
        watches."""
        return self._add(directory, self.EVENTS | self.ONLY_DIRECTORY, top=True)

    def add(self, directories: list[str]) -> bool:
        """Watch world-writable subdirectories (never through a symlink); False when out of
        watches. Asked again for a known path: the same inode keeps its watch, a new one gets
        its own."""
        flags = self.EVENTS | self.ONLY_DIRECTORY | self.NO_FOLLOW
        return all(self._add(directory, flags, top=False) for directory in directories)

    def _add(self, directory: str, flags: int, top: bool) -> bool:
        wd = _libc().inotify_add_watch(self.fd, os.fsencode(directory), flags)
        if wd >= 0:
            self.watched[wd] = directory
            self.unwatchable.discard(directory)
            return True
        if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP):
            if top:
                self.unwatchable.add(directory)  # scanned after every job instead
            return True  # a subdirectory gone or no longer a directory: nothing to watch there
        return False

    def changed(self) -> set[str] | None:
        """The directories to scan now: where events came since the last call, and those that
        cannot be watched; None (scan everything) when events were lost or mounts changed."""
        changed = set(self.unwatchable)
        lost = self.mounts.changed()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                return None
            offset = 0
            while offset + 16 <= len(data):  # struct inotify_event: wd, mask, cookie, len, name
                wd = int.from_bytes(data[offset : offset + 4], sys.byteorder, signed=True)
                mask = int.from_bytes(data[offset + 4 : offset + 8], sys.byteorder)
                offset += 16 + int.from_bytes(data[offset + 12 : offset + 16], sys.byteorder)
                if mask & self.OVERFLOW:
                    lost = True
                elif wd in self.watched:
                    changed.add(self.watched[wd])
                    if mask & self.IGNORED:
                        del self.watched[wd]  # its directory is gone: rescanned, so re-watched
        return None if lost else changed

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.mounts.close()


class _MountTableWatch:
    """Has our mount table changed since the last call? /proc/self/mountinfo reports it as a
    priority event to poll(2). Always yes where it cannot be watched."""

    def __init__(self) -> None:
        self.poller = select.poll()
        try:
            self.fd: int | None = os.open("/proc/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None
            return
        self.poller.register(self.fd, select.POLLPRI)
        self.changed()  # the first poll reports the table as new

    def changed(self) -> bool:
        if self.fd is None:
            return True
        return bool(self.poller.poll(0))

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process we can see."""
    table = {}
    for pid in _proc_pids():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            table[pid] = (int(fields[1]), fields[0])
        except (OSError, ValueError, IndexError):
            continue
    return table


def _proc_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _status_fields(pid: int) -> dict[str, str]:
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
    except OSError:
        return {}
    return fields


def _real_uid(pid: int) -> int | None:
    try:
        return int(_status_fields(pid)["Uid"].split()[0])
    except (KeyError, ValueError, IndexError):
        return None


def _user_threads(uid: int) -> int:
    """Threads (what RLIMIT_NPROC counts) of every process whose real uid is `uid`."""
    total = 0
    for pid in _proc_pids():
        fields = _status_fields(pid)
        try:
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields.get("Threads", "1"))
        except (KeyError, ValueError, IndexError):
            continue
    return total


def _children_left() -> bool:
    """Has this process any child, running or a zombie (none are reaped here)? __WALL: a child
    cloned with an exit signal other than SIGCHLD counts too."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT | WALL)
    except ChildProcessError:
        return False
    return True


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
            # A job may chmod 000 its own directories: the worker restores access and retries,
            # only to directories inside the tree it removes (never the one holding it, such as
            # /tmp, which a concurrent job can keep non-empty) and never through a symlink.
            for directory in (os.path.dirname(failed), failed):
                if _under(directory, path):
                    with contextlib.suppress(OSError):
                        _unlock_directory(directory)
            with contextlib.suppress(OSError):
                function(failed)

        # Deferred: shutil (and what it imports) stays out of the warm worker that every job's
        # fork copies; only a job that left a directory tree behind pays for it.
        import shutil

        shutil.rmtree(path, onerror=unlock)
    elif os.path.lexists(path):  # a fifo, a socket
        with contextlib.suppress(OSError):
            os.unlink(path)


def _unlock_directory(path: str) -> None:
    """chmod 0700 the directory at `path` itself: what a symlink there points to is refused."""
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY)
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)  # chmod through the descriptor (no fchmod on O_PATH)
    finally:
        os.close(fd)


def _remove_owned(directory: str, uid: int, depth: int) -> list[str]:
    """Remove what `uid` owns in `directory`, looking into world-writable subdirectories; returns
    the world-writable subdirectories it looked into."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    open_to_all = []
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if st.st_uid == uid:
            _remove(entry.path)
        elif depth > 1 and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH:
            open_to_all.append(entry.path)
            _remove_owned(entry.path, uid, depth - 1)
    return open_to_all


def _pump(fd: int, tail: _Tail) -> None:
    """Read what `fd` has now into its tail; mark it at end of file."""
    for _ in range(16):
        try:
            chunk = os.read(fd, PIPE_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            tail.eof = True
            return
        tail.add(chunk)


def _poll_streams(poller: select.poll, streams: dict[int, _Tail], timeout: float) -> None:
    for fd, _ in poller.poll(max(1, math.ceil(timeout * 1000))):
        tail = streams.get(fd)
        if tail is not None and not tail.eof:
            _pump(fd, tail)
            if tail.eof:
                poller.unregister(fd)


def _wait(
    pid: int, wall: float, streams: dict[int, _Tail]
) -> tuple[int, resource.struct_rusage | None, bool]:
    """Wait for the job child up to `wall` seconds, reading its output meanwhile; past the
    limit kill its process group."""
    deadline = time.monotonic() + wall
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in streams:
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    try:
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                return status, usage, False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
                _kill(pid)
                _, status, usage = os.wait4(pid, 0)
                return status, usage, True
            timeout = remaining if pidfd is not None else min(remaining, 0.005)
            _poll_streams(poller, streams, timeout)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _drain(streams: dict[int, _Tail], limit_s: float) -> None:
    """Read what is left in the pipes (the job and its leftovers are gone: writers closed)."""
    deadline = time.monotonic() + limit_s
    poller = select.poll()
    for fd, tail in streams.items():
        if not tail.eof:
            poller.register(fd, select.POLLIN)
    while not all(tail.eof for tail in streams.values()):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        _poll_streams(poller, streams, remaining)


def _trusted_report(data: bytes | bytearray, nonce: str) -> dict:
    """The harness's report: the last JSON line carrying this job's nonce (a program may write
    anything to the pipe, but not the nonce)."""
    lines = bytes(data).decode("utf-8", "replace").strip().splitlines()
    for line in reversed(lines):
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, dict) and report.get("nonce") == nonce:
            return report
    return {}


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
        if kind == "done" or job.get("cold"):  # a cold job has no harness: its status decides
            return PASSED, ""
        if kind == "setup":
            return RUNTIME_ERROR, "sandbox set-up failed: " + detail
        if kind not in FAILURE_KINDS:
            reason = detail or "exit status 0 without the harness's report: os._exit(0)?"
            return RUNTIME_ERROR, f"exited before the tests finished ({reason})"
        # A failure the harness saw, then status 0 (an exit handler's os._exit(0)): the failure.
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
    if kind == "done":
        return RUNTIME_ERROR, f"exit status {code} after the program finished"
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


def _child(job, state, jobdir, main_path, fds) -> None:
    """Runs in the forked child; never returns. `fds`: stdout, stderr, report, nonce."""
    code = 1
    try:
        _setup_fds(state.null_fd, fds)
    except BaseException:
        os._exit(1)  # no report: fd 3 and 4 may still be the worker's own
    try:
        _prepare_child(job, state, jobdir)
    except BaseException as exc:
        _report({"kind": "setup", "detail": f"{type(exc).__name__}: {exc}"})
        os._exit(1)
    try:
        if job.get("cold"):
            # The baseline of benchmarks/bench_sandbox.py: a fresh interpreter per job.
            os.execv(state.python, [state.python, "-s", main_path])
        code = _run_program(job, main_path)
    finally:
        os._exit(code)


def _setup_fds(null: int, fds) -> None:
    """0 /dev/null, 1 stdout, 2 stderr, 3 report, 4 nonce; every other descriptor closed."""
    sources = [null if null >= 0 else os.open(os.devnull, os.O_RDONLY), *fds]
    if min(sources) < len(sources):
        # Lifted above the target numbers first, so that no dup2 below clobbers a source.
        sources = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in sources]
    for target, source in enumerate(sources):  # 0 stdin, 1 stdout, 2 stderr, 3 report, 4 nonce
        os.dup2(source, target)
    keep = set(range(len(sources)))
    if _close_from(len(sources)):
        os.set_inheritable(REPORT_FD, False)
        os.set_inheritable(NONCE_FD, False)
        return
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.set_inheritable(REPORT_FD, False)
    os.set_inheritable(NONCE_FD, False)


def _close_from(first: int) -> bool:
    """close_range(2): close every descriptor from `first` up, in one call; False where the
    kernel or libc lacks it (the caller then closes them one by one)."""
    try:
        close_range = _libc().close_range
    except AttributeError:
        return False
    return close_range(first, 0xFFFFFFFF, 0) == 0


def _prepare_child(job, state, jobdir) -> None:
    os.setsid()
    # _signal, not signal: the latter's enum wrapping costs a fresh child more than the calls.
    for sig in (_signal.SIGTERM, _signal.SIGCHLD, _signal.SIGHUP, _signal.SIGXCPU):
        if _signal.getsignal(sig) != _signal.SIG_DFL:
            _signal.signal(sig, _signal.SIG_DFL)
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    os.chdir(jobdir)
    _drop_privileges(state)
    _set_limits(job, state)
    if not state.env_adopted or state.env["HOME"] != jobdir:
        os.environ.clear()
        os.environ.update({**state.env, "HOME": jobdir, "TMPDIR": jobdir})
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None  # cached by the worker: the job's TMPDIR is its own directory
    sys.stdin, sys.stdout, sys.stderr = state.std_streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = state.std_streams


def _stream_codec(stream) -> dict[str, str]:
    return {
        "encoding": getattr(stream, "encoding", None) or "utf-8",
        "errors": getattr(stream, "errors", None) or "strict",
    }


def _std_streams() -> tuple:
    """A job's sys.stdin, stdout and stderr, made once by the worker: what a fresh interpreter
    makes for /dev/null on 0 and pipes on 1 and 2. They are made while 1 and 2 are pipes, so that
    they know them unseekable as they will be in the job; the worker never touches them again, so
    every job gets them empty."""
    read, write = os.pipe()
    saved = (os.dup(1), os.dup(2))
    try:
        os.dup2(write, 1)
        os.dup2(write, 2)
        # Encodings and error handlers as this interpreter chose them for its own streams at
        # start-up (the job has the same locale): UTF-8 with surrogateescape under C.UTF-8.
        streams = (
            open(0, closefd=False, **_stream_codec(sys.__stdin__)),  # noqa: SIM115
            open(1, "w", closefd=False, **_stream_codec(sys.__stdout__)),  # noqa: SIM115
            open(  # noqa: SIM115
                2, "w", buffering=1, closefd=False, **_stream_codec(sys.__stderr__)
            ),
        )
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, read, write):
            os.close(fd)
    return streams


def _drop_privileges(state: _WorkerState) -> None:
    """Give up every capability; as root also the uid (no_new_privs and an empty ambient set
    come from the worker, which set them once)."""
    # The bounding set is left alone: with no_new_privs and an empty permitted set, exec (of a
    # set-uid or file-capability binary, or as uid 0 under SECBIT_NOROOT) grants nothing.
    if state.job_uid is None:
        with contextlib.suppress(SetupError):
            _prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED)
        with contextlib.suppress(SetupError):
            _prctl(PR_SET_DUMPABLE, 1)  # the worker is not; the program is, as a fresh one is
    else:
        uid = state.job_uid
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # clears every capability set (no keepcaps)
    _capset(state.no_caps)


def _set_limits(job: dict, state: _WorkerState) -> None:
    cpu = max(1, math.ceil(float(job["cpu_s"])))
    file_bytes = int(job["file_mb"]) * 1024 * 1024
    nproc = int(job["nproc"])
    if state.job_uid is None:
        # Without a uid of its own the job shares the count (threads, not processes) with its
        # user's other processes.
        nproc += _user_threads(os.getuid()) + 4
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    memory = int(job["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _report(report: dict) -> None:
    """Write the job's one report, signed with the nonce read now (the program is over)."""
    try:
        nonce = os.read(NONCE_FD, 64).decode("ascii", "replace")
    except OSError:
        nonce = ""
    with contextlib.suppress(OSError):
        line = "\n" + json.dumps({**report, "nonce": nonce}) + "\n"
        os.write(REPORT_FD, line.encode("utf-8", "replace"))


def _run_program(job: dict, main_path: str) -> int:
    """Compile, then run as __main__; returns the exit status a fresh interpreter would give."""
    me = os.getpid()  # a forked copy that runs to the end reports nothing
    source = job["program"]
    sys.argv = [main_path]
    sys.path[0] = os.path.dirname(main_path)
    try:
        code = compile(source, main_path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        import traceback  # one of PRELOADED: the worker has it; the launcher stages never need it

        text = "".join(traceback.format_exception_only(type(exc), exc))
        sys.stderr.write(text)
        sys.stderr.flush()
        _report({"kind": "syntax", "detail": text.strip()})
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
    if os.getpid() == me:
        # Before shutdown: "done" means the last top-level statement ran; what exit handlers
        # and threads do next can only change the status.
        _report(report)
    return _finish(status)


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{exc.code}\n")
    return 1


def _describe(exc: BaseException, main_path: str, source: str) -> dict:
    import traceback  # one of PRELOADED: the worker has it; the launcher stages never need it

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


def _closed(stream) -> bool:
    try:
        return bool(stream.closed)
    except Exception:
        return False


def _finish(status: int) -> int:
    """What interpreter shutdown does: join threads, run atexit, flush; may change the status."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:
        status = status or 1
    for stream in (sys.stdout, sys.stderr):
        # As CPython's shutdown: a stream set to None or closed by the program is left alone.
        if stream is None or _closed(stream):
            continue
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
            _launch_rlimits(config)
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
