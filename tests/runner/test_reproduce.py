"""`forkingpaths reproduce`: a table's runs become ordinary resumable runs, our numbers are laid
beside the published ones, and every bad input is refused in one line before anything runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.doubles import run_cli

from forkingpaths.api import reproduce
from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.core.errors import ConfigError, NameNotFound
from forkingpaths.core.records import ModelOptions, RoleModel, RunOptions
from forkingpaths.core.reproduce import (
    PublishedColumn,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    ResultTable,
    load_published,
    metric_table,
)
from forkingpaths.models.mockserver import MockServer
from forkingpaths.report.reproduce import as_sentence, result_table
from forkingpaths.runner import reproduce as reproduce_module
from forkingpaths.runner.reproduce import (
    estimate_reproduction,
    find_reproduction,
    list_reproductions,
    plan_specs,
    reproduction_dir,
    run_reproduction,
    setup_digest,
)
from forkingpaths.runner.reproduce import reproduce as reproduce_async

PUBLISHED = {
    "paper": "toy",
    "table": "Table 9",
    "title": "Success of the frontier agent and a ReAct agent",
    "source": "a made-up table for the runner's tests",
    "notes": ["its last row needs pip install -e '.[hf]'"],
    "columns": [
        {"key": "success_rate", "label": "Success (%)", "direction": "higher"},
        {"key": "steps_success", "label": "Steps", "direction": "lower"},
    ],
    "rows": [
        {"model": "GPT-4.1", "method": "Frontier", "values": {"success_rate": 75.0}},
        {"model": "GPT-4.1", "method": "ReAct", "values": {"success_rate": 50.5}},
        {"model": "Gemini", "method": "ReAct", "values": {"success_rate": 12.25}},
    ],
}


def _toy_runs(ctx: object) -> list[ReproRun]:
    return [
        ReproRun(key="frontier", agent="frontier", label="Frontier", needs_model=False),
        ReproRun(
            key="react",
            agent="react",
            label="ReAct",
            temperature=0.7,
            model_seed=42,
            offline_model="scripted/griddag-frontier",
        ),
    ]


TOY = Reproduction(
    key="toy:table9",
    title="Table 9: success of two agents",
    runs=_toy_runs,
    compute=metric_table(
        [("Frontier", "frontier"), ("ReAct", "react")], scale={"success_rate": 100}
    ),
    published="table9.yaml",
    description="frontier and ReAct on griddag main",
)

NEEDS_FILE = Reproduction(
    key="toy:table10",
    title="Table 10: needs a file",
    runs=_toy_runs,
    compute=metric_table([("Frontier", "frontier")]),
    published="table9.yaml",
    inputs={"human_scores": "annotators' scores (CSV)"},
)


@pytest.fixture
def toy_paper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A paper `toy` whose tables griddag lists, published numbers in a temporary folder."""
    published = tmp_path / "published"
    published.mkdir()
    (published / "table9.yaml").write_text(yaml.safe_dump(PUBLISHED), encoding="utf-8")
    monkeypatch.setattr(reproduce_module, "PAPERS", {"toy": ("griddag",)})
    monkeypatch.setattr(GridDagBenchmark, "reproductions", lambda self: [TOY, NEEDS_FILE])
    monkeypatch.setattr(GridDagBenchmark, "published_dir", lambda self: published)
    yield tmp_path / "runs"


def test_reproduction_runs_the_protocol_and_lays_numbers_beside_the_paper(
    toy_paper: Path,
) -> None:
    outcome = run_reproduction("toy:table9", model="scripted", limit=2, runs_dir=toy_paper)
    (table,) = outcome.result.tables
    assert table.title == "Table 9: Success of the frontier agent and a ReAct agent"
    assert table.published_model == "GPT-4.1"
    assert [r.label for r in table.rows] == ["Frontier", "ReAct"]
    for row, key in zip(table.rows, ("frontier", "react"), strict=True):
        metrics = json.loads((outcome.runs[key] / "metrics.json").read_text())["metrics"]
        assert row.ours["success_rate"] == pytest.approx(100 * metrics["success_rate"])
        assert row.ours["steps_success"] == metrics["steps_success"]
    assert table.rows[0].published == {"success_rate": 75.0, "steps_success": None}
    assert table.rows[1].difference("success_rate") == pytest.approx(
        table.rows[1].ours["success_rate"] - 50.5
    )
    assert table.rows[1].difference("steps_success") is None

    spec = json.loads((outcome.runs["react"] / "spec.json").read_text())
    spec = spec.get("spec", spec)
    assert spec["model"] == "scripted/griddag-frontier"
    assert spec["model_options"]["params"]["temperature"] == 0.7
    assert spec["model_options"]["params"]["seed"] == 42
    assert len(spec["instances"]) == 2

    record = json.loads((outcome.out_dir / "reproduction.json").read_text())
    assert record["key"] == "toy:table9"
    assert record["tables"][0]["rows"][1]["published"]["success_rate"] == 50.5
    assert any("at most 2 instance" in n for n in record["notes"])
    html = (outcome.out_dir / "report.html").read_text()
    assert "Success (%)" in html and "50.5" in html and "forkingpaths reproduce toy:table9" in html

    # The same command again resumes: the runs are the same directories, nothing re-runs.
    lines = {k: (p / "episodes.jsonl").read_text().count("\n") for k, p in outcome.runs.items()}
    again = run_reproduction("toy:table9", model="scripted", limit=2, runs_dir=toy_paper)
    assert again.runs == outcome.runs
    assert {k: (p / "episodes.jsonl").read_text().count("\n") for k, p in again.runs.items()} == (
        lines
    ), "nothing is played again"
    assert again.result.tables[0].rows[1].ours == table.rows[1].ours


def test_compare_to_picks_the_published_model(toy_paper: Path) -> None:
    outcome = run_reproduction(
        "toy:table9", model="scripted", limit=1, compare_to="gemini", runs_dir=toy_paper
    )
    (table,) = outcome.result.tables
    assert table.published_model == "Gemini"
    assert table.rows[1].published["success_rate"] == 12.25
    assert table.rows[0].published["success_rate"] is None


def test_cli_prints_the_table_and_lists_reproductions(
    toy_paper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["reproduce", "list", "toy"], capsys)
    assert code == 0, err
    assert "toy:table9" in out and "--input human_scores=PATH" in out
    args = ["reproduce", "toy:table9", "--model", "scripted", "--limit", "1"]
    code, out, err = run_cli([*args, "--runs-dir", str(toy_paper)], capsys)
    assert code == 0, err
    assert "ours / paper" in out and "75.0" in out and "report:" in out
    # Notes quote extras and flags: printed as written, not read as markup.
    assert "pip install -e '.[hf]'" in " ".join(out.split())


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"key": "nopaper:table1"}, NameNotFound, "Available: toy"),
        ({"key": "toy:table99"}, NameNotFound, "toy:table9"),
        ({"key": "toy"}, ConfigError, "name a table or figure of toy as toy:ITEM: toy:table9"),
        ({"key": "toy:table9", "limit": 0}, ConfigError, "--limit"),
        ({"key": "toy:table9", "model": None}, ConfigError, "needs --model"),
        ({"key": "toy:table9", "compare_to": "Claude"}, ConfigError, "'GPT-4.1', 'Gemini'"),
        ({"key": "toy:table9", "inputs": {"x": "f.csv"}}, ConfigError, "takes no such input"),
        ({"key": "toy:table10"}, ConfigError, "--input human_scores=PATH"),
        ({"key": "toy:table10", "inputs": {"human_scores": "no.csv"}}, ConfigError, "no such"),
        ({"key": "toy:table10", "inputs": {"human_scores": ""}}, ConfigError, "give a path"),
        ({"key": "toy:table9", "roles": {"jduge": RoleModel(model="x")}}, ConfigError, "jduge"),
        ({"key": "toy:table9", "model": "openai/gpt-4.1"}, ConfigError, "OPENAI_API_KEY"),
    ],
)
def test_bad_input_is_refused_before_anything_runs(
    toy_paper: Path,
    kwargs: dict,
    error: type[Exception],
    needle: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    kwargs = {"model": "scripted", **kwargs}
    key = kwargs.pop("key")
    with pytest.raises(error) as caught:
        run_reproduction(key, runs_dir=toy_paper, **kwargs)
    assert needle in str(caught.value)
    assert not toy_paper.exists(), "a refused reproduction writes nothing"


def test_a_malformed_published_table_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text(yaml.safe_dump({**PUBLISHED, "rows": [{"method": "X", "values": {"z": 1}}]}))
    with pytest.raises(ConfigError, match="unknown columns"):
        load_published(bad)
    bad.write_text("paper: [")
    with pytest.raises(ConfigError, match=r"t\.yaml: not a published table"):
        load_published(bad)


def test_find_reproduction_reads_keys_case_insensitively(toy_paper: Path) -> None:
    assert find_reproduction("TOY:Table9").reproduction is TOY


def test_python_api_reproduces_like_the_cli(toy_paper: Path) -> None:
    outcome = reproduce("toy:table9", model="scripted", limit=1, runs_dir=toy_paper)
    assert [r.label for r in outcome.result.tables[0].rows] == ["Frontier", "ReAct"]
    assert (outcome.out_dir / "report.html").is_file()


def _two_model_runs(ctx: object) -> list[ReproRun]:
    return [
        ReproRun(key="first", agent="react", label="ReAct", seed=0),
        ReproRun(key="second", agent="react", label="ReAct again", seed=1),
    ]


TWO_RUNS = Reproduction(
    key="toy:table11",
    title="Table 11: the same agent twice",
    runs=_two_model_runs,
    compute=metric_table([("ReAct", "first"), ("ReAct again", "second")]),
    published="table9.yaml",
)


async def test_budget_covers_every_run_and_stops_before_the_next(
    toy_paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(GridDagBenchmark, "reproductions", lambda self: [TWO_RUNS])
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "schema_version: 1\nmodels:\n  griddag-frontier:\n"
        "    input: 1000000\n    cached_input: 1000000\n    output: 1000000\n"
    )
    options = RunOptions(concurrency=1, progress=False, budget_usd=1.0, prices_path=str(prices))
    async with MockServer() as server:
        assert server.base_url
        outcome = await reproduce_async(
            "toy:table11",
            model="openai-compat/griddag-frontier",
            model_options=ModelOptions(base_url=server.base_url),
            limit=2,
            runs_dir=toy_paper,
            options=options,
        )
    assert outcome.budget_exhausted
    assert list(outcome.runs) == ["first"], "the second run never starts once the budget is spent"
    assert outcome.result.tables == []
    assert "--budget-usd was spent before every run finished" in outcome.result.notes[0]
    record = json.loads((outcome.out_dir / "reproduction.json").read_text())
    assert record["budget_exhausted"] is True


def test_estimate_prices_every_run_and_runs_nothing(
    toy_paper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["reproduce", "toy:table9", "--model", "openai/gpt-4.1", "--estimate", "--limit", "1"]
    code, out, err = run_cli([*args, "--runs-dir", str(toy_paper)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    frontier = next(line for line in lines if "frontier" in line and "│" in line)
    assert frontier.split("│")[3].strip() == "0", "a reference agent makes no calls"
    total = next(line for line in lines if "total" in line)
    react = next(line for line in lines if " react " in line)
    assert total.split("│")[3].strip() == react.split("│")[3].strip() != "0"
    assert not toy_paper.exists(), "an estimate writes nothing"
    code, _, err = run_cli(["reproduce", "toy:table9", "--model", "scripted", "--estimate"], capsys)
    assert code == 2 and "--estimate prices a real model" in err


NAMED_BY_THE_ISSUE = {
    "explore-exploit:table2",
    "explore-exploit:figure4",
    "explore-exploit:figure5",
    "mutate:table2",
    "mutate:table3",
    "mutate:table10",
    "mutate:table15",
    "mutate:table4",  # the AUT table
    "eeb:table4",
    "eeb:table5",
    "eeb:table6",
    "eeb:table7",
    "turtlesoup:table2",
    "turtlesoup:table3",
    "creativebench:table3",
}


def test_every_paper_table_is_listed_and_plans_offline() -> None:
    """The registry's reproductions: the tables the papers print, each with its published
    numbers loaded and every run given a scripted stand-in for `--model scripted`."""
    listed = list_reproductions()
    keys = [entry.reproduction.key for entry in listed]
    assert len(keys) == len(set(keys))
    assert set(keys) >= NAMED_BY_THE_ISSUE
    for entry in listed:
        paper = entry.reproduction.key.split(":")[0]
        if entry.published is not None:
            assert entry.published.paper in (paper, "mutate-redna"), entry.reproduction.key
            assert entry.published.rows and entry.published.columns
        ctx = ReproContext(model="scripted", limit=1)
        specs = plan_specs(entry, ctx)
        assert specs, entry.reproduction.key
        for spec in specs.values():
            assert spec.model is None or spec.model.startswith("scripted/"), spec


async def _make_input(ctx: ReproContext) -> dict[str, Path]:
    path = ctx.out_dir / "made.txt"
    if not path.exists():  # resumable: made once
        path.write_text(f"made for {ctx.model}\n", encoding="utf-8")
    return {"made": path}


def _note_the_input(runs: object, published: object, ctx: ReproContext) -> ReproResult:
    return ReproResult(notes=[ctx.inputs["made"].read_text(encoding="utf-8").strip()])


PREPARED = Reproduction(
    key="toy:table12",
    title="Table 12: an input the reproduction makes itself",
    runs=lambda ctx: [ReproRun(key="frontier", agent="frontier", needs_model=False)],
    compute=_note_the_input,
    inputs={"made": "a file `prepare` writes when not given"},
    prepare=_make_input,
)


def test_prepare_makes_the_inputs_the_user_did_not_give(
    toy_paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(GridDagBenchmark, "reproductions", lambda self: [PREPARED])
    made = run_reproduction("toy:table12", model="scripted", limit=1, runs_dir=toy_paper)
    assert made.result.notes[0] == "made for scripted"
    assert (made.out_dir / "made.txt").is_file()
    given = tmp_path / "mine.txt"
    given.write_text("my own\n")
    mine = run_reproduction(
        "toy:table12", model="scripted", limit=1, inputs={"made": given}, runs_dir=toy_paper
    )
    assert mine.result.notes[0] == "my own"


def test_estimate_prices_the_judge_as_its_model_and_caps_above_expected() -> None:
    bare = estimate_reproduction("mutate:table3", model="openai/gpt-4.1", limit=1)
    judged = estimate_reproduction(
        "mutate:table3",
        model="openai/gpt-4.1",
        roles={"judge": RoleModel(model="openai/gpt-4.1")},
        limit=1,
    )
    assert judged.expected_calls > bare.expected_calls
    assert judged.expected_cost_usd > bare.expected_cost_usd > 0
    for row in [*bare.rows, *judged.rows]:
        _, _, calls, calls_cap, _, usd, usd_cap = row
        assert calls_cap >= calls and usd_cap >= usd, row
    assert any("completion tokens per agent call assumed" in n for n in judged.notes)


@pytest.mark.parametrize(
    ("note", "sentence"),
    [
        ("the paper fits 13 models", "The paper fits 13 models."),
        ("Already a sentence.", "Already a sentence."),
        ("scripted/griddag-noisy plays offline", "scripted/griddag-noisy plays offline."),
        ("explore_averaging decides", "explore_averaging decides."),
        ("Protocol:", "Protocol:"),
    ],
)
def test_notes_read_as_sentences(note: str, sentence: str) -> None:
    assert as_sentence(note) == sentence


def test_the_page_rebuild_command_is_the_users_own_shell_quoted(toy_paper: Path) -> None:
    outcome = run_reproduction(
        "toy:table9", model="scripted", limit=1, compare_to="gemini", runs_dir=toy_paper
    )
    html = (outcome.out_dir / "report.html").read_text()
    assert (
        "forkingpaths reproduce toy:table9 --model scripted --compare-to gemini --limit 1" in html
    )


def test_role_models_keep_their_own_page(toy_paper: Path) -> None:
    assert setup_digest(ModelOptions(), {}) == ""
    judged = setup_digest(ModelOptions(), {"judge": RoleModel(model="scripted/escape-judge")})
    ctx = ReproContext(model="scripted")
    assert reproduction_dir(toy_paper, "toy:table9", ctx) != reproduction_dir(
        toy_paper, "toy:table9", ctx, judged
    )


def test_a_difference_below_the_printed_precision_is_shown() -> None:
    column = PublishedColumn(key="x", label="X", decimals=1)
    table = ResultTable(
        title="t", columns=[column], rows=[ResultRow("a", {"x": 50.02}, {"x": 50.0})]
    )
    assert result_table(table).rows[0] == ["a", "50.0", "50.0", "+0.020"]


def test_benchmark_options_switch_a_deviation_on_every_run(toy_paper: Path) -> None:
    outcome = run_reproduction(
        "toy:table9",
        model="scripted",
        limit=1,
        benchmark_options={"budget_alpha": 3},
        runs_dir=toy_paper,
    )
    for path in outcome.runs.values():
        spec = json.loads((path / "spec.json").read_text())
        assert spec.get("spec", spec)["benchmark_options"] == {"budget_alpha": 3}
    assert any("budget_alpha=3 (-b)" in note for note in outcome.result.notes)
    plain = run_reproduction("toy:table9", model="scripted", limit=1, runs_dir=toy_paper)
    assert plain.out_dir != outcome.out_dir, "a variant keeps its own page"
    with pytest.raises(ConfigError, match="-b budget_alfa: no benchmark of toy:table9"):
        run_reproduction(
            "toy:table9", model="scripted", benchmark_options={"budget_alfa": 3}, runs_dir=toy_paper
        )


def test_estimate_prices_the_variant_the_user_asked_for(toy_paper: Path) -> None:
    paper = estimate_reproduction("toy:table9", model="openai/gpt-4.1", limit=1)
    tight = estimate_reproduction(
        "toy:table9", model="openai/gpt-4.1", limit=1, benchmark_options={"budget_alpha": 1}
    )
    # A third of the paper's step budget caps the ReAct run's calls lower.
    assert tight.upper_calls < paper.upper_calls
    with pytest.raises(ConfigError, match="-b budget_alfa"):
        estimate_reproduction(
            "toy:table9", model="openai/gpt-4.1", benchmark_options={"budget_alfa": 1}
        )
