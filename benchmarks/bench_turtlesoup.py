"""TurtleSoup: model calls per puzzle (Mosaic-Agent vs baseline), prompt tokens per call, and the
wall time of 60 puzzles against the mock server (200 ms latency, concurrency 16), all three
roles (questioner, responder, judge) served over HTTP by scripted policies."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import mock_server_process

from forkingpaths.core.records import ModelOptions, RoleModel, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--split", default="en", help="en = the 60 English puzzles")
    parser.add_argument("--limit", type=int, default=None, help="only the first N puzzles")
    args = parser.parse_args()
    with mock_server_process(latency_ms=args.latency_ms) as base_url:
        options = ModelOptions(base_url=base_url)
        roles = {
            "responder": RoleModel(model="openai-compat/turtlesoup-responder", options=options),
            "judge": RoleModel(model="openai-compat/turtlesoup-judge", options=options),
        }
        print(
            f"{'agent':<9} {'puzzles':>7} {'wall s':>8} {'calls/puzzle':>13} "
            f"{'questioner':>11} {'responder':>10} {'judge':>6} {'prompt tok/call':>16}"
        )
        for agent in ("mosaic", "baseline"):
            spec = RunSpec(
                benchmark="turtlesoup",
                split=args.split,
                agent=agent,
                model="openai-compat/turtlesoup-questioner",
                model_options=options,
                roles=roles,
            )
            if args.limit:
                from forkingpaths.core.registry import make_benchmark

                ids = [i.id for i in make_benchmark("turtlesoup").instances(args.split)]
                spec = spec.model_copy(update={"instances": ids[: args.limit]})
            run_options = RunOptions(
                concurrency=args.concurrency,
                model_concurrency=4 * args.concurrency,
                cache=False,
                progress=False,
            )
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                result = asyncio.run(
                    execute_run(spec, run_options, runs_dir=Path(tmp), write_report=False)
                )
                wall = time.perf_counter() - start
            records = [r for r in result.records() if r.status == "ok"]
            calls = [c for r in records for s in r.steps for c in s.calls]
            by_role: Counter[str] = Counter()
            for call in calls:
                role = (
                    "responder"
                    if call.purpose in ("respond", "key_clue")
                    else "judge"
                    if call.purpose in ("extract", "match", "conclusion")
                    else "questioner"
                )
                by_role[role] += 1
            n = max(1, len(records))
            print(
                f"{agent:<9} {len(records):>7} {wall:>8.1f} {len(calls) / n:>13.1f} "
                f"{by_role['questioner'] / n:>11.1f} {by_role['responder'] / n:>10.1f} "
                f"{by_role['judge'] / n:>6.1f} "
                f"{statistics.fmean(c.prompt_tokens for c in calls) if calls else 0:>16.0f}"
            )


if __name__ == "__main__":
    main()
