"""The AutoCodeBench-style /submit service over the sandbox."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from forkingpaths.benchmarks.creativebench.sandbox import Limits, Sandbox
from forkingpaths.benchmarks.creativebench.serve import OUTCOMES, make_app, serve

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


@pytest_asyncio.fixture
async def client() -> AsyncIterator[TestClient]:
    limits = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=512)
    async with (
        Sandbox(python=sys.executable, workers=2, limits=limits) as sandbox,
        TestClient(TestServer(make_app(sandbox))) as test_client,
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
    answers = await asyncio.gather(
        *(
            submit(client, {"src_uid": f"c{i}", "lang": "python", "source_code": f"print({i})"})
            for i in range(8)
        )
    )
    assert [a["exec_cout"] for a in answers] == [f"{i}\n" for i in range(8)]
    assert [a["src_uid"] for a in answers] == [f"c{i}" for i in range(8)]


async def test_serve_listens_on_a_real_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with Sandbox(python=sys.executable, workers=1) as sandbox:
        task = asyncio.create_task(serve(port, sandbox))
        try:
            async with aiohttp.ClientSession() as session:
                # Until the server listens, however long a busy machine takes to get there.
                while True:
                    assert not task.done(), task
                    try:
                        async with session.get(f"http://127.0.0.1:{port}/health") as health:
                            assert (await health.json())["status"] == "ok"
                        break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.05)
                payload = {"src_uid": "p", "lang": "python", "source_code": "print(6 * 7)"}
                async with session.post(f"http://127.0.0.1:{port}/submit", json=payload) as resp:
                    answer = await resp.json()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert (answer["exec_outcome"], answer["exec_cout"]) == ("PASSED", "42\n")
