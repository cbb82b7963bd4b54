"""One puzzle's questioning: question checks, history, Key Clue Records, the observation (§4.3)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.responder import ResponderAnswer, answer_text
from forkingpaths.core.env import Observation

MAX_TURNS = 30
"""Questions per puzzle (§5.1, Table 5)."""
SOLVE_COMMAND = "/solve"
"""The ask-phase action that ends the questioning before the last turn: the questioner is ready
to write its summary (a person types it, or an empty line, in human play, §4.5)."""
MAX_QUESTION_CHARS = 400
"""A longer "question" is not a yes/no question; it is refused without asking the responder."""
_WORD = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def question_key(question: str) -> str:
    """Normalised text for spotting a repeated question (case, spacing, punctuation)."""
    return re.sub(r"[\W_]+", " ", question.lower()).strip()


@dataclass(frozen=True)
class Exchange:
    """One asked question and the responder's reply."""

    turn: int
    question: str
    answer: str
    """One of `responder.ANSWERS` (Yes / No / Unknown), whatever the puzzle's language."""
    key_clue: bool
    text: str
    """The reply as the player reads it, in the puzzle's language (`responder.answer_text`):
    "Yes<Key Clue>", "否", "是<关键线索>" ..."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "question": self.question,
            "answer": self.answer,
            "key_clue": self.key_clue,
            "text": self.text,
        }


class Dialogue:
    """The Memory module's two stores (full Interaction History and Key Clue Records) plus the
    turn count; renders what the questioner sees. Invalid questions use up a turn."""

    def __init__(self, puzzle: Puzzle, max_turns: int = MAX_TURNS) -> None:
        self.puzzle = puzzle
        self.max_turns = max_turns
        self.turn = 0
        self.history: list[Exchange] = []
        self.asked: set[str] = set()
        self.repeated = 0
        self.invalid = 0

    @property
    def finished(self) -> bool:
        return self.turn >= self.max_turns

    def check(self, question: str) -> str | None:
        """Why `question` cannot be put to the responder, or None when it can."""
        text = question.strip()
        if not text:
            return "empty question"
        if len(text) > MAX_QUESTION_CHARS:
            return f"longer than {MAX_QUESTION_CHARS} characters: ask one short yes/no question"
        if not _WORD.search(text) or text[0] in "{[<":
            # No words, or a structured payload (JSON, markup) a model sent instead of asking.
            return "not a question"
        return None

    def refuse(self, question: str, reason: str) -> str:
        """Count an invalid question as a turn; the feedback the questioner gets."""
        self.turn += 1
        self.invalid += 1
        return f"Invalid question ({reason})."

    def record(self, question: str, reply: ResponderAnswer) -> tuple[Exchange, bool]:
        """Store an answered question; returns it and whether it repeats an earlier one."""
        self.turn += 1
        key = question_key(question)
        repeated = key in self.asked
        self.asked.add(key)
        self.repeated += repeated
        text = answer_text(reply.answer, reply.key_clue, self.puzzle.language)
        exchange = Exchange(self.turn, question.strip(), reply.answer, reply.key_clue, text)
        self.history.append(exchange)
        return exchange, repeated

    @property
    def key_clue_records(self) -> list[Exchange]:
        return [e for e in self.history if e.key_clue]

    @property
    def key_clues_hit(self) -> int:
        """Distinct questions flagged as key clues: a repeated question that hits the same clue
        again is counted once (`question_key`)."""
        return len({question_key(e.question) for e in self.key_clue_records})

    def observation(self, phase: str = "ask") -> Observation:
        """What the questioner sees (contract §3): `phase` is "ask" or "summarize"."""
        puzzle = self.puzzle
        data: dict[str, Any] = {
            "puzzle_id": puzzle.id,
            "language": puzzle.language,
            "title": puzzle.title,
            "surface": puzzle.surface,
            "turn": self.turn + 1,
            "max_turns": self.max_turns,
            "history": [e.as_dict() for e in self.history],
            "key_clues": [e.as_dict() for e in self.key_clue_records],
            "phase": phase,
        }
        return Observation(render(data), data)


def render(data: dict[str, Any]) -> str:
    """Plain rendering of the observation (for a person or a generic LLM agent), in the puzzle's
    language, answers and key clue tag included ("是<关键线索>" for a Chinese puzzle)."""
    zh = data["language"] == "zh"
    lines = [("汤面" if zh else "Surface") + f": {data['surface']}", ""]
    if data["history"]:
        lines.append("问答记录:" if zh else "Questions so far:")
        lines += [
            f"{h['turn']}. {h['question']} -> "
            + answer_text(h["answer"], bool(h.get("key_clue")), data["language"])
            for h in data["history"]
        ]
        lines.append("")
    if data["phase"] == "summarize":
        lines.append(
            "提问结束。请写出你对完整故事(汤底)的总结。"
            if zh
            else "Questioning is over. Write your summary of the full story (the bottom)."
        )
    else:
        left = data["max_turns"] - data["turn"] + 1
        lines.append(
            f"第 {data['turn']} 问(剩余 {left} 问):请提一个是/否问题。"
            if zh
            else f"Question {data['turn']} ({left} left): ask one yes/no question."
        )
    return "\n".join(lines)
