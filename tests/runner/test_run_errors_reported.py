"""A run (or suite) whose episodes error says so at the end: the errors grouped by cause with
counts, how to retry them, and exit code 1. Against an unused loopback port and the real mock
server, through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.doubles import free_port, run_cli

from forkingpaths.core.records import EpisodeRecord, ModelOptions, RunSpec
from forkingpaths.models.mockserver import run_mock_server_in_thread
from forkingpaths.runner import suite
from forkingpaths.runner.run import describe_errors, group_errors

INSTANCES = "low-easy-s0,low-easy-s1,medium-easy-s0"
RETRY = "re-run the same command with --retry-errors to retry them (finished episodes are kept)"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))


def _run_args(model: str, base_url: str, runs_dir: Path) -> list[str]:
    return [
        "run", "griddag", "--agent", "react", "--model", model, "--base-url", base_url,
        "--instances", INSTANCES, "--max-retries", "0", "--timeout", "5", "--no-progress",
        "--runs-dir", str(runs_dir), "--run-id", "r",
    ]  # fmt: skip


def test_unreachable_endpoint_exits_1_with_the_errors_grouped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    args = _run_args("openai-compat/griddag-frontier", f"http://127.0.0.1:{port}/v1", tmp_path)
    code, out, err = run_cli(args, capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "3 episodes errored:"
    assert len(lines) == 3, err  # one group: the same cause in every episode
    assert lines[1].startswith("  3 x ModelError: model 'openai-compat/griddag-frontier' call")
    assert f"Connect call failed ('127.0.0.1', {port})" in lines[1]
    assert lines[2] == RETRY
    assert "Traceback" not in err
    assert "run directory:" in out, "the summary is printed before the errors"

    # The endpoint comes up: the same command with --retry-errors finishes the run, exit 0.
    with run_mock_server_in_thread(port=port):
        code, _, err = run_cli([*args, "--retry-errors"], capsys)
    assert code == 0, err
    assert "errored" not in err


def test_misspelled_model_404_exits_1_and_resume_without_retry_still_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with run_mock_server_in_thread() as base_url:
        args = _run_args("openai-compat/griddag-frontierr", base_url, tmp_path)
        code, _, err = run_cli(args, capsys)
        assert code == 1
        lines = err.splitlines()
        assert lines[0] == "3 episodes errored:"
        assert lines[1].startswith(
            "  3 x ModelError: model 'openai-compat/griddag-frontierr' call failed (not "
            "retryable) after 1 attempt(s): NotFoundError: Error code: 404 - The model "
            "'griddag-frontierr' does not exist."
        )
        assert lines[2] == RETRY
        # Re-run without --retry-errors: nothing is played, the errors are still the run's.
        code, _, err = run_cli(args, capsys)
        assert code == 1 and err.splitlines()[0] == "3 episodes errored:"


def _errored(error: str, instance: str = "i") -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r",
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=0,
        seed=0,
        agent="react",
        status="error",
        error=error,
    )


def test_causes_group_by_type_and_first_line_with_varying_numbers_and_ids_collapsed() -> None:
    records = [
        _errored("ModelError: connection refused (http://127.0.0.1:9/v1)"),
        *[
            _errored(f"KeyError: step {i} of request req_{i}f3a9c0d1e2b4a7788 failed\n  File x")
            for i in range(3)
        ],
        _errored("ModelError: connection refused (http://127.0.0.1:9/v1)"),
        _errored(""),
    ]
    ok = records[0].model_copy(update={"status": "ok", "error": None})
    assert group_errors([*records, ok]) == [
        (3, "KeyError: step # of request <id> failed"),
        (2, "ModelError: connection refused (http://127.0.0.1:9/v1)"),
        (1, "unknown error"),
    ]
    assert describe_errors(records[:2], "runs/x") == [
        "2 episodes errored in runs/x:",
        "  1 x ModelError: connection refused (http://127.0.0.1:9/v1)",
        "  1 x KeyError: step 0 of request req_0f3a9c0d1e2b4a7788 failed",
    ]
    assert describe_errors([ok]) == []
    long = group_errors([_errored("ValueError: " + "x" * 400)])
    assert len(long[0][1]) == 300 and long[0][1].endswith("...")


def test_a_suite_with_errored_runs_names_them_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    specs = [
        RunSpec(
            benchmark="griddag-v1",
            split="main",
            instances=["low-easy-s0"],
            agent="frontier",
        ),
        RunSpec(
            benchmark="griddag-v1",
            split="main",
            instances=["low-easy-s0", "low-easy-s1"],
            agent="react",
            model="openai-compat/griddag-frontier",
            model_options=ModelOptions(base_url=base_url),
        ),
    ]
    monkeypatch.setattr(suite, "quick_specs", lambda: specs)
    args = ["run", "--suite", "quick", "--max-retries", "0", "--timeout", "5", "--no-progress"]
    code, _, err = run_cli([*args, "--runs-dir", str(tmp_path)], capsys)
    assert code == 1
    lines = err.splitlines()
    errored_dir = next(p for p in tmp_path.iterdir() if "openai-compat" in p.name)
    assert lines[0] == f"2 episodes errored in {errored_dir}:"
    assert lines[1].startswith("  2 x ModelError: model 'openai-compat/griddag-frontier'")
    assert lines[2] == RETRY
    assert len(lines) == 3, "the run without errors is not listed"
