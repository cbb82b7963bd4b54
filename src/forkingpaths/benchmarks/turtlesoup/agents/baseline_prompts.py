"""Prompts of the baseline questioner ("w/o all agents", §5.4 Table 3), English and Chinese."""

from __future__ import annotations

from string import Template
from types import MappingProxyType

from forkingpaths.benchmarks.turtlesoup.agents.mosaic_prompts import resolve_language

# The baseline asks the model directly for the next yes/no question from the surface and the full
# history, and at the end for the story as the same JSON summary Mosaic gives ({"details",
# "logic", "conclusion"}, the three parts described as in Mosaic's summary prompt), so that
# Table 3 compares the agents' summaries in one format. It shares the input block labels and
# history rendering of `mosaic_prompts`, so both agents show the model the same history.
QUESTION_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / ASK THE NEXT QUESTION", "zh": "海龟汤 / 提出下一个问题"}
)
FINAL_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / TELL THE WHOLE STORY", "zh": "海龟汤 / 讲出完整的故事"}
)

_QUESTION = MappingProxyType(
    {
        "en": Template(
            """$marker
You are the player in a Turtle Soup game (a situation puzzle). The host knows the hidden story \
behind the surface below and answers each of your questions only with Yes, No or Unknown; an \
answer marked <Key Clue> touched a key point of the hidden story. Your goal is to uncover the \
whole hidden story.

<Story surface>
$surface
</Story surface>

<Questions and answers so far>
$history
</Questions and answers so far>

This is question $turn of at most $max_turns. Ask the next question: one yes/no question about \
one thing only, that does not repeat an earlier question. Reply with the question alone."""
        ),
        "zh": Template(
            """$marker
你是一局海龟汤（情境推理游戏）的玩家。主持人知道下面汤面背后的汤底，对你的每个问题只回答"是""否"或\
"不知道"；标有<关键线索>的回答触及了汤底的关键点。你的目标是还原完整的汤底。

<汤面>
$surface
</汤面>

<已有问答>
$history
</已有问答>

这是第 $turn 个问题（最多 $max_turns 个）。请提出下一个问题：一个只问一件事、能用是或否回答、且不\
与之前重复的问题。只回复这个问题本身。"""
        ),
    }
)

_FINAL = MappingProxyType(
    {
        "en": Template(
            """$marker
The questioning of this Turtle Soup game is over. From the story surface and all the questions \
and answers, tell the hidden story in full: what happened, why it happened and how it explains \
the surface.

<Story surface>
$surface
</Story surface>

<Key clue records>
$key_clues
</Key clue records>

<Questions and answers so far>
$history
</Questions and answers so far>

The account has three parts:
1. details: every concrete fact that matters for the causes, background or explanation, taken \
from the surface, the key clues and the answers (stated or implied), each specific.
2. logic: the causal chain or hidden mechanism behind the story, abstract (no names or \
particulars), connected and covering everything.
3. conclusion: one fluent, complete explanation of the story built on the logic and supported \
by the details, consistent with both.
Where the answers leave gaps, fill them with plausible inferences that fit everything known and \
list them among the details.

Reply with one JSON object exactly in this shape, with no comments and nothing around it:
{"details": ["detail 1", "..."], "logic": ["step 1", "..."], "conclusion": "..."}"""
        ),
        "zh": Template(
            """$marker
这局海龟汤的提问已经结束。请根据汤面和全部问答，完整讲出汤底：发生了什么、为什么发生，以及它如何解\
释汤面。

<汤面>
$surface
</汤面>

<关键线索记录>
$key_clues
</关键线索记录>

<已有问答>
$history
</已有问答>

还原包含三部分：
1. details（细节）：理解起因、背景或解释所需的每一条具体信息，取自汤面、关键线索和问答（明说或暗含\
），每条具体。
2. logic（逻辑）：故事背后的因果链或内在机制，抽象表述（不出现人名和具体细节），连贯并覆盖全部要点。
3. conclusion（结论）：以逻辑为骨架、以细节为证据的一段流畅完整的故事解释，与两者一致。
问答没有覆盖到的地方，可以用与已知信息相符的合理推断补足，并列入细节。

只回复一个如下格式的 JSON 对象，键名保持英文，不要加注释，前后不要有其他文字：
{"details": ["细节1", "..."], "logic": ["步骤1", "..."], "conclusion": "..."}"""
        ),
    }
)


def render_question(
    language: str, *, surface: str, history: str, turn: int | str, max_turns: int | str
) -> str:
    lang = resolve_language(language)
    return _QUESTION[lang].substitute(
        marker=QUESTION_MARKER[lang],
        surface=surface,
        history=history,
        turn=turn,
        max_turns=max_turns,
    )


def render_final(language: str, *, surface: str, key_clues: str, history: str) -> str:
    lang = resolve_language(language)
    return _FINAL[lang].substitute(
        marker=FINAL_MARKER[lang], surface=surface, key_clues=key_clues, history=history
    )
