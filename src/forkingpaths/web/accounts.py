"""The study's SQLite store and accounts: users, sessions, login limits, assignments, `require`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from aiohttp import web
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from forkingpaths.core.errors import ConfigError, shown

ROLES = ("viewer", "player", "annotator", "admin")
"""Who may do what: a viewer reads runs, a player plays, an annotator annotates, an admin all."""
KINDS = ("play", "metric2", "validity", "summary")
"""What an assignment asks of its person."""

SESSION_COOKIE = "fp_session"
CSRF_HEADER = "X-CSRF-Token"
SESSION_SECONDS = 12 * 3600
FAILURE_WINDOW_SECONDS = 15 * 60
MAX_FAILURES_PER_NAME = 5
MAX_FAILURES_PER_IP = 20
MAX_PASSWORD_LENGTH = 1024
"""Longer passwords are refused so a request cannot make the hasher work on megabytes."""

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

MIGRATIONS: list[str] = [
    """
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT UNIQUE NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('viewer', 'player', 'annotator', 'admin')),
        password_hash TEXT NOT NULL,
        created_at TEXT
    );
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
        csrf TEXT,
        created_at TEXT,
        expires_at REAL
    );
    CREATE TABLE login_failures (key TEXT, at REAL);
    CREATE INDEX login_failures_key ON login_failures (key, at);
    CREATE TABLE assignments (
        id INTEGER PRIMARY KEY,
        user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
        kind TEXT CHECK (kind IN ('play', 'metric2', 'validity', 'summary')),
        benchmark TEXT,
        item TEXT,
        created_at TEXT,
        done_at TEXT,
        UNIQUE (user_id, kind, benchmark, item)
    );
    CREATE TABLE setup (token_hash TEXT);
    """,
]
"""The accounts' schema, one script per version; append, never edit one that has shipped."""


class NameTaken(ConfigError):
    """A user of that name exists already (HTTP 409)."""


class UnknownUser(ConfigError):
    """No user has that name (HTTP 404)."""


class SetupRefused(ConfigError):
    """The first-admin setup was asked with a wrong token or after an admin exists (HTTP 403)."""


@dataclass(frozen=True)
class User:
    """A person with an account."""

    id: int
    name: str
    role: str

    def public(self) -> dict[str, str]:
        """What the browser is told about this person."""
        return {"name": self.name, "role": self.role}


@dataclass(frozen=True)
class Assignment:
    """One item a person is asked to play or annotate."""

    id: int
    user: str
    kind: str
    benchmark: str
    item: str
    done: bool

    def public(self) -> dict[str, object]:
        """The assignment as JSON."""
        return {
            "id": self.id,
            "user": self.user,
            "kind": self.kind,
            "benchmark": self.benchmark,
            "item": self.item,
            "done": self.done,
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _statements(script: str) -> Iterator[str]:
    # Split as the sqlite3 shell does, so a trigger's `;` inside BEGIN ... END stays whole;
    # executescript would commit the migration's transaction before running.
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer
            buffer = ""
    if buffer.strip(" \t\r\n;"):
        yield buffer


def check_name(name: object, field: str = "name") -> str:
    """A user name as given, or ConfigError naming `field`."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{field}: got {shown(name)}; allowed: 1 to 40 of A-Z a-z 0-9 _ . -")
    return name


def check_password_text(password: object) -> str:
    """A password as given, or ConfigError naming the field."""
    if not isinstance(password, str) or not 8 <= len(password) <= MAX_PASSWORD_LENGTH:
        raise ConfigError(f"password: give 8 to {MAX_PASSWORD_LENGTH} characters")
    return password


def check_role(role: object) -> str:
    """A role as given, or ConfigError naming the field."""
    if role not in ROLES:
        raise ConfigError(f"role: got {shown(role)}; allowed: {', '.join(ROLES)}")
    return str(role)


def check_kind(kind: object) -> str:
    """An assignment kind as given, or ConfigError naming the field."""
    if kind not in KINDS:
        raise ConfigError(f"kind: got {shown(kind)}; allowed: {', '.join(KINDS)}")
    return str(kind)


class StudyStore:
    """The study's SQLite file: accounts here, and every other module's tables by `migrate`.
    Each `connect()` opens its own connection, so handlers running in threads never share one;
    WAL with synchronous=FULL means a committed write survives the server being killed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            # The journal mode is kept in the file; setting it once is enough.
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        self.migrate("accounts", MIGRATIONS)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.row_factory = sqlite3.Row
        return conn

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one write transaction: committed on exit, rolled back on error."""
        conn = self._open()
        try:
            # IMMEDIATE takes the write lock now: two writers wait on each other instead of
            # failing when a read transaction tries to become a write one.
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def migrate(self, component: str, migrations: list[str]) -> int:
        """Apply `component`'s scripts not applied yet, each in its own transaction; returns
        the component's version (how many of its scripts the file holds)."""
        with self.connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_versions "
                "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
        for number, script in enumerate(migrations, start=1):
            with self.connect() as conn:
                # Read inside the transaction: two servers starting at once apply each once.
                if self._version(conn, component) >= number:
                    continue
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                    "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                    (component, number),
                )
        with self.connect() as conn:
            return self._version(conn, component)

    @staticmethod
    def _version(conn: sqlite3.Connection, component: str) -> int:
        row = conn.execute(
            "SELECT version FROM schema_versions WHERE component = ?", (component,)
        ).fetchone()
        return int(row[0]) if row else 0

    # Users

    @cached_property
    def _hasher(self) -> PasswordHasher:
        return PasswordHasher()

    @cached_property
    def _dummy_hash(self) -> str:
        # Checked against when a name is unknown, so a wrong name costs what a wrong password does.
        return self._hasher.hash(secrets.token_urlsafe(16))

    def first_admin_token(self) -> str | None:
        """A fresh one-time token for `setup_admin` while the study has no users (each call
        replaces the last); None once anyone has an account."""
        token = secrets.token_urlsafe(32)
        with self.connect() as conn:
            conn.execute("DELETE FROM setup")
            if conn.execute("SELECT 1 FROM users LIMIT 1").fetchone():
                return None
            conn.execute("INSERT INTO setup (token_hash) VALUES (?)", (_sha256(token),))
        return token

    def setup_admin(self, token: str, name: str, password: str) -> User:
        """Create the first admin, given the token `first_admin_token` returned."""
        check_name(name)
        password_hash = self._hasher.hash(check_password_text(password))
        with self.connect() as conn:
            if conn.execute("SELECT 1 FROM users LIMIT 1").fetchone():
                raise SetupRefused("token: the study has an admin already; log in instead")
            stored = [row[0] for row in conn.execute("SELECT token_hash FROM setup")]
            given = _sha256(token) if isinstance(token, str) else ""
            if not any(hmac.compare_digest(given, h) for h in stored):
                raise SetupRefused("token: wrong setup token; give the one the server printed")
            conn.execute("DELETE FROM setup")
            return self._insert_user(conn, name, "admin", password_hash)

    def add_user(self, name: str, password: str, role: str) -> User:
        """Create an account; NameTaken if the name is in use."""
        check_name(name)
        check_role(role)
        password_hash = self._hasher.hash(check_password_text(password))
        with self.connect() as conn:
            return self._insert_user(conn, name, role, password_hash)

    @staticmethod
    def _insert_user(conn: sqlite3.Connection, name: str, role: str, password_hash: str) -> User:
        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise NameTaken(f"name: {name!r} is taken; choose another")
        cursor = conn.execute(
            "INSERT INTO users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
            (name, role, password_hash, _now()),
        )
        return User(int(cursor.lastrowid or 0), name, role)

    def reset_password(self, name: str, password: str) -> User:
        """Give an account a new password (the admin's reset): its sessions end and its
        failed tries are forgotten, which also lifts a lock on its name."""
        check_name(name)
        password_hash = self._hasher.hash(check_password_text(password))
        with self.connect() as conn:
            row = conn.execute(
                "SELECT id, name, role FROM users WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                raise UnknownUser(f"user: no account named {name!r}")
            conn.execute(
                "UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, row["id"])
            )
            conn.execute("DELETE FROM sessions WHERE user_id = ?", (row["id"],))
            conn.execute(
                "DELETE FROM login_failures WHERE key = ?", (self._failure_keys(name, "")[0],)
            )
        return User(row["id"], row["name"], row["role"])

    def unassign(self, assignment_id: int) -> bool:
        """Take an assignment back (one made by mistake); whether it existed."""
        if type(assignment_id) is not int:
            raise ConfigError(f"id: got {shown(assignment_id)}; allowed: an assignment's number")
        with self.connect() as conn:
            return (
                conn.execute("DELETE FROM assignments WHERE id = ?", (assignment_id,)).rowcount > 0
            )

    def users(self) -> list[User]:
        """Every account, by name."""
        with self.connect() as conn:
            rows = conn.execute("SELECT id, name, role FROM users ORDER BY name").fetchall()
        return [User(row["id"], row["name"], row["role"]) for row in rows]

    def user(self, name: str) -> User | None:
        """The account of that name, if any."""
        with self.connect() as conn:
            row = conn.execute(
                "SELECT id, name, role FROM users WHERE name = ?", (name,)
            ).fetchone()
        return User(row["id"], row["name"], row["role"]) if row else None

    def check_password(self, name: str, password: str) -> User | None:
        """The user if the password is theirs, else None (an unknown name takes as long)."""
        row = None
        if isinstance(name, str) and _NAME.fullmatch(name):
            with self.connect() as conn:
                row = conn.execute(
                    "SELECT id, name, role, password_hash FROM users WHERE name = ?", (name,)
                ).fetchone()
        stored = row["password_hash"] if row else self._dummy_hash
        try:
            self._hasher.verify(stored, password if isinstance(password, str) else "")
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if row is None:
            return None
        if self._hasher.check_needs_rehash(stored):
            with self.connect() as conn:
                conn.execute(
                    "UPDATE users SET password_hash = ? WHERE id = ?",
                    (self._hasher.hash(password), row["id"]),
                )
        return User(row["id"], row["name"], row["role"])

    # Sessions

    def open_session(self, user: User) -> tuple[str, str]:
        """A new session for `user`: (token for the cookie, CSRF token for the header). Only
        the token's hash is kept, so a copy of the file logs nobody in."""
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        now = time.time()
        with self.connect() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))
            conn.execute(
                "INSERT INTO sessions (token_hash, user_id, csrf, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (_sha256(token), user.id, csrf, _now(), now + SESSION_SECONDS),
            )
        return token, csrf

    def session(self, token: str) -> tuple[User, str] | None:
        """The session's user and CSRF token, or None if it is unknown or expired."""
        if not isinstance(token, str) or not token:
            return None
        with self.connect() as conn:
            row = conn.execute(
                "SELECT users.id, users.name, users.role, sessions.csrf, sessions.expires_at "
                "FROM sessions JOIN users ON users.id = sessions.user_id "
                "WHERE sessions.token_hash = ?",
                (_sha256(token),),
            ).fetchone()
            if row is None:
                return None
            if row["expires_at"] <= time.time():
                conn.execute("DELETE FROM sessions WHERE token_hash = ?", (_sha256(token),))
                return None
        return User(row["id"], row["name"], row["role"]), row["csrf"]

    def close_session(self, token: str) -> None:
        """End a session (logout)."""
        with self.connect() as conn:
            conn.execute("DELETE FROM sessions WHERE token_hash = ?", (_sha256(token),))

    # Login limits

    @staticmethod
    def _failure_keys(name: str, ip: str) -> tuple[str, str]:
        return f"name:{str(name)[:100]}", f"ip:{ip}"

    def begin_login(self, name: str, ip: str) -> float | None:
        """Count a login try before its password is checked, in one transaction, so tries
        sent at once cannot all pass the limit: None after 5 failures for this name or 20 from
        this address in 15 minutes, else the try's time (`end_login` forgets it on success)."""
        now = time.time()
        with self.connect() as conn:
            if self._over_limit(conn, name, ip, now):
                return None
            conn.executemany(
                "INSERT INTO login_failures (key, at) VALUES (?, ?)",
                [(key, now) for key in self._failure_keys(name, ip)],
            )
        return now

    def end_login(self, name: str, ip: str, at: float) -> None:
        """A try that succeeded is no failure: its rows go."""
        with self.connect() as conn:
            conn.executemany(
                "DELETE FROM login_failures WHERE key = ? AND at = ?",
                [(key, at) for key in self._failure_keys(name, ip)],
            )

    def login_allowed(self, name: str, ip: str) -> bool:
        """False after 5 failures for this name or 20 from this address in 15 minutes."""
        with self.connect() as conn:
            return not self._over_limit(conn, name, ip, time.time())

    def _over_limit(self, conn: sqlite3.Connection, name: str, ip: str, now: float) -> bool:
        """Whether the name or the address used up its failures (older ones pruned first)."""
        conn.execute("DELETE FROM login_failures WHERE at < ?", (now - FAILURE_WINDOW_SECONDS,))
        name_key, ip_key = self._failure_keys(name, ip)
        count = {
            key: conn.execute(
                "SELECT COUNT(*) FROM login_failures WHERE key = ?", (key,)
            ).fetchone()[0]
            for key in (name_key, ip_key)
        }
        return count[name_key] >= MAX_FAILURES_PER_NAME or count[ip_key] >= MAX_FAILURES_PER_IP

    def record_failure(self, name: str, ip: str) -> None:
        """Count a failed login against the name and the address."""
        now = time.time()
        with self.connect() as conn:
            conn.executemany(
                "INSERT INTO login_failures (key, at) VALUES (?, ?)",
                [(key, now) for key in self._failure_keys(name, ip)],
            )

    def clear_failures(self, name: str) -> None:
        """Forget a name's failures once its owner logged in (the address's stay counted)."""
        with self.connect() as conn:
            conn.execute(
                "DELETE FROM login_failures WHERE key = ?", (self._failure_keys(name, "")[0],)
            )

    # Assignments

    def assign(self, user_name: str, kind: str, benchmark: str, items: list[str]) -> int:
        """Give `user_name` these items to do; returns how many were new (repeats are ignored)."""
        check_name(user_name, "user")
        check_kind(kind)
        if not isinstance(benchmark, str) or not _NAME.fullmatch(benchmark):
            raise ConfigError(
                f"benchmark: got {shown(benchmark)}; allowed: 1 to 40 of A-Z a-z 0-9 _ . -"
            )
        if not isinstance(items, list) or not all(
            isinstance(i, str) and 0 < len(i) <= 1000 for i in items
        ):
            raise ConfigError("items: give a list of non-empty strings (at most 1000 characters)")
        now = _now()
        with self.connect() as conn:
            row = conn.execute("SELECT id FROM users WHERE name = ?", (user_name,)).fetchone()
            if row is None:
                raise UnknownUser(f"user: no user named {shown(user_name)}")
            added = 0
            for item in items:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO assignments "
                    "(user_id, kind, benchmark, item, created_at) VALUES (?, ?, ?, ?, ?)",
                    (row["id"], kind, benchmark, item, now),
                )
                added += cursor.rowcount
        return added

    def assignments(self, user_name: str | None, kind: str | None = None) -> list[Assignment]:
        """A person's assignments (everyone's when `user_name` is None), optionally of one kind,
        in the order they were given."""
        where, args = [], []
        if user_name is not None:
            where.append("users.name = ?")
            args.append(user_name)
        if kind is not None:
            where.append("assignments.kind = ?")
            args.append(check_kind(kind))
        sql = (
            "SELECT assignments.id, users.name, kind, benchmark, item, done_at "
            "FROM assignments JOIN users ON users.id = assignments.user_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY assignments.id"
        )
        with self.connect() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [
            Assignment(
                r["id"], r["name"], r["kind"], r["benchmark"], r["item"], r["done_at"] is not None
            )
            for r in rows
        ]

    def mark_done(self, assignment_id: int, user_name: str | None = None) -> bool:
        """Mark an assignment done; given `user_name`, only if it is that person's. Returns
        whether such an assignment exists (marking twice keeps the first time)."""
        sql = "UPDATE assignments SET done_at = COALESCE(done_at, ?) WHERE id = ?"
        args: list[object] = [_now(), assignment_id]
        if user_name is not None:
            sql += " AND user_id = (SELECT id FROM users WHERE name = ?)"
            args.append(user_name)
        with self.connect() as conn:
            return conn.execute(sql, args).rowcount > 0


STORE = web.AppKey("store", StudyStore)
"""The application's StudyStore; route modules read `request.app[STORE]`."""


def json_error(status: int, message: str) -> web.HTTPException:
    """An HTTP error whose body is `{"error": message}`, to raise from a handler."""
    error_class = {
        400: web.HTTPBadRequest,
        401: web.HTTPUnauthorized,
        403: web.HTTPForbidden,
        404: web.HTTPNotFound,
        409: web.HTTPConflict,
        429: web.HTTPTooManyRequests,
    }.get(status, web.HTTPBadRequest)
    return error_class(
        text=json.dumps({"error": message}),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def current(request: web.Request) -> tuple[User, str] | None:
    """The request's session (user, CSRF token), or None if it has no valid one."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    return await asyncio.to_thread(request.app[STORE].session, token)


async def require(request: web.Request, *roles: str) -> User:
    """The logged-in user, if their role is one of `roles` (any role when none are given; an
    admin always passes). Raises 401 without a valid session, 403 for another role, and 403 for
    a POST/PUT/PATCH/DELETE whose X-CSRF-Token header is missing or wrong."""
    found = await current(request)
    if found is None:
        raise json_error(401, "session: not logged in; log in first")
    user, csrf = found
    if request.method in _UNSAFE_METHODS:
        given = request.headers.get(CSRF_HEADER, "")
        if not csrf or not hmac.compare_digest(given.encode(), csrf.encode()):
            raise json_error(403, f"{CSRF_HEADER}: missing or wrong; reload the page")
    if roles and user.role not in roles and user.role != "admin":
        raise json_error(403, f"role: {user.role} may not do this; needs {' or '.join(roles)}")
    return user


def set_session_cookie(response: web.StreamResponse, request: web.Request, token: str) -> None:
    """Hand the browser its session: never readable by scripts, never sent from another site."""
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=request.secure,
    )


def clear_session_cookie(response: web.StreamResponse, request: web.Request) -> None:
    """Make the browser forget its session."""
    response.del_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="Strict", secure=request.secure
    )
