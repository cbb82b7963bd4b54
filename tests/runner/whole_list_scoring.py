"""The run scoring as it was before it streamed (every record in memory, each benchmark's
aggregate over the records), frozen here as the reference the streaming scoring must equal."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from forkingpaths.benchmarks.creativebench.averaging import subset_summary
from forkingpaths.benchmarks.creativebench.env import NO_JUDGE, SUBSETS
from forkingpaths.benchmarks.escape.aut import _mean as aut_mean
from forkingpaths.benchmarks.escape.aut import _run_scores, _sample_std
from forkingpaths.benchmarks.escape.aut_judge import AUT_CRITERIA
from forkingpaths.benchmarks.escape.judge import CRITERIA
from forkingpaths.benchmarks.turtlesoup.benchmark import SCORES
from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.records import (
    CallStats,
    CallTiming,
    EpisodeCounts,
    EpisodeError,
    EpisodeRecord,
    ModelCallRecord,
    RunHeader,
    RunMetrics,
    RunTiming,
    UsageTotals,
)


def summarize(
    header: RunHeader, benchmark: Benchmark, records: Sequence[EpisodeRecord], planned: int
) -> RunMetrics:
    ok = [r for r in records if r.status == "ok"]
    errored = [r for r in records if r.status == "error"]
    durations = [r.duration_s for r in records]
    by_purpose = _calls_by_purpose(records)
    spec = header.spec
    return RunMetrics(
        run_id=header.run_id,
        benchmark=benchmark.id,
        split=spec.split,
        agent=spec.agent,
        agent_options=spec.agent_options,
        model=spec.model,
        complete=len(records) >= planned,
        episodes=EpisodeCounts(planned=planned, ok=len(ok), errored=len(errored)),
        metrics=aggregate(benchmark, ok) if ok else {},
        usage=UsageTotals(
            calls=sum(r.n_calls for r in records),
            cached_calls=sum(r.n_cached for r in records),
            prompt_tokens=sum(r.usage.prompt_tokens for r in records),
            completion_tokens=sum(r.usage.completion_tokens for r in records),
            reasoning_tokens=sum(r.usage.reasoning_tokens for r in records),
            cost_usd=round(sum(r.cost_usd for r in records), 6),
        ),
        calls_by_purpose=_call_stats(by_purpose, len(records)),
        invalid_step_rate=_invalid_step_rate(records),
        timing=RunTiming(
            episode_seconds_mean=round(statistics.fmean(durations), 4) if durations else None,
            episode_seconds_total=round(sum(durations), 4),
            calls_by_purpose=_call_timing(by_purpose),
        ),
        errors=[
            EpisodeError(instance_id=r.instance_id, trial=r.trial, error=(r.error or "")[:500])
            for r in errored
        ],
    )


def _calls_by_purpose(records: Sequence[EpisodeRecord]) -> dict[str, list[ModelCallRecord]]:
    calls: dict[str, list[ModelCallRecord]] = {}
    for record in records:
        for step in record.steps:
            for call in step.calls:
                calls.setdefault(call.purpose, []).append(call)
    return dict(sorted(calls.items()))


def _call_stats(by_purpose: dict[str, list[ModelCallRecord]], episodes: int) -> dict[str, Any]:
    episodes = max(episodes, 1)
    return {
        purpose: CallStats(
            calls=len(group),
            calls_per_episode=round(len(group) / episodes, 4),
            tokens_per_episode=round(
                sum(c.prompt_tokens + c.completion_tokens for c in group) / episodes, 2
            ),
            empty_replies=sum(not c.response.strip() for c in group),
        )
        for purpose, group in by_purpose.items()
    }


def _call_timing(by_purpose: dict[str, list[ModelCallRecord]]) -> dict[str, Any]:
    out = {}
    for purpose, group in by_purpose.items():
        timed = [c for c in group if not c.cached]
        latency = sum(c.latency_s for c in timed)
        out[purpose] = CallTiming(
            seconds_per_call=round(latency / len(timed), 4) if timed else 0.0,
            tokens_per_second=(
                round(sum(c.completion_tokens for c in timed) / latency, 2) if latency else None
            ),
        )
    return out


def _invalid_step_rate(records: Sequence[EpisodeRecord]) -> float | None:
    steps = [s for r in records for s in r.steps]
    return round(sum(not s.valid for s in steps) / len(steps), 4) if steps else None


def aggregate(benchmark: Benchmark, records: list[EpisodeRecord]) -> dict[str, Any]:
    """The benchmark's aggregate as it read the records. griddag's and eeb's read only the
    records' metrics and instance ids, which a record has like a scored episode."""
    name = benchmark.id.rsplit("-v", 1)[0]
    if name == "escape":
        return _escape(benchmark, records)
    if name == "aut":
        return _aut(records)
    if name == "turtlesoup":
        return _turtlesoup(records)
    if name == "creativebench":
        return _creativebench(benchmark, records)
    return benchmark.aggregate(records)  # type: ignore[arg-type]


# ---- escape: metrics.py and EscapeBenchmark.aggregate over records ----


def _counted_paths(record: EpisodeRecord, include_extra: bool) -> tuple[list[str], list[str]]:
    extra = set() if include_extra else set(record.outcome.get("paths_extra", []))
    found = [p for p in record.outcome.get("paths_found", []) if p not in extra]
    total = [p for p in record.outcome.get("paths_total", []) if p not in extra]
    return found, total


def _path_discovery(records: Sequence[EpisodeRecord], include_extra: bool) -> dict[str, Any]:
    found = total = extra_found = extra_total = 0
    for r in records:
        f, t = _counted_paths(r, include_extra)
        found, total = found + len(f), total + len(t)
        extra = set(r.outcome.get("paths_extra", []))
        extra_found += len(extra.intersection(r.outcome.get("paths_found", [])))
        extra_total += len(extra)
    return {
        "paths_found": found,
        "paths_total": total,
        "path_discovery": found / total if total else None,
        "extra_paths_found": extra_found,
        "extra_paths_total": extra_total,
    }


def _path_table(records: Sequence[EpisodeRecord]) -> dict[str, str]:
    if not records:
        return {}
    return {
        path_id: "O" if any(path_id in r.outcome.get("paths_found", []) for r in records) else "X"
        for path_id in records[0].outcome.get("paths_total", [])
    }


def _attempt_steps(records: Sequence[EpisodeRecord]) -> list[int]:
    return [a["steps"] for r in records for a in r.outcome.get("attempts", [])]


def _divergence_momentum(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    scores: dict[str, list[float]] = {c: [] for c in CRITERIA}
    judged = missing = 0
    for record in records:
        for step in record.steps:
            verdict = step.info.get("judge")
            if verdict is None:
                continue
            if "missing" in verdict:
                missing += 1
                continue
            judged += 1
            for criterion in CRITERIA:
                scores[criterion].append(float(verdict[criterion]))
    out: dict[str, Any] = {c: (statistics.fmean(v) if v else None) for c, v in scores.items()}
    out["judged_steps"] = judged
    out["judge_missing"] = missing
    return out


def _escape(bench: Any, records: list[EpisodeRecord]) -> dict[str, Any]:
    ok = [r for r in records if r.status == "ok"]
    extra = bench.config.extra_paths
    discovery = _path_discovery(ok, extra)
    found, total = discovery["paths_found"], discovery["paths_total"]
    steps = _attempt_steps(ok)
    out: dict[str, Any] = {
        "episodes": len(records),
        "errored": len(records) - len(ok),
        **discovery,
        "path_discovery_text": f"{found} / {total} ({100 * found / total:.1f}%)" if total else "-",
        "avg_steps": statistics.fmean(steps) if steps else None,
        "escapes": sum(r.outcome.get("escapes", 0) for r in ok),
    }
    out.update(_divergence_momentum(ok))
    trials = sorted({r.trial for r in ok})
    if len(trials) > 1:
        per_trial = [[r for r in ok if r.trial == t] for t in trials]
        out["path_discovery_std"] = statistics.stdev(
            _path_discovery(rs, extra)["path_discovery"] or 0.0 for rs in per_trial
        )
        out["avg_steps_std"] = statistics.stdev(
            statistics.fmean(_attempt_steps(rs)) for rs in per_trial
        )
        for criterion in CRITERIA:
            values = [_divergence_momentum(rs)[criterion] for rs in per_trial]
            values = [v for v in values if v is not None]
            if len(values) > 1:
                out[f"{criterion}_std"] = statistics.stdev(values)
    groups: dict[str, dict[str, Any]] = {}
    by_scenario: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in ok:
        by_scenario[r.instance_id].append(r)
    for scenario, rs in by_scenario.items():
        groups[scenario] = {
            "paths_found": statistics.fmean(len(_counted_paths(r, extra)[0]) for r in rs),
            "paths_total": len(_counted_paths(rs[0], extra)[1]),
            "extra_paths_found": statistics.fmean(
                len(set(r.outcome.get("paths_extra", [])) & set(r.outcome.get("paths_found", [])))
                for r in rs
            ),
            "avg_steps": statistics.fmean(_attempt_steps(rs)),
            **_path_table(rs),
        }
    out["by_group"] = groups
    return out


# ---- aut ----


def _aut(records: list[EpisodeRecord]) -> dict[str, Any]:
    ok = [r for r in records if r.status == "ok"]
    by_run: dict[int, list[dict[str, Any]]] = {}
    for record in ok:
        for step in record.steps:
            run = _run_scores(step)
            by_run.setdefault(run["run"], []).append(run)
    table = []
    for index in sorted(by_run):
        runs = by_run[index]
        rated = [s for run in runs for s in run["scores"]]
        table.append(
            {
                "run": index,
                "objects": len(runs),
                "fluency": aut_mean([run["fluency"] for run in runs]),
                **{c: aut_mean([s[c] for s in rated]) for c in AUT_CRITERIA},
                "rated_uses": len(rated),
            }
        )
    out: dict[str, Any] = {}
    for metric in ("originality", "elaboration", "fluency"):
        values = [row[metric] for row in table if row[metric] is not None]
        out[metric] = aut_mean(values)
        out[f"{metric}_std"] = _sample_std(values)
    runs_all = [run for runs in by_run.values() for run in runs]
    out.update(
        {
            "objects": len(ok),
            "errored": len(records) - len(ok),
            "runs": len(table),
            "judged": any(run["judged"] for run in runs_all),
            "rated_uses": sum(len(run["scores"]) for run in runs_all),
            "judge_missing": sum(run["missing"] for run in runs_all),
            "by_run": table,
        }
    )
    return out


# ---- turtlesoup ----


def _ts_means(records: list[EpisodeRecord]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for score in SCORES:
        values = [r.metrics[score] for r in records if r.metrics.get(score) is not None]
        out[score] = statistics.fmean(values) if values else None
    out["n"] = len(records)
    out["n_scored"] = sum(r.metrics.get("overall") is not None for r in records)
    out["n_unscored"] = out["n"] - out["n_scored"]
    return out


def _turtlesoup(records: list[EpisodeRecord]) -> dict[str, Any]:
    ok = [r for r in records if r.status == "ok"]
    out: dict[str, Any] = {"episodes": len(records), "errored": len(records) - len(ok)}
    out.update(_ts_means(ok))
    for field in ("key_clues_hit", "repeated_questions", "invalid_questions", "turns"):
        values = [r.metrics.get(field, 0) for r in ok]
        out[f"mean_{field}"] = statistics.fmean(values) if values else None
    out["responder_failures"] = sum(r.metrics.get("responder_failures", 0) for r in ok)
    out["unscored_points"] = sum(r.metrics.get("unscored_points", 0) or 0 for r in ok)
    out["judged_episodes"] = sum(bool(r.metrics.get("judged")) for r in ok)
    groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in ok:
        category = record.initial_info.get("category", "?")
        language = record.initial_info.get("language", "?")
        groups[f"{category} / {language}"].append(record)
        groups[f"all / {language}"].append(record)
    out["by_group"] = {name: _ts_means(rs) for name, rs in sorted(groups.items())}
    return out


# ---- creativebench ----


def _creativebench(bench: Any, records: list[EpisodeRecord]) -> dict[str, Any]:
    ok = [r for r in records if r.status == "ok"]
    out: dict[str, Any] = {"episodes": len(records), "errored": len(records) - len(ok)}
    groups: dict[str, dict[str, Any]] = {}
    for subset in SUBSETS:
        subset_records = [r for r in ok if r.initial_info.get("subset") == subset]
        if not subset_records:
            continue
        summary = subset_summary(subset_records, bench.config.explore_averaging)
        for key, value in summary.items():
            out[f"{subset}_{key}"] = value
        groups[subset] = summary
    isolation = {s.info.get("isolation") for r in ok for s in r.steps} - {None}
    out["isolation"] = ", ".join(sorted(isolation)) or None
    explore = [r for r in ok if r.initial_info.get("subset") == "explore"]
    judges = {str(r.initial_info.get("judge") or NO_JUDGE) for r in explore}
    out["judge"] = ", ".join(sorted(judges)) or NO_JUDGE
    embeddings = {str(r.initial_info.get("embedding") or "none") for r in records}
    out["embedding"] = ", ".join(sorted(embeddings)) or None
    out["explore_averaging"] = bench.config.explore_averaging
    out["by_group"] = groups
    return out
