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
SCORINGS: Mapping[str, str] = {"paper": "b1", "table4": "table4"}
"""`scoring` option value -> the episode metric (`score_<name>`) that becomes `score`."""
PAPER_CELLS = 81
"""Table 2's 9x9 board."""
START_VIEW = 4
"""Cells the agent sees on its start corner before any step (not scored)."""
PAPER_COINS = 5


def table4_score(metrics: Mapping[str, Any]) -> int:
    """An episode's score under the inferred Table 4 rule, from its B.1 `score`, its
    `remaining_hp` and `kills` (the keys of `maze_episode_metrics`)."""
    lost = START_LIVES - int(metrics["remaining_hp"])
    return int(metrics["score"]) + LIFE_COST * lost + KILL_REWARD * int(metrics["kills"])


@dataclass(frozen=True)
class FitRow:
    """One Table 4 row: the printed A.Score and what each rule gives from the other columns."""

    model: str
    printed: float
    b1: float
    table4: float

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
        out.append(FitRow(row.model, float(row.values["A.Score"] or 0), b1, t4))
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
