"""Name -> implementation lookups for benchmarks, model APIs and scripted policies (lazy)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
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

MODEL_APIS: Mapping[str, str] = MappingProxyType(
    {
        "openai": "forkingpaths.models.openai_compat:make_openai",
        "openai-compat": "forkingpaths.models.openai_compat:make_openai_compat",
        "litellm": "forkingpaths.models.litellm_model:make_litellm",
        "scripted": "forkingpaths.models.scripted:make_scripted",
        # A local transformers model with EvoRePE steering (the `hf` extra); CreativeBench's.
        "hf": "forkingpaths.benchmarks.creativebench.evorepe:make_hf_model",
    }
)

# Policies every benchmark's tests may use; benchmarks add theirs via Benchmark.scripted_policies.
GENERIC_SCRIPTED_POLICIES: Mapping[str, str] = MappingProxyType(
    {
        "echo": "forkingpaths.models.scripted:EchoPolicy",
        "garbage": "forkingpaths.models.scripted:GarbagePolicy",
    }
)

SUITES: Mapping[str, str] = MappingProxyType(
    {
        "quick": "every registered benchmark with its reference agent and scripted model, offline",
    }
)


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


def make_benchmark(name: str, **options: Any) -> Benchmark:
    """Build a benchmark by short name or versioned id."""
    bid = resolve_benchmark_id(name)
    cls = load_entry_point(benchmark_table()[bid])
    return cls(**options)


def benchmark_names() -> list[str]:
    """Short names of every registered benchmark (latest versions)."""
    return sorted({bid.rsplit("-v", 1)[0] for bid in benchmark_table()})


def scripted_policy_table() -> dict[str, str]:
    """Every scripted policy: the generic ones plus each benchmark's."""
    table = dict(GENERIC_SCRIPTED_POLICIES)
    for bid, path in benchmark_table().items():
        cls = load_entry_point(path)
        for name, target in getattr(cls, "scripted_policies", {}).items():
            if name in table and table[name] != target:
                raise ConfigError(f"scripted policy {name!r} is registered twice ({bid})")
            table[name] = target
    return table
