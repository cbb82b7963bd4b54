"""`forkingpaths view` at the command line: bad input refused in one line with nothing lost, the
server started and stopped, and `--bundle` joining the app's modules into one classic script."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
from tests.doubles import run_cli
from tests.web.runs import run_key, viewer_process

from forkingpaths.web.bundle import (
    MARKER,
    BundleError,
    app_script,
    module_source,
    request_key,
    write_bundle,
)
from forkingpaths.web.data import Viewer


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in err


def test_a_missing_runs_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, _, err = run_cli(["view", str(tmp_path / "nope")], capsys)
    _one_line_error(code, err, "RUNS_DIR", "does not exist")
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(["view", str(tmp_path / "file")], capsys)
    _one_line_error(code, err, "RUNS_DIR", "is not a folder")


def test_a_port_out_of_range_or_taken_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, _, err = run_cli(["view", str(tmp_path), "--port", "70000"], capsys)
    _one_line_error(code, err, "--port 70000", "0..65535")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(["view", str(tmp_path), "--port", str(port)], capsys)
    _one_line_error(code, err, f"--port {port}", "cannot listen")


def test_several_folders_without_bundle_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, _, err = run_cli(["view", str(tmp_path), str(tmp_path)], capsys)
    _one_line_error(code, err, "RUNS_DIR", "--bundle")
    code, _, err = run_cli(["view", "--bundle", str(tmp_path / "out")], capsys)
    _one_line_error(code, err, "--bundle OUT needs the runs")
    code, _, err = run_cli(["view", "--bundle", str(tmp_path / "out"), str(tmp_path)], capsys)
    _one_line_error(code, err, "no run directory there")


def test_a_bundle_never_overwrites_a_folder_that_is_not_one(
    quick_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    run = quick_runs / run_key(quick_runs, "griddag", "frontier")
    code, _, err = run_cli(["view", "--bundle", str(out), str(run)], capsys)
    _one_line_error(code, err, "--bundle", "not an earlier bundle")
    assert (out / "thesis.tex").read_text() == "years of work"
    # An earlier bundle is written over.
    code, printed, _ = run_cli(["view", "--bundle", str(tmp_path / "b"), str(run)], capsys)
    assert code == 0 and "index.html" in printed
    (tmp_path / "b" / "data" / "stale.js").write_text("old")
    code, _, _ = run_cli(["view", "--bundle", str(tmp_path / "b"), str(run)], capsys)
    assert code == 0 and not (tmp_path / "b" / "data" / "stale.js").exists()
    assert (tmp_path / "b" / MARKER).exists()


def test_the_bundle_holds_every_answer_the_app_asks_for(quick_runs: Path, tmp_path: Path) -> None:
    runs = [quick_runs / run_key(quick_runs, "griddag", a) for a in ("frontier", "react")]
    index = write_bundle(tmp_path / "bundle", runs)
    manifest = json.loads(
        (tmp_path / "bundle" / "data" / "manifest.js").read_text().split("=", 1)[1].rstrip(";\n")
    )
    viewer = Viewer(quick_runs, runs)
    keys = [e.key for e in viewer.discover()]
    expected = {request_key("runs", {})}
    for key in keys:
        expected |= {request_key("run", {"run": key}), request_key("episodes", {"run": key})}
        for summary in viewer.run(key).episodes.entries():
            expected.add(request_key("episode", {"run": key, "n": str(summary["n"])}))
    expected.add(request_key("compare", {"runs": ",".join(keys)}))
    assert expected <= set(manifest["files"])
    for name in manifest["files"].values():
        assert (tmp_path / "bundle" / name).read_text().startswith("window.FP_DATA(")
    for target in manifest["plots"].values():
        assert (tmp_path / "bundle" / target).is_file()
    html = index.read_text()
    assert 'type="module"' not in html and "app.bundle.js" in html


@pytest.mark.parametrize(
    "source",
    [
        "export default function f() {}\n",
        "export { a, b };\n",
        'import thing from "./x.js";\n',
        'import * as ns from "./x.js";\n',
    ],
)
def test_a_module_the_bundle_cannot_join_is_refused_by_name(source: str) -> None:
    with pytest.raises(BundleError, match=r"bad\.js"):
        module_source("bad.js", source, "x")


def test_every_shipped_module_joins_into_one_valid_script(quick_runs: Path) -> None:
    viewer = Viewer(quick_runs)
    views = {}
    for entry in viewer.discover():
        bench = viewer.benchmark(entry.header())
        if bench.view_script() is not None:
            views[viewer.view_url(bench)] = bench.view_script()
    assert len(views) >= 5, "each benchmark package draws its world"
    script = app_script(views)
    assert "export " not in script.replace("exports", "")
    node = shutil.which("node")
    if node is None:
        pytest.skip("node checks the joined script's syntax")
    checked = subprocess.run(
        [node, "--check", "-"], input=script, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr


def test_view_serves_until_stopped(quick_runs: Path) -> None:
    with viewer_process(quick_runs) as (url, printed):
        assert f"forkingpaths view: {url}" in printed
        body = json.load(urllib.request.urlopen(f"{url}api/runs", timeout=30))
        assert len(body["runs"]) == len(list(quick_runs.iterdir()))


def test_study_refuses_a_bad_port_or_folder_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, _, err = run_cli(["study", str(tmp_path), "--port", "70000"], capsys)
    _one_line_error(code, err, "--port 70000", "0..65535")
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(["study", str(tmp_path / "file")], capsys)
    _one_line_error(code, err, "RUNS_DIR", "is not a folder")
    code, _, err = run_cli(["study", str(tmp_path), "--role", "judge"], capsys)
    _one_line_error(code, err, "--role", "ROLE=VALUE")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(["study", str(tmp_path), "--port", str(port)], capsys)
    _one_line_error(code, err, f"--port {port}", "cannot listen")
