"""A scripted questioner and scripted role models shared by the turtlesoup tests."""

from __future__ import annotations

from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy


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


def scripted(policy: str) -> ScriptedModel:
    """A scripted model by policy name (`turtlesoup-responder`, `turtlesoup-judge`)."""
    return ScriptedModel(f"scripted/{policy}", load_policy(policy), ModelRuntime())
