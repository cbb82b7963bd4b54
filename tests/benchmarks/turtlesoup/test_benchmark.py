"""TurtleSoup protocol end to end: dialogue, roles, ablations, import/run contract, human play."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.turtlesoup.benchmark import TurtleSoupBenchmark
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.models.factory import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy

FIXTURES = Path(__file__).parent / "fixtures"
ROLES = {"responder": "scripted/turtlesoup-responder", "judge": "scripted/turtlesoup-judge"}


class Asker:
    """Asks fixed questions, then summarizes with `summary`."""

    def __init__(self, questions: list[str], summary: str = "") -> None:
        self.questions = list(questions)
        self.summary = summary
        self.key_clues = True

    def reset(self, instance: object, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        if observation.data["phase"] == "summarize":
            return Decision(self.summary)
        return Decision(self.questions.pop(0) if self.questions else "Was it raining?")

    def state(self) -> dict[str, object]:
        return {}


def record_for(instance_id: str) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t", benchmark="turtlesoup-v1", split="all", instance_id=instance_id, seed=0,
        agent="asker",
    )  # fmt: skip


def scripted(policy: str) -> ScriptedModel:
    return ScriptedModel(f"scripted/{policy}", load_policy(policy), ModelRuntime())


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


def test_offline_env_refuses_bad_questions_and_truncates_at_the_limit() -> None:
    bench = TurtleSoupBenchmark(max_turns=3)
    env = bench.make_env(bench.instance("original-01-en"))
    observation = env.reset()
    assert observation.data["turn"] == 1 and observation.data["phase"] == "ask"
    assert env.step("???").info["valid"] is False
    env.step("Did the suspect laugh?")
    last = env.step("Did the suspect laugh?")
    assert last.truncated and last.info["repeated"]
    assert last.observation.data["phase"] == "summarize"


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
    record = result.records[0]
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
        model="scripted/turtlesoup-questioner",
        instances=["supernatural-01-en"],
        benchmark_options={"max_turns": 2},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    (record,) = result.records
    assert record.initial_info["responder"] == "scripted/turtlesoup-questioner"
    # The questioner's policy does not answer responder prompts: every answer fails, is retried
    # and recorded as Unknown with the failure counted (never a crash).
    assert record.metrics["responder_failures"] == 2


def test_import_json_contract_and_run_on_imported_puzzles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = FIXTURES / "release"
    code, out, err = run_cli(["turtlesoup", "import", str(release), "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert list(report) == ["puzzles", "languages", "categories", "errors"]
    assert report["puzzles"] > 0 and set(report["languages"]) <= {"en", "zh"}
    code, out, err = run_cli(
        ["run", "turtlesoup", "--puzzles", str(release), "--agent", "mosaic", "--model",
         "scripted/turtlesoup-questioner", "--role", "responder=scripted/turtlesoup-responder",
         "--role", "judge=scripted/turtlesoup-judge", "--max-turns", "3", "--runs-dir",
         str(tmp_path), "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    records = load_records(next(tmp_path.iterdir()))
    assert len(records) == report["puzzles"]
    assert all(r.status == "ok" for r in records)


def test_bad_puzzle_option_is_refused() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        TurtleSoupBenchmark(puzzles="/no/such/puzzles")
    with pytest.raises(ConfigError, match="max_turns"):
        TurtleSoupBenchmark(max_turns=0)


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
