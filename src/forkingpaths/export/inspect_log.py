"""A run directory as an Inspect AI eval log: one sample per episode, every model call an event."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.records import (
    EpisodeRecord,
    ModelCallRecord,
    RunHeader,
    RunMetrics,
    RunSpec,
    StepRecord,
)
from forkingpaths.core.registry import benchmark_table, load_entry_point
from forkingpaths.core.version import __version__
from forkingpaths.runner.rundir import RunDirectory, describe_os_error, load_records

if TYPE_CHECKING:
    from inspect_ai.event import Event, ModelEvent
    from inspect_ai.log import EvalLog, EvalPlan, EvalResults, EvalSample, EvalScore, EvalSpec
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )

INSTALL_HINT = "pip install 'forkingpaths[inspect]'"
"""What a user without the extra is told to run."""

SCORER = "forkingpaths"
"""The scorer name the log gives the benchmark's metrics (Inspect names scores by scorer)."""

_STOP_REASONS = {
    "stop": "stop",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
}
"""OpenAI finish reasons as Inspect's stop reasons (anything else is 'unknown')."""

_REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The reasoning efforts Inspect's GenerateConfig accepts; another value stays in metadata."""


def export_inspect(run_dir: Path, out: Path | None = None) -> Path:
    """Write the run in `run_dir` as one Inspect AI eval log and return its path (default
    `RUN_DIR/../<run-id>.eval`; a `.json` `out` writes Inspect's JSON format). Each episode is
    a sample `INSTANCE#TRIAL` whose messages are the agent's last call and its reply, whose
    scores are the episode's numeric metrics and whose events hold every model call of every
    step (the exact messages sent, the reply, tokens, purpose). The run's metrics.json gives
    the results; a run without one (still running, or stopped) is logged as 'started'."""
    _require_inspect()
    from inspect_ai.log import write_eval_log

    run = RunDirectory(Path(run_dir))
    header = run.read_header()
    metrics = run.read_metrics() if run.metrics_path.exists() else None
    target = Path(out) if out is not None else run.path.parent / f"{header.run_id}.eval"
    if target.suffix not in (".eval", ".json"):
        raise ConfigError(
            f"--out {str(target)!r}: Inspect logs end in .eval or .json; got {target.suffix!r}"
        )
    log = build_eval_log(header, metrics, load_records(run.path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_eval_log(log, target)
    except OSError as exc:
        raise ConfigError(
            f"--out {target}: cannot be written ({describe_os_error(exc, target)})"
        ) from exc
    return target


def _require_inspect() -> None:
    """The extra is optional: its absence is one line naming what to install."""
    try:
        import inspect_ai
    except ImportError:
        raise ConfigError(
            f"exporting an Inspect log needs the inspect extra: {INSTALL_HINT}"
        ) from None
    try:
        # The event types this log is made of moved to inspect_ai.event in 0.3.137.
        import inspect_ai.event
    except ImportError:
        found = getattr(inspect_ai, "__version__", "unknown")
        raise ConfigError(
            f"exporting an Inspect log needs inspect_ai >= 0.3.137 (found {found}): "
            f"pip install -U 'forkingpaths[inspect]'"
        ) from None


def build_eval_log(
    header: RunHeader, metrics: RunMetrics | None, records: Sequence[EpisodeRecord]
) -> EvalLog:
    """The EvalLog of a run: its header, its metrics (None while it has none) and its records
    with their calls' messages loaded (`load_records`)."""
    from inspect_ai.log import EvalError, EvalLog, EvalStats

    spec = header.spec
    messages = _MessageCache()
    samples = [_sample(record, spec, messages) for record in records]
    errored = sum(record.status == "error" for record in records)
    if metrics is None or not metrics.complete:
        # A run is resumable until every planned episode has a record: Inspect's "started".
        status, error = "started", None
    elif errored:
        status = "error"
        error = EvalError(
            message=f"{errored} of {metrics.episodes.planned} episodes errored",
            traceback="",
            traceback_ansi="",
        )
    else:
        status, error = "success", None
    calls = [call for record in records for step in record.steps for call in step.calls]
    role_calls = [call for record in records for call in _role_calls(record, spec)]
    finished = [record.finished_at for record in records if record.finished_at]
    return EvalLog(
        status=status,
        eval=_eval_spec(header, records),
        plan=_plan(spec),
        results=None if metrics is None else _results(metrics, _headline_metrics(spec)),
        stats=EvalStats(
            started_at=header.created_at,
            completed_at=max(finished) if finished and status != "started" else "",
            model_usage=_usage_by(calls, lambda call: call.model),
            role_usage=_usage_by(role_calls, lambda call: call.purpose),
        ),
        error=error,
        samples=samples,
    )


def _eval_spec(header: RunHeader, records: Sequence[EpisodeRecord]) -> EvalSpec:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalRevision, EvalSpec
    from inspect_ai.model import ModelConfig

    spec = header.spec
    environment = header.environment
    packages = {name: str(ver) for name, ver in (environment.get("packages") or {}).items() if ver}
    revision = environment.get("git_revision")
    return EvalSpec(
        eval_id=header.run_id,
        run_id=header.run_id,
        created=header.created_at,
        task=spec.benchmark,
        task_id=header.run_id,
        task_args=spec.model_dump(mode="json"),
        task_args_passed=spec.model_dump(mode="json", exclude_defaults=True),
        solver=spec.agent,
        solver_args=dict(spec.agent_options),
        dataset=EvalDataset(
            name=f"{spec.benchmark}:{spec.split}",
            samples=len(records),
            sample_ids=[_sample_id(record) for record in records],
        ),
        model=spec.model or f"none/{spec.agent}",
        model_generate_config=_generate_config(spec.model_options.params),
        model_base_url=spec.model_options.base_url,
        model_roles={
            role: ModelConfig(
                model=ref.model,
                config=_generate_config(ref.options.params),
                base_url=ref.options.base_url,
            )
            for role, ref in spec.roles.items()
        }
        or None,
        config=EvalConfig(),
        revision=EvalRevision(type="git", origin="", commit=revision) if revision else None,
        packages={"forkingpaths": __version__, **packages},
        metadata={"forkingpaths": {"run_id": header.run_id, "environment": environment}},
    )


def _plan(spec: RunSpec) -> EvalPlan:
    from inspect_ai.log import EvalPlan, EvalPlanStep

    return EvalPlan(
        name=spec.agent, steps=[EvalPlanStep(solver=spec.agent, params=dict(spec.agent_options))]
    )


def _headline_metrics(spec: RunSpec) -> tuple[str, ...]:
    """The benchmark's headline metrics, or none where it is no longer installed (a log of an
    old or a plugin's run is still written)."""
    try:
        return tuple(load_entry_point(benchmark_table()[spec.benchmark]).headline_metrics)
    except (KeyError, ImportError, AttributeError, ConfigError):
        return ()


def _results(metrics: RunMetrics, headline: Sequence[str]) -> EvalResults:
    """The benchmark's run-level metrics as Inspect scores: the numeric ones over all episodes,
    then one score per group where the benchmark reports groups; everything else (text,
    nested values, usage) rides in the results' metadata. The headline metrics come first:
    Inspect's log listing shows the first metric of the first score."""
    from inspect_ai.log import EvalResults

    values = dict(metrics.metrics)
    groups = values.pop("by_group", None)
    scores = [_eval_score(SCORER, values, metrics, headline)]
    if isinstance(groups, dict):
        scores += [
            _eval_score(f"{SCORER}/{group}", group_values, metrics, headline)
            for group, group_values in groups.items()
            if isinstance(group_values, dict)
        ]
    return EvalResults(
        total_samples=metrics.episodes.planned,
        completed_samples=metrics.episodes.ok,
        scores=scores,
        metadata={
            "metrics": metrics.metrics,
            "usage": metrics.usage.model_dump(mode="json"),
            "calls_by_purpose": {k: v.model_dump() for k, v in metrics.calls_by_purpose.items()},
            "invalid_step_rate": metrics.invalid_step_rate,
            "episodes": metrics.episodes.model_dump(),
            "errors": [error.model_dump() for error in metrics.errors],
        },
    )


def _eval_score(
    name: str, values: dict[str, Any], metrics: RunMetrics, headline: Sequence[str]
) -> EvalScore:
    from inspect_ai.log import EvalMetric, EvalScore

    first = {key: values[key] for key in headline if key in values}
    values = {**first, **values}
    return EvalScore(
        name=name,
        scorer=SCORER,
        scored_samples=metrics.episodes.ok,
        unscored_samples=metrics.episodes.errored,
        metrics={
            key: EvalMetric(name=key, value=value)
            for key, value in values.items()
            if _is_number(value)
        },
    )


def _sample(record: EpisodeRecord, spec: RunSpec, messages: _MessageCache) -> EvalSample:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    last = _last_agent_call(record, spec)
    if last is not None:
        conversation = [*messages.convert(last.messages), messages.reply(last)]
        output = _model_output(last, messages)
    else:
        # An agent without a model: its conversation with the env is the steps themselves.
        conversation = _step_transcript(record, messages)
        output = ModelOutput.from_content(
            model=f"none/{record.agent}", content=record.steps[-1].action if record.steps else ""
        )
    calls = [call for step in record.steps for call in step.calls]
    return EvalSample(
        id=_sample_id(record),
        epoch=1,
        input=record.initial_observation,
        target="",
        messages=conversation,
        output=output,
        scores={
            name: Score(value=value) for name, value in record.metrics.items() if _is_number(value)
        }
        or None,
        metadata=_sample_metadata(record),
        events=_events(record, spec, messages),
        model_usage=_usage_by(calls, lambda call: call.model),
        role_usage=_usage_by(_role_calls(record, spec), lambda call: call.purpose),
        started_at=record.started_at,
        completed_at=record.finished_at or None,
        total_time=record.duration_s,
        working_time=record.duration_s,
        error=EvalError(message=record.error or "error", traceback="", traceback_ansi="")
        if record.status == "error"
        else None,
    )


def _sample_id(record: EpisodeRecord) -> str:
    # The same key the CLI's transcript command takes (INSTANCE#TRIAL).
    return f"{record.instance_id}#{record.trial}"


def _sample_metadata(record: EpisodeRecord) -> dict[str, Any]:
    steps = record.steps
    return {
        "run_id": record.run_id,
        "benchmark": record.benchmark,
        "split": record.split,
        "instance_id": record.instance_id,
        "trial": record.trial,
        "seed": record.seed,
        "agent": record.agent,
        "agent_options": record.agent_options,
        "model": record.model,
        "status": record.status,
        "outcome": record.outcome,
        "metrics": record.metrics,
        "initial_info": record.initial_info,
        "steps": {
            "count": len(steps),
            "invalid": sum(not step.valid for step in steps),
            "reward": sum(step.reward for step in steps),
            "terminated": bool(steps and steps[-1].terminated),
            "truncated": bool(steps and steps[-1].truncated),
            "actions": [step.action for step in steps],
        },
        "n_calls": record.n_calls,
        "n_cached": record.n_cached,
        "cost_usd": record.cost_usd,
        "agent_state": record.agent_state,
    }


def _is_agent_call(call: ModelCallRecord, record: EpisodeRecord, spec: RunSpec) -> bool:
    """Calls to the agent's model are the agent's; a protocol role played by the same model id
    is told apart only where the call's purpose names the role (as escape's `judge` does)."""
    return (
        record.model is not None and call.model == record.model and call.purpose not in spec.roles
    )


def _role_calls(record: EpisodeRecord, spec: RunSpec) -> list[ModelCallRecord]:
    """The calls the protocol made (a judge, a responder), by the purpose they name."""
    return [
        call
        for step in record.steps
        for call in step.calls
        if not _is_agent_call(call, record, spec)
    ]


def _last_agent_call(record: EpisodeRecord, spec: RunSpec) -> ModelCallRecord | None:
    for step in reversed(record.steps):
        for call in reversed(step.calls):
            if _is_agent_call(call, record, spec):
                return call
    return None


def _step_transcript(record: EpisodeRecord, messages: _MessageCache) -> list[ChatMessage]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    out: list[ChatMessage] = [messages.user(record.initial_observation)]
    for step in record.steps:
        out.append(ChatMessageAssistant(content=step.action, source="generate"))
        out.append(ChatMessageUser(content=step.feedback))
    return out


def _events(record: EpisodeRecord, spec: RunSpec, messages: _MessageCache) -> list[Event]:
    """One span per step holding its model calls (in the order made: the agent's, then the
    protocol's) and an info event with what the step did."""
    from inspect_ai.event import InfoEvent, SpanBeginEvent, SpanEndEvent

    stamp = _timestamp(record.started_at)
    events: list[Event] = []
    for step in record.steps:
        span = f"step-{step.index}"
        events.append(
            SpanBeginEvent(id=span, name=f"step {step.index}", type="step", timestamp=stamp)
        )
        for number, call in enumerate(step.calls):
            events.append(_model_event(call, step, number, record, spec, messages, span, stamp))
        events.append(
            InfoEvent(source="forkingpaths", data=_step_data(step), span_id=span, timestamp=stamp)
        )
        events.append(SpanEndEvent(id=span, span_id=span, timestamp=stamp))
    return events


def _step_data(step: StepRecord) -> dict[str, Any]:
    return {
        "step": step.index,
        "thought": step.thought,
        "action": step.action,
        "feedback": step.feedback,
        "reward": step.reward,
        "valid": step.valid,
        "terminated": step.terminated,
        "truncated": step.truncated,
        "info": step.info,
    }


def _model_event(
    call: ModelCallRecord,
    step: StepRecord,
    number: int,
    record: EpisodeRecord,
    spec: RunSpec,
    messages: _MessageCache,
    span: str,
    stamp: datetime,
) -> ModelEvent:
    from inspect_ai.event import ModelEvent

    agent_call = _is_agent_call(call, record, spec)
    return ModelEvent(
        model=call.model,
        role=None if agent_call else call.purpose,
        input=messages.convert(call.messages),
        tools=[],
        tool_choice="none",
        config=_generate_config(call.params),
        output=_model_output(call, messages),
        retries=max(call.attempts - 1, 0),
        cache="read" if call.cached else None,
        working_time=call.latency_s,
        span_id=span,
        timestamp=stamp,
        metadata={
            "purpose": call.purpose,
            "agent": agent_call,
            "step": step.index,
            "call": number,
            "latency_s": call.latency_s,
            "cost_usd": call.cost_usd,
            "attempts": call.attempts,
            "finish_reason": call.finish_reason,
            "params": None if call.params is None else call.params.model_dump(mode="json"),
        },
    )


def _model_output(call: ModelCallRecord, messages: _MessageCache) -> ModelOutput:
    from inspect_ai.model import ChatCompletionChoice, ModelOutput

    return ModelOutput(
        model=call.model,
        choices=[
            ChatCompletionChoice(
                message=messages.reply(call),
                stop_reason=_STOP_REASONS.get(call.finish_reason or "stop", "unknown"),
            )
        ],
        usage=_usage(call),
        time=call.latency_s,
    )


def _generate_config(params: ModelParams | None) -> GenerateConfig:
    from inspect_ai.model import GenerateConfig

    if params is None:
        return GenerateConfig()
    effort = params.reasoning_effort if params.reasoning_effort in _REASONING_EFFORTS else None
    return GenerateConfig(
        temperature=params.temperature,
        max_tokens=params.max_tokens,
        top_p=params.top_p,
        seed=params.seed,
        reasoning_effort=effort,
        extra_body=dict(params.extra) or None,
    )


def _usage(call: ModelCallRecord) -> ModelUsage:
    from inspect_ai.model import ModelUsage

    return ModelUsage(
        input_tokens=call.prompt_tokens,
        output_tokens=call.completion_tokens,
        total_tokens=call.prompt_tokens + call.completion_tokens,
        reasoning_tokens=call.reasoning_tokens or None,
        total_cost=call.cost_usd,
    )


def _usage_by(
    calls: Iterable[ModelCallRecord], key: Callable[[ModelCallRecord], str]
) -> dict[str, ModelUsage]:
    from inspect_ai.model import ModelUsage

    totals: dict[str, ModelUsage] = {}
    for call in calls:
        name = key(call)
        totals[name] = totals.get(name, ModelUsage(total_cost=0.0)) + _usage(call)
    return totals


def _is_number(value: Any) -> bool:
    # NaN and infinities have no JSON form, and a score Inspect averages must be finite.
    return isinstance(value, bool | int | float) and math.isfinite(value)


def _timestamp(iso: str) -> datetime:
    try:
        return datetime.fromisoformat(iso)
    except ValueError as exc:
        raise InvalidFile(f"episode started_at {iso!r}: not an ISO time") from exc


class _MessageCache:
    """Our messages as Inspect's, one object per distinct message: a history that later calls
    repeat is one set of objects, with the same ids in every call that sends it."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], ChatMessage] = {}

    def convert(self, messages: Iterable[Message]) -> list[ChatMessage]:
        return [self._get(message.role, message.content) for message in messages]

    def user(self, text: str) -> ChatMessage:
        return self._get("user", text)

    def reply(self, call: ModelCallRecord) -> ChatMessageAssistant:
        from inspect_ai.model import ChatMessageAssistant

        # A reply is not cached: it names the model that gave it.
        return ChatMessageAssistant(content=call.response, model=call.model, source="generate")

    def _get(self, role: str, content: str) -> ChatMessage:
        from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

        key = (role, content)
        if key not in self._known:
            kind = {
                "system": ChatMessageSystem,
                "user": ChatMessageUser,
                "assistant": ChatMessageAssistant,
            }[role]
            self._known[key] = kind(content=content)
        return self._known[key]
