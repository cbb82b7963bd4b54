"""Typed records written to a run directory: RunSpec, StepRecord, EpisodeRecord, ModelCallRecord."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from forkingpaths.core.chat import ChatRequest, Completion, Message, ModelParams, Usage

SCHEMA_VERSION = 1
"""Version of the run's spec (`spec.json`) and `metrics.json`; readers refuse newer versions.
Kept apart from RECORD_SCHEMA_VERSION so a record-only change leaves run ids (a digest of the
spec) and therefore resume of existing runs untouched."""

RECORD_SCHEMA_VERSION = 3
"""Version of an `episodes.jsonl` line. 2: model calls keep their request (messages, params)
and finish reason; on disk the messages live once per run in `texts.jsonl`. 3: no text twice
in a line (`compact_record`): an observation or feedback that repeats the text before it is
left out or written as an edit of it, a step's and a call's fields at their defaults are left
out, and a call's model when it is the episode's. A reader tells the forms apart by
`schema_version` alone: lines of versions 1 and 2 write every field out and still load (a
version 1 call simply has no messages); a run resumed across versions mixes them."""

_TEXT_FIELDS = ("observation", "feedback")
"""A step's texts in the order the episode produced them (after the initial observation)."""
_EDIT_SUFFIX = "_edit"
"""On disk, `<field>_edit` stands for a text written as an edit of one before it."""
_EDIT_MIN_SAVING = 24
"""Characters an edit must save over its text to be written instead (its syntax costs about
as much)."""
_MIN_COPY = 24
"""Shortest run of whole lines an edit copies from the text it edits (`[start, length]` costs
about half as much) rather than writing again."""
_COPY_COST = 12
"""About what a copy costs in a line."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ModelCallRecord(BaseModel):
    """One call a model was sent while a step was decided or played: by the agent, or by the
    protocol's roles (a responder, a judge, a constraint checker)."""

    model: str
    """`provider/model` id."""
    prompt_tokens: int = 0
    """Input tokens."""
    completion_tokens: int = 0
    """Output tokens."""
    reasoning_tokens: int = 0
    """Reasoning tokens where reported."""
    latency_s: float = 0.0
    """Wall time including retries."""
    cost_usd: float = 0.0
    """Priced cost."""
    cached: bool = False
    """Served from the local response cache."""
    attempts: int = 1
    """HTTP attempts (1 + retries)."""
    response: str = ""
    """The raw text the model returned."""
    purpose: str = "act"
    """What the call was for (an agent with several calls per step names them)."""
    messages: list[Message] = Field(default_factory=list)
    """The exact messages sent, with their roles ([] in records older than schema 2, and on
    disk, where `messages_ref` stands for them)."""
    messages_ref: str | None = None
    """On disk: the id of the last message in the run's text store, whose chain of earlier
    messages is the request (a history that later calls repeat is stored once). `load_records`
    puts the messages back and clears it."""
    params: ModelParams | None = None
    """The sampling parameters sent, seed included (None in records older than schema 2)."""
    finish_reason: str | None = None
    """Why generation stopped, as the API said."""

    @classmethod
    def from_completion(cls, completion: Completion, purpose: str = "act") -> ModelCallRecord:
        u = completion.usage
        request = completion.request
        return cls(
            model=completion.model,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            reasoning_tokens=u.reasoning_tokens,
            latency_s=completion.latency_s,
            cost_usd=completion.cost_usd,
            cached=completion.cached,
            attempts=completion.attempts,
            response=completion.text,
            purpose=purpose,
            messages=[] if request is None else list(request.messages),
            params=None if request is None else request.params,
            finish_reason=completion.finish_reason,
        )

    @field_serializer("params")
    def _compact_params(self, params: ModelParams | None) -> dict[str, Any] | None:
        # Fields at their defaults are left out: one call in thousands sets more than one.
        return None if params is None else params.model_dump(mode="json", exclude_defaults=True)

    def request(self) -> ChatRequest:
        """The request as a ChatModel takes it, to send the call again (read the record with
        `load_records`, which loads the messages)."""
        if self.messages_ref is not None:
            raise ValueError("this call's messages are not loaded; read it with load_records")
        return ChatRequest(
            model=self.model, messages=self.messages, params=self.params or ModelParams()
        )


class StepRecord(BaseModel):
    """One environment step: what the agent saw, thought and did, and what came back."""

    index: int
    """0-based step number within the episode."""
    observation: str
    """The observation text the agent acted on."""
    thought: str = ""
    """The agent's reasoning, if it gave any."""
    action: str
    """The action string sent to the environment."""
    feedback: str
    """The observation text the environment returned."""
    reward: float = 0.0
    """Reward of this step."""
    valid: bool = True
    """False when the environment could not parse or execute the action."""
    terminated: bool = False
    """The game ended with this step."""
    truncated: bool = False
    """A limit ended the episode with this step."""
    info: dict[str, Any] = Field(default_factory=dict)
    """Environment info the benchmark's metrics need (positions, events...)."""
    calls: list[ModelCallRecord] = Field(default_factory=list)
    """Model calls made to choose this action."""


class EpisodeRecord(BaseModel):
    """One finished (or errored) episode; one JSON line of `episodes.jsonl`."""

    schema_version: int = RECORD_SCHEMA_VERSION
    """Record schema version."""
    run_id: str
    """The run this episode belongs to."""
    benchmark: str
    """Benchmark id with version (`griddag-v1`)."""
    split: str
    """Split of the instance."""
    instance_id: str
    """Instance id, unique within the benchmark."""
    trial: int = 0
    """Repetition index of this instance within the run."""
    seed: int
    """Seed the environment was reset with."""
    agent: str
    """Agent name."""
    agent_options: dict[str, Any] = Field(default_factory=dict)
    """Options the agent was built with."""
    model: str | None = None
    """Model id (None for agents that use none)."""
    status: Literal["ok", "error"] = "ok"
    """`error` when the episode could not finish (model down, crash); see `error`."""
    error: str | None = None
    """What went wrong, for errored episodes."""
    initial_observation: str = ""
    """Text of the observation returned by reset."""
    initial_info: dict[str, Any] = Field(default_factory=dict)
    """Structured state at reset that metrics need (start position...)."""
    steps: list[StepRecord] = Field(default_factory=list)
    """Every step, in order."""
    outcome: dict[str, Any] = Field(default_factory=dict)
    """Benchmark-specific end state (success, final score...)."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Per-episode metrics, recomputable from the record by the benchmark."""
    usage: Usage = Field(default_factory=Usage)
    """Token totals over all calls."""
    cost_usd: float = 0.0
    """Cost over all calls."""
    n_calls: int = 0
    """Number of model calls."""
    n_cached: int = 0
    """Calls served from the response cache."""
    started_at: str = Field(default_factory=utc_now)
    """ISO time the episode started."""
    finished_at: str = ""
    """ISO time the episode finished."""
    duration_s: float = 0.0
    """Wall time."""
    agent_state: dict[str, Any] = Field(default_factory=dict)
    """What a learning agent carries across episodes, saved with the run."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.instance_id, self.trial)

    def tally_calls(self) -> None:
        """Recompute usage, cost and call counts from the steps' call records."""
        usage, cost, n, cached = Usage(), 0.0, 0, 0
        for step in self.steps:
            for call in step.calls:
                usage = usage + Usage(
                    prompt_tokens=call.prompt_tokens,
                    completion_tokens=call.completion_tokens,
                    reasoning_tokens=call.reasoning_tokens,
                )
                cost += call.cost_usd
                n += 1
                cached += int(call.cached)
        self.usage, self.cost_usd, self.n_calls, self.n_cached = usage, cost, n, cached


CALL_MESSAGES = {"steps": {"__all__": {"calls": {"__all__": {"messages"}}}}}
"""`model_dump` exclusion of every model call's messages (stored apart: the run's text store,
or a message table on the wire)."""


def record_to_wire(record: EpisodeRecord) -> str:
    """An episode record as one JSON text for another process (a Ray worker's to the driver):
    each distinct message once in a table, every call naming its messages by number, and the
    rest as on disk (`compact_record`). Every call of a ReAct episode resends the history, so
    the text grows with the episode's length, not its square. `record_from_wire` reads it."""
    data = record.model_dump(mode="json", exclude=CALL_MESSAGES)
    table: list[list[str]] = []
    numbers: dict[tuple[str, str], int] = {}
    for step_data, step in zip(data["steps"], record.steps, strict=True):
        for call_data, call in zip(step_data["calls"], step.calls, strict=True):
            refs = []
            for message in call.messages:
                key = (message.role, message.content)
                number = numbers.get(key)
                if number is None:
                    number = numbers[key] = len(table)
                    table.append([message.role, message.content])
                refs.append(number)
            call_data["messages"] = refs
    wire = compact_record(data)
    wire["wire_messages"] = table
    return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))


def record_from_wire(text: str | bytes) -> EpisodeRecord:
    """The record `record_to_wire` wrote, equal to the one it was given; a message repeated by
    many calls is one object among them, as it was in the agent's history."""
    data = json.loads(text)
    messages = [Message(role=role, content=content) for role, content in data.pop("wire_messages")]
    data = expand_record(data)
    for step in data["steps"]:
        for call in step.get("calls", ()):
            call["messages"] = [messages[number] for number in call.get("messages", ())]
    return EpisodeRecord.model_validate(data)


def compact_record(data: dict[str, Any]) -> dict[str, Any]:
    """The `episodes.jsonl` form of a dumped record (`model_dump(mode="json")`, its messages
    already in the text store): no text written twice, and all of it in this one line, so a
    reader of the line alone gets the record back exactly (`expand_record`, then validation;
    `forkingpaths.runner.rundir.parse_record` does both). A reader that validates such a line
    without expanding it gets a ValidationError (a text or a call's model missing), never a
    different record. An episode's texts form one sequence: the initial observation, then
    each step's observation and feedback. A text equal to the one just before it is left out
    (a step's observation is most often the previous step's feedback); one that keeps most of
    one of the two texts before it is written as `<field>_edit`: `[back, head, middle, tail]`,
    the text `back` places before it with its first `head` and last `tail` characters kept and
    `middle` between them, a string or a list of strings and `[start, length]` copies of that
    text's characters (a dialogue grown by a turn, a room redrawn below a history that moved
    on). A step's and a call's fields at their defaults are left out, and a call's model when
    it is the episode's. `data` is left as it is."""
    model = data.get("model")
    step_defaults, call_defaults = _defaults(StepRecord), _defaults(ModelCallRecord)
    before: tuple[str | None, str] = (None, data.get("initial_observation", ""))
    steps = []
    for step in data.get("steps") or ():
        written: dict[str, Any] = {}
        for key in _TEXT_FIELDS:
            written[key] = _encode_text(step[key], *before)
            before = (before[1], step[key])
        out: dict[str, Any] = {}
        for key, value in step.items():
            if key in written:
                if isinstance(written[key], list):
                    out[key + _EDIT_SUFFIX] = written[key]
                elif written[key] is not None:
                    out[key] = value
            elif key == "calls":
                if value:
                    out[key] = [_compact_call(call, model, call_defaults) for call in value]
            elif not _at_default(step_defaults, key, value):
                out[key] = value
        steps.append(out)
    return {**data, "schema_version": RECORD_SCHEMA_VERSION, "steps": steps}


def expand_record(data: Any) -> Any:
    """A parsed line of schema 3 (`compact_record`) with every text it left out or wrote as an
    edit put back, and its calls' models, ready to validate (validation fills the fields left
    out at their defaults). Older lines, and anything that is not a parsed record, come back as
    they are. An edit that does not fit the text it names is a ValueError."""
    if not isinstance(data, dict) or not isinstance(data.get("schema_version"), int):
        return data
    steps = data.get("steps")
    if data["schema_version"] < 3 or not isinstance(steps, list):
        return data
    model = data.get("model")
    before: tuple[Any, Any] = (None, data.get("initial_observation", ""))
    out: list[Any] = []
    for number, step in enumerate(steps):
        if isinstance(step, dict):
            step = dict(step)
            for key in _TEXT_FIELDS:
                step[key] = _decode_text(step, key, before, number)
                before = (before[1], step[key])
            calls = step.get("calls")
            if isinstance(model, str) and isinstance(calls, list):
                step["calls"] = [
                    {"model": model, **call}
                    if isinstance(call, dict) and "model" not in call
                    else call
                    for call in calls
                ]
        out.append(step)
    return {**data, "steps": out}


def _encode_text(text: str, earlier: str | None, last: str) -> str | list[Any] | None:
    """How a text is written after `earlier` and `last`: None (left out: it is `last`), an
    edit `[back, head, middle, tail]` of one of them, or the text itself. An edit's middle is a
    string, or a list of strings and `[start, length]` copies of the edited text's characters
    (lines the text shares with it away from its ends: a room redrawn below a history that
    moved on, a map with one row changed)."""
    if text == last:
        return None
    best: str | list[Any] = text
    best_cost = len(text)
    for back, ref in ((1, last), (2, earlier)):
        if ref is None or best_cost * 8 < len(text):
            continue  # nothing to edit, or the last text already gives most of this one
        head = _common_prefix(ref, text)
        tail = _common_suffix(ref, text, min(len(ref), len(text)) - head)
        middle = _copies(ref, text[head : len(text) - tail])
        cost = _EDIT_MIN_SAVING + (
            len(middle)
            if isinstance(middle, str)
            else sum(len(p) + 3 if isinstance(p, str) else _COPY_COST for p in middle)
        )
        if cost < best_cost:
            best, best_cost = [back, head, middle, tail], cost
    return best


def _copies(ref: str, text: str) -> str | list[Any]:
    """`text` as strings and `[start, length]` copies of `ref`'s runs of whole lines (at least
    `_MIN_COPY` characters), or `text` itself where no run is copied. Lines are looked up by
    content, a run extended while the next lines agree: linear in the lines of both."""
    if len(text) < _MIN_COPY or "\n" not in text:
        return text
    ref_lines = ref.splitlines(keepends=True)
    starts = [0]
    for line in ref_lines:
        starts.append(starts[-1] + len(line))
    where: dict[str, int] = {}
    for number, line in enumerate(ref_lines):
        where.setdefault(line, number)
    lines = text.splitlines(keepends=True)
    pieces: list[Any] = []
    literal: list[str] = []
    at, follows = 0, -1  # `follows`: the ref line after the last copied run
    while at < len(lines):
        line = lines[at]
        if 0 <= follows < len(ref_lines) and ref_lines[follows] == line:
            first = follows
        else:
            first = where.get(line, -1)
        if first < 0:
            literal.append(line)
            at, follows = at + 1, -1
            continue
        run = 1
        while (
            at + run < len(lines)
            and first + run < len(ref_lines)
            and lines[at + run] == ref_lines[first + run]
        ):
            run += 1
        length = starts[first + run] - starts[first]
        if length < _MIN_COPY:
            literal.extend(lines[at : at + run])
        else:
            if literal:
                pieces.append("".join(literal))
                literal = []
            pieces.append([starts[first], length])
        at, follows = at + run, first + run
    if not any(isinstance(piece, list) for piece in pieces):
        return text
    if literal:
        pieces.append("".join(literal))
    return pieces


def _decode_text(step: dict[str, Any], key: str, before: tuple[Any, Any], number: int) -> Any:
    if key in step:
        step.pop(key + _EDIT_SUFFIX, None)
        return step[key]
    edit = step.pop(key + _EDIT_SUFFIX, None)
    if edit is None:
        return before[1]
    ok = isinstance(edit, list) and len(edit) == 4 and edit[0] in (1, 2)
    if ok:
        back, head, middle, tail = edit
        ref = before[2 - back]
        ok = (
            isinstance(ref, str)
            and isinstance(head, int)
            and isinstance(tail, int)
            and head >= 0
            and tail >= 0
            and head + tail <= len(ref)
        )
        if ok and not isinstance(middle, str):
            middle = _join_copies(ref, middle)
            ok = middle is not None
    if not ok:
        raise ValueError(
            f"steps[{number}].{key}{_EDIT_SUFFIX}: {str(edit)[:80]} is not an edit "
            "[back (1 or 2), head, middle, tail] of one of the two texts before it"
        )
    return ref[:head] + middle + ref[len(ref) - tail :]


def _join_copies(ref: str, pieces: Any) -> str | None:
    """The text of an edit's middle written as strings and copies of `ref` (None: not that)."""
    if not isinstance(pieces, list):
        return None
    out = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        if not (isinstance(piece, list) and len(piece) == 2):
            return None
        start, length = piece
        if not (isinstance(start, int) and isinstance(length, int)):
            return None
        if start < 0 or length < 0 or start + length > len(ref):
            return None
        out.append(ref[start : start + length])
    return "".join(out)


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, found by comparing slices (no loop per character)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n - 1  # a[:lo] == b[:lo]; a[:hi + 1] != b[:hi + 1]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most `limit`."""
    la, lb = len(a), len(b)
    if a[la - limit :] == b[lb - limit :]:
        return limit
    lo, hi = 0, limit - 1  # the last lo characters agree; the last hi + 1 do not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _compact_call(call: dict[str, Any], model: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    # `_at_default` inlined: a record has a call per step or more, each of some twenty fields.
    out = {}
    for key, value in call.items():
        default = defaults.get(key, _NO_DEFAULT)
        if (
            type(value) is type(default)
            and value == default
            and (type(value) is not float or math.copysign(1.0, value) > 0)
        ) or (key == "model" and value == model):
            continue
        out[key] = value
    return out


_NO_DEFAULT = object()
"""A field without a default (`_compact_call`): of no value's type."""


def _at_default(defaults: dict[str, Any], key: str, value: Any) -> bool:
    """The dumped value of a field is its default, of the same type (0 is not 0.0, nor False)
    and sign (-0.0 is not 0.0): left out, it reads back exactly."""
    if key not in defaults:
        return False
    default = defaults[key]
    if type(value) is not type(default) or value != default:
        return False
    return not isinstance(value, float) or math.copysign(1.0, value) > 0


def _defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """The defaults of a record's optional fields."""
    return {
        name: field.get_default(call_default_factory=True)
        for name, field in cls.model_fields.items()
        if not field.is_required()
    }


class ModelOptions(BaseModel):
    """How to reach and sample a model; part of the run's identity."""

    model_config = ConfigDict(frozen=True)

    base_url: str | None = None
    """Endpoint for `openai-compat/...` models."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    params: ModelParams = Field(default_factory=ModelParams)
    """Sampling parameters."""

    @field_validator("params")
    @classmethod
    def _sampling_in_range(cls, params: ModelParams) -> ModelParams:
        if not (math.isfinite(params.temperature) and params.temperature >= 0):
            raise ValueError(
                f"temperature: got {params.temperature}; allowed: a finite number >= 0"
            )
        return params


class RoleModel(BaseModel):
    """A model a benchmark's protocol calls besides the agent's (a judge, a responder)."""

    model_config = ConfigDict(frozen=True)

    model: str
    """Model id (`openai/gpt-4.1`, `scripted/escape-judge`)."""
    options: ModelOptions = Field(default_factory=ModelOptions)
    """Endpoint and sampling parameters (temperature 0 unless set)."""


class RunSpec(BaseModel):
    """Everything that determines a run's results. Two runs with equal specs are the same run."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA_VERSION
    """Spec schema version."""
    benchmark: str
    """Benchmark id with version (`griddag-v1`)."""
    split: str
    """Which instances."""
    instances: list[str] | None = None
    """Instance ids to run (None: the whole split)."""
    trials: int = 1
    """Episodes per instance."""
    seed: int = 0
    """Base seed; an episode's seed derives from it, the instance and the trial."""
    agent: str
    """Agent name within the benchmark."""
    agent_options: dict[str, Any] = Field(default_factory=dict)
    """Agent options (prompt variant, reasoning mode...)."""
    model: str | None = None
    """Model id (`openai/gpt-4.1`, `openai-compat/qwen3-32b`, `scripted/griddag-frontier`)."""
    model_options: ModelOptions = Field(default_factory=ModelOptions)
    """Endpoint and sampling parameters."""
    benchmark_options: dict[str, Any] = Field(default_factory=dict)
    """Benchmark options (step budget overrides...)."""
    roles: dict[str, RoleModel] = Field(default_factory=dict)
    """Models for the benchmark's protocol roles (`judge`...), see `Benchmark.model_roles`."""

    def differing_fields(self, other: RunSpec) -> list[str]:
        """Names of the fields (dotted for nested ones) whose values differ."""
        mine, theirs = self.model_dump(mode="json"), other.model_dump(mode="json")
        return _diff(mine, theirs, "")


def _diff(a: Any, b: Any, prefix: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            out += _diff(a.get(key), b.get(key), f"{prefix}{key}.")
        return out
    return [] if a == b else [prefix.rstrip(".")]


class RunOptions(BaseModel):
    """How a run executes; does not change its results, so resume ignores it."""

    concurrency: int = Field(default=8, ge=1)
    """Episodes in flight at once."""
    executor: Literal["local", "ray"] = "local"
    """Where episodes run: this process, or an existing Ray cluster."""
    ray_address: str | None = None
    """The Ray cluster to join (`auto`, HOST:PORT, ray://HOST:PORT); None: $RAY_ADDRESS or auto.
    Only with `executor="ray"`."""
    ray_workers_per_node: int = Field(default=1, ge=1)
    """Worker actors per Ray node (one CPU each), each with `concurrency` episodes in flight."""
    cache: bool = True
    """Use the response cache (only consulted at temperature 0)."""
    budget_usd: float | None = Field(default=None, gt=0)
    """Stop scheduling new episodes once this much is spent."""
    retry_errors: bool = False
    """Re-run episodes recorded as errored."""
    model_concurrency: int = Field(default=32, ge=1)
    """Requests in flight to one model."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Request rate limit per model."""
    max_retries: int = Field(default=6, ge=0)
    """Retries per model call before the episode errors."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """Timeout of one HTTP request."""
    prices_path: str | None = None
    """User price table (YAML) overriding the shipped one."""
    progress: bool = True
    """Show the progress display."""


class RunHeader(BaseModel):
    """Contents of `spec.json`: the spec plus where and with what it ran."""

    schema_version: int = SCHEMA_VERSION
    """Header schema version."""
    run_id: str
    """Run id (the directory name)."""
    spec: RunSpec
    """The run's identity."""
    created_at: str = Field(default_factory=utc_now)
    """When the run directory was created."""
    environment: dict[str, Any] = Field(default_factory=dict)
    """Package version, git revision, python and key package versions, host."""


class EpisodeCounts(BaseModel):
    """How many episodes a run planned, finished and lost to errors."""

    planned: int
    """Episodes the spec asks for."""
    ok: int
    """Episodes finished and scored."""
    errored: int
    """Episodes recorded as errors (counted, kept out of the metrics)."""


class UsageTotals(BaseModel):
    """Model usage summed over a run's episodes (every role's calls included)."""

    calls: int = 0
    """Model calls."""
    cached_calls: int = 0
    """Calls served from the response cache."""
    prompt_tokens: int = 0
    """Input tokens."""
    completion_tokens: int = 0
    """Output tokens."""
    reasoning_tokens: int = 0
    """Reasoning tokens where reported."""
    cost_usd: float = 0.0
    """Priced cost, rounded to 6 decimals."""


class CallStats(BaseModel):
    """The model calls of one purpose over a run's episodes (the agent's `act`, a `judge`...)."""

    calls: int = 0
    """Calls made."""
    calls_per_episode: float = 0.0
    """Calls per recorded episode."""
    tokens_per_episode: float = 0.0
    """Prompt + completion tokens per recorded episode."""
    empty_replies: int = 0
    """Calls whose reply was empty: a model that said nothing to parse."""


class CallTiming(BaseModel):
    """How fast the calls of one purpose were answered (not served from the cache)."""

    seconds_per_call: float = 0.0
    """Mean latency."""
    tokens_per_second: float | None = None
    """Completion tokens per second of latency (None when every call was cached)."""


class RunTiming(BaseModel):
    """Wall time of a run's episodes."""

    episode_seconds_mean: float | None = None
    """Mean episode wall time (None without episodes)."""
    episode_seconds_total: float = 0.0
    """Summed episode wall time (more than the run's when episodes overlap)."""
    calls_by_purpose: dict[str, CallTiming] = Field(default_factory=dict)
    """Latency and decoding speed of the model calls, by purpose."""


class EpisodeError(BaseModel):
    """An errored episode as `metrics.json` lists it."""

    instance_id: str
    """Its instance."""
    trial: int
    """Its trial."""
    error: str
    """The error, cut to 500 characters."""


class RunMetrics(BaseModel):
    """Contents of `metrics.json`: a run's scores, recomputable from its records."""

    schema_version: int = SCHEMA_VERSION
    """Schema version of this file."""
    run_id: str
    """The run."""
    benchmark: str
    """Benchmark id with version."""
    split: str
    """Split of the instances."""
    agent: str
    """Agent name."""
    agent_options: dict[str, Any] = Field(default_factory=dict)
    """Agent options."""
    model: str | None = None
    """The agent's model."""
    complete: bool
    """Every planned episode has a record."""
    episodes: EpisodeCounts
    """Planned, finished and errored episodes."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """The benchmark's run-level metrics over the finished episodes (`Benchmark.aggregate`;
    their labels and directions are the benchmark's `metric_specs`)."""
    usage: UsageTotals = Field(default_factory=UsageTotals)
    """Model usage."""
    calls_by_purpose: dict[str, CallStats] = Field(default_factory=dict)
    """Model calls by what they were for, every role's included."""
    invalid_step_rate: float | None = None
    """Steps the env could not parse or execute, over all steps (an agent's format failures
    and illegal moves; None without steps)."""
    timing: RunTiming = Field(default_factory=RunTiming)
    """Episode wall times."""
    errors: list[EpisodeError] = Field(default_factory=list)
    """The errored episodes."""
