"""Maze scoring variants: App. B.1's stated rules and the rule inferred from Table 4's numbers.

Table 4's A.Score cannot come from App. B.1's rules. Every term of B.1 is linear, so a row's
score under B.1 follows from its other columns (means of sums are sums of means):

    B.1 = 10 * (A.Explor/100 * 81 - 4) + 500 * 5 * A.Gold/100 - 50 * A.Steps
          - 1000 * (3 - Rem.HP) + 2000 * Suc.Rate/100

(81 cells on Table 2's 9x9 board, 4 of them seen at the start and not scored, 5 coins, 3
lives). Every printed row lies about 1,800 above that (`table4_fit`). Dropping the life term
and adding a bonus per kill fits the table: least squares over the 20 rows gives about +505
per kill, the release's own kill reward (src/game/environment.py: `monster_kill_reward = 500`),
so the inferred rule is

    table4 = B.1 + 1000 * lives lost + 500 * kills

It is an inference, not a rule the paper states: `scoring=table4` offers it, the default
stays B.1.

The release's evaluation script reports a score of its own (scripts/evaluate_agent.py:588-601,
averaged as A.Score by scripts/analyze_results.py:73): B.1 without the life term, +500 per
kill and +500 per wall broken, i.e. the inferred rule plus 500 per barrier (`scoring=release`).
Against Table 4 it fits worse than the inferred rule (it overshoots by about 500 x A.Barr;
`table4_fit`), so the printed table seems to come from a version without the barrier term.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.eeb.maze import (
    COIN_REWARD,
    EXPLORE_REWARD,
    GOAL_REWARD,
    LIFE_COST,
    START_LIVES,
    STEP_COST,
)
from forkingpaths.core.reproduce import PublishedTable

KILL_REWARD = 500
"""Points per monster killed under the inferred Table 4 rule (the release's value)."""
BARRIER_REWARD = 500
"""Points per wall broken in the release's reported score (evaluate_agent.py:597)."""
SCORINGS: Mapping[str, str] = {"paper": "game", "table4": "table4", "release": "release"}
"""`scoring` option value -> the episode metric (`score_<name>`) that becomes `score`."""
PAPER_CELLS = 81
"""Table 2's 9x9 board."""
START_VIEW = 4
"""Cells the agent sees on its start corner before any step (not scored)."""
PAPER_COINS = 5


def table4_score(metrics: Mapping[str, Any]) -> int:
    """An episode's score under the inferred Table 4 rule, from its `score`, `bonus` (points
    beyond B.1, 0 when absent), `remaining_hp` and `kills` (the keys of
    `maze_episode_metrics`)."""
    b1 = int(metrics["score"]) - int(metrics.get("bonus", 0))
    lost = START_LIVES - int(metrics["remaining_hp"])
    return b1 + LIFE_COST * lost + KILL_REWARD * int(metrics["kills"])


def release_score(metrics: Mapping[str, Any]) -> int:
    """An episode's score as the release's evaluation script reports it
    (scripts/evaluate_agent.py:588-601): the inferred Table 4 rule plus 500 per wall broken."""
    return table4_score(metrics) + BARRIER_REWARD * int(metrics["barriers"])


def score_variants(metrics: Mapping[str, Any]) -> dict[str, int]:
    """Every recorded score of a maze episode: `score_game` (as the game kept it),
    `score_b1` (App. B.1's five rules only: the game's score less the release's extra
    points), `score_table4` and `score_release`."""
    score = int(metrics["score"])
    return {
        "score_game": score,
        "score_b1": score - int(metrics.get("bonus", 0)),
        "score_table4": table4_score(metrics),
        "score_release": release_score(metrics),
    }


@dataclass(frozen=True)
class FitRow:
    """One Table 4 row: the printed A.Score and what each rule gives from the other columns."""

    model: str
    printed: float
    b1: float
    table4: float
    release: float = 0.0
    """The release's reported score (`scoring=release`): table4 + 500 per barrier."""
    release_rules_b1: float = 0.0
    """The game's score under `rules=release` (B.1 + 500 per barrier), less its item points,
    which Table 4 gives no column for (at most 750 per level-3 episode): a lower bound."""

    @property
    def b1_residual(self) -> float:
        return self.printed - self.b1

    @property
    def table4_residual(self) -> float:
        return self.printed - self.table4


def row_scores(values: Mapping[str, float | None]) -> tuple[float, float]:
    """(B.1, inferred Table 4) A.Score of a Table 4 row's other columns (percentages as
    printed), on the paper's 9x9 board."""
    suc, explor, gold = (float(values[k] or 0) / 100 for k in ("Suc.Rate", "A.Explor", "A.Gold"))
    steps, hp, kills = (float(values[k] or 0) for k in ("A.Steps", "Rem.HP", "A.Kills"))
    b1 = (
        EXPLORE_REWARD * (explor * PAPER_CELLS - START_VIEW)
        + COIN_REWARD * PAPER_COINS * gold
        - STEP_COST * steps
        - LIFE_COST * (START_LIVES - hp)
        + GOAL_REWARD * suc
    )
    return b1, b1 + LIFE_COST * (START_LIVES - hp) + KILL_REWARD * kills


def table4_fit(published: PublishedTable) -> list[FitRow]:
    """Per row of Table 4: the printed A.Score beside B.1's and the inferred rule's."""
    out = []
    for row in published.rows:
        b1, t4 = row_scores(row.values)
        barriers = BARRIER_REWARD * float(row.values["A.Barr"] or 0)
        printed = float(row.values["A.Score"] or 0)
        out.append(FitRow(row.model, printed, b1, t4, t4 + barriers, b1 + barriers))
    return out


def fitted_kill_reward(published: PublishedTable) -> float:
    """The least-squares points per kill once the life term is dropped: the mean residual
    against B.1-without-lives, weighted by kills (sum(r*k) / sum(k*k))."""
    num = den = 0.0
    for row in published.rows:
        b1, _ = row_scores(row.values)
        hp, kills = float(row.values["Rem.HP"] or 0), float(row.values["A.Kills"] or 0)
        residual = float(row.values["A.Score"] or 0) - (b1 + LIFE_COST * (START_LIVES - hp))
        num += residual * kills
        den += kills * kills
    return num / den
