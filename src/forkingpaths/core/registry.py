"""Name -> implementation lookups for benchmarks, model APIs and scripted policies (lazy)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.core.errors import ConfigError, NameNotFound

if TYPE_CHECKING:
    from forkingpaths.core.benchmark import Benchmark

# Immutable tables of import paths: nothing is imported until a name is asked for, and third-party
# packages add benchmarks through the `forkingpaths.benchmarks` entry-point group.
BUILTIN_BENCHMARKS: Mapping[str, str] = MappingProxyType(
    {
        "griddag-v1": "forkingpaths.benchmarks.griddag.benchmark:GridDagBenchmark",
        "eeb-v1": "forkingpaths.benchmarks.eeb.benchmark:EEBBenchmark",
        "escape-v1": "forkingpaths.benchmarks.escape.benchmark:EscapeBenchmark",
        "aut-v1": "forkingpaths.benchmarks.escape.aut:AUTBenchmark",
        "turtlesoup-v1": "forkingpaths.benchmarks.turtlesoup.benchmark:TurtleSoupBenchmark",
        "creativebench-v1": "forkingpaths.benchmarks.creativebench.benchmark:CreativeBenchmark",
    }
)


@dataclass(frozen=True)
class ModelAPIEntry:
    """A model provider: `module:callable` paths of its factory and of its access check."""

    factory: str
    """Called as `factory(name, options, runtime)` -> ChatModel (imports the SDK)."""
    check: str
    """Called as `check(name, options)`; raises ConfigError for a model that cannot work,
    with no network call and no SDK import."""


MODEL_APIS: Mapping[str, ModelAPIEntry] = MappingProxyType(
    {
        "openai": ModelAPIEntry(
            "forkingpaths.models.openai_compat:make_openai",
            "forkingpaths.models.endpoints:check_openai",
        ),
        "openai-compat": ModelAPIEntry(
            "forkingpaths.models.openai_compat:make_openai_compat",
            "forkingpaths.models.endpoints:check_openai_compat",
        ),
        "litellm": ModelAPIEntry(
            "forkingpaths.models.litellm_model:make_litellm",
            "forkingpaths.models.endpoints:check_litellm",
        ),
        # A GGUF model on llama.cpp's server, started and stopped by the harness (`local` extra).
        "local": ModelAPIEntry(
            "forkingpaths.models.local:make_local",
            "forkingpaths.models.local:check_local",
        ),
        "scripted": ModelAPIEntry(
            "forkingpaths.models.scripted:make_scripted",
            "forkingpaths.models.scripted:check_scripted",
        ),
        # A local transformers model with EvoRePE steering (the `hf` extra); CreativeBench's.
        "hf": ModelAPIEntry(
            "forkingpaths.benchmarks.creativebench.evorepe:make_hf_model",
            "forkingpaths.benchmarks.creativebench.evorepe:check_hf_model",
        ),
    }
)

_B = "forkingpaths.benchmarks"

# Scripted policies (`scripted/<name>`): the generic ones and the built-in benchmarks', listed
# here so building a scripted model imports only its own policy; plugin benchmarks add theirs
# through `Benchmark.scripted_policies`.
SCRIPTED_POLICIES: Mapping[str, str] = MappingProxyType(
    {
        "echo": "forkingpaths.models.scripted:EchoPolicy",
        "garbage": "forkingpaths.models.scripted:GarbagePolicy",
        "griddag-frontier": f"{_B}.griddag.agents.scripted:FrontierPolicy",
        "griddag-random": f"{_B}.griddag.agents.scripted:RandomWalkPolicy",
        "griddag-noisy": f"{_B}.griddag.agents.scripted:NoisyFrontierPolicy",
        "eeb-reference": f"{_B}.eeb.agents.scripted:EEBPolicy",
        "eeb-maze-explorer": f"{_B}.eeb.agents.scripted:MazeExplorerPolicy",
        "eeb-match2-greedy": f"{_B}.eeb.agents.scripted:Match2GreedyPolicy",
        "eeb-expver": f"{_B}.eeb.expver.scripted:ExpVerScriptedPolicy",
        "escape-explorer": f"{_B}.escape.agents.scripted:EscapeExplorerPolicy",
        "escape-judge": f"{_B}.escape.judge_scripted:DivergenceJudgePolicy",
        "aut-scripted": f"{_B}.escape.aut_scripted:AUTScriptedPolicy",
        "aut-judge": f"{_B}.escape.aut_scripted:AUTJudgePolicy",
        "turtlesoup-questioner": f"{_B}.turtlesoup.agents.scripted:TurtleSoupQuestionerPolicy",
        "turtlesoup-responder": f"{_B}.turtlesoup.responder_scripted:TurtleSoupResponderPolicy",
        "turtlesoup-judge": f"{_B}.turtlesoup.evaluation_scripted:TurtleSoupJudgePolicy",
        "creative-solver": f"{_B}.creativebench.agents.scripted:CreativeSolverPolicy",
        "constraint-judge": f"{_B}.creativebench.judge_scripted:ConstraintJudgePolicy",
        "creativebench-pipeline": f"{_B}.creativebench.pipeline_scripted:PipelinePolicy",
    }
)

# Gymnasium ids of the built-in benchmarks -> (benchmark, instance-id prefix); kept here, not on
# the benchmark classes, so registering them imports no benchmark code.
GYM_IDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        **{f"forkingpaths/Maze-L{n}-v0": ("eeb", f"maze-l{n}-") for n in (1, 2, 3)},
        **{
            f"forkingpaths/Match2-{d.title()}-v0": ("eeb", f"match2-{d}-")
            for d in ("easy", "medium", "hard")
        },
        "forkingpaths/GridDag-v1": ("griddag", ""),
    }
)

PAPERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "explore-exploit": ("griddag",),
        "mutate": ("escape", "aut"),
        "eeb": ("eeb",),
        "turtlesoup": ("turtlesoup",),
        "creativebench": ("creativebench",),
    }
)
"""`forkingpaths reproduce PAPER:ITEM`: each paper's key -> the benchmarks whose
`reproductions()` hold its tables and figures."""

SUITES: Mapping[str, str] = MappingProxyType(
    {
        "quick": "every registered benchmark with its reference agent and scripted model, offline",
        "local": "every LLM agent on SmolLM2-135M-Instruct through llama.cpp (the `local` extra), "
        "shortened budgets, ~20 min on two cores",
    }
)


def scripted_policy_entry(name: str) -> str:
    """The entry point of one scripted policy; a built-in name imports nothing."""
    if name in SCRIPTED_POLICIES:
        return SCRIPTED_POLICIES[name]
    table = scripted_policy_table()
    if name not in table:
        raise NameNotFound("scripted policy", name, list(table))
    return table[name]


def load_entry_point(path: str) -> Any:
    """Import `module:attr` and return the attribute."""
    module_name, _, attr = path.partition(":")
    if not attr:
        raise ConfigError(f"entry point {path!r} must read 'module:attribute'")
    return getattr(importlib.import_module(module_name), attr)


def benchmark_table() -> dict[str, str]:
    """Versioned benchmark id -> entry point, built-ins plus installed plugins."""
    table = dict(BUILTIN_BENCHMARKS)
    for ep in entry_points(group="forkingpaths.benchmarks"):
        table.setdefault(ep.name, ep.value)
    return table


def resolve_benchmark_id(name: str) -> str:
    """Accept `griddag` (latest version) or `griddag-v1`; refuse unknown names with a hint."""
    table = benchmark_table()
    if name in table:
        return name
    versions = [bid for bid in table if bid.rsplit("-v", 1)[0] == name]
    if versions:
        return max(versions, key=lambda bid: int(bid.rsplit("-v", 1)[1]))
    short = sorted({bid.rsplit("-v", 1)[0] for bid in table})
    raise NameNotFound("benchmark", name, short + sorted(table))


def benchmark_class(name: str) -> type[Benchmark]:
    """A benchmark's class by short name or versioned id, without building it."""
    return load_entry_point(benchmark_table()[resolve_benchmark_id(name)])


def make_benchmark(name: str, **options: Any) -> Benchmark:
    """Build a benchmark by short name or versioned id."""
    return benchmark_class(name)(**options)


def benchmark_names() -> list[str]:
    """Short names of every registered benchmark (latest versions)."""
    return sorted({bid.rsplit("-v", 1)[0] for bid in benchmark_table()})


def scripted_policy_table() -> dict[str, str]:
    """Every scripted policy: the built-in ones plus each plugin benchmark's (only plugins'
    classes are imported)."""
    table = dict(SCRIPTED_POLICIES)
    for bid, path in benchmark_table().items():
        if bid in BUILTIN_BENCHMARKS:
            continue
        cls = load_entry_point(path)
        for name, target in getattr(cls, "scripted_policies", {}).items():
            if name in table and table[name] != target:
                raise ConfigError(f"scripted policy {name!r} is registered twice ({bid})")
            table[name] = target
    return table
