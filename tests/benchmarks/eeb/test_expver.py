"""Tests of Agent-ExpVer: GeoLink key steps, InsightForce, verification, TruthWeaver, Delta."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from forkingpaths.benchmarks.eeb.agents.truths import Truth, TruthRepository
from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.expver import (
    Experience,
    ExpVerConfig,
    ExpVerLearner,
    RoundRecord,
    game_instance_params,
    game_levels,
    parse_experience,
    parse_organised_truths,
    prompts,
    render_insightforce_prompt,
    select_key_steps,
)
from forkingpaths.benchmarks.eeb.games import RECORD_METRICS, game_env
from forkingpaths.benchmarks.eeb.match2 import Match2Env
from forkingpaths.benchmarks.eeb.match2_levels import generate_match2_level
from forkingpaths.benchmarks.eeb.maze import MazeEnv
from forkingpaths.benchmarks.eeb.maze_levels import MazeLevel
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import Completion, Message, ModelParams, Usage
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError, ModelError
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, StepRecord

# A 5x5 maze: start bottom-left, goal top-right, a wall just above the start, two coins.
TRAIN_LEVEL = MazeLevel(
    size=5, start=(4, 0), goal=(0, 4), walls=frozenset({(3, 0)}), coins=((4, 2), (2, 4))
)
# The same board with the wall moved onto the bottom row: there GOOD fails and CLUMSY passes.
TRAP_LEVEL = MazeLevel(
    size=5, start=(4, 0), goal=(0, 4), walls=frozenset({(4, 1), (4, 2)}), coins=((2, 4),)
)
GOOD = ["Action: 11", "Action: 9", "Action: 2", "Action: 0"]
"""Passes TRAIN_LEVEL with 2920 points."""
CLUMSY = ["Action: 0", *GOOD]
"""Walks into the wall first (a life lost), then passes TRAIN_LEVEL with 1870 points."""
IDLE = ["hmm"]
"""Never a valid action: the episode runs out of steps and fails."""
WALL_LESSON = "Look for walls before moving up."

INSIGHT_BULLETS = """Strengths:
- Collected both coins on the way to the goal
- Reached the goal

Weaknesses:
- Walked into the wall above the start and lost a life

Lessons:
- Look for walls before moving up.
"""


class ScriptAgent:
    """Plays a fixed script chosen from its truths; each step reports one priced model call."""

    def __init__(self, truths: list[str], choose: Callable[[list[str]], list[str]]) -> None:
        self.truths = truths
        self.script = choose(truths)
        self.t = 0

    def reset(self, instance: Instance, seed: int) -> None:
        self.t = 0

    async def act(self, observation: Observation) -> Decision:
        action = self.script[min(self.t, len(self.script) - 1)]
        self.t += 1
        call = ModelCallRecord(
            model="fake/agent", prompt_tokens=10, completion_tokens=5, cost_usd=0.001
        )
        return Decision(action=action, thought=f"thinking about step {self.t}", calls=[call])

    def state(self) -> dict[str, Any]:
        return {}


def wary_of_walls(truths: list[str]) -> list[str]:
    return GOOD if any("wall" in t.lower() for t in truths) else CLUMSY


def echo_weaver(prompt: str) -> str:
    """A TruthWeaver stand-in: the prompt's entries back, exact repeats removed."""
    entries = re.findall(r"^\d+\. (.*) \(source: [^)]*\)$", prompt, re.MULTILINE)
    return "\n".join(dict.fromkeys(entries))


class CannedModel:
    """A ChatModel answering the InsightForce and TruthWeaver prompts with canned texts."""

    def __init__(
        self,
        insight: str = INSIGHT_BULLETS,
        weave: Callable[[str], str] = echo_weaver,
        garbage: bool = False,
    ) -> None:
        self.name = "fake/expver"
        self.insight, self.weave, self.garbage = insight, weave, garbage
        self.prompts: list[str] = []

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        prompt = messages[-1].content
        self.prompts.append(prompt)
        if self.garbage:
            text = "lorem, zebra quantum muffin ? teapot ]"
        elif prompt.startswith(prompts.INSIGHTFORCE_HEADING):
            text = self.insight
        elif prompt.startswith(prompts.TRUTHWEAVER_HEADING):
            text = self.weave(prompt)
        else:
            text = ""
        usage = Usage(prompt_tokens=100, completion_tokens=20)
        return Completion(text=text, model=self.name, usage=usage, cost_usd=0.01)


def learner(
    tmp_path: Path,
    *,
    model: CannedModel | None = None,
    choose: Callable[[list[str]], list[str]] = wary_of_walls,
    eval_levels: list[tuple[str, MazeLevel]] | None = None,
    initial_truths: TruthRepository | list[str] | None = None,
    **config: Any,
) -> ExpVerLearner[MazeLevel]:
    settings = {"game": "maze", "rounds": 1, "levels_per_round": 1, **config}
    return ExpVerLearner(
        ExpVerConfig(**settings),
        make_agent=lambda truths: ScriptAgent(truths, choose),
        make_env=lambda level: MazeEnv(level, max_steps=8),
        episode_metrics=RECORD_METRICS["maze"],
        model=model or CannedModel(),
        out_dir=tmp_path / "learn",
        train_levels=[("train-a", TRAIN_LEVEL)],
        eval_levels=eval_levels or [("eval-a", TRAIN_LEVEL)],
        initial_truths=initial_truths or [],
    )


async def played(tmp_path: Path, script: list[str], level: MazeLevel = TRAIN_LEVEL) -> Any:
    lrn = learner(tmp_path, choose=lambda truths: script)
    return await lrn.play("train-a", level, [], seed=1)


def step(index: int, **fields: Any) -> StepRecord:
    return StepRecord(index=index, observation="o", action="a", feedback="f", **fields)


def bare_record(steps: list[StepRecord]) -> EpisodeRecord:
    record = EpisodeRecord(run_id="r", benchmark="b", split="s", instance_id="i", seed=0, agent="a")
    record.steps = steps
    return record


# ---- GeoLink key-step selection ----


async def test_key_steps_keep_beginning_end_and_maze_highlights(tmp_path: Path) -> None:
    record = await played(tmp_path, CLUMSY)
    keys = select_key_steps(record, head=1, tail=1)
    why = {k.step.index: k.why for k in keys}
    assert "beginning" in why[0] and "life lost: walked into a wall" in why[0]
    assert why[1] == ("coin collected",)
    assert "end" in why[4] and "goal reached" in why[4]
    assert [k.step.index for k in keys] == sorted(why)


def test_key_steps_cap_highlights_per_kind_and_in_total() -> None:
    steps = [step(i, valid=False, reward=-50.0) for i in range(20)]
    steps[7] = step(7, reward=-1050.0, info={"events": [{"event": "wall_hit"}]})
    record = bare_record(steps)
    keys = select_key_steps(record, head=2, tail=2, max_highlights=3, per_kind=2)
    chosen = {k.step.index: k.why for k in keys}
    assert set(chosen) == {0, 1, 7, 18, 19}
    assert chosen[7] == ("life lost: walked into a wall",)
    invalid = [i for i, why in chosen.items() if any(w.startswith("invalid") for w in why)]
    assert invalid == [0, 1]  # two of a kind, earliest first; the cap of 3 ends the list


async def test_key_steps_match2_point_at_largest_clears_props_and_invalid(tmp_path: Path) -> None:
    level = generate_match2_level("easy", 0)

    class Greedy(ScriptAgent):
        async def act(self, observation: Observation) -> Decision:
            self.t += 1
            if self.t == 2:
                return Decision(action="not an action")
            if self.t == 3:
                return Decision(action='{"action": {"type": "hammer", "pos": [0, 0]}}')
            pos = observation.data["groups"][0]["pos"]
            return Decision(action=json.dumps({"action": {"type": "eliminate", "pos": pos}}))

    lrn = ExpVerLearner(
        ExpVerConfig(game="match2"),
        make_agent=lambda truths: Greedy(truths, lambda t: IDLE),
        make_env=Match2Env,
        episode_metrics=RECORD_METRICS["match2"],
        model=CannedModel(),
        out_dir=tmp_path,
        train_levels=[("easy-0", level)],
        eval_levels=[("easy-0", level)],
    )
    record = await lrn.play("easy-0", level, [], seed=0)
    assert {"score", "success", "api_efficiency"} <= set(record.metrics)
    reasons = [w for k in lrn.select_key_steps(record, record.metrics) for w in k.why]
    assert sum(r.startswith("one of the largest clears") for r in reasons) == 2
    assert any(r.startswith("invalid action") for r in reasons)
    assert "used the hammer prop" in reasons


# ---- InsightForce ----


def test_insightforce_prompt_shows_metrics_and_key_steps() -> None:
    record = bare_record([step(0, thought="x" * 1000, reward=-1050.0)])
    keys = select_key_steps(record)
    text = render_insightforce_prompt("maze", keys, {"score": -1050, "success": False})
    assert text.startswith(prompts.INSIGHTFORCE_HEADING)
    assert "maze navigation" in text and "- score: -1050" in text and "- success: False" in text
    assert "Step 1 (beginning, end, largest loss (-1050))" in text
    assert "x" * 1000 not in text and "x" * 500 in text


def test_parse_experience_reads_bullets_under_headings() -> None:
    parsed = parse_experience(INSIGHT_BULLETS)
    assert parsed == {
        "strengths": ["Collected both coins on the way to the goal", "Reached the goal"],
        "weaknesses": ["Walked into the wall above the start and lost a life"],
        "lessons": ["Look for walls before moving up."],
    }


def test_parse_experience_reads_markdown_numbering_and_placeholders() -> None:
    text = """Here is my analysis.
## 1. Strengths
1. **Explored** the left side early
2) [Strength 2]
- Strength in planning: moved in long straight runs
**Areas for improvement:** wasted two moves; hit a wall
### Weaknesses (other)
- none
3. Lessons:
* Positive rewards come from coins, so look for them
"""
    parsed = parse_experience(text)
    assert parsed == {
        "strengths": [
            "Explored the left side early",
            "Strength in planning: moved in long straight runs",
        ],
        "weaknesses": ["wasted two moves", "hit a wall"],
        "lessons": ["Positive rewards come from coins, so look for them"],
    }


def test_parse_experience_reads_json_inside_a_wrapper() -> None:
    text = '{"analysis": {"Strengths": ["calm"], "Weaknesses": "rushed"}, "score": 3}'
    assert parse_experience(text) == {
        "strengths": ["calm"],
        "weaknesses": ["rushed"],
        "lessons": [],
    }


def test_parse_experience_reads_json() -> None:
    body = '{"strengths": "fast", "areas_for_improvement": ["slow", "slow"], "lessons": ["x"]}'
    text = f"Sure:\n```json\n{body}\n```"

    assert parse_experience(text) == {
        "strengths": ["fast"],
        "weaknesses": ["slow"],
        "lessons": ["x"],
    }


@pytest.mark.parametrize("text", ["", "lorem, zebra quantum ? ]", '{"score": 3}', "Strengths:\n"])
def test_parse_experience_gives_none_for_nothing_usable(text: str) -> None:
    assert parse_experience(text) is None


async def test_summarize_drops_garbage_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lrn = learner(tmp_path, model=CannedModel(garbage=True))
    record = await lrn.play("train-a", TRAIN_LEVEL, [], seed=1)
    with caplog.at_level(logging.WARNING, logger="forkingpaths.benchmarks.eeb.expver"):
        experience = await lrn.summarize(record, [], record.metrics)
    assert experience is None
    assert "experience dropped" in caplog.text
    assert [c.purpose for c in lrn.module_calls] == ["insightforce"]


async def test_summarize_builds_the_experience_of_the_play(tmp_path: Path) -> None:
    lrn = learner(tmp_path)
    record = await lrn.play("train-a", TRAIN_LEVEL, [], seed=1)
    experience = await lrn.summarize(record, [], record.metrics)
    assert experience is not None
    assert (experience.level_id, experience.seed, experience.baseline_score) == ("train-a", 1, 1870)
    assert experience.entries(3) == [
        WALL_LESSON,
        "Avoid: Walked into the wall above the start and lost a life",
        "Keep doing: Collected both coins on the way to the goal",
    ]


# ---- verification (Eq. 4) ----


def experience(baseline: float, lesson: str = WALL_LESSON) -> Experience:
    return Experience(
        level_id="train-a",
        seed=1,
        round=1,
        baseline_score=baseline,
        baseline_success=True,
        lessons=[lesson],
    )


async def test_verify_promotes_a_passed_and_improved_replay(tmp_path: Path) -> None:
    verdict = await learner(tmp_path).verify(TRAIN_LEVEL, experience(1870), [])
    assert (verdict.passed, verdict.score, verdict.promoted, verdict.gain) == (
        True,
        2920,
        True,
        1050,
    )


async def test_verify_rejects_a_replay_without_improvement(tmp_path: Path) -> None:
    verdict = await learner(tmp_path).verify(TRAIN_LEVEL, experience(2920), [])
    assert verdict.passed and not verdict.improved and not verdict.promoted


async def test_verify_rejects_a_failed_replay_even_with_a_higher_score(tmp_path: Path) -> None:
    lrn = learner(tmp_path, choose=lambda truths: IDLE)
    verdict = await lrn.verify(TRAIN_LEVEL, experience(-5000), [])
    assert verdict.improved and not verdict.passed and not verdict.promoted


async def test_verify_replays_the_same_level_and_seed_with_the_experience(tmp_path: Path) -> None:
    lrn = learner(tmp_path)
    await lrn.verify(TRAIN_LEVEL, experience(1870), ["old truth"])
    line = json.loads(lrn.episodes_path.read_text().splitlines()[-1])
    assert (line["instance_id"], line["seed"]) == ("train-a", 1)
    assert line["agent_state"]["expver"]["phase"] == "verify"
    assert line["agent_state"]["expver"]["truths"] == ["old truth", WALL_LESSON]


# ---- TruthWeaver ----

WEAVE_ANSWER = """Here is the organised knowledge base:
1. Check for walls before moving up; walking into one costs a life (source: merged)
- Collect coins on the way
Note: nothing else was merged.
"""


async def test_weave_merges_and_keeps_provenance_of_untouched_entries(tmp_path: Path) -> None:
    lrn = learner(tmp_path, model=CannedModel(weave=lambda prompt: WEAVE_ANSWER))
    old = [
        Truth(text="Avoid walls when moving up", source="lvl-1", round=1, verified_gain=50),
        Truth(text="Collect coins on the way", source="lvl-2", round=1, verified_gain=20),
    ]
    new = [Truth(text="Avoid: walking into walls when going up", source="lvl-3", round=2)]
    woven = await lrn.weave(old, new)
    assert [t.text for t in woven] == [
        "Check for walls before moving up; walking into one costs a life",
        "Collect coins on the way",
    ]
    assert woven[0].source == "truthweaver"
    assert woven[1] == old[1]
    prompt = lrn.model.prompts[-1]  # type: ignore[attr-defined]
    assert prompt.startswith(prompts.TRUTHWEAVER_HEADING)
    assert "3. Avoid: walking into walls when going up (source: lvl-3, round 2)" in prompt


async def test_weave_falls_back_to_appending_on_garbage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lrn = learner(tmp_path, model=CannedModel(garbage=True))
    with caplog.at_level(logging.WARNING, logger="forkingpaths.benchmarks.eeb.expver"):
        woven = await lrn.weave(["Avoid walls", "Collect coins"], ["Collect coins", "Go right"])
    assert [t.text for t in woven] == ["Avoid walls", "Collect coins", "Go right"]
    assert "TruthWeaver answer is unusable" in caplog.text


def test_parse_organised_truths_reads_json_and_drops_unrelated_lines() -> None:
    inputs = ["Avoid walls near the start", "Collect coins early"]
    assert parse_organised_truths('["Avoid walls", "avoid walls"]', inputs) == ["Avoid walls"]
    text = "- Collect coins early (Source: lvl-1)\n- banana zeppelin quokka\n"
    assert parse_organised_truths(text, inputs) == ["Collect coins early"]
    assert parse_organised_truths("lorem ipsum", inputs) is None
    answer = "[Avoid walls near the start]\n[Organized knowledge entry 2] ..."
    assert parse_organised_truths(answer, inputs) == ["Avoid walls near the start"]


async def test_weave_caps_the_repository_by_dropping_the_oldest(tmp_path: Path) -> None:
    lrn = learner(tmp_path, max_truths=2)
    woven = await lrn.weave(["Avoid walls", "Collect coins"], ["Reach the goal"])
    assert [t.text for t in woven] == ["Collect coins", "Reach the goal"]


# ---- the learning loop ----


def rounds_of(lrn: ExpVerLearner[MazeLevel]) -> list[RoundRecord]:
    return [
        RoundRecord.model_validate_json(line) for line in lrn.rounds_path.read_text().splitlines()
    ]


async def test_learn_promotes_a_verified_experience_and_writes_every_file(tmp_path: Path) -> None:
    lrn = learner(tmp_path)
    result = await lrn.learn()

    repo = TruthRepository.load(lrn.truths_path)
    assert repo.game == "maze"
    assert repo.texts() == [t.text for t in result.truths]
    assert repo[0].text == WALL_LESSON
    assert (repo[0].source, repo[0].round, repo[0].verified_gain) == ("train-a", 1, 1050)
    raw = json.loads(lrn.truths_path.read_text())
    assert set(raw) == {"schema_version", "game", "truths"}
    assert set(raw["truths"][0]) == {"text", "source", "round", "verified_gain"}

    start, first = rounds_of(lrn)
    assert (start.round, start.delta, start.eval_score) == (0, None, 1870)
    assert (first.round, first.truths_before, first.truths_after) == (1, 0, len(result.truths))
    assert (first.experiences_proposed, first.experiences_verified) == (1, 1)
    assert (first.eval_score, first.delta, first.kept, first.reverted) == (2920, 1050, True, False)
    assert [c.purpose for c in first.module_calls] == ["insightforce", "truthweaver"]
    line = json.loads(lrn.rounds_path.read_text().splitlines()[1])
    verdict = line["experiences"][0]["verdict"]
    assert (verdict["promoted"], verdict["gain"]) == (True, 1050)

    episodes = [
        EpisodeRecord.model_validate_json(x) for x in lrn.episodes_path.read_text().splitlines()
    ]
    phases = [(e.agent_state["expver"]["phase"], e.trial) for e in episodes]
    assert phases == [("eval", 0), ("play", 1), ("verify", 1), ("eval", 1)]
    assert all(e.metrics["score"] == e.steps[-1].info["score"] for e in episodes)

    steps = sum(len(e.steps) for e in episodes)
    assert result.n_calls == steps + 2 == sum(r.n_calls for r in (start, first))
    assert result.cost_usd == pytest.approx(steps * 0.001 + 2 * 0.01)
    assert lrn.curve_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    spec = json.loads(lrn.config_path.read_text())
    assert (spec["train_levels"], spec["eval_levels"]) == (["train-a"], ["eval-a"])
    assert spec["config"]["game"] == "maze" and spec["module_model"] == "fake/expver"


async def test_learn_reverts_the_round_when_delta_is_negative(tmp_path: Path) -> None:
    lrn = learner(tmp_path, eval_levels=[("trap", TRAP_LEVEL)], initial_truths=["Stay calm"])
    result = await lrn.learn()
    start, first = rounds_of(lrn)
    assert first.experiences_verified == 1 and first.truths_candidate > 1
    assert first.delta is not None and first.delta < 0
    assert (first.kept, first.reverted, first.truths_after) == (False, True, 1)
    assert first.kept_score == start.eval_score > first.eval_score
    assert [t.text for t in result.truths] == ["Stay calm"]
    assert TruthRepository.load(lrn.truths_path).texts() == ["Stay calm"]


async def test_learn_without_truthweaver_appends_verified_entries(tmp_path: Path) -> None:
    model = CannedModel()
    lrn = learner(tmp_path, model=model, truthweaver=False, rounds=2, initial_truths=["Old"])
    result = await lrn.learn()
    assert not any(p.startswith(prompts.TRUTHWEAVER_HEADING) for p in model.prompts)
    one = [
        WALL_LESSON,
        "Avoid: Walked into the wall above the start and lost a life",
        "Keep doing: Collected both coins on the way to the goal",
        "Keep doing: Reached the goal",
    ]
    # Round 2 plays with the wall lesson already learned: GOOD scores 2920 unaided, so the
    # replay does not improve and nothing more is appended.
    assert [t.text for t in result.truths] == ["Old", *one]
    assert [r.experiences_verified for r in result.rounds] == [0, 1, 0]


async def test_learn_without_verification_promotes_without_a_replay(tmp_path: Path) -> None:
    lrn = learner(tmp_path, verification=False)
    result = await lrn.learn()
    episodes = [json.loads(x) for x in lrn.episodes_path.read_text().splitlines()]
    assert "verify" not in {e["agent_state"]["expver"]["phase"] for e in episodes}
    assert result.truths[0].verified_gain is None
    assert result.rounds[1].experiences[0].verdict is None


async def test_learn_survives_a_model_answering_garbage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lrn = learner(tmp_path, model=CannedModel(garbage=True), rounds=2, initial_truths=["Keep"])
    with caplog.at_level(logging.WARNING, logger="forkingpaths.benchmarks.eeb.expver"):
        result = await lrn.learn()
    assert [t.text for t in result.truths] == ["Keep"]
    assert [r.experiences_dropped for r in result.rounds] == [0, 1, 1]
    assert [r.delta for r in result.rounds] == [None, 0.0, 0.0]
    assert caplog.text.count("experience dropped") == 2
    assert lrn.curve_path.exists()


async def test_learn_is_deterministic(tmp_path: Path) -> None:
    first = await learner(tmp_path / "a", rounds=2).learn()
    second = await learner(tmp_path / "b", rounds=2).learn()
    assert first.truths == second.truths
    assert [r.model_dump() for r in first.rounds] == [r.model_dump() for r in second.rounds]


async def test_learn_refuses_a_directory_holding_a_run(tmp_path: Path) -> None:
    await learner(tmp_path).learn()
    with pytest.raises(ConfigError, match="already holds a learning run"):
        await learner(tmp_path).learn()


async def test_learn_on_match2(tmp_path: Path) -> None:
    levels = [(f"easy-{s}", generate_match2_level("easy", s)) for s in (0, 1)]

    class Greedy(ScriptAgent):
        async def act(self, observation: Observation) -> Decision:
            groups = observation.data["groups"]
            pick = groups[0] if self.truths else groups[-1]
            action = json.dumps({"action": {"type": "eliminate", "pos": pick["pos"]}})
            return Decision(action=action, thought="largest group" if self.truths else "any")

    lrn = ExpVerLearner(
        ExpVerConfig(game="match2", rounds=1, verification=False),
        make_agent=lambda truths: Greedy(truths, lambda t: IDLE),
        make_env=Match2Env,
        episode_metrics=RECORD_METRICS["match2"],
        model=CannedModel(),
        out_dir=tmp_path,
        train_levels=levels[:1],
        eval_levels=levels[1:],
    )
    result = await lrn.learn()
    assert TruthRepository.load(lrn.truths_path).game == "match2"
    assert len(result.rounds) == 2 and lrn.curve_path.exists()


async def test_a_model_outage_ends_learning_with_the_errored_episode_on_record(
    tmp_path: Path,
) -> None:
    class Broken(ScriptAgent):
        async def act(self, observation: Observation) -> Decision:
            raise ModelError("endpoint down after 6 retries")

    lrn = learner(tmp_path, choose=lambda truths: IDLE)
    lrn.make_agent = lambda truths: Broken(truths, lambda t: IDLE)
    with pytest.raises(ModelError):
        await lrn.learn()
    (line,) = lrn.episodes_path.read_text().splitlines()
    record = EpisodeRecord.model_validate_json(line)
    assert (record.status, record.error) == ("error", "ModelError: endpoint down after 6 retries")
    assert TruthRepository.load(lrn.truths_path).texts() == []


async def test_agents_are_reset_with_the_level_and_seed(tmp_path: Path) -> None:
    seen: list[tuple[Instance, int]] = []

    class Noting(ScriptAgent):
        def reset(self, instance: Instance, seed: int) -> None:
            seen.append((instance, seed))

    lrn = learner(tmp_path)
    lrn.make_agent = lambda truths: Noting(truths, wary_of_walls)
    lrn.instance_params = game_instance_params
    await lrn.play("train-a", TRAIN_LEVEL, [], seed=5, phase="eval")
    assert seen == [(Instance(id="train-a", split="eval", params={"game": "maze", "level": 1}), 5)]


# ---- configuration ----


def test_config_refuses_bad_values() -> None:
    with pytest.raises(ValidationError):
        ExpVerConfig(game="maze", rounds=0)
    with pytest.raises(ValidationError):
        ExpVerConfig(game="chess")  # type: ignore[arg-type]


async def test_metrics_without_score_or_success_are_refused(tmp_path: Path) -> None:
    lrn = learner(tmp_path)
    lrn.episode_metrics = lambda record: {"points": 1}
    with pytest.raises(ConfigError, match="needs score, success"):
        await lrn.play("train-a", TRAIN_LEVEL, [], seed=0)


def test_a_truths_file_of_the_other_game_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds match2 truths"):
        learner(tmp_path, initial_truths=TruthRepository("match2", ["Clear big groups"]))


def test_round_levels_walk_the_pool_and_wrap(tmp_path: Path) -> None:
    lrn = learner(tmp_path, levels_per_round=2)
    lrn.train_levels = [("a", TRAIN_LEVEL), ("b", TRAIN_LEVEL), ("c", TRAIN_LEVEL)]
    assert [i for i, _ in lrn.round_levels(1)] == ["a", "b"]
    assert [i for i, _ in lrn.round_levels(2)] == ["c", "a"]


# ---- levels and envs of the eeb games ----


def test_game_levels_use_the_benchmark_ids_and_interleave_difficulties() -> None:
    bench = EEBBenchmark()
    maze_eval = [i for i, _ in game_levels("maze", "eval")]
    assert maze_eval[:4] == ["maze-l1-000", "maze-l2-000", "maze-l3-000", "maze-l1-001"]
    assert set(maze_eval) == {i.id for i in bench.instances("maze")}
    maze_train = {i for i, _ in game_levels("maze", "train")}
    assert maze_train == {i.id for i in bench.instances("maze-train")}
    match2_eval = [i for i, _ in game_levels("match2", "eval")]
    assert match2_eval[:3] == ["match2-easy-000", "match2-medium-000", "match2-hard-000"]
    assert set(match2_eval) == {i.id for i in bench.instances("match2")}


def test_match2_training_levels_are_generated_apart_from_the_test_boards() -> None:
    train = game_levels("match2", "train")
    test_boards = {level.board for _, level in game_levels("match2", "eval")}
    assert len(train) == 30 and not test_boards & {level.board for _, level in train}
    assert [level.difficulty for _, level in train[:3]] == ["easy", "medium", "hard"]
    assert isinstance(game_env("match2", train[0][1], props=False), Match2Env)
    assert game_instance_params(*train[0]) == {"game": "match2", "difficulty": "easy"}
    assert game_instance_params("x", TRAIN_LEVEL) == {"game": "maze", "level": 1}
    assert game_env("maze", TRAIN_LEVEL, max_steps=7).max_steps == 7


def test_json_objects_are_read_by_their_text_never_kept_as_raw_json() -> None:
    entries = parse_organised_truths(
        '[{"text": "Avoid walls near the start", "source": "lvl-1"}, {"n": 3}]',
        ["Avoid walls near the start"],
    )
    assert entries == ["Avoid walls near the start"]
    experience = parse_experience('{"strengths": [{"point": "Collected coins early"}]}')
    assert experience is not None
    assert experience["strengths"] == ["Collected coins early"]
