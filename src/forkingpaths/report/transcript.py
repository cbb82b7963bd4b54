"""Transcripts in the terminal: a run's episodes, an episode's steps, a step's model calls."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, RunHeader, StepRecord


def find_episode(entries: Sequence[Mapping[str, Any]], episode: str) -> int:
    """The number of an episode in the run's list (`EpisodeIndex.entries`: its summaries) by
    its number (`3`), its instance id (trial 0) or `INSTANCE#TRIAL`; a miss names what the run
    holds."""
    if not entries:
        raise ConfigError("EPISODE: the run has no episodes yet")
    if episode.isascii() and episode.isdecimal():
        index = int(episode)
        if index < len(entries):
            return index
        raise ConfigError(
            f"EPISODE: the run has {len(entries)} episodes, numbered 0..{len(entries) - 1}; "
            f"got {episode}"
        )
    instance, _, trial = episode.partition("#")
    if trial and not (trial.isascii() and trial.isdecimal()):
        raise ConfigError(f"EPISODE: read INSTANCE#TRIAL with a trial number, got {episode!r}")
    for index, entry in enumerate(entries):
        if entry["instance_id"] == instance and entry["trial"] == int(trial or 0):
            return index
    examples = ", ".join(entry["instance_id"] for entry in entries[:5])
    raise ConfigError(
        f"EPISODE: no episode {episode!r} in this run; give a number 0..{len(entries) - 1} or an "
        f"instance id (e.g. {examples})"
    )


def episodes_table(header: RunHeader, entries: Sequence[Mapping[str, Any]]) -> RenderableType:
    """One row per episode, from its summary (`EpisodeIndex.entries`): its number, instance,
    trial, status, steps, calls, tokens and first outcomes."""
    spec = header.spec
    table = Table(
        title=f"{header.run_id} · {spec.benchmark} · agent {spec.agent} · model {spec.model}",
        title_justify="left",
    )
    for column in ("#", "instance", "trial", "status", "steps", "calls", "tokens", "outcome"):
        table.add_column(column, overflow="fold")
    for index, entry in enumerate(entries):
        outcome = ", ".join(f"{k}={_short(v)}" for k, v in list(entry["outcome"].items())[:3])
        status = entry["status"]
        table.add_row(
            str(index),
            entry["instance_id"],
            str(entry["trial"]),
            status if status == "ok" else f"error: {(entry['error'] or '')[:40]}",
            str(entry["steps"]),
            str(entry["calls"]),
            f"{entry['tokens']:,}",
            outcome,
        )
    return table


def episode_view(index: int, record: EpisodeRecord) -> RenderableType:
    """An episode's timeline: the first observation, then each step's thought, action, feedback
    and one line per model call."""
    parts: list[RenderableType] = [
        Text(
            f"episode {index}: {record.instance_id} trial {record.trial} · seed {record.seed} · "
            f"{record.status} · {len(record.steps)} steps · {record.n_calls} calls · "
            f"${record.cost_usd:.4f}",
            style="bold",
        ),
    ]
    if record.error:
        parts.append(Text(f"error: {record.error}", style="red"))
    parts += [Rule("reset", align="left"), Text(record.initial_observation)]
    for step in record.steps:
        parts += _step_lines(step)
    if record.outcome:
        parts += [Rule("outcome", align="left"), Text(_json(record.outcome))]
    if record.metrics:
        parts += [Rule("metrics", align="left"), Text(_json(record.metrics))]
    return Group(*parts)


def step_view(record: EpisodeRecord, step_index: int, call: int | None = None) -> RenderableType:
    """One step in full: its observation, thought, action, feedback and info, and every model
    call (or only call `call`) with the exact messages sent and the reply."""
    if not 0 <= step_index < len(record.steps):
        raise ConfigError(
            f"--step: episode {record.instance_id} has steps 0..{len(record.steps) - 1}, "
            f"got {step_index}"
        )
    step = record.steps[step_index]
    calls = list(enumerate(step.calls))
    if call is not None:
        if not 0 <= call < len(step.calls):
            raise ConfigError(
                f"--call: step {step_index} has "
                + (f"calls 0..{len(step.calls) - 1}" if step.calls else "no model calls")
                + f", got {call}"
            )
        calls = [calls[call]]
    parts: list[RenderableType] = []
    if call is None:
        parts += [
            Rule(f"step {step.index} · observation", align="left"),
            Text(step.observation),
            *_step_lines(step, calls=False),
        ]
        if step.info:
            parts += [Text("info: ", style="bold") + Text(_json(step.info))]
    for number, model_call in calls:
        parts += _call_lines(step.index, number, model_call)
    return Group(*parts)


def _step_lines(step: StepRecord, *, calls: bool = True) -> list[RenderableType]:
    flags = [] if step.valid else ["INVALID"]
    flags += ["terminated"] * step.terminated + ["truncated"] * step.truncated
    title = f"step {step.index}" + (f" · {' · '.join(flags)}" if flags else "")
    if step.reward:
        title += f" · reward {step.reward:g}"
    lines: list[RenderableType] = [Rule(title, align="left")]
    if step.thought:
        lines.append(Text("thought: ", style="bold") + Text(step.thought))
    lines.append(Text("action: ", style="bold") + Text(step.action))
    lines.append(Text("feedback: ", style="bold") + Text(step.feedback))
    if calls:
        for number, call in enumerate(step.calls):
            lines.append(Text(f"  call {number}: {_call_summary(call)}", style="dim"))
    return lines


def _call_summary(call: ModelCallRecord) -> str:
    where = "cache" if call.cached else f"{call.latency_s:.2f}s, {call.attempts} attempt(s)"
    return (
        f"{call.purpose} · {call.model} · {call.prompt_tokens}+{call.completion_tokens} tokens · "
        f"{where} · ${call.cost_usd:.4f} · {len(call.messages)} messages"
    )


def _call_lines(step: int, number: int, call: ModelCallRecord) -> list[RenderableType]:
    lines: list[RenderableType] = [
        Rule(f"step {step} · call {number} · {call.purpose} · {call.model}", align="left"),
        Text(_call_summary(call), style="dim"),
    ]
    if call.params is not None:
        params = call.params.model_dump(mode="json", exclude_defaults=True)
        lines.append(Text(f"params: {_json(params) if params else '(defaults: temperature 0)'}"))
    if not call.messages:
        lines.append(Text("(no messages recorded: a record older than schema 2)", style="yellow"))
    for message in call.messages:
        lines += [Text(f"[{message.role}]", style="bold cyan"), Text(message.content)]
    finish = f" (finish: {call.finish_reason})" if call.finish_reason else ""
    lines += [Text(f"[reply]{finish}", style="bold green"), Text(call.response)]
    return lines


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= 24 else text[:21] + "..."


def print_paged(console: Console, renderable: RenderableType) -> None:
    """Print through the pager ($PAGER, `less`) when the output is a terminal."""
    if console.is_terminal:
        with console.pager(styles=True):
            console.print(renderable, highlight=False)
    else:
        console.print(renderable, highlight=False)
