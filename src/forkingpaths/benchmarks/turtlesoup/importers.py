"""The corpus from any source: ours, the paper's release, TurtleBench; import report, writer.

Formats (`docs/dev/turtlesoup.md` §1.1):

- The paper's release: a directory with `en/` and `zh/`, each holding one JSON file per category
  (file stem = category id or display name, any case or separator), each a list of
  `{"title", "surface", "bottom", "tips"}`; `tips` is the key clue list, a list of strings or one
  string with a clue per line. The i-th stories of `en/X.json` and `zh/X.json` are one entry.
- TurtleBench: `stories.json` (a list, or an object keyed by title, of `{"title", "surface",
  "bottom"}`) and `cases.list` (`guess<TAB>title<TAB>label`; TurtleBench's English files separate
  with `<TAB>|<TAB>`). Stories have no key clue library, so each is refused unless
  `allow_no_clues` (`--allow-no-clues` on `turtlesoup import` and `turtlesoup play`, the
  benchmark option `allow_no_clues` of a run).

A directory named `en` or `zh` (one language of a release) is read as that language: its stories
are checked against it as when the whole release is imported. With `language`, a release
directory still reads the other language's files, without reporting their problems, so that an
entry whose two languages disagree in clue count is reported as it is in a full import.

Refused (a PuzzleError: the entry cannot be played) are only: an unreadable file, an entry that
is not an object, a missing surface or bottom, no key clue at all (unless `allow_no_clues`) and
a duplicate id. Every other defect is a PuzzleWarning naming file, position and field, and the
entry loads (`WARNING_KINDS`): two languages of a release entry with different tip counts (each
language loads alone), a text that reads as the other language (loaded under the language it is
filed or imported as), tips that are partly not text (the text ones kept), a missing title (the
entry id stands in), a repeated TurtleBench title, an unknown TurtleBench category
(uncategorized), and gold points that break App. D.3's rule (`abstraction.check_gold_points`).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from forkingpaths.benchmarks.turtlesoup.abstraction import check_gold_points
from forkingpaths.benchmarks.turtlesoup.puzzles import (
    CATEGORIES,
    CORPUS_DIR,
    LANGUAGES,
    LIST_FIELDS,
    NO_CLUES_HINT,
    TEXT_FIELDS,
    UNCATEGORIZED,
    WARNING_KINDS,
    Puzzle,
    PuzzleError,
    PuzzleWarning,
    category_id,
    check_language,
    detect_language,
    drop_duplicates,
    load_yaml_files,
    refusals,
    warnings_of,
)
from forkingpaths.core.errors import ConfigError, shown

log = logging.getLogger(__name__)

Located = tuple[Puzzle, str, int | None]
"""A puzzle with the file and index it was read from (for errors found after reading)."""

CASE_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "t": "Yes",
        "yes": "Yes",
        "correct": "Yes",
        "对": "Yes",
        "是": "Yes",
        "f": "No",
        "no": "No",
        "incorrect": "No",
        "错": "No",
        "否": "No",
        "n": "Unknown",
        "unknown": "Unknown",
        "irrelevant": "Unknown",
        "不知道": "Unknown",
        "无关": "Unknown",
    }
)
"""A TurtleBench label (folded to lower case) -> the responder's answer it expects.

TurtleBench's Chinese cases use T/F/N, its English ones Correct/Incorrect/Unknown; N and
Irrelevant become Unknown because our responder folds "irrelevant" into Unknown (§4.2). The one
table of labels: `load_turtlebench_cases` and `responder.case_label` both read it.
"""

CASE_LABEL_NAMES = (
    "T/F/N or Yes/No/Unknown/Irrelevant, Correct/Incorrect, 对/错/是/否/不知道/无关 "
    "(case-insensitive)"
)
"""The labels of CASE_LABELS as error messages name them."""

STORIES_FILE = "stories.json"
CASES_FILE = "cases.list"

# A clue line of a one-string `tips` may carry a list marker: "- ", "• ", "1. ", "2) ", "3、".
_TIP_MARKER = re.compile(r"^\s*(?:[-*•·]|\d+\s*[.)、:]|\(\d+\))\s*")


@dataclass(frozen=True)
class LabelledGuess:
    """One TurtleBench case: a player's guess about a story and the answer it should get."""

    guess: str
    title: str
    """Title of the story (in `stories.json`) the guess is about."""
    label: str
    """The expected answer: `Yes`, `No` or `Unknown`."""


@dataclass(frozen=True)
class ImportReport:
    """What an import found: the puzzles that loaded, the refusals, and a census."""

    puzzles: list[Puzzle]
    errors: list[PuzzleError]
    """Refusals: entries (or files) that did not load."""
    languages: list[str]
    """Languages present, in LANGUAGES order."""
    categories: dict[str, int]
    """Category id -> number of instances (puzzle x language, the paper's scenarios: Table
    1(b) counts them), in CATEGORIES order."""
    warnings: list[PuzzleWarning] = field(default_factory=list)
    """Defects of entries that loaded anyway."""

    def warning_kinds(self) -> dict[str, int]:
        """Warning kind -> count, in WARNING_KINDS order (kinds with none left out)."""
        counts = Counter(w.kind for w in self.warnings)
        return {kind: counts[kind] for kind in WARNING_KINDS if counts[kind]}

    def to_json(self) -> dict[str, Any]:
        """`{"instances": N, "puzzles": N, "languages": [...], "categories": {id: count},
        "errors": [...], "warnings": [...], "warning_kinds": {kind: count}}`.

        JSON-ready (what `turtlesoup import --json` prints): `instances` counts puzzle x
        language (what a run plays, the paper's 800 scenarios), `puzzles` the stories (the
        paper's 400, each in one or two languages), `categories` instances; errors and
        warnings as `FILE#INDEX: ...` strings.
        """
        return {
            "instances": len(self.puzzles),
            "puzzles": len({p.entry for p in self.puzzles}),
            "languages": list(self.languages),
            "categories": dict(self.categories),
            "errors": [str(error) for error in self.errors],
            "warnings": [str(warning) for warning in self.warnings],
            "warning_kinds": self.warning_kinds(),
        }


def census(puzzles: Iterable[Puzzle]) -> str:
    """`800 instances: 400 puzzles x en, zh`: what a corpus holds, an instance being one puzzle
    (story) in one language; `5 instances of 3 puzzles: 3 en, 2 zh` when not every puzzle is in
    every language."""
    puzzles = list(puzzles)
    entries = {p.entry for p in puzzles}
    by_language = Counter(p.language for p in puzzles)
    languages = [lang for lang in LANGUAGES if by_language[lang]]
    head = f"{len(puzzles)} instance{'' if len(puzzles) == 1 else 's'}"
    stories = f"{len(entries)} puzzle{'' if len(entries) == 1 else 's'}"
    if all(by_language[lang] == len(entries) for lang in languages):
        return f"{head}: {stories} x {', '.join(languages) or '-'}"
    split = ", ".join(f"{by_language[lang]} {lang}" for lang in languages)
    return f"{head} of {stories}: {split}"


def import_report(
    path: Path, *, language: str | None = None, allow_no_clues: bool = False
) -> ImportReport:
    """Validate and load `path` (any supported format) and count what it holds; gold points
    are checked against App. D.3's rule (warnings of kind `abstraction`)."""
    puzzles, problems = load_corpus_problems(
        Path(path), language=language, allow_no_clues=allow_no_clues, check_rule=True
    )
    counts = Counter(p.category for p in puzzles)
    order = [*CATEGORIES, UNCATEGORIZED]
    return ImportReport(
        puzzles=puzzles,
        errors=refusals(problems),
        languages=[lang for lang in LANGUAGES if any(p.language == lang for p in puzzles)],
        categories={c: counts[c] for c in order if counts[c]},
        warnings=warnings_of(problems),
    )


# ---- the corpus from any source ----


def load_corpus(
    path: Path | None = None, *, language: str | None = None, allow_no_clues: bool = False
) -> tuple[list[Puzzle], list[PuzzleError]]:
    """Puzzles from the shipped corpus (no path) or a file/directory in any supported format,
    and the refusals; each warning is logged (`load_corpus_problems` returns them too).

    Formats: our YAML (`*.yaml` files of bilingual entries), the paper's release (`en/` `zh/`
    directories of per-category JSON lists) and TurtleBench (`stories.json`); see
    `read_path`. Bad entries are refused one by one with a PuzzleError and the rest
    load. `language` keeps only that language where the format says which it is, and sets it for
    TurtleBench stories (otherwise detected). `allow_no_clues` admits puzzles without a key clue
    library (they play with the key-clue mechanism off). A path that does not exist is a
    ConfigError.
    """
    puzzles, problems = load_corpus_problems(path, language=language, allow_no_clues=allow_no_clues)
    for warning in warnings_of(problems):
        log.warning("puzzle loaded with a warning: %s", warning)
    return puzzles, refusals(problems)


def load_corpus_problems(
    path: Path | None = None,
    *,
    language: str | None = None,
    allow_no_clues: bool = False,
    check_rule: bool = False,
) -> tuple[list[Puzzle], list[PuzzleError]]:
    """`load_corpus` with its warnings (PuzzleWarning) among the refusals, not logged; with
    `check_rule`, also a warning (`abstraction`) for each way a puzzle's gold points break
    App. D.3's rule (`abstraction.check_gold_points`)."""
    check_language(language)
    if path is None:
        files = sorted(CORPUS_DIR.glob("*.yaml"))
        located, errors = load_yaml_files(files, source="forkingpaths")
    else:
        path = Path(path)
        if not path.exists():
            raise ConfigError(
                f"puzzles: {str(path)!r} does not exist (expected a file or directory)"
            )
        located, errors = read_path(path, language=language, allow_no_clues=allow_no_clues)
    if language is not None:
        located = [item for item in located if item[0].language == language]
    puzzles, duplicate_errors = drop_duplicates(located)
    if check_rule:
        errors += rule_warnings(located, {id(p) for p in puzzles})
    return puzzles, errors + duplicate_errors


def rule_warnings(located: Iterable[Located], kept: Collection[int]) -> list[PuzzleError]:
    """An `abstraction` warning per breach of App. D.3's rule by the gold points of the located
    puzzles whose `id()` is in `kept`, naming file, index and `<language>.<field>`."""
    warnings: list[PuzzleError] = []
    for puzzle, file, index in located:
        if id(puzzle) not in kept:
            continue
        for breach in check_gold_points(puzzle):
            message = f"{puzzle.id}: {breach.message}"
            field_name = f"{puzzle.language}.{breach.field}"
            warnings.append(PuzzleWarning(file, index, field_name, message, "abstraction"))
    return warnings


# ---- reading any supported path ----


def read_path(
    path: Path, *, language: str | None = None, allow_no_clues: bool = False
) -> tuple[list[Located], list[PuzzleError]]:
    """The puzzles of a file or directory in any supported format, located, and the refusals.

    A file: `*.yaml`/`*.yml` (ours), `stories.json` (TurtleBench) or another `*.json` (one
    release category file; its language is the parent directory's name when that is en/zh,
    else `language`, else detected). A directory: its YAML files, its `stories.json` or category
    JSON files, and its `en/` and `zh/` subdirectories read the same way with their language.
    """
    check_language(language)
    path = Path(path)
    if path.is_dir():
        # An en/ or zh/ folder of a release, imported on its own, is still filed under its
        # language: its stories are checked against it rather than detected.
        declared = path.name if path.name in LANGUAGES else None
        located, errors = _read_directory(path, language, allow_no_clues, declared)
    else:
        declared = path.parent.name if path.parent.name in LANGUAGES else None
        located, errors = _read_file(path, declared, language, allow_no_clues)
    located, pair_errors = _check_pairs(located, language)
    return located, errors + pair_errors


def _read_file(
    path: Path, declared: str | None, language: str | None, allow_no_clues: bool
) -> tuple[list[Located], list[PuzzleError]]:
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        located, errors = load_yaml_files([path], allow_no_clues=allow_no_clues)
        return list(located), errors
    if path.name.lower() == STORIES_FILE:
        return load_turtlebench_stories(
            path, language=declared or language, allow_no_clues=allow_no_clues
        )
    if suffix == ".json":
        return load_release_file(
            path,
            language=declared or language,
            declared=declared is not None,
            allow_no_clues=allow_no_clues,
        )
    if path.name.lower() == CASES_FILE:
        message = "holds labelled guesses, not puzzles (use judge-accuracy)"
    else:
        message = "unsupported file: expected *.yaml (ours), stories.json or a category *.json"
    return [], [PuzzleError(str(path), None, "", message)]


def _read_directory(
    directory: Path, language: str | None, allow_no_clues: bool, declared: str | None = None
) -> tuple[list[Located], list[PuzzleError]]:
    located: list[Located] = []
    errors: list[PuzzleError] = []
    yaml_files = sorted(
        p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in (".yaml", ".yml")
    )
    if yaml_files:
        file_located, file_errors = load_yaml_files(yaml_files, allow_no_clues=allow_no_clues)
        located += file_located
        errors += file_errors
    json_files = sorted(
        p for p in directory.iterdir() if p.is_file() and p.suffix.lower() == ".json"
    )
    stories = [p for p in json_files if p.name.lower() == STORIES_FILE]
    # A TurtleBench directory may hold other JSON (results, logs): stories.json decides.
    # Two category files may name one category ("original.json", "Original.json"): their
    # entries share ids, refused or not, and the later one is refused as a duplicate.
    seen: dict[str, str] = {}
    for file in stories or json_files:
        file_located, file_errors = _read_file(file, declared, language, allow_no_clues)
        for error in refusals(file_errors):
            if error.puzzle_id is not None:
                seen.setdefault(error.puzzle_id, f"{error.file}#{error.index}, itself refused")
        for puzzle, where_file, where_index in file_located:
            if puzzle.id in seen:
                message = f"duplicate id {puzzle.entry!r} (first at {seen[puzzle.id]})"
                errors.append(PuzzleError(where_file, where_index, "id", message))
                continue
            seen[puzzle.id] = f"{where_file}#{where_index}"
            located.append((puzzle, where_file, where_index))
        errors += file_errors
    found = bool(yaml_files or json_files)
    if declared is None:
        for lang in LANGUAGES:
            sub = directory / lang
            if sub.is_dir():
                found = True
                sub_located, sub_errors = _read_directory(sub, language, allow_no_clues, lang)
                located += sub_located
                # The other language is read for the clue-count check only (`read_path`
                # keeps the requested language): its own problems are not this import's.
                if language in (None, lang):
                    errors += sub_errors
    if not found:
        errors.append(
            PuzzleError(
                str(directory),
                None,
                "",
                "no puzzles found: expected *.yaml files (ours), en/ and zh/ with category JSON "
                "files (the paper's release) or stories.json (TurtleBench)",
            )
        )
    return located, errors


def _check_pairs(
    located: list[Located], language: str | None = None
) -> tuple[list[Located], list[PuzzleError]]:
    """Warn of release entries whose two languages disagree in clue count; both still load,
    each language alone (the paper's release has one: a Constant Change story with 7 tips in
    Chinese and 8 in English).

    The warning names the story of `language` when given (the one being imported), else the
    Chinese one, and the other by file and index."""
    by_entry: dict[str, dict[str, Located]] = {}
    for item in located:
        if item[0].source == "release":
            by_entry.setdefault(item[0].entry, {})[item[0].language] = item
    warnings: list[PuzzleError] = []
    for entry, pair in by_entry.items():
        if len(pair) < 2:
            continue
        here_lang = language if language in pair else "zh"
        other_lang = "en" if here_lang == "zh" else "zh"
        here, here_file, here_index = pair[here_lang]
        other, other_file, other_index = pair[other_lang]
        if len(here.key_clues) != len(other.key_clues):
            message = (
                f"mismatched languages: {len(here.key_clues)} tips but {other_file}#"
                f"{other_index} has {len(other.key_clues)} (entry {entry!r}: each language "
                "loads alone)"
            )
            warnings.append(
                PuzzleWarning(here_file, here_index, "tips", message, "mismatched_languages")
            )
    return located, warnings


# ---- shared field checks ----


def _read_json(path: Path) -> tuple[Any, PuzzleError | None]:
    file = str(path)
    try:
        return json.loads(path.read_text(encoding="utf-8-sig")), None
    except (OSError, UnicodeDecodeError) as exc:
        return None, PuzzleError(file, None, "", f"cannot read: {exc}")
    except json.JSONDecodeError as exc:
        return None, PuzzleError(
            file, None, "", f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        )
    except RecursionError:
        return None, PuzzleError(file, None, "", "not readable JSON: nested too deeply")


def _texts(item: dict[str, Any], file: str, index: int) -> tuple[dict[str, str], list[PuzzleError]]:
    """title, surface, bottom of an external story, stripped, and what is missing: a missing
    surface or bottom refuses the story, a missing title is a warning (the caller names it)."""
    texts: dict[str, str] = {}
    errors: list[PuzzleError] = []
    for key in TEXT_FIELDS:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            texts[key] = value.strip()
            continue
        problem = "missing" if value is None else f"expected non-empty text; got {shown(value)}"
        if key == "title":
            errors.append(
                PuzzleWarning(file, index, key, f"{problem}; the entry id stands in", "title")
            )
        else:
            errors.append(PuzzleError(file, index, key, problem))
    return texts, errors


def parse_tips(tips: Any) -> tuple[tuple[str, ...], str | None]:
    """A release `tips` value as the clue list, and what was wrong with it (None: nothing).

    A list of strings, or one string with one clue per line (list markers such as `-`, `•`,
    `1.` removed); None reads as no clues. A list holding other values keeps its strings (the
    problem says what was left out); any other value gives no clues.
    """
    if tips is None:
        return (), None
    if isinstance(tips, str):
        lines = (_TIP_MARKER.sub("", line, count=1).strip() for line in tips.splitlines())
        return tuple(line for line in lines if line), None
    if isinstance(tips, list):
        kept = tuple(t.strip() for t in tips if isinstance(t, str) and t.strip())
        dropped = [t for t in tips if not isinstance(t, str)]
        if not dropped:
            return kept, None
        return kept, (
            f"expected a list of strings; {len(dropped)} item(s) not text left out: "
            f"{shown(dropped)}"
        )
    return (), f"expected a list of strings or one string with a clue per line; got {shown(tips)}"


def _clues(
    value: Any, file: str, index: int, field_name: str, allow_no_clues: bool, none_message: str
) -> tuple[tuple[str, ...], list[PuzzleError]]:
    """The clue library of an external story: partly bad tips are a warning (the text ones
    kept); no clue at all refuses the story unless `allow_no_clues`."""
    clues, problem = parse_tips(value)
    problems: list[PuzzleError] = []
    if problem is not None:
        problems.append(PuzzleWarning(file, index, field_name, problem, "tips"))
    if not clues and not allow_no_clues:
        problems.append(PuzzleError(file, index, field_name, none_message))
    return clues, problems


def _language_of(
    texts: dict[str, str], file: str, index: int, language: str | None, declared: bool
) -> tuple[str, PuzzleError | None]:
    """The story's language: the one it is filed or imported under (a warning when the text
    reads as the other); else detected."""
    read_as = detect_language(texts.get("surface", "") + "\n" + texts.get("bottom", ""))
    if language is None:
        return read_as, None
    if read_as != language:
        said = f"filed under {language}/" if declared else f"imported as {language}"
        message = (
            f"mismatched language: {said} but the text reads as {read_as}; loaded as {language}"
        )
        return language, PuzzleWarning(file, index, "language", message, "language")
    return language, None


# ---- the paper's release ----


def load_release_file(
    path: Path,
    *,
    language: str | None = None,
    declared: bool = False,
    allow_no_clues: bool = False,
) -> tuple[list[Located], list[PuzzleError]]:
    """The stories of one release category file (`en/crime_thriller.json`), located.

    The category comes from the file name; `language` is the one the file is filed under
    (`declared`) or imported as, checked against the text, else detected per story.
    """
    file = str(path)
    category = category_id(path.stem)
    if category is None:
        names = ", ".join(f"{cid} ({display})" for cid, display in CATEGORIES.items())
        return [], [
            PuzzleError(
                file,
                None,
                "category",
                f"file name {path.stem!r} names no category; expected one of {names} "
                "(TurtleBench stories must be named stories.json)",
            )
        ]
    data, problem = _read_json(path)
    if problem is not None:
        return [], [problem]
    if not isinstance(data, list):
        return [], [
            PuzzleError(file, None, "", f"expected a JSON list of stories; got {shown(data)}")
        ]
    located: list[Located] = []
    errors: list[PuzzleError] = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            message = f"expected an object with title, surface, bottom, tips; got {shown(item)}"
            errors.append(PuzzleError(file, index, "", message))
            continue
        texts, item_errors = _texts(item, file, index)
        none = "missing" if item.get("tips") is None else "empty clue library"
        clues, tips_problems = _clues(
            item.get("tips"),
            file,
            index,
            "tips",
            allow_no_clues,
            f"{none}: at least one key clue is required ({NO_CLUES_HINT})",
        )
        item_errors += tips_problems
        lang, lang_problem = _language_of(texts, file, index, language, declared)
        if lang_problem is not None:
            item_errors.append(lang_problem)
        entry = f"{category}-{index + 1:02d}"
        for error in item_errors:
            error.puzzle_id = f"{entry}-{lang}"
        errors += item_errors
        if refusals(item_errors):
            continue
        puzzle = Puzzle(
            id=f"{entry}-{lang}",
            entry=entry,
            category=category,
            language=lang,
            title=texts.get("title", entry),
            surface=texts["surface"],
            bottom=texts["bottom"],
            key_clues=clues,
            source="release",
        )
        located.append((puzzle, file, index))
    return located, errors


# ---- TurtleBench ----


def load_turtlebench_stories(
    path: Path, *, language: str | None = None, allow_no_clues: bool = False
) -> tuple[list[Located], list[PuzzleError]]:
    """The stories of a TurtleBench `stories.json`, located (entry ids `turtlebench-NN`).

    `language` sets the language (checked against the text); otherwise it is detected. Without
    `allow_no_clues` every story is refused, since play needs a key clue library.
    """
    file = str(path)
    data, problem = _read_json(path)
    if problem is not None:
        return [], [problem]
    if isinstance(data, dict):
        items: list[Any] = [
            {"title": title, **value} if isinstance(value, dict) else value
            for title, value in data.items()
        ]
    elif isinstance(data, list):
        items = data
    else:
        message = (
            f"expected a JSON list (or an object keyed by title) of stories; got {shown(data)}"
        )
        return [], [PuzzleError(file, None, "", message)]
    located: list[Located] = []
    errors: list[PuzzleError] = []
    first_title: dict[str, int] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            message = f"expected an object with title, surface, bottom; got {shown(item)}"
            errors.append(PuzzleError(file, index, "", message))
            continue
        texts, item_errors = _texts(item, file, index)
        entry = f"turtlebench-{index + 1:02d}"
        title = texts.get("title")
        if title is not None and title in first_title:
            message = (
                f"duplicate title {title!r} (first at #{first_title[title]}): cases naming it "
                "go to the first story"
            )
            item_errors.append(PuzzleWarning(file, index, "title", message, "duplicate_title"))
        elif title is not None:
            first_title[title] = index
        category = UNCATEGORIZED
        if item.get("category") is not None:
            named = category_id(str(item["category"]))
            if named is None:
                allowed = ", ".join(CATEGORIES)
                message = (
                    f"unknown category {shown(item['category'])}; expected one of {allowed} "
                    "(loaded uncategorized)"
                )
                item_errors.append(PuzzleWarning(file, index, "category", message, "category"))
            category = named or UNCATEGORIZED
        clue_field = "tips" if "tips" in item else "key_clues"
        clues, tips_problems = _clues(
            item.get("tips", item.get("key_clues")),
            file,
            index,
            clue_field,
            allow_no_clues,
            f"TurtleBench stories have no key clue library; {NO_CLUES_HINT}",
        )
        item_errors += tips_problems
        lang, lang_problem = _language_of(texts, file, index, language, False)
        if lang_problem is not None:
            item_errors.append(lang_problem)
        errors += item_errors
        if refusals(item_errors):
            continue
        puzzle = Puzzle(
            id=f"{entry}-{lang}",
            entry=entry,
            category=category,
            language=lang,
            title=texts.get("title", entry),
            surface=texts["surface"],
            bottom=texts["bottom"],
            key_clues=clues,
            source="turtlebench",
        )
        located.append((puzzle, file, index))
    return located, errors


def normalize_case_label(label: str) -> str | None:
    """A TurtleBench label as the expected answer (`Yes`/`No`/`Unknown`), or None if unknown."""
    return CASE_LABELS.get(label.strip().lower())


def load_turtlebench_cases(
    path: Path, *, titles: Collection[str] | None = None
) -> tuple[list[LabelledGuess], list[PuzzleError]]:
    """The labelled guesses of a TurtleBench `cases.list` (or a directory holding one).

    One case per line, `guess<TAB>title<TAB>label` (or TurtleBench English's `<TAB>|<TAB>`);
    blank lines, `#` comments and a `guess<TAB>title<TAB>label` header are skipped. A bad line
    is refused with its 1-based line number and the rest load; with `titles`, a case about a
    story not among them is refused too. A path that does not exist is a ConfigError.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CASES_FILE
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(
            f"cases: {file!r} does not exist (expected a TurtleBench cases.list)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        return [], [PuzzleError(file, None, "", f"cannot read: {exc}")]
    known = set(titles) if titles is not None else None
    guesses: list[LabelledGuess] = []
    errors: list[PuzzleError] = []
    header_allowed = True
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [
            part.strip() for part in (line.split("\t|\t") if "\t|\t" in line else line.split("\t"))
        ]
        if header_allowed and len(parts) == 3 and parts[2].lower() == "label":
            header_allowed = False
            continue
        header_allowed = False
        if len(parts) != 3:
            message = (
                f"expected guess<TAB>title<TAB>label; got {len(parts)} field(s): {shown(line)}"
            )
            errors.append(PuzzleError(file, number, "", message))
            continue
        guess, title, raw_label = parts
        label = normalize_case_label(raw_label)
        if label is None:
            message = f"unknown label {shown(raw_label)}; expected {CASE_LABEL_NAMES}"
            errors.append(PuzzleError(file, number, "label", message))
        elif not guess or not title:
            errors.append(PuzzleError(file, number, "guess" if not guess else "title", "empty"))
        elif known is not None and title not in known:
            errors.append(PuzzleError(file, number, "title", f"no story titled {title!r}"))
        else:
            guesses.append(LabelledGuess(guess=guess, title=title, label=label))
    return guesses, errors


# ---- writing our format ----


def _entries(puzzles: Iterable[Puzzle]) -> list[dict[str, Any]]:
    """Puzzles grouped into our YAML entries, in order of first appearance."""
    entries: dict[str, dict[str, Any]] = {}
    for puzzle in puzzles:
        entry = entries.setdefault(puzzle.entry, {"id": puzzle.entry, "category": puzzle.category})
        if entry["category"] != puzzle.category:
            raise ConfigError(
                f"write_corpus: puzzle {puzzle.id!r} has category {puzzle.category!r} but its "
                f"entry {puzzle.entry!r} already has {entry['category']!r}"
            )
        if puzzle.language in entry:
            raise ConfigError(f"write_corpus: puzzle id {puzzle.id!r} given twice")
        entry[puzzle.language] = {
            **{key: getattr(puzzle, key) for key in TEXT_FIELDS},
            **{key: list(getattr(puzzle, key)) for key in LIST_FIELDS},
        }
    # Languages in a fixed order after id and category, whatever order the puzzles came in.
    return [{k: e[k] for k in ("id", "category", *LANGUAGES) if k in e} for e in entries.values()]


def write_corpus(puzzles: Iterable[Puzzle], out_path: Path) -> Path:
    """Write `puzzles` as one YAML file of our format (readable by `load_corpus`); returns it.

    Puzzles sharing an entry become one bilingual entry; an entry may hold one language only.
    Clue-less stories (imported with `allow_no_clues`) need `allow_no_clues` to load back.
    """
    out_path = Path(out_path)
    entries = _entries(puzzles)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    header = "# TurtleSoup puzzles in forkingpaths format (docs/dev/turtlesoup.md §1).\n"
    body = yaml.safe_dump(entries, allow_unicode=True, sort_keys=False, width=100)
    out_path.write_text(header + body, encoding="utf-8")
    return out_path
