"""The gradebook's rows: what ``clawbook grade`` says about one submission.

A ``Grade`` per submission, a ``ChapterScore`` per chapter in it, a ``Failure`` per test that
did not pass. The grader (``instructor.grade``) makes them; the gradebook writers
(``instructor.gradebook``) and the report (``instructor.gradereport``) read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from clawbook.harness.report import Outcome


class RowStatus(StrEnum):
    """A row's ``status``: how grading the submission went (``grade._status`` picks the worst).

    The gradebook (CSV and JSON) and the report write the member's value, so a script reading
    them reads these words.
    """

    OK = "ok"
    """The run finished; tests may still fail."""
    HUNG = "hung"
    """A test, or the import of the package, seemed to loop forever: stopped after the
    per-test time."""
    TIMEOUT = "timeout"
    """The whole run hit its wall time."""
    CRASHED = "crashed"
    """The test process died: a segfault, a kill."""
    CANNOT_IMPORT = "cannot-import"
    """A module of the submission cannot be imported: a syntax or import error."""
    ERROR = "error"
    """The tests could not start."""
    INVALID = "invalid"
    """The submission could not be read: no ``starter/`` package, an unsafe or broken
    archive."""


@dataclass(frozen=True)
class Failure:
    """A test that did not pass, as the learner would be told."""

    test: str
    """The test's id (``tests/test_mock_provider.py::test_mock_...``), or a test file that
    could not be imported."""
    chapter: str | None
    outcome: Outcome
    """``FAILED``, ``HUNG``, ``CRASHED``, ``TIMEOUT`` or ``ERROR`` (the file did not import)."""
    message: str
    """The learner-facing message (the exception, one or a few lines)."""
    where: str | None = None
    """The learner's file and line (``starter/mock.py:42``), when known."""
    cause: str | None = None
    """Set when the test never reached its own chapter's code because a module of the package
    does not import: that one cause (``cannot import starter/mock.py (line 53)``)."""


@dataclass(frozen=True)
class ChapterScore:
    """One chapter's tests for one submission."""

    chapter: str
    passed: int
    total: int
    todo: int
    failing: int
    stubs: bool = True
    """Whether the chapter has stubs: a reading chapter's tests pass before anyone writes code."""
    blocked: int = 0
    """Of ``failing``, the tests stopped by a module of the package that does not import (the
    row's one cause), not by a mistake of their own chapter."""

    @property
    def complete(self) -> bool:
        """True when every test of the chapter passes."""
        return self.total > 0 and self.passed == self.total


@dataclass
class Grade:
    """One submission's row of the gradebook."""

    submission: str
    status: RowStatus
    detail: str = ""
    """Why the status is not ``ok``, or what else went wrong (tests that did not run)."""
    chapters: list[ChapterScore] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    stuck_in: str | None = None
    """For a row that is not ``ok`` but ran: the chapter its problem is in (the chapter of the
    file that does not import, of the test that looped or crashed)."""
    cause: str = ""
    """For such a row: its problem in one line (``cannot import starter/mock.py (line 53)``)."""

    @property
    def passed(self) -> int:
        """Tests passed over all graded chapters."""
        return sum(c.passed for c in self.chapters)

    @property
    def total(self) -> int:
        """Tests over all graded chapters (the reference's count)."""
        return sum(c.total for c in self.chapters)

    @property
    def todo(self) -> int:
        """Tests still waiting for a stub."""
        return sum(c.todo for c in self.chapters)

    @property
    def failing(self) -> int:
        """Tests that failed, looped, crashed or could not be imported."""
        return sum(c.failing for c in self.chapters)

    @property
    def completed(self) -> list[str]:
        """The chapters whose every test passes; a reading chapter only once the learner started.

        A reading chapter's tests pass on the untouched starter, so they count for nothing
        until ``started``.
        """
        started = self.started
        return [c.chapter for c in self.chapters if c.complete and (c.stubs or started)]

    @property
    def started(self) -> bool:
        """True once a test of a chapter with stubs passes, or any test fails.

        A learner who changed nothing has only todo there (and a reading chapter's tests, which
        pass on the untouched starter, say nothing about them).
        """
        return any(c.failing or (c.passed and c.stubs) for c in self.chapters)

    @property
    def stuck_at(self) -> str | None:
        """The first chapter, in the course's order, that is not complete (None when all are)."""
        return next((c.chapter for c in self.chapters if not c.complete), None)

    @property
    def standing(self) -> str:
        """One line for an instructor: where this learner is, and what holds them there."""
        if self.status != RowStatus.OK:
            if self.stuck_in is not None:
                return f"stuck at {self.stuck_in}: {self.cause or self.status}"
            return f"{self.status}: {self.detail}" if self.detail else self.status
        if not self.started:
            return "not started: every test still waits for a stub"
        chapter = self.stuck_at
        if chapter is None:
            return "done: every chapter passes"
        score = next(c for c in self.chapters if c.chapter == chapter)
        first = next((f for f in self.failures if f.chapter == chapter), None)
        if first is not None:
            where = f" at {first.where}" if first.where else ""
            name = first.test.split("::")[-1]
            return f"stuck at {chapter}: {score.failing} failing (first: {name}{where})"
        return f"working on {chapter}: {score.passed}/{score.total}, {score.todo} todo"

    def to_json(self) -> dict[str, Any]:
        """The row as ``gradebook.json`` holds it."""
        return {
            "submission": self.submission,
            "status": self.status,
            "detail": self.detail,
            "passed": self.passed,
            "total": self.total,
            "todo": self.todo,
            "failing": self.failing,
            "seconds": round(self.seconds, 2),
            "completed": self.completed,
            "standing": self.standing,
            "chapters": {
                c.chapter: {k: v for k, v in asdict(c).items() if k not in ("chapter", "stubs")}
                for c in self.chapters
            },
            "failures": [asdict(f) for f in self.failures],
        }
