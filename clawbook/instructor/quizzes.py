"""The book's quizzes: every question offers real choices, and the right answer is not guessable.

A quiz on a page is a ``<quiz>`` block that the mkdocs-quiz plugin draws: the question, then its
options, one checkbox line each (``- [x]`` right, ``- [ ]`` wrong), then the explanation shown
after an answer. This module reads the blocks as the plugin does and finds three faults:

- an option wrapped onto a second line: the plugin reads an option from its one line, so the
  wrapped rest, and every option after it, is drawn as explanation text instead;
- a question with fewer than ``MIN_OPTIONS`` options (or none marked right);
- right answers piled on some positions: a reader who notices that the answer is never the
  4th option can guess. The rule, for the whole book and for each part on its own: a position's
  *fair share* is the number of right answers it would hold on average if each question's right
  answers were placed at random among its options (the sum, over the questions with that many
  options, of right answers / options). Every position whose fair share is at least
  ``JUDGED_SHARE`` holds between half and one and a half times its fair share of right answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clawbook.course.chapters import Curriculum

MIN_OPTIONS = 3
"""The fewest options a question may offer."""

JUDGED_SHARE = 2.0
"""A position whose fair share of right answers is smaller is too rare to judge (a part with
few questions, a fifth option)."""

OPTION = re.compile(r"^[-*] \[(?P<mark>.?)\] ")
"""An option line, as mkdocs-quiz matches it (at the start of the line)."""

FEEDBACK = re.compile(r"^\s*>")
"""A feedback line that mkdocs-quiz attaches to the option just above it."""

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True)
class QuizQuestion:
    """One quiz question as the plugin draws it."""

    page: str
    """The page's path under the book, e.g. ``ch19-terminal-app.md``."""
    line: int
    """The line of its ``<quiz>`` tag (1-based)."""
    options: int
    """How many options the plugin shows."""
    right: tuple[int, ...]
    """The positions (1-based) of the options marked right."""
    wrapped: tuple[int, ...] = ()
    """Lines (1-based) that continue an option: the plugin shows them, and any option after
    them, as explanation text."""


def questions(page: str, text: str) -> list[QuizQuestion]:
    """The quiz questions of one page, outside code blocks, in page order."""
    found: list[QuizQuestion] = []
    lines = text.splitlines()
    fence: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = FENCE.match(line)
        if fence is not None:
            if opening and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        elif opening:
            fence = opening.group(1)
        elif line.strip().startswith("<quiz>"):
            end = index
            while end < len(lines) and "</quiz>" not in lines[end]:
                end += 1
            found.append(_question(page, index + 1, lines[index + 1 : end]))
            index = end
        index += 1
    return found


def _question(page: str, line: int, body: list[str]) -> QuizQuestion:
    """Read one block's lines as mkdocs-quiz does: the options end at the first other line."""
    first = next((i for i, text in enumerate(body) if OPTION.match(text)), len(body))
    options = 0
    right: list[int] = []
    wrapped: list[int] = []
    previous_is_option = False
    reading = True
    for offset, text in enumerate(body[first:], start=first):
        option = OPTION.match(text)
        if option and reading:
            options += 1
            if option.group("mark").lower() == "x":
                right.append(options)
        elif not option and previous_is_option and text.strip() and not FEEDBACK.match(text):
            # The plugin ends the options here: this line, and any option after it, is drawn
            # as explanation.
            wrapped.append(line + 1 + offset)
            reading = False
        elif text.strip() and not FEEDBACK.match(text):
            reading = False
        previous_is_option = bool(option) or (previous_is_option and bool(FEEDBACK.match(text)))
    return QuizQuestion(page, line, options, tuple(right), tuple(wrapped))


def book_questions(book: Path, curriculum: Curriculum) -> dict[int, list[QuizQuestion]]:
    """Every question of the book's written chapters, by part number, in book order."""
    by_part: dict[int, list[QuizQuestion]] = {}
    for chapter in curriculum.chapters:
        if chapter.page is None or not (book / chapter.page).is_file():
            continue
        text = (book / chapter.page).read_text(encoding="utf-8")
        by_part.setdefault(chapter.part, []).extend(questions(chapter.page, text))
    return by_part


def fair_shares(found: list[QuizQuestion]) -> dict[int, float]:
    """Each position's fair share of the right answers of these questions (see the module)."""
    shares: dict[int, float] = {}
    for question in found:
        for position in range(1, question.options + 1):
            shares[position] = shares.get(position, 0.0) + len(question.right) / question.options
    return shares


def imbalance(found: list[QuizQuestion]) -> list[str]:
    """Positions holding less than half or more than one and a half times their fair share."""
    held: dict[int, int] = {}
    for question in found:
        for position in question.right:
            held[position] = held.get(position, 0) + 1
    faults = []
    for position, share in sorted(fair_shares(found).items()):
        count = held.get(position, 0)
        if share >= JUDGED_SHARE and not share / 2 <= count <= share * 3 / 2:
            faults.append(
                f"option {position} is the right answer {count} times; its fair share is "
                f"{_number(share)} (allowed {_number(share / 2)} to {_number(share * 3 / 2)})"
            )
    return faults


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def problems(book: Path, curriculum: Curriculum) -> list[str]:
    """Everything wrong with the book's quizzes, one line each, naming page and line."""
    by_part = book_questions(book, curriculum)
    found: list[str] = []
    every: list[QuizQuestion] = []
    for part in sorted(by_part):
        for question in by_part[part]:
            where = f"book/{question.page}:{question.line}"
            for line in question.wrapped:
                found.append(
                    f"book/{question.page}:{line}: a quiz option goes on onto this line; "
                    "mkdocs-quiz reads an option from its one line and shows the rest as "
                    "explanation: put the option on one line"
                )
            if question.options < MIN_OPTIONS:
                found.append(
                    f"{where}: the question offers {question.options} option(s); "
                    f"give it at least {MIN_OPTIONS}"
                )
            if not question.right:
                found.append(f"{where}: no option is marked right (`- [x]`)")
        every.extend(by_part[part])
        title = curriculum.part(part).title
        found += [f'part {part} ("{title}"): {fault}' for fault in imbalance(by_part[part])]
    found += [f"the whole book: {fault}" for fault in imbalance(every)]
    return found
