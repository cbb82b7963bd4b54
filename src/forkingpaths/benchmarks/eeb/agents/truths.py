"""TruthRepository: the per-game set of verified truths (§4.2-4.3, M_truth) and its JSON file."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from forkingpaths.core.errors import ConfigError, InvalidFile

SCHEMA_VERSION = 1
"""Version of the truth-repository file format; files of a newer version are refused."""
GAMES: tuple[str, ...] = ("maze", "match2")
"""The two EvoEmpirBench games (a repository's `game`, an instance's `params["game"]`)."""


class Truth(BaseModel):
    """One verified piece of knowledge, shown to the agent as a line of its Training Knowledge."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    """The truth itself, as the prompt shows it."""
    source: str = ""
    """Where it came from (an instance id, "manual", "merged"...)."""
    round: int | None = None
    """The learning round that verified it (None when unknown or hand-written)."""
    verified_gain: float | None = None
    """Score gain S' - S of the verifying replay (Eq. 4); None when not verified by a replay."""

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty string")
        return value.strip()


class _TruthFile(BaseModel):
    """The on-disk form: `{"schema_version", "game", "truths": [...]}`."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int
    """Format version (SCHEMA_VERSION)."""
    game: str
    """"maze" or "match2"."""
    truths: list[Truth] = Field(default_factory=list)
    """Truths in the order the prompt lists them."""


def _check_game(game: Any, where: str) -> str:
    if game not in GAMES:
        raise ConfigError(f"{where}: got {game!r}; allowed values: {', '.join(GAMES)}")
    return str(game)


class TruthRepository:
    """M_truth of one game: an ordered list of `Truth`s with load/save and small edit hooks.

    The base agent renders `texts()` as its Training Knowledge block; Agent-ExpVer's
    TruthWeaver edits the list through `add`, `remove` and `replace` and saves it with `save`.
    Iterating yields the `Truth` records in prompt order.
    """

    def __init__(self, game: str, truths: Iterable[Truth | str] = ()) -> None:
        self.game = _check_game(game, "game")
        self._truths: list[Truth] = []
        self.replace(truths)

    # ---- edits ----

    def add(self, text: str, **meta: Any) -> Truth:
        """Append a truth; `meta` holds the other Truth fields (source, round, verified_gain)."""
        truth = _make_truth({"text": text, **meta}, f"truth {len(self._truths)}")
        self._truths.append(truth)
        return truth

    def remove(self, index: int) -> Truth:
        """Remove and return the truth at `index` (as listed, 0-based)."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise ConfigError(f"index: got {index!r}; allowed values: an integer")
        if not -len(self._truths) <= index < len(self._truths):
            raise ConfigError(
                f"index: got {index}; allowed values: 0 to {len(self._truths) - 1} "
                f"(the repository holds {len(self._truths)} truths)"
            )
        return self._truths.pop(index)

    def replace(self, truths: Iterable[Truth | str]) -> None:
        """Swap the whole list (what TruthWeaver's merge/de-duplicate pass returns)."""
        fresh = []
        for i, item in enumerate(truths):
            if isinstance(item, Truth):
                fresh.append(item)
            elif isinstance(item, str):
                fresh.append(_make_truth({"text": item}, f"truth {i}"))
            else:
                raise ConfigError(
                    f"truth {i}: got {type(item).__name__}; allowed values: a Truth or a string"
                )
        self._truths = fresh

    # ---- reading ----

    def texts(self) -> list[str]:
        """The truths' texts in prompt order."""
        return [truth.text for truth in self._truths]

    def __iter__(self) -> Iterator[Truth]:
        return iter(list(self._truths))

    def __len__(self) -> int:
        return len(self._truths)

    def __getitem__(self, index: int) -> Truth:
        return self._truths[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TruthRepository):
            return NotImplemented
        return self.game == other.game and self._truths == other._truths

    def __repr__(self) -> str:
        return f"TruthRepository(game={self.game!r}, truths={len(self._truths)})"

    # ---- files ----

    def to_json(self) -> dict[str, Any]:
        """The file's content as a dict."""
        return _TruthFile(
            schema_version=SCHEMA_VERSION, game=self.game, truths=list(self._truths)
        ).model_dump(mode="json")

    def save(self, path: str | Path) -> Path:
        """Write the repository as indented JSON (parent folders are created)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_json(cls, data: Any, source: str = "truths") -> TruthRepository:
        """Validate a parsed file; InvalidFile names `source`, the field and what is allowed."""
        if not isinstance(data, dict):
            raise InvalidFile(f"{source}: expected a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise InvalidFile(
                f"{source}: schema_version {version} is newer than this forkingpaths reads "
                f"({SCHEMA_VERSION}); upgrade forkingpaths"
            )
        try:
            parsed = _TruthFile.model_validate(data)
        except ValidationError as exc:
            raise InvalidFile(f"{source}: {_describe(exc)}") from None
        if parsed.schema_version != SCHEMA_VERSION:
            raise InvalidFile(
                f"{source}: schema_version: got {parsed.schema_version}; allowed values: "
                f"{SCHEMA_VERSION}"
            )
        if parsed.game not in GAMES:
            raise InvalidFile(
                f"{source}: game: got {parsed.game!r}; allowed values: {', '.join(GAMES)}"
            )
        return cls(parsed.game, parsed.truths)

    @classmethod
    def load(cls, path: str | Path) -> TruthRepository:
        """Read a repository file written by `save` (or by hand)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidFile(
                f"{path}: cannot read the truth repository ({exc.strerror})"
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidFile(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        return cls.from_json(data, source=str(path))


def _make_truth(fields: dict[str, Any], where: str) -> Truth:
    try:
        return Truth.model_validate(fields)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    """The first validation error as `field.path: problem (got value)`."""
    error = exc.errors()[0]
    where = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]
    ).lstrip(".")
    got = "" if error["type"] == "missing" else f" (got {json.dumps(error.get('input'))[:60]})"
    return f"{where or 'file'}: {error['msg']}{got}"


def resolve_truths(value: Any, option: str = "truths") -> TruthRepository | tuple[str, ...] | None:
    """The `truths` option of an agent: None, a repository file path, a list of strings, or a
    TruthRepository. A file is read now, so a bad one fails before the run starts."""
    if value is None or isinstance(value, TruthRepository):
        return value
    if isinstance(value, str | Path):
        return TruthRepository.load(value)
    if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
        texts = tuple(item.strip() for item in value)
        if any(not text for text in texts):
            raise ConfigError(f"{option}: got {list(value)!r}; allowed values: non-empty strings")
        return texts
    raise ConfigError(
        f"{option}: got {value!r}; allowed values: a truth-repository JSON path, a list of "
        "strings, or none"
    )
