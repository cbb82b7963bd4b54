"""The AUT agents (App. D.6): Base lists every use in one call; ReDNA diverges, then narrows."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.aut_env import dedupe_uses
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance, check_options
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import json_values

DEFAULT_TEMPERATURE = 0.7
"""Agents' sampling temperature (App. D.6)."""

_TEXT_KEYS = ("use", "text", "idea", "description")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\(\d+\))\s+(.+?)\s*$")


class Sampling(BaseModel):
    """The options of both AUT agents: how they sample their model (App. D.6)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(
        default=DEFAULT_TEMPERATURE,
        strict=True,
        ge=0,
        allow_inf_nan=False,
        description="sampling temperature, App. D.6: 0.7; a number >= 0",
    )
    """Sampling temperature of every agent call (App. D.6: T = 0.7)."""
    max_tokens: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        description="completion token cap; an integer >= 1",
    )
    """Completion token cap of every agent call (None: the model's own)."""

    @field_validator("temperature", mode="before")
    @classmethod
    def _number_text(cls, value: Any) -> Any:
        # A Python caller may spell the number as text (the command line gives YAML numbers);
        # anything else goes on to the strict check, which refuses a bool.
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
        return value

    @field_validator("max_tokens", mode="before")
    @classmethod
    def _whole_number_text(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value

    @property
    def params(self) -> ModelParams:
        extra = {"max_tokens": self.max_tokens} if self.max_tokens else {}
        return ModelParams(temperature=self.temperature, **extra)


# ---- reading uses ----


def _text_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        lowered = {str(k).lower(): v for k, v in item.items()}
        for key in _TEXT_KEYS:
            if isinstance(lowered.get(key), str):
                return lowered[key]
    return None


def parse_uses(text: str) -> list[str]:
    """The uses in a model's reply: the first JSON list of strings (or of objects with a
    `use`/`text`/`idea`/`description` string) anywhere in it, else its numbered or bulleted lines;
    whitespace folded, empty and repeated (case-insensitive) uses dropped.

    >>> parse_uses('Here: ["a doorstop", "A  doorstop", "a pendulum"]')
    ['a doorstop', 'a pendulum']
    >>> parse_uses("1. a doorstop\\n2) a pendulum")
    ['a doorstop', 'a pendulum']
    """
    for value in json_values(text):
        if isinstance(value, list) and value:
            texts = [_text_of(item) for item in value]
            if all(t is not None for t in texts):
                return dedupe_uses([t for t in texts if t is not None])
    return dedupe_uses([m.group(1) for line in text.splitlines() if (m := _LIST_ITEM.match(line))])


def _prose_before_answer(text: str) -> str:
    """A reply's words before its list (a fence or a `[`), as the run's thought."""
    cut = min((i for i in (text.find("```"), text.find("[")) if i >= 0), default=-1)
    return text[:cut].strip() if cut >= 0 else ""


def _object_line(observation: Observation) -> str:
    data = observation.data
    return prompts.OBJECT_LINE.substitute(
        name=data.get("object", ""), description=data.get("description", "")
    )


def _listing(items: Sequence[str]) -> str:
    return "\n".join(prompts.LIST_LINE.substitute(text=t) for t in items) or prompts.NOTHING


# ---- agents ----


class _AUTAgent:
    """What both AUT agents share: one model, its sampling parameters, no state of their own."""

    def __init__(self, model: ChatModel, sampling: Sampling | None = None) -> None:
        self.model = model
        self.sampling = sampling or Sampling()
        self.params = self.sampling.params

    def state(self) -> dict[str, Any]:
        return {}


class AUTBaseAgent(_AUTAgent):
    """Base (App. D.6): one call per run produces all the uses; earlier runs are not shown."""

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget: every run is answered from the task alone."""

    async def act(self, observation: Observation) -> Decision:
        messages = [Message(role="user", content=observation.text)]
        completion = await self.model.complete(messages, self.params)
        uses = parse_uses(completion.text)
        return Decision(
            action=json.dumps(uses),
            thought=_prose_before_answer(completion.text),
            calls=[ModelCallRecord.from_completion(completion, purpose="act")],
        )


class AUTReDNAAgent(_AUTAgent):
    """ReDNA on the AUT (§5.3, App. D.6): a Diverge call conditioned only on the object proposes
    candidate uses; a Narrowing call, given the creativity criterion and the uses of the earlier
    runs of the episode (`observation.data["memory"]`), selects and elaborates them."""

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget: the memory of earlier runs comes with each observation."""

    async def act(self, observation: Observation) -> Decision:
        line = _object_line(observation)
        diverge = await self.model.complete(
            [Message(role="user", content=prompts.DIVERGE.substitute(object_line=line))],
            self.params,
        )
        candidates = parse_uses(diverge.text)
        memory = [str(u) for u in observation.data.get("memory", [])]
        narrow_prompt = prompts.NARROW.substitute(
            object_line=line, candidates=_listing(candidates), memory=_listing(memory)
        )
        narrow = await self.model.complete(
            [Message(role="user", content=narrow_prompt)], self.params
        )
        uses = parse_uses(narrow.text)
        thought = f"Diverge proposed {len(candidates)} candidates: " + (
            "; ".join(candidates) or "none"
        )
        return Decision(
            action=json.dumps(uses),
            thought=thought,
            calls=[
                ModelCallRecord.from_completion(diverge, purpose="diverge"),
                ModelCallRecord.from_completion(narrow, purpose="narrow"),
            ],
        )


def _sampling(agent: str, temperature: Any, max_tokens: Any) -> Sampling:
    options = {"temperature": temperature, "max_tokens": max_tokens}
    return cast(Sampling, check_options(Sampling, options, f"agent {agent!r}"))


def make_aut_base(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int | None = None,
) -> AUTBaseAgent:
    """Factory of the `base` agent."""
    return AUTBaseAgent(require_model(model, "base"), _sampling("base", temperature, max_tokens))


def make_aut_redna(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int | None = None,
) -> AUTReDNAAgent:
    """Factory of the `redna` agent."""
    return AUTReDNAAgent(require_model(model, "redna"), _sampling("redna", temperature, max_tokens))
