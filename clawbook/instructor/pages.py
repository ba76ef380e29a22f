"""Rules every page of the book keeps, checked by ``clawbook verify`` ("page rules").

* ``shown_answers``: no code block outside a collapsed solution fold (``??? ``) shows the
  filled body of a region of the page's own chapter. The learner writes that code; a page
  that prints it unfolded before the Contract gives the answer away. A region of an earlier
  chapter is given code by now and may show. A ``???+`` block opens on load, so it does not
  hide anything.
* ``accidental_headings``: no line turns into a heading by accident. Python-Markdown makes a
  heading of any line that starts with ``#``, with or without a space, inside a box or in the
  middle of a paragraph; a wrapped line that begins ``#45718 ...`` becomes a page-sized title
  with its own search entry. A real heading stands at the margin, ``#`` to ``######`` and a
  space, after a blank line (or an HTML comment line).
* ``hidden_given``: given code is not hidden in a solution fold. When a snippet section holds
  a whole given definition (a function, class or constant with no region of the page's
  chapter in it) next to the region the learner writes, a fold that includes the section
  hides the given part too, and the learner never sees code they are meant to call. Split
  the section: the given part is shown unfolded where the page introduces it.

Each finding names the page and the line to fix.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import Curriculum
from clawbook.course.lesson import FENCE, SECTION_MARK, SNIPPET, included

FOLD = re.compile(r"^(?P<indent>\s*)\?\?\?\s")
"""A collapsed block (pymdownx.details): how the book hides a solution until asked."""
HEADING = re.compile(r"^#{1,6}(?:\s|$)")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
SHORT = 12
"""A region line shorter than this (stripped) is too common to prove anything (``else:``,
``return None``, ``)``); a region is matched by its longer lines only."""


@dataclass(frozen=True)
class PageFinding:
    """One broken page rule, at a line of a page."""

    page: str
    """The page, relative to the repository root (``book/ch19-terminal-app.md``)."""
    line: int
    """1-based."""
    message: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.message}"


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block of a page as the book renders it (its includes resolved)."""

    line: int
    """The 1-based line of its opening fence."""
    lines: list[str]
    folded: bool
    """True when it sits inside a collapsed ``??? `` block."""
    includes: list[str]
    """The ``--8<--`` specs it includes (``solution/plan.py:planmode-check``)."""


def _closes(stripped: str, fence: str) -> bool:
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def code_blocks(page: Path, root: Path) -> Iterator[CodeBlock]:
    """Every fenced code block of a page, with ``--8<--`` includes resolved.

    Blank lines at a block's two ends are left out: the highlighter drops them (Pygments'
    ``stripnl``), so the book never shows them.
    """
    fence: str | None = None
    folded_at: int | None = None
    opened, folded = 0, False
    body: list[str] = []
    specs: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if folded_at is not None and stripped and indent <= folded_at:
            folded_at = None
        if fence is not None:
            if _closes(stripped, fence):
                while body and not body[-1].strip():
                    body.pop()
                while body and not body[0].strip():
                    body.pop(0)
                yield CodeBlock(opened, body, folded, specs)
                fence, body, specs = None, [], []
                continue
            snippet = SNIPPET.match(line)
            if snippet:
                specs.append(snippet.group("spec"))
            body.extend(included(snippet.group("spec"), root) if snippet else [line])
            continue
        fold = FOLD.match(line)
        if fold and folded_at is None:
            folded_at = len(fold.group("indent"))
            continue
        opening = FENCE.match(line)
        if opening:
            fence, opened, folded = opening.group("fence"), number, folded_at is not None


def region_lines(region: stubgen.Region, solution: Path) -> list[str]:
    """The lines of a region's filled body that identify it: stripped, not blank or short.

    Snippet section markers (``# --8<-- [start:name]``) are left out: the book never shows them.
    """
    lines = (solution / region.path).read_text(encoding="utf-8").splitlines()
    first = region.start + (2 if region.more is not None else 1)
    return [
        text.strip()
        for text in lines[first : region.end]
        if len(text.strip()) >= SHORT and not stubgen.SECTION.match(text)
    ]


def _page_name(page: Path, root: Path) -> str:
    return page.relative_to(root).as_posix() if page.is_relative_to(root) else page.name


def shown_answers(page: Path, root: Path, regions: Sequence[stubgen.Region]) -> list[PageFinding]:
    """Code blocks of ``page`` that show one of ``regions`` filled in, outside a ``??? `` fold.

    ``regions`` are those of the page's own chapter. A region is shown when every one of its
    identifying lines (``region_lines``) is a line of one unfolded code block.
    """
    bodies = [(region, set(region_lines(region, root / "solution"))) for region in regions]
    found: list[PageFinding] = []
    for block in code_blocks(page, root):
        if block.folded:
            continue
        shown = {text.strip() for text in block.lines}
        for region, needed in bodies:
            if needed and needed <= shown:
                found.append(
                    PageFinding(
                        _page_name(page, root),
                        block.line,
                        f"this code block shows the answer to {region.chapter}'s region "
                        f"{region.function} (solution/{region.location}) unfolded; the learner "
                        "writes it: move the block into the step's ??? success \"Show the "
                        'solution" fold, after the Contract',
                    )
                )
    return found


def accidental_headings(page: Path, root: Path) -> list[PageFinding]:
    """Lines of ``page`` that Markdown renders as a heading though they are not meant as one.

    Outside fenced code, a line whose text starts with ``#`` is a heading to Python-Markdown.
    It is meant as one only at the margin, as ``#``..``######`` and a space, after a blank
    line, an HTML comment line or at the top of the page; anything else (indented in a box,
    or a wrapped line of a paragraph) is an accident.
    """
    found: list[PageFinding] = []
    fence: str | None = None
    previous = ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if fence is not None:
            if _closes(stripped, fence):
                fence = None
        elif opening := FENCE.match(line):
            fence = opening.group("fence")
        elif stripped.startswith("#"):
            meant = HEADING.match(line) is not None and (
                not previous.strip() or COMMENT.match(previous) is not None
            )
            if not meant:
                found.append(
                    PageFinding(
                        _page_name(page, root),
                        number,
                        f"{stripped[:40]!r} starts with '#', so Markdown makes it a heading "
                        "here; rewrap the text so that no line starts with '#'",
                    )
                )
        previous = line
    return found


def section_span(lines: Sequence[str], name: str) -> tuple[int, int] | None:
    """The 0-based lines strictly between ``[start:name]`` and ``[end:name]``, if both exist."""
    start = end = None
    for index, line in enumerate(lines):
        mark = SECTION_MARK.match(line)
        if mark and mark.group("name") == name:
            if mark.group("edge") == "start":
                start = index
            else:
                end = index
    return (start + 1, end) if start is not None and end is not None else None


def given_definitions(
    source: str, span: tuple[int, int], regions: Sequence[stubgen.Region]
) -> Iterator[tuple[str, int, int]]:
    """The whole given definitions of a module inside ``span``: name, first and last 0-based line.

    A module-level function, class or constant is given when no region of ``regions`` starts
    inside it; the docstring under a constant goes with it. Members of a class that holds a
    region are not looked at: the finished class is the answer.
    """
    starts = [region.start for region in regions]
    found: list[tuple[str, int, int]] = []
    for node in ast.parse(source).body:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)]) - 1
        last = (node.end_lineno or node.lineno) - 1
        if last < span[0] or first >= span[1]:
            continue
        if any(first <= start <= last for start in starts):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            if found and found[-1][2] == first - 1:
                found[-1] = (found[-1][0], found[-1][1], last)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            name = ast.unparse(target)
        else:
            continue
        found.append((name, first, last))
    yield from found


def hidden_given(page: Path, root: Path, regions: Sequence[stubgen.Region]) -> list[PageFinding]:
    """Solution folds of ``page`` whose included section also holds given code shown nowhere else.

    ``regions`` are those of the page's own chapter. A fold's block counts when one of its
    includes holds such a region; each given definition in that include must show, line for
    line (its identifying lines), in an unfolded code block of the page.
    """
    blocks = list(code_blocks(page, root))
    shown = {text.strip() for block in blocks if not block.folded for text in block.lines}
    by_file: dict[str, list[stubgen.Region]] = {}
    for region in regions:
        by_file.setdefault(f"solution/{region.path}", []).append(region)
    found: list[PageFinding] = []
    for block in blocks:
        if not block.folded:
            continue
        for spec in block.includes:
            path, _, section = spec.partition(":")
            own = by_file.get(path)
            file = root / path
            if not own or not section or not file.is_file():
                continue
            source = file.read_text(encoding="utf-8")
            lines = source.splitlines()
            span = section_span(lines, section)
            if span is None or not any(span[0] <= r.start < span[1] for r in own):
                continue
            for name, first, last in given_definitions(source, span, own):
                needed = {
                    text.strip()
                    for text in lines[first : last + 1]
                    if len(text.strip()) >= SHORT and not stubgen.SECTION.match(text)
                }
                if needed and not needed <= shown:
                    found.append(
                        PageFinding(
                            _page_name(page, root),
                            block.line,
                            f"the given {name} ({path}:{first + 1}) shows only inside this "
                            f"solution fold, through section {section!r}; split the section "
                            "so that the given code is its own section, shown unfolded where "
                            "the page introduces it",
                        )
                    )
    return found


def findings(root: Path, curriculum: Curriculum) -> list[PageFinding]:
    """Every broken page rule of the book under ``root``.

    Answers shown, accidental headings, given code hidden in a fold.
    """
    book = root / "book"
    regions = stubgen.all_regions(root / "solution")
    chapter_of = {c.page: c.id for c in curriculum.chapters if c.page is not None}
    found: list[PageFinding] = []
    for page in sorted(book.glob("*.md")):
        chapter = chapter_of.get(page.name)
        if chapter is not None:
            own = [region for region in regions if region.chapter == chapter]
            found.extend(shown_answers(page, root, own))
            found.extend(hidden_given(page, root, own))
        found.extend(accidental_headings(page, root))
    return found
