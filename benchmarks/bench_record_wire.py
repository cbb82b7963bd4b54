"""A record between processes (a Ray worker to the driver): bytes and CPU per episode of the
full JSON dump (`model_dump_json` / `model_validate_json`, what was sent before) against
`record_to_wire` / `record_from_wire`, side by side, on real records of the LLM agents of the
small quick suite (scripted models, so no network), played here first. Interleaved rounds,
medians of CPU time."""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from forkingpaths.core.records import (
    EpisodeRecord,
    RunOptions,
    record_from_wire,
    record_to_wire,
)
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import load_records

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.web.runs import small_quick_specs


def played_records(trials: int) -> dict[str, list[EpisodeRecord]]:
    """Records (messages whole) of every quick-suite spec that calls a model, by its name."""
    out: dict[str, list[EpisodeRecord]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in small_quick_specs():
            if spec.model is None:
                continue
            spec = spec.model_copy(update={"trials": trials})
            options = RunOptions(progress=False, cache=False)
            result = asyncio.run(execute_run(spec, options, runs_dir=Path(tmp), write_report=False))
            out[f"{spec.benchmark} {spec.agent}"] = load_records(result.run_dir.path)
    return out


def cpu_per_episode(records: list[EpisodeRecord], wire: bool) -> tuple[float, float]:
    """CPU seconds per episode to encode every record (the worker's part) and to decode it
    (the driver's)."""
    start = time.process_time()
    texts = [record_to_wire(r) if wire else r.model_dump_json() for r in records]
    encoded = time.process_time()
    for text in texts:
        record_from_wire(text) if wire else EpisodeRecord.model_validate_json(text)
    decoded = time.process_time()
    return (encoded - start) / len(records), (decoded - encoded) / len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    runs = played_records(args.trials)
    print("per episode: KiB sent; ms of CPU to encode (in the worker) and decode (in the driver)")
    print(
        f"{'run':<26} {'full KiB':>9} {'wire KiB':>9} {'ratio':>6}"
        f" {'encode full':>12} {'wire':>6} {'decode full':>12} {'wire':>6} {'ratio':>6}"
    )
    for name, records in runs.items():
        full = statistics.mean(len(r.model_dump_json().encode()) for r in records) / 1024
        wire = statistics.mean(len(record_to_wire(r).encode()) for r in records) / 1024
        times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for n in range(args.rounds):
            for side in (False, True) if n % 2 == 0 else (True, False):
                times[side].append(cpu_per_episode(records, side))
        enc = {side: statistics.median(t[0] for t in v) * 1e3 for side, v in times.items()}
        dec = {side: statistics.median(t[1] for t in v) * 1e3 for side, v in times.items()}
        print(
            f"{name:<26} {full:9.1f} {wire:9.1f} {full / wire:5.1f}x"
            f" {enc[False]:12.2f} {enc[True]:6.2f} {dec[False]:12.2f} {dec[True]:6.2f}"
            f" {dec[False] / dec[True]:5.2f}x"
        )


if __name__ == "__main__":
    main()
