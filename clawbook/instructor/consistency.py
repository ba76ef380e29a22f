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


MENTION = re.compile(
    r"(?<![-\w./\[])(?:(?P<word>[Cc]hapter)(?: |[ \t]*\n[ \t]*)(?P<number>\d{1,2}[ab]?)"
    r"|ch(?P<id>\d{2}[ab]?))"
    r"(?![-\w/]|\.\w)"
)
"""A chapter named in prose: ``chapter 13``, ``Chapter 5b``, ``ch17``; a line may end between
the word and the number."""
NOT_PROSE = [
    re.compile(r"<!--[\s\S]*?-->"),
    re.compile(r"<quiz>[\s\S]*?</quiz>"),
    re.compile(r"(`+)[\s\S]*?\1"),
    re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\)"),
    re.compile(r"\[[^\]]*\]\[[^\]]*\]"),
    re.compile(r"<[^>\n]+>"),
    re.compile(r"^\s*(?:#{1,6}\s|!!!|\?\?\?|\*\[|\[[^\]]+\]:|--8<--).*$", re.MULTILINE),
]
"""What a chapter mention is left alone in: comments, quizzes, code, links (and their text),
HTML tags, headings, box titles, abbreviations, link definitions, snippet lines."""


def _prose_only(text: str) -> str:
    """``text`` with everything that is not prose blanked out, so offsets stay the same."""
    lines = text.split("\n")
    fence: str | None = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            lines[index] = " " * len(line)
        elif opening := FENCE.match(line):
            fence = opening.group("fence")
            lines[index] = " " * len(line)
    masked = "\n".join(lines)
    for pattern in NOT_PROSE:
        masked = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), masked)
    return masked


@dataclass(frozen=True)
class Mention:
    """A plain chapter mention in a page's prose, and the link it should be."""

    start: int
    end: int
    text: str
    link: str


def chapter_mentions(text: str, page: str, curriculum: Curriculum) -> list[Mention]:
    """The mentions of written chapters in ``text``'s prose that are not links yet.

    ``page`` is the page's name in the book: a chapter does not link to itself.
    """
    pages = {c.id: c.page for c in curriculum.written if c.page is not None}
    found: list[Mention] = []
    for match in MENTION.finditer(_prose_only(text)):
        number = match.group("number")
        chapter_id = f"ch{match.group('id')}" if number is None else f"ch{number:0>2}"
        if number is not None and number[-1] in "ab":
            chapter_id = f"ch{number[:-1]:0>2}{number[-1]}"
        target = pages.get(chapter_id)
        if target is None or target == page:
            continue
        found.append(Mention(match.start(), match.end(), match.group(0), target))
    return found


def link_chapters(text: str, page: str, curriculum: Curriculum) -> str:
    """``text`` with each plain chapter mention in its prose made a link to the chapter."""
    for mention in reversed(chapter_mentions(text, page, curriculum)):
        link = f"[{mention.text}]({mention.link})"
        text = text[: mention.start] + link + text[mention.end :]
    return text


def plain_mentions(page: Path, root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Chapters named in ``page``'s prose without a link to them."""
    text = page.read_text(encoding="utf-8")
    return [
        PageFinding(
            _name(page, root),
            text.count("\n", 0, mention.start) + 1,
            f"{mention.text!r} in prose is a link: [{mention.text}]({mention.link}) "
            f"(python -m clawbook.instructor.consistency {_name(page, root)} links them all)",
        )
        for mention in chapter_mentions(text, page.name, curriculum)
    ]


CITED_DOCS = re.compile(
    r"\b(?:(?:Claude Code|Anthropic|OpenRouter|MCP|the SDK|Python)'s (?:own )?"
    r"(?:permissions |hooks |settings )?"
    r"|the (?:MCP|hooks|settings|permissions|CLI) )"
    r"(?:docs|documentation|specification|reference)\b"
)
"""Documentation cited by name in prose: it is a link to the page it means."""


def cited_docs(page: Path, root: Path) -> list[PageFinding]:
    """Documentation ``page`` cites in prose without linking it."""
    text = page.read_text(encoding="utf-8")
    return [
        PageFinding(
            _name(page, root),
            text.count("\n", 0, match.start()) + 1,
            f"{match.group(0)!r} is cited as plain text; make it a link to the page it means",
        )
        for match in CITED_DOCS.finditer(_prose_only(text))
    ]


def findings(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Every consistency rule the book under ``root`` breaks."""
    found = notebook_titles(root, curriculum)
    found.extend(stated_times(root, curriculum))
    for page in sorted((root / "book").glob("*.md")):
        found.extend(section_names(page, root))
        found.extend(table_headers(page, root))
        found.extend(plain_mentions(page, root, curriculum))
        found.extend(cited_docs(page, root))
    return found


def main(argv: list[str]) -> int:
    """Link every plain chapter mention in the prose of the pages named in ``argv``.

    Each page's chapters are those of the ``clawbook/chapters.toml`` beside its book.
    """
    from clawbook.course.chapters import load_file

    for name in argv:
        page = Path(name)
        curriculum = load_file(page.resolve().parents[1] / "clawbook" / "chapters.toml")
        text = page.read_text(encoding="utf-8")
        linked = link_chapters(text, page.name, curriculum)
        if linked != text:
            page.write_text(linked, encoding="utf-8")
        print(f"{name}: {len(chapter_mentions(text, page.name, curriculum))} mentions linked")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
