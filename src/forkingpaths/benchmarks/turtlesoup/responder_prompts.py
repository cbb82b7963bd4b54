"""Prompts of the Responder (§4.2, App. E.1): answer generation and key clue identification.

The wording is ours, in English and Chinese; the content follows the paper's App. E.1: the answer
call judges the player's question against the soup surface and bottom only, by the three rules
(Yes: stated or directly implied; No: contradicted or directly refuted; Unknown: absent, needs
outside knowledge, or irrelevant) and replies with one bare word; the key clue call decides, from
surface, bottom and the Key Clue Library, whether the question hits a key clue, allowing
synonyms, and replies Yes or No. Every request starts with a heading line and keeps each input
in a section under a heading line of its own, so the scripted responder can read them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template
from types import MappingProxyType


@dataclass(frozen=True)
class ResponderPrompts:
    """All text the Responder shows a model in one language."""

    answer_heading: str
    """First line of the answer request's system turn."""
    clue_heading: str
    """First line of the key clue request's system turn."""
    surface_heading: str
    bottom_heading: str
    clues_heading: str
    question_heading: str
    """Section headings, each on a line of its own."""
    answer_system: Template
    """Answer call, system turn: role, rules, format, then `$surface` and `$bottom`."""
    answer_user: Template
    """Answer call, user turn: `$question`."""
    answer_corrective: Template
    """User turn after a reply that is not Yes/No/Unknown: `$reply` (cut short)."""
    clue_system: str
    """Key clue call, system turn: task, how to decide, format."""
    clue_user: Template
    """Key clue call, user turn: `$surface`, `$bottom`, `$clues` (numbered lines), `$question`."""
    clue_corrective: Template
    """User turn after a key clue reply that is not Yes/No: `$reply`."""
    clue_line: Template
    """One line of the clue library: `$number`, `$clue`."""


_EN_ANSWER_HEADING = "# Turtle Soup host: answer the player's question"
_EN_CLUE_HEADING = "# Turtle Soup host: does the question touch a key clue?"
_EN_SURFACE = "## Visible story (soup surface)"
_EN_BOTTOM = "## Hidden truth (soup bottom)"
_EN_CLUES = "## Key clue library"
_EN_QUESTION = "## The player's question"

EN = ResponderPrompts(
    answer_heading=_EN_ANSWER_HEADING,
    clue_heading=_EN_CLUE_HEADING,
    surface_heading=_EN_SURFACE,
    bottom_heading=_EN_BOTTOM,
    clues_heading=_EN_CLUES,
    question_heading=_EN_QUESTION,
    answer_system=Template(
        _EN_ANSWER_HEADING
        + """

You are the host of a Turtle Soup game (a situation puzzle, also called a lateral-thinking \
puzzle). The player has read only the visible story and tries to reconstruct the hidden truth by \
asking questions or proposing guesses. You know both texts below; the player's question \
comes in the next message. Decide how it stands against the two texts.

How to decide
Rely on the two texts and nothing else. Your reply is exactly one of: Yes, No, Unknown.
1. Yes
   - The question agrees with something the texts state: an event, a fact, what a character \
did, or why something happened.
   - Or it is not stated but follows from the texts alone by a direct inference that leaves no \
room for doubt.
2. No
   - The question conflicts with something the texts state: an event, a fact, what a character \
did, or why something happened.
   - Or a direct inference from the texts alone, leaving no room for doubt, shows it is false.
3. Unknown
   - Neither text mentions it and no direct inference that avoids speculation settles it.
   - Or settling it would take outside knowledge, common-sense guesses or assumptions that the \
texts do not contain. A question that has nothing to do with the story is also Unknown.

Reply format
- The whole reply is the single word Yes, No or Unknown.
- Give no explanation, reasoning, hint or any further information.

Keep in mind
- The two texts are your only source: set aside anything you know from elsewhere.
- Draw only plain, objective inferences; never speculate.

"""
        + _EN_SURFACE
        + "\n$surface\n\n"
        + _EN_BOTTOM
        + "\n$bottom"
    ),
    answer_user=Template(_EN_QUESTION + "\n$question"),
    answer_corrective=Template(
        'Your reply ("$reply") is not one of the allowed answers. Reply again with exactly one '
        "word, Yes, No or Unknown, and nothing else."
    ),
    clue_system=_EN_CLUE_HEADING
    + """

Task: from the visible story, the hidden truth and this puzzle's library of key clues, decide \
whether the player's question touches a key clue. Reply Yes or No, without explanation.

How to decide
- Read the question against the key clue library together with the hidden truth: does it reach \
the core of the story's causal logic?
- Do not answer the question itself. Decide only whether it hits a key clue: whether it is \
decisive for working out the hidden truth, or uncovers a central event of the story or of the \
truth, and whether it agrees with the truth and moves the reasoning forward substantially.
- A question that says the same thing as a clue in other words (synonyms, paraphrase) counts \
as touching that clue.

Reply format
Weigh the question silently, then reply with one word: Yes or No.""",
    clue_user=Template(
        _EN_SURFACE
        + "\n$surface\n\n"
        + _EN_BOTTOM
        + "\n$bottom\n\n"
        + _EN_CLUES
        + "\n$clues\n\n"
        + _EN_QUESTION
        + "\n$question"
    ),
    clue_corrective=Template(
        'Your reply ("$reply") is not a decision. Reply again with exactly one word, Yes or No, '
        "and nothing else."
    ),
    clue_line=Template("$number. $clue"),
)
"""English prompts."""

_ZH_ANSWER_HEADING = "# 海龟汤主持人：回答玩家的提问"
_ZH_CLUE_HEADING = "# 海龟汤主持人：这个提问是否触及关键线索？"
_ZH_SURFACE = "## 汤面（玩家看到的故事）"
_ZH_BOTTOM = "## 汤底（隐藏的真相）"
_ZH_CLUES = "## 关键线索库"
_ZH_QUESTION = "## 玩家的提问"

ZH = ResponderPrompts(
    answer_heading=_ZH_ANSWER_HEADING,
    clue_heading=_ZH_CLUE_HEADING,
    surface_heading=_ZH_SURFACE,
    bottom_heading=_ZH_BOTTOM,
    clues_heading=_ZH_CLUES,
    question_heading=_ZH_QUESTION,
    answer_system=Template(
        _ZH_ANSWER_HEADING
        + """

你是一局“海龟汤”（情境推理谜题，也叫水平思考谜题）的主持人。玩家只读过汤面，正通过提问或猜测来还原\
隐藏的真相。下面的两段文字你都知道，玩家的提问会在下一条消息中给出。请判断这个提问与两段文字相比是什么情况。

判断方法
只依据这两段文字，不依据任何其他东西。你的回复只能是以下之一：Yes、No、Unknown。
1. Yes
   - 提问与文字中写明的内容相符：事件、事实、人物的所作所为，或事情发生的原因。
   - 或者文字中没有直接写，但仅凭这两段文字就能直接、毫无疑问地推出。
2. No
   - 提问与文字中写明的内容相矛盾：事件、事实、人物的所作所为，或事情发生的原因。
   - 或者仅凭这两段文字，通过直接、毫无疑问的推理可以确定它是错的。
3. Unknown
   - 两段文字都没有提到，也无法通过不带猜测的直接推理来确定。
   - 或者要确定它，必须借助文字之外的知识、常识性猜测或文字中没有的假设。与故事毫不相干的提问也\
回答 Unknown。

回复格式
- 整个回复只有一个词：Yes、No 或 Unknown。
- 不要给出任何解释、理由、提示或其他信息。

注意
- 这两段文字是你唯一的信息来源，把你在别处知道的东西都放在一边。
- 只做显而易见、客观的推理，绝不揣测。

"""
        + _ZH_SURFACE
        + "\n$surface\n\n"
        + _ZH_BOTTOM
        + "\n$bottom"
    ),
    answer_user=Template(_ZH_QUESTION + "\n$question"),
    answer_corrective=Template(
        "你的回复（“$reply”）不是允许的答案。"
        "请重新回复，只写一个词：Yes、No 或 Unknown，不要写别的。"
    ),
    clue_system=_ZH_CLUE_HEADING
    + """

任务：根据汤面、汤底和本题的关键线索库，判断玩家的提问是否触及关键线索。只回答 Yes 或 No，不要解释。

判断方法
- 结合汤底，对照关键线索库来看这个提问：它是否触及故事因果逻辑的核心？
- 不要回答提问本身。只判断它是否命中关键线索：它对推出汤底是否起决定作用，是否揭示了故事或真相中\
的核心事件，是否与真相一致并能让推理明显向前推进。
- 提问若用别的说法（近义词、换一种表述）说出了某条线索的意思，也算触及这条线索。

回复格式
在心里权衡之后，只回复一个词：Yes 或 No。""",
    clue_user=Template(
        _ZH_SURFACE
        + "\n$surface\n\n"
        + _ZH_BOTTOM
        + "\n$bottom\n\n"
        + _ZH_CLUES
        + "\n$clues\n\n"
        + _ZH_QUESTION
        + "\n$question"
    ),
    clue_corrective=Template(
        "你的回复（“$reply”）不是一个判断。请重新回复，只写一个词：Yes 或 No，不要写别的。"
    ),
    clue_line=Template("$number. $clue"),
)
"""Chinese prompts (the replies asked for stay Yes/No/Unknown, as in the paper's transcripts)."""

PROMPTS = MappingProxyType({"en": EN, "zh": ZH})
"""Language -> prompts; the puzzle's language selects."""

REPLY_SHOWN = 80
"""Characters of a refused reply quoted back in a corrective turn."""
