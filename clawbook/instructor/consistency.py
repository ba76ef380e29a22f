"""Rules that make the book read as one book, part of ``clawbook verify``'s "page rules".

* ``notebook_titles``: a chapter's notebook opens with the chapter's own title,
  ``# Chapter 5a · Streaming foundations``, as ``chapters.toml`` writes it.
* ``section_names``: the section on what a chapter changes in the ``claw`` command is called
  ``In the `claw` command`` on every page (it was named four ways).
* ``table_headers``: the table of a page's "What the tests verify" section names its columns
  with one vocabulary (``TEST_TABLE_COLUMNS``).
* ``stated_times``: the times the book states come from one function, ``estimate``: reading at
  ``WORDS_PER_MINUTE`` plus ``MINUTES_PER_STEP`` for each step a learner codes. A chapter's
  ``minutes`` in ``chapters.toml`` stays within ``TOLERANCE`` of it, or ``SLACK`` minutes
  (pages grow a sentence at a time; a number that had to move with each would make every
  edit a ``chapters.toml`` edit), and a sentence giving a part's hours of reading and
  coding gives the function's, rounded to the hour.

Each finding names the page (or notebook) and the line to fix.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
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
WORDS_PER_MINUTE = 200
"""Reading speed for technical prose, code blocks left out."""
MINUTES_PER_STEP = 10
"""Writing one step's code, running its tests and fixing what they find."""
TOLERANCE = 0.2
"""How far a chapter's stated ``minutes`` may drift from ``estimate`` before verify says so:
a fifth of it, or ``SLACK`` minutes in a short chapter."""
SLACK = 10
STEP = re.compile(r"^## Step \d", re.MULTILINE)
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
NUMBERS += ["eleven", "twelve"]
ROMAN = ["0", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
PART_TIME = re.compile(
    r"Part (?P<part>[IVX]+)\b[^.]*?about (?P<reading>an|[a-z]+) hours? of reading and "
    r"(?:about )?(?P<coding>an|[a-z]+) hours? of coding"
)
ANY_TIME = re.compile(r"hours? of (?:reading|coding)")


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


def prose_words(text: str) -> int:
    """The words of a page outside fenced code and snippet lines: what a learner reads as prose."""
    words = 0
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if opening := FENCE.match(line):
            fence = opening.group("fence")
        elif not stripped.startswith("--8<--"):
            words += len(stripped.split())
    return words


@dataclass(frozen=True)
class Estimate:
    """What ``estimate`` says a chapter takes, and the counts it says it from."""

    words: int
    steps: int
    """Steps the learner codes (none in a reading chapter)."""

    @property
    def reading(self) -> float:
        """Minutes of reading."""
        return self.words / WORDS_PER_MINUTE

    @property
    def coding(self) -> int:
        """Minutes of coding."""
        return self.steps * MINUTES_PER_STEP

    @property
    def minutes(self) -> int:
        """Reading and coding, rounded up to five minutes (five at least): the chapter's time."""
        return max(5, 5 * math.ceil((self.reading + self.coding) / 5))


def estimate(chapter: Chapter, book: Path) -> Estimate:
    """How long ``chapter`` takes, from its page: words to read and steps to code."""
    text = (book / chapter.page).read_text(encoding="utf-8") if chapter.page else ""
    steps = len(STEP.findall(text)) if chapter.files else 0
    return Estimate(prose_words(text), steps)


def part_hours(part: int, curriculum: Curriculum, book: Path) -> tuple[int, int]:
    """A part's hours of reading and of coding, each rounded to the hour (at least one)."""
    estimates = [estimate(c, book) for c in curriculum.written if c.part == part]
    reading = sum(e.reading for e in estimates)
    coding = sum(e.coding for e in estimates)
    return max(1, round(reading / 60)), max(1, round(coding / 60))


def _hours(word: str) -> int | None:
    if word in ("a", "an"):
        return 1
    return NUMBERS.index(word) if word in NUMBERS else None


def stated_times(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Chapter minutes and part hours the book states unlike ``estimate`` says."""
    book = root / "book"
    found: list[PageFinding] = []
    toml = root / "clawbook" / "chapters.toml"
    lines = toml.read_text(encoding="utf-8").splitlines()
    for chapter in curriculum.written:
        wanted = estimate(chapter, book)
        if abs(chapter.minutes - wanted.minutes) <= max(SLACK, TOLERANCE * wanted.minutes):
            continue
        start = lines.index(f'id = "{chapter.id}"')
        at = next(n for n in range(start, len(lines)) if lines[n].startswith("minutes"))
        found.append(
            PageFinding(
                _name(toml, root),
                at + 1,
                f"{chapter.id} states {chapter.minutes} minutes; its page gives {wanted.minutes}"
                f" ({wanted.words} words at {WORDS_PER_MINUTE} a minute, {wanted.steps} steps "
                f"at {MINUTES_PER_STEP} minutes): write minutes = {wanted.minutes}",
            )
        )
    for page in sorted(book.glob("*.md")):
        raw = page.read_text(encoding="utf-8")
        text = raw.replace("\n", " ")
        covered: list[tuple[int, int]] = []
        for match in PART_TIME.finditer(text):
            covered.append(match.span())
            part = ROMAN.index(match.group("part")) if match.group("part") in ROMAN else -1
            stated = (_hours(match.group("reading")), _hours(match.group("coding")))
            wanted_hours = part_hours(part, curriculum, book)
            if stated != wanted_hours:
                found.append(
                    PageFinding(
                        _name(page, root),
                        raw.count("\n", 0, match.start()) + 1,
                        f"Part {match.group('part')}'s time is about {wanted_hours[0]} hours of "
                        f"reading and {wanted_hours[1]} of coding (the function "
                        f"consistency.estimate), not {match.group(0)!r}",
                    )
                )
        for match in ANY_TIME.finditer(text):
            if not any(start <= match.start() < end for start, end in covered):
                found.append(
                    PageFinding(
                        _name(page, root),
                        raw.count("\n", 0, match.start()) + 1,
                        "a part's time is stated as 'Part N ... about X hours of reading and "
                        "Y hours of coding' (numbers as words), so verify can check it",
                    )
                )
    return found


def findings(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Every consistency rule the book under ``root`` breaks."""
    found = notebook_titles(root, curriculum)
    found.extend(stated_times(root, curriculum))
    for page in sorted((root / "book").glob("*.md")):
        found.extend(section_names(page, root))
        found.extend(table_headers(page, root))
    return found
