"""TurtleSoup puzzles: the Puzzle record, the six categories and our YAML format (§3, App. A)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from forkingpaths.core.errors import ConfigError, InvalidFile, shown

LANGUAGES = ("en", "zh")
"""The two languages of TurtleSoup-Bench (§3: 400 Chinese stories and their English versions)."""

CATEGORIES: Mapping[str, str] = MappingProxyType(
    {
        "crime_thriller": "Crime Thriller",
        "mind_game": "Mind Game",
        "supernatural": "Supernatural",
        "constant_change": "Constant Change",
        "clever_logic": "Clever Logic",
        "original": "Original",
    }
)
"""Category id -> English display name: five narrative genres plus the experts' originals (§3)."""

CATEGORY_NAMES_ZH: Mapping[str, str] = MappingProxyType(
    {
        "crime_thriller": "犯罪惊悚",
        "mind_game": "心理迷局",
        "supernatural": "超自然",
        "constant_change": "世事无常",
        "clever_logic": "巧妙逻辑",
        "original": "原创",
    }
)
"""Category id -> Chinese display name."""

UNCATEGORIZED = "uncategorized"
"""Category of an imported story whose source names no genre (TurtleBench); not in CATEGORIES."""

# Other spellings met in the paper and in the wild: App. A.2 says "Supernatural Fantasy" and
# "Original Data", Table 2 abbreviates; folded the same way as the display names.
_CATEGORY_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "supernatural_fantasy": "supernatural",
        "original_data": "original",
        "originals": "original",
        "原创故事": "original",
        "超自然奇幻": "supernatural",
        # Table 2's column heads.
        "crime_thrill": "crime_thriller",
        "supernat": "supernatural",
        "const_change": "constant_change",
        "clev_logic": "clever_logic",
        "orig_data": "original",
    }
)

NO_CLUES_HINT = (
    "pass --allow-no-clues (turtlesoup import / turtlesoup play / run turtlesoup) or the "
    "benchmark option allow_no_clues=true to play it with the key-clue mechanism off"
)
"""How to admit a story without a key clue library, as refusals say it."""

CORPUS_DIR = Path(__file__).parent / "data" / "puzzles"
"""The shipped corpus: one YAML file of bilingual entries per category."""

ENTRY_KEYS = ("id", "category", *LANGUAGES)
TEXT_FIELDS = ("title", "surface", "bottom")
LIST_FIELDS = ("key_clues", "logic_points", "key_details")

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


class PuzzleError(InvalidFile):
    """One refused puzzle entry (or file): `FILE#INDEX: FIELD: MESSAGE`.

    `index` is the entry's 0-based position in its file's list (1-based line number for a
    TurtleBench `cases.list`), `None` when the whole file is refused; `field` is empty when the
    problem is not one field's. `puzzle_id` is the id the refused story would have had, where
    the format fixes it (release stories), so that a later story with that id is still reported
    as a duplicate.
    """

    def __init__(
        self,
        file: str,
        index: int | None,
        field: str,
        message: str,
        puzzle_id: str | None = None,
    ) -> None:
        self.file, self.index, self.field, self.message = file, index, field, message
        self.puzzle_id = puzzle_id
        where = file if index is None else f"{file}#{index}"
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class PuzzleWarning(PuzzleError):
    """A defect of an entry that still loads: `FILE#INDEX: FIELD: MESSAGE` like a refusal, never
    raised, and its `kind` (a key of WARNING_KINDS) for the import report's census.

    The loaders return warnings among their problems; `refusals` and `warnings_of` split them.
    """

    def __init__(
        self,
        file: str,
        index: int | None,
        field: str,
        message: str,
        kind: str,
        puzzle_id: str | None = None,
    ) -> None:
        super().__init__(file, index, field, message, puzzle_id)
        self.kind = kind


WARNING_KINDS: Mapping[str, str] = MappingProxyType(
    {
        "mismatched_languages": "an entry's two languages differ in a list's length; each "
        "language loads alone",
        "language": "the text reads as the other language; loaded under the language it is "
        "filed or imported as",
        "tips": "some tips are not text; the text ones are the clue library",
        "title": "no title; the entry id stands in",
        "duplicate_title": "a title used before; cases naming it go to the first story",
        "category": "an unknown category; the story is uncategorized",
        "abstraction": "gold points break App. D.3's rule (names in logic points, 2-5 logic "
        "points, 3-8 details)",
    }
)
"""Warning kind -> what it means and what was loaded instead."""


def refusals(problems: Sequence[PuzzleError]) -> list[PuzzleError]:
    """The problems that refused an entry or file (not warnings)."""
    return [p for p in problems if not isinstance(p, PuzzleWarning)]


def warnings_of(problems: Sequence[PuzzleError]) -> list[PuzzleWarning]:
    """The warnings among `problems`: defects of entries that still loaded."""
    return [p for p in problems if isinstance(p, PuzzleWarning)]


@dataclass(frozen=True)
class Puzzle:
    """One TurtleSoup puzzle in one language: what the responder knows and the judge scores."""

    id: str
    """Entry id + "-" + language, e.g. `crime_thriller-01-en`."""
    entry: str
    """The bilingual entry this puzzle is one language of, e.g. `crime_thriller-01`."""
    category: str
    """Category id (a key of CATEGORIES, or UNCATEGORIZED for an imported unlabelled story)."""
    language: str
    """`en` or `zh`."""
    title: str
    surface: str
    """The soup surface: the puzzling outcome shown to the player."""
    bottom: str
    """The soup bottom: the full hidden story."""
    key_clues: tuple[str, ...]
    """The Key Clue Library (5-7 in ours; empty only for stories imported with allow_no_clues)."""
    logic_points: tuple[str, ...] = ()
    """Gold core logic points (empty: the evaluation extracts them from the bottom)."""
    key_details: tuple[str, ...] = ()
    """Gold key details (empty: the evaluation extracts them from the bottom)."""
    source: str = "forkingpaths"
    """`forkingpaths` (shipped), `release`, `turtlebench`, or the YAML file it was read from."""

    def __post_init__(self) -> None:
        if self.language not in LANGUAGES:
            raise ConfigError(
                f"Puzzle {self.id!r}: language {self.language!r} is not one of {LANGUAGES}"
            )


def category_name(category: str, language: str = "en") -> str:
    """The display name of a category id in `language` (`Uncategorized` for UNCATEGORIZED)."""
    if category == UNCATEGORIZED:
        return "未分类" if language == "zh" else "Uncategorized"
    names = CATEGORY_NAMES_ZH if language == "zh" else CATEGORIES
    if category not in names:
        raise ConfigError(f"Unknown category {category!r}; expected one of {', '.join(CATEGORIES)}")
    return names[category]


def _fold_name(name: str) -> str:
    return re.sub(r"[\s_\-.]+", "_", name.strip().lower()).strip("_")


def category_id(name: str) -> str | None:
    """The category id a name stands for, or None.

    Accepts an id or a display name in either language, case- and separator-insensitively
    (`crime_thriller`, `Crime Thriller`, `crime-thriller`, `犯罪惊悚`), and the paper's variants.
    """
    folded = _fold_name(name)
    for cid, display in CATEGORIES.items():
        if folded in (cid, _fold_name(display), _fold_name(CATEGORY_NAMES_ZH[cid])):
            return cid
    return _CATEGORY_ALIASES.get(folded)


def detect_language(text: str) -> str:
    """`zh` when CJK ideographs make up at least a fifth of the letters of `text`, else `en`.

    A fifth, not "any": English stories may quote a Chinese name, and Chinese ones Latin acronyms.
    """
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    return "zh" if cjk and cjk * 5 >= cjk + latin else "en"


def check_language(language: str | None) -> str | None:
    """`language` if it is None or one of LANGUAGES; otherwise a ConfigError naming both."""
    if language is not None and language not in LANGUAGES:
        raise ConfigError(f"language: {language!r} is not one of {', '.join(LANGUAGES)}")
    return language


# ---- our YAML format ----


def _strings(value: Any) -> tuple[tuple[str, ...], str | None]:
    """A list of non-empty strings (None reads as empty), or the reason it is not one."""
    if value is None:
        return (), None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return (), f"expected a list of non-empty strings; got {shown(value)}"
    return tuple(v.strip() for v in value), None


def _language_block(
    block: Any, language: str, file: str, index: int, *, allow_no_clues: bool
) -> tuple[dict[str, Any], list[PuzzleError]]:
    """The validated fields of one language of an entry, and what is wrong with them."""
    allowed = TEXT_FIELDS + LIST_FIELDS
    if not isinstance(block, dict):
        message = f"expected a mapping of {', '.join(allowed)}; got {shown(block)}"
        return {}, [PuzzleError(file, index, language, message)]
    errors = [
        PuzzleError(
            file, index, f"{language}.{key}", f"unknown field; expected {', '.join(allowed)}"
        )
        for key in block
        if key not in allowed
    ]
    fields: dict[str, Any] = {}
    for key in TEXT_FIELDS:
        value = block.get(key)
        if not isinstance(value, str) or not value.strip():
            problem = "missing" if value is None else f"expected non-empty text; got {shown(value)}"
            errors.append(PuzzleError(file, index, f"{language}.{key}", problem))
        else:
            fields[key] = value.strip()
    for key in LIST_FIELDS:
        fields[key], problem = _strings(block.get(key))
        if problem is None and key == "key_clues" and not fields[key] and not allow_no_clues:
            problem = "missing" if block.get(key) is None else "empty clue library"
            problem += f": at least one key clue is required ({NO_CLUES_HINT})"
        if problem:
            errors.append(PuzzleError(file, index, f"{language}.{key}", problem))
    if "surface" in fields and "bottom" in fields:
        read_as = detect_language(fields["surface"] + "\n" + fields["bottom"])
        if read_as != language:
            errors.append(
                PuzzleError(
                    file, index, language, f"mismatched language: the text reads as {read_as}"
                )
            )
    return fields, errors


def entry_puzzles(
    entry: Any, file: str, index: int, *, source: str, allow_no_clues: bool = False
) -> tuple[list[Puzzle], list[PuzzleError]]:
    """The puzzles of one bilingual entry of our format and its problems.

    An entry with a refusal (a PuzzleError) loads nothing. Two languages whose clue or point
    counts differ are a warning (`mismatched_languages`), and each language loads alone: the
    paper's release has such a pair, and refusing it would drop a playable story.
    """
    if not isinstance(entry, dict):
        return [], [
            PuzzleError(
                file, index, "", f"expected a mapping of id, category, en, zh; got {shown(entry)}"
            )
        ]
    errors: list[PuzzleError] = []
    entry_id = entry.get("id")
    if not isinstance(entry_id, str) or not entry_id.strip() or entry_id != entry_id.strip():
        problem = (
            "missing" if entry_id is None else f"expected a non-empty name; got {shown(entry_id)}"
        )
        errors.append(PuzzleError(file, index, "id", problem))
    raw_category = entry.get("category")
    category = category_id(raw_category) if isinstance(raw_category, str) else None
    if raw_category == UNCATEGORIZED:
        # Written back by write_corpus for imported stories whose source names no genre.
        category = UNCATEGORIZED
    if category is None:
        problem = "missing" if raw_category is None else f"unknown category {shown(raw_category)}"
        errors.append(
            PuzzleError(
                file, index, "category", f"{problem}; expected one of {', '.join(CATEGORIES)}"
            )
        )
    for key in entry:
        if key not in ENTRY_KEYS:
            errors.append(
                PuzzleError(
                    file,
                    index,
                    str(key),
                    f"language {shown(key)} is not one of {', '.join(LANGUAGES)} "
                    "(entry fields: id, category, en, zh)",
                )
            )
    present = [lang for lang in LANGUAGES if lang in entry]
    if not present:
        errors.append(PuzzleError(file, index, "en", "missing: an entry needs en and/or zh"))
    blocks: dict[str, dict[str, Any]] = {}
    for lang in present:
        fields, block_errors = _language_block(
            entry[lang], lang, file, index, allow_no_clues=allow_no_clues
        )
        errors += block_errors
        blocks[lang] = fields
    if errors:
        return [], errors
    warnings: list[PuzzleError] = []
    if len(present) == 2:
        for key in LIST_FIELDS:
            n_en, n_zh = len(blocks["en"][key]), len(blocks["zh"][key])
            if n_en != n_zh:
                message = (
                    f"mismatched languages: {n_zh} items but en.{key} has {n_en}; each "
                    "language loads alone"
                )
                warnings.append(
                    PuzzleWarning(file, index, f"zh.{key}", message, "mismatched_languages")
                )
    return [
        Puzzle(
            id=f"{entry_id}-{lang}",
            entry=str(entry_id),
            category=str(category),
            language=lang,
            title=blocks[lang]["title"],
            surface=blocks[lang]["surface"],
            bottom=blocks[lang]["bottom"],
            key_clues=blocks[lang]["key_clues"],
            logic_points=blocks[lang]["logic_points"],
            key_details=blocks[lang]["key_details"],
            source=source,
        )
        for lang in present
    ], warnings


def load_yaml_files(
    paths: Sequence[Path], *, source: str | None = None, allow_no_clues: bool = False
) -> tuple[list[tuple[Puzzle, str, int]], list[PuzzleError]]:
    """The puzzles of files in our format, each with its file and index, and the refusals.

    An entry id may appear once across all `paths`; `source` defaults to each file's path. The
    first entry of an id claims it even when it is refused, so a later entry with that id is
    still refused as a duplicate (it may be the one the author meant to remove).
    """
    located: list[tuple[Puzzle, str, int]] = []
    errors: list[PuzzleError] = []
    first: dict[str, str] = {}
    for path in paths:
        file = str(path)
        data, problem = _read_yaml(path)
        if problem is not None:
            errors.append(PuzzleError(file, None, "", problem))
            continue
        for index, entry in enumerate(data):
            puzzles, entry_errors = entry_puzzles(
                entry, file, index, source=source or file, allow_no_clues=allow_no_clues
            )
            entry_id = entry.get("id") if isinstance(entry, dict) else None
            if not isinstance(entry_id, str) or not entry_id.strip():
                entry_id = None
            if puzzles and puzzles[0].entry in first:
                where = first[puzzles[0].entry]
                message = f"duplicate id {puzzles[0].entry!r} (first at {where})"
                entry_errors, puzzles = [PuzzleError(file, index, "id", message)], []
            elif puzzles:
                first[puzzles[0].entry] = f"{file}#{index}"
            elif entry_id is not None:
                first.setdefault(entry_id, f"{file}#{index}, itself refused")
            located += [(p, file, index) for p in puzzles]
            errors += entry_errors
    return located, errors


def _read_yaml(path: Path) -> tuple[list[Any], str | None]:
    """The list a YAML file holds, or why it holds none."""
    try:
        # The C loader reads the shipped corpus several times faster; PyYAML may lack it.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, UnicodeDecodeError) as exc:
        return [], f"cannot read: {exc}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        return [], f"not valid YAML{at}: {getattr(exc, 'problem', None) or exc}"
    if not isinstance(data, list):
        return [], f"expected a list of entries; got {shown(data)}"
    return data, None


def drop_duplicates(
    located: Sequence[tuple[Puzzle, str, int | None]],
) -> tuple[list[Puzzle], list[PuzzleError]]:
    """The puzzles with the first of each id kept; one error per refused later entry."""
    first: dict[str, tuple[str, int | None]] = {}
    kept: list[Puzzle] = []
    errors: dict[tuple[str, int | None], PuzzleError] = {}
    for puzzle, file, index in located:
        if puzzle.id in first:
            where_file, where_index = first[puzzle.id]
            where = where_file if where_index is None else f"{where_file}#{where_index}"
            errors.setdefault(
                (file, index),
                PuzzleError(file, index, "id", f"duplicate id {puzzle.entry!r} (first at {where})"),
            )
            continue
        first[puzzle.id] = (file, index)
        kept.append(puzzle)
    return kept, list(errors.values())
