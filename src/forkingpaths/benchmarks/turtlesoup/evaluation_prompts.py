"""All text the TurtleSoup evaluation judge is shown (§4.4, App. D.3, E.3), in English and Chinese.

The wording is ours; the content follows App. E.3: the point extraction prompt (a causal chain of
about N abstract logic steps and about M concrete details, in two labelled blocks of bullet
lines), the one-against-many similarity prompt (a 0-1 score per predicted statement, the best
number and score as one JSON object, `best_match_index` null below the 0.5 validity threshold)
and the conclusion prompt (the paper names it in §4.4 but prints no text: a holistic 0-1 score of
the whole summary against the soup bottom, as one JSON object). The puzzle's language picks the
set (`prompts_for`); the tags around each input let the scripted judge find its inputs again.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

from forkingpaths.core.errors import ConfigError

LANGUAGES = ("en", "zh")
"""Languages every prompt exists in."""


@dataclass(frozen=True)
class EvaluationPrompts:
    """One language's evaluation prompts; Templates list their fields in the field docstring."""

    system: str
    """System turn of every judge request."""
    extract_heading: str
    """First line of the extraction request (the scripted judge recognises the request by it)."""
    extract: Template
    """Extraction request. Fields: n_logic, n_details, text (placed between text_open/close)."""
    text_open: str
    text_close: str
    """Tags around the explanation to decompose."""
    logic_label: str
    details_label: str
    """Block headers of the extraction answer, exactly as the judge is told to write them."""
    logic_item: str
    details_item: str
    """Item prefix words of the answer format ("Logic" -> "- Logic 1: ...")."""
    match_heading: str
    """First line of the similarity request."""
    match: Template
    """Similarity request. Fields: base, predicted (numbered lines from 1)."""
    base_open: str
    base_close: str
    """Tags around the base (gold) statement."""
    predicted_open: str
    predicted_close: str
    """Tags around the numbered predicted statements."""
    conclusion_heading: str
    """First line of the conclusion request."""
    conclusion: Template
    """Conclusion request. Fields: bottom, summary."""
    bottom_open: str
    bottom_close: str
    """Tags around the soup bottom."""
    summary_open: str
    summary_close: str
    """Tags around the player's summary."""
    corrective_extract: Template
    corrective_match: Template
    corrective_conclusion: Template
    """User turns sent after an unusable reply. Field: reason (what was wrong)."""
    summary_conclusion: str
    summary_logic: str
    summary_details: str
    """Headings used when a JSON summary is rendered as text for the conclusion judge."""


EN = EvaluationPrompts(
    system=(
        "You referee a Turtle Soup (lateral thinking) game. You break explanations of a story "
        "down into checkable points and compare statements by what they mean, not by how they "
        "are worded. You follow the requested output format exactly."
    ),
    extract_heading="# Evaluation: break an explanation down into points",
    extract=Template(
        """# Evaluation: break an explanation down into points

## Goal
Read the explanation of a story between the <Explanation> tags and pull out (a) the chain of \
logic that makes the story work and (b) the specific facts a reader needs to understand it.

## Block 1: [Logical Relationships]
- Purpose: show the causal chain, or the hidden pattern, that drives the story from beginning \
to end.
- How many: about $n_logic logical steps.
- Rules:
  - Stay abstract: describe how and why things happen, as a general chain of cause and effect. \
Do not mention any names of people, places, times or other particulars.
  - Stay connected: the steps must form one chain from the first cause to the final outcome, \
with no gaps.
  - Stay complete: together the steps must account for every major event and turning point.

## Block 2: [Detailed Information]
- Purpose: list the concrete facts that are essential for understanding the story.
- How many: about $n_details pieces of information.
- Rules:
  - Be specific: name actual scenes, people, objects, times or facts; nothing vague.
  - One fact per line: keep each piece of information separate.
  - Miss nothing essential.

<Explanation>
$text
</Explanation>

## Answer format
Write only the two blocks below, with no comments before or after them:
[Logical Relationships]
- Logic 1: ...
- Logic 2: ...
- ...
[Detailed Information]
- Detail 1: ...
- Detail 2: ...
- ..."""
    ),
    text_open="<Explanation>",
    text_close="</Explanation>",
    logic_label="[Logical Relationships]",
    details_label="[Detailed Information]",
    logic_item="Logic",
    details_item="Detail",
    match_heading="# Evaluation: match one statement against a list",
    match=Template(
        """# Evaluation: match one statement against a list

## Goal
You get one base statement and a numbered list of predicted statements. Score every predicted \
statement on its own for semantic similarity to the base statement, from 0.0 to 1.0. Then take \
the highest of these scores and the number of the statement that earned it. A best match counts \
as valid only when its score is at least 0.5.

## How to judge similarity
Compare the underlying meaning: the core event or outcome each statement describes. Wording \
does not need to agree; disregard differences of phrasing, of background and of minor detail. \
1.0 means the core meaning is the same; 0.0 means the statements are about entirely different \
things.

<Base Statement>
$base
</Base Statement>

<Predicted Statements>
$predicted
</Predicted Statements>

## Answer format
Reply with one JSON object and nothing else, in one of these two shapes.
When the highest score is 0.5 or more:
{"best_match_index": <number of that statement in the list>, "best_match_score": <its score>}
When the highest score is below 0.5:
{"best_match_index": null, "best_match_score": <the highest score you found>}"""
    ),
    base_open="<Base Statement>",
    base_close="</Base Statement>",
    predicted_open="<Predicted Statements>",
    predicted_close="</Predicted Statements>",
    conclusion_heading="# Evaluation: compare a final summary with the true solution",
    conclusion=Template(
        """# Evaluation: compare a final summary with the true solution

## Goal
A player questioned their way through a Turtle Soup puzzle and then wrote a final summary of \
what they think happened. Judge, as a whole, how well that summary matches the true solution \
(the soup bottom) between the <Solution> tags.

## How to judge
- Look at substance: who did what, why, and the central twist that explains the puzzle. \
Wording, order and length do not matter.
- 1.0: the summary gives the same explanation as the solution, including the twist.
- About 0.5: the summary gets the core situation right but misses or mistakes a key cause or \
motive.
- 0.0: the summary explains something else, or nothing at all.
- Use the whole range between these anchors; contradicting the solution lowers the score.

<Solution>
$bottom
</Solution>

<Summary>
$summary
</Summary>

## Answer format
Reply with one JSON object and nothing else:
{"conclusion_score": <a number from 0.0 to 1.0>}"""
    ),
    bottom_open="<Solution>",
    bottom_close="</Solution>",
    summary_open="<Summary>",
    summary_close="</Summary>",
    corrective_extract=Template(
        """Your answer could not be used ($reason). Answer again with only the two blocks: a \
line [Logical Relationships] followed by "- Logic 1: ..." lines, then a line [Detailed \
Information] followed by "- Detail 1: ..." lines."""
    ),
    corrective_match=Template(
        """Your answer could not be used ($reason). Reply again with one JSON object only: \
{"best_match_index": <number from the list, or null>, "best_match_score": <number from 0.0 to \
1.0>}, the number when the score is 0.5 or more and null when it is below 0.5."""
    ),
    corrective_conclusion=Template(
        """Your answer could not be used ($reason). Reply again with one JSON object only: \
{"conclusion_score": <number from 0.0 to 1.0>}."""
    ),
    summary_conclusion="Conclusion:",
    summary_logic="Logic:",
    summary_details="Details:",
)
"""The English prompts."""


ZH = EvaluationPrompts(
    system=(
        "你是海龟汤（情境推理）游戏的裁判。你负责把故事的解释拆成可核对的要点，"
        "并按含义而不是措辞来比较陈述。请严格按照要求的格式输出。"
    ),
    extract_heading="# 评测：把解释拆分为要点",
    extract=Template(
        """# 评测：把解释拆分为要点

## 目标
阅读 <解释> 标签之间的故事解释，从中整理出：（1）推动整个故事的逻辑链条；\
（2）读懂这个故事必不可少的具体事实。

## 第一部分：[逻辑关系]
- 目的：揭示驱动故事从开头走到结局的因果链条或隐藏规律。
- 数量：大约 $n_logic 条逻辑步骤。
- 要求：
  - 抽象概括：用一般化的因果链描述事情“如何”以及“为什么”发生，不要出现任何人名、地名、\
时间或其他具体细节。
  - 前后连贯：各步骤要从最初的原因一直连到最终的结果，中间不能断开。
  - 覆盖全面：这些步骤合起来要能解释所有主要情节和转折。

## 第二部分：[细节信息]
- 目的：列出理解这个故事所必需的具体事实。
- 数量：大约 $n_details 条信息。
- 要求：
  - 具体明确：写出实际的场景、人物、物品、时间或事实，不要含糊其辞。
  - 一条一事：每条只写一个信息点。
  - 不遗漏：关键细节一条都不能少。

<解释>
$text
</解释>

## 输出格式
只输出下面两个部分，前后不要添加任何说明：
[逻辑关系]
- 逻辑1：……
- 逻辑2：……
- ……
[细节信息]
- 细节1：……
- 细节2：……
- ……"""
    ),
    text_open="<解释>",
    text_close="</解释>",
    logic_label="[逻辑关系]",
    details_label="[细节信息]",
    logic_item="逻辑",
    details_item="细节",
    match_heading="# 评测：将一条陈述与一组陈述逐一比对",
    match=Template(
        """# 评测：将一条陈述与一组陈述逐一比对

## 目标
你会看到一条基准陈述和一组带编号的预测陈述。请分别为每条预测陈述打分，衡量它与基准陈述\
在语义上的相似程度，范围 0.0 到 1.0。然后找出其中的最高分以及得到该分数的陈述编号。\
只有最高分不低于 0.5 时，这个最佳匹配才算有效。

## 相似度的判断标准
比较陈述背后的含义，即它所描述的核心事件或结果。措辞不必一致；表达方式、背景信息和次要细节\
上的差别都不必计较。1.0 表示核心含义相同；0.0 表示两者说的是完全不同的事。

<基准陈述>
$base
</基准陈述>

<预测陈述>
$predicted
</预测陈述>

## 输出格式
只回复一个 JSON 对象，不要有任何其他文字，并使用下面两种形式之一。
最高分不低于 0.5 时：
{"best_match_index": <该陈述在列表中的编号>, "best_match_score": <它的分数>}
最高分低于 0.5 时：
{"best_match_index": null, "best_match_score": <你找到的最高分>}"""
    ),
    base_open="<基准陈述>",
    base_close="</基准陈述>",
    predicted_open="<预测陈述>",
    predicted_close="</预测陈述>",
    conclusion_heading="# 评测：将最终总结与真实汤底对照",
    conclusion=Template(
        """# 评测：将最终总结与真实汤底对照

## 目标
一名玩家通过提问推理了一道海龟汤，最后写下了他认为的事情经过。请从整体上判断这份总结与 \
<汤底> 标签之间的真实答案吻合到什么程度。

## 判断方法
- 看实质内容：谁做了什么、为什么这样做，以及解开谜题的关键反转。措辞、顺序和篇幅都不重要。
- 1.0：总结给出的解释与汤底相同，包括关键反转。
- 约 0.5：总结抓住了核心情境，但漏掉或弄错了关键的原因或动机。
- 0.0：总结解释的是另一回事，或者什么都没解释。
- 可以使用这些参照点之间的任何分数；与汤底相矛盾的内容应当扣分。

<汤底>
$bottom
</汤底>

<总结>
$summary
</总结>

## 输出格式
只回复一个 JSON 对象，不要有任何其他文字：
{"conclusion_score": <0.0 到 1.0 之间的数>}"""
    ),
    bottom_open="<汤底>",
    bottom_close="</汤底>",
    summary_open="<总结>",
    summary_close="</总结>",
    corrective_extract=Template(
        """你的回答无法使用（$reason）。请重新回答，只输出两个部分：先写一行 [逻辑关系]，\
后面跟若干行“- 逻辑1：……”；再写一行 [细节信息]，后面跟若干行“- 细节1：……”。"""
    ),
    corrective_match=Template(
        """你的回答无法使用（$reason）。请重新回复，只输出一个 JSON 对象：\
{"best_match_index": <列表中的编号，或 null>, "best_match_score": <0.0 到 1.0 之间的数>}；\
分数不低于 0.5 时给出编号，低于 0.5 时为 null。"""
    ),
    corrective_conclusion=Template(
        """你的回答无法使用（$reason）。请重新回复，只输出一个 JSON 对象：\
{"conclusion_score": <0.0 到 1.0 之间的数>}。"""
    ),
    summary_conclusion="结论：",
    summary_logic="逻辑：",
    summary_details="细节：",
)
"""The Chinese prompts."""


def prompts_for(language: str) -> EvaluationPrompts:
    """The prompt set of `language` ("en" or "zh")."""
    if language == "en":
        return EN
    if language == "zh":
        return ZH
    raise ConfigError(f"language: expected one of {', '.join(LANGUAGES)}, got {language!r}")
