"""App. D.3's abstraction rule for gold points: logic points name no one, 2-5 logic points,
3-8 key details; checked on every puzzle that carries gold points."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle

LOGIC_RANGE = (2, 5)
"""Core logic points per bottom (App. D.3: N is clipped to 2-5)."""
DETAIL_RANGE = (3, 8)
"""Key details per bottom (App. D.3: M is clipped to 3-8)."""

# English: a capitalised word that is not a sentence's first word is a name (or a place), and
# so is a capitalised word right before such a name (the first name of "Helga Hofer" opens its
# sentence). Letters include accented ones (Tomás, Élodie).
_EN_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])*")
_EN_OPENERS = frozenset(
    {
        "a", "after", "again", "all", "also", "although", "an", "and", "as", "at", "because",
        "before", "but", "by", "each", "even", "every", "for", "from", "he", "her", "here", "his",
        "how", "if", "in", "instead", "it", "its", "just", "later", "many", "meanwhile", "most",
        "my", "never", "no", "not", "now", "of", "on", "once", "one", "only", "or", "our", "she",
        "since", "so", "some", "soon", "still", "that", "the", "their", "then", "there", "these",
        "they", "this", "those", "though", "to", "until", "we", "what", "when", "whenever", "where",
        "while", "who", "why", "with", "yet", "you", "your",
    }
)  # fmt: skip
"""Words that open a sentence before a name ("When Bruno saw ...") and are no first name."""
_SENTENCE_START = re.compile(r"(?:^|[.!?;:\"“”()]\s*)$")
_EN_NOT_NAMES = frozenset(
    {"I", "I'm", "I'd", "I've", "I'll", "OK", "TV", "Mr", "Mrs", "Ms", "Dr", "St", "God"}
)
# Chinese: a surname with a title (王先生), and runs of the characters that spell foreign names
# (布鲁诺, 卡里姆) holding one that ordinary words rarely use. Nicknames (小明, 老王) are left
# out: 小 / 老 / 阿 begin too many ordinary words for a spelling to tell them apart.
_ZH_SURNAME_TITLE = re.compile(
    r"[王李张刘陈杨黄赵周吴徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    r"苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    r"龚邵万钱严](?:先生|太太|女士|小姐|医生|老师|警官|教授|师傅)"
)
_ZH_FOREIGN = (
    "布鲁诺卡里姆斯特克尔丽娜莉亚玛雅汉森伦顿维奇托泰琳芬妮莎索菲奥巴罗米拉格兰杰迪西蒙夫曼"
    "哈利艾伊凯科劳佩皮普乔基纳萨塞沙韦温希谢休伯贝彼保莱雷里林路卢洛梅默穆内帕恩欧娅茜露蒂"
    "汤杜达戴德安阿"
)
_ZH_FOREIGN_MARK = frozenset("诺姆丽娜莉妮莎琳芬杰玛娅茜露蒂")
_ZH_FOREIGN_RUN = re.compile(f"[{_ZH_FOREIGN}]{{2,}}")
_CJK = re.compile(r"[\u3400-\u9fff]")
# A year (1953, 1953年) is a time: App. D.3's logic points avoid times as well as names.
_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")


def names_in(puzzle: Puzzle) -> set[str]:
    """The names (people, places) the story's surface and bottom use, as far as a spelling
    shows them (titles are left out: title case capitalises every word)."""
    text = "\n".join((puzzle.surface, puzzle.bottom))
    names: set[str] = set()
    lower = {w.lower() for w in _EN_WORD.findall(text) if w[0].islower()}
    capitalised: list[tuple[re.Match[str], str]] = []
    for match in _EN_WORD.finditer(text):
        word = match.group().removesuffix("'s")
        if not word[0].isupper() or word in _EN_NOT_NAMES or word.lower() in lower:
            continue
        capitalised.append((match, word))
        if not _SENTENCE_START.search(text[: match.start()]):
            names.add(word)
    for (first, word), (second, name) in itertools.pairwise(capitalised):
        if word.lower() in _EN_OPENERS or name not in names:
            continue
        if text[first.end() : second.start()] == " ":
            names.add(word)
    if puzzle.language == "zh":
        names |= {m.group() for m in _ZH_SURNAME_TITLE.finditer(text)}
        names |= {
            run for run in _ZH_FOREIGN_RUN.findall(text) if _ZH_FOREIGN_MARK.intersection(run)
        }
    return names


@dataclass(frozen=True)
class RuleBreach:
    """One way a puzzle's gold points break App. D.3's rule."""

    field: str
    """`logic_points` or `key_details`."""
    message: str


def check_gold_points(puzzle: Puzzle) -> list[RuleBreach]:
    """How the puzzle's gold points break App. D.3's rule (empty: it meets it, or carries no
    gold points of that kind, which the judge then extracts under the rule)."""
    breaches: list[RuleBreach] = []
    for field, points, (low, high) in (
        ("logic_points", puzzle.logic_points, LOGIC_RANGE),
        ("key_details", puzzle.key_details, DETAIL_RANGE),
    ):
        if points and not low <= len(points) <= high:
            message = f"{len(points)} points; App. D.3 allows {low} to {high}"
            breaches.append(RuleBreach(field, message))
    names = names_in(puzzle)
    for number, point in enumerate(puzzle.logic_points, start=1):
        used = sorted(n for n in names if _mentions(point, n))
        if used:
            message = (
                f"point {number} names {', '.join(used)}; App. D.3's logic points avoid "
                "names, places and times"
            )
            breaches.append(RuleBreach("logic_points", message))
        years = _YEAR.findall(point)
        if years:
            message = (
                f"point {number} names the year {', '.join(years)}; App. D.3's logic points "
                "avoid names, places and times"
            )
            breaches.append(RuleBreach("logic_points", message))
    return breaches


def _mentions(point: str, name: str) -> bool:
    if _CJK.search(name):
        return name in point  # Chinese writes no spaces: a name is found inside a run
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", point) is not None


def meets_rule(puzzle: Puzzle) -> bool | None:
    """True/False whether the gold points meet the rule; None when the puzzle carries none."""
    if not puzzle.logic_points and not puzzle.key_details:
        return None
    return not check_gold_points(puzzle)
