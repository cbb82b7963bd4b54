"""Scripted stand-ins for the AUT transfer: an answering model and a judge, offline and in tests."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping
from types import MappingProxyType

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.core.chat import Message, ModelParams

IDEAS: Mapping[str, str] = MappingProxyType(
    {
        "a paperweight": "its weight keeps loose sheets from blowing off a desk",
        "a doorstop": "wedged under a door it stops the door from swinging shut",
        "a pendulum bob": "hung from a string it swings at a steady rate, so it can time short "
        "intervals",
        "a plant marker": "pushed into the soil beside a seedling it shows what was sown there",
        "a musical instrument": "struck, scraped or blown across it makes a sound that can keep "
        "a rhythm",
        "a stamp for patterns in clay": "pressed into soft clay it leaves its outline, which "
        "repeats into a border",
        "a signal to a search party": "placed where it catches the light or stands out against "
        "the ground it draws the eye from far away",
        "a unit of measure": "laid end to end it gives a repeatable length for rough "
        "measurements when no ruler is at hand",
        "a float for a fishing line": "tied to the line it marks where the hook is and dips when "
        "a fish bites",
        "a mould for sand castles": "filled with damp sand and turned over it leaves a tower "
        "with its shape",
        "a shadow-puppet piece": "held between a lamp and a wall it casts a shape that can be "
        "moved to tell a story",
        "a heat store for cold hands": "warmed near a stove it gives the heat back slowly "
        "because it holds it for a while",
        "a counterweight for a hanging lamp": "tied to the other end of the cord it balances "
        "the lamp at any height",
        "a game piece": "moved across a chalk grid it stands for a player in a board game",
    }
)
"""Diverge's pool: idea -> how it works (Narrowing's elaboration)."""

ORDINARY = frozenset({"a paperweight", "a doorstop"})
"""Ideas Narrowing drops as too ordinary."""

BASE_USES = ("a paperweight", "a doorstop", "a game piece")
"""What the Base stand-in answers, tersely."""

DIVERGE_COUNT = 12
NARROW_COUNT = 3

_OBJECT = re.compile(r"^Object: (.+?) \((.*)\)\s*$", re.MULTILINE)
_LIST = re.compile(r"^- (.+)$")
_USE = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)

ORDINARY_WORDS = frozenset({"paperweight", "doorstop", "decoration", "gift", "hold", "holder"})
CAUSAL_WORDS = frozenset({"because", "so", "which", "when", "until", "by", "it", "its"})


def _object_name(text: str) -> str:
    match = _OBJECT.search(text)
    return match.group(1) if match else "object"


def _section(text: str, heading: str) -> list[str]:
    """The `- item` lines right after the line starting with `heading`."""
    lines = text.splitlines()
    out: list[str] = []
    for index, line in enumerate(lines):
        if line.startswith(heading):
            for item in lines[index + 1 :]:
                match = _LIST.match(item)
                if not match:
                    break
                out.append(match.group(1))
            break
    return out


def _last_user(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


class AUTScriptedPolicy:
    """`scripted/aut-scripted`: answers the requests of `aut_prompts` by their headings: the
    Base task with a few plain uses, Diverge with a fixed pool of ideas (rotated per object),
    Narrowing by keeping the ideas not yet in the earlier runs' uses and elaborating them.

    Not a model of creativity: deterministic and stateless, as `ScriptedPolicy` requires.
    """

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        text = _last_user(messages)
        name = _object_name(text)
        if text.startswith(prompts.TASK_HEADING):
            return json.dumps([f"Use the {name} as {idea}." for idea in BASE_USES])
        if text.startswith(prompts.DIVERGE_HEADING):
            ideas = list(IDEAS)
            start = zlib.crc32(name.encode()) % len(ideas)
            rotated = ideas[start:] + ideas[:start]
            return json.dumps(rotated[:DIVERGE_COUNT])
        if text.startswith(prompts.NARROW_HEADING):
            candidates = _section(text, "Candidate uses")
            memory = " ".join(_section(text, "Uses already given")).lower()
            kept = [
                c
                for c in candidates
                if c in IDEAS and c not in ORDINARY and c.lower() not in memory
            ][:NARROW_COUNT]
            return json.dumps([f"Use the {name} as {c}: {IDEAS[c]}." for c in kept])
        return "[]"


def rate_use(use: str) -> dict[str, int]:
    """The stand-in judge's rating of one use.

    Originality: 1 with an ordinary word (paperweight, doorstop...), else 3, +1 from 12 words,
    +1 with a causal word. Elaboration: 1, +1 from 5 words, +1 from 10, +1 from 18, +1 with a
    causal word."""
    words = re.findall(r"[a-z']+", use.lower())
    causal = any(w in CAUSAL_WORDS for w in words)
    if any(w in ORDINARY_WORDS for w in words):
        originality = 1
    else:
        originality = min(5, 3 + (len(words) >= 12) + causal)
    elaboration = min(5, 1 + (len(words) >= 5) + (len(words) >= 10) + (len(words) >= 18) + causal)
    return {"originality": originality, "elaboration": elaboration}


class AUTJudgePolicy:
    """`scripted/aut-judge`: rates the numbered uses of a judge request with `rate_use`, surface
    heuristics, deterministic and stateless; any other request gets an object without ratings,
    which the judge records as missing."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        request = next(
            (
                m.content
                for m in messages
                if m.role == "user" and m.content.startswith(prompts.JUDGE_HEADING)
            ),
            None,
        )
        if request is None:
            return json.dumps({"error": "scripted AUT judge: not a rating request"})
        uses = _USE.findall(request.split("Uses to rate:", 1)[-1])
        return json.dumps([{"use": int(n), **rate_use(text)} for n, text in uses])
