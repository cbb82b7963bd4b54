"""The local suite on a real model: per run, episodes, errored, invalid steps per agent call,
calls and tokens per episode, seconds per call, tokens per second and wall time per episode.

    python benchmarks/bench_local_suite.py [--model local/smollm2-135m] [--runs-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from forkingpaths.core.records import RunOptions
from forkingpaths.runner.local_suite import LOCAL_MODEL, local_specs
from forkingpaths.runner.run import execute_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=LOCAL_MODEL)
    parser.add_argument("--runs-dir", type=Path)
    parser.add_argument("--only", help="benchmark names to run, comma-separated (e.g. aut,eeb)")
    args = parser.parse_args()
    runs_dir = args.runs_dir or Path(tempfile.mkdtemp(prefix="local-suite-"))
    header = (
        f"{'benchmark':<16}{'agent':<13}{'options':<26}{'ep':>3}{'err':>4}{'inv/call':>9}"
        f"{'calls/ep':>9}{'tok/ep':>8}{'s/call':>7}{'tok/s':>7}{'s/ep':>7}"
    )
    print(header, flush=True)
    total = time.perf_counter()
    for spec in local_specs(args.model):
        if args.only and spec.benchmark not in args.only.split(","):
            continue
        started = time.perf_counter()
        result = asyncio.run(
            execute_run(
                spec,
                RunOptions(progress=False, concurrency=2),
                runs_dir=runs_dir,
                write_report=False,
            )
        )
        wall = time.perf_counter() - started
        records = list(result.records())
        calls = [c for r in records for s in r.steps for c in s.calls]
        act_calls = [c for r in records for s in r.steps for c in s.calls if c.purpose != "judge"]
        invalid = sum(not s.valid for r in records for s in r.steps)
        tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls)
        out_tokens = sum(c.completion_tokens for c in calls)
        latency = sum(c.latency_s for c in calls)
        errored = sum(r.status == "error" for r in records)
        options = ",".join(f"{k}={v}" for k, v in spec.agent_options.items())[:25]
        n = max(len(records), 1)
        print(
            f"{spec.benchmark:<16}{spec.agent:<13}{options:<26}{len(records):>3}{errored:>4}"
            f"{invalid / max(len(act_calls), 1):>9.2f}{len(calls) / n:>9.1f}{tokens / n:>8.0f}"
            f"{latency / max(len(calls), 1):>7.2f}{out_tokens / max(latency, 1e-9):>7.1f}"
            f"{wall / n:>7.1f}",
            flush=True,
        )
        for record in records:
            if record.status == "error":
                print(f"    error {record.instance_id}: {(record.error or '')[:160]}", flush=True)
    print(f"total {time.perf_counter() - total:.0f} s; runs in {runs_dir}")


if __name__ == "__main__":
    main()
