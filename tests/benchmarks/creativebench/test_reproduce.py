"""`creativebench:table3` offline: the scripted solver's runs (vanilla, and the evolved prompts
given as inputs) beside the published rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.creativebench.agents.solver import prompt_digest, read_prompt_file
from forkingpaths.benchmarks.creativebench.agents.steered import file_digest
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.benchmarks.creativebench.reproduce import (
    AVERAGED,
    EVOLVED,
    EVOREPE_LABELS,
    EVOREPE_MISSING,
    EVOREPE_OFFLINE,
    averaging_note,
    missing_note,
)
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.reproduce import PublishedTable, ReproContext, load_published
from forkingpaths.runner.reproduce import find_reproduction, plan_specs, run_reproduction

PUBLISHED = (
    Path(__file__).parents[3]
    / "src/forkingpaths/benchmarks/creativebench/data/published/table3.yaml"
)
KEY = "creativebench:table3"
ALPHA, GEPA = EVOLVED


def published_values(table: PublishedTable, model: str, method: str) -> dict[str, float | None]:
    (row,) = [r for r in table.rows if r.model == model and r.method == method]
    return dict(row.values)


def run_spec(run_dir: Path) -> dict[str, object]:
    return dict(json.loads((run_dir / "spec.json").read_text())["spec"])


def spec_instances(run_dir: Path) -> object:
    return run_spec(run_dir)["instances"]


def test_table3_yaml_holds_the_printed_numbers() -> None:
    table = load_published(PUBLISHED)
    assert table.models() == ["Qwen2.5-7B-Instruct", "Gemini-2.5-Flash-Lite"]
    assert table.value("Qwen2.5-7B-Instruct", "AlphaEvolve + EvoRePE", "combo_creativity") == 0.193
    assert table.value("Gemini-2.5-Flash-Lite", "GEPA", "explore_pass_at_1") == 27.88
    assert table.value("Gemini-2.5-Flash-Lite", "GEPA", "explore_pass_at_1_std") == 0.18
    assert [r.method for r in table.rows if r.model == "Gemini-2.5-Flash-Lite"] == [
        "Vanilla Prompt",
        "AlphaEvolve",
        "GEPA",
    ]
    (repro,) = CreativeBenchmark().reproductions()
    assert repro.key == KEY
    assert set(repro.optional_inputs) == {"alphaevolve_prompt", "gepa_prompt", "evorepe_vector"}
    assert "pip install -e '.[hf]'" in repro.optional_inputs["evorepe_vector"]


def test_table3_without_inputs_runs_vanilla_and_says_which_input_fills_each_row(
    tmp_path: Path,
) -> None:
    outcome = run_reproduction(
        KEY, model="scripted", compare_to="Gemini-2.5-Flash-Lite", limit=2, runs_dir=tmp_path
    )
    table, release = outcome.result.tables
    published = load_published(PUBLISHED)
    assert table.published_model == "Gemini-2.5-Flash-Lite"
    assert [r.label for r in table.rows] == ["Vanilla Prompt", "AlphaEvolve", "GEPA"]
    for row in table.rows:
        assert row.published == published_values(published, "Gemini-2.5-Flash-Lite", row.label)
    vanilla, alpha, gepa = table.rows
    assert set(alpha.ours.values()) == {None} and set(gepa.ours.values()) == {None}
    assert list(outcome.runs) == ["vanilla"]
    # --limit 2 of split `all`: the first Combo and the first Explore problem. The scripted
    # solver answers the reference solution but for its misses (`scripted.misses`): combo-01
    # at seeds 43 and 50 of 42-51, run-length-encode's four levels 10 times in 40 rows.
    assert spec_instances(outcome.runs["vanilla"]) == ["combo-01", "run-length-encode"]
    assert vanilla.ours["combo_pass_at_1"] == pytest.approx(80.0)
    assert vanilla.ours["combo_pass_at_1_std"] == pytest.approx(42.1637021)
    assert round(vanilla.ours["combo_novelty"] or 0.0, 4) == 0.9930
    assert round(vanilla.ours["combo_creativity"] or 0.0, 4) == 0.7719
    assert vanilla.ours["explore_pass_at_1"] == pytest.approx(75.0)
    assert round(vanilla.ours["explore_novelty"] or 0.0, 4) == 0.9189
    # A spread has no difference to show; a mean has.
    shown = {c.key: c.difference for c in table.columns}
    assert shown["combo_pass_at_1"] and not shown["combo_pass_at_1_std"]
    assert [k for k, d in shown.items() if not d] == [k for k in shown if k.endswith("_std")]
    assert missing_note(ALPHA) in table.notes and missing_note(GEPA) in table.notes
    assert "--input alphaevolve_prompt=FILE" in missing_note(ALPHA)
    assert "--method island" in missing_note(ALPHA)
    assert EVOREPE_MISSING in table.notes and "pip install -e '.[hf]'" in EVOREPE_MISSING
    assert "--input evorepe_vector=v.pt" in EVOREPE_MISSING
    assert "Novelty's embedding here: ast-tfidf-calibrated (the paper's: CodeXEmbed)." in (
        table.notes
    )
    # The main table follows the paper's averaging (Eq. 4: constrained levels only) and says
    # so; the second re-scores the same records as the release's eval_explore.py does (every
    # row, level 0 with novelty 0): 3 of run-length-encode's 4 levels carry novelty, so Novelty
    # and Creativity are 3/4 of the paper's, Pass@1 and Combo unchanged.
    assert averaging_note("paper", "release") in table.notes
    assert "eval_explore.py:119,147-148" in averaging_note("paper", "release")
    assert release.published_model == "Gemini-2.5-Flash-Lite"
    assert [c.key for c in release.columns] == list(AVERAGED)
    (rescored,) = release.rows
    assert rescored.label == "Vanilla Prompt"
    assert rescored.published == {
        k: published_values(published, "Gemini-2.5-Flash-Lite", "Vanilla Prompt")[k]
        for k in AVERAGED
    }
    assert round(rescored.ours["explore_novelty"] or 0.0, 4) == 0.6892
    assert round(rescored.ours["explore_creativity"] or 0.0, 4) == 0.5002
    for key in ("explore_novelty", "explore_creativity"):
        assert rescored.ours[key] == pytest.approx(0.75 * (vanilla.ours[key] or 0.0))
        assert rescored.ours[f"{key}_std"] == pytest.approx(
            0.75 * (vanilla.ours[f"{key}_std"] or 0)
        )
    # A vector under --model scripted: nothing to steer, the EvoRePE rows stay the paper's
    # (and the vanilla run resumes: same spec, same directory).
    vector = tmp_path / "v.pt"
    vector.write_bytes(b"not read offline")
    again = run_reproduction(
        KEY, model="scripted", limit=2, inputs={"evorepe_vector": vector}, runs_dir=tmp_path
    )
    table, _release = again.result.tables
    assert list(again.runs) == ["vanilla"] and again.runs["vanilla"] == outcome.runs["vanilla"]
    assert EVOREPE_OFFLINE in table.notes and EVOREPE_MISSING not in table.notes
    for label in EVOREPE_LABELS.values():
        (row,) = [r for r in table.rows if r.label == label]
        assert set(row.ours.values()) == {None}


def test_evolved_prompts_given_as_inputs_fill_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # AlphaEvolve: the island search's own file, at its smallest budget, trained on combo-25.
    island = tmp_path / "island.json"
    args = ["creativebench", "evolve", "--model", "scripted/creative-solver", "--role",
            "judge=scripted/constraint-judge", "--out", str(island), "--split", "combo", "--train",
            "1", "--generations", "1", "--islands", "1", "--population", "1"]  # fmt: skip
    code, printed, err = run_cli(args, capsys)
    assert code == 0, err
    assert "reproduce creativebench:table3 --model scripted/creative-solver --input " in printed
    assert f"--input alphaevolve_prompt={island}\n" in printed
    assert json.loads(island.read_text())["settings"]["train_instances"] == ["combo-25"]
    # GEPA (the gepa package is an optional extra): a file in the same format, trained on
    # combo-01, so its row plays combo-02.
    instruction = "Solve the problem with the shortest correct program you can find."
    gepa = tmp_path / "gepa.json"
    gepa.write_text(
        json.dumps(
            {
                "prompt": instruction,
                "method": "gepa",
                "score": 1.0,
                "seed_prompt": "",
                "seed_score": 0.0,
                "settings": {"split": "combo", "train_instances": ["combo-01"]},
                "usage": {"calls": 0},
                "history": [],
                "calls": [],
            }
        )
    )

    outcome = run_reproduction(
        KEY,
        model="scripted",
        limit=1,
        inputs={"alphaevolve_prompt": island, "gepa_prompt": gepa},
        runs_dir=tmp_path / "runs",
    )
    table, release = outcome.result.tables
    published = load_published(PUBLISHED)
    assert table.published_model == "Qwen2.5-7B-Instruct"
    # --limit 1 plays no Explore problem: the re-scored Explore cells are empty.
    assert [r.label for r in release.rows] == ["Vanilla Prompt", "AlphaEvolve", "GEPA"]
    assert {v for r in release.rows for v in r.ours.values()} == {None}
    labels = [r.label for r in table.rows]
    assert labels == [r.method for r in published.rows if r.model == "Qwen2.5-7B-Instruct"]
    rows = {r.label: r for r in table.rows}
    for row in table.rows:
        assert row.published == published_values(published, "Qwen2.5-7B-Instruct", row.label)
    assert list(outcome.runs) == ["vanilla", "alphaevolve", "gepa"]

    # Each row is its run: the prompt solver with the file (pinned by its digest), split all
    # without the file's training instances (--limit 1 keeps the first left), 10 trials, T 0.1.
    alpha_spec = run_spec(outcome.runs["alphaevolve"])
    gepa_spec = run_spec(outcome.runs["gepa"])
    assert alpha_spec["agent"] == gepa_spec["agent"] == "prompt"
    assert alpha_spec["agent_options"] == {
        "prompt_file": str(island.resolve()),
        "prompt_sha256": prompt_digest(read_prompt_file(island)),
    }
    assert (alpha_spec["split"], alpha_spec["instances"]) == ("all", ["combo-01"])
    assert (gepa_spec["split"], gepa_spec["instances"]) == ("all", ["combo-02"])
    assert alpha_spec["trials"] == gepa_spec["trials"] == 10
    assert gepa_spec["model_options"]["params"]["temperature"] == 0.1  # type: ignore[index]

    for label, key in (("AlphaEvolve", "alphaevolve"), ("GEPA", "gepa")):
        metrics = json.loads((outcome.runs[key] / "metrics.json").read_text())["metrics"]
        ours = rows[label].ours
        assert ours["combo_novelty"] == metrics["combo_novelty"]
        assert ours["combo_pass_at_1"] == 100 * metrics["combo_pass_at_1"]
    # The scripted solver answers by the task and the seed, whatever the instruction: the
    # AlphaEvolve row plays combo-01 as the vanilla row does (misses at seeds 43 and 50).
    alpha = rows["AlphaEvolve"].ours
    assert alpha == rows["Vanilla Prompt"].ours
    assert (alpha["combo_pass_at_1"], alpha["combo_pass_at_1_std"]) == (
        pytest.approx(80.0),
        pytest.approx(42.1637021),
    )
    # GEPA plays combo-02, missed at seeds 44, 46 and 51: Pass@1 70 %, and Creativity the
    # novelty of the 7 passing trials over all 10 (Quality x Novelty, Eq. 2).
    ours = rows["GEPA"].ours
    assert ours["combo_pass_at_1"] == pytest.approx(70.0)
    metrics = json.loads((outcome.runs["gepa"] / "metrics.json").read_text())["metrics"]
    assert ours["combo_creativity"] == pytest.approx(0.7 * metrics["combo_novelty_passed"])
    assert ours["explore_pass_at_1"] is None
    # The EvoRePE rows stay the paper's alone.
    for label in EVOREPE_LABELS.values():
        assert set(rows[label].ours.values()) == {None}
    assert missing_note(ALPHA) not in table.notes and missing_note(GEPA) not in table.notes
    (gepa_note,) = [n for n in table.notes if n.startswith("GEPA: the prompt solver")]
    assert f"sha256 {prompt_digest(instruction)[:12]}" in gepa_note
    assert "trained on 1 combo instance(s), left out here" in gepa_note
    assert "10 episode(s)" in gepa_note


def write_prompt(path: Path, **fields: object) -> Path:
    path.write_text(json.dumps({"prompt": "Be original.", **fields}))
    return path


def test_bad_prompt_inputs_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    island = write_prompt(tmp_path / "island.json", method="island")
    cases = [
        (
            {"gepa_prompt": island},
            f"--input gepa_prompt={island}: field 'method': got \"island\"; this row takes a "
            "file of `creativebench evolve --method gepa`; give it as --input alphaevolve_prompt",
        ),
        (
            {"alphaevolve_prompt": write_prompt(tmp_path / "bad.json", prompt=" ")},
            f"--input alphaevolve_prompt={tmp_path / 'bad.json'}: prompt_file "
            f"{tmp_path / 'bad.json'}: field 'prompt': expected non-empty text",
        ),
        (
            {
                "alphaevolve_prompt": write_prompt(
                    tmp_path / "t.json", settings={"train_instances": 3}
                )
            },
            f"--input alphaevolve_prompt={tmp_path / 't.json'}: field 'settings.train_instances': "
            "expected a list of instance ids, got 3",
        ),
        (
            {
                "gepa_prompt": write_prompt(
                    tmp_path / "all.json",
                    settings={
                        "train_instances": [i.id for i in CreativeBenchmark().instances("all")]
                    },
                )
            },
            f"--input gepa_prompt={(tmp_path / 'all.json').resolve()}: the prompt was trained on "
            "every instance of split all",
        ),
    ]
    for inputs, message in cases:
        with pytest.raises(ConfigError) as raised:
            run_reproduction(KEY, model="scripted", limit=1, inputs=inputs, runs_dir=tmp_path)
        assert str(raised.value).startswith(message), str(raised.value)
        assert "\n" not in str(raised.value)
    assert not (tmp_path / "reproduce-creativebench-table3-scripted-limit1").exists()
    code, _out, err = run_cli(
        ["reproduce", KEY, "--model", "scripted", "--input", f"gepa_prompt={island}"], capsys
    )
    assert code != 0 and "Traceback" not in err
    assert "field 'method'" in " ".join(err.split())


def test_a_vector_on_an_hf_model_plans_the_evorepe_rows_as_ordinary_runs(tmp_path: Path) -> None:
    island = write_prompt(
        tmp_path / "island.json", method="island", settings={"train_instances": ["combo-25"]}
    )
    vector = tmp_path / "v.pt"
    vector.write_bytes(b"a vector file")  # read only when an episode starts (the hf extra)
    ctx = ReproContext(
        model="hf/Qwen/Qwen2.5-7B-Instruct",
        inputs={"alphaevolve_prompt": island, "evorepe_vector": vector},
    )
    specs = plan_specs(find_reproduction(KEY), ctx)
    assert list(specs) == ["vanilla", "alphaevolve", "vanilla_evorepe", "alphaevolve_evorepe"]
    steering = {"evorepe_vector": str(vector.resolve()), "evorepe_sha256": file_digest(vector)}
    plain, evolved = specs["vanilla_evorepe"], specs["alphaevolve_evorepe"]
    assert (plain.agent, plain.agent_options, plain.instances) == ("evorepe", steering, None)
    assert evolved.agent == "evorepe"
    assert evolved.agent_options == {**steering, **specs["alphaevolve"].agent_options}
    all_ids = [i.id for i in CreativeBenchmark().instances("all")]
    assert evolved.instances == [i for i in all_ids if i != "combo-25"]
    for spec in (plain, evolved):
        assert spec.model == "hf/Qwen/Qwen2.5-7B-Instruct"
        assert (spec.split, spec.trials, spec.model_options.params.temperature) == ("all", 10, 0.1)
    ctx = ReproContext(model="openai/gpt-4.1", inputs={"evorepe_vector": vector})
    with pytest.raises(ConfigError) as raised:
        plan_specs(find_reproduction(KEY), ctx)
    assert str(raised.value) == (
        "--input evorepe_vector: the '+ EvoRePE' rows steer a local transformers model; pass "
        "--model hf/MODEL (the hf extra: pip install -e '.[hf]'), got --model openai/gpt-4.1"
    )
