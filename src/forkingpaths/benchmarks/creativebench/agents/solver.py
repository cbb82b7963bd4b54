"""CreativeBench solvers: vanilla (App. M/N prompt), reference (offline sanity), evolved prompt.

The benchmark shows a solver one Observation per task whose `data` holds `subset` ("explore" or
"combo"), `task` (the task as a dict with the fields of docs/dev/creativebench.md §1) and
optionally `prompt_override` (an instruction that replaces the default one). A solver answers
one Decision: `action` is the extracted code, `thought` the raw reply (cut to `THOUGHT_LIMIT`
characters), `calls` the model calls it made (`purpose="solve"`).

A reply without a code block is not an error: the whole reply is taken as the code and the
sandbox gives it the verdict it earns (Agent protocol).

Explore level 0 is the baseline of the novelty of every constrained level: the model's default
behaviour from a plain prompt (App. A; Table 19's baseline prompt). It always gets
`solver_prompts.EXPLORE_BASELINE_PROMPT`, whatever instruction (evolved or overriding) the
solver carries; that instruction applies to Combo tasks and to constrained levels.

Trials: `reset(instance, seed)` keeps the episode seed and every model call sends it
(`ModelParams(seed=...)`), so the trials of a run are independent draws (App. B.2: seeds 42, 43,
44) and, at temperature 0, the response cache (keyed on the seed too) does not replay trial 1.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Any

from forkingpaths.benchmarks.creativebench.agents import solver_prompts as prompts
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord

SUBSETS = ("explore", "combo")
"""The two CreativeBench subsets an observation can name."""

THOUGHT_LIMIT = 4000
"""Characters of the raw reply kept as the Decision's thought (the code is kept whole)."""

REFERENCE_FIELDS = {"explore": "reference_solution", "combo": "canonical_solution"}
"""Task field holding the known-good solution, per subset."""

# A fence opens at the start of a line (so a prompt that mentions ``` mid-sentence never
# matches); it closes at the next line-start fence or, for a reply cut off mid-block, at the
# end of the text.
_FENCE = re.compile(
    r"^[ \t]*```[ \t]*[\w+#.-]*[ \t]*\n(.*?)(?:^[ \t]*```|\Z)", re.MULTILINE | re.DOTALL
)
# Reasoning models may think aloud (and sketch code) before their answer.
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_code(reply: str) -> str:
    """The code of a solver reply: the first fenced code block, else the whole reply stripped.

    A `<think>...</think>` section is dropped first, so code sketched while reasoning is not
    taken for the answer; a block left open by a truncated reply runs to the end of the text.
    """
    text = _THINK.sub("", reply)
    match = _FENCE.search(text)
    if match is None:
        return text.strip()
    code = match.group(1).rstrip()
    # A closing fence glued to the last code line ("return x```") is not code.
    return code.removesuffix("```").rstrip() + "\n"


def task_value(task: Any, name: str, default: Any = None) -> Any:
    """Field `name` of a task given as a mapping or as a task object (default when absent)."""
    if isinstance(task, Mapping):
        return task.get(name, default)
    return getattr(task, name, default)


def task_as_dict(task: Any) -> dict[str, Any]:
    """A task as a plain dict (mappings copied, dataclasses converted)."""
    if isinstance(task, Mapping):
        return dict(task)
    if dataclasses.is_dataclass(task) and not isinstance(task, type):
        return dataclasses.asdict(task)
    raise ConfigError(f"task: expected a mapping or a task dataclass, got {type(task).__name__}")


def task_subset(task: Any) -> str:
    """`explore` for a task with a level or a function signature (ExploreTask), else `combo`."""
    if task_value(task, "level") is not None or task_value(task, "function_signature"):
        return "explore"
    return "combo"


def default_instruction(subset: str) -> str:
    """The paper's instruction for a subset (App. M for combo, App. K Table 16 for explore)."""
    _check_subset(subset)
    return prompts.EXPLORE_INSTRUCTION if subset == "explore" else prompts.COMBO_INSTRUCTION


def is_baseline(task: Any) -> bool:
    """Whether an Explore task is the unconstrained baseline: level 0, or (a task without a
    level) no constraints at all."""
    level = task_value(task, "level")
    if level is not None:
        return level == 0
    return not (task_value(task, "constraints") or task_value(task, "constraints_detail"))


def render_solver_prompt(subset: str, task: Any, instruction: str | None = None) -> str:
    """The solver prompt of one task: `instruction` (the default one when None or blank), then
    the task and the fixed answer format. An Explore baseline task (`is_baseline`) without an
    instruction gets the plain level-0 prompt (`EXPLORE_BASELINE_PROMPT`)."""
    _check_subset(subset)
    chosen = instruction.strip() if instruction and instruction.strip() else None
    task_id = task_value(task, "id", "?")
    question = task_value(task, "question")
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"task {task_id}: field 'question': expected text, got {shown(question)}")
    language = str(task_value(task, "language") or "python")
    if subset == "combo":
        return prompts.COMBO_PROMPT.substitute(
            instruction=chosen or default_instruction(subset),
            question=question.strip(),
            language=language,
        )
    signature = str(task_value(task, "function_signature") or "").strip()
    if chosen is None and is_baseline(task):
        return prompts.EXPLORE_BASELINE_PROMPT.substitute(
            instruction=Template(prompts.EXPLORE_BASELINE_INSTRUCTION).substitute(
                language=_language_name(language)
            ),
            question=question.strip(),
            signature=signature or prompts.NO_SIGNATURE,
            language=language,
        )
    instruction_text = chosen or default_instruction(subset)
    return prompts.EXPLORE_PROMPT.substitute(
        instruction=instruction_text,
        question=question.strip(),
        signature=signature or prompts.NO_SIGNATURE,
        constraints=render_constraints(task),
        language=language,
    )


def _language_name(language: str) -> str:
    """`python` -> `Python` (the baseline prompt names the language as a person would)."""
    return language[:1].upper() + language[1:]


def render_constraints(task: Any) -> str:
    """The numbered constraints of an Explore task, or the level-0 line when it has none.

    Reads `constraints` (the stacked texts); a row that only carries `constraints_detail`
    falls back to the `constraint` field of each item.
    """
    texts = [str(t).strip() for t in task_value(task, "constraints", ()) or () if str(t).strip()]
    if not texts:
        for item in task_value(task, "constraints_detail", ()) or ():
            text = task_value(item, "constraint", "")
            if text and str(text).strip():
                texts.append(str(text).strip())
    if not texts:
        return prompts.NO_CONSTRAINTS
    lines = [prompts.CONSTRAINT_LINE.substitute(number=i, text=t) for i, t in enumerate(texts, 1)]
    return prompts.CONSTRAINTS_INTRO + "\n" + "\n".join(lines)


def truncate(text: str, limit: int = THOUGHT_LIMIT) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters]"


def read_prompt_file(path: str | Path) -> str:
    """The evolved instruction of a prompt file written by `evolve.py`
    (JSON `{"prompt", "method", "score", ...}`); ConfigError naming the file otherwise."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"prompt_file {file}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ConfigError(f"prompt_file {file}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"prompt_file {file}: expected a JSON object with a 'prompt' field, "
            f"got {type(data).__name__}"
        )
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(
            f"prompt_file {file}: field 'prompt': expected non-empty text, got {shown(prompt)} "
            "(write the file with creativebench evolve)"
        )
    return prompt


def prompt_digest(instruction: str) -> str:
    """sha256 of an instruction (hex): what the `prompt_sha256` agent option pins."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()


def _check_subset(subset: Any) -> None:
    if subset not in SUBSETS:
        raise ConfigError(f"subset: expected one of {', '.join(SUBSETS)}, got {shown(subset)}")


class CreativeSolver:
    """One model call per task with the subset's prompt; the code is the first fenced block.

    `instruction` replaces the default instruction for every task (an evolved prompt); an
    observation's `prompt_override` takes precedence over both. Neither reaches an Explore
    level-0 task, which always gets the plain baseline prompt (module docstring). An
    observation without a task (a hand-made one) is sent as its text.

    Every call sends the episode seed given to `reset` (`ModelParams(seed=...)`, on top of
    `params`); other sampling fields stay the run's (`--temperature 0.1` for App. B.2).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        instruction: str | None = None,
        params: ModelParams | None = None,
    ) -> None:
        self.model = model
        self.instruction = instruction
        # Only the fields set here reach the request: the run's parameters apply to the rest.
        self.params = params or ModelParams()
        self.seed: int | None = None

    def reset(self, instance: Instance, seed: int) -> None:
        """Keep the episode seed: every call of the episode sends it (independent trials)."""
        self.seed = seed

    def request_params(self) -> ModelParams:
        """`params` with the episode seed set (as is when `reset` was never called)."""
        if self.seed is None:
            return self.params
        return self.params.model_copy(update={"seed": self.seed})

    def prompt(self, observation: Observation) -> str:
        """The user turn sent for an observation."""
        data = observation.data
        task = data.get("task")
        if task is None:
            return observation.text
        subset = data.get("subset") or task_subset(task)
        if subset == "explore" and is_baseline(task):
            return render_solver_prompt(subset, task)  # the model's default behaviour
        override = data.get("prompt_override")
        instruction = override if isinstance(override, str) and override.strip() else None
        return render_solver_prompt(subset, task, instruction or self.instruction)

    async def act(self, observation: Observation) -> Decision:
        messages = [Message(role="user", content=self.prompt(observation))]
        completion = await self.model.complete(messages, self.request_params())
        return Decision(
            action=extract_code(completion.text),
            thought=truncate(completion.text),
            calls=[ModelCallRecord.from_completion(completion, purpose="solve")],
        )

    def state(self) -> dict[str, Any]:
        return {}


class ReferenceSolver:
    """Answers each task's known-good solution without a model: an offline sanity check of
    tasks, sandbox and metrics (its Quality should be 1 wherever the data is sound)."""

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget."""

    async def act(self, observation: Observation) -> Decision:
        task = observation.data.get("task")
        if task is None:
            raise ConfigError("reference solver: the observation carries no task (data['task'])")
        subset = observation.data.get("subset") or task_subset(task)
        _check_subset(subset)
        field = REFERENCE_FIELDS[subset]
        code = task_value(task, field)
        if not isinstance(code, str) or not code.strip():
            raise ConfigError(
                f"task {task_value(task, 'id', '?')}: field {field!r}: expected code, "
                f"got {shown(code)}"
            )
        return Decision(action=code, thought=f"reference: the task's {field}")

    def state(self) -> dict[str, Any]:
        return {}


def make_vanilla(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> CreativeSolver:
    """Factory of the `vanilla` solver: zero-shot with the App. M/N prompt."""
    return CreativeSolver(require_model(model, "vanilla"))


def make_reference(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> ReferenceSolver:
    """Factory of the `reference` solver: the task's reference solution, no model."""
    return ReferenceSolver()


def make_prompt_solver(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    prompt_file: str = "",
    prompt_sha256: str = "",
) -> CreativeSolver:
    """Factory of the `prompt` solver: vanilla with the instruction evolved into `prompt_file`
    (written by `evolve.island_search` or `evolve.gepa_search`).

    `prompt_sha256` (optional, `prompt_digest` of the instruction) pins the prompt: a file that
    now holds another instruction is refused, and, being part of the run's spec, a new prompt
    under the same path makes a new run rather than resuming the old one's episodes."""
    if not prompt_file:
        raise ConfigError(
            "prompt_file: the prompt solver needs the JSON file written by the evolutionary "
            "baselines (e.g. --agent-option prompt_file=runs/evolve/island.json)"
        )
    return CreativeSolver(
        require_model(model, "prompt"), instruction=pinned_instruction(prompt_file, prompt_sha256)
    )


def pinned_instruction(prompt_file: str, prompt_sha256: str = "") -> str:
    """The instruction of `prompt_file`; with `prompt_sha256`, refused unless its digest is
    that one (the file changed since the run was planned)."""
    instruction = read_prompt_file(prompt_file)
    if prompt_sha256 and prompt_digest(instruction) != prompt_sha256:
        raise ConfigError(
            f"prompt_sha256: prompt_file {prompt_file} now holds another prompt (sha256 "
            f"{prompt_digest(instruction)}, expected {prompt_sha256}); give the file the run "
            "was made with, or start a new run"
        )
    return instruction
