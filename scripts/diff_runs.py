"""Compare two folders of run directories (before and after a change): metrics.json and every
record, ignoring timings, and the fields a record schema upgrade adds (transcripts).

    python scripts/diff_runs.py OLD_RUNS_DIR NEW_RUNS_DIR [--verbose]

Exits 1 when any run differs; prints one line per run and, with --verbose, the first
differences of each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from forkingpaths.runner.rundir import parse_record

# Wall-clock fields: they differ between any two runs.
TIMING = {"started_at", "finished_at", "duration_s", "latency_s", "timing", "created_at"}
# What record schema 2 added: the transcript of every call, and the version itself.
ADDED = {"schema_version", "messages", "messages_ref", "params", "finish_reason"}
# What metrics.json gained after the baseline (issue 12): per-purpose call figures.
ADDED |= {"calls_by_purpose", "invalid_step_rate"}


def _clean(value: Any, drop: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_clean(v, drop) for v in value]
    return value


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if len(out) >= 8:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _diff(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:160]} != {json.dumps(b)[:160]}")


def _records(run: Path) -> dict[tuple[str, int], Any]:
    path = run / "episodes.jsonl"
    if not path.exists():
        return {}
    records = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            # Read as the package reads it: a record schema 3 line leaves out what it repeats.
            try:
                record = parse_record(line).model_dump(mode="json")
            except ValueError:
                record = json.loads(line)
            records[(record["instance_id"], record["trial"])] = _clean(record, TIMING | ADDED)
    return records


def compare(old: Path, new: Path) -> list[str]:
    """Differences between two run directories (empty: the same results)."""
    out: list[str] = []
    for name in ("metrics.json",):
        a, b = old / name, new / name
        if a.exists() != b.exists():
            out.append(f"{name}: present in only one")
        elif a.exists():
            _diff(
                _clean(json.loads(a.read_text()), TIMING),
                _clean(json.loads(b.read_text()), TIMING),
                name,
                out,
            )
    ra, rb = _records(old), _records(new)
    if set(ra) != set(rb):
        out.append(f"episodes: {sorted(set(ra) ^ set(rb))[:5]} in only one")
    for key in sorted(set(ra) & set(rb)):
        _diff(ra[key], rb[key], f"episode{list(key)}", out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    runs = sorted(
        {p.name for p in args.old.iterdir() if (p / "spec.json").exists()}
        | {p.name for p in args.new.iterdir() if (p / "spec.json").exists()}
    )
    failed = False
    for run in runs:
        old, new = args.old / run, args.new / run
        if not (old.exists() and new.exists()):
            print(f"MISSING  {run}: only in {'old' if old.exists() else 'new'}")
            failed = True
            continue
        differences = compare(old, new)
        failed |= bool(differences)
        print(f"{'DIFFERS' if differences else 'same   '}  {run}")
        if args.verbose:
            for line in differences:
                print(f"           {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
