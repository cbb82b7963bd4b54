"""TurtleSoup protocol end to end: dialogue, roles, ablations, import/run contract, human play."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.turtlesoup.players import Asker, scripted
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.turtlesoup.benchmark import (
    SCORES,
    TurtleSoupBenchmark,
    TurtleSoupOptions,
)
from forkingpaths.benchmarks.turtlesoup.dialogue import SOLVE_COMMAND
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.models.scripted import ScriptedModel

FIXTURES = Path(__file__).parent / "fixtures"
ROLES = {"responder": "scripted/turtlesoup-responder", "judge": "scripted/turtlesoup-judge"}


def record_for(instance_id: str) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t", benchmark="turtlesoup-v1", split="all", instance_id=instance_id, seed=0,
        agent="asker",
    )  # fmt: skip


async def test_dialogue_counts_turns_repeats_and_invalid_questions() -> None:
    bench = TurtleSoupBenchmark(max_turns=4)
    instance = bench.instance("clever_logic-04-en")
    agent = Asker(["Was the fire started by sunlight?", "", "Was the fire started by sunlight?"])
    record = record_for(instance.id)
    roles = {"responder": scripted("turtlesoup-responder"), "judge": scripted("turtlesoup-judge")}
    await bench.run_episode(instance, agent, record, roles)  # type: ignore[arg-type]
    asked = [s for s in record.steps if "answer" in s.info]
    assert len(record.steps) == 5  # 4 turns + the summary
    assert not record.steps[1].valid and record.steps[1].info["reason"] == "empty question"
    assert asked[1].info["repeated"] is True
    assert record.outcome["repeated_questions"] == 1 and record.outcome["invalid_questions"] == 1
    assert all(c.purpose in ("respond", "key_clue") for s in asked for c in s.calls)
    metrics = bench.episode_metrics(record)
    assert metrics["judged"] and metrics["turns"] == 4
    # An empty summary scores zero, as a real zero and not as missing.
    assert metrics["overall"] == 0.0


async def test_key_clue_ablation_turns_the_flag_off_in_the_responder() -> None:
    bench = TurtleSoupBenchmark(max_turns=3)
    instance = bench.instance("crime_thriller-01-en")
    agent = Asker(["Is the graffiti a signal?"] * 3)
    agent.key_clues = False
    record = record_for(instance.id)
    await bench.run_episode(
        instance, agent, record, {"responder": scripted("turtlesoup-responder")}
    )  # type: ignore[arg-type]
    assert record.initial_info["key_clues"] is False
    assert not [c for s in record.steps for c in s.calls if c.purpose == "key_clue"]
    assert record.outcome["evaluation"] is None  # no judge: not evaluated, never a silent 0
    assert bench.episode_metrics(record)["overall"] is None


async def test_offline_env_refuses_bad_questions_and_moves_to_the_summary_at_the_limit() -> None:
    bench = TurtleSoupBenchmark(max_turns=3)
    env = bench.make_env(bench.instance("original-01-en"))
    observation = env.reset()
    assert observation.data["turn"] == 1 and observation.data["phase"] == "ask"
    assert observation.data["initial_info"] == {
        "surface": bench.puzzle(bench.instance("original-01-en")).surface,
        "category": "original",
        "language": "en",
        "responder": "lexical",
        "judge": None,
        "key_clues": True,
    }
    refused = await env.astep("???")
    assert refused.info == {
        "turn": 1,
        "valid": False,
        "reason": "not a question",
        "feedback": "Invalid question (not a question).",
    }
    await env.astep("Did the suspect laugh?")
    last = await env.astep("Did the suspect laugh?")
    # The last question ends the questioning, not the episode: the summary follows.
    assert not last.done and last.info["repeated"] and last.info["question_limit"] == 3
    assert last.observation.data["phase"] == "summarize"
    assert last.calls == []  # the lexical responder calls no model
    end = await env.astep("A summary.")
    assert end.terminated and end.info == {"phase": "summary", "feedback": ""}
    assert end.observation.data["outcome"] == {
        "turns": 3,
        "questions": 2,
        "key_clues_hit": 1,  # the suspect laughing is a clue; asked twice, it counts once
        "repeated_questions": 1,
        "invalid_questions": 1,
        "summary": "A summary.",
        "evaluation": None,
    }
    with pytest.raises(ResetNeeded):
        await env.astep("Once more?")


@pytest.mark.parametrize(("options", "seed"), [({}, 42), ({"model_seed": None}, None)])
async def test_responder_and_judge_calls_carry_the_model_seed(
    options: dict[str, object], seed: int | None
) -> None:
    bench = TurtleSoupBenchmark(max_turns=5, **options)
    roles = {"responder": scripted("turtlesoup-responder"), "judge": scripted("turtlesoup-judge")}
    env = bench.make_env(bench.instance("clever_logic-03-en"), roles)  # type: ignore[arg-type]
    env.reset()
    asked = await env.astep("Did Tomasz listen to live radio commentary through an earphone?")
    await env.astep(SOLVE_COMMAND)
    end = await env.astep("Tomasz heard each penalty on the radio before the delayed stream.")
    calls = [*asked.calls, *end.calls]
    assert {c.purpose for c in calls} >= {"respond", "key_clue", "conclusion"}
    assert {(c.params.temperature, c.params.seed) for c in calls if c.params} == {(0.0, seed)}
    assert all(c.params is not None for c in calls)


def test_model_seed_option_is_checked() -> None:
    with pytest.raises(ConfigError, match="model_seed"):
        TurtleSoupBenchmark(model_seed=-1)
    with pytest.raises(ConfigError, match="model_seed"):
        TurtleSoupBenchmark(model_seed="42")


async def test_env_plays_the_protocol_with_its_role_models() -> None:
    bench = TurtleSoupBenchmark(max_turns=5)
    instance = bench.instance("clever_logic-03-en")
    roles = {"responder": scripted("turtlesoup-responder"), "judge": scripted("turtlesoup-judge")}
    env = bench.make_env(instance, roles)  # type: ignore[arg-type]
    first = env.reset(options={"key_clues": True})
    assert (first.data["initial_info"]["responder"], first.data["initial_info"]["judge"]) == (
        "scripted/turtlesoup-responder",
        "scripted/turtlesoup-judge",
    )
    asked = await env.astep("Did Tomasz listen to live radio commentary through an earphone?")
    assert [c.purpose for c in asked.calls] == ["respond", "key_clue"]
    assert (asked.info["answer"], asked.info["feedback"]) == ("Yes", "Yes<Key Clue>")
    solve = await env.astep(SOLVE_COMMAND)
    assert solve.info == {"phase": "solve", "feedback": ""} and solve.calls == []
    assert solve.observation.data["phase"] == "summarize" and not solve.done
    end = await env.astep("Tomasz heard each penalty on the radio before the delayed stream.")
    assert end.terminated
    assert {c.purpose for c in end.calls} <= {"extract", "match", "conclusion"}
    assert [c.purpose for c in end.calls][-1] == "conclusion"
    outcome = end.observation.data["outcome"]
    assert (outcome["turns"], outcome["questions"], outcome["judge"]) == (
        1,
        1,
        "scripted/turtlesoup-judge",
    )
    assert (
        outcome["evaluation"]["puzzle_id"] == instance.id and "calls" not in outcome["evaluation"]
    )


def test_reset_options_carry_the_key_clue_ablation_and_the_questioner() -> None:
    bench = TurtleSoupBenchmark()
    instance = bench.instance("original-01-en")
    agent = Asker([])
    assert bench.reset_options(instance, agent) == {"key_clues": True, "questioner": None}  # type: ignore[arg-type]
    agent.key_clues = False
    agent.model = model = scripted("turtlesoup-questioner")  # type: ignore[attr-defined]
    options = bench.reset_options(instance, agent)  # type: ignore[arg-type]
    assert options == {"key_clues": False, "questioner": model}


async def test_records_keep_the_v1_step_layout() -> None:
    """The env's feedback and turn limit land in the record as v1 records have them."""
    bench = TurtleSoupBenchmark(max_turns=2)
    instance = bench.instance("original-01-en")
    record = record_for(instance.id)
    await bench.run_episode(instance, Asker(["{}", "Did the suspect laugh?"], "S"), record)  # type: ignore[arg-type]
    refused, asked, summary = record.steps
    assert (refused.valid, refused.feedback, refused.truncated) == (
        False,
        "Invalid question (not a question).",
        False,
    )
    assert list(refused.info.items()) == [
        ("turn", 1),
        ("valid", False),
        ("reason", "not a question"),
    ]
    # The record's feedback is the reply the questioner read; its next observation is the dialogue.
    assert (asked.feedback, asked.truncated, asked.terminated) == ("Unknown<Key Clue>", True, False)
    assert asked.info == {
        "turn": 2,
        "answer": "Unknown",
        "key_clue": True,
        "repeated": False,
        "responder_failed": False,
    }
    surface = bench.puzzle(instance).surface
    assert (
        asked.observation == f"Surface: {surface}\n\nQuestion 2 (1 left): ask one yes/no question."
    )
    assert summary.observation.endswith(
        "Questioning is over. Write your summary of the full story (the bottom)."
    )
    assert (summary.feedback, summary.terminated, summary.info) == ("", True, {"phase": "summary"})
    assert record.initial_observation == refused.observation
    assert list(record.initial_info) == [
        "surface", "category", "language", "responder", "judge", "key_clues",
    ]  # fmt: skip
    assert record.outcome["summary"] == "S" and record.outcome["evaluation"] is None


def test_mosaic_quick_run_records_every_role_and_recomputes(tmp_path: Path) -> None:
    result = run(
        "turtlesoup",
        agent="mosaic",
        model="scripted/turtlesoup-questioner",
        instances=["mind_game-02-en", "mind_game-02-zh"],
        roles=ROLES,
        benchmark_options={"max_turns": 6},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    metrics = result.metrics["metrics"]
    assert metrics["episodes"] == 2 and metrics["judged_episodes"] == 2
    assert set(metrics["by_group"]) == {"all / en", "all / zh", "mind_game / en", "mind_game / zh"}
    record = next(iter(result.records()))
    purposes = {c.purpose for s in record.steps for c in s.calls}
    assert {"respond", "key_clue", "candidates", "match", "conclusion"} <= purposes
    summary = json.loads(record.outcome["summary"])
    assert set(summary) == {"logic", "details", "conclusion"}
    bench = TurtleSoupBenchmark(max_turns=6)
    assert bench.episode_metrics(record) == record.metrics


def test_responder_and_judge_default_to_the_questioner_model(tmp_path: Path) -> None:
    result = run(
        "turtlesoup",
        agent="baseline",
        model="scripted/echo",
        instances=["supernatural-01-en"],
        benchmark_options={"max_turns": 2},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    (record,) = list(result.records())
    assert record.initial_info["responder"] == record.initial_info["judge"] == "scripted/echo"
    # echo does not answer responder prompts: every answer fails, is retried and recorded as
    # Unknown with the failure counted (never a crash).
    assert record.metrics["responder_failures"] == 2


def test_import_json_contract_and_run_on_imported_puzzles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = FIXTURES / "release"
    code, out, err = run_cli(["turtlesoup", "import", str(release), "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert list(report) == [
        "instances",
        "puzzles",
        "languages",
        "categories",
        "errors",
        "warnings",
        "warning_kinds",
    ]
    assert report["instances"] > 0 and set(report["languages"]) <= {"en", "zh"}
    code, out, err = run_cli(
        ["run", "turtlesoup", "--puzzles", str(release), "--agent", "mosaic", "--model",
         "scripted/turtlesoup-questioner", "--role", "responder=scripted/turtlesoup-responder",
         "--role", "judge=scripted/turtlesoup-judge", "--max-turns", "3", "--runs-dir",
         str(tmp_path), "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    records = load_records(next(tmp_path.iterdir()))
    assert len(records) == report["instances"]
    assert all(r.status == "ok" for r in records)


def test_options_are_one_model_with_the_papers_defaults(tmp_path: Path) -> None:
    assert TurtleSoupBenchmark.Options is TurtleSoupOptions
    bench = TurtleSoupBenchmark()
    assert bench.config == TurtleSoupOptions(puzzles=None, max_turns=30, allow_no_clues=False)
    assert bench.options == {}
    (tmp_path / "x").mkdir()
    given = TurtleSoupBenchmark(puzzles=str(tmp_path / "." / "x" / ".."), max_turns=4)
    # The resolved path is what the run spec records.
    assert given.options == {"puzzles": str(tmp_path.resolve()), "max_turns": 4}
    short = TurtleSoupBenchmark(max_turns=4)
    assert short.max_steps(short.instance("original-01-en")) == 5  # the questions + the summary


def test_bad_options_are_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError) as missing:
        TurtleSoupBenchmark(puzzles="/no/such/puzzles")
    assert str(missing.value) == (
        "turtlesoup option puzzles (a puzzle file or directory played instead of the shipped "
        "corpus: ours, the paper's release or TurtleBench): no such file or directory, got "
        '"/no/such/puzzles"'
    )
    with pytest.raises(ConfigError, match=r"option max_turns .*greater than or equal to 1, got 0"):
        TurtleSoupBenchmark(max_turns=0)
    with pytest.raises(ConfigError, match=r"option max_turns .*valid integer, got true"):
        TurtleSoupBenchmark(max_turns=True)
    with pytest.raises(ConfigError, match="has no option 'turns'; its options: puzzles, max_turns"):
        TurtleSoupBenchmark(turns=3)


def test_metric_specs_rank_the_scores_and_cover_the_aggregate() -> None:
    specs = TurtleSoupBenchmark.metric_specs
    assert [(specs[m].label, specs[m].direction) for m in SCORES] == [
        ("Logic Accuracy (%)", "higher"),
        ("Detail Fidelity (%)", "higher"),
        ("Conclusion Match (%)", "higher"),
        ("Overall (0.3 L + 0.3 D + 0.4 C, %)", "higher"),
    ]
    assert specs["mean_repeated_questions"].direction == "lower"
    assert specs["mean_invalid_questions"].direction == "lower"
    assert specs["judged_episodes"].direction == "none"
    out = TurtleSoupBenchmark().score_records([ok_record("original", "en", 50.0)])
    assert set(out) - {"by_group"} == set(specs)


def test_human_play_asks_until_solve_then_scores_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = iter(
        [
            "Did the barber customers see the sign in a mirror?",
            "/solve",
            "The cafe sign was painted in mirror writing for the barbershop customers.",
            "",
        ]
    )
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, out, err = run_cli(
        ["turtlesoup", "play", "clever_logic-01-en", "--role", "judge=scripted/turtlesoup-judge",
         "--runs-dir", str(tmp_path)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "overall" in out and "run directory" in out
    (record,) = load_records(next(tmp_path.iterdir()))
    assert record.agent == "human" and record.outcome["questions"] == 1
    assert "mirror writing" in record.outcome["summary"]
    assert record.metrics["judged"]


# ---- review fixes ----

TURTLEBENCH = FIXTURES / "turtlebench"
ZH_ANSWERS = {"是", "否", "不知道"}


async def test_chinese_puzzle_shows_chinese_answers_and_keeps_info_canonical() -> None:
    bench = TurtleSoupBenchmark(max_turns=4)
    instance = bench.instance("clever_logic-03-zh")
    questions = [
        "托马什用耳机收听电台实况解说吗？",  # Yes, key clue
        "酒吧是通过网络直播放映决赛的吗？",  # Yes
        "当时在下雨吗？",  # Unknown
        "托马什用耳机收听电台实况解说吗？",  # repeated: the same key clue again
    ]
    record = record_for(instance.id)
    roles = {"responder": scripted("turtlesoup-responder"), "judge": scripted("turtlesoup-judge")}
    await bench.run_episode(instance, Asker(questions), record, roles)  # type: ignore[arg-type]
    asked = [s for s in record.steps if "answer" in s.info]
    assert [s.info["answer"] for s in asked] == ["Yes", "Yes", "Unknown", "Yes"]
    assert [s.feedback for s in asked] == ["是<关键线索>", "是", "不知道", "是<关键线索>"]
    summary_view = record.steps[-1].observation
    assert "1. 托马什用耳机收听电台实况解说吗？ -> 是<关键线索>" in summary_view
    assert "3. 当时在下雨吗？ -> 不知道" in summary_view
    assert not any(word in summary_view for word in ("Yes", "Unknown", "Key Clue"))
    # A repeated key-clue question is one key clue hit, not two.
    assert record.outcome["key_clues_hit"] == 1 and record.outcome["repeated_questions"] == 1


async def test_offline_env_answers_a_chinese_puzzle_in_chinese() -> None:
    bench = TurtleSoupBenchmark(max_turns=3)
    env = bench.make_env(bench.instance("clever_logic-03-zh"))
    env.reset()
    step = await env.astep("托马什用耳机收听电台实况解说吗？")
    assert step.info["answer"] == "Yes" and step.info["key_clue"] is True
    assert step.info["feedback"] == "是<关键线索>"
    assert "1. 托马什用耳机收听电台实况解说吗？ -> 是<关键线索>" in step.observation.text


def test_key_clues_hit_counts_distinct_questions() -> None:
    from forkingpaths.benchmarks.turtlesoup.dialogue import Dialogue
    from forkingpaths.benchmarks.turtlesoup.responder import ResponderAnswer

    bench = TurtleSoupBenchmark()
    dialogue = Dialogue(bench.puzzle(bench.instance("clever_logic-03-en")))
    hit = ResponderAnswer("Yes", True, "Yes<Key Clue>", "Yes", False)
    for question in ("Did he hear the radio?", "did he hear the radio", "Was the stream late?"):
        dialogue.record(question, hit)
    assert len(dialogue.key_clue_records) == 3
    assert dialogue.key_clues_hit == 2


def test_turtlebench_stories_play_with_allow_no_clues(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no valid puzzle"):
        TurtleSoupBenchmark(puzzles=str(TURTLEBENCH)).corpus()
    with pytest.raises(ConfigError, match="allow_no_clues"):
        TurtleSoupBenchmark(allow_no_clues="yes")
    result = run(
        "turtlesoup",
        agent="mosaic",
        model="scripted/turtlesoup-questioner",
        instances=["turtlebench-01-en"],
        roles=ROLES,
        benchmark_options={"puzzles": str(TURTLEBENCH), "allow_no_clues": True, "max_turns": 3},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    (record,) = list(result.records())
    assert record.status == "ok" and record.initial_info["key_clues"] is False
    assert not [c for s in record.steps for c in s.calls if c.purpose == "key_clue"]


def test_play_accepts_allow_no_clues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = iter(["Was the audience deaf?", "/solve", "The audience was deaf.", ""])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, _, err = run_cli(
        ["turtlesoup", "play", "turtlebench-01-en", "--puzzles", str(TURTLEBENCH),
         "--allow-no-clues", "--runs-dir", str(tmp_path)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (record,) = load_records(next(tmp_path.iterdir()))
    assert record.outcome["questions"] == 1 and record.initial_info["key_clues"] is False


def ok_record(category: str, language: str, overall: float | None) -> EpisodeRecord:
    record = record_for(f"{category}-01-{language}")
    record.initial_info = {"category": category, "language": language}
    record.metrics = {
        "logic_accuracy": overall,
        "detail_fidelity": overall,
        "conclusion_match": overall,
        "overall": overall,
        "unscored_points": 0 if overall is not None else 3,
    }
    return record


def test_aggregate_reports_scored_and_unscored_episodes() -> None:
    records = [
        ok_record("original", "en", 60.0),
        ok_record("original", "en", None),
        ok_record("original", "zh", 40.0),
    ]
    out = TurtleSoupBenchmark().score_records(records)
    assert (out["n"], out["n_scored"], out["n_unscored"]) == (3, 2, 1)
    assert out["overall"] == pytest.approx(50.0)  # over the scored episodes
    assert out["unscored_points"] == 3
    group = out["by_group"]["original / en"]
    assert (group["n"], group["n_scored"], group["n_unscored"], group["overall"]) == (
        2,
        1,
        1,
        60.0,
    )
    assert out["by_group"]["all / zh"]["n_scored"] == 1


def test_judge_falling_back_to_the_questioner_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="forkingpaths.benchmarks.turtlesoup.benchmark")
    result = run(
        "turtlesoup",
        agent="baseline",
        model="scripted/echo",
        instances=["supernatural-01-en", "supernatural-01-zh"],
        roles={"responder": "scripted/turtlesoup-responder"},
        benchmark_options={"max_turns": 1},
        runs_dir=tmp_path / "fallback",
        options=RunOptions(progress=False, cache=False, concurrency=1),
    )
    warnings = [r for r in caplog.records if "judge role falls back" in r.getMessage()]
    assert len(warnings) == 1
    assert all(
        r.initial_info["judge"] == r.outcome["judge"] == "scripted/echo" for r in result.records()
    )
    caplog.clear()
    result = run(
        "turtlesoup",
        agent="baseline",
        model="scripted/turtlesoup-questioner",
        instances=["supernatural-01-en"],
        roles=ROLES,
        benchmark_options={"max_turns": 1},
        runs_dir=tmp_path / "explicit",
        options=RunOptions(progress=False, cache=False),
    )
    assert not [r for r in caplog.records if "judge role falls back" in r.getMessage()]
    assert next(iter(result.records())).initial_info["judge"] == "scripted/turtlesoup-judge"


def test_judge_accuracy_cli_lexical_responder_and_model_close(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = str(TURTLEBENCH / "cases.list")
    code, default, err = run_cli(["turtlesoup", "judge-accuracy", cases, "--json"], capsys)
    assert code == 0, err
    code, lexical, err = run_cli(
        ["turtlesoup", "judge-accuracy", cases, "--responder", "lexical", "--json"], capsys
    )
    assert code == 0, err
    assert json.loads(lexical) == json.loads(default)
    assert json.loads(default)["n"] == 7
    code, table, err = run_cli(
        ["turtlesoup", "judge-accuracy", cases, "--responder", "lexical"], capsys
    )
    assert code == 0 and "macro F1" in table
    code, _, err = run_cli(["turtlesoup", "judge-accuracy", cases, "--responder", "gpt"], capsys)
    assert code != 0 and "--responder" in err
    code, _, err = run_cli(
        ["turtlesoup", "judge-accuracy", cases, "--responder", "lexical", "--model",
         "scripted/turtlesoup-responder"],
        capsys,
    )  # fmt: skip
    assert code != 0 and "exclude each other" in err
    closed: list[str] = []

    async def aclose(self: ScriptedModel) -> None:
        closed.append(self.name)

    monkeypatch.setattr(ScriptedModel, "aclose", aclose)
    code, out, err = run_cli(
        ["turtlesoup", "judge-accuracy", cases, "--model", "scripted/turtlesoup-responder",
         "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert closed == ["scripted/turtlesoup-responder"]
    assert json.loads(out)["n"] == 7
