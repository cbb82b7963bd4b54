"""The viewer's pure JavaScript helpers, run in node where it is installed: the line diff
reconstructs both texts and keeps their common lines; the episode filter reads its conditions."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from forkingpaths.web.server import STATIC_DIR

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node runs the app's helpers")


def _run(module: str, names: list[str], body: str) -> object:
    """Evaluate `body` in node with `names` taken from one of the app's modules (its imports
    stubbed: the helpers tested here use none of them)."""
    source = (STATIC_DIR / module).read_text(encoding="utf-8")
    lines = [line for line in source.splitlines() if not line.startswith("import ")]
    script = "\n".join(lines).replace("export ", "")
    stubs = "const el = () => null, add = () => null;" if module == "app.js" else ""
    program = f"{stubs}\n{script}\nconst __out = (() => {{ {body} }})();\n"
    program += "process.stdout.write(JSON.stringify(__out));"
    done = subprocess.run(
        [NODE or "node", "--input-type=commonjs", "-e", program],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_line_diff_gives_back_both_texts() -> None:
    rng = random.Random(7)
    cases = []
    for _ in range(60):
        words = [rng.choice("abcde") for _ in range(rng.randrange(0, 12))]
        edited = [w for w in words if rng.random() > 0.3] + [rng.choice("xyz")] * rng.randrange(2)
        rng.shuffle(edited) if rng.random() < 0.2 else None
        cases.append(["\n".join(words), "\n".join(edited)])
    results = _run(
        "ui.js", ["diffLines"], f"return {json.dumps(cases)}.map(([a, b]) => diffLines(a, b));"
    )
    for (old, new), ops in zip(cases, results, strict=True):
        assert "\n".join(t for op, t in ops if op != "+") == old
        assert "\n".join(t for op, t in ops if op != "-") == new
        # Myers' diff is a shortest edit script: it keeps a longest common subsequence.
        assert sum(op == " " for op, _ in ops) == _lcs(old.split("\n"), new.split("\n"))


def _lcs(a: list[str], b: list[str]) -> int:
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            best[i + 1][j + 1] = best[i][j] + 1 if x == y else max(best[i][j + 1], best[i + 1][j])
    return best[-1][-1]


def test_the_episode_filter_reads_conditions_and_words() -> None:
    episodes = [
        {
            "instance_id": "maze-1",
            "trial": 0,
            "status": "ok",
            "steps": 40,
            "metrics": {"success": True},
            "outcome": {},
        },
        {
            "instance_id": "maze-2",
            "trial": 1,
            "status": "error",
            "steps": 3,
            "error": "ModelError: 500",
            "metrics": {},
            "outcome": {"note": "x"},
        },
        {
            "instance_id": "board-9",
            "trial": 0,
            "status": "ok",
            "steps": 12,
            "metrics": {"success": False, "score": 3.5},
            "outcome": {},
        },
    ]
    queries = [
        "",
        "maze",
        "success=true",
        "success=false",
        "steps>10",
        "steps<=12 board",
        "status=error",
        "status!=error",
        "modelerror",
        "score>=3.5",
        "note=x",
        "nosuch=1",
        "success=yes",
        "steps >= 12 success = no",
    ]
    body = (
        f"const eps = {json.dumps(episodes)}; return {json.dumps(queries)}"
        ".map((q) => eps.filter(episodeFilter(q)).map((e) => e.instance_id));"
    )
    got = dict(zip(queries, _run("app.js", ["episodeFilter"], body), strict=True))
    assert got[""] == ["maze-1", "maze-2", "board-9"]
    assert got["maze"] == ["maze-1", "maze-2"]
    assert got["success=true"] == ["maze-1"] and got["success=false"] == ["board-9"]
    assert got["steps>10"] == ["maze-1", "board-9"] and got["steps<=12 board"] == ["board-9"]
    assert got["status=error"] == ["maze-2"] and got["status!=error"] == ["maze-1", "board-9"]
    assert got["modelerror"] == ["maze-2"] and got["score>=3.5"] == ["board-9"]
    assert got["note=x"] == ["maze-2"] and got["nosuch=1"] == []
    # Booleans read as the list shows them; spaces around a condition's sign are allowed.
    assert got["success=yes"] == ["maze-1"] and got["steps >= 12 success = no"] == ["board-9"]
    unknown = _run(
        "app.js",
        ["episodeFilter"],
        'return episodeFilter("sucess=false maze", new Set(["success"])).unknown;',
    )
    assert unknown == ["sucess"]


def test_the_static_folder_holds_only_the_app() -> None:
    names = {p.name for p in STATIC_DIR.iterdir()}
    assert {"index.html", "main.js", "app.js", "api.js", "ui.js", "study.js", "style.css"} <= names
    # The study's pages of play and annotation are loaded only under `forkingpaths study`.
    assert names <= {
        "index.html",
        "main.js",
        "app.js",
        "api.js",
        "ui.js",
        "study.js",
        "play.js",
        "annotate.js",
        "style.css",
    }
    assert Path(STATIC_DIR / "index.html").read_text().count("<script") == 1
