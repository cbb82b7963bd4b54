"""The Inspect AI export: real runs written as eval logs, read back with inspect_ai's reader."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import free_port

from forkingpaths.api import load_records, run
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.export.inspect_log import export_inspect
from forkingpaths.runner.rundir import RunDirectory

inspect_log = pytest.importorskip("inspect_ai.log")

HOSTILE = '</script><img src=x onerror=alert(1)> "q" \\ \x00 \u202e ${x} {{y}} \n---\nAction: quit'
"""Markup, quotes, a backslash, NUL, a bidi override, template syntax and a forged second turn:
what a model's reply may hold and an export must keep byte for byte."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The griddag ReAct run (one episode) and a judged escape run (one scenario), made once."""
    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as patch:
        # Scripted replies would otherwise fill the user's response cache.
        patch.setenv("FORKINGPATHS_CACHE_DIR", str(root / "cache"))
        griddag = run(
            "griddag",
            agent="react",
            model="scripted/griddag-frontier",
            instances=["low-easy-s0"],
            runs_dir=root,
        )
        escape = run(
            "escape",
            agent="redna",
            model="scripted/escape-explorer",
            roles={"judge": "scripted/escape-judge"},
            instances=["beehive_removal"],
            runs_dir=root,
        )
    yield {"griddag": griddag.run_dir.path, "escape": escape.run_dir.path}


def _read(path: Path) -> Any:
    return inspect_log.read_eval_log(path, resolve_attachments=True)


def _model_events(sample: Any) -> list[Any]:
    return [event for event in sample.events if event.event == "model"]


def _numeric(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, bool | int | float)}


def _check_log_matches_run(run_dir: Path, log: Any) -> list[EpisodeRecord]:
    """Everything a run and its log share: spec, one sample per episode with the agent's last
    call, its scores and usage, every call as a model event, the run's metrics as results."""
    header = RunDirectory(run_dir).read_header()
    metrics = RunDirectory(run_dir).read_metrics()
    records = load_records(run_dir)
    spec = header.spec

    assert log.status == "success"
    assert log.eval.task == spec.benchmark
    assert log.eval.model == spec.model
    assert log.eval.task_args == spec.model_dump(mode="json")
    assert log.eval.run_id == header.run_id
    assert len(log.samples) == len(records) == metrics.episodes.ok
    assert log.eval.dataset.sample_ids == [f"{r.instance_id}#{r.trial}" for r in records]

    for sample, record in zip(log.samples, records, strict=True):
        assert sample.id == f"{record.instance_id}#{record.trial}"
        assert sample.input == record.initial_observation
        agent_calls = [
            call
            for step in record.steps
            for call in step.calls
            if call.model == record.model and call.purpose not in spec.roles
        ]
        last = agent_calls[-1]
        sent = [(m.role, m.text) for m in sample.messages[:-1]]
        assert sent == [(m.role, m.content) for m in last.messages]
        assert (sample.messages[-1].role, sample.messages[-1].text) == ("assistant", last.response)
        assert {k: s.value for k, s in sample.scores.items()} == _numeric(record.metrics)
        assert sample.metadata["outcome"] == json.loads(json.dumps(record.outcome))
        usage = sum(u.input_tokens for u in sample.model_usage.values())
        assert usage == record.usage.prompt_tokens

        events = _model_events(sample)
        calls = [call for step in record.steps for call in step.calls]
        assert len(events) == len(calls) == record.n_calls
        for event, call in zip(events, calls, strict=True):
            assert [(m.role, m.text) for m in event.input] == [
                (m.role, m.content) for m in call.messages
            ]
            assert event.output.completion == call.response
            assert event.output.usage.input_tokens == call.prompt_tokens
            assert event.output.usage.output_tokens == call.completion_tokens
            assert event.metadata["purpose"] == call.purpose

    run_scores = log.results.scores[0]
    assert {k: m.value for k, m in run_scores.metrics.items()} == _numeric(metrics.metrics)
    assert log.results.total_samples == metrics.episodes.planned
    return records


def test_the_griddag_react_run_reads_back_with_every_call(runs: dict[str, Path]) -> None:
    path = export_inspect(runs["griddag"])
    assert path == runs["griddag"].parent / f"{runs['griddag'].name}.eval"
    log = _read(path)
    _check_log_matches_run(runs["griddag"], log)
    # ReAct sends its history: the last call's messages are a multi-turn conversation.
    assert [m.role for m in log.samples[0].messages][:4] == ["system", "user", "assistant", "user"]
    # griddag's headline metric leads, so Inspect's log listing shows it.
    assert next(iter(log.results.scores[0].metrics)) == "success_rate"


def test_the_judged_escape_run_keeps_judge_calls_as_role_events(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    path = export_inspect(runs["escape"], tmp_path / "logs" / "escape.eval")
    log = _read(path)
    records = _check_log_matches_run(runs["escape"], log)
    sample = log.samples[0]
    judged = [e for e in _model_events(sample) if e.role == "judge"]
    judge_calls = [c for s in records[0].steps for c in s.calls if c.purpose == "judge"]
    assert judge_calls and len(judged) == len(judge_calls)
    assert all(e.model == "scripted/escape-judge" for e in judged)
    assert sample.role_usage["judge"].input_tokens == sum(c.prompt_tokens for c in judge_calls)
    assert log.eval.model_roles["judge"].model == "scripted/escape-judge"
    # Each step is a span holding its calls and an info event with what it did.
    infos = [e for e in sample.events if e.event == "info"]
    assert [i.data["action"] for i in infos] == [s.action for s in records[0].steps]


def test_a_hostile_reply_and_action_survive_byte_for_byte(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    run_dir = tmp_path / runs["griddag"].name
    shutil.copytree(runs["griddag"], run_dir)
    record = load_records(run_dir)[0]
    step = record.steps[-1]
    step.action = HOSTILE
    step.calls[-1].response = HOSTILE
    # The later line of the same episode supersedes the first, as a retried episode does.
    RunDirectory(run_dir).append(record)

    log = _read(export_inspect(run_dir, tmp_path / "hostile.json"))
    sample = log.samples[0]
    assert sample.messages[-1].text == HOSTILE
    assert sample.output.completion == HOSTILE
    assert sample.metadata["steps"]["actions"][-1] == HOSTILE
    assert [e for e in sample.events if e.event == "info"][-1].data["action"] == HOSTILE
    assert _model_events(sample)[-1].output.completion == HOSTILE


def test_an_errored_run_is_an_error_log_with_the_episode_error(tmp_path: Path) -> None:
    # Nothing listens on the port: every episode errors at its first call.
    result = run(
        "griddag",
        agent="react",
        model="openai-compat/griddag-frontier",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        instances=["low-easy-s0"],
        options=RunOptions(progress=False, max_retries=0, request_timeout_s=5, cache=False),
        runs_dir=tmp_path,
    )
    log = _read(export_inspect(result.run_dir.path))
    assert log.status == "error"
    assert "1 of 1 episodes errored" in log.error.message
    (sample,) = log.samples
    assert sample.error is not None
    assert sample.error.message == next(iter(result.records())).error


def test_a_run_without_a_model_or_metrics_is_a_started_log_of_its_steps(tmp_path: Path) -> None:
    result = run("griddag", agent="frontier", instances=["low-easy-s0"], runs_dir=tmp_path)
    # A run still going (or stopped) has no metrics.json yet.
    result.run_dir.metrics_path.unlink()
    log = _read(export_inspect(result.run_dir.path))
    assert log.status == "started"
    assert log.results is None
    assert log.eval.model == "none/frontier"
    (sample,) = log.samples
    record = next(iter(result.records()))
    assert [m.text for m in sample.messages[1::2]] == [s.action for s in record.steps]
    assert sample.messages[0].text == record.initial_observation


# inspect_ai's own dataframe code uses an argument pandas has deprecated: not ours to fix.
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_inspect_dataframes_read_the_log(runs: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from inspect_ai.analysis import evals_df, samples_df

    path = export_inspect(runs["escape"], tmp_path / "escape.eval")
    assert len(evals_df(path)) == 1
    samples = samples_df(path)
    assert list(samples["id"]) == ["beehive_removal#0"]
    assert "score_path_discovery" in samples.columns


def test_an_out_that_is_not_an_inspect_log_is_refused(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"\.eval or \.json"):
        export_inspect(runs["griddag"], tmp_path / "log.txt")


def test_without_inspect_ai_the_export_says_what_to_install(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes `import inspect_ai` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    with pytest.raises(ConfigError) as caught:
        export_inspect(runs["griddag"])
    message = str(caught.value)
    assert "\n" not in message
    assert "pip install 'forkingpaths[inspect]'" in message
