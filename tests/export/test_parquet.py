"""The Parquet export: real runs written as episodes, steps and calls tables, read back with
pyarrow, pandas and `datasets`, exactly as recorded; the Hub push stops before the network."""

from __future__ import annotations

import json
import re
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from forkingpaths.api import run
from forkingpaths.core.chat import Message
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import (
    EpisodeRecord,
    ModelCallRecord,
    ModelOptions,
    RunOptions,
    RunSpec,
    StepRecord,
)
from forkingpaths.export import parquet
from forkingpaths.export.parquet import (
    CALL_COLUMNS,
    EPISODE_COLUMNS,
    PARQUET_SCHEMA_VERSION,
    STEP_COLUMNS,
    arrow_schema,
    export_parquet,
    metric_columns,
    push_to_hub,
)
from forkingpaths.models.mockserver import MockServer
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RunDirectory, load_records

DOCS = Path(__file__).resolve().parents[2] / "docs" / "export-parquet.md"
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
HOSTILE = (
    "<script>alert(1)</script>\x00NUL \"quotes\" 'single' \\back\\slash\r\nCRLF\u202eRTL"
    ' emoji 🦀 中文 \ufeffBOM {"json": [1, 2]} `ticks` ```fence``` \t tab'
)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test here reaches past loopback: a connection or a name lookup elsewhere fails, and is
    reported at teardown even if a library swallowed the failure."""
    attempts: list[str] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            attempts.append(f"connect {address!r}")
            raise OSError(f"test blocked network access to {address!r}")
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and host not in LOOPBACK:
            attempts.append(f"lookup {host!r}")
            raise OSError(f"test blocked the name lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield
    assert attempts == []


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The griddag ReAct run (agent calls) and the escape ReDNA run (judge calls), offline."""
    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FORKINGPATHS_CACHE_DIR", str(root / "cache"))
        options = RunOptions(progress=False)
        griddag = run(
            "griddag",
            agent="react",
            model="scripted/griddag-frontier",
            instances=["low-easy-s0", "medium-easy-s0"],
            runs_dir=root,
            options=options,
        )
        escape = run(
            "escape",
            agent="redna",
            model="scripted/escape-explorer",
            roles={"judge": "scripted/escape-judge"},
            instances=["house_heist", "zombie_lab"],
            runs_dir=root,
            options=options,
        )
    yield {"griddag": griddag.run_dir.path, "escape": escape.run_dir.path}


def _rows(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()


def _check_tables(run_dir: Path, paths: dict[str, Path]) -> list[EpisodeRecord]:
    """Every table's rows are the records', column for column, in record order."""
    records = load_records(run_dir)
    episodes, steps, calls = (_rows(paths[name]) for name in ("episodes", "steps", "calls"))
    assert len(episodes) == len(records)
    assert len(steps) == sum(len(r.steps) for r in records)
    assert len(calls) == sum(len(s.calls) for r in records for s in r.steps)
    assert len(calls) == sum(r.n_calls for r in records)

    for row, r in zip(episodes, records, strict=True):
        assert (row["run_id"], row["instance_id"], row["trial"]) == (r.run_id, *r.key)
        assert (row["status"], row["error"], row["model"]) == (r.status, r.error, r.model)
        assert (row["n_steps"], row["n_calls"]) == (len(r.steps), r.n_calls)
        assert row["prompt_tokens"] == r.usage.prompt_tokens
        assert row["initial_observation"] == r.initial_observation
        assert json.loads(row["metrics_json"]) == r.metrics
        assert json.loads(row["outcome_json"]) == r.outcome
        for name, value in r.metrics.items():
            if f"metric_{name}" in row:
                assert row[f"metric_{name}"] == value

    played = [(r, s) for r in records for s in r.steps]
    for row, (r, s) in zip(steps, played, strict=True):
        assert (row["instance_id"], row["trial"], row["step"]) == (*r.key, s.index)
        assert (row["observation"], row["thought"]) == (s.observation, s.thought)
        assert (row["action"], row["feedback"]) == (s.action, s.feedback)
        assert (row["valid"], row["terminated"], row["truncated"]) == (
            s.valid,
            s.terminated,
            s.truncated,
        )
        assert json.loads(row["info_json"]) == s.info

    made = [(r, s, i, c) for r, s in played for i, c in enumerate(s.calls)]
    for row, (r, s, i, c) in zip(calls, made, strict=True):
        assert (row["instance_id"], row["trial"], row["step"], row["call"]) == (*r.key, s.index, i)
        # The exact request: every message, role and text, in order.
        assert row["messages"] == [m.model_dump() for m in c.messages]
        assert row["response"] == c.response and row["purpose"] == c.purpose
        assert (row["prompt_tokens"], row["cached"]) == (c.prompt_tokens, c.cached)
    return records


def test_griddag_react_run_exports_every_episode_step_and_call(runs: dict[str, Path]) -> None:
    run_dir = runs["griddag"]
    paths = export_parquet(run_dir)
    out = run_dir.parent / f"{run_dir.name}-parquet"
    assert paths == {name: out / f"{name}.parquet" for name in ("episodes", "steps", "calls")}
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "calls.parquet",
        "episodes.parquet",
        "steps.parquet",
    ]
    records = _check_tables(run_dir, paths)
    for name in ("steps", "calls"):
        assert pq.read_schema(paths[name]).equals(arrow_schema(name))
    metrics = metric_columns(records)
    assert pq.read_schema(paths["episodes"]).equals(arrow_schema("episodes", metrics))
    calls = _rows(paths["calls"])
    assert len(calls) > 10 and all(len(c["messages"]) >= 2 for c in calls)
    assert calls[0]["messages"][0]["role"] == "system"
    for name, path in paths.items():
        meta = pq.read_schema(path).metadata
        assert meta[b"forkingpaths.schema_version"] == str(PARQUET_SCHEMA_VERSION).encode()
        assert meta[b"forkingpaths.table"] == name.encode()
        assert meta[b"forkingpaths.run_id"] == run_dir.name.encode()
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"
    episodes = pq.read_table(paths["episodes"])
    assert episodes.schema.field("metric_success").type == pa.bool_()
    assert episodes.schema.field("metric_steps").type == pa.int64()
    assert episodes.column("metric_success").to_pylist() == [r.metrics["success"] for r in records]


def test_escape_judged_run_keeps_the_judge_calls(runs: dict[str, Path]) -> None:
    out = runs["escape"].parent / "escape-out"
    paths = export_parquet(runs["escape"], out)
    assert paths["calls"].parent == out
    _check_tables(runs["escape"], paths)
    calls = pq.read_table(paths["calls"], columns=["purpose", "model"]).to_pylist()
    judged = [c for c in calls if c["purpose"] == "judge"]
    assert judged and {c["model"] for c in judged} == {"scripted/escape-judge"}
    # Nested metrics stay in metrics_json; the scalar ones get typed columns.
    schema = pq.read_schema(paths["episodes"])
    assert "metric_paths" not in schema.names
    assert schema.field("metric_path_discovery").type == pa.float64()


@pytest.mark.parametrize("name", ["griddag", "escape"])
def test_a_run_written_in_the_previous_record_form_exports_the_same(
    name: str, runs: dict[str, Path], tmp_path: Path
) -> None:
    # The same episodes with every field of a line written out (record schema 2, as runs
    # written before schema 3 hold them): the same tables and card, byte for byte in content.
    new = runs[name]
    old = tmp_path / "old" / new.name
    shutil.copytree(new, old)
    lines = []
    for record in RunDirectory(old).iter_records():
        data = record.model_dump(mode="json")
        data["schema_version"] = 2
        lines.append(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    (old / "episodes.jsonl").write_text("".join(lines), encoding="utf-8")
    assert (old / "episodes.jsonl").stat().st_size > (new / "episodes.jsonl").stat().st_size
    then = export_parquet(old, tmp_path / "then")
    now = export_parquet(new, tmp_path / "now")
    for table in ("episodes", "steps", "calls"):
        assert pq.read_table(now[table]).equals(pq.read_table(then[table]), check_metadata=True)
    card = "README.md"
    assert (tmp_path / "now" / card).read_text() == (tmp_path / "then" / card).read_text()


def test_a_retried_episode_exports_its_latest_record_at_its_first_place(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    # Records are read one at a time by their offsets: a retried episode (a later line for the
    # same key) is exported once, its latest record in its first attempt's place, with the
    # episode index file and without it (a run written before it existed).
    run = tmp_path / "r"
    shutil.copytree(runs["griddag"], run)
    lines = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    retried = {**json.loads(lines[0]), "status": "error", "error": "model refused: boom"}
    (run / "episodes.jsonl").write_text("\n".join([*lines, json.dumps(retried)]) + "\n")
    with_index = export_parquet(run, tmp_path / "with")
    (run / "episodes.index.jsonl").unlink()
    without = export_parquet(run, tmp_path / "without")
    records = _check_tables(run, without)
    assert records[0].error == "model refused: boom" and len(records) == len(lines)
    for table in ("episodes", "steps", "calls"):
        assert pq.read_table(with_index[table]).equals(pq.read_table(without[table]))


def test_datasets_and_pandas_load_the_tables(runs: dict[str, Path], tmp_path: Path) -> None:
    paths = export_parquet(runs["escape"], tmp_path / "export")
    records = load_records(runs["escape"])
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(paths["episodes"])
    assert frame["instance_id"].tolist() == [r.instance_id for r in records]
    steps = pd.read_parquet(paths["steps"])
    assert list(steps.columns) == [name for name, *_ in STEP_COLUMNS]
    assert len(steps) == sum(len(r.steps) for r in records)
    datasets = pytest.importorskip("datasets")
    cache = str(tmp_path / "hf-cache")
    episodes = datasets.load_dataset("parquet", data_files=str(paths["episodes"]), cache_dir=cache)[
        "train"
    ]
    assert episodes.num_rows == len(records)
    assert episodes[0]["instance_id"] == records[0].instance_id
    # The dataset card's configs load each table by name from the folder (as from the Hub).
    calls = datasets.load_dataset(str(tmp_path / "export"), "calls", cache_dir=cache)["train"]
    first = records[0].steps[0].calls[0]
    assert calls.num_rows == sum(r.n_calls for r in records)
    assert calls[0]["messages"] == [m.model_dump() for m in first.messages]


def _hostile_record(run_id: str, instance: str, trial: int) -> EpisodeRecord:
    call = ModelCallRecord(
        model=f"scripted/{HOSTILE}",
        purpose=HOSTILE,
        messages=[
            Message(role="system", content=HOSTILE),
            Message(role="user", content="look: " + HOSTILE + "\n" + "A" * 200_000),
            Message(role="assistant", content=""),
        ],
        response=HOSTILE,
        finish_reason=HOSTILE,
        prompt_tokens=3,
        completion_tokens=2,
    )
    steps = [
        StepRecord(
            index=i,
            observation=HOSTILE,
            thought=HOSTILE,
            action=action,
            feedback=HOSTILE + "B" * 100_000,
            valid=i != 1,
            info={HOSTILE: [HOSTILE, None, 1.5]},
            calls=[call, call],
        )
        for i, action in enumerate(["up", HOSTILE, ""])
    ]
    record = EpisodeRecord(
        run_id=run_id,
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=trial,
        seed=1,
        agent="react",
        agent_options={HOSTILE: HOSTILE},
        model=f"scripted/{HOSTILE}",
        initial_observation=HOSTILE,
        steps=steps,
        outcome={"note": HOSTILE},
        metrics={"success": trial == 0, HOSTILE: 1.5, "score": 2, "nested": {HOSTILE: 1}},
        status="error" if trial else "ok",
        error=f"ModelError: {HOSTILE}" if trial else None,
    )
    record.tally_calls()
    return record


def test_hostile_strings_survive_the_export(tmp_path: Path) -> None:
    run_dir = tmp_path / "hostile"
    rundir = RunDirectory(run_dir)
    rundir.open(RunSpec(benchmark="griddag-v1", split="main", agent="react", model=HOSTILE))
    rundir.append(_hostile_record("hostile", "low-easy-s0", 0))
    rundir.append(_hostile_record("hostile", HOSTILE, 1))
    paths = export_parquet(run_dir)
    _check_tables(run_dir, paths)
    episodes = _rows(paths["episodes"])
    assert [e["instance_id"] for e in episodes] == ["low-easy-s0", HOSTILE]
    assert episodes[1]["error"] == f"ModelError: {HOSTILE}"
    assert json.loads(episodes[0]["agent_options_json"]) == {HOSTILE: HOSTILE}
    # A metric whose name is no identifier stays in metrics_json only; bools and ints are typed.
    names = pq.read_schema(paths["episodes"]).names
    assert [n for n in names if n.startswith("metric_")] == ["metric_success", "metric_score"]
    calls = _rows(paths["calls"])
    assert calls[0]["purpose"] == HOSTILE and calls[0]["finish_reason"] == HOSTILE
    assert len(calls[0]["messages"][1]["content"]) == len("look: " + HOSTILE) + 1 + 200_000
    # The card quotes the spec in a fence no value can close.
    card = (paths["episodes"].parent / "README.md").read_text(encoding="utf-8")
    fence = re.search(r"^(`{3,})json$", card, re.M)
    assert fence and len(fence.group(1)) == 4
    assert (
        json.loads(card.split(fence.group(0) + "\n")[1].split("\n" + fence.group(1))[0])["model"]
        == HOSTILE
    )


async def test_a_run_with_errored_episodes(tmp_path: Path) -> None:
    # Seeded faults with no retries: one episode errors mid-way, one at its first call.
    async with MockServer(error_rate=0.08, seed=3) as server:
        spec = RunSpec(
            benchmark="griddag",
            split="main",
            instances=["low-easy-s0", "low-easy-s1", "medium-easy-s0"],
            agent="react",
            model="openai-compat/griddag-frontier",
            model_options=ModelOptions(base_url=server.base_url),
        )
        options = RunOptions(progress=False, max_retries=0, concurrency=1)
        result = await execute_run(spec, options, runs_dir=tmp_path)
    run_dir = result.run_dir.path
    paths = export_parquet(run_dir)
    records = _check_tables(run_dir, paths)
    assert [r.status for r in records] == ["error", "error", "ok"]
    episodes = _rows(paths["episodes"])
    assert [e["n_steps"] for e in episodes] == [len(r.steps) for r in records]
    assert episodes[0]["n_steps"] > 0 and episodes[1]["n_steps"] == 0
    assert all(e["error"].startswith("ModelError") for e in episodes[:2])
    assert episodes[2]["error"] is None
    # Errored episodes have no metrics: null in the typed columns, {} in metrics_json.
    assert [e["metric_success"] for e in episodes] == [None, None, True]
    assert episodes[0]["metrics_json"] == "{}"


def test_small_row_groups_read_back_whole(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "_ROW_GROUP_ROWS", 7)
    paths = export_parquet(runs["griddag"], tmp_path / "small")
    calls = pq.ParquetFile(paths["calls"])
    assert calls.metadata.num_row_groups == -(-calls.metadata.num_rows // 7) > 1
    _check_tables(runs["griddag"], paths)
    # Exporting again replaces the tables and leaves no temporary file behind.
    export_parquet(runs["griddag"], tmp_path / "small")
    assert not list((tmp_path / "small").glob("*.tmp"))


def test_an_empty_run_exports_empty_tables(tmp_path: Path) -> None:
    run_dir = tmp_path / "empty"
    RunDirectory(run_dir).open(RunSpec(benchmark="griddag-v1", split="main", agent="frontier"))
    paths = export_parquet(run_dir)
    assert [pq.read_table(p).num_rows for p in paths.values()] == [0, 0, 0]
    assert pq.read_schema(paths["calls"]).names == [name for name, *_ in CALL_COLUMNS]


def test_not_a_run_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run directory"):
        export_parquet(tmp_path)


def test_without_pyarrow_the_export_names_the_extra(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=re.escape("pip install 'forkingpaths[parquet]'")):
        export_parquet(runs["griddag"])


def _documented(table: str) -> list[tuple[str, str, str]]:
    """(column, type, null) rows of one table's section of docs/export-parquet.md."""
    section = DOCS.read_text(encoding="utf-8").split(f"### {table}\n")[1].split("\n#")[0]
    rows = re.findall(r"^\| `([a-z_<>]+)` \| ([^|]+) \| (yes|no) \|", section, re.M)
    return [(name, kind.strip(), null) for name, kind, null in rows]


def _written_type(arrow_type: Any) -> str:
    # Arrow prints float64 as `double`; the docs use the name pandas and `datasets` show.
    text = re.sub(r"(element|item): | not null", "", str(arrow_type))
    return "float64" if text == "double" else text


def test_the_docs_match_the_files(runs: dict[str, Path], tmp_path: Path) -> None:
    paths = export_parquet(runs["griddag"], tmp_path / "docs")
    assert f"## Schema (version {PARQUET_SCHEMA_VERSION})" in DOCS.read_text(encoding="utf-8")
    for table, columns in (
        ("episodes", EPISODE_COLUMNS),
        ("steps", STEP_COLUMNS),
        ("calls", CALL_COLUMNS),
    ):
        schema = pq.read_schema(paths[table])
        written = [
            (f.name, _written_type(f.type), "yes" if f.nullable else "no")
            for f in schema
            if not f.name.startswith("metric_")
        ]
        documented = [row for row in _documented(table) if row[0] != "metric_<name>"]
        assert documented == written
        assert [f.metadata[b"description"].decode() for f in schema][: len(columns)] == [
            text for *_, text in columns
        ]


class _FakeHub:
    """Stands in for huggingface_hub.HfApi: records what would be sent."""

    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, token: str | None = None) -> None:
        self.made.append({"token": token})

    def create_repo(self, repo_id: str, **kwargs: Any) -> None:
        self.made.append({"create_repo": repo_id, **kwargs})

    def upload_folder(self, **kwargs: Any) -> None:
        self.made.append({"upload_folder": kwargs})


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> type[_FakeHub]:
    huggingface_hub = pytest.importorskip("huggingface_hub")
    _FakeHub.made = []
    monkeypatch.setattr(huggingface_hub, "HfApi", _FakeHub)
    return _FakeHub


def test_push_without_a_token_stops_before_the_network(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_hub: Any
) -> None:
    out = export_parquet(runs["griddag"], tmp_path / "hub")["episodes"].parent
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="HF_TOKEN") as info:
        push_to_hub(out, "me/run")
    assert "\n" not in str(info.value)
    assert fake_hub.made == []


def test_push_without_huggingface_hub_names_the_extra(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = export_parquet(runs["griddag"], tmp_path / "hub")["episodes"].parent
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(ConfigError, match=re.escape("pip install 'forkingpaths[parquet]'")):
        push_to_hub(out, "me/run")


def test_push_refuses_what_is_not_an_export_or_a_repo_id(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_hub: Any
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    with pytest.raises(ConfigError, match="not a Parquet export"):
        push_to_hub(runs["griddag"], "me/run")
    out = export_parquet(runs["griddag"], tmp_path / "hub")["episodes"].parent
    for repo in ("run", "me/run/extra", "../x", "https://huggingface.co/me/run"):
        with pytest.raises(ConfigError, match="OWNER/NAME"):
            push_to_hub(out, repo)
    assert fake_hub.made == []


def test_push_uploads_the_export_as_a_private_dataset(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_hub: Any
) -> None:
    out = export_parquet(runs["griddag"], tmp_path / "hub")["episodes"].parent
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    push_to_hub(out, "me/run")
    token, create, upload = fake_hub.made
    assert token == {"token": "hf_test"}
    assert create == {"create_repo": "me/run", "repo_type": "dataset", "private": True,
                      "exist_ok": True}  # fmt: skip
    sent = upload["upload_folder"]
    assert (sent["folder_path"], sent["repo_id"], sent["repo_type"]) == (
        str(out),
        "me/run",
        "dataset",
    )
    assert sorted(sent["allow_patterns"]) == [
        "README.md",
        "calls.parquet",
        "episodes.parquet",
        "steps.parquet",
    ]
