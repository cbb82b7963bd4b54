"""Runs against the real mock server: unreachable and failing endpoints, retry-errors, budget,
response cache, and a run killed with SIGKILL that completes on re-run with identical metrics."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.doubles import free_port

from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.models.mockserver import MockServer, run_mock_server_in_thread
from forkingpaths.runner.run import execute_run

INSTANCES = ["low-easy-s0", "low-easy-s1", "medium-easy-s0"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))


def _spec(base_url: str, **kw: object) -> RunSpec:
    base: dict[str, object] = {
        "benchmark": "griddag",
        "split": "main",
        "instances": INSTANCES,
        "agent": "react",
        "model": "openai-compat/griddag-frontier",
        "model_options": ModelOptions(base_url=base_url),
    }
    return RunSpec(**{**base, **kw})


async def test_unreachable_endpoint_errors_episodes_and_the_run_goes_on(tmp_path: Path) -> None:
    spec = _spec(f"http://127.0.0.1:{free_port()}/v1")
    options = RunOptions(concurrency=3, progress=False, max_retries=1, request_timeout_s=2)
    result = await execute_run(spec, options, runs_dir=tmp_path)
    assert result.metrics["episodes"] == {"planned": 3, "ok": 0, "errored": 3}
    assert all(r.status == "error" and "ModelError" in (r.error or "") for r in result.records())
    assert result.metrics["complete"] is True
    assert (result.run_dir.path / "report.html").exists()


async def test_failing_server_then_retry_errors_completes(tmp_path: Path) -> None:
    options = RunOptions(concurrency=3, progress=False, max_retries=1)
    async with MockServer(fault="500") as bad:
        assert bad.base_url
        spec = _spec(bad.base_url)
        first = await execute_run(spec, options, runs_dir=tmp_path, run_id="r")
        assert first.metrics["episodes"]["errored"] == 3
        assert bad.stats.requests == 3 * 2  # one call per episode, 1 + 1 retry each
        port = bad.port
    # Same endpoint, now healthy: without --retry-errors nothing is re-run.
    async with MockServer(port=port):
        again = await execute_run(spec, options, runs_dir=tmp_path, run_id="r")
        assert again.new_episodes == 0
        healed = await execute_run(
            spec, options.model_copy(update={"retry_errors": True}), runs_dir=tmp_path, run_id="r"
        )
    assert healed.new_episodes == 3
    assert healed.metrics["episodes"] == {"planned": 3, "ok": 3, "errored": 0}
    assert healed.metrics["metrics"]["success_rate"] == 1.0


async def test_budget_stops_scheduling_new_episodes(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "schema_version: 1\nmodels:\n  griddag-frontier:\n"
        "    input: 1000000\n    cached_input: 1000000\n    output: 1000000\n"
    )
    options = RunOptions(concurrency=1, progress=False, budget_usd=1.0, prices_path=str(prices))
    async with MockServer() as server:
        assert server.base_url
        result = await execute_run(_spec(server.base_url), options, runs_dir=tmp_path)
    assert result.budget_exhausted
    assert result.new_episodes == 1, "the first episode spends the budget; no other starts"
    assert result.metrics["complete"] is False
    assert result.metrics["usage"]["cost_usd"] > 1.0


async def test_cache_hits_are_marked_and_skip_the_server(tmp_path: Path) -> None:
    options = RunOptions(concurrency=3, progress=False)
    async with MockServer() as server:
        assert server.base_url
        spec = _spec(server.base_url)
        first = await execute_run(spec, options, runs_dir=tmp_path)
        requests = server.stats.requests
        second = await execute_run(spec, options, runs_dir=tmp_path, force_new=True)
        assert server.stats.requests == requests, "every call of the second run is a cache hit"
    assert first.metrics["usage"]["cached_calls"] == 0
    assert second.metrics["usage"]["cached_calls"] == second.metrics["usage"]["calls"] > 0
    assert all(c.cached for r in second.records() for s in r.steps for c in s.calls)
    assert second.metrics["metrics"] == first.metrics["metrics"]


def _cli(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FORKINGPATHS_CACHE_DIR": str(cwd / "cache")}
    return subprocess.Popen(
        [sys.executable, "-m", "forkingpaths.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_run_completes_on_rerun_with_identical_metrics(tmp_path: Path, sig: int) -> None:
    instances = "low-easy-s0,low-easy-s1,low-easy-s2,medium-easy-s0,medium-easy-s1,low-medium-s1"
    with run_mock_server_in_thread(latency_ms=15) as base_url:
        args = [
            "run", "griddag", "--agent", "react", "--model", "openai-compat/griddag-frontier",
            "--base-url", base_url, "--instances", instances, "--concurrency", "2",
            "--no-progress", "--no-cache",
        ]  # fmt: skip
        proc = _cli(*args, "--run-id", "killed", cwd=tmp_path)
        episodes = tmp_path / "runs" / "killed" / "episodes.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if episodes.exists() and episodes.read_text().count("\n") >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(sig)
        proc.communicate(timeout=30)
        if sig == signal.SIGINT:
            assert proc.returncode == 130
        done_before = episodes.read_text().count("\n")
        assert 2 <= done_before < 6, "the kill must land mid-run"

        resumed = _cli(*args, "--run-id", "killed", cwd=tmp_path)
        _out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err.decode()
        clean = _cli(*args, "--run-id", "clean", cwd=tmp_path)
        clean.communicate(timeout=120)
        assert clean.returncode == 0

    killed = json.loads((tmp_path / "runs" / "killed" / "metrics.json").read_text())
    reference = json.loads((tmp_path / "runs" / "clean" / "metrics.json").read_text())
    assert killed["episodes"] == reference["episodes"] == {"planned": 6, "ok": 6, "errored": 0}
    assert killed["metrics"] == reference["metrics"]
    lines = (tmp_path / "runs" / "killed" / "episodes.jsonl").read_text().splitlines()
    keys = [(json.loads(line)["instance_id"], json.loads(line)["trial"]) for line in lines]
    assert len(keys) == len(set(keys)) == 6, "no episode recorded twice"
