"""Prompts of Mosaic-Agent (§4.1, App. E.2) in English and Chinese, and the genre table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.turtlesoup.responder import ANSWER_WORDS as RESPONDER_ANSWER_WORDS
from forkingpaths.benchmarks.turtlesoup.responder import KEY_CLUE_TAGS

# Every prompt carries the information, rules and output format of the paper's App. E.2 prompt of
# the same role in our own words. Each starts with a marker line (how `scripted.py` recognises the
# prompt kind) and wraps its inputs in `<Label>...</Label>` blocks whose labels are listed in
# `SECTION_LABELS`, so a reader (or the scripted policy) finds every input by name. The belief
# state keeps the English JSON keys `logic`, `details`, `conclusion` in both languages: the
# evaluation reads them (contract §3).

LANGUAGES = ("en", "zh")
"""Prompt languages; the puzzle's language selects."""

# Marker lines, one per prompt kind and language: the first line of the rendered prompt.
LOCAL_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / ANALYSE THE LATEST ANSWER", "zh": "海龟汤 / 解读最新回答"}
)
BELIEF_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / UPDATE THE WORKING THEORY", "zh": "海龟汤 / 更新整体推理"}
)
APS_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / FIND THE DOUBTS IN THE THEORY", "zh": "海龟汤 / 找出推理中的疑点"}
)
GENRE_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / CLASSIFY THE STORY", "zh": "海龟汤 / 判断故事类型"}
)
CANDIDATES_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / PROPOSE THREE QUESTIONS", "zh": "海龟汤 / 拟出三个问题"}
)
SCREEN_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / CHOOSE THE NEXT QUESTION", "zh": "海龟汤 / 选出下一个问题"}
)
SUMMARY_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / FINAL ACCOUNT OF THE STORY", "zh": "海龟汤 / 最终还原故事"}
)

SECTION_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "surface": MappingProxyType({"en": "Story surface", "zh": "汤面"}),
        "key_clues": MappingProxyType({"en": "Key clue records", "zh": "关键线索记录"}),
        "history": MappingProxyType({"en": "Questions and answers so far", "zh": "已有问答"}),
        "recent": MappingProxyType({"en": "Recent questions and answers", "zh": "最近的问答"}),
        "latest": MappingProxyType({"en": "Latest question and answer", "zh": "最新一问"}),
        "earlier": MappingProxyType({"en": "Earlier questions and answers", "zh": "此前的问答"}),
        "previous": MappingProxyType({"en": "Previous theory", "zh": "先前的推理"}),
        "logic": MappingProxyType({"en": "Theory: logic", "zh": "推理：逻辑"}),
        "details": MappingProxyType({"en": "Theory: details", "zh": "推理：细节"}),
        "conclusion": MappingProxyType({"en": "Theory: conclusion", "zh": "推理：结论"}),
        "advice": MappingProxyType({"en": "Question suggestions", "zh": "提问建议"}),
        "analysis": MappingProxyType({"en": "Analysis of the last answer", "zh": "上一回答的分析"}),
        "guidance": MappingProxyType({"en": "Genre guidance", "zh": "类型指引"}),
        "asked": MappingProxyType({"en": "Questions already asked", "zh": "已问过的问题"}),
        "blacklist": MappingProxyType({"en": "Ruled-out directions", "zh": "已排除的方向"}),
        "candidates": MappingProxyType({"en": "Candidates", "zh": "候选问题"}),
        "genres": MappingProxyType({"en": "Genres", "zh": "类型列表"}),
    }
)
"""Input block labels: kind -> language -> label, as written between `<` and `>`."""

NONE_TEXT = MappingProxyType({"en": "(none yet)", "zh": "（暂无）"})
"""What an empty input block says."""

KEY_CLUE_TAG: Mapping[str, str] = KEY_CLUE_TAGS
"""How a flagged answer is shown in a history line: the responder's tag of each language, as
the dialogue shows it to a player."""

ANSWER_WORDS: Mapping[str, Mapping[str, str]] = RESPONDER_ANSWER_WORDS
"""The responder's answers (contract §2 `ANSWERS`) as a history line shows them: the words the
dialogue shows a player of each language."""

HISTORY_LINE = MappingProxyType({"en": ("Q", "A", ": "), "zh": ("问", "答", "：")})
"""(question prefix, answer prefix, separator) of a history line: `Q3: ...` / `A3: Yes`."""


@dataclass(frozen=True)
class Genre:
    """A narrative genre the meta-cognition agent can choose (the paper's five, App. E.2)."""

    id: str
    """The benchmark's category id of this genre (contract §1)."""
    names: Mapping[str, str]
    """Language -> the name listed in the classification prompt (the one a vote must give)."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted in a vote (the paper's strategy titles, short forms)."""


GENRES: tuple[Genre, ...] = (
    Genre(
        "crime_thriller",
        MappingProxyType({"en": "Crime Thriller", "zh": "犯罪惊悚"}),
        ("crime", "crime thriller type", "罪案惊悚", "罪案", "犯罪"),
    ),
    Genre(
        "mind_game",
        MappingProxyType({"en": "Mind Game", "zh": "心理迷局"}),
        ("mind maze", "mind maze type", "psychological", "心理迷宫", "心理"),
    ),
    Genre(
        "supernatural",
        MappingProxyType({"en": "Supernatural", "zh": "超自然"}),
        ("supernatural fantasy", "supernatural fantasy type", "fantasy", "灵异", "奇幻"),
    ),
    Genre(
        "constant_change",
        MappingProxyType({"en": "Constant Change", "zh": "世事无常"}),
        ("worldly vicissitudes", "worldly vicissitudes type", "vicissitudes", "无常"),
    ),
    Genre(
        "clever_logic",
        MappingProxyType({"en": "Clever Logic", "zh": "巧妙逻辑"}),
        ("logic and cleverness", "logic and cleverness type", "logic", "巧思", "逻辑"),
    ),
)
"""The five narrative genres of App. E.2, named as the benchmark's categories in both languages
(`puzzles.CATEGORIES`, `puzzles.CATEGORY_NAMES_ZH`). The sixth
category, Original, is a source (expert-authored stories of any genre), not a genre: it has no
strategy in the paper and is not offered as a vote."""


def genre_by_id(genre_id: str) -> Genre:
    """The genre with this id (KeyError for an unknown id)."""
    for genre in GENRES:
        if genre.id == genre_id:
            return genre
    raise KeyError(genre_id)


# --- English ---------------------------------------------------------------------------------

_LOCAL_EN = Template(
    """$marker
A new answer has just come in during a Turtle Soup game (a situation puzzle: the host knows the \
hidden story and answers the player's questions with Yes, No or Unknown). Work out what this \
answer changes in our picture of the story.

<Latest question and answer>
$latest
</Latest question and answer>

<Earlier questions and answers>
$history
</Earlier questions and answers>

<Story surface>
$surface
</Story surface>

Cover three points, each under its own heading:
1. New information: does the answer tell us something new about the story behind the surface? \
If so, say exactly what.
2. Conflicts: does the answer clash with earlier answers or with our current picture? If so, \
name the clash.
3. Adjustment: how should our picture of the story change because of this answer? Give \
concrete changes.

Keep each point short and organised so that it helps to choose the next question."""
)

_BELIEF_EN = Template(
    """$marker
You maintain the working theory of a Turtle Soup game. Using the story surface, the key clue \
records, every question and answer so far and the previous theory, write a complete and \
rigorous theory that explains every part of the situation. It has three parts: details, logic \
and conclusion.

<Story surface>
$surface
</Story surface>

<Key clue records>
$key_clues
</Key clue records>

<Questions and answers so far>
$history
</Questions and answers so far>

<Previous theory>
$previous
</Previous theory>

What each part must hold:
1. details: every concrete fact needed to understand the causes, the background or the \
explanation of the story. Go through the surface, the key clue records and the answers and \
collect what they state or imply. Each item is specific and factual; keep, correct or extend \
the details of the previous theory.
2. logic: the causal chain or hidden mechanism that drives the story, explaining why the odd or \
contradictory parts of the surface happen and in what order. Write it abstractly, with no \
names or particular details, as a connected pattern that covers everything and would fit other \
stories of the same shape.
3. conclusion: one fluent, detailed explanation of the whole story that follows the logic as \
its backbone and uses the details as evidence; it must agree with every detail and every step.
4. Gaps: where the answers are not enough, you may fill the gap with a plausible inference that \
fits everything known; put the inferred facts among the details too.

Reply with one JSON object exactly in this shape, with no comments and nothing around it:
{"details": ["detail 1", "..."], "logic": ["step 1", "..."], "conclusion": "..."}"""
)

_APS_EN = Template(
    """$marker
In a Turtle Soup game you review the current theory of the hidden story to find what is still \
unresolved.

<Story surface>
$surface
</Story surface>

<Key clue records>
$key_clues
</Key clue records>

<Theory: logic>
$logic
</Theory: logic>

<Theory: details>
$details
</Theory: details>

<Theory: conclusion>
$conclusion
</Theory: conclusion>

Your task:
- Find the points of doubt: parts of the theory that are vague, contradict each other or are \
not explained enough, and elements of the story surface the theory does not cover yet. Quote \
the exact words or phrase each doubt is about.
- For every doubt, think through the different explanations or turns of the story that could \
lie behind it, write that analysis down, and propose one concrete yes/no question that tests \
one of those possibilities.

Reply with a JSON list holding one object per doubt, and nothing else:
[{"doubt": "the quoted words and what is unclear", "analysis": "possible explanations", \
"proposal": "a yes/no question?"}]"""
)

_GENRE_EN = Template(
    """$marker
You are an experienced judge of Turtle Soup stories. From the story surface, the questions and \
answers so far and the key clue records, pick the one genre from the list below that best \
captures what is at the heart of this story.

<Story surface>
$surface
</Story surface>

<Questions and answers so far>
$history
</Questions and answers so far>

<Key clue records>
$key_clues
</Key clue records>

Weigh everything above, in particular:
- The nature of the scene: an everyday event, a strange phenomenon, a crime, a logic puzzle or \
something else?
- Where the questioning has led so far: does it call for special knowledge or unusual logic?
- What the key clues centre on: a motive, a physical process, a state of mind, a gap in \
information, a play on words, ...

<Genres>
$genres
</Genres>

Answer with exactly one genre name copied from the list, with no explanation and no other \
text."""
)

_CANDIDATES_EN = Template(
    """$marker
You plan the player's questions in a Turtle Soup game (a situation puzzle). The host answers \
only Yes, No or Unknown, so the hidden story has to be uncovered one yes/no question at a time.

Rules for every question:
- It is a yes/no question.
- It asks about one thing only: no combined questions such as "Is it A and B?".

Write three different questions that follow the rules and the approach below and explore \
different directions. Make sure that:
- at least one of them builds on the question suggestions or on the analysis of the last answer;
- at least one is about a concrete event or detail (a place, an action, an object);
- they reach into different dimensions (time, feelings, ...) so that the three do not overlap.

Approach:
1. What comes first:
   - Unclear points first: settle vague details and gaps in the logic.
   - Use what was just learnt: steer by the new information in the analysis of the last answer.
   - Go from broad to narrow: once a broad key point is confirmed, move on to its specifics.
2. Where to look:
   - The frame of the story: time, place, people, causes.
   - After two Unknown answers in a row, change direction at once.
   - Follow the genre guidance below.
3. Inference and empathy:
   - Project how the story unfolds from the clues, watching how the characters' feelings drive \
events.
   - Favour hidden emotional conflicts and motives.

<Story surface>
$surface
</Story surface>

<Question suggestions>
$advice
</Question suggestions>

<Analysis of the last answer>
$analysis
</Analysis of the last answer>

<Genre guidance>
$guidance
</Genre guidance>

<Recent questions and answers>
$history
</Recent questions and answers>

Reply with the three questions only, without explanations, in exactly this format:
1. <question 1>?
2. <question 2>?
3. <question 3>?"""
)

_SCREEN_EN = Template(
    """$marker
You choose the player's next question in a Turtle Soup game: of the candidates below, pick the \
one that best moves the game on towards the hidden truth.

<Story surface>
$surface
</Story surface>

<Question suggestions>
$advice
</Question suggestions>

<Analysis of the last answer>
$analysis
</Analysis of the last answer>

<Recent questions and answers>
$history
</Recent questions and answers>

<Questions already asked>
$asked
</Questions already asked>

<Candidates>
$candidates
</Candidates>

How to choose, and what to avoid:
- No repeats: the chosen question must not repeat or closely resemble a question already asked.
- Key points first: prefer a candidate that follows up the question suggestions or the new \
information or conflicts in the analysis of the last answer.
- Change course: if the last two answers in the recent record were both Unknown, prefer a \
candidate that opens an entirely new direction.
- Ruled-out directions: do not choose a question equal or close to one of these, whose \
directions have already been ruled out:
<Ruled-out directions>
$blacklist
</Ruled-out directions>
- Progress: choose the candidate most likely to reveal a new clue or close a gap in the logic.

Reply with the chosen question copied word for word from the candidates (without its number); \
do not change its wording. If no candidate meets the criteria, reply with candidate 1."""
)

_SUMMARY_EN = Template(
    """$marker
The questioning of this Turtle Soup game is over. From the story surface, the key clue records \
and every question and answer, write your final account of the hidden story.

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
)

_UNKNOWN_STRATEGY_EN = """Genre: not determined yet.
Aim for now: gather the basic facts quickly, to grasp the core elements of the story and lay \
the ground for the reasoning ahead and for a reliable genre judgement. Use these lines of \
questioning first:
1. Basic framing and exclusions (probe these first):
   - Real or not: does the story keep to the logic of the real world, or does it contain \
supernatural, science-fiction or fantasy elements?
   - Nature of the beings: is every entity mentioned a human being? Do animals, objects, ghosts \
or other non-human beings play a key part?
2. Core dimensions: with what is known, probe whichever of these is most likely to expose the \
truth:
   - People: how many key characters, their sex, jobs and relationships.
   - Events: is someone clearly dead, and how did they die? Does the story span more than one \
period of time?
   - Objects and setting: do the objects mentioned carry a special meaning, or does their \
number matter?
3. Basic analysis along the way: while collecting facts, reason from the clues:
   - Setting and motive: the place and era of the story, and why the characters act as they do.
   - Events and details: anomalies, contradictions and details that are stressed on purpose.
   - Conflicts and viewpoints: conflicts nobody mentions, gaps in what characters know, \
different points of view.
Instruction: weigh the surface and what is known, then ask in the direction that most urgently \
needs confirming, so as to gain key information, test a central hypothesis or drop a wrong \
path as efficiently as possible."""

_STRATEGIES_EN = MappingProxyType(
    {
        "crime_thriller": """Genre: Crime Thriller.
What the genre is about: a crime born of human malice (murder, abduction, abuse, a disturbed \
mind at work). Ghosts and the supernatural play no part. The task is to bring out the brutal \
facts hidden behind an ordinary-looking or strange scene.
Patterns that recur:
- Danger at home: familiar places and people (under the bed, next door, things in the house, \
the neighbours) are often where the threat lies.
- Deceiving senses: a sound (dripping: blood), a glimpse (a blurred shape: a killer or a body) \
or a touch (something cold: a corpse or an artificial limb) often disguises the horror or \
points to it.
- Tricks of identity: the culprit poses as someone harmless or exploits a peculiarity of \
identity (a "blind" witness who misleads).
- Everyday objects turned into weapons or evidence: food, furniture, dolls or photographs carry \
the crime or the proof of it.
- Typical plot elements: dismemberment, hidden bodies, misuse of corpses, captivity.
How to reason:
- Work backwards from the ending or the central anomaly to the chain of actions behind it.
- Link details that seem unrelated (hot weather + air conditioning off + a strange smell: a \
body decomposing).
- Look for what does not add up in the surface (a blind person describing what they "saw").
- Rule out the supernatural and accidents first, then concentrate on the ways a person could \
have done it.
- Take the place of the victim and of the culprit in turn: how would each behave, and why \
would the culprit act?
Remember: spot what is abnormal or contradictory, fit the fragments together and guess boldly \
but with grounds, to rebuild a crime that is logical yet surprising. Keep in mind that the truth \
is usually found in human cruelty and harsh circumstances.""",
        "mind_game": """Genre: Mind Game.
What the genre is about: the puzzle comes from inside a character's head: a mental illness \
(hallucinations, delusions, split identity), an extreme emotion (paranoia, obsession, grief), a \
warped perception or a hidden, irrational motive. Nothing supernatural; the story is about \
inner turmoil and suffering, and the narrator often cannot be trusted.
Patterns that recur:
- The threat is within: danger comes from a character's own thoughts, memories or impulses; \
the outside world only triggers or mirrors it.
- Bent perception: what a character sees, hears or feels may come from their state of mind \
rather than from reality (people who are not there, voices giving orders).
- Lost or split identity: multiple personalities, amnesia, a break with reality after trauma; \
the character may not know who they are.
- Ordinary things as symbols: an object, a place or a date can set off traumatic memories or \
compulsive acts.
- Unhealthy ways of coping: self-harm, escape into fantasy, keeping the dead close as objects.
How to reason:
- Ask about the character's feelings, thoughts, mental health and how far their memory can be \
trusted; look for illness or trauma in their past.
- Dig for the force underneath the act: fear, love, a delusion, an impulse they cannot control?
- Keep doubting the narrator: could the account be distorted by their state or by gaps in \
memory?
- Read strange behaviour as the outward sign of an inner state: what state of mind would make \
someone do this?
- Ask whether recurring images or objects stand for an inner conflict or a trauma.
Remember: go into the character's inner world and find where perception, thinking or identity \
departs from the normal; look past the behaviour to the twisted logic behind it. Speculate \
freely about the state of mind but keep to the clues, and look for the truth inside the \
character's head rather than in a plot from outside.""",
        "supernatural": """Genre: Supernatural.
What the genre is about: the solution needs forces beyond realistic logic: ghosts, magic, \
curses, special powers (foresight, seeing spirits), reincarnation, or fantasy and \
science-fiction devices such as time travel or parallel worlds. The task is to reveal the unreal \
element and the rules it works by.
Patterns that recur:
- Ghosts and hauntings: a spirit appears because of an unfinished wish, revenge or a ritual, \
often tied to a place, a time or an object (a mirror, a keepsake).
- Powers and curses: a character has or meets an extraordinary ability (foreseeing a death, \
killing by thought) or a curse, usually with unexpected consequences.
- Non-human beings and bargains: dealings with demons, spirits or monsters, usually a pact with \
an ironic catch or a heavy price.
- Broken time and space: time loops, time travel, parallel worlds, endless rebirth, swapped \
bodies.
- A blurred line between living and dead: someone may go on acting after death without \
knowing it, or talk with the dead.
- Folklore and taboos: local legends and beliefs; breaking a taboo sets things off.
How to reason:
- Let go of strict realism: consider ghosts, magic and other unreal causes early.
- Pin down the central fantastic element: a ghost, magic, a special ability?
- Work out its rules: can the ghost appear only at certain times, what does the wish cost?
- Expect irony: a wish or pact comes true to the letter and turns out against its intent.
- Check each character's state: already dead, possessed, gifted without knowing it, caught in \
a loop?
- Accept a cause that is supernatural rather than physical or psychological.
Remember: step outside reality, learn the setting's own rules of the game, assume the \
fantastic boldly and reason consistently inside it. Keep in mind that the truth may sit \
outside the ordinary world altogether.""",
        "constant_change": """Genre: Constant Change.
What the genre is about: the ending comes from misfortune: an accident, a cruel twist of fate, \
a deep misunderstanding, strong feelings (love, hatred, guilt, sacrifice) or a particular \
predicament. What matters are motives without malice, gaps in what people know and the tricks \
of chance; the tone is often tragic or absurd and leaves a thought on how unpredictable life is.
Patterns that recur:
- Fatal misunderstanding: a child's view, missing information or a sensory impairment leads \
to disaster.
- Kindness gone wrong: a well-meant act ends badly through something unforeseen or a \
coincidence.
- Irony and cruel coincidence: events turn out the opposite of what was intended; efforts \
backfire.
- Failed communication: distance, secrets or a message that came too late cause the tragedy.
- Risky places and jobs: the hazards of a setting (a hospital, a fire, a prison) or of a job (a \
magician, a soldier) cause the harm.
- Hidden sacrifice and mixed feelings: an unseen sacrifice, deep love or heavy guilt explains \
actions that look senseless.
How to reason:
- Set aside plain murder and the supernatural first; think of accidents and misunderstandings.
- Look for the deeper motive: love, duty, fear or despair, even where the outcome was tragic.
- Look for gaps in information between the characters and for judgements made on false or \
partial perceptions.
- Watch the setting, the time, the weather and coincidences that seem beside the point.
- Read the story as fate's irony, with things turning out against people's wishes.
- Ask about background the surface leaves out: past experiences, health, social circumstances.
Remember: the tragedy usually mixes accident, misunderstanding, strong feeling and \
circumstance. Understand the characters' non-malicious reasons with empathy and rebuild a sad \
story that holds together: the truth tends to sit where bad luck meets human weakness.""",
        "clever_logic": """Genre: Clever Logic.
What the genre is about: the pleasure of solving and a neat ending. The twist usually breaks \
ordinary assumptions, shifts the viewpoint (who the narrator really is) or plays with words; \
the ending reveals a reasonable, sometimes mundane or touching truth behind a strange scene, \
an "aha" moment.
Patterns that recur:
- Viewpoint and identity switches: the narrator is not who or what we assume (an animal, an \
object, a game character), or an observer sees only part of the scene.
- Misread context: what looks thrilling or criminal is an ordinary situation of daily life, a \
game or a misunderstanding.
- Wordplay and literal meanings: puns, double meanings, words taken literally.
- Broken habits of thought: the answer needs a fixed idea about some behaviour or about cause \
and effect to be dropped.
- A small decisive detail: a physical trait, an object or a rule that seemed unimportant \
unlocks the puzzle.
- A warm turn: kindness, love or something moving behind a scene that looked negative.
How to reason:
- Ask who "I" is: a person, an animal, a thing? Does the observer know everything?
- Look for a sensible explanation, not malice: rule out crime and the supernatural first and \
find the simplest account that fits everyday logic.
- Check key words for double meanings, homophones or puns.
- Question assumptions: must people act as common sense expects? Is there a surprising but \
logical explanation?
- Examine odd details: why this colour, this number, this object? What do they hint at?
- Consider good motives behind a scene described in negative terms.
Remember: break fixed thinking and look from several unusual angles, stay alert to language \
and details and be ready to drop first impressions. Expect the truth to be simpler than it \
looks, often a matter of who is watching or how a word is read.""",
    }
)

# --- Chinese ---------------------------------------------------------------------------------

_LOCAL_ZH = Template(
    """$marker
在一局海龟汤（情境推理游戏：主持人知道汤底，只用"是""否""不知道"回答玩家的提问）中，刚刚得到了一个\
新的回答。请分析这个回答让我们对故事的理解发生了什么变化。

<最新一问>
$latest
</最新一问>

<此前的问答>
$history
</此前的问答>

<汤面>
$surface
</汤面>

请分三点作答，每点单独列出：
1. 新信息：这个回答是否透露了汤面背后的新内容？如有，请具体说明。
2. 冲突：这个回答是否与之前的回答或目前的理解相矛盾？如有，请指出矛盾所在。
3. 调整：基于这个回答，对故事的理解应当如何修正？请给出具体的修正意见。

每一点都请简洁、有条理，便于决定下一个问题。"""
)

_BELIEF_ZH = Template(
    """$marker
你负责维护一局海龟汤的整体推理。请根据汤面、关键线索记录、到目前为止的全部问答以及先前的推理，写出\
一份完整、严谨、能解释整个情境各个方面的推理，包含三部分：细节、逻辑、结论。

<汤面>
$surface
</汤面>

<关键线索记录>
$key_clues
</关键线索记录>

<已有问答>
$history
</已有问答>

<先前的推理>
$previous
</先前的推理>

各部分的要求：
1. details（细节）：列出理解故事的起因、背景或最终解释所需的每一条具体信息。逐一梳理汤面、关键线索\
记录和问答中明说或暗含的内容；每条具体、客观；在先前推理的细节基础上修正或补充。
2. logic（逻辑）：揭示推动故事发展的因果链或内在机制，说明汤面中反常或矛盾之处为何发生、按什么顺序\
发生。要抽象表述，不出现人名和具体细节，前后连贯、覆盖全部要点，可以套用到同类故事上。
3. conclusion（结论）：以逻辑为骨架、以细节为证据，写出一段流畅、详尽、自洽的完整故事解释，与每条\
细节和每个逻辑步骤都一致。
4. 信息不足时：可以用与已知信息相符的合理推断补足空缺，推断出的事实也要列入细节。

只回复一个如下格式的 JSON 对象，键名保持英文，不要加注释，前后不要有其他文字：
{"details": ["细节1", "..."], "logic": ["步骤1", "..."], "conclusion": "..."}"""
)

_APS_ZH = Template(
    """$marker
在一局海龟汤中，你要审视目前对汤底的推理，找出尚未解决的地方。

<汤面>
$surface
</汤面>

<关键线索记录>
$key_clues
</关键线索记录>

<推理：逻辑>
$logic
</推理：逻辑>

<推理：细节>
$details
</推理：细节>

<推理：结论>
$conclusion
</推理：结论>

你的任务：
- 找出疑点：推理中含糊、自相矛盾或解释不足的地方，以及汤面里推理尚未涵盖的要素。每个疑点都要引用它\
所针对的原词或原句。
- 对每个疑点，思考其背后可能的不同解释或故事走向，写下你的分析，并提出一个具体的是非问题，用来检验\
其中一种可能。

只回复一个 JSON 列表，每个疑点一个对象，键名保持英文，不要有其他文字：
[{"doubt": "引用的原话及不清楚之处", "analysis": "可能的解释", "proposal": "一个是非问题？"}]"""
)

_GENRE_ZH = Template(
    """$marker
你是经验丰富的海龟汤故事分类专家。请根据汤面、已有问答和关键线索记录，从下面的类型列表中选出最能概\
括这个故事核心特点的一个类型。

<汤面>
$surface
</汤面>

<已有问答>
$history
</已有问答>

<关键线索记录>
$key_clues
</关键线索记录>

请综合以上信息，尤其注意：
- 情境性质：描述的是日常事件、离奇现象、犯罪行为、逻辑谜题，还是别的？
- 问答走向：到目前为止的问答指向什么推理方向？是否需要专门知识或非常规的逻辑？
- 线索核心：关键线索集中指向谜题的哪个方面（动机、物理过程、心理状态、信息差、文字游戏等）？

<类型列表>
$genres
</类型列表>

只回答列表中的一个类型名称，照原样写出，不要解释，也不要其他文字。"""
)

_CANDIDATES_ZH = Template(
    """$marker
你为海龟汤（情境推理游戏）的玩家规划提问。主持人只回答"是""否""不知道"，所以汤底只能靠一个个是非问\
题逐步揭开。

每个问题都必须：
- 能用"是"或"否"回答；
- 只问一件事，不要"是A而且B吗"这样的复合问题。

请写出三个不同的问题，都要符合上述规则和下面的思路，并探索不同的方向。确保：
- 至少一个问题建立在提问建议或上一回答的分析之上；
- 至少一个问题针对具体的事件或细节（地点、动作、物品）；
- 三个问题涉及不同的维度（时间、情感等），彼此不重复。

提问思路：
1. 先后次序：
   - 先解决含糊之处：澄清模糊的细节和逻辑上的缺口。
   - 用好新信息：根据上一回答的分析中的新发现调整方向。
   - 由粗到细：一个大方向确认之后，再追问其中的具体细节。
2. 探索方向：
   - 故事的基本框架：时间、地点、人物、起因。
   - 连续两次得到"不知道"时，立即换方向。
   - 参考下面的类型指引。
3. 推断与共情：
   - 根据已有线索推想故事的发展，留意人物情感如何推动事件。
   - 优先探究潜在的情感冲突和动机。

<汤面>
$surface
</汤面>

<提问建议>
$advice
</提问建议>

<上一回答的分析>
$analysis
</上一回答的分析>

<类型指引>
$guidance
</类型指引>

<最近的问答>
$history
</最近的问答>

只写出三个问题，不要解释，严格按以下格式：
1. <问题1>？
2. <问题2>？
3. <问题3>？"""
)

_SCREEN_ZH = Template(
    """$marker
你为海龟汤的玩家挑选下一个问题：从下面的候选问题中选出最能把游戏推向真相的一个。

<汤面>
$surface
</汤面>

<提问建议>
$advice
</提问建议>

<上一回答的分析>
$analysis
</上一回答的分析>

<最近的问答>
$history
</最近的问答>

<已问过的问题>
$asked
</已问过的问题>

<候选问题>
$candidates
</候选问题>

挑选标准与注意事项：
- 不重复：选中的问题不能与已问过的问题重复或高度相似。
- 抓重点：优先选择跟进提问建议、或跟进上一回答分析中新信息与新冲突的问题。
- 及时转向：如果最近问答中的最后两个回答都是"不知道"，优先选择开辟全新方向的问题。
- 避开已排除的方向：不要选与下列问题相同或相近的问题，它们的方向已被排除：
<已排除的方向>
$blacklist
</已排除的方向>
- 推进推理：选择最可能揭示新线索或补上逻辑缺口的问题。

请原样写出选中的问题（不带序号），一个字也不要改动。如果没有问题符合标准，就回复第1个候选问题。"""
)

_SUMMARY_ZH = Template(
    """$marker
这局海龟汤的提问已经结束。请根据汤面、关键线索记录和全部问答，写出你对汤底的最终还原。

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
)

_UNKNOWN_STRATEGY_ZH = """类型：尚未确定。
当前目标：尽快收集基本信息，抓住故事的核心要素，为后续推理和准确判断类型打好基础。请优先采用以下提\
问思路：
1. 基本定性与排除（首先试探）：
   - 现实与否：故事是否完全遵循现实世界的逻辑，还是含有超自然、科幻或奇幻等非现实元素？
   - 角色与物的性质：提到的对象是否都是人？动物、物品、鬼魂或其他非人的存在是否起关键作用？
2. 核心信息维度：结合已知信息，挑最可能揭示真相的维度来问：
   - 人物：关键人物有几个，性别、职业、彼此关系如何？
   - 事件：是否明确有人死亡？死因是什么？故事是否跨越了不止一个时间段？
   - 物品与环境：提到的物品是否有特殊含义，数量是否重要？
3. 边问边做基础分析：收集信息的同时，根据已知线索深入推敲：
   - 背景与动机：故事发生的环境和年代，人物行为背后的动机。
   - 关键事件与细节：反常之处、矛盾之处、被刻意强调的细节。
   - 潜在冲突与视角：没有明说的冲突、人物之间的信息差、不同的视角。
指引：权衡汤面和已知信息，选择最需要确认的方向提问，以最高效率获取关键信息、验证核心假设或排除错误\
路径。"""

_STRATEGIES_ZH = MappingProxyType(
    {
        "crime_thriller": """类型：犯罪惊悚。
类型核心：由人的恶意引发的罪案（谋杀、绑架、虐待、心理变态等），坚决排除鬼怪等超自然因素。关键在于\
揭开日常或离奇表象背后残酷的犯罪事实。
常见模式与元素：
- 家中的陷阱：熟悉的环境与人（床底、隔壁、家中物品、邻居）往往就是危险的来源。
- 感官的误导：听到的（滴水声：血）、看到的（模糊人影：凶手或尸体）、摸到的（冰冷：尸体或假肢）常是\
伪装，或是指向恐怖真相的钥匙。
- 身份诡计：凶手伪装成无害的角色，或利用身份上的特殊之处（例如"盲人"的误导）。
- 日常物品成为凶器或证据：食物、家具、玩偶、照片常常承载罪证或作案手段。
- 典型情节：分尸、藏尸、利用或亵渎尸体、囚禁等。
推理方向：
- 逆向推理：从结局或核心反常现象出发，倒推出行为链条。
- 关联细节：把看似无关的细节串起来（天气炎热 + 空调关闭 + 怪味：尸体腐烂）。
- 找矛盾：留意汤面中不合逻辑或自相矛盾之处（"盲人"描述自己"看到"的东西）。
- 先排除再聚焦：先排除超自然和意外，再集中考虑人为作案的各种可能。
- 揣摩动机：分别站在受害者和凶手的角度，推想各自的行为逻辑和作案动机。
要诀：找出"反常"与"矛盾"，拼合所有线索碎片，大胆而有依据地猜测，还原一个合乎逻辑又出人意料的罪案。\
真相通常与人的狠毒和处境的严酷有关。""",
        "mind_game": """类型：心理迷局。
类型核心：谜题源于角色异常的内心世界或极端的心理状态：精神疾病（幻觉、妄想、多重人格）、极端情绪（\
偏执、执念、悲痛）、扭曲的认知，或隐藏的非理性动机。排除超自然因素，重在呈现角色内心的混乱与痛苦，\
叙述者往往并不可靠。
常见模式与元素：
- 内心的陷阱：危险常来自角色自己的念头、记忆或无意识冲动，外部世界只是诱因或投射。
- 感知扭曲与幻觉：角色看到、听到、感到的可能不是客观现实，而是心理状态的产物（看见不存在的人、听见\
发号施令的声音）。
- 身份迷失与解离：多重人格、失忆，或因创伤与现实脱节；角色可能不知道自己是谁。
- 日常事物的象征化：普通的物品、地点或日期可能触发创伤记忆或强迫行为。
- 病态的应对方式：自残、沉溺幻想、把逝者变成物件留在身边等。
推理方向：
- 关注内在状态：优先询问角色的感受、想法、精神状况和记忆是否可靠，是否有精神病史或创伤经历。
- 挖掘根本动机：行为背后的心理驱动力是什么？恐惧、爱、妄想，还是无法控制的冲动？
- 检验叙述的可靠性：始终怀疑叙述者的视角，其陈述是否因心理状态或记忆缺失而失真？
- 把行为和状态联系起来：把反常行为看作内在状态的外在表现，想想"怎样的心理状态会让人这样做"。
- 解读象征意义：反复出现的意象或物品是否象征着内心冲突或创伤？
要诀：深入角色的内心，找出其感知、认知或身份上的"异常点"，透过表面行为理解背后扭曲的心理逻辑。可以\
大胆推测心理状态，但要以线索为依据：真相要到人物自己的头脑里去找，而不是到外部的阴谋里去找。""",
        "supernatural": """类型：超自然。
类型核心：谜底涉及超越现实逻辑的力量：鬼魂、魔法、诅咒、超能力（预知、通灵）、轮回转世，或时间旅行\
、平行世界等奇幻与科幻设定。关键在于揭示非现实的元素及其运作规则。
常见模式与元素：
- 鬼魂显现与作祟：鬼魂因未了的心愿、复仇或仪式而出现，常与特定地点、时间或物品（镜子、遗物）相关。
- 超能力或诅咒：角色拥有或遭遇非凡能力（预见死亡、意念杀人）或受诅咒影响，常带来意想不到的后果。
- 非人存在与契约：与恶魔、精灵、怪物打交道，常有带讽刺转折或沉重代价的交易。
- 时空异常与循环：时间循环、穿越、平行世界、轮回、灵魂互换。
- 生死界限模糊：角色可能死后仍在活动而不自知，或能与逝者交流。
- 民俗与禁忌：融入地方传说、民间信仰或禁忌，触犯禁忌是引发怪事的关键。
推理方向：
- 接受超自然设定：放下纯现实的逻辑，优先考虑鬼魂、魔法等非现实因素。
- 认定核心奇幻元素：关键设定是鬼魂、魔法，还是某种特殊能力？
- 探究运作规则：这种力量遵循什么规则？（鬼魂是否只在特定时间出现？愿望有什么代价？）
- 留意讽刺与反转：涉及愿望或契约的故事，结局常常是字面上实现、结果却事与愿违。
- 判断角色状态：角色是否已经死亡、被附身、身怀不自知的能力，或困在循环里？
- 追溯非现实的因果：接受起因可能是超自然的介入，而非物理或心理因素。
要诀：跳出现实框架，弄懂这个设定自己的"游戏规则"，大胆假设奇幻现象存在，并在设定内部严密推理，还原\
一个符合其自身奇幻逻辑的故事。真相可能完全不在寻常世界之内。""",
        "constant_change": """类型：世事无常。
类型核心：结局源于不幸：意外、命运的残酷捉弄、深刻的误会、复杂的情感（爱、恨、愧疚、牺牲）或某种特\
殊处境。关键在于理解并无恶意的动机、信息差和造化弄人；基调往往悲凉或荒诞，引人感叹人生无常。
常见模式与元素：
- 致命的误会：孩子的视角、信息缺失或感官缺陷导致悲剧。
- 好心办坏事：出于善意的举动，因意外因素或巧合酿成大祸。
- 命运的讽刺与残酷巧合：事情的发展与本意相反，角色的努力适得其反。
- 沟通障碍：隔阂、秘密或未能及时传达的信息造成悲剧。
- 环境与职业风险：特定环境（医院、火场、监狱）或职业（魔术师、军人）固有的危险成为祸因。
- 隐秘的牺牲与复杂情感：不为人知的牺牲、深沉的爱或强烈的愧疚，驱使角色做出看似难以理解的举动。
推理方向：
- 排除简单归因：先排除单纯的恶意谋杀和超自然力量，考虑意外或误会。
- 探究深层动机：分析人物动机，即使结局是悲剧，起因也可能是爱、责任、恐惧或绝望。
- 寻找信息差：人物之间是否信息不对称？判断是否基于错误的信息或片面的感知？
- 关注环境与巧合：留意故事的环境、时间、天气，以及看似无关的巧合。
- 体会讽刺与无奈：试着从命运弄人、事与愿违的角度理解故事。
- 考虑隐藏背景：是否有汤面没提到的背景（过往经历、身体状况、社会环境）能解释事件？
要诀：悲剧的来源往往交织着意外、误会、复杂情感和环境因素。要用共情去理解人物并无恶意的动机，还原一\
个逻辑严密又发人深省的悲剧：真相常常落在厄运与人的软弱相遇之处。""",
        "clever_logic": """类型：巧妙逻辑。
类型核心：重在解谜的过程和结局的巧妙。反转往往来自打破常规逻辑、转换视角（叙述者的真实身份）或文字\
游戏；结局揭示离奇现象背后合理的、有时平凡甚至温情的真相，让人恍然大悟。
常见模式与元素：
- 视角转换与身份误导：叙述者并非我们以为的人或生物（动物、物品、游戏角色），或旁观者因视角受限而误\
判。
- 情境误导：看似惊险或犯罪的事件，其实是日常生活、游戏或误会中的普通情境。
- 文字游戏与字面意思：利用双关、歧义或词语的字面意思制造迷惑。
- 打破惯性思维：谜底要求打破对某种行为或因果关系的固有成见。
- 隐藏信息与关键细节：一个看似无关紧要的细节（身体特征、物品、规则）就是解谜的钥匙。
- 温情反转：看似负面的情境背后，藏着善意、爱或动人的真相。
推理方向：
- 追问叙述者的身份：“我”是谁？是人、动物还是物品？观察者掌握全部信息了吗？
- 找合理解释而非恶意：优先排除犯罪和超自然，寻找最符合日常逻辑的简单解释。
- 留意双关与歧义：故事里的关键词有没有多重含义、谐音或文字游戏？
- 挑战固有假设：人物的行为一定符合常理吗？有没有反直觉却合乎逻辑的解释？
- 深挖反常细节：为什么偏偏提到这个颜色、数字、物品？它暗示了什么？
- 考虑正面动机：负面的描述之下，是否可能是积极、动人或出于善意的事情？
要诀：打破思维定式，多角度、非常规地思考，对语言和细节保持敏感，敢于推翻第一印象。真相往往比看上去\
简单，关键常在于谁在看、某个词该怎么理解。""",
    }
)


@dataclass(frozen=True)
class MosaicPrompts:
    """The templates and strategy texts of one language."""

    local: Template
    belief: Template
    aps: Template
    genre: Template
    candidates: Template
    screen: Template
    summary: Template
    unknown_strategy: str
    strategies: Mapping[str, str]


_PROMPTS: Mapping[str, MosaicPrompts] = MappingProxyType(
    {
        "en": MosaicPrompts(
            _LOCAL_EN,
            _BELIEF_EN,
            _APS_EN,
            _GENRE_EN,
            _CANDIDATES_EN,
            _SCREEN_EN,
            _SUMMARY_EN,
            _UNKNOWN_STRATEGY_EN,
            _STRATEGIES_EN,
        ),
        "zh": MosaicPrompts(
            _LOCAL_ZH,
            _BELIEF_ZH,
            _APS_ZH,
            _GENRE_ZH,
            _CANDIDATES_ZH,
            _SCREEN_ZH,
            _SUMMARY_ZH,
            _UNKNOWN_STRATEGY_ZH,
            _STRATEGIES_ZH,
        ),
    }
)


def resolve_language(language: Any) -> str:
    """The prompt language for a puzzle language: "zh" for Chinese, "en" for anything else."""
    return "zh" if str(language or "").strip().lower().startswith("zh") else "en"


def prompts_for(language: str) -> MosaicPrompts:
    """The prompt set of a language ("en" for anything but "zh")."""
    return _PROMPTS[resolve_language(language)]


def or_none(text: str, language: str) -> str:
    """`text`, or the language's "(none yet)" when it is blank."""
    return text.strip() or NONE_TEXT[resolve_language(language)]


def render_exchange(entry: Mapping[str, Any], language: str) -> str:
    """One history entry `{turn, question, answer, key_clue}` as two lines (`Q3: ...`/`A3: Yes`)."""
    lang = resolve_language(language)
    q_prefix, a_prefix, sep = HISTORY_LINE[lang]
    turn = entry.get("turn", "?")
    raw = str(entry.get("answer", "")).strip()
    answer = ANSWER_WORDS[lang].get(raw, raw)
    if entry.get("key_clue"):
        answer += KEY_CLUE_TAG[lang]
    question = str(entry.get("question", "")).strip()
    return f"{q_prefix}{turn}{sep}{question}\n{a_prefix}{turn}{sep}{answer}"


def render_history(entries: Sequence[Mapping[str, Any]], language: str) -> str:
    """History entries, oldest first, or "(none yet)"."""
    return or_none("\n".join(render_exchange(e, language) for e in entries), language)


def render_list(items: Sequence[str], language: str) -> str:
    """Items as a dash list, or "(none yet)"."""
    return or_none("\n".join(f"- {item}" for item in items if str(item).strip()), language)


def render_numbered(items: Sequence[str], language: str) -> str:
    """Items as a numbered list (1., 2., ...), or "(none yet)"."""
    return or_none("\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1)), language)


def render_genres(language: str) -> str:
    """The genre list of the classification prompt, one name per line."""
    lang = resolve_language(language)
    return "\n".join(f"- {genre.names[lang]}" for genre in GENRES)


def render_local(language: str, *, surface: str, latest: str, history: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).local.substitute(
        marker=LOCAL_MARKER[lang], surface=surface, latest=latest, history=history
    )


def render_belief(
    language: str, *, surface: str, key_clues: str, history: str, previous: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).belief.substitute(
        marker=BELIEF_MARKER[lang],
        surface=surface,
        key_clues=key_clues,
        history=history,
        previous=previous,
    )


def render_aps(
    language: str, *, surface: str, key_clues: str, logic: str, details: str, conclusion: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).aps.substitute(
        marker=APS_MARKER[lang],
        surface=surface,
        key_clues=key_clues,
        logic=logic,
        details=details,
        conclusion=conclusion,
    )


def render_genre(language: str, *, surface: str, history: str, key_clues: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).genre.substitute(
        marker=GENRE_MARKER[lang],
        surface=surface,
        history=history,
        key_clues=key_clues,
        genres=render_genres(lang),
    )


def render_candidates(
    language: str, *, surface: str, advice: str, analysis: str, guidance: str, history: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).candidates.substitute(
        marker=CANDIDATES_MARKER[lang],
        surface=surface,
        advice=advice,
        analysis=analysis,
        guidance=guidance,
        history=history,
    )


def render_screen(
    language: str,
    *,
    surface: str,
    advice: str,
    analysis: str,
    history: str,
    asked: str,
    candidates: str,
    blacklist: str,
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).screen.substitute(
        marker=SCREEN_MARKER[lang],
        surface=surface,
        advice=advice,
        analysis=analysis,
        history=history,
        asked=asked,
        candidates=candidates,
        blacklist=blacklist,
    )


def render_summary(language: str, *, surface: str, key_clues: str, history: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).summary.substitute(
        marker=SUMMARY_MARKER[lang], surface=surface, key_clues=key_clues, history=history
    )


def strategy_text(genre_id: str | None, language: str) -> str:
    """The questioning strategy of a genre id, or the unknown-genre strategy for None."""
    prompts = prompts_for(language)
    if genre_id is None:
        return prompts.unknown_strategy
    return prompts.strategies[genre_id]


FALLBACK_QUESTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "en": (
            "Does the story keep to the logic of the real world?",
            "Is every important character in the story a human being?",
            "Has someone in the story died?",
            "Does the story span more than one period of time?",
            "Does an object mentioned in the surface have a hidden meaning?",
            "Did a misunderstanding lead to what happened?",
        ),
        "zh": (
            "这个故事完全符合现实世界的逻辑吗？",
            "故事里的关键角色都是人吗？",
            "故事里有人死了吗？",
            "故事跨越了不止一个时间段吗？",
            "汤面里提到的某件物品有特殊含义吗？",
            "事情的发生是因为一场误会吗？",
        ),
    }
)
"""Questions asked when no candidate can be read from the model's reply: the first probes of
the unknown-genre strategy, taken in order, skipping those already asked."""
