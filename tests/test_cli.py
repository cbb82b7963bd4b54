"""The command line: list, run, report, compare, estimate, griddag generate/score, bad input."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from tests.doubles import run_cli


def test_list_shows_benchmarks_agents_models_suites(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["list"], capsys)
    assert code == 0
    for needle in ("griddag-v1", "frontier", "react", "scripted/griddag-frontier", "quick"):
        assert needle in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "gridag", "--agent", "frontier"], "Did you mean 'griddag'"),
        (["run", "griddag", "--agent", "nope"], "Available: frontier, random, react"),
        (["run", "--suite", "slow"], "Available: local, quick"),
        (["run", "griddag", "--agent", "react", "--model", "nosuch/m"], "model API"),
        (["list", "things"], "Available: agents, all, benchmarks, models, suites"),
        (["run", "griddag", "--agent", "react", "--model", "openai-compat/x"], "--base-url"),
        (["run", "griddag", "--agent", "frontier", "-a", "novalue"], "KEY=VALUE"),
        (["run", "griddag", "--agent", "frontier", "--bogus"], "No such option: --bogus"),
        (["run", "griddag", "--agent", "frontier", "--trials", "abc"], "--trials"),
        (["run", "griddag", "--agent", "frontier", "--concurrency", "0"], "--concurrency"),
        (["run", "griddag", "--agent", "frontier", "--budget-usd", "-1"], "--budget-usd"),
        (["run", "griddag", "--agent", "frontier", "--executor", "dask"], "--executor"),
        (
            ["run", "griddag", "--agent", "frontier", "--executor", "ray", "--ray-address", "x"],
            "--ray-address",
        ),
        (["run", "griddag", "--agent", "frontier", "--ray-address", "auto"], "--executor ray"),
        (
            ["run", "griddag", "--agent", "react", "--model", "scripted/echo", "-a", "promt=x"],
            "promt",
        ),
        (
            ["run", "griddag", "--agent", "react", "--model", "scripted/echo", "-a", "prompt=x"],
            "prompt",
        ),
        (["run", "griddag", "--agent", "frontier", "-b", "budget_alpha=0"], "budget_alpha"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(
        [*args, "--runs-dir", str(tmp_path)] if args[0] == "run" else args, capsys
    )
    assert code == 2
    assert needle in " ".join((err + out).split())
    assert "Traceback" not in err
    assert not any(tmp_path.iterdir()), "a refused command writes nothing"


def test_bare_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, err = run_cli([], capsys)
    assert "run" in out + err and "Traceback" not in err


def test_missing_key_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["run", "griddag", "--agent", "react", "--model", "openai/gpt-4.1"]
    code, _, err = run_cli([*args, "--runs-dir", str(tmp_path)], capsys)
    assert code == 2 and "OPENAI_API_KEY" in err
    assert not any(tmp_path.iterdir())


def test_run_report_compare(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    common = ["--instances", "low-easy-s0,medium-easy-s1", "--runs-dir", str(tmp_path)]
    code, out, _ = run_cli(["run", "griddag", "--agent", "frontier", *common], capsys)
    assert code == 0 and "success_rate" in out and "report:" in out
    code, out, _ = run_cli(["run", "griddag", "--agent", "random", *common], capsys)
    assert code == 0
    runs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(runs) == 2
    frontier = next(p for p in runs if "frontier" in p.name)
    metrics = json.loads((frontier / "metrics.json").read_text())
    (frontier / "metrics.json").unlink()
    (frontier / "report.html").unlink()
    code, out, _ = run_cli(["report", str(frontier)], capsys)
    assert code == 0
    assert json.loads((frontier / "metrics.json").read_text())["metrics"] == metrics["metrics"]
    assert (frontier / "report.html").exists()
    html = tmp_path / "cmp.html"
    code, out, _ = run_cli(["compare", *map(str, runs), "--html", str(html)], capsys)
    assert code == 0 and "success_rate" in out and html.exists()
    assert (tmp_path / "plots" / "griddag_success_vs_log_exploration_error.png").exists()


def test_estimate_prices_a_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["estimate", "griddag", "--agent", "react", "--model", "openai/gpt-4.1"]
    code, out, _ = run_cli([*args, "--instances", "low-easy-s0,high-hard-s2"], capsys)
    assert code == 0
    assert "model calls" in out and "cost (USD)" in out and "upper bound" in out


def test_generate_then_score_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run_cli(
        ["griddag", "generate", "--exploration", "high", "--dag", "hard", "--seed", "2"], capsys
    )
    assert code == 0
    world = json.loads(out)
    assert set(world) == {"cells", "start", "nodes", "goal", "budget"}
    assert world["budget"] == 3 * len(world["cells"])
    assert all(set(n) == {"pos", "options"} for n in world["nodes"].values())
    start = world["start"]
    neighbour = next(c for c in world["cells"] if abs(c[0] - start[0]) + abs(c[1] - start[1]) == 1)
    path = tmp_path / "traj.json"
    path.write_text(json.dumps({**world, "positions": [start, neighbour, start, start]}))
    code, out, _ = run_cli(["griddag", "score", str(path)], capsys)
    assert code == 0
    scored = json.loads(out)
    assert set(scored) == {"steps", "exploration_error", "exploitation_error", "success"}
    assert [s["t"] for s in scored["steps"]] == [0, 1, 2]
    assert set(scored["steps"][0]) == {"t", "case", "gain", "progress", "err"}
    assert scored["steps"][2]["err"] == 1, "a refused move (staying in place) is an error"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("\udcff", "not UTF-8"),
        ("{not json", "not valid JSON"),
        ('{"cells": [[0,0]], "start": [0,0], "nodes": {}, "goal": "A"}', "nodes"),
        (
            '{"cells": [[0,0],[1,0]], "start": [0,0], "goal": "A",'
            ' "nodes": {"A": {"pos": [1,0], "options": []}}, "positions": [[0,0],[5,5]]}',
            "positions[1]",
        ),
        (
            '{"cells": [[0,0],[1,0]], "start": [0,0], "goal": "A",'
            ' "nodes": {"A": {"pos": [1,0], "options": []}}}',
            "positions",
        ),
    ],
)
def test_score_names_the_bad_field(
    content: str, needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    if content == "\udcff":
        path.write_bytes(b"\xff\xfe{")
    else:
        path.write_text(content)
    code, _, err = run_cli(["griddag", "score", str(path)], capsys)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_unknown_run_options_are_benchmark_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["run", "escape", "--agent", "oracle", "--instances", "pipe_leak", "--attempts", "1",
         "--max-steps", "3", "--runs-dir", str(tmp_path), "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    # The summary says which options changed the protocol, beside the numbers.
    assert "benchmark options: attempts=1, max_steps=3" in out
    spec = json.loads(next(tmp_path.glob("*/spec.json")).read_text())["spec"]
    assert spec["benchmark_options"] == {"attempts": 1, "max_steps": 3}
    code, _, err = run_cli(
        ["run", "escape", "--agent", "oracle", "--no-such-option", "1", "--runs-dir",
         str(tmp_path)],
        capsys,
    )  # fmt: skip
    assert code == 2 and "no_such_option" in err
    code, _, err = run_cli(
        ["run", "escape", "--agent", "oracle", "stray", "--runs-dir", str(tmp_path)], capsys
    )
    assert code == 2


@pytest.fixture(scope="module")
def react_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-episode griddag run of the ReAct agent on a scripted model (no network)."""
    runs = tmp_path_factory.mktemp("runs")
    main_args = [
        "run",
        "griddag",
        "--agent",
        "react",
        "--model",
        "scripted/griddag-frontier",
        "--instances",
        "low-easy-s0,low-easy-s1",
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--no-progress",
    ]
    try:
        from forkingpaths.cli import main

        main(main_args)
    except SystemExit as exc:
        assert not exc.code
    return runs / "r"


def test_show_lists_episodes_then_a_timeline_then_a_call(
    react_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(["show", str(react_run)], capsys)
    assert code == 0 and "low-easy-s0" in out and "low-easy-s1" in out
    code, out, _ = run_cli(["show", str(react_run), "low-easy-s1"], capsys)
    assert code == 0 and "episode 1: low-easy-s1 trial 0" in out
    assert (
        "step 0" in out and "action: " in out and "call 0: act · scripted/griddag-frontier" in out
    )
    code, out, _ = run_cli(["show", str(react_run), "0", "--step", "2", "--call", "0"], capsys)
    assert code == 0
    # The exact messages of the third call: the system prompt, then the episode so far.
    assert out.count("[user]") == 3 and out.count("[assistant]") == 2
    assert "[system]" in out and "You control an agent in a symbolic grid" in out
    assert "[reply] (finish: stop)" in out and '{"action":' in out


def test_show_reads_one_episode_as_loading_the_whole_run_gives_it(react_run: Path) -> None:
    # `show` reads a record by its offset and only the text-store lines its calls name.
    from forkingpaths.runner.index import EpisodeIndex, TextIndex
    from forkingpaths.runner.rundir import load_records

    whole = load_records(react_run)
    index, texts = EpisodeIndex(react_run), TextIndex(react_run)
    assert [entry["instance_id"] for entry in index.entries()] == [r.instance_id for r in whole]
    for number, expected in enumerate(whole):
        record = index.read(number)
        texts.attach(record)
        assert record == expected
        assert any(call.messages for step in record.steps for call in step.calls)


def test_show_lists_a_retried_episode_at_its_first_place_without_an_index(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A run written before the episode index existed, whose first episode was played again and
    # failed: the list and the episode show the latest attempt, at the first one's number.
    run = tmp_path / "r"
    shutil.copytree(react_run, run)
    (run / "episodes.index.jsonl").unlink()
    lines = (run / "episodes.jsonl").read_text().splitlines()
    retried = {**json.loads(lines[0]), "status": "error", "error": "model refused: boom"}
    (run / "episodes.jsonl").write_text("\n".join([*lines, json.dumps(retried)]) + "\n")
    code, out, _ = run_cli(["show", str(run)], capsys)
    assert code == 0 and "error: model refused: boom" in out
    assert out.index("low-easy-s0") < out.index("low-easy-s1")
    code, out, _ = run_cli(["show", str(run), "0"], capsys)
    assert code == 0 and "episode 0: low-easy-s0 trial 0" in out and "error: model refused" in out
    code, out, _ = run_cli(["show", str(run), "low-easy-s1", "--step", "1", "--call", "0"], capsys)
    assert code == 0 and out.count("[assistant]") == 1


def _damaged_copy(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "r"
    shutil.copytree(run, copy)
    return copy


def test_show_never_shows_another_episode_for_an_unreadable_record(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record zeroed in place (as a crash can leave it) that the episode index still names:
    # read again from the records, the run has no such episode, and another is not shown.
    run = _damaged_copy(react_run, tmp_path)
    lines = (run / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    lines[0] = b"\0" * (len(lines[0]) - 1) + b"\n"
    (run / "episodes.jsonl").write_bytes(b"".join(lines))
    code, out, err = run_cli(["show", str(run), "low-easy-s0"], capsys)
    assert code == 2 and "low-easy-s1" not in out
    assert "episode low-easy-s0#0 has no readable record" in err and "Traceback" not in err


def test_show_names_a_damaged_text_store_line_in_one_line(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _damaged_copy(react_run, tmp_path)
    first = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
    ref = first["steps"][-1]["calls"][0]["messages_ref"]
    texts = run / "texts.jsonl"
    lines = texts.read_text().splitlines(keepends=True)
    cut = [
        line[: len(line) // 2] + "\n" if json.loads(line)["id"] == ref else line for line in lines
    ]
    texts.write_text("".join(cut))
    code, _, err = run_cli(["show", str(run), "0"], capsys)
    assert code == 2 and f"the line of {ref} at byte" in err and "Traceback" not in err
    # Another episode, whose calls do not name that line, still shows.
    code, out, _ = run_cli(["show", str(run), "1", "--step", "1", "--call", "0"], capsys)
    assert code == 0 and "[system]" in out


def test_show_reads_a_text_store_with_the_old_hex_ids(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Runs written before text ids took their 14-character form named texts by 20 hex digits.
    run = _damaged_copy(react_run, tmp_path)
    (run / "episodes.index.jsonl").unlink()  # such runs had no episode index either
    texts = [json.loads(line) for line in (run / "texts.jsonl").read_text().splitlines()]
    hexid = {t["id"]: hashlib.blake2b(t["id"].encode(), digest_size=10).hexdigest() for t in texts}
    for text in texts:
        text["id"] = hexid[text["id"]]
        if "chunks" in text:
            text["parent"] = hexid[text["parent"]] if text["parent"] else None
            text["chunks"] = [hexid[c] for c in text["chunks"]]
    (run / "texts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in texts))
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    for record in records:
        for step in record["steps"]:
            for call in step.get("calls", ()):
                call["messages_ref"] = hexid[call["messages_ref"]]
    (run / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = run_cli(["show", str(run), "0", "--step", "2", "--call", "0"], capsys)
    assert code == 0, err
    assert out.count("[user]") == 3 and out.count("[assistant]") == 2


def test_show_lists_a_run_whose_index_lines_lack_a_summary_field(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An index written by another version: the list is read from the records instead.
    run = _damaged_copy(react_run, tmp_path)
    index = run / "episodes.index.jsonl"
    lines = index.read_text().splitlines()
    entry = json.loads(lines[0])
    del entry["tokens"]
    index.write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n")
    code, out, err = run_cli(["show", str(run)], capsys)
    assert code == 0 and "low-easy-s0" in out and "low-easy-s1" in out, err


def test_show_of_a_run_with_no_episodes_yet_says_so(
    react_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _damaged_copy(react_run, tmp_path)
    for name in ("episodes.jsonl", "episodes.index.jsonl"):
        (run / name).write_text("")
    code, _, err = run_cli(["show", str(run), "0"], capsys)
    assert code == 2 and "the run has no episodes yet" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["9"], "numbered 0..1; got 9"),
        (["nope"], "no episode 'nope' in this run"),
        (["low-easy-s0#x"], "INSTANCE#TRIAL with a trial number"),
        (["low-easy-s0#²"], "INSTANCE#TRIAL with a trial number"),
        (["²"], "no episode '²' in this run"),
        (["0", "--step", "99"], "--step: episode low-easy-s0 has steps 0..7, got 99"),
        (["0", "--step", "0", "--call", "3"], "--call: step 0 has calls 0..0, got 3"),
        (["0", "--call", "0"], "--call needs --step N"),
        (["--step", "1"], "--step and --call need an EPISODE"),
    ],
)
def test_show_refuses_bad_input_in_one_line(
    react_run: Path, args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["show", str(react_run), *args], capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_show_names_a_directory_that_is_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["show", str(tmp_path)], capsys)
    assert code == 2 and "not a run directory" in err
