"""The AutoCodeBench-style /submit service over the sandbox."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from tests.doubles import run_cli

from forkingpaths.benchmarks.creativebench.sandbox import ExecResult, Limits, Sandbox
from forkingpaths.benchmarks.creativebench.serve import OUTCOMES, make_app, serve
from forkingpaths.core.errors import ConfigError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

FIELDS = {
    "src_uid",
    "all_code",
    "exec_cout",
    "exec_outcome",
    "exec_compile_message",
    "exec_runtime_message",
    "response_extensions",
}


TOKEN = "test-token-1"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest_asyncio.fixture
async def client() -> AsyncIterator[TestClient]:
    limits = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=512)
    async with (
        Sandbox(python=sys.executable, workers=2, limits=limits) as sandbox,
        TestClient(TestServer(make_app(sandbox, token=TOKEN)), headers=AUTH) as test_client,
    ):
        yield test_client


async def submit(client: TestClient, payload: dict, status: int = 200) -> dict:
    response = await client.post("/submit", json=payload)
    assert response.status == status
    return await response.json()


async def test_source_code_passes(client: TestClient) -> None:
    answer = await submit(
        client, {"src_uid": "t-1", "lang": "python", "source_code": "print('Hello World')"}
    )
    assert set(answer) == FIELDS
    assert answer["src_uid"] == "t-1"
    assert answer["exec_outcome"] == "PASSED"
    assert answer["exec_cout"] == "Hello World\n"
    assert answer["all_code"] == ""
    extensions = answer["response_extensions"]
    assert extensions["outcome"] == "PASSED"
    assert extensions["stdout"] == "Hello World\n"
    assert extensions["verdict"] == "PASSED"
    assert extensions["isolation"] in ("bwrap", "namespaces", "rlimits")


async def test_func_code_and_main_code_are_spliced(client: TestClient) -> None:
    func = "def double(x):\n    return 2 * x\n"
    main = "def test():\n    assert double(4) == 8\n\nif __name__ == '__main__':\n    test()\n"
    answer = await submit(
        client, {"src_uid": "t-2", "lang": "python3", "func_code": func, "main_code": main}
    )
    assert answer["exec_outcome"] == "PASSED"
    assert answer["all_code"] == func + "\n\n" + main


async def test_the_func_code_main_guard_is_stripped(client: TestClient) -> None:
    func = (
        "def double(x):\n    return 2 * x\n\nif __name__ == '__main__':\n    raise SystemExit(0)\n"
    )
    main = "assert double(4) == 9, 'main_code ran'\n"
    answer = await submit(
        client, {"src_uid": "g", "lang": "python", "func_code": func, "main_code": main}
    )
    assert answer["exec_outcome"] == "WRONG_ANSWER"
    assert "main_code ran" in answer["exec_runtime_message"]
    assert answer["all_code"] == "def double(x):\n    return 2 * x\n\n\n\n\n\n" + main


async def test_a_lone_surrogate_is_a_compilation_error(client: TestClient) -> None:
    program = "x = '\ud800'\nprint('ran')\n"
    answer = await submit(client, {"src_uid": "u", "lang": "python", "source_code": program})
    assert answer["exec_outcome"] == "COMPILATION_ERROR"
    assert "surrogates not allowed" in answer["exec_compile_message"]
    again = await submit(client, {"src_uid": "v", "lang": "python", "source_code": "print(1)"})
    assert again["exec_outcome"] == "PASSED"


async def test_an_early_exit_with_status_0_is_no_pass(client: TestClient) -> None:
    program = "import sys\nsys.exit(0)\nassert False, 'the tests'\n"
    answer = await submit(client, {"src_uid": "e", "lang": "python", "source_code": program})
    assert answer["exec_outcome"] == "RUNTIME_ERROR"
    assert "exited before the tests finished" in answer["exec_runtime_message"]


async def test_failures_map_to_autocodebench_outcomes(client: TestClient) -> None:
    wrong = await submit(
        client, {"src_uid": "w", "lang": "python", "source_code": "assert 1 + 1 == 3, 'math'"}
    )
    assert wrong["exec_outcome"] == "WRONG_ANSWER"
    assert "AssertionError: math" in wrong["exec_runtime_message"]
    broken = await submit(client, {"src_uid": "s", "lang": "python", "source_code": "def f(:"})
    assert broken["exec_outcome"] == "COMPILATION_ERROR"
    assert "SyntaxError" in broken["exec_compile_message"]
    assert broken["response_extensions"]["verdict"] == "SYNTAX_ERROR"
    crashed = await submit(client, {"src_uid": "r", "lang": "python", "source_code": "1 / 0"})
    assert crashed["exec_outcome"] == "RUNTIME_ERROR"
    assert "ZeroDivisionError" in crashed["exec_runtime_message"]
    slow = await submit(
        client,
        {
            "src_uid": "t",
            "lang": "python",
            "source_code": "import time\ntime.sleep(30)",
            "request_extensions": {"timeout": 1, "debug": "false"},
        },
    )
    # Asleep it uses no CPU time: only the wall clock (the request's timeout) can stop it.
    assert (slow["exec_outcome"], slow["exec_runtime_message"]) == (
        "TIME_LIMIT_EXCEEDED",
        "wall-clock limit of 1.0 s exceeded",
    )
    assert set(OUTCOMES.values()) >= {"PASSED", "COMPILATION_ERROR", "MEMORY_LIMIT_EXCEEDED"}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"lang": "python", "source_code": "pass"}, "src_uid"),
        ({"src_uid": "x", "source_code": "pass"}, "lang"),
        ({"src_uid": "x", "lang": "go", "source_code": "package main"}, "'go' is not supported"),
        ({"src_uid": "x", "lang": "python"}, "source_code"),
        ({"src_uid": "x", "lang": "python", "func_code": "pass"}, "source_code"),
        (
            {
                "src_uid": "x",
                "lang": "python",
                "source_code": "pass",
                "request_extensions": {"timeout": -1},
            },
            "request_extensions.timeout",
        ),
        (
            {
                "src_uid": "x",
                "lang": "python",
                "source_code": "pass",
                "request_extensions": {"timeout": "soon"},
            },
            "request_extensions.timeout",
        ),
    ],
)
async def test_requests_that_cannot_run_are_argument_errors(
    client: TestClient, payload: dict, message: str
) -> None:
    answer = await submit(client, payload)
    assert answer["exec_outcome"] == "ARGUMENT_ERROR"
    assert message in answer["exec_runtime_message"]


async def test_a_body_that_is_not_json_is_refused(client: TestClient) -> None:
    response = await client.post("/submit", data=b"{not json")
    assert response.status == 400
    assert (await response.json())["exec_outcome"] == "ARGUMENT_ERROR"


async def test_concurrent_submissions(client: TestClient) -> None:
    # As many as the server admits at once: 2 workers and, by default, 2 x 2 waiting.
    answers = await asyncio.gather(
        *(
            submit(client, {"src_uid": f"c{i}", "lang": "python", "source_code": f"print({i})"})
            for i in range(6)
        )
    )
    assert [a["exec_cout"] for a in answers] == [f"{i}\n" for i in range(6)]
    assert [a["src_uid"] for a in answers] == [f"c{i}" for i in range(6)]


async def test_serve_listens_on_a_real_port() -> None:
    urls: list[str] = []
    async with Sandbox(python=sys.executable, workers=1) as sandbox:
        task = asyncio.create_task(serve(0, sandbox, token=TOKEN, ready=urls.append))
        try:
            # Until the server listens, however long a busy machine takes to get there.
            while not urls:
                assert not task.done(), task
                await asyncio.sleep(0.05)
            (url,) = urls
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
            async with aiohttp.ClientSession(headers=AUTH) as session:
                async with session.get(f"{url}/health") as health:
                    assert (await health.json())["status"] == "ok"
                payload = {"src_uid": "p", "lang": "python", "source_code": "print(6 * 7)"}
                async with session.post(f"{url}/submit", json=payload) as resp:
                    answer = await resp.json()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert (answer["exec_outcome"], answer["exec_cout"]) == ("PASSED", "42\n")


async def test_serve_says_when_it_cannot_listen() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with Sandbox(python=sys.executable, workers=1) as sandbox:
            with pytest.raises(ConfigError) as caught:
                await serve(port, sandbox, token=TOKEN)
    assert str(caught.value) == f"cannot listen on 127.0.0.1:{port} (Address already in use)"


# --- the guards: token, timeout cap, bounded queue --------------------------------------------

HELLO = {"src_uid": "h", "lang": "python", "source_code": "print('hi')"}


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer test-token-2",
        "Bearer test-token-1x",
        f"Basic {TOKEN}",
        TOKEN,
        "Bearer tést-token-1",
    ],
)
async def test_every_request_needs_the_token(client: TestClient, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    async with aiohttp.ClientSession(headers=headers) as session:
        for method, path in (("POST", "/submit"), ("GET", "/health"), ("GET", "/nowhere")):
            async with session.request(method, client.make_url(path), json=HELLO) as response:
                assert response.status == 401, (method, path)
                assert response.headers["WWW-Authenticate"] == "Bearer"
                assert "Authorization: Bearer TOKEN" in (await response.json())["error"]


@pytest.mark.parametrize(
    "authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"Bearer  {TOKEN} "]
)
async def test_the_right_token_is_let_in(client: TestClient, authorization: str) -> None:
    async with aiohttp.ClientSession(headers={"Authorization": authorization}) as session:
        async with session.get(client.make_url("/health")) as health:
            assert health.status == 200
        async with session.post(client.make_url("/submit"), json=HELLO) as response:
            assert response.status == 200
            assert (await response.json())["exec_cout"] == "hi\n"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"token": ""}, "token: expected a non-empty string"),
        ({"token": "  "}, "token: expected a non-empty string"),
        ({"token": TOKEN, "max_timeout": 0}, "max_timeout: expected seconds > 0, got 0"),
        ({"token": TOKEN, "max_queue": -1}, "max_queue: expected a whole number >= 0, got -1"),
    ],
)
def test_make_app_checks_its_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_app(Sandbox(python=sys.executable, workers=1), **kwargs)
    assert str(caught.value) == message


@pytest.mark.parametrize("asked", [3600, 30.5, "31"])
async def test_a_timeout_over_the_default_cap_is_refused(client: TestClient, asked: object) -> None:
    # The fixture's sandbox has a 5 s wall limit: the default cap is AutoCodeBench's 30 s.
    payload = {**HELLO, "request_extensions": {"timeout": asked}}
    answer = await submit(client, payload, status=400)
    assert answer["exec_outcome"] == "ARGUMENT_ERROR"
    assert answer["exec_runtime_message"] == (
        f"request_extensions.timeout: {asked!r} s is over this server's cap of 30 s "
        "(serve --max-timeout)"
    )


async def test_autocodebench_s_own_timeout_is_within_the_default_cap(client: TestClient) -> None:
    answer = await submit(client, {**HELLO, "request_extensions": {"timeout": 30, "debug": "x"}})
    assert (answer["exec_outcome"], answer["exec_cout"]) == ("PASSED", "hi\n")


async def test_the_cap_is_configurable_and_bounds_the_sandbox_default() -> None:
    limits = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=512)
    async with (
        Sandbox(python=sys.executable, workers=1, limits=limits) as sandbox,
        TestClient(
            TestServer(make_app(sandbox, token=TOKEN, max_timeout=1)), headers=AUTH
        ) as test_client,
    ):
        refused = await submit(
            test_client, {**HELLO, "request_extensions": {"timeout": 2}}, status=400
        )
        assert refused["exec_runtime_message"] == (
            "request_extensions.timeout: 2 s is over this server's cap of 1 s (serve --max-timeout)"
        )
        # No timeout asked: the sandbox's own 5 s would exceed the cap, so the cap applies.
        slow = {"src_uid": "z", "lang": "python", "source_code": "import time\ntime.sleep(30)"}
        answer = await submit(test_client, slow)
    assert (answer["exec_outcome"], answer["exec_runtime_message"]) == (
        "TIME_LIMIT_EXCEEDED",
        "wall-clock limit of 1.0 s exceeded",
    )


class GatedSandbox(Sandbox):
    """A real sandbox whose jobs wait, once admitted, until the test opens the gate."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.gate = asyncio.Event()
        self.entered: asyncio.Queue[str] = asyncio.Queue()

    async def run_program(self, program: str, *, timeout: float | None = None) -> ExecResult:
        self.entered.put_nowait(program)
        await self.gate.wait()
        return await super().run_program(program, timeout=timeout)


@pytest.mark.parametrize(("max_queue", "admitted"), [(0, 1), (1, 2), (None, 3)])
async def test_a_full_queue_answers_503_with_retry_after(
    max_queue: int | None, admitted: int
) -> None:
    """One worker; `admitted` requests held busy (1 running + the queue, by default 2 x 1)."""
    sandbox = GatedSandbox(python=sys.executable, workers=1)
    async with (
        sandbox,
        TestClient(
            TestServer(make_app(sandbox, token=TOKEN, max_queue=max_queue)), headers=AUTH
        ) as test_client,
    ):
        held = [
            asyncio.create_task(
                submit(
                    test_client,
                    {"src_uid": f"held{i}", "lang": "python", "source_code": f"print({i})"},
                )
            )
            for i in range(admitted)
        ]
        for _ in held:  # every held request is admitted, and waits at the gate
            await sandbox.entered.get()
        response = await test_client.post("/submit", json={**HELLO, "src_uid": "one-more"})
        assert response.status == 503
        assert response.headers["Retry-After"] == "5"
        busy = await response.json()
        waiting = admitted - 1
        assert (busy["src_uid"], busy["exec_outcome"], busy["exec_runtime_message"]) == (
            "one-more",
            "BUSY",
            f"busy: 1 worker(s) running and {waiting} request(s) waiting "
            f"(serve --max-queue {waiting}); retry after 5 s",
        )
        # Bad requests are still told what is wrong, not that the server is busy.
        refused = await submit(test_client, {"lang": "python", "source_code": "pass"})
        assert refused["exec_outcome"] == "ARGUMENT_ERROR"
        sandbox.gate.set()
        answers = await asyncio.gather(*held)
        assert [a["exec_cout"] for a in answers] == [f"{i}\n" for i in range(admitted)]
        # The slots are free again.
        again = await submit(test_client, HELLO)
    assert again["exec_cout"] == "hi\n"


# --- the command line ---------------------------------------------------------------------------


def _get(url: str, token: str | None) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with opener.open(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@contextlib.contextmanager
def _serve_command(*args: str, token_env: str | None = None) -> Iterator[str]:
    """`forkingpaths creativebench serve --port 0 --workers 1 ARGS` in a child, with
    FORKINGPATHS_SERVE_TOKEN set to `token_env` (unset when None); yields its first line."""
    env = {k: v for k, v in os.environ.items() if k != "FORKINGPATHS_SERVE_TOKEN"}
    if token_env is not None:
        env["FORKINGPATHS_SERVE_TOKEN"] = token_env
    command = "from forkingpaths.cli import main; main()"
    argv = ["creativebench", "serve", "--port", "0", "--workers", "1", *args]
    proc = subprocess.Popen(
        [sys.executable, "-c", command, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=60)[1]
        yield line.rstrip("\n")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C: how the service stops
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_the_command_prints_where_it_listens_and_its_new_token() -> None:
    with _serve_command() as line:
        found = re.fullmatch(
            r"serving on (http://127\.0\.0\.1:\d+) \(token: ([A-Za-z0-9_-]{43})\)", line
        )
        assert found, line
        url, token = found.groups()
        assert _get(f"{url}/health", None) == 401
        assert _get(f"{url}/health", token + "x") == 401
        assert _get(f"{url}/health", token) == 200


def test_the_command_takes_its_token_from_the_environment() -> None:
    with _serve_command("--host", "127.0.0.1", token_env="from-the-env") as line:
        found = re.fullmatch(
            r"serving on (http://127\.0\.0\.1:\d+) "
            r"\(token: from --token or \$FORKINGPATHS_SERVE_TOKEN\)",
            line,
        )
        assert found, line
        (url,) = found.groups()
        assert _get(f"{url}/health", "from-the-env") == 200
        assert _get(f"{url}/health", "other") == 401


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port: expected 0 (any free port) to 65535, got 70000"),
        (["--workers", "0"], "--workers: expected a whole number >= 1, got 0"),
        (["--max-timeout", "0"], "--max-timeout: expected seconds > 0, got 0.0"),
        (["--max-timeout", "nan"], "--max-timeout: expected seconds > 0, got nan"),
        (["--max-queue", "-1"], "--max-queue: expected a whole number >= 0, got -1"),
        (
            ["--token", " "],
            "--token: expected a non-empty token (or unset $FORKINGPATHS_SERVE_TOKEN)",
        ),
    ],
)
def test_the_command_refuses_bad_options(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["creativebench", "serve", *args], capsys)
    assert (code, out, err) == (2, "", f"error: {message}\n")
