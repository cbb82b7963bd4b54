"""The viewer's HTTP API over real runs: what each page gets, refusals of bad requests and of
paths outside the runs folder, and a server that never writes into it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from tests.web.runs import run_key

from forkingpaths.core.records import EpisodeRecord, RunSpec, StepRecord
from forkingpaths.report.html import run_sections
from forkingpaths.runner.rundir import RunDirectory, load_records
from forkingpaths.runner.scoring import rescore_run
from forkingpaths.web.data import Viewer
from forkingpaths.web.server import make_app


@pytest.fixture
async def client(quick_runs: Path) -> AsyncIterator[TestClient]:
    async with TestClient(TestServer(make_app(Viewer(quick_runs)))) as test_client:
        yield test_client


async def _json(client: TestClient, path: str, status: int = 200) -> dict:
    response = await client.get(path)
    assert response.status == status, await response.text()
    assert response.headers["Content-Type"].startswith("application/json")
    return await response.json()


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            stat = (Path(folder) / name).stat()
            out[str(Path(folder) / name)] = (stat.st_size, stat.st_mtime_ns)
    return out


async def test_every_run_is_listed_with_its_status_and_headline(
    client: TestClient, quick_runs: Path
) -> None:
    data = await _json(client, "/api/runs")
    runs = {r["key"]: r for r in data["runs"]}
    on_disk = {p.name for p in quick_runs.iterdir() if (p / "spec.json").exists()}
    assert set(runs) == on_disk
    for key, row in runs.items():
        records = load_records(quick_runs / key, transcripts=False)
        assert row["status"] == "finished"
        assert row["episodes"]["recorded"] == len(records)
        assert row["episodes"]["ok"] == sum(r.status == "ok" for r in records)
        assert row["headline"], key
        assert row["tokens"] == sum(
            r.usage.prompt_tokens + r.usage.completion_tokens for r in records
        )


async def test_the_run_page_has_the_reports_tables_figures_and_episodes(
    client: TestClient, quick_runs: Path
) -> None:
    key = run_key(quick_runs, "griddag", "frontier")
    page = await _json(client, f"/api/run?run={key}")
    metrics, bench, _ = rescore_run(RunDirectory(quick_runs / key))
    header = RunDirectory(quick_runs / key).read_header()
    expected = run_sections(header, bench, metrics)
    assert [t["title"] for t in page["tables"]] == [t.title for t in expected]
    assert page["plots"], "griddag's report draws figures; the run page shows the same files"
    plot = page["plots"][0]["name"]
    response = await client.get(f"/files/plot?run={key}&name={plot}")
    assert response.status == 200
    assert await response.read() == (quick_runs / key / "plots" / plot).read_bytes()
    listing = await _json(client, f"/api/episodes?run={key}")
    records = load_records(quick_runs / key, transcripts=False)
    assert len(listing["rows"]) == len(records)
    column = listing["columns"].index("metrics.success")
    assert [row[column] for row in listing["rows"]] == [r.metrics["success"] for r in records]


async def test_an_episode_comes_with_its_world_view_and_its_calls_messages(
    client: TestClient, quick_runs: Path
) -> None:
    key = run_key(quick_runs, "griddag", "react")
    full = load_records(quick_runs / key)[1]
    episode = await _json(client, f"/api/episode?run={key}&n=1")
    assert episode["record"]["instance_id"] == full.instance_id
    assert len(episode["record"]["steps"]) == len(full.steps)
    if episode["view_script"]:
        assert episode["world"] is not None and episode["world_error"] is None
        module = await client.get(f"/{episode['view_script']}")
        assert module.status == 200
        assert module.headers["Content-Type"].startswith("text/javascript")
        assert "export function renderWorld" in await module.text()
    messages = (await _json(client, f"/api/messages?run={key}&n=1"))["messages"]
    for step, full_step in zip(episode["record"]["steps"], full.steps, strict=True):
        for call, full_call in zip(step["calls"], full_step.calls, strict=True):
            chain, ref = [], call["messages_ref"]
            while ref is not None:
                parent, role, text = messages[ref]
                chain.append((role, text))
                ref = parent
            assert chain[::-1] == [(m.role, m.content) for m in full_call.messages]
    by_instance = await _json(client, f"/api/episode?run={key}&instance={full.instance_id}")
    assert by_instance["n"] == 1


async def test_compare_lines_up_the_same_instances(client: TestClient, quick_runs: Path) -> None:
    a, b = run_key(quick_runs, "griddag", "frontier"), run_key(quick_runs, "griddag", "react")
    data = await _json(client, f"/api/compare?runs={a},{b}")
    assert [r["key"] for r in data["runs"]] == [a, b]
    ids = {r.key for r in load_records(quick_runs / a, transcripts=False)}
    assert {(row["instance_id"], row["trial"]) for row in data["rows"]} == ids
    for row in data["rows"]:
        assert all(cell is not None and cell["status"] == "ok" for cell in row["cells"])


@pytest.mark.parametrize(
    "path",
    [
        "/api/run?run=../etc",
        "/api/run?run=/etc",
        "/api/run?run=..%2F..%2Fetc",
        "/api/episodes?run=%2e%2e",
        "/api/messages?run=.&n=0",
        "/files/plot?run=RUN&name=../spec.json",
        "/files/plot?run=RUN&name=..%2Fspec.json",
        "/files/plot?run=RUN&name=%2Fetc%2Fpasswd",
        "/files/plot?run=RUN&name=evil.png",
        "/files/plot?run=RUN&name=.hidden.png",
        "/static/..%2Fserver.py",
        "/static/server.py",
        "/views/..%2F..%2Fcore%2Fbenchmark.js",
        "/views/nosuch.js",
    ],
)
async def test_nothing_outside_the_runs_folder_or_the_app_is_served(
    client: TestClient, quick_runs: Path, path: str
) -> None:
    key = run_key(quick_runs, "griddag", "frontier")
    evil = quick_runs / key / "plots" / "evil.png"
    evil.symlink_to("/etc/passwd")
    try:
        response = await client.get(path.replace("RUN", key))
    finally:
        evil.unlink()
    assert response.status == 404
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    body = await response.read()
    assert b"root:" not in body and b"import " not in body


async def test_a_linked_plots_folder_outside_the_run_is_not_served(
    quick_runs: Path, tmp_path: Path
) -> None:
    key = run_key(quick_runs, "griddag", "frontier")
    runs = tmp_path / "runs"
    shutil.copytree(quick_runs / key, runs / key)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_text("secret")
    shutil.rmtree(runs / key / "plots")
    (runs / key / "plots").symlink_to(outside)
    async with TestClient(TestServer(make_app(Viewer(runs)))) as test_client:
        page = await _json(test_client, f"/api/run?run={key}")
        assert page["plots"] == []
        response = await test_client.get(f"/files/plot?run={key}&name=secret.png")
        assert response.status == 404


async def test_a_request_to_another_host_name_is_refused(client: TestClient) -> None:
    # A page whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own name.
    response = await client.get("/api/runs", headers={"Host": "attacker.example:8765"})
    assert response.status == 421
    for host in ("127.0.0.1:8765", "localhost", "[::1]:8765"):
        assert (await client.get("/api/runs", headers={"Host": host})).status == 200


@pytest.mark.parametrize(
    ("path", "status", "names"),
    [
        ("/api/episode?run=RUN&n=abc", 400, "n: got 'abc'"),
        ("/api/episode?run=RUN&n=-1", 400, "n: got '-1'"),
        ("/api/episode?run=RUN&n=%C2%B2", 400, "n: got '²'"),
        ("/api/episode?run=RUN&n=99999", 404, "no episode 99999"),
        ("/api/episode?run=RUN&instance=nope", 404, "no episode 'nope'"),
        ("/api/episode?n=0", 400, "run: missing"),
        ("/api/compare?runs=RUN,nosuch", 404, "no run 'nosuch'"),
    ],
)
async def test_a_bad_request_gets_one_line_naming_the_parameter(
    client: TestClient, quick_runs: Path, path: str, status: int, names: str
) -> None:
    key = run_key(quick_runs, "griddag", "frontier")
    data = await _json(client, path.replace("RUN", key), status)
    assert names in data["error"] and "\n" not in data["error"]


async def test_the_server_never_writes_into_the_runs_folder(
    client: TestClient, quick_runs: Path
) -> None:
    before = _snapshot(quick_runs)
    listing = await _json(client, "/api/runs")
    for row in listing["runs"]:
        key = row["key"]
        await _json(client, f"/api/run?run={key}")
        episodes = await _json(client, f"/api/episodes?run={key}")
        for row_values in episodes["rows"][:2]:
            await _json(client, f"/api/episode?run={key}&n={row_values[0]}")
            await _json(client, f"/api/messages?run={key}&n={row_values[0]}")
    assert _snapshot(quick_runs) == before


async def test_every_answer_forbids_inline_scripts(client: TestClient) -> None:
    for path in ("/", "/static/app.js", "/api/runs"):
        response = await client.get(path)
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]
        assert response.headers["X-Content-Type-Options"] == "nosniff"


def _episode(instance: str, trial: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="live",
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=trial,
        seed=0,
        agent="frontier",
        steps=[StepRecord(index=0, observation="o", action="up", feedback="f")],
    )


async def test_a_run_that_is_writing_shows_as_running_and_grows(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "live")
    run.open(RunSpec(benchmark="griddag-v1", split="main", agent="frontier"))
    run.append(_episode("low-easy-s0"))
    async with TestClient(TestServer(make_app(Viewer(tmp_path)))) as test_client:
        first = (await _json(test_client, "/api/runs"))["runs"][0]
        assert first["status"] == "running" and first["episodes"]["recorded"] == 1
        assert first["planned"] == 27, "griddag's main split, before the run has scored"
        await asyncio.to_thread(run.append, _episode("low-easy-s1"))
        second = (await _json(test_client, "/api/runs"))["runs"][0]
        assert second["episodes"]["recorded"] == 2
        listing = await _json(test_client, "/api/episodes?run=live")
        assert [row[1] for row in listing["rows"]] == ["low-easy-s0", "low-easy-s1"]


async def test_a_metric_named_like_a_field_does_not_bend_compare(tmp_path: Path) -> None:
    for name in ("a", "b"):
        run = RunDirectory(tmp_path / name)
        run.open(RunSpec(benchmark="griddag-v1", split="main", agent="frontier", seed=ord(name)))
        record = _episode("low-easy-s0")
        record.metrics = {"n": 99, "status": "bogus", "steps": -1, "success": True}
        run.append(record)
    async with TestClient(TestServer(make_app(Viewer(tmp_path)))) as test_client:
        data = await _json(test_client, "/api/compare?runs=a,b")
        cell = data["rows"][0]["cells"][0]
        assert (cell["n"], cell["status"], cell["steps"]) == (0, "ok", 1)
        assert cell["metrics"]["n"] == 99


async def test_an_unreadable_run_is_listed_with_its_problem(tmp_path: Path) -> None:
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "spec.json").write_text("{not json")
    (bad / "episodes.jsonl").write_text("")
    async with TestClient(TestServer(make_app(Viewer(tmp_path)))) as test_client:
        row = (await _json(test_client, "/api/runs"))["runs"][0]
        assert row["status"] == "unreadable" and "spec.json" in row["problem"]
        data = await _json(test_client, "/api/run?run=broken", 400)
        assert "spec.json" in data["error"]


def test_json_of_a_view_is_plain_data(quick_runs: Path) -> None:
    viewer = Viewer(quick_runs)
    for entry in viewer.discover():
        payload = viewer.episode(entry.key, 0)
        json.dumps(payload)
