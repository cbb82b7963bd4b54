"""HarnessMemory: the rule-based memory manager of App. D that summarises past observations."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from forkingpaths.benchmarks.griddag.agents import prompts
from forkingpaths.benchmarks.griddag.agents.knowledge import (
    KnownMap,
    ObservationFacts,
    parse_observation,
)
from forkingpaths.benchmarks.griddag.world import DIRECTIONS, Cell

_OPPOSITE: Mapping[str, str] = MappingProxyType(
    {"up": "down", "down": "up", "left": "right", "right": "left"}
)


class HarnessMemory:
    """Aggregates the observation texts an agent was shown into App. D's fixed-format summary.

    It reads the same texts the model reads (never Observation.data), so the summary holds no
    information the agent was not given. The coordinate system is learned from outcomes: the
    action sent and the position change that followed.
    """

    def __init__(self) -> None:
        self.known = KnownMap()
        self.moves: dict[str, Cell] = {}
        """Direction -> (dx, dy) as observed from moves that succeeded."""

    def observe(self, text: str, action: str | None = None) -> ObservationFacts:
        """Fold in one observation; `action` is the direction sent before it (None at reset or
        when the reply had no direction)."""
        previous = self.known.position
        facts = parse_observation(text)
        if action in DIRECTIONS and previous is not None and facts.position != previous:
            delta = (facts.position[0] - previous[0], facts.position[1] - previous[1])
            if abs(delta[0]) + abs(delta[1]) == 1:
                self.moves[action] = delta
        self.known.update(facts)
        return facts

    def coordinate_system(self) -> dict[str, Cell] | None:
        """Direction -> (dx, dy) once one horizontal and one vertical move have been observed;
        each unobserved direction is taken to be the opposite of its observed counterpart."""
        horizontal = any(dx for dx, _ in self.moves.values())
        vertical = any(dy for _, dy in self.moves.values())
        if not (horizontal and vertical):
            return None
        table = dict(self.moves)
        for direction, opposite in _OPPOSITE.items():
            if direction not in table and opposite in table:
                dx, dy = table[opposite]
                table[direction] = (-dx, -dy)
        return table if len(table) == len(DIRECTIONS) else None

    def summary(self) -> str:
        """The memory summary of App. D for everything observed so far."""
        known = self.known
        states = [
            prompts.StateSummary(
                name=state.name,
                pos=state.pos,
                activated=state.name in known.activated,
                options=state.options,
                children=state.children,
            )
            for state in known.states.values()  # discovery order, as the agent met them
        ]
        return prompts.render_memory_summary(
            moves=self.coordinate_system(),
            goal=known.goal,
            visited=sorted(known.visited),
            frontier=sorted(known.frontier),
            obstacles=sorted(known.obstacles),
            states=states,
            activated=sorted(known.activated),
            activatable=known.pending(),
        )
