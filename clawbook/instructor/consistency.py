"""Rules that make the book read as one book, part of ``clawbook verify``'s "page rules".

* ``notebook_titles``: a chapter's notebook opens with the chapter's own title,
  ``# Chapter 5a · Streaming foundations``, as ``chapters.toml`` writes it.
* ``section_names``: the section on what a chapter changes in the ``claw`` command is called
  ``In the `claw` command`` on every page (it was named four ways).
* ``table_headers``: the table of a page's "What the tests verify" section names its columns
  with one vocabulary (``TEST_TABLE_COLUMNS``).

Each finding names the page (or notebook) and the line to fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from clawbook.course.chapters import Chapter, Curriculum
from clawbook.course.lesson import FENCE
from clawbook.instructor.pages import PageFinding

CLAW_SECTION = "In the `claw` command"
"""The one name of the section on what the chapter changes in the ``claw`` command."""
TEST_TABLE_HEADING = "What the tests verify"
TEST_TABLE_COLUMNS = ("Behaviour", "Tests", "What the tests check", "Steps")
"""The words a test table's header may use; ``Tests`` may name a prefix in parentheses."""
HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)\s*$")


def number(chapter: Chapter) -> str:
    """The chapter's number as the book prints it: ``ch05a`` is ``5a``."""
    return chapter.id.removeprefix("ch").lstrip("0") or "0"


def _name(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


def notebook_titles(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Notebooks whose first line is not ``# Chapter N · <the chapter's title>``."""
    found: list[PageFinding] = []
    for chapter in curriculum.chapters:
        if chapter.page is None:
            continue
        notebook = root / "book" / "notebooks" / f"{Path(chapter.page).stem}.ipynb"
        if not notebook.is_file():
            continue
        text = notebook.read_text(encoding="utf-8")
        wanted = f"# Chapter {number(chapter)} · {chapter.title}"
        cells = json.loads(text).get("cells", [])
        source = cells[0].get("source", []) if cells else []
        lines = "".join(source).splitlines() if isinstance(source, list) else source.splitlines()
        first = lines[0] if lines else ""
        if first != wanted:
            at = next((n for n, line in enumerate(text.splitlines(), 1) if '"#' in line), 1)
            found.append(
                PageFinding(
                    _name(notebook, root),
                    at,
                    f"the notebook's title is {first!r}; its first cell must open with the "
                    f"chapter's title from chapters.toml: {wanted!r}",
                )
            )
    return found


def headings(page: Path) -> list[tuple[int, int, str]]:
    """The Markdown headings of ``page`` outside fenced code: line, level, text."""
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    for line_number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if opening := FENCE.match(line):
            fence = opening.group("fence")
            continue
        if heading := HEADING.match(line):
            out.append((line_number, len(heading.group("level")), heading.group("text")))
    return out


def section_names(page: Path, root: Path) -> list[PageFinding]:
    """Headings about the ``claw`` command that are not ``## In the `claw` command``."""
    found: list[PageFinding] = []
    for line, level, text in headings(page):
        if "`claw` command" in text and (level, text) != (2, CLAW_SECTION):
            found.append(
                PageFinding(
                    _name(page, root),
                    line,
                    f"the section on the claw command is called '## {CLAW_SECTION}' on every "
                    f"page, not {'#' * level} {text!r}",
                )
            )
    return found


def _allowed_column(cell: str) -> bool:
    if cell in TEST_TABLE_COLUMNS:
        return True
    return re.fullmatch(r"Tests \(`test_\w+` and\)", cell) is not None


def table_headers(page: Path, root: Path) -> list[PageFinding]:
    """The "What the tests verify" table's header cells outside ``TEST_TABLE_COLUMNS``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[PageFinding] = []
    for line, _, text in headings(page):
        if text != TEST_TABLE_HEADING:
            continue
        header = next(
            (n for n in range(line, len(lines)) if lines[n].lstrip().startswith("|")), None
        )
        if header is None:
            continue
        cells = [cell.strip() for cell in lines[header].strip().strip("|").split("|")]
        wrong = [cell for cell in cells if not _allowed_column(cell)]
        if wrong:
            found.append(
                PageFinding(
                    _name(page, root),
                    header + 1,
                    f"the test table's columns are named from {', '.join(TEST_TABLE_COLUMNS)} "
                    f"(Tests may add a prefix: Tests (`test_x_` and)), not {', '.join(wrong)}",
                )
            )
    return found


def findings(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Every consistency rule the book under ``root`` breaks."""
    found = notebook_titles(root, curriculum)
    for page in sorted((root / "book").glob("*.md")):
        found.extend(section_names(page, root))
        found.extend(table_headers(page, root))
    return found
