"""A large run for the viewer's figures and browser test: a real run's records repeated as new
trials until the run has the episodes (and bytes) asked for."""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection
from pathlib import Path
from typing import Any

from forkingpaths.core.records import compact_record, expand_record
from forkingpaths.runner.rundir import (
    EPISODES_FILE,
    INDEX_FILE,
    METRICS_FILE,
    SPEC_FILE,
    episode_summary,
)
from forkingpaths.runner.transcripts import TEXTS_FILE


def write_big_run(
    source: Path,
    out: Path,
    episodes: int,
    *,
    target_bytes: int | None = None,
    index: bool = True,
    instances: Collection[str] | None = None,
) -> dict[str, Any]:
    """Write `out` as a run of `episodes` episodes: the source run's records in turn, each a new
    trial, written as the runner writes them (records, index lines, the same text store).
    `target_bytes` pads each record's initial observation so episodes.jsonl reaches about that
    size; `index=False` leaves out episodes.index.jsonl (a run written before it existed);
    `instances` keeps only the source's records of those instances (the spec then plans them
    alone). Returns the file sizes."""
    source, out = Path(source), Path(out)
    lines = [
        json.loads(line)
        for line in (source / EPISODES_FILE).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if instances is not None:
        lines = [data for data in lines if data["instance_id"] in instances]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    header = json.loads((source / SPEC_FILE).read_text(encoding="utf-8"))
    header["run_id"] = out.name
    # The spec names the instances it plans; a run of many trials of them plans them all.
    trials = -(-episodes // len(lines))
    header["spec"]["trials"] = trials
    if instances is not None:
        header["spec"]["instances"] = [data["instance_id"] for data in lines]
    (out / SPEC_FILE).write_text(json.dumps(header, indent=2), encoding="utf-8")
    for name in (TEXTS_FILE, METRICS_FILE):
        if (source / name).exists():
            shutil.copyfile(source / name, out / name)
    if (source / "plots").is_dir():
        shutil.copytree(source / "plots", out / "plots")
    base = sum(len(json.dumps(d, ensure_ascii=False, separators=(",", ":"))) for d in lines)
    pad = 0
    if target_bytes:
        pad = max(0, target_bytes // episodes - base // len(lines))
    offset = 0
    with (
        (out / EPISODES_FILE).open("w", encoding="utf-8") as records,
        (out / INDEX_FILE).open("w", encoding="utf-8") as index_file,
    ):
        for n in range(episodes):
            data = dict(lines[n % len(lines)])
            data["run_id"] = out.name
            data["trial"] = n // len(lines)
            if pad:
                # Texts after the initial observation may be written as edits of it: padded
                # in full form and written again, each keeps its own text.
                data = expand_record(data)
                data["initial_observation"] = data["initial_observation"] + "\n" + "." * pad
                data = compact_record(data)
            line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
            records.write(line)
            length = len(line.encode())
            if index:
                entry = {"offset": offset, "length": length, **episode_summary(data)}
                index_file.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
                index_file.write("\n")
            offset += length
    if not index:
        (out / INDEX_FILE).unlink()
    if (out / METRICS_FILE).exists():
        metrics = json.loads((out / METRICS_FILE).read_text(encoding="utf-8"))
        metrics["run_id"] = out.name
        metrics["episodes"] = {"planned": episodes, "ok": episodes, "errored": 0}
        (out / METRICS_FILE).write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    return {
        "episodes": episodes,
        "episodes_bytes": (out / EPISODES_FILE).stat().st_size,
        "texts_bytes": (out / TEXTS_FILE).stat().st_size if (out / TEXTS_FILE).exists() else 0,
    }
