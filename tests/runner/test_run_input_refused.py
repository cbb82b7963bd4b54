"""Input refused at the edge with one line and exit 2, nothing written: a bad temperature, an
unreadable price file, an unknown scripted policy to estimate with, a response cache whose
folder is a file, a run id that is not a plain name, a runs directory that cannot be written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.doubles import run_cli

from forkingpaths.core.chat import ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelOptions, RunSpec
from forkingpaths.runner.rundir import RunDirectory, check_run_id

SCRIPTED = ["run", "griddag", "--agent", "react", "--model", "scripted/griddag-frontier"]
RUN = [*SCRIPTED, "--instances", "low-easy-s0", "--no-progress"]


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("value", "shown"), [("-1", "-1.0"), ("nan", "nan"), ("inf", "inf"), ("-inf", "-inf")]
)
def test_temperature_must_be_finite_and_not_negative(
    value: str, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([*RUN, f"--temperature={value}", "--runs-dir", str(tmp_path)], capsys)
    assert code == 2
    assert _one_error_line(err) == (
        f"error: --temperature: got {shown}; allowed: a finite number >= 0 (0 is greedy; "
        "OpenAI's API takes 0 to 2)"
    )
    assert not any(tmp_path.iterdir())


def test_temperature_is_checked_in_the_spec_too() -> None:
    with pytest.raises(ValidationError, match=r"temperature: got -0\.5; allowed: a finite number"):
        ModelOptions(params=ModelParams(temperature=-0.5))
    assert ModelOptions(params=ModelParams(temperature=2.0)).params.temperature == 2.0


def test_missing_price_file_is_refused_even_with_a_scripted_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    code, _, err = run_cli([*RUN, "--prices", "nope.yaml", "--runs-dir", str(runs)], capsys)
    assert code == 2
    assert _one_error_line(err) == (
        "error: price file 'nope.yaml' cannot be read (No such file or directory); pass an "
        "existing YAML file (--prices or $FORKINGPATHS_PRICES)"
    )
    assert not runs.exists()
    code, _, err = run_cli([*RUN, "--prices", str(tmp_path), "--runs-dir", str(runs)], capsys)
    assert code == 2 and "cannot be read (Is a directory)" in _one_error_line(err)


def test_estimate_refuses_missing_prices_and_unknown_scripted_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["estimate", "griddag", "--agent", "react", "--instances", "low-easy-s0"]
    code, _, err = run_cli([*args, "--model", "scripted/nope"], capsys)
    assert code == 2
    line = _one_error_line(err)
    assert line.startswith("error: Unknown scripted policy 'nope'. Available: aut-judge,")
    code, _, err = run_cli([*args, "--model", "scripted/griddag-frontierr"], capsys)
    assert code == 2 and "Did you mean 'griddag-frontier'?" in _one_error_line(err)
    missing = tmp_path / "nope.yaml"
    code, _, err = run_cli([*args, "--model", "openai/gpt-4.1", "--prices", str(missing)], capsys)
    assert code == 2
    assert _one_error_line(err).startswith(f"error: price file '{missing}' cannot be read")


@pytest.mark.parametrize("inside", ["", "sub"])
def test_cache_folder_that_is_a_file_is_refused_before_the_run_starts(
    inside: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(blocker / inside))
    runs = tmp_path / "runs"
    args = [
        "run", "griddag", "--agent", "react", "--model", "openai-compat/griddag-frontier",
        "--base-url", "http://127.0.0.1:9/v1", "--instances", "low-easy-s0", "--no-progress",
        "--runs-dir", str(runs),
    ]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 2
    cache = blocker / inside / "responses.sqlite" if inside else blocker / "responses.sqlite"
    assert _one_error_line(err) == (
        f"error: response cache '{cache}': '{blocker}' is a file, not a folder; set "
        "FORKINGPATHS_CACHE_DIR to a writable folder or turn the cache off (--no-cache)"
    )
    assert not runs.exists()
    # --no-cache needs no cache folder: the run goes ahead (its episodes then fail to connect).
    code, _, err = run_cli([*args, "--no-cache", "--max-retries", "0"], capsys)
    assert code == 1 and "1 episode errored:" in err


@pytest.mark.parametrize(
    ("run_id", "problem"),
    [
        ("../escaped", "it contains a path separator"),
        ("a/b", "it contains a path separator"),
        ("..", "it starts with '.'"),
        (".hidden", "it starts with '.'"),
        ("", "it is empty"),
        ("  ", "it is empty"),
        ("a\\b", "it contains a path separator"),
    ],
)
def test_run_id_must_be_a_plain_folder_name(
    run_id: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    code, _, err = run_cli([*RUN, "--runs-dir", str(runs), f"--run-id={run_id}"], capsys)
    assert code == 2
    assert _one_error_line(err) == (
        f"error: --run-id {run_id!r}: not a plain folder name ({problem}); a run id names one "
        "folder inside --runs-dir: no '/' or '\\', not empty, not starting with '.'"
    )
    assert list(tmp_path.iterdir()) == [], "nothing written, inside or outside --runs-dir"


def test_plain_run_ids_pass() -> None:
    for run_id in ("r", "my-run_2", "a..b", "v1.2"):
        check_run_id(run_id)


def test_runs_dir_that_is_a_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "runs"
    blocker.write_text("a file")
    code, _, err = run_cli([*RUN, "--runs-dir", str(blocker), "--run-id", "r"], capsys)
    assert code == 2
    assert _one_error_line(err) == (
        f"error: run directory {blocker}/r cannot be written: {blocker} is a file, not a "
        "folder; pass --runs-dir a folder you can write to"
    )
    assert blocker.read_text() == "a file"
    # A file below the runs directory, where the run's own folder would go.
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "r").write_text("x")
    code, _, err = run_cli([*RUN, "--runs-dir", str(tmp_path / "dir"), "--run-id", "r"], capsys)
    assert code == 2
    assert f"{tmp_path}/dir/r is a file, not a folder" in _one_error_line(err)


def test_runs_dir_root_cannot_write_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # /proc/version is a file that even root cannot turn into a folder.
    code, _, err = run_cli([*RUN, "--runs-dir", "/proc/version/runs", "--run-id", "r"], capsys)
    assert code == 2
    assert _one_error_line(err) == (
        "error: run directory /proc/version/runs/r cannot be written: /proc/version is a file, "
        "not a folder; pass --runs-dir a folder you can write to"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_runs_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    runs.chmod(0o555)
    try:
        code, _, err = run_cli([*RUN, "--runs-dir", str(runs), "--run-id", "r"], capsys)
    finally:
        runs.chmod(0o755)
    assert code == 2
    assert _one_error_line(err) == (
        f"error: run directory {runs}/r cannot be written: {runs}/r: Permission denied; pass "
        "--runs-dir a folder you can write to"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only files")
def test_read_only_existing_run_is_refused_before_playing(tmp_path: Path) -> None:
    spec = RunSpec(benchmark="griddag-v1", split="main", agent="frontier")
    rd = RunDirectory(tmp_path / "r")
    rd.open(spec)
    rd.episodes_path.chmod(0o444)
    try:
        with pytest.raises(ConfigError, match=r"episodes\.jsonl: Permission denied"):
            rd.open(spec)
    finally:
        rd.episodes_path.chmod(0o644)


def test_open_maps_os_errors_to_one_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root a read-only folder is still writable: the refusal is simulated at the write."""
    spec = RunSpec(benchmark="griddag-v1", split="main", agent="frontier")
    rd = RunDirectory(tmp_path / "r")
    rd.open(spec)

    real_open = Path.open

    def read_only(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self == rd.episodes_path and mode != "r":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", read_only)
    with pytest.raises(ConfigError) as info:
        rd.open(spec)
    assert str(info.value) == (
        f"run directory {rd.path} cannot be written: {rd.episodes_path}: Permission denied; "
        "pass --runs-dir a folder you can write to"
    )


def test_os_error_later_in_a_command_is_one_line_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "r" / "metrics.json"))

    monkeypatch.setattr(RunDirectory, "write_metrics", disk_full)
    code, _, err = run_cli([*RUN, "--runs-dir", str(tmp_path), "--run-id", "r"], capsys)
    assert code == 1
    assert _one_error_line(err) == f"error: {tmp_path}/r/metrics.json: No space left on device"
    assert (tmp_path / "r" / "episodes.jsonl").read_text().count("\n") == 1, "records kept"
