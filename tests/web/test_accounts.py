"""The study's accounts: first-admin setup, logins and their limits, sessions, CSRF, roles,
assignments and queues, hashed secrets, durable writes and per-component migrations."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from forkingpaths.core.errors import ConfigError
from forkingpaths.web import admin_routes
from forkingpaths.web.accounts import (
    SESSION_COOKIE,
    STORE,
    NameTaken,
    SetupRefused,
    StudyStore,
    clear_session_cookie,
    set_session_cookie,
)

REPO = Path(__file__).resolve().parents[2]
ADMIN_PASSWORD = "admin-secret-123"
PLAYER_PASSWORD = "player-secret-456"


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    return StudyStore(tmp_path / "study.sqlite")


@pytest.fixture
async def server(store: StudyStore) -> AsyncIterator[TestServer]:
    app = web.Application()
    app[STORE] = store
    admin_routes.add_routes(app)
    async with TestServer(app) as test_server:
        yield test_server


async def _client(server: TestServer) -> TestClient:
    # Each client keeps its own cookies: one browser per person.
    client = TestClient(server)
    await client.start_server()
    return client


@pytest.fixture
async def admin(server: TestServer, store: StudyStore) -> AsyncIterator[tuple[TestClient, str]]:
    """A browser logged in as the first admin, and its CSRF token."""
    token = store.first_admin_token()
    client = await _client(server)
    response = await client.post(
        "/api/study/auth/setup", json={"token": token, "name": "ada", "password": ADMIN_PASSWORD}
    )
    assert response.status == 200, await response.text()
    yield client, (await response.json())["csrf"]
    await client.session.close()


async def _login(
    server: TestServer, name: str, password: str, status: int = 200
) -> tuple[TestClient, str]:
    client = await _client(server)
    response = await client.post("/api/study/auth/login", json={"name": name, "password": password})
    assert response.status == status, await response.text()
    body = await response.json()
    return client, body.get("csrf", "")


async def _error(response) -> str:  # type: ignore[no-untyped-def]
    body = await response.json()
    assert set(body) == {"error"}
    assert "\n" not in body["error"]
    return body["error"]


# Setup


async def test_the_setup_token_creates_one_admin_once(
    server: TestServer, store: StudyStore
) -> None:
    token = store.first_admin_token()
    assert token and len(token) >= 40
    client = await _client(server)
    try:
        wrong = await client.post(
            "/api/study/auth/setup",
            json={"token": "x" + token, "name": "ada", "password": ADMIN_PASSWORD},
        )
        assert wrong.status == 403
        assert (await _error(wrong)).startswith("token:")
        ok = await client.post(
            "/api/study/auth/setup",
            json={"token": token, "name": "ada", "password": ADMIN_PASSWORD},
        )
        assert ok.status == 200
        assert (await ok.json())["user"] == {"name": "ada", "role": "admin"}
        again = await client.post(
            "/api/study/auth/setup",
            json={"token": token, "name": "eve", "password": ADMIN_PASSWORD},
        )
        assert again.status == 403
        assert store.first_admin_token() is None
        assert [u.name for u in store.users()] == ["ada"]
    finally:
        await client.session.close()


def test_a_new_setup_token_replaces_the_last(store: StudyStore) -> None:
    first = store.first_admin_token()
    second = store.first_admin_token()
    assert first and second and first != second
    with pytest.raises(SetupRefused):
        store.setup_admin(first, "ada", ADMIN_PASSWORD)
    assert store.setup_admin(second, "ada", ADMIN_PASSWORD).role == "admin"


def test_names_passwords_and_roles_are_checked_with_the_field_named(store: StudyStore) -> None:
    for name, password, role, field in [
        ("", PLAYER_PASSWORD, "player", "name:"),
        ("a" * 41, PLAYER_PASSWORD, "player", "name:"),
        ("a b", PLAYER_PASSWORD, "player", "name:"),
        ("pat", "short", "player", "password:"),
        ("pat", PLAYER_PASSWORD, "king", "role:"),
    ]:
        with pytest.raises(ConfigError) as info:
            store.add_user(name, password, role)
        assert str(info.value).startswith(field)
        assert "\n" not in str(info.value)
    store.add_user("pat", PLAYER_PASSWORD, "player")
    with pytest.raises(NameTaken):
        store.add_user("pat", PLAYER_PASSWORD, "viewer")


# Login, logout, sessions


async def test_login_me_and_logout(admin: tuple[TestClient, str], server: TestServer) -> None:
    client, csrf = admin
    me = await client.get("/api/study/auth/me")
    assert me.status == 200
    assert await me.json() == {"user": {"name": "ada", "role": "admin"}, "csrf": csrf}
    added = await client.post(
        "/api/study/admin/users",
        json={"name": "pat", "password": PLAYER_PASSWORD, "role": "player"},
        headers={"X-CSRF-Token": csrf},
    )
    assert added.status == 201
    pat, pat_csrf = await _login(server, "pat", PLAYER_PASSWORD)
    try:
        token = pat.session.cookie_jar.filter_cookies(pat.make_url("/"))[SESSION_COOKIE].value
        assert (await (await pat.get("/api/study/auth/me")).json())["user"]["role"] == "player"
        out = await pat.post("/api/study/auth/logout", headers={"X-CSRF-Token": pat_csrf})
        assert out.status == 200
        assert (await pat.get("/api/study/auth/me")).status == 401
        # The ended session's token is refused even when a browser sends it again.
        replay = await pat.get("/api/study/auth/me", cookies={SESSION_COOKIE: token})
        assert replay.status == 401
    finally:
        await pat.session.close()


async def test_a_wrong_password_and_an_unknown_name_get_the_same_one_line(
    admin: tuple[TestClient, str], server: TestServer
) -> None:
    answers = []
    for name, password in [("ada", "wrong-password"), ("nobody", "wrong-password")]:
        client = await _client(server)
        try:
            response = await client.post(
                "/api/study/auth/login", json={"name": name, "password": password}
            )
            assert response.status == 401
            assert SESSION_COOKIE not in response.cookies
            answers.append(await _error(response))
        finally:
            await client.session.close()
    assert answers == ["name or password wrong"] * 2


async def test_the_sixth_try_on_a_name_is_refused_even_with_the_right_password(
    admin: tuple[TestClient, str], server: TestServer
) -> None:
    client = await _client(server)
    try:
        for _ in range(5):
            response = await client.post(
                "/api/study/auth/login", json={"name": "ada", "password": "wrong-password"}
            )
            assert response.status == 401
        sixth = await client.post(
            "/api/study/auth/login", json={"name": "ada", "password": ADMIN_PASSWORD}
        )
        assert sixth.status == 429
        assert (await _error(sixth)).startswith("login:")
    finally:
        await client.session.close()


def test_an_address_is_limited_to_twenty_failures_across_names(store: StudyStore) -> None:
    for n in range(20):
        assert store.login_allowed(f"name{n}", "10.0.0.1")
        store.record_failure(f"name{n}", "10.0.0.1")
    assert not store.login_allowed("fresh", "10.0.0.1")
    assert store.login_allowed("fresh", "10.0.0.2")
    # Failures older than the window are pruned and no longer count.
    with store.connect() as conn:
        conn.execute("UPDATE login_failures SET at = at - 16 * 60")
    assert store.login_allowed("fresh", "10.0.0.1")
    with store.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM login_failures").fetchone()[0] == 0


def test_an_expired_session_is_refused_and_forgotten(store: StudyStore) -> None:
    user = store.add_user("pat", PLAYER_PASSWORD, "player")
    token, csrf = store.open_session(user)
    assert store.session(token) == (user, csrf)
    with store.connect() as conn:
        conn.execute("UPDATE sessions SET expires_at = expires_at - 13 * 3600")
    assert store.session(token) is None
    with store.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0


async def test_the_session_cookie_is_http_only_strict_and_secure_over_https(
    server: TestServer, store: StudyStore
) -> None:
    client = await _client(server)
    try:
        response = await client.post(
            "/api/study/auth/setup",
            json={"token": store.first_admin_token(), "name": "ada", "password": ADMIN_PASSWORD},
        )
        header = response.headers["Set-Cookie"]
        assert header.startswith(f"{SESSION_COOKIE}=")
        assert "HttpOnly" in header
        assert "SameSite=Strict" in header
        assert "Path=/" in header
        assert "Secure" not in header  # plain http on loopback: a Secure cookie would be dropped
        assert response.cookies[SESSION_COOKIE].value not in await response.text()
    finally:
        await client.session.close()
    https = make_mocked_request("POST", "/api/study/auth/login").clone(scheme="https")
    answer = web.Response()
    set_session_cookie(answer, https, "tok")
    cookie = answer.cookies[SESSION_COOKIE]
    assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"
    cleared = web.Response()
    clear_session_cookie(cleared, https)
    assert cleared.cookies[SESSION_COOKIE]["max-age"] == "0"


# CSRF and roles


async def test_a_post_without_the_right_csrf_header_is_refused(
    admin: tuple[TestClient, str], store: StudyStore
) -> None:
    client, csrf = admin
    new_user = {"name": "pat", "password": PLAYER_PASSWORD, "role": "player"}
    for headers in [{}, {"X-CSRF-Token": ""}, {"X-CSRF-Token": csrf[:-1] + "x"}]:
        response = await client.post("/api/study/admin/users", json=new_user, headers=headers)
        assert response.status == 403
        assert (await _error(response)).startswith("X-CSRF-Token:")
    out = await client.post("/api/study/auth/logout")
    assert out.status == 403
    assert [u.name for u in store.users()] == ["ada"]
    ok = await client.post("/api/study/admin/users", json=new_user, headers={"X-CSRF-Token": csrf})
    assert ok.status == 201


async def test_a_form_post_is_refused_even_with_the_header(admin: tuple[TestClient, str]) -> None:
    client, csrf = admin
    response = await client.post(
        "/api/study/admin/users",
        data={"name": "pat", "password": PLAYER_PASSWORD, "role": "player"},
        headers={"X-CSRF-Token": csrf},
    )
    assert response.status == 400
    assert (await _error(response)).startswith("body:")


async def test_without_a_session_everything_but_login_is_401(server: TestServer) -> None:
    client = await _client(server)
    try:
        for method, path in [
            ("GET", "/api/study/auth/me"),
            ("GET", "/api/study/queue"),
            ("GET", "/api/study/admin/users"),
            ("GET", "/api/study/admin/assignments"),
            ("POST", "/api/study/admin/assign"),
            ("POST", "/api/study/admin/users"),
            ("POST", "/api/study/auth/logout"),
        ]:
            response = await client.request(
                method, path, json={}, cookies={SESSION_COOKIE: "made-up"}
            )
            assert response.status == 401, path
            assert (await _error(response)).startswith("session:")
    finally:
        await client.session.close()


async def test_a_player_cannot_manage_accounts_or_read_another_queue(
    admin: tuple[TestClient, str], server: TestServer
) -> None:
    client, csrf = admin
    for name in ("pat", "sam"):
        response = await client.post(
            "/api/study/admin/users",
            json={"name": name, "password": PLAYER_PASSWORD, "role": "player"},
            headers={"X-CSRF-Token": csrf},
        )
        assert response.status == 201
    for name, items in [("pat", ["p1", "p2", "p1"]), ("sam", ["s1"])]:
        response = await client.post(
            "/api/study/admin/assign",
            json={"user": name, "kind": "play", "benchmark": "griddag", "items": items},
            headers={"X-CSRF-Token": csrf},
        )
        assert response.status == 200
        assert (await response.json())["added"] == len(set(items))
    pat, pat_csrf = await _login(server, "pat", PLAYER_PASSWORD)
    try:
        for method, path, body in [
            ("GET", "/api/study/admin/users", None),
            ("GET", "/api/study/admin/assignments", None),
            ("POST", "/api/study/admin/users", {"name": "x", "password": "y" * 8, "role": "admin"}),
            (
                "POST",
                "/api/study/admin/assign",
                {"user": "pat", "kind": "play", "benchmark": "griddag", "items": ["s1"]},
            ),
        ]:
            response = await pat.request(
                method, path, json=body, headers={"X-CSRF-Token": pat_csrf}
            )
            assert response.status == 403, path
            assert (await _error(response)).startswith("role:")
        for query in ["", "?user=sam", "?user_name=sam&kind=play"]:
            queue = await (await pat.get("/api/study/queue" + query)).json()
            assert [(a["user"], a["item"]) for a in queue["assignments"]] == [
                ("pat", "p1"),
                ("pat", "p2"),
            ]
    finally:
        await pat.session.close()
    everyone = await (await client.get("/api/study/admin/assignments")).json()
    assert sorted(a["item"] for a in everyone["assignments"]) == ["p1", "p2", "s1"]
    listed = await (await client.get("/api/study/admin/users")).json()
    assert listed["users"] == [
        {"name": "ada", "role": "admin"},
        {"name": "pat", "role": "player"},
        {"name": "sam", "role": "player"},
    ]
    assert all("password" not in str(u) for u in listed["users"])


async def test_admin_input_errors_are_one_line_naming_the_field(
    admin: tuple[TestClient, str],
) -> None:
    client, csrf = admin
    for path, body, status, field in [
        (
            "/api/study/admin/users",
            {"name": "pat", "password": "short", "role": "player"},
            400,
            "password:",
        ),
        (
            "/api/study/admin/users",
            {"name": "ada", "password": ADMIN_PASSWORD, "role": "viewer"},
            409,
            "name:",
        ),
        (
            "/api/study/admin/assign",
            {"user": "nobody", "kind": "play", "benchmark": "griddag", "items": ["a"]},
            404,
            "user:",
        ),
        (
            "/api/study/admin/assign",
            {"user": "ada", "kind": "judge", "benchmark": "griddag", "items": ["a"]},
            400,
            "kind:",
        ),
        (
            "/api/study/admin/assign",
            {"user": "ada", "kind": "play", "benchmark": "griddag", "items": "a"},
            400,
            "items:",
        ),
        (
            "/api/study/admin/assign",
            {"user": "ada", "kind": "play", "benchmark": "", "items": ["a"]},
            400,
            "benchmark:",
        ),
    ]:
        response = await client.post(path, json=body, headers={"X-CSRF-Token": csrf})
        assert response.status == status, body
        assert (await _error(response)).startswith(field)
    bad_kind = await client.get("/api/study/queue?kind=judge")
    assert bad_kind.status == 400


def test_only_the_owner_marks_an_assignment_done(store: StudyStore) -> None:
    store.add_user("pat", PLAYER_PASSWORD, "player")
    store.add_user("sam", PLAYER_PASSWORD, "annotator")
    assert store.assign("pat", "metric2", "griddag", ["run|i|0|0|3"]) == 1
    assert store.assign("pat", "metric2", "griddag", ["run|i|0|0|3"]) == 0
    (item,) = store.assignments("pat", "metric2")
    assert not item.done
    assert store.assignments("pat", "play") == []
    assert not store.mark_done(item.id, "sam")
    assert not store.assignments("pat")[0].done
    assert store.mark_done(item.id, "pat")
    assert store.assignments("pat")[0].done


# Secrets at rest, durability, migrations


async def test_no_password_or_session_token_is_stored_in_plain(
    admin: tuple[TestClient, str], store: StudyStore
) -> None:
    client, csrf = admin
    await client.post(
        "/api/study/admin/users",
        json={"name": "pat", "password": PLAYER_PASSWORD, "role": "player"},
        headers={"X-CSRF-Token": csrf},
    )
    token = client.session.cookie_jar.filter_cookies(client.make_url("/"))[SESSION_COOKIE].value
    # Recent writes sit in the write-ahead log until a checkpoint: read both files.
    stored = b"".join(
        p.read_bytes() for p in store.path.parent.iterdir() if p.name.startswith(store.path.name)
    )
    assert b"$argon2id$" in stored
    for secret in (ADMIN_PASSWORD, PLAYER_PASSWORD, token):
        assert secret.encode() not in stored


def test_a_committed_write_survives_the_process_being_killed(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    writer = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from forkingpaths.web.accounts import StudyStore

        store = StudyStore(Path(sys.argv[1]))
        store.add_user("pat", "player-secret-456", "player")
        store.assign("pat", "validity", "griddag", ["file.jsonl#row-7"])
        store.migrate("notes", ["CREATE TABLE notes (user TEXT, text TEXT)"])
        with store.connect() as conn:
            conn.execute("INSERT INTO notes VALUES ('pat', 'the gold path is blocked')")
        print("committed", flush=True)
        time.sleep(120)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", writer, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "committed"
    finally:
        process.kill()  # SIGKILL: no cleanup, no checkpoint
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
    assert process.returncode == -9
    reopened = StudyStore(path)
    assert [(a.user, a.item) for a in reopened.assignments("pat")] == [("pat", "file.jsonl#row-7")]
    with reopened.connect() as conn:
        assert conn.execute("SELECT text FROM notes").fetchall()[0][0] == "the gold path is blocked"
    assert reopened.check_password("pat", "player-secret-456") is not None


def test_the_store_uses_wal_full_sync_and_foreign_keys(store: StudyStore) -> None:
    with store.connect() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    user = store.add_user("pat", PLAYER_PASSWORD, "player")
    store.assign("pat", "play", "griddag", ["i1"])
    store.open_session(user)
    with store.connect() as conn:
        conn.execute("DELETE FROM users WHERE name = 'pat'")
        assert conn.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0


def test_migrations_are_idempotent_and_each_component_has_its_own_version(
    store: StudyStore,
) -> None:
    from forkingpaths.web.accounts import MIGRATIONS

    assert store.migrate("accounts", MIGRATIONS) == len(MIGRATIONS)
    assert StudyStore(store.path).migrate("accounts", MIGRATIONS) == len(MIGRATIONS)
    # Scripts without IF NOT EXISTS: a second run of one would fail.
    notes = [
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);",
        """
        CREATE TABLE notes_log (note_id INTEGER, text TEXT);
        CREATE TRIGGER notes_logged AFTER INSERT ON notes BEGIN
            INSERT INTO notes_log VALUES (new.id, new.text);
        END;
        """,
    ]
    assert store.migrate("notes", notes[:1]) == 1
    assert store.migrate("notes", notes[:1]) == 1
    assert store.migrate("notes", notes) == 2
    assert store.migrate("notes", notes) == 2
    with store.connect() as conn:
        conn.execute("INSERT INTO notes (text) VALUES ('a; b')")
        assert conn.execute("SELECT text FROM notes_log").fetchall()[0][0] == "a; b"
        versions = dict(conn.execute("SELECT component, version FROM schema_versions").fetchall())
    assert versions == {"accounts": len(MIGRATIONS), "notes": 2}


def test_a_failing_migration_leaves_nothing_behind(store: StudyStore) -> None:
    broken = ["CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);"]
    with pytest.raises(sqlite3.OperationalError):
        store.migrate("broken", broken)
    with store.connect() as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "half" not in tables
        assert (
            conn.execute(
                "SELECT COUNT(*) FROM schema_versions WHERE component = 'broken'"
            ).fetchone()[0]
            == 0
        )
    assert store.migrate("broken", ["CREATE TABLE half (x INTEGER);"]) == 1


def test_threads_writing_at_once_each_get_their_own_connection(store: StudyStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    user = store.add_user("pat", PLAYER_PASSWORD, "player")
    token, _ = store.open_session(user)

    def work(n: int) -> int:
        assert store.session(token) is not None
        return store.assign("pat", "play", "griddag", [f"item-{n}"])

    with ThreadPoolExecutor(max_workers=16) as pool:
        assert sum(pool.map(work, range(200))) == 200
    assert len(store.assignments("pat", "play")) == 200


async def test_tries_sent_at_once_meet_the_limit(
    server: TestServer, store: StudyStore, admin: tuple[TestClient, str]
) -> None:
    # The try is counted before its (slow) password check: twelve at once give 5 wrong, 7 refused.
    store.add_user("pat", PLAYER_PASSWORD, "player")
    client = await _client(server)
    wrong = {"name": "pat", "password": "not the password"}
    answers = await asyncio.gather(
        *(client.post("/api/study/auth/login", json=wrong) for _ in range(12))
    )
    statuses = sorted(a.status for a in answers)
    assert statuses == [401] * 5 + [429] * 7
    # A right password after the limit is refused too; a success clears its own try.
    right = {"name": "pat", "password": PLAYER_PASSWORD}
    assert (await client.post("/api/study/auth/login", json=right)).status == 429
    await client.close()


async def test_an_admin_resets_a_password_and_takes_an_assignment_back(
    server: TestServer, store: StudyStore, admin: tuple[TestClient, str]
) -> None:
    client, csrf = admin
    headers = {"X-CSRF-Token": csrf}
    store.add_user("pat", PLAYER_PASSWORD, "player")
    for _ in range(5):
        store.record_failure("pat", "10.9.9.9")
    assert not store.login_allowed("pat", "10.0.0.1")
    answer = await client.post(
        "/api/study/admin/password",
        json={"name": "pat", "password": "a brand new one"},
        headers=headers,
    )
    assert answer.status == 200
    assert store.login_allowed("pat", "10.0.0.1"), "a reset lifts the lock on the name"
    assert store.check_password("pat", "a brand new one") is not None
    assert store.check_password("pat", PLAYER_PASSWORD) is None
    store.assign("pat", "play", "griddag", ["low-easy-s0"])
    (made,) = store.assignments("pat", "play")
    answer = await client.post("/api/study/admin/unassign", json={"id": made.id}, headers=headers)
    assert answer.status == 200 and store.assignments("pat", "play") == []
    again = await client.post("/api/study/admin/unassign", json={"id": made.id}, headers=headers)
    assert again.status == 404
