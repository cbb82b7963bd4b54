"""The local suite's short version: one run of each benchmark's LLM agents on SmolLM2 through
llama.cpp's server, every role model local too; nothing errors, every call keeps its request."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.doubles import needs_local_model

from forkingpaths.core.records import RunOptions
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.local_suite import LOCAL_RUNS, local_specs
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import load_records

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.slow,
    needs_local_model,
]


def test_every_benchmark_of_the_suite_is_a_known_llm_agent() -> None:
    for run in LOCAL_RUNS:
        bench = make_benchmark(run.benchmark, **run.benchmark_options)
        assert bench.agent_spec(run.agent).needs_model, (run.benchmark, run.agent)
        assert set(run.roles) <= set(bench.model_roles)


@pytest.mark.parametrize("benchmark", ["griddag", "escape", "turtlesoup", "aut", "creativebench"])
async def test_short_local_run_completes_with_transcripts(benchmark: str, tmp_path: Path) -> None:
    spec = next(s for s in local_specs() if s.benchmark == benchmark)
    spec = spec.model_copy(update={"instances": spec.instances[:1]})
    result = await execute_run(
        spec, RunOptions(progress=False, cache=False), runs_dir=tmp_path, write_report=False
    )
    assert result.metrics["episodes"] == {"planned": 1, "ok": 1, "errored": 0}
    (record,) = load_records(result.run_dir.path)
    calls = [c for s in record.steps for c in s.calls]
    assert calls and all(c.model == "local/smollm2-135m" for c in calls)
    assert all(c.messages and c.params is not None and c.params.max_tokens for c in calls)
    assert record.cost_usd == 0.0
