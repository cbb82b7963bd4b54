"""The stale score reproduces App. B's Tables 4-9 row by row (minus signs restored)."""

from __future__ import annotations

import pytest

from forkingpaths.benchmarks.griddag.metric import StaleScore, StaleTerms
from forkingpaths.benchmarks.griddag.world import Cell

Row = tuple[int, Cell, int, int, int, int]  # t, p(t), c_t, e_t, n_t, S_t

TABLE_4: list[Row] = [  # Probe a branch and back out once.
    (0, (-1, 0), 0, 0, 0, 0),
    (1, (0, 0), 0, 0, 0, 0),
    (2, (1, 0), 0, 0, 0, 0),
    (3, (0, 0), 0, 0, 0, 0),
    (4, (-1, 0), 0, 0, 0, 0),
]
TABLE_5: list[Row] = [  # Useful gateway revisit.
    (0, (-1, 0), 0, 0, 0, 0),
    (1, (0, 0), 0, 0, 0, 0),
    (2, (1, 0), 0, 0, 0, 0),
    (3, (0, 0), 0, 0, 0, 0),
    (4, (0, 1), 0, 0, 0, 0),
]
TABLE_6: list[Row] = [  # Re-enter the same exhausted branch.
    (0, (-1, 0), 0, 0, 0, 0),
    (1, (0, 0), 0, 0, 0, 0),
    (2, (1, 0), 0, 0, 0, 0),
    (3, (0, 0), 0, 0, 0, 0),
    (4, (-1, 0), 0, 0, 0, 0),
    (5, (0, 0), 0, 1, 1, 2),
    (6, (1, 0), 0, 2, 1, 3),
]
TABLE_7: list[Row] = [  # Repeated use of the same cycle.
    (0, (-1, -1), 0, 0, 0, 0),
    (1, (0, -1), 0, 0, 0, 0),
    (2, (0, 0), 0, 0, 0, 0),
    (3, (-1, 0), 0, 0, 0, 0),
    (4, (-1, -1), 1, 0, 0, 1),
    (5, (0, -1), 1, 0, 0, 1),
    (6, (0, 0), 1, 0, 0, 1),
    (7, (-1, 0), 1, 0, 0, 1),
    (8, (-1, -1), 1, 0, 1, 2),
]
TABLE_8: list[Row] = [  # Corridor oscillation.
    (0, (0, 0), 0, 0, 0, 0),
    (1, (0, 1), 0, 0, 0, 0),
    (2, (0, 0), 0, 0, 0, 0),
    (3, (0, -1), 0, 0, 0, 0),
    (4, (0, 0), 0, 0, 1, 1),
    (5, (0, 1), 0, 1, 1, 2),
    (6, (0, 0), 0, 2, 2, 4),
    (7, (0, -1), 0, 3, 2, 5),
]
TABLE_9: list[Row] = [  # Comb / broom graph.
    (0, (-1, 0), 0, 0, 0, 0),
    (1, (0, 0), 0, 0, 0, 0),
    (2, (1, 0), 0, 0, 0, 0),
    (3, (1, 1), 0, 0, 0, 0),
    (4, (1, 0), 0, 0, 0, 0),
    (5, (0, 0), 0, 0, 0, 0),
    (6, (-1, 0), 0, 0, 0, 0),
    (7, (0, 0), 0, 1, 1, 2),
    (8, (0, 1), 0, 1, 1, 2),
]
TABLES = {"4": TABLE_4, "5": TABLE_5, "6": TABLE_6, "7": TABLE_7, "8": TABLE_8, "9": TABLE_9}


@pytest.mark.parametrize("table", TABLES.values(), ids=[f"table{k}" for k in TABLES])
def test_every_row_of_the_appendix_tables(table: list[Row]) -> None:
    t0, p0, *_ = table[0]
    stale = StaleScore(p0)
    assert (t0, stale.c, stale.e, stale.n, stale.S) == (0, 0, 0, 0, 0)
    for t, cell, c, e, n, s in table[1:]:
        terms = stale.move(cell)
        assert (t, terms.c, terms.e, terms.n, terms.S) == (t, c, e, n, s)
        assert (stale.c, stale.e, stale.n, stale.S) == (c, e, n, s)
        assert stale.position == cell


def test_refused_move_adds_nothing() -> None:
    stale = StaleScore((0, 0))
    for cell in [(0, 1), (0, 0), (0, 1), (0, 0)]:
        stale.move(cell)
    before = stale.terms
    assert stale.move((0, 0)) == before
    assert stale.move((0, 0)) == before
    # The next real move counts as usual: the edge's 5th traversal, (0,1)'s 3rd visit.
    assert stale.move((0, 1)).S == before.S + 2


def test_reset_restarts_the_segment_at_one_cell() -> None:
    stale = StaleScore((0, 0))
    for cell in [(0, 1), (0, 0), (0, 1), (0, 0), (0, 1)]:
        stale.move(cell)
    # The edge traversed 5 times (e = 3), (0,1) and (0,0) visited 3 times each (n = 2).
    assert stale.terms == StaleTerms(0, 3, 2) and stale.S == 5
    stale.reset((5, 5))
    assert stale.terms == StaleTerms(0, 0, 0)
    assert stale.position == (5, 5)
    stale.move((5, 6))
    stale.move((5, 5))
    assert stale.S == 0
    # Only the segment since the reset counts: the edge's 3rd traversal, (5,6)'s 2nd visit.
    assert stale.move((5, 6)) == StaleTerms(0, 1, 0)
