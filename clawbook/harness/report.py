"""The results file: what the pytest plugin writes as a run goes on and ``clawbook`` reads back.

The file is JSON Lines, one event per line, each written and flushed the moment it happens, so a
run that crashes or hangs still leaves behind everything up to that moment: which tests passed,
which one was running when it stopped, and whether the run ever finished. A report without its
``finished`` line is never taken for a complete one.

Events, by their ``event`` key:

* ``configured``: pytest has started and is about to import the implementation;
* ``imported``: the implementation was imported (or found broken);
* ``worker``: a pytest-xdist worker has started and is about to import it (``id``);
* ``problem``: a module of the implementation cannot be imported (``Problem``);
* ``collecting``: a test module is being imported (a sign of life while collection goes on);
* ``collected``: the ids of the tests the run selected, and the limits of those marked
  ``timeout(N)`` (with pytest-xdist, each worker says the limits in a ``limits`` event);
* ``start``: a test began (its ``nodeid``);
* ``result``: a test ended (``TestResult``); one with ``final`` false is said early, when a
  test has failed but its teardown is still to come;
* ``finished``: the session ended normally (pytest's exit status), and ``cut_short``: why it
  ended before every selected test ran, when it did (a test that seemed to loop forever).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

REPORT_ENV = "CLAWBOOK_REPORT"
"""Names the results file; the plugin writes one only when it is set."""
STACKS_SUFFIX = ".stacks"
"""Beside the results file: where every thread's stack is dumped on SIGUSR1 (a hung run)."""


class Outcome(StrEnum):
    """How a test ended, or why a run stopped in the middle of one: one word for each.

    The results file, the learner's tools and the gradebook write the member's value, so a
    script reading any of them reads these words.
    """

    PASSED = "passed"
    """The test ran to its end and every check in it held."""
    FAILED = "failed"
    """A check of the test did not hold, or your code raised an error it did not expect."""
    TODO = "todo"
    """The test reached a stub: the code it needs is not written yet."""
    SKIPPED = "skipped"
    """The test did not run here (a platform or tool it needs is missing), or was expected to
    fail."""
    ERROR = "error"
    """The test file could not be imported (often a module of yours that does not import), or
    pytest could not start at all."""
    HUNG = "hung"
    """The test seemed to loop forever: it ran past the per-test limit and was stopped."""
    CRASHED = "crashed"
    """The test process died while the test ran (a segfault, a kill)."""
    TIMEOUT = "timeout"
    """The whole run ran out of its wall time (the grader's ``--wall-time``) during the test."""


PROBLEMS = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.HUNG, Outcome.CRASHED})
"""The outcomes that tell a learner something is wrong with their code."""


class ReportError(ValueError):
    """A results file (or a cached copy of one) that says something ``clawbook`` cannot read."""


@dataclass(frozen=True)
class Location:
    """A line of code: where something happened."""

    path: str
    """Relative to the repository (``starter/mock.py``, ``tests/test_mock_provider.py``)."""
    line: int
    source: str = ""
    """The line's code, stripped, when it could be read."""
    function: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class TestResult:
    """The outcome of one test: what the plugin writes and ``clawbook`` reads back."""

    __test__ = False  # not a test class, despite its name

    nodeid: str
    file: str
    chapter: str | None
    outcome: Outcome
    """How it ended; written to the results file as the member's value (``passed``...)."""
    todo_chapter: str | None = None
    hint: str | None = None
    message: str | None = None
    line: int | None = None
    """The line of the test file where it failed (or the test's own line)."""
    where: Location | None = None
    """The learner's line: where the error was raised in the implementation, or the stub."""
    called_from: Location | None = None
    """The test's line that led there."""
    test_line: Location | None = None
    """The test function's own line, when ``called_from`` is a helper the test called."""
    reached: list[str] | None = None
    """The chapters whose stubs the test reached, caught or not, in any process it started
    (``claw.todo.note_reached``); ``None`` where the run did not record them."""

    @property
    def name(self) -> str:
        """The test function's name (with parameters), or the file for a collection error."""
        return self.nodeid.split("::")[-1]

    @property
    def is_problem(self) -> bool:
        """True for every outcome that means something is wrong."""
        return self.outcome in PROBLEMS

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestResult:
        """Read back what ``asdict`` wrote; a ``ReportError`` for an outcome with no member."""
        fields = dict(data)
        if fields.get("outcome") not in tuple(Outcome):
            raise ReportError(
                f"unknown test outcome {fields.get('outcome')!r} for {fields.get('nodeid')}: "
                f"expected one of {', '.join(Outcome)}"
            )
        fields["outcome"] = Outcome(fields["outcome"])
        for key in ("where", "called_from", "test_line"):
            if fields.get(key):
                fields[key] = Location(**fields[key])
        return cls(**fields)


@dataclass(frozen=True)
class Problem:
    """A module of the implementation that cannot be imported, and why."""

    where: Location
    message: str
    """``SyntaxError: expected ':'``: the exception, one line."""
    module: str = ""
    caret: int | None = None
    """For a syntax error, the 1-based column the parser points at."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        """Read back what ``asdict`` wrote."""
        return cls(**{**data, "where": Location(**data["where"])})


class ReportWriter:
    """Appends events to the results file, flushing each one."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def write(self, event: str, **data: Any) -> None:
        """Write one event and flush it to disk."""
        self._file.write(json.dumps({"event": event, **data}) + "\n")
        self._file.flush()

    def result(self, result: TestResult, *, final: bool = True) -> None:
        """Write a test's result; ``final=False`` while the test is still being torn down."""
        self.write("result", final=final, **asdict(result))

    def problem(self, problem: Problem) -> None:
        """Write an import problem."""
        self.write("problem", **asdict(problem))

    def close(self) -> None:
        """Close the file."""
        self._file.close()


@dataclass
class Report:
    """Everything a results file says, read so far."""

    results: dict[str, TestResult] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    collected: tuple[str, ...] | None = None
    started: list[str] = field(default_factory=list)
    """The tests that started and have no final result yet, oldest first (with pytest-xdist,
    several run at once)."""
    finished: bool = False
    exitstatus: int | None = None
    cut_short: str | None = None
    """Why pytest ended before running every selected test, when it said why."""
    limits: dict[str, float] = field(default_factory=dict)
    """Tests marked ``timeout(N)``, with their own limit in seconds."""
    imported: bool = False
    """Whether importing the implementation came to an end (well or not)."""
    workers: int = 0
    """How many pytest-xdist workers have started (each says so before it imports anything)."""

    @property
    def running(self) -> str | None:
        """The test running longest, if any: the one a run that went quiet is stuck in."""
        return self.started[0] if self.started else None

    def add(self, event: dict[str, Any]) -> None:
        """Take one event into account."""
        kind = event.pop("event", None)
        if kind == "result":
            final = event.pop("final", True)
            result = TestResult.from_json(event)
            self.results[result.nodeid] = result
            if final and result.nodeid in self.started:
                self.started.remove(result.nodeid)
        elif kind == "start":
            self.started.append(event["nodeid"])
        elif kind == "problem":
            problem = Problem.from_json(event)
            if problem not in self.problems:
                self.problems.append(problem)
        elif kind == "collected":
            self.collected = tuple(event["nodeids"])
            self.limits.update(event.get("limits", {}))
        elif kind == "limits":
            self.limits.update(event["limits"])
        elif kind == "imported":
            self.imported = True
        elif kind == "worker":
            self.workers += 1
        elif kind == "finished":
            self.finished = True
            self.exitstatus = event.get("exitstatus")
            self.cut_short = event.get("cut_short")


class ReportReader:
    """Reads a results file while it is being written, a whole line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.report = Report()
        self._offset = 0
        self._partial = b""

    def poll(self) -> bool:
        """Read what was added since the last call; True if anything was."""
        try:
            with self.path.open("rb") as file:
                file.seek(self._offset)
                chunk = file.read()
        except FileNotFoundError:
            return False
        if not chunk:
            return False
        self._offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            if line.strip():
                self.report.add(json.loads(line))
        return bool(lines)


DIFF_LINE = re.compile(r"^\s*[-+] ", re.MULTILINE)
DIFF_LEGEND = "  (a diff: lines with - are expected, lines with + are yours)"


def label_diff(message: str) -> str:
    """``message`` with a legend after its first line when it holds pytest's ``==`` diff.

    pytest marks the right-hand side of ``assert yours == expected`` with ``-`` and the
    left-hand side with ``+``, which reads backwards to most learners; the suite writes the
    learner's value on the left.
    """
    first, _, rest = message.partition("\n")
    if " == " not in first or not DIFF_LINE.search(rest):
        return message
    return f"{first}\n{DIFF_LEGEND}\n{rest}"
