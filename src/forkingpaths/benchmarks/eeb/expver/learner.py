"""The Agent-ExpVer learner (§4, App. A): rounds of GeoLink play, InsightForce, verification
(Eq. 4), TruthWeaver and the Delta check (Eq. 6), written to a learning run's directory."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from forkingpaths.benchmarks.eeb.agents.truths import Truth, TruthRepository
from forkingpaths.benchmarks.eeb.expver.geolink import KeyStep, select_key_steps
from forkingpaths.benchmarks.eeb.expver.insightforce import (
    parse_experience,
    render_insightforce_prompt,
)
from forkingpaths.benchmarks.eeb.expver.plots import plot_learning_curve
from forkingpaths.benchmarks.eeb.expver.records import (
    SCHEMA_VERSION,
    Evaluation,
    Experience,
    ExperienceLog,
    ExpVerConfig,
    LearningResult,
    RoundRecord,
    Verdict,
)
from forkingpaths.benchmarks.eeb.expver.truthweaver import (
    as_truths,
    dedupe,
    parse_organised_truths,
    render_truthweaver_prompt,
    with_provenance,
)
from forkingpaths.core.agent import Agent
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams, Usage
from forkingpaths.core.env import Env, OrderEnforcing, TurnLimit
from forkingpaths.core.errors import ConfigError, ModelError
from forkingpaths.core.jsonl import append_jsonl
from forkingpaths.core.protocol import play_episode
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, utc_now

log = logging.getLogger(__name__)

TRUTHS_FILE = "truths.json"
ROUNDS_FILE = "expver_rounds.jsonl"
EPISODES_FILE = "expver_episodes.jsonl"
CURVE_FILE = "learning_curve.png"
CONFIG_FILE = "expver_config.json"

Phase = Literal["play", "verify", "eval"]
LevelT = TypeVar("LevelT")


def derive_seed(base: int, *parts: object) -> int:
    """A seed stable across runs and processes for (base, parts)."""
    return (zlib.crc32("/".join(map(str, parts)).encode()) + base) % (2**31)


class ExpVerLearner(Generic[LevelT]):
    """The Agent-ExpVer online learning loop of §4 over one game.

    Per round, each training level is played with the current truths (GeoLink, Eqs. 1-2), its
    key steps selected, summarised into an experience by InsightForce (Eq. 3), replayed with the
    experience and promoted when the level is passed with a higher score (Eq. 4), then organised
    into the repository by TruthWeaver. The policy is the base agent plus the truths (Eq. 5),
    built by `make_agent`. After the round the candidate policy is evaluated on held-out levels;
    Delta (Eq. 6) < 0 restores the repository of the round's start. A reverted round is followed
    by the next round on fresh training levels (that is the paper's "abstraction is repeated": at
    temperature 0 redoing the same round in place would return the same experience).

    Every episode (training play, verification replay, evaluation) is one `play_episode` of the
    env `make_env` builds, wrapped as the runner wraps it (`OrderEnforcing`, `TurnLimit` at
    `max_steps`); its record goes to `expver_episodes.jsonl` with `append_jsonl`.

    Everything reaching a model goes through `model` (the modules) or the agents `make_agent`
    builds, so the runner's retries, cache and accounting apply; every call is recorded, in the
    episodes' steps or the rounds' `module_calls`. A model outage (`ModelError`) ends `learn`
    with the files of the finished rounds on disk. Bad module answers never raise: an unusable
    InsightForce answer drops the experience, an unusable TruthWeaver answer keeps the old truths
    plus the new ones appended; both are logged as warnings.
    """

    def __init__(
        self,
        config: ExpVerConfig,
        *,
        make_agent: Callable[[list[str]], Agent],
        make_env: Callable[[LevelT], Env],
        episode_metrics: Callable[[EpisodeRecord], Mapping[str, Any]],
        model: ChatModel,
        out_dir: str | Path,
        train_levels: Sequence[tuple[str, LevelT]],
        eval_levels: Sequence[tuple[str, LevelT]],
        initial_truths: TruthRepository | Sequence[Truth | str] = (),
        run_id: str | None = None,
        benchmark_id: str = "eeb-v1",
        agent_name: str = "base",
        agent_model: str | None = None,
        instance_params: Callable[[str, LevelT], Mapping[str, Any]] | None = None,
    ) -> None:
        if not train_levels:
            raise ConfigError("train_levels: got none; pass at least one (level id, level) pair")
        if not eval_levels:
            raise ConfigError("eval_levels: got none; pass at least one (level id, level) pair")
        self.config = config
        self.make_agent = make_agent
        self.make_env = make_env
        self.episode_metrics = episode_metrics
        self.model = model
        self.out_dir = Path(out_dir)
        self.train_levels = list(train_levels)
        self.eval_levels = list(eval_levels)[: config.eval_levels]
        if isinstance(initial_truths, TruthRepository) and initial_truths.game != config.game:
            raise ConfigError(
                f"truths: the repository holds {initial_truths.game} truths; this run learns "
                f"{config.game} (pass a {config.game} truths file or none)"
            )
        self.initial_truths = TruthRepository(config.game, initial_truths)
        self.run_id = run_id or self.out_dir.name
        self.benchmark_id = benchmark_id
        self.agent_name = agent_name
        self.agent_model = agent_model if agent_model is not None else model.name
        self.instance_params = instance_params
        self.module_calls: list[ModelCallRecord] = []
        """Every InsightForce and TruthWeaver call so far, in order."""
        self.episode_totals: list[tuple[int, Usage, float]] = []
        """(calls, usage, cost) of every episode played so far, in order."""
        self._round = 0

    # ---- paths ----

    @property
    def truths_path(self) -> Path:
        return self.out_dir / TRUTHS_FILE

    @property
    def rounds_path(self) -> Path:
        return self.out_dir / ROUNDS_FILE

    @property
    def episodes_path(self) -> Path:
        return self.out_dir / EPISODES_FILE

    @property
    def curve_path(self) -> Path:
        return self.out_dir / CURVE_FILE

    @property
    def config_path(self) -> Path:
        return self.out_dir / CONFIG_FILE

    # ---- GeoLink: play and select ----

    async def play(
        self,
        level_id: str,
        level: LevelT,
        truths: Sequence[str],
        *,
        seed: int,
        phase: Phase = "play",
        round_index: int | None = None,
    ) -> EpisodeRecord:
        """One episode of the policy base prompt + `truths` (Eq. 5) on `level`; the record (with
        its metrics) is appended to `expver_episodes.jsonl`, errored ones included."""
        record, error = await self._play(level_id, level, truths, seed, phase, round_index)
        self._append(self.episodes_path, record.model_dump_json())
        if error is not None:
            raise error
        return record

    async def _play(
        self,
        level_id: str,
        level: LevelT,
        truths: Sequence[str],
        seed: int,
        phase: Phase,
        round_index: int | None,
    ) -> tuple[EpisodeRecord, ModelError | None]:
        round_index = self._round if round_index is None else round_index
        split = "eval" if phase == "eval" else "train"
        record = EpisodeRecord(
            run_id=self.run_id,
            benchmark=self.benchmark_id,
            split=split,
            instance_id=level_id,
            trial=round_index,
            seed=seed,
            agent=self.agent_name,
            agent_options={"truths": len(truths)},
            model=self.agent_model,
        )
        agent = self.make_agent(list(truths))
        params = dict(self.instance_params(level_id, level)) if self.instance_params else {}
        agent.reset(Instance(id=level_id, split=split, params=params), seed)
        env = self.make_env(level)
        started = time.perf_counter()
        error: ModelError | None = None
        try:
            await play_episode(
                OrderEnforcing(TurnLimit(env, self.config.max_steps)),
                agent,
                record,
                max_steps=self.config.max_steps,
            )
        except ModelError as exc:
            # The outage ends the learning run, but the steps paid for so far stay on record.
            record.status, record.error, error = "error", f"{type(exc).__name__}: {exc}", exc
        finally:
            env.close()
        record.duration_s = time.perf_counter() - started
        record.finished_at = utc_now()
        record.tally_calls()
        state = agent.state() if hasattr(agent, "state") else {}
        record.agent_state = {
            **state,
            "expver": {"round": round_index, "phase": phase, "truths": list(truths)},
        }
        if record.status == "ok":
            record.metrics = dict(self.episode_metrics(record))
            _check_metrics(record.metrics)
        self.episode_totals.append((record.n_calls, record.usage, record.cost_usd))
        return record, error

    def select_key_steps(self, record: EpisodeRecord, metrics: Mapping[str, Any]) -> list[KeyStep]:
        """GeoLink's key steps of `record` (see `select_key_steps`; the metrics are those the
        highlights stand for, so the selection reads the steps' info directly)."""
        cfg = self.config
        return select_key_steps(
            record,
            head=cfg.head_steps,
            tail=cfg.tail_steps,
            max_highlights=cfg.max_highlights,
            per_kind=cfg.highlights_per_kind,
        )

    # ---- InsightForce ----

    async def summarize(
        self, record: EpisodeRecord, key_steps: Sequence[KeyStep], metrics: Mapping[str, Any]
    ) -> Experience | None:
        """Eq. 3: the experience InsightForce draws from the key steps and metrics, or None
        (logged) when its answer holds no strength, weakness or lesson."""
        prompt = render_insightforce_prompt(
            self.config.game, key_steps, metrics, thought_chars=self.config.thought_chars
        )
        text = await self._call(prompt, "insightforce")
        parsed = parse_experience(text)
        if parsed is None:
            log.warning(
                "InsightForce answer for %s (round %d) has no strengths, weaknesses or lessons; "
                "experience dropped. Answer began: %r",
                record.instance_id,
                record.trial,
                text[:200],
            )
            return None
        return Experience(
            level_id=record.instance_id,
            seed=record.seed,
            round=record.trial,
            baseline_score=float(metrics["score"]),
            baseline_success=bool(metrics["success"]),
            **parsed,
        )

    # ---- verification ----

    async def verify(self, level: LevelT, experience: Experience, truths: Sequence[str]) -> Verdict:
        """Eq. 4: replay the experience's level (same seed) with truths + the experience."""
        lines = list(truths) + experience.entries(self.config.max_experience_items)
        record = await self.play(
            experience.level_id,
            level,
            lines,
            seed=experience.seed,
            phase="verify",
            round_index=experience.round,
        )
        return Verdict(
            level_id=experience.level_id,
            passed=bool(record.metrics["success"]),
            baseline_score=experience.baseline_score,
            score=float(record.metrics["score"]),
        )

    # ---- TruthWeaver ----

    async def weave(self, truths: Sequence[Truth | str], new: Sequence[Truth | str]) -> list[Truth]:
        """Organise `truths` + `new` with TruthWeaver (merge, remove, insert; §4.2). Entries
        the answer keeps word for word keep their provenance; rewritten ones are marked
        `source="truthweaver"`. An unusable answer keeps everything, `new` appended (logged)."""
        merged = as_truths(truths) + as_truths(new)
        if not merged:
            return []
        prompt = render_truthweaver_prompt(self.config.game, merged)
        text = await self._call(prompt, "truthweaver")
        organised = parse_organised_truths(text, [t.text for t in merged])
        if organised is None:
            log.warning(
                "TruthWeaver answer is unusable; keeping the %d old truths and appending the %d "
                "new ones. Answer began: %r",
                len(truths),
                len(new),
                text[:200],
            )
            return self._cap(dedupe(merged))
        return self._cap(with_provenance(organised, merged, self._round or None))

    def _cap(self, truths: list[Truth]) -> list[Truth]:
        limit = self.config.max_truths
        if len(truths) > limit:
            log.info("%d truths exceed max_truths=%d; the oldest are dropped", len(truths), limit)
            return truths[-limit:]
        return truths

    # ---- Delta (Eq. 6) ----

    async def evaluate(
        self,
        truths: Sequence[str],
        levels: Sequence[tuple[str, LevelT]] | None = None,
        *,
        round_index: int | None = None,
    ) -> Evaluation:
        """Play every held-out level once with `truths`; each level's seed is the same in every
        round, so Delta compares the policies on identical episodes."""
        levels = self.eval_levels if levels is None else list(levels)
        limit = asyncio.Semaphore(self.config.concurrency)

        async def one(level_id: str, level: LevelT) -> tuple[EpisodeRecord, ModelError | None]:
            async with limit:
                seed = derive_seed(self.config.seed, "eval", level_id)
                return await self._play(level_id, level, truths, seed, "eval", round_index)

        results = await asyncio.gather(*(one(i, lv) for i, lv in levels))
        # Written in level order, not finishing order, so the file is the same on every run.
        for record, _ in results:
            self._append(self.episodes_path, record.model_dump_json())
        error = next((e for _, e in results if e is not None), None)
        if error is not None:
            raise error
        records = [record for record, _ in results]
        return Evaluation(
            truths=len(truths),
            scores={r.instance_id: float(r.metrics["score"]) for r in records},
            successes={r.instance_id: bool(r.metrics["success"]) for r in records},
        )

    def delta(self, new: Evaluation, old: Evaluation) -> float:
        """Eq. 6: mean over held-out levels of S_i^t - S_i^{t-1} on `delta_metric`."""
        after = new.per_level(self.config.delta_metric)
        before = old.per_level(self.config.delta_metric)
        common = [level for level in after if level in before]
        if not common:
            return 0.0
        return sum(after[level] - before[level] for level in common) / len(common)

    # ---- the loop ----

    def round_levels(self, round_index: int) -> list[tuple[str, LevelT]]:
        """Training levels of round `round_index` (1-based): the next `levels_per_round` of the
        pool, wrapping around."""
        k, pool = self.config.levels_per_round, self.train_levels
        return [pool[((round_index - 1) * k + j) % len(pool)] for j in range(k)]

    async def learn(self) -> LearningResult:
        """Run every round; write truths.json, expver_rounds.jsonl, expver_episodes.jsonl and
        learning_curve.png under `out_dir` and return what they hold."""
        self._prepare_out_dir()
        cfg = self.config
        self._write_spec()
        truths = list(self.initial_truths)
        self._save_truths(truths)
        mark = self._mark()
        self._round = 0
        current = await self.evaluate(_texts(truths), round_index=0)
        rounds = [
            self._round_record(
                0, mark, current, current, before=truths, candidate=truths, after=truths
            )
        ]
        self._append(self.rounds_path, rounds[-1].model_dump_json())
        for round_index in range(1, cfg.rounds + 1):
            self._round = round_index
            mark = self._mark()
            start = list(truths)
            logs: list[ExperienceLog] = []
            for level_id, level in self.round_levels(round_index):
                truths, entry = await self._learn_from(level_id, level, truths, round_index)
                logs.append(entry)
            candidate = list(truths)
            # Unchanged knowledge needs no new evaluation (metadata alone does not count).
            if _texts(candidate) == _texts(start):
                evaluation, delta = current, 0.0
            else:
                evaluation = await self.evaluate(_texts(candidate), round_index=round_index)
                delta = self.delta(evaluation, current)
            reverted = delta < 0
            if reverted:
                log.info("round %d: Delta %.3f < 0, its truths are reverted", round_index, delta)
                truths = start
            else:
                current = evaluation
            self._save_truths(truths)
            record = self._round_record(
                round_index,
                mark,
                evaluation,
                current,
                before=start,
                candidate=candidate,
                after=truths,
                delta=delta,
                reverted=reverted,
                logs=logs,
            )
            rounds.append(record)
            self._append(self.rounds_path, record.model_dump_json())
        plot_learning_curve(rounds, self.curve_path, title=f"Agent-ExpVer on {cfg.game}")
        return LearningResult(
            config=cfg,
            truths=truths,
            rounds=rounds,
            out_dir=str(self.out_dir),
            n_calls=sum(r.n_calls for r in rounds),
            usage=sum((r.usage for r in rounds), Usage()),
            cost_usd=sum(r.cost_usd for r in rounds),
        )

    async def _learn_from(
        self, level_id: str, level: LevelT, truths: list[Truth], round_index: int
    ) -> tuple[list[Truth], ExperienceLog]:
        cfg = self.config
        seed = derive_seed(cfg.seed, "train", level_id, round_index)
        record = await self.play(level_id, level, _texts(truths), seed=seed, phase="play")
        key_steps = self.select_key_steps(record, record.metrics)
        experience = await self.summarize(record, key_steps, record.metrics)
        if experience is None:
            return truths, ExperienceLog(level_id=level_id, outcome="dropped")
        verdict = None
        if cfg.verification:
            verdict = await self.verify(level, experience, _texts(truths))
            if not verdict.promoted:
                return truths, ExperienceLog(
                    level_id=level_id, outcome="rejected", experience=experience, verdict=verdict
                )
        lines = experience.entries(cfg.max_experience_items)
        gain = verdict.gain if verdict is not None else None
        new = [Truth(text=t, source=level_id, round=round_index, verified_gain=gain) for t in lines]
        if cfg.truthweaver:
            truths = await self.weave(truths, new)
        else:
            truths = self._cap(truths + new)
        entry = ExperienceLog(
            level_id=level_id,
            outcome="promoted",
            experience=experience,
            verdict=verdict,
            added=lines,
        )
        return truths, entry

    # ---- bookkeeping ----

    async def _call(self, prompt: str, purpose: str) -> str:
        params = (
            ModelParams(max_tokens=self.config.module_max_tokens)
            if self.config.module_max_tokens is not None
            else None
        )
        completion = await self.model.complete([Message(role="user", content=prompt)], params)
        self.module_calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
        return completion.text

    def _mark(self) -> tuple[int, int]:
        return len(self.module_calls), len(self.episode_totals)

    def _round_record(
        self,
        round_index: int,
        mark: tuple[int, int],
        evaluation: Evaluation,
        current: Evaluation,
        *,
        before: list[Truth],
        candidate: list[Truth],
        after: list[Truth],
        delta: float | None = None,
        reverted: bool = False,
        logs: Sequence[ExperienceLog] = (),
    ) -> RoundRecord:
        calls = self.module_calls[mark[0] :]
        episodes = self.episode_totals[mark[1] :]
        usage = sum(
            (
                Usage(
                    prompt_tokens=c.prompt_tokens,
                    completion_tokens=c.completion_tokens,
                    reasoning_tokens=c.reasoning_tokens,
                )
                for c in calls
            ),
            Usage(),
        )
        usage = sum((u for _, u, _ in episodes), usage)
        return RoundRecord(
            round=round_index,
            truths_before=len(before),
            truths_candidate=len(candidate),
            truths_after=len(after),
            experiences_proposed=sum(1 for e in logs if e.outcome != "dropped"),
            experiences_dropped=sum(1 for e in logs if e.outcome == "dropped"),
            experiences_verified=sum(1 for e in logs if e.outcome == "promoted"),
            eval_score=evaluation.mean_score,
            eval_success=evaluation.success_rate,
            kept_score=current.mean_score,
            kept_success=current.success_rate,
            delta=delta,
            kept=not reverted,
            reverted=reverted,
            experiences=list(logs),
            module_calls=list(calls),
            episodes=len(episodes),
            n_calls=len(calls) + sum(n for n, _, _ in episodes),
            usage=usage,
            cost_usd=sum(c.cost_usd for c in calls) + sum(cost for _, _, cost in episodes),
        )

    def _prepare_out_dir(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for path in (self.rounds_path, self.episodes_path):
            if path.exists() and path.stat().st_size:
                raise ConfigError(
                    f"out_dir: {path} already holds a learning run; choose a new output "
                    "directory (reuse its truths with --truths FILE)"
                )

    def _write_spec(self) -> None:
        """`expver_config.json`: everything that determines the run besides the models' answers."""
        spec = {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "benchmark": self.benchmark_id,
            "agent": self.agent_name,
            "agent_model": self.agent_model,
            "module_model": self.model.name,
            "config": self.config.model_dump(mode="json"),
            "train_levels": [level_id for level_id, _ in self.train_levels],
            "eval_levels": [level_id for level_id, _ in self.eval_levels],
            "initial_truths": self.initial_truths.to_json()["truths"],
            "created_at": utc_now(),
        }
        self.config_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    def _save_truths(self, truths: Sequence[Truth]) -> None:
        TruthRepository(self.config.game, truths).save(self.truths_path)

    def _append(self, path: Path, line: str) -> None:
        # `play` and `verify` may run before `learn` prepared the directory.
        path.parent.mkdir(parents=True, exist_ok=True)
        append_jsonl(path, line)


def _check_metrics(metrics: Mapping[str, Any]) -> None:
    missing = [key for key in ("score", "success") if key not in metrics]
    if missing:
        raise ConfigError(
            f"episode_metrics returned keys {sorted(metrics)}; Agent-ExpVer needs "
            f"{', '.join(missing)} (use games.RECORD_METRICS[game] or the benchmark's "
            "episode_metrics)"
        )


def _texts(truths: Sequence[Truth]) -> list[str]:
    return [truth.text for truth in truths]
