"""The offline TurtleSoup dialogue as an Env: questions in, lexical Yes/No/Unknown out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.turtlesoup.dialogue import MAX_TURNS, Dialogue
from forkingpaths.benchmarks.turtlesoup.responder import (
    ResponderAnswer,
    answer_text,
    lexical_answer,
)
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ResetNeeded

if TYPE_CHECKING:
    from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle


class TurtleSoupEnv(Env):
    """A puzzle's questioning with the model-free lexical responder (turtlesoup.txt §4.2-4.3).

    Each step is one question: refused (empty, not a question, too long: a turn used, nothing
    asked) or answered Yes / No / Unknown, `<Key Clue>` appended when it hits the clue library
    (shown in the puzzle's language: 是 / 否 / 不知道 and `<关键线索>` for Chinese; `info["answer"]`
    stays Yes / No / Unknown).
    The episode is truncated after `max_turns` (30) questions; the summary and its evaluation
    belong to the benchmark's protocol, which runs the same `Dialogue` with model responders.
    Deterministic: the lexical responder has no randomness. Version history: v1.
    """

    def __init__(self, puzzle: Puzzle, *, max_turns: int = MAX_TURNS, key_clues: bool = True):
        self.puzzle = puzzle
        self.max_turns = max_turns
        self.key_clues = key_clues and bool(puzzle.key_clues)
        self.dialogue: Dialogue | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self.dialogue = Dialogue(self.puzzle, self.max_turns)
        return self.dialogue.observation()

    def step(self, action: str) -> Step:
        dialogue = self.dialogue
        if dialogue is None or dialogue.finished:
            raise ResetNeeded("TurtleSoupEnv.step called before reset() or after the last turn")
        reason = dialogue.check(action)
        if reason is not None:
            feedback = dialogue.refuse(action, reason)
            info: dict[str, Any] = {"valid": False, "reason": reason, "turn": dialogue.turn}
        else:
            label, flag = lexical_answer(
                action,
                (self.puzzle.surface, self.puzzle.bottom),
                self.puzzle.key_clues if self.key_clues else (),
                self.puzzle.language,
            )
            text = answer_text(label, flag, self.puzzle.language)
            reply = ResponderAnswer(label, flag, text, label, False, [])
            exchange, repeated = dialogue.record(action, reply)
            feedback = exchange.text
            info = {"turn": dialogue.turn, "answer": label, "key_clue": flag, "repeated": repeated}
        observation = dialogue.observation("summarize" if dialogue.finished else "ask")
        shown = Observation(f"{feedback}\n\n{observation.text}", observation.data)
        return Step(shown, 0.0, False, dialogue.finished, info)
