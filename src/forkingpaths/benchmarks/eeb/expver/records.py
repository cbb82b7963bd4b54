"""Agent-ExpVer's settings and records: experiences, verdicts, evaluations and round lines."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from forkingpaths.benchmarks.eeb.agents.truths import Truth
from forkingpaths.benchmarks.eeb.expver import prompts
from forkingpaths.benchmarks.eeb.games import Game
from forkingpaths.core.chat import Usage
from forkingpaths.core.records import ModelCallRecord

SCHEMA_VERSION = 1
"""Version of the lines of `expver_rounds.jsonl` (and of `expver_config.json`)."""


class ExpVerConfig(BaseModel):
    """Settings of one Agent-ExpVer learning run; the paper gives no numbers, so the defaults are
    ours and every one can be overridden."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Config schema version."""
    game: Game
    """Which EvoEmpirBench game the truths are about."""
    rounds: int = Field(default=5, ge=1)
    """Learning rounds; Delta (Eq. 6) is checked after each."""
    levels_per_round: int = Field(default=3, ge=1)
    """Training levels played per round (the pool is walked in order and wraps around)."""
    verification: bool = True
    """Replay each experience before promoting it (Eq. 4); False promotes every experience."""
    truthweaver: bool = True
    """Organise the repository with TruthWeaver; False is the W/o.TW ablation (Table 6): verified
    truths are appended as they are."""
    max_truths: int = Field(default=20, ge=1)
    """Most truths kept; beyond it the oldest are dropped."""
    max_experience_items: int = Field(default=8, ge=1)
    """Most knowledge lines one experience contributes."""
    eval_levels: int | None = Field(default=None, ge=1)
    """How many of the held-out levels Delta is measured on (None: all given)."""
    delta_metric: Literal["score", "success"] = "score"
    """Eq. 6 averages the score; `success` uses the success rate instead."""
    seed: int = 0
    """Base of every episode seed."""
    max_steps: int = Field(default=1000, ge=1)
    """Safety cap on steps per episode (the games end their episodes earlier)."""
    head_steps: int = Field(default=2, ge=0)
    """GeoLink: steps kept from the beginning of the trace."""
    tail_steps: int = Field(default=2, ge=0)
    """GeoLink: steps kept from the end of the trace."""
    max_highlights: int = Field(default=6, ge=0)
    """GeoLink: most highlight steps kept besides the beginning and the end."""
    highlights_per_kind: int = Field(default=2, ge=1)
    """GeoLink: most highlights of one kind (life lost, invalid action...), earliest first."""
    thought_chars: int = Field(default=600, ge=20)
    """Characters of a key step's reasoning shown to InsightForce."""
    concurrency: int = Field(default=4, ge=1)
    """Evaluation episodes in flight at once."""
    module_max_tokens: int | None = Field(default=None, ge=1)
    """Completion cap of InsightForce and TruthWeaver calls (None: the run's setting)."""


class Experience(BaseModel):
    """A subjective experience e = f_sum(H, m) (Eq. 3) of one played level."""

    level_id: str
    """The level it was drawn from."""
    seed: int
    """Seed of the play it summarises (verification replays it)."""
    round: int
    """Learning round."""
    baseline_score: float
    """Score S of the play it summarises (Eq. 4)."""
    baseline_success: bool
    """Whether that play passed the level."""
    strengths: list[str] = Field(default_factory=list)
    """What went well."""
    weaknesses: list[str] = Field(default_factory=list)
    """What went wrong or could be better."""
    lessons: list[str] = Field(default_factory=list)
    """General rules of play."""

    def entries(self, limit: int) -> list[str]:
        """Knowledge lines for the policy prompt: lessons first (the most actionable), then
        weaknesses, then strengths (App. A: failures teach most), at most `limit`."""
        lines = list(self.lessons)
        lines += [prompts.WEAKNESS_ENTRY.substitute(text=w) for w in self.weaknesses]
        lines += [prompts.STRENGTH_ENTRY.substitute(text=s) for s in self.strengths]
        return lines[:limit]


class Verdict(BaseModel):
    """Outcome of replaying a level with an experience (Eq. 4)."""

    level_id: str
    """The replayed level."""
    passed: bool
    """P: the replay passed the level."""
    baseline_score: float
    """S: score of the unaided play."""
    score: float
    """S': score of the replay."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def improved(self) -> bool:
        """S' > S."""
        return self.score > self.baseline_score

    @computed_field  # type: ignore[prop-decorator]
    @property
    def promoted(self) -> bool:
        """Eq. 4: P and S' > S."""
        return self.passed and self.improved

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gain(self) -> float:
        """S' - S."""
        return self.score - self.baseline_score


class Evaluation(BaseModel):
    """A policy's results on the held-out levels (the S_i of Eq. 6)."""

    truths: int
    """Size of the truth list evaluated."""
    scores: dict[str, float]
    """Score per level id."""
    successes: dict[str, bool]
    """Success per level id."""

    @property
    def mean_score(self) -> float:
        return sum(self.scores.values()) / len(self.scores) if self.scores else 0.0

    @property
    def success_rate(self) -> float:
        return sum(self.successes.values()) / len(self.successes) if self.successes else 0.0

    def per_level(self, metric: str) -> dict[str, float]:
        if metric == "success":
            return {k: float(v) for k, v in self.successes.items()}
        return dict(self.scores)


class ExperienceLog(BaseModel):
    """What became of one training play's experience."""

    level_id: str
    """The level played."""
    outcome: Literal["dropped", "rejected", "promoted"]
    """dropped: InsightForce gave nothing usable; rejected: verification failed; promoted."""
    experience: Experience | None = None
    """The parsed experience (None when dropped)."""
    verdict: Verdict | None = None
    """The verification result (None when dropped or verification is off)."""
    added: list[str] = Field(default_factory=list)
    """Knowledge lines handed to TruthWeaver (or appended)."""


class RoundRecord(BaseModel):
    """One line of `expver_rounds.jsonl`: a learning round (round 0: the starting policy)."""

    schema_version: int = SCHEMA_VERSION
    """Line schema version."""
    round: int
    """0 for the evaluation of the starting truths, then 1, 2, ..."""
    truths_before: int
    """Truths at the start of the round."""
    truths_candidate: int
    """Truths after the round's additions, before the Delta check."""
    truths_after: int
    """Truths kept at the end of the round."""
    experiences_proposed: int = 0
    """Experiences InsightForce produced."""
    experiences_dropped: int = 0
    """Plays whose InsightForce answer was unusable."""
    experiences_verified: int = 0
    """Experiences promoted to truths (verified when verification is on)."""
    eval_score: float
    """Mean held-out score of the candidate policy (A.Score)."""
    eval_success: float
    """Held-out success rate of the candidate policy (Suc.Rate, 0-1)."""
    kept_score: float
    """Mean held-out score of the policy in force after the round."""
    kept_success: float
    """Held-out success rate of the policy in force after the round."""
    delta: float | None = None
    """Eq. 6 on `delta_metric`; None for round 0."""
    kept: bool = True
    """The round's truths were kept (Delta >= 0)."""
    reverted: bool = False
    """The round's truths were reverted (Delta < 0)."""
    experiences: list[ExperienceLog] = Field(default_factory=list)
    """Every training play of the round and what became of it."""
    module_calls: list[ModelCallRecord] = Field(default_factory=list)
    """InsightForce and TruthWeaver calls of the round."""
    episodes: int = 0
    """Episodes played in the round (training, verification, evaluation)."""
    n_calls: int = 0
    """Model calls of the round: the agents' and the modules'."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of those calls."""
    cost_usd: float = 0.0
    """Cost of those calls."""


class LearningResult(BaseModel):
    """What `ExpVerLearner.learn` returns; everything in it is also on disk."""

    config: ExpVerConfig
    """The settings used."""
    truths: list[Truth]
    """The final truth repository."""
    rounds: list[RoundRecord]
    """Round 0 and every learning round."""
    out_dir: str
    """Where the files are."""
    n_calls: int = 0
    """Model calls of the whole run."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens of the whole run."""
    cost_usd: float = 0.0
    """Cost of the whole run."""

    @property
    def initial_eval(self) -> float:
        return self.rounds[0].kept_score

    @property
    def final_eval(self) -> float:
        return self.rounds[-1].kept_score
