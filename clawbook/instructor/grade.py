"""``clawbook grade``: run the instructor's tests against a whole class's submissions.

Each submission (a directory holding a learner's ``starter/`` package, or a ``.zip`` /
``.tar.gz`` of one) is graded in a scratch directory of its own::

    scratch/
      unpacked/       the archive, extracted (archives only; checked member by member first)
      work/
        pyproject.toml   the instructor's (pytest's settings, the Clawbook plugin)
        tests/           the instructor's tests, never the submission's
        starter/         the course's current starter, with the submission's files on top
      home/ tmp/      HOME and TMPDIR of the test process
      runs/           each run's results file and output

The test process runs in a bubblewrap sandbox of its own where ``bwrap`` can run (its own
mount, PID and network namespaces: only the scratch folder writable, the instructor's checkout
and the other submissions absent, every process ended with the run; ``instructor.sandbox``), and
in any case under ``instructor.sandbox``'s limits (address space, no core files, file size), with
a scrubbed environment (no API keys, tokens, secrets or proxies) and the plugin's network
guard; the runner's watchdog stops a test that loops, and a wall-time limit stops a run that
takes too long. A run that stops early (a loop, a crash) is
resumed with the tests that did not run yet, so one endless loop costs a learner that test, not
every test after it.

Every submission ends as a ``Grade``, whatever happened: a submission that cannot even be read
is a row whose ``status`` says why, never a crash of the grader. The totals come from the
reference (the instructor's tests run against ``solution/``, minus those it skips), so every
learner is graded against the same denominator, even when their code cannot be imported.

What this does not defend against: code written to tamper with the test process it runs in (it
runs in that process, and can rewrite its own results); and, where bubblewrap cannot run, code
that reaches out of its run (see ``book/appendix-grading.md``).

This module runs the tests and scores them. Reading a submission is ``instructor.intake``'s
job; what the class is graded against (chapters, limits, the reference run),
``instructor.reference``'s; the rows are ``instructor.rows``; writing the gradebook and the
report, ``instructor.gradebook`` and ``instructor.gradereport``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import CHAPTERS_ENV
from clawbook.harness.report import Location, Outcome, Problem, Report, TestResult
from clawbook.harness.runner import Run, chapter_test_files, run_pytest
from clawbook.instructor import sandbox
from clawbook.instructor.intake import (
    ARCHIVE_SUFFIXES,
    InvalidSubmission,
    Submission,
    copy_package,
    extract,
    find_starter,
)
from clawbook.instructor.reference import (
    Course,
    chapters_variable,
    compile_quietly,
    copy_repository,
)
from clawbook.instructor.rows import ChapterScore, Failure, Grade, RowStatus

MAX_RESUMES = 20
"""How many times a run that stopped early is resumed with the tests still to run."""
PROBLEM_OUTCOMES = frozenset(
    {Outcome.FAILED, Outcome.ERROR, Outcome.HUNG, Outcome.CRASHED, Outcome.TIMEOUT}
)
"""The outcomes that count as failing in a row (a whole run's ``TIMEOUT`` among them)."""


# ---------------------------------------------------------------- grading one submission


class Cancelled(Exception):
    """The grading was interrupted (Ctrl-C): this submission has no row."""


def grade_submission(
    course: Course,
    submission: Submission,
    cancel: threading.Event | None = None,
    on_progress: Callable[[Report], None] | None = None,
) -> Grade:
    """Grade one submission in a scratch directory of its own; always returns a row.

    Raises only ``Cancelled``, when ``cancel`` is set while it runs.
    """
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="clawbook-grade-"))
    try:
        try:
            work = _set_up(course, submission, scratch)
        except InvalidSubmission as error:
            grade = _empty(course, submission.name, RowStatus.INVALID, str(error))
        else:
            grade = _run(course, submission, work, scratch, started, cancel, on_progress)
    finally:
        _remove(scratch)
    grade.seconds = time.monotonic() - started
    return grade


def _remove(scratch: Path) -> None:
    """Delete a scratch directory, even one whose tests took their own permissions away."""
    for folder, _dirs, _files in os.walk(scratch):
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
    shutil.rmtree(scratch, ignore_errors=True)


def _set_up(course: Course, submission: Submission, scratch: Path) -> Path:
    """Lay out the scratch directory; returns the work folder the tests run in."""
    path = submission.path
    if path.is_dir():
        source = path
    elif path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES):
        source = scratch / "unpacked"
        extract(path, source)
    elif path.exists():
        raise InvalidSubmission("neither a folder nor a .zip / .tar.gz archive")
    else:
        raise InvalidSubmission("no such file or folder")
    package = find_starter(source)
    work = copy_repository(scratch / "work", ("pyproject.toml", "tests"), course.root)
    compile_quietly(work / "tests")  # read-only in the sandbox: its helpers' bytecode, now
    for name, content in course.tables.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(content)
    stubgen.write_tree(course.starter, work / "starter")
    try:
        copy_package(package, work / "starter")
    except OSError as error:
        raise InvalidSubmission(f"cannot copy its starter/: {error}") from None
    for name in ("home", "tmp"):
        (scratch / name).mkdir()
    return work


def _run(
    course: Course,
    submission: Submission,
    work: Path,
    scratch: Path,
    started: float,
    cancel: threading.Event | None,
    on_progress: Callable[[Report], None] | None,
) -> Grade:
    """Run the tests, resuming after an early stop, and score what they said."""
    limits = course.limits
    env = sandbox.scrubbed_environment(scratch / "home", scratch / "tmp")
    wrapper = [
        *_bwrap(course, scratch, work),
        *sandbox.command(memory=limits.memory, file_size=limits.file_size),
    ]
    runs_folder = scratch / "runs"
    runs_folder.mkdir(exist_ok=True)
    wanted = {nodeid for ids in course.expected.values() for nodeid in ids}
    results: dict[str, TestResult] = {}
    runs: list[Run] = []
    args = [f for c in course.chapters for f in chapter_test_files(c, work, course.curriculum)]

    def watch(report: Report, elapsed: float) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        if on_progress is not None:
            on_progress(report)

    for _attempt in range(MAX_RESUMES + 1):
        left = limits.wall_time - (time.monotonic() - started)
        if left <= 0:
            break
        run = run_pytest(
            args,
            implementation="starter",
            impl_path=work,
            root=work,
            base_env=env,
            extra_env=chapters_variable(),
            timeout=limits.test_timeout,
            watch=watch,
            wrapper=wrapper,
            wall_time=left,
            scratch=runs_folder,
            nested=course.isolation.program is not None,
        )
        runs.append(run)
        results.update({r.nodeid: r for r in run.results})
        stop = run.stopped
        if stop is not None and stop.reason in (Outcome.ERROR, Outcome.TIMEOUT):
            break
        if run.problems:
            break  # a module that cannot be imported stays that way
        # Resume with the tests no run has reached yet, if this one broke off.
        broken = (Outcome.HUNG, Outcome.CRASHED)
        broke = stop is not None or any(r.outcome in broken for r in run.results)
        missing = [n for n in sorted(wanted) if n not in results and not _file_failed(n, results)]
        if not broke or not missing or run.collected is None:
            break
        args = missing
    return _score(course, submission.name, runs, results)


def _bwrap(course: Course, scratch: Path, work: Path) -> list[str]:
    """The bubblewrap words for one submission: empty where bubblewrap cannot run.

    Read-only: the interpreter, the virtualenv, the ``clawbook`` package (the plugin) and the
    chapters file if ``CLAWBOOK_CHAPTERS`` names one. Writable: the scratch folder only, with
    the instructor's tests and ``pyproject.toml`` in it read-only again. Nothing else of the
    instructor's checkout (``solution/`` above all) exists inside.
    """
    program = course.isolation.program
    if program is None:
        return []
    here = Path(__file__).resolve().parent.parent
    readonly = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent]
    readonly += [here, here.parent / "claw"]  # clawbook, and the ``import claw`` alias
    chapters = os.environ.get(CHAPTERS_ENV)
    if chapters:
        readonly.append(Path(chapters).resolve())
    readonly = [p for p in dict.fromkeys(readonly) if p.exists()]
    return sandbox.bwrap_command(
        program,
        readonly=readonly,
        writable=[scratch.resolve()],
        readonly_inside=[work.resolve() / "tests", work.resolve() / "pyproject.toml"],
        cwd=work.resolve(),
    )


def _file_failed(nodeid: str, results: dict[str, TestResult]) -> bool:
    file = nodeid.split("::")[0]
    failed = results.get(file)
    return failed is not None and failed.outcome == Outcome.ERROR


def _empty(course: Course, name: str, status: RowStatus, detail: str) -> Grade:
    chapters = [
        ChapterScore(c.id, 0, len(course.expected.get(c.id, ())), 0, 0, c.has_stubs)
        for c in course.chapters
    ]
    return Grade(name, status, detail, chapters)


def _where(result: TestResult) -> str | None:
    return str(result.where) if result.where is not None else None


def _score(course: Course, name: str, runs: list[Run], results: dict[str, TestResult]) -> Grade:
    """The row: per chapter counts against the reference's tests, the status, the failures.

    A module that does not import stops every test that imports it, whatever chapter it is in:
    those tests count as failing, but as ``blocked`` by that one cause, which the row names
    once (``stuck_in``, ``cause``) instead of once per test.
    """
    causes = [(_import_cause(p), p.message) for run in runs for p in run.problems]
    cause = causes[0][0] if causes else None

    def stopped_by(result: TestResult) -> str | None:
        """The module that does not import and stopped ``result``, if one did."""
        first = (result.message or "").strip()
        for named, message in causes:
            if first.startswith(named) or (message and first.startswith(message)):
                return named
        return cause if result.outcome == Outcome.ERROR else None

    chapters: list[ChapterScore] = []
    failures: list[Failure] = []
    not_run = 0
    for chapter in course.chapters:
        passed = todo = failing = blocked = 0
        for nodeid in course.expected.get(chapter.id, []):
            result = results.get(nodeid)
            file_error = results.get(nodeid.split("::")[0])
            if result is None and file_error is not None and file_error.outcome == Outcome.ERROR:
                failing += 1
                blocked += cause is not None
            elif result is None:
                not_run += 1
            elif result.outcome == Outcome.PASSED:
                passed += 1
            elif result.outcome == Outcome.TODO:
                todo += 1
            elif result.outcome in PROBLEM_OUTCOMES:
                failing += 1
                stopped = stopped_by(result)
                blocked += stopped is not None
                message = result.message or ""
                failures.append(
                    Failure(nodeid, chapter.id, result.outcome, message, _where(result), stopped)
                )
        total = len(course.expected.get(chapter.id, []))
        chapters.append(
            ChapterScore(chapter.id, passed, total, todo, failing, chapter.has_stubs, blocked)
        )
    for result in results.values():
        if result.outcome == Outcome.ERROR:
            message = result.message or ""
            failures.append(
                Failure(
                    result.nodeid, result.chapter, Outcome.ERROR, message, _where(result),
                    stopped_by(result),
                )
            )  # fmt: skip
    status, detail, where, test = _status(runs)
    if not_run:
        detail = "; ".join(filter(None, [detail, f"{not_run} test(s) did not run"]))
    row = Grade(name, status, detail, chapters, failures)
    if status not in (RowStatus.OK, RowStatus.ERROR):
        row.stuck_in = _stuck_in(course, row, where, test)
        row.cause = cause if status == RowStatus.CANNOT_IMPORT and cause else f"{status}: {detail}"
    return row


def _import_cause(problem: Problem) -> str:
    """``cannot import starter/mock.py (line 53)``: the one line that names a broken module."""
    where = problem.where
    return f"cannot import {where.path}" + (f" (line {where.line})" if where.line else "")


def _stuck_in(course: Course, row: Grade, path: str | None, test: str | None) -> str | None:
    """The chapter a row's problem is in.

    The chapter of the learner's file it points at, else the stopped test's, else the first
    chapter with a failing test, else the first that is not complete.
    """
    if path is not None:
        name = path.removeprefix("starter/")
        owner = next((c.id for c in course.chapters if name in c.files), None)
        if owner is not None:
            return owner
    if test is not None:
        owner = next((c for c, ids in course.expected.items() if test in ids), None)
        if owner is not None:
            return owner
    failing = next((c.chapter for c in row.chapters if c.failing), None)
    return failing or row.stuck_at


def _status(runs: list[Run]) -> tuple[RowStatus, str, str | None, str | None]:
    """The row's status from every run of the submission, worst first.

    With its detail, the learner's file it points at and the test it stopped in (either may
    be None).
    """
    problems = [p for run in runs for p in run.problems]
    stops = [run.stopped for run in runs if run.stopped is not None]
    results = [r for run in runs for r in run.results]
    if any(s.reason == Outcome.ERROR for s in stops):
        detail = next(s.detail for s in stops if s.reason == Outcome.ERROR)
        return RowStatus.ERROR, detail, None, None
    if problems:
        first = problems[0]
        where = first.where if first.where.line else first.where.path
        detail = f"cannot import {where}: {first.message}"
        return RowStatus.CANNOT_IMPORT, detail, first.where.path, None
    crashed = [s for s in stops if s.reason == Outcome.CRASHED]
    if crashed:
        stop = crashed[0]
        where = f" at {stop.where}" if stop.where else ""
        return RowStatus.CRASHED, stop.detail + where, _path(stop.where), stop.test
    timed_out = [s for s in stops if s.reason == Outcome.TIMEOUT]
    if timed_out:
        return RowStatus.TIMEOUT, timed_out[0].detail, None, timed_out[0].test
    stuck = [s for s in stops if s.reason == Outcome.HUNG and s.test is None]
    if stuck:  # before any test started: importing the submission never finished
        where = f" at {stuck[0].where}" if stuck[0].where else ""
        return RowStatus.HUNG, stuck[0].detail + where, _path(stuck[0].where), None
    hung = [r for r in results if r.outcome == Outcome.HUNG]
    if hung:
        where = f" at {hung[0].where}" if hung[0].where else ""
        detail = f"{hung[0].name}: {hung[0].message}{where}"
        return RowStatus.HUNG, detail, _path(hung[0].where), hung[0].nodeid
    return RowStatus.OK, "", None, None


def _path(where: Location | None) -> str | None:
    return where.path if where is not None else None


# ---------------------------------------------------------------- grading a class


def grade_class(
    course: Course,
    work: Sequence[Submission],
    workers: int,
    on_done: Callable[[Grade], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[Grade]:
    """Grade every submission, ``workers`` at a time; the rows in submission order.

    Setting ``cancel`` (the command does on Ctrl-C) stops the runs in progress and skips the
    ones not started; the rows of the submissions that finished are returned.
    """
    cancel = cancel or threading.Event()
    grades: dict[str, Grade] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="grade") as pool:
        futures = {pool.submit(_guarded, course, s, cancel): s for s in work}
        try:
            for future in as_completed(futures):
                grade = future.result()
                if grade is not None:
                    grades[grade.submission] = grade
                    if on_done is not None:
                        on_done(grade)
        except BaseException:
            cancel.set()
            for future in futures:
                future.cancel()
            raise
    return [grades[s.name] for s in work if s.name in grades]


def _guarded(course: Course, submission: Submission, cancel: threading.Event) -> Grade | None:
    """One submission; None if cancelled. Anything unexpected becomes an ``error`` row."""
    if cancel.is_set():
        return None
    started = time.monotonic()
    try:
        return grade_submission(course, submission, cancel)
    except Cancelled:
        return None
    except Exception as error:  # a row that says so, never a crash of the whole class
        grade = _empty(course, submission.name, RowStatus.ERROR, f"{type(error).__name__}: {error}")
        grade.seconds = time.monotonic() - started
        return grade
