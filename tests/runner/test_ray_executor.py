"""`--executor ray` on a real cluster of two nodes (tests/raycluster.py, in its own network
namespace): the quick suite's records and metrics equal the local executor's, a killed worker
node loses and repeats nothing, model limits hold across nodes, runs resume across
executors, each node keeps its own cache file, and bad addresses are refused in one line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import free_port
from tests.raycluster import NamespacedRayCluster, namespaces_available, ray_cluster

from forkingpaths.models.mockserver import STATS_PATH, run_mock_server_in_thread
from forkingpaths.models.runtime import NODE_CACHE_GLOB, node_cache_name
from forkingpaths.runner.rundir import load_records

UNAVAILABLE = namespaces_available()
if os.environ.get("CI") and UNAVAILABLE:
    raise RuntimeError(f"CI runs the Ray tests: {UNAVAILABLE}")
pytestmark = [
    pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE)),
    pytest.mark.slow,
]

FP = [sys.executable, "-m", "forkingpaths.cli"]
TIMING = frozenset({"started_at", "finished_at", "duration_s", "latency_s"})
GRIDDAG = "low-easy-s0,low-easy-s1,low-easy-s2,medium-easy-s0,medium-easy-s1,low-medium-s1"


@pytest.fixture(scope="module")
def cluster() -> Any:
    with ray_cluster((1, 1)) as running:
        yield running


def _env(tmp: Path, cache: str = "cache") -> dict[str, str]:
    return {
        **os.environ,
        "FORKINGPATHS_CACHE_DIR": str(tmp / cache),
        "RAY_USAGE_STATS_ENABLED": "0",
    }


def _inside(
    cluster: NamespacedRayCluster, args: list[str], tmp: Path, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cluster.command([*FP, *args], cwd=tmp),
        cwd=tmp,
        env=kw.pop("env", _env(tmp)),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        **kw,
    )


def _ray(cluster: NamespacedRayCluster) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address, "--no-progress"]


def _timeless(value: Any) -> Any:
    """A record as JSON without its timings (which differ run to run on any executor)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _episodes(run_dir: Path) -> dict[tuple[str, int], Any]:
    records = load_records(run_dir)
    return {(r.instance_id, r.trial): _timeless(r.model_dump(mode="json")) for r in records}


def _outcome(run_dir: Path) -> dict[str, Any]:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    return {k: metrics[k] for k in ("episodes", "metrics", "usage", "complete", "errors")}


def _lines(run_dir: Path) -> list[tuple[str, int]]:
    text = (run_dir / "episodes.jsonl").read_text()
    return [(d["instance_id"], d["trial"]) for d in map(json.loads, text.splitlines())]


def test_quick_suite_on_ray_equals_local_episode_for_episode(
    cluster: NamespacedRayCluster, tmp_path: Path
) -> None:
    local = subprocess.run(
        [*FP, "run", "--suite", "quick", "--runs-dir", "local", "--no-progress"],
        cwd=tmp_path,
        env=_env(tmp_path, "cache-local"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert local.returncode == 0, local.stderr[-3000:]
    on_ray = _inside(
        cluster, ["run", "--suite", "quick", "--runs-dir", "ray", *_ray(cluster)], tmp_path
    )
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]

    runs = sorted(p.parent.name for p in (tmp_path / "local").glob("*/metrics.json"))
    assert len(runs) >= 10
    assert runs == sorted(p.parent.name for p in (tmp_path / "ray").glob("*/metrics.json"))
    for run in runs:
        mine, theirs = tmp_path / "ray" / run, tmp_path / "local" / run
        assert _episodes(mine) == _episodes(theirs), run
        assert _outcome(mine) == _outcome(theirs), run
        assert sorted(_lines(mine)) == sorted(_lines(theirs)), run  # each episode once
    # CreativeBench's verdicts ran in each worker node's own sandbox and say how isolated.
    creative = [r for r in runs if r.startswith("creativebench")]
    assert creative
    steps = [s for r in load_records(tmp_path / "ray" / creative[0]) for s in r.steps]
    assert steps and all(s.info.get("isolation") for s in steps if "verdict" in s.info)


def _mock_inside(cluster: NamespacedRayCluster, tmp: Path, *args: str) -> tuple[Any, str]:
    """A mock server in the cluster's network, stopped by the caller through its pid."""
    port = free_port()
    proc = subprocess.Popen(
        cluster.command([*FP, "mockserver", "--port", str(port), *args], pids=False),
        cwd=tmp,
        env=_env(tmp),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    probe = cluster.command(
        [sys.executable, "-c", f"import urllib.request as u; u.urlopen('{url}/v1/models')"]
    )
    deadline = time.monotonic() + 60
    while subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        assert proc.poll() is None and time.monotonic() < deadline, "mock server did not start"
        time.sleep(0.2)
    return proc, url


def _mock_stats(cluster: NamespacedRayCluster, url: str) -> dict[str, int]:
    read = f"import urllib.request as u; print(u.urlopen('{url}{STATS_PATH}').read().decode())"
    out = subprocess.run(
        cluster.command([sys.executable, "-c", read]), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def _stop(proc: subprocess.Popen[Any]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _griddag(url: str, *extra: str) -> list[str]:
    return [
        "run", "griddag", "--agent", "react", "--model", "openai-compat/griddag-frontier",
        "--base-url", f"{url}/v1", *extra,
    ]  # fmt: skip


def test_model_limits_hold_across_nodes_and_each_node_caches_apart(
    cluster: NamespacedRayCluster, tmp_path: Path
) -> None:
    # 2 nodes x 4 episodes in flight want up to 8 requests at once; the run allows 2.
    server, url = _mock_inside(cluster, tmp_path, "--latency-ms", "20")
    try:
        args = _griddag(url, "--instances", GRIDDAG, "--concurrency", "4")
        run = _inside(
            cluster, [*args, "--model-concurrency", "2", "--run-id", "limited", *_ray(cluster)],
            tmp_path,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        stats = _mock_stats(cluster, url)
    finally:
        _stop(server)
    assert 1 <= stats["max_in_flight"] <= 2
    records = load_records(tmp_path / "runs" / "limited")
    assert len(records) == 6 and all(r.status == "ok" for r in records)
    assert stats["requests"] == sum(len(s.calls) for r in records for s in r.steps)
    # Temperature 0 answers went to the machine's node file (both nodes run on this one
    # machine, and share it), never to the shared file.
    node_files = sorted((tmp_path / "cache").glob(NODE_CACHE_GLOB))
    assert [f.name for f in node_files] == [node_cache_name(socket.gethostname())]
    assert not (tmp_path / "cache" / "responses.sqlite").exists()

    # Merged, they answer a rerun of every call from the cache, on this machine (the server
    # is gone: a miss would fail the run).
    merged = subprocess.run(
        [*FP, "cache", "merge"], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert merged.returncode == 0, merged.stderr
    assert "merged 1 file into" in merged.stdout
    again = subprocess.run(
        [*FP, *args, "--run-id", "replayed", "--no-progress", "--max-retries", "0"],
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    replayed = load_records(tmp_path / "runs" / "replayed")
    assert all(c.cached for r in replayed for s in r.steps for c in s.calls)


def test_429s_back_off_across_the_cluster_and_the_run_completes(
    cluster: NamespacedRayCluster, tmp_path: Path
) -> None:
    server, url = _mock_inside(
        cluster, tmp_path, "--fault", "429", "--error-rate", "0.2", "--latency-ms", "5"
    )
    try:
        args = _griddag(url, "--instances", "low-easy-s0,low-easy-s1,low-easy-s2")
        run = _inside(
            cluster, [*args, "--no-cache", "--run-id", "throttled", *_ray(cluster)], tmp_path
        )
        stats = _mock_stats(cluster, url)
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-3000:]
    assert stats["faulted"] > 0
    records = load_records(tmp_path / "runs" / "throttled")
    assert [r.status for r in records] == ["ok"] * 3
    assert (
        sum(c.attempts - 1 for r in records for s in r.steps for c in s.calls) == stats["faulted"]
    )


def test_a_run_resumes_across_executors(cluster: NamespacedRayCluster, tmp_path: Path) -> None:
    args = ["run", "griddag", "--agent", "react", "--model", "scripted/griddag-frontier",
            "--instances", GRIDDAG, "--run-id", "moved", "--no-progress"]  # fmt: skip
    full = subprocess.run(
        [*FP, *args, "--runs-dir", "whole"], cwd=tmp_path, env=_env(tmp_path),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert full.returncode == 0, full.stderr[-3000:]
    # An interrupted local run: three episodes recorded, then the rest on the cluster.
    run_dir = tmp_path / "runs" / "moved"
    run_dir.mkdir(parents=True)
    for name in ("spec.json",):
        (run_dir / name).write_bytes((tmp_path / "whole" / "moved" / name).read_bytes())
    head = (tmp_path / "whole" / "moved" / "episodes.jsonl").read_text().splitlines(True)[:3]
    (run_dir / "episodes.jsonl").write_text("".join(head))
    (run_dir / "texts.jsonl").write_bytes(
        (tmp_path / "whole" / "moved" / "texts.jsonl").read_bytes()
    )
    resumed = _inside(cluster, ["-v", *args[:-1], *_ray(cluster)], tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "3 of 6 episodes already recorded" in resumed.stderr
    assert sorted(_lines(run_dir)) == sorted(_lines(tmp_path / "whole" / "moved"))
    assert _episodes(run_dir) == _episodes(tmp_path / "whole" / "moved")
    assert _outcome(run_dir) == _outcome(tmp_path / "whole" / "moved")


def test_bad_ray_settings_are_refused_in_one_line(
    cluster: NamespacedRayCluster, tmp_path: Path
) -> None:
    base = ["run", "griddag", "--agent", "react", "--model", "scripted/griddag-frontier",
            "--instances", "low-easy-s0", "--no-progress"]  # fmt: skip
    cases = {
        "--ray-address 'nonsense'": [*base, "--executor", "ray", "--ray-address", "nonsense"],
        "--ray-address '127.0.0.1:99999'": [
            *base, "--executor", "ray", "--ray-address", "127.0.0.1:99999",
        ],
        "need --executor ray": [*base, "--ray-address", "auto"],
        "ray-workers-per-node": [*base, "--executor", "ray", "--ray-workers-per-node", "0"],
        "executor": [*base, "--executor", "dask"],
    }  # fmt: skip
    for expected, args in cases.items():
        out = subprocess.run(
            [*FP, *args], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        assert out.returncode != 0, expected
        assert expected in out.stderr, (expected, out.stderr)
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    # No cluster at that address (inside the namespace: Ray probes addresses when it joins).
    nobody = _inside(
        cluster, [*base, "--executor", "ray", "--ray-address", f"127.0.0.1:{free_port()}"],
        tmp_path,
    )  # fmt: skip
    assert nobody.returncode != 0
    assert "no Ray cluster to join" in nobody.stderr, nobody.stderr[-2000:]
    assert "Traceback" not in nobody.stderr
    assert not (tmp_path / "runs").exists() or not list(
        (tmp_path / "runs").glob("*/episodes.jsonl")
    )


def test_a_killed_worker_node_loses_and_repeats_nothing(tmp_path: Path) -> None:
    instances = "low-easy-s0,low-easy-s1,low-easy-s2,medium-easy-s0,medium-easy-s1,low-medium-s1"
    with run_mock_server_in_thread(latency_ms=15) as base_url:
        local = subprocess.run(
            [*FP, *_griddag(base_url.removesuffix("/v1"), "--instances", instances),
             "--trials", "2", "--run-id", "alone", "--runs-dir", "local", "--no-cache",
             "--no-progress"],
            cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert local.returncode == 0, local.stderr[-3000:]

    with ray_cluster((1, 1)) as two:
        server, url = _mock_inside(two, tmp_path, "--latency-ms", "15")
        try:
            args = _griddag(url, "--instances", instances, "--trials", "2", "--concurrency", "2")
            log = tmp_path / "driver.log"  # a file, not a pipe nobody reads while we wait
            with log.open("w") as out:
                driver = subprocess.Popen(
                    two.command(
                        [*FP, *args, "--no-cache", "--run-id", "killed", *_ray(two)], cwd=tmp_path
                    ),
                    cwd=tmp_path, env=_env(tmp_path), stdout=out, stderr=subprocess.STDOUT,
                )  # fmt: skip
            episodes = tmp_path / "runs" / "killed" / "episodes.jsonl"
            deadline = time.monotonic() + 300
            while not (episodes.exists() and episodes.read_text().count("\n") >= 3):
                assert driver.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "no episodes recorded"
                time.sleep(0.05)
            assert two.kill_node(1)  # the second node's processes, by their ids
            driver.wait(timeout=600)
            err = log.read_text()
        finally:
            _stop(server)
    assert driver.returncode == 0, err[-3000:]
    assert "died" in err and "back to the queue" in err, err[-3000:]
    run_dir = tmp_path / "runs" / "killed"
    lines = _lines(run_dir)
    assert Counter(lines).most_common(1)[0][1] == 1  # no episode recorded twice
    assert sorted(lines) == sorted(_lines(tmp_path / "local" / "alone"))  # none lost
    assert all(r.status == "ok" for r in load_records(run_dir))
    assert _outcome(run_dir)["metrics"] == _outcome(tmp_path / "local" / "alone")["metrics"]


def test_python_api_runs_on_the_cluster(cluster: NamespacedRayCluster, tmp_path: Path) -> None:
    script = (
        "from forkingpaths.api import RunOptions, run\n"
        "r = run('escape', split='mutate', agent='systematic', instances=['zombie_lab'],\n"
        f"        trials=2, options=RunOptions(executor='ray', ray_address='{cluster.address}',\n"
        "        progress=False), runs_dir='api')\n"
        "print(r.new_episodes, r.metrics['episodes']['ok'])\n"
    )
    out = subprocess.run(
        cluster.command([sys.executable, "-c", script], cwd=tmp_path),
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["2", "2"]


def test_the_budget_counts_every_workers_spend(
    cluster: NamespacedRayCluster, tmp_path: Path
) -> None:
    # A price of $1 per token: the first episodes spend the $1 budget, no other starts.
    (tmp_path / "prices.yaml").write_text(
        "schema_version: 1\nmodels:\n  griddag-frontier:\n"
        "    input: 1000000\n    cached_input: 1000000\n    output: 1000000\n"
    )
    server, url = _mock_inside(cluster, tmp_path)
    try:
        args = _griddag(url, "--instances", GRIDDAG, "--concurrency", "1", "--no-cache")
        run = _inside(
            cluster,
            [*args, "--prices", "prices.yaml", "--budget-usd", "1", "--run-id", "spent",
             *_ray(cluster)],
            tmp_path,
        )  # fmt: skip
    finally:
        _stop(server)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "budget of $1.0000 reached" in run.stderr
    records = load_records(tmp_path / "runs" / "spent")
    assert 1 <= len(records) <= 2  # what two workers had started before the first came back
    assert all(r.cost_usd > 1.0 for r in records)  # priced on the workers with the driver's table
    metrics = json.loads((tmp_path / "runs" / "spent" / "metrics.json").read_text())
    assert metrics["complete"] is False
