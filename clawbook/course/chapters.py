"""The chapter list, read from ``chapters.toml``: the one place a chapter is described."""

from __future__ import annotations

import ast
import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

CHAPTERS_FILE = Path(__file__).resolve().parents[1] / "chapters.toml"
CHAPTERS_ENV = "CLAWBOOK_CHAPTERS"
"""Names another chapters file; the tooling's own tests use it to describe small fake courses."""


class CurriculumError(ValueError):
    """``chapters.toml`` cannot be read: the message names the file, and the line when known."""


@dataclass(frozen=True)
class Part:
    """A part of the book: a group of chapters with a common theme."""

    number: int
    title: str


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book and everything the tooling needs to know about it."""

    id: str
    title: str
    part: int
    minutes: int
    teaches: str = ""
    page: str | None = None
    files: tuple[str, ...] = ()
    tests: dict[str, int] = field(default_factory=dict)

    @property
    def written(self) -> bool:
        """True once the chapter has a page in the book."""
        return self.page is not None

    @property
    def has_stubs(self) -> bool:
        """True when the learner writes code in this chapter (it lists files to edit)."""
        return bool(self.files)

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The test-name prefixes that select this chapter's tests."""
        return tuple(self.tests)

    @property
    def min_tests(self) -> int:
        """The minimum number of tests the chapter must have, over all its prefixes."""
        return sum(self.tests.values())

    @property
    def test_globs(self) -> tuple[str, ...]:
        """The test files of the chapter, as globs relative to the repository root."""
        globs: list[str] = []
        for prefix in self.prefixes:
            globs.append(f"tests/{prefix}*.py")
            if prefix.endswith("_"):
                globs.append(f"tests/{prefix[:-1]}.py")  # test_openrouter.py for test_openrouter_
        return tuple(globs)


@dataclass(frozen=True)
class Curriculum:
    """All parts and chapters, in book order."""

    parts: tuple[Part, ...]
    chapters: tuple[Chapter, ...]

    def get(self, chapter_id: str) -> Chapter:
        """Return the chapter with this id, or raise ``KeyError`` naming the known ids."""
        for chapter in self.chapters:
            if chapter.id == chapter_id:
                return chapter
        known = ", ".join(c.id for c in self.chapters)
        raise KeyError(f"no chapter {chapter_id!r}; the chapters are {known}")

    def part(self, number: int) -> Part:
        """Return the part with this number."""
        for part in self.parts:
            if part.number == number:
                return part
        raise KeyError(f"no part {number}")

    @property
    def written(self) -> tuple[Chapter, ...]:
        """The chapters that have a page in the book, in order."""
        return tuple(c for c in self.chapters if c.written)

    def chapter_for_test_file(self, test_file: str) -> Chapter | None:
        """The chapter a test file belongs to, or None for the tooling's own tests.

        A file belongs to a prefix when its name starts with it (``test_mock_provider.py`` for
        ``test_mock_``) or is the prefix itself (``test_openrouter.py`` for ``test_openrouter_``).
        The longest matching prefix wins, so ``test_streaming_agent.py`` belongs to the chapter
        of ``test_streaming_agent_`` even though ``test_streaming_`` matches it too.
        """
        stem = Path(test_file).stem + "_"
        best: tuple[int, Chapter] | None = None
        for chapter in self.chapters:
            for prefix in chapter.prefixes:
                if stem.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), chapter)
        return best[1] if best else None

    def index(self, chapter_id: str) -> int:
        """The position of a chapter in book order."""
        return self.chapters.index(self.get(chapter_id))


def test_functions(path: Path) -> list[str]:
    """The names of the top-level test functions a test file defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]


def parse(text: str, source: str = "chapters.toml") -> Curriculum:
    """Build a curriculum from the text of a ``chapters.toml`` file.

    Raises ``CurriculumError``, naming ``source``, for text that is not TOML and for a part or
    chapter with a missing or mistyped field.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CurriculumError(f"{source}: not valid TOML: {error}") from None
    try:
        parts = tuple(
            Part(number=_typed(p, "number", int), title=_typed(p, "title", str))
            for p in data.get("part", [])
        )
        chapters = tuple(_chapter(c) for c in data.get("chapter", []))
    except (KeyError, TypeError, AttributeError) as error:
        raise CurriculumError(f"{source}: {error.args[0] if error.args else error}") from None
    if not chapters:
        raise CurriculumError(f"{source}: lists no [[chapter]]")
    ids = [c.id for c in chapters]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CurriculumError(f"{source}: lists these ids twice: {', '.join(duplicates)}")
    return Curriculum(parts=parts, chapters=chapters)


def _typed(table: dict[str, object], key: str, kind: type, default: object = ...) -> Any:
    """``table[key]``, checked to be a ``kind``; a clear message when it is missing or wrong."""
    name = f"chapter {table.get('id', '?')!r}" if "id" in table else "an entry"
    if key not in table:
        if default is not ...:
            return default
        raise KeyError(f"{name} has no {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise TypeError(f"{name}: {key!r} should be a {kind.__name__}, not {value!r}")
    return value


def _chapter(table: dict[str, Any]) -> Chapter:
    tests = _typed(table, "tests", dict, {})
    return Chapter(
        id=_typed(table, "id", str),
        title=_typed(table, "title", str),
        part=_typed(table, "part", int),
        minutes=_typed(table, "minutes", int),
        teaches=_typed(table, "teaches", str, ""),
        page=_typed(table, "page", str, None),
        files=tuple(_typed(table, "files", list, [])),
        tests={str(k): int(v) for k, v in tests.items()},
    )


def load() -> Curriculum:
    """The curriculum of this checkout (or of the file ``CLAWBOOK_CHAPTERS`` names)."""
    return load_file(Path(os.environ.get(CHAPTERS_ENV) or CHAPTERS_FILE))


@cache
def load_file(path: Path) -> Curriculum:
    """The curriculum described by one chapters file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CurriculumError(f"cannot read {path}: {error.strerror}") from None
    return parse(text, str(path))
