"""The pytest plugin behind Clawbook's one shared test suite.

It does five things:

* imports the implementation chosen by ``CLAW_IMPL`` as ``claw`` and names it in the header; a
  package that cannot be imported is reported once, as the file and line that broke it;
* reports a test that ends in a stub's ``Todo`` as *todo*, in one line (the chapter, the stub's
  file and line, the hint), so a run with only passing and todo tests exits 0 while a real
  failure stays a failure;
* points every failure at the learner's own line, and reports a test stopped by the time limit
  as one that seems to loop forever, with where it was;
* refuses, loudly, any connection to an address outside the loopback range (``netguard``), and
  fails the test for one made in its setup, its call or its teardown;
* writes every event to a results file when ``CLAWBOOK_REPORT`` names one (``report``).

Speed matters here: a learner runs the suite a hundred times, and most of its tests end in a
stub. A todo is therefore reported without pytest's traceback formatting, and a property test
that reaches a stub stops at once instead of letting Hypothesis shrink a ``Todo``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import gc
import importlib
import inspect
import os
import re
import signal
import sys
import warnings
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

import pytest

from clawbook.course.chapters import CurriculumError
from clawbook.course.chapters import load as load_curriculum
from clawbook.harness import frames, impl
from clawbook.harness.netguard import NetworkBlocked, guard
from clawbook.harness.report import (
    REPORT_ENV,
    STACKS_SUFFIX,
    Location,
    Outcome,
    Problem,
    ReportWriter,
    TestResult,
    label_diff,
)

__all__ = ["REPORT_ENV", "TODO_KEY", "NetworkBlocked", "TestResult", "find_todo"]

TODO_KEY = "clawbook_todo"
REACHED_KEY = "clawbook_reached"
"""Where a test's report carries the chapters whose stubs it reached (``TestResult.reached``)."""
REACHED_ENV = "CLAWBOOK_STUBS_REACHED"
"""The file each ``Todo`` notes its chapter in (``claw.todo.REACHED_ENV``, the same name)."""
FAILURE_KEY = "clawbook_failure"
"""Where a failed test's report carries what the plugin found (``_Failure``): with
pytest-xdist the test runs in a worker, and its report, user properties and all, is what
reaches the process that writes the results file."""
TIMEOUT_MESSAGE = re.compile(r"^Timeout \(>(?P<seconds>[\d.]+)s\) from pytest-timeout")


@dataclass(frozen=True)
class _Failure:
    """What the plugin makes of a failed test: how it ended, where, and what to say."""

    outcome: Outcome
    """``FAILED``, or ``HUNG`` for a test stopped by the time limit."""
    where: Location | None
    called_from: Location | None
    message: str
    test_line: Location | None = None
    """The test function's own line, when ``called_from`` is in a helper it called."""


@dataclass
class _Session:
    """What the plugin knows about the run in progress."""

    package: str = ""
    package_dir: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    writer: ReportWriter | None = None
    """Writes the results file: in the one process that sees every test's report (pytest's
    own, or pytest-xdist's controller)."""
    heartbeat: ReportWriter | None = None
    """A pytest-xdist worker's line to the results file, for signs of life only."""
    stacks: IO[str] | None = None
    problems: list[Problem] = field(default_factory=list)
    diagnosed: bool = False
    collected_said: bool = False
    interrupted: str | None = None
    """What ended the session early (pytest-xdist passes a worker's stop on this way)."""
    results: dict[str, TestResult] = field(default_factory=dict)
    reached: Path | None = None
    """This process's file of the chapters whose stubs the running test reached."""
    unawaited: list[tuple[str, tuple[tuple[str, int, str], ...]]] = field(default_factory=list)
    """The coroutines the running test made and dropped unawaited: name, where made."""
    chapters: dict[str, str | None] = field(default_factory=dict)
    """The chapter of each test file seen so far (``_chapter_of``)."""


_session = _Session()

CATALOGUE = Path(__file__).resolve().parents[1] / "starter-stubs.json"
"""The course's catalogue of stubs: which functions of the implementation each chapter writes."""


# ---------------------------------------------------------------- the implementation under test


def pytest_configure(config: pytest.Config) -> None:
    """Select the implementation before any test module imports ``claw``."""
    global _session
    try:
        load_curriculum()
        name = impl.selected()
    except (CurriculumError, impl.ImplementationError) as error:
        raise pytest.UsageError(str(error)) from error
    _session = _Session(package=name, root=config.rootpath)
    target = os.environ.get(REPORT_ENV)
    worker = _worker_id(config)
    if target and worker is not None:
        # Collection in a worker is a sign of life; everything else reaches the controller.
        _session.heartbeat = ReportWriter(Path(target))
        _session.heartbeat.write("worker", id=worker)
        stacks = f"{target}{STACKS_SUFFIX}.{worker}"
        _session.stacks = open(stacks, "w", encoding="utf-8")  # noqa: SIM115
    elif target:
        _session.writer = ReportWriter(Path(target))
        _session.writer.write("configured", package=name)
        _session.stacks = open(target + STACKS_SUFFIX, "w", encoding="utf-8")  # noqa: SIM115
    if target:
        _session.reached = Path(f"{target}.reached.{os.getpid()}")
    if _session.stacks is not None:
        # On SIGUSR1 (the runner's watchdog): every thread's stack from C, which works however
        # stuck the interpreter is, then every asyncio task's await chain from Python.
        signal.signal(signal.SIGUSR1, _dump_tasks)
        faulthandler.register(signal.SIGUSR1, file=_session.stacks, all_threads=True, chain=True)
    _watch_unawaited()
    # The guard goes up before the implementation is imported: code that runs at import time
    # (a learner's, or a graded submission's) gets no moment with the network unguarded.
    guard.install()
    try:
        package = impl.use(name)
    except impl.ImplementationError as error:
        _session.package_dir = impl.locate(name)
        config.stash[_PACKAGE] = f"{name} (cannot be imported, see below)"
        if error.__cause__ is not None:
            _add_problem(error.__cause__, name)
    else:
        _session.package_dir = Path(package.__file__ or ".").resolve().parent
        config.stash[_PACKAGE] = impl.describe(package)
        attempts = guard.take_attempts()
        if attempts:  # refused, and swallowed by the code that tried
            tried = ", ".join(attempts)
            blocked = NetworkBlocked(f"importing it tried to reach the network: {tried}")
            _add_problem(blocked, f"{name}.__init__")
    if _session.writer is not None:
        _session.writer.write("imported")


def _worker_id(config: pytest.Config) -> str | None:
    """The pytest-xdist worker's id (``gw0``) when this process is one, else ``None``."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput is not None else None


def _dump_tasks(signum: int, frame: FrameType | None) -> None:
    """Write where each asyncio task waits, as ``faulthandler`` writes frames."""
    stacks = _session.stacks
    if stacks is None:
        return
    for name, chain in frames.task_chains():
        stacks.write(f"\nTask {name} (most recent call first):\n")
        for path, line, function in reversed(chain):
            stacks.write(f'  File "{path}", line {line} in {function}\n')
    stacks.flush()


ORIGIN_DEPTH = 4
"""Frames each coroutine remembers of where it was made (``cr_origin``): the first is the call
that made it, which is where a forgotten ``await`` belongs."""
_warn_unawaited = warnings._warn_unawaited_coroutine  # type: ignore[attr-defined]
_depth_before = sys.get_coroutine_origin_tracking_depth()


def _note_unawaited(coroutine: Any) -> None:
    """Note a coroutine dropped without an ``await`` (and where it was made), then warn as usual.

    CPython calls ``warnings._warn_unawaited_coroutine`` for each such coroutine, whatever
    the warning filters say; the note lets a failure name the line that forgot the ``await``
    even when the failure shows up far away, or in a message the learner's code caught.
    """
    origin = getattr(coroutine, "cr_origin", None)
    if origin:
        name = str(getattr(coroutine, "__qualname__", "?"))
        _session.unawaited.append((name, tuple(origin)))
    _warn_unawaited(coroutine)


def _watch_unawaited() -> None:
    """Make coroutines remember where they were made, and note those never awaited."""
    sys.set_coroutine_origin_tracking_depth(max(_depth_before, ORIGIN_DEPTH))
    warnings._warn_unawaited_coroutine = _note_unawaited  # type: ignore[attr-defined]


def _unwatch_unawaited() -> None:
    sys.set_coroutine_origin_tracking_depth(_depth_before)
    warnings._warn_unawaited_coroutine = _warn_unawaited  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put the real socket functions back and close the results file."""
    guard.uninstall()
    _unwatch_unawaited()
    if _session.stacks is not None:
        faulthandler.unregister(signal.SIGUSR1)
        _session.stacks.close()
    for writer in (_session.writer, _session.heartbeat):
        if writer is not None:
            writer.close()
    if _session.reached is not None:
        _session.reached.unlink(missing_ok=True)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say which package the tests import as ``claw``."""
    return [f"claw implementation: {config.stash[_PACKAGE]}  (set CLAW_IMPL to change)"]


_PACKAGE = pytest.StashKey[str]()


def _relative_root() -> Path:
    """Paths are shown relative to the folder that holds the package (the repository)."""
    return _session.package_dir.parent if _session.package_dir else _session.root


def problem_from(error: BaseException, module: str, package_dir: Path, root: Path) -> Problem:
    """Describe why a module could not be imported: the file and line, and the error."""
    if isinstance(error, SyntaxError) and error.filename:
        where = frames.location(error.filename, error.lineno or 0, "", root)
        source = (error.text or "").rstrip("\n")
        caret = None
        if error.offset and source:
            indent = len(source) - len(source.lstrip())
            caret = max(error.offset - indent, 1)
        where = Location(where.path, where.line, source.strip() or where.source)
        return Problem(where, f"{type(error).__name__}: {error.msg}", module, caret)
    found = frames.in_exception(error, package_dir, root)
    where = found or Location(f"{module.replace('.', '/')}.py", 0)
    return Problem(where, f"{type(error).__name__}: {error}", module)


def _add_problem(error: BaseException, module: str) -> Problem | None:
    if _session.package_dir is None:
        return None
    problem = problem_from(error, module, _session.package_dir, _relative_root())
    if problem not in _session.problems:
        _session.problems.append(problem)
        if _session.writer is not None:
            _session.writer.problem(problem)
    return problem


def _diagnose() -> None:
    """After a test module failed to import: find the implementation module that is broken.

    Runs once, and only on that error path: it compiles every module of the package (syntax
    errors, with their exact line) and, if all of them compile, imports each one in turn.
    """
    if _session.diagnosed or _session.package_dir is None:
        return
    _session.diagnosed = True
    directory = _session.package_dir
    modules = sorted(directory.rglob("*.py"))
    names = {}
    for path in modules:
        relative = path.relative_to(directory).with_suffix("")
        parts = [p for p in relative.parts if p != "__init__"]
        names[path] = ".".join([_session.package, *parts])
        try:
            compile(path.read_bytes(), str(path), "exec")
        except SyntaxError as error:
            _add_problem(error, names[path])
    if _session.problems:
        return
    for path in modules:
        try:
            importlib.import_module(names[path])
        except Exception as error:  # anything a learner's module can raise while importing
            _add_problem(error, names[path])


# ---------------------------------------------------------------- todo reporting


class _TodoReached(BaseException):
    """Carries a ``Todo`` out of a Hypothesis test, which would otherwise try to shrink it."""


def behind(error: BaseException | None) -> Iterator[BaseException]:
    """An exception, then its causes, contexts and group members, each once."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend([current.__cause__, current.__context__])


def find_todo(error: BaseException | None) -> BaseException | None:
    """The ``Todo`` behind an exception: itself, a cause or context, or a member of a group."""
    for current in behind(error):
        if isinstance(current, NotImplementedError) and type(current).__name__ == "Todo":
            return current
    return None


def find_timeout(error: BaseException) -> tuple[BaseException, float] | None:
    """pytest-timeout's failure behind an exception, and its limit in seconds.

    It can hide in a group: a loop inside a task of an ``asyncio.TaskGroup`` is interrupted
    there, and the group wraps the failure in a ``BaseExceptionGroup``.
    """
    for current in behind(error):
        timeout = TIMEOUT_MESSAGE.match(str(current))
        if timeout and isinstance(current, pytest.fail.Exception):
            return current, float(timeout["seconds"])
    return None


def _stop_at_todo(test: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a Hypothesis test body so that reaching a stub ends the whole test at once."""
    if inspect.iscoroutinefunction(test):

        @functools.wraps(test)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await test(*args, **kwargs)
            except Exception as error:
                if find_todo(error) is not None:
                    raise _TodoReached() from error
                raise

        return run_async

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return test(*args, **kwargs)
        except Exception as error:
            if find_todo(error) is not None:
                raise _TodoReached() from error
            raise

    return run


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test that ended in a stub: a one-line todo report, without formatting a traceback.

    Any other failure is left to pytest's own report; this only notes the learner's line and
    the test's line for the results file, and stops the run after a test that seems to loop.
    """
    if call.excinfo is None:
        return None
    todo = find_todo(call.excinfo.value)
    if todo is None:
        if _session.package_dir is not None:
            failure = _describe_failure(item, call.excinfo.value)
            # pytest copies the item's user properties into the report it makes next.
            # A plain str: pytest-xdist's transport (execnet) cannot send an enum member.
            found = {**asdict(failure), "outcome": failure.outcome.value}
            item.user_properties.append((FAILURE_KEY, found))
            if failure.outcome == Outcome.HUNG:
                item.session.shouldstop = (
                    f"the run stopped after {item.name}, which seemed to loop forever"
                )
        return None
    chapter = str(getattr(todo, "chapter", "?"))
    hint = str(getattr(todo, "hint", ""))
    stub = frames.raised_at(todo, _relative_root())
    path, line, _ = item.location
    if stub is not None:
        path, line = stub.path, stub.line - 1
    sections = [(f"Captured {key} {when}", text) for when, key, text in item._report_sections]
    todo_info = {"chapter": chapter, "hint": hint, "where": stub.__dict__ if stub else None}
    return pytest.TestReport(
        item.nodeid,
        item.location,
        dict.fromkeys(item.keywords, 1),
        "skipped",
        (path, (line or 0) + 1, f"todo {chapter}: {hint}"),
        call.when,  # type: ignore[arg-type]  # never "collect" for a test item
        sections,
        call.duration,
        call.start,
        call.stop,
        [*item.user_properties, (TODO_KEY, todo_info)],
    )


@contextlib.contextmanager
def _guarded(item: pytest.Item, when: str) -> Iterator[None]:
    """One phase of a test under the network guard (see ``_open_phase``, ``_close_phase``)."""
    __tracebackhide__ = True
    _open_phase(item)
    try:
        yield
    except BaseException:
        _close_phase(when, ended_normally=False)
        raise
    _close_phase(when, ended_normally=True)


def _open_phase(item: pytest.Item) -> None:
    """Lift the network guard for a phase of a test marked ``allow_network``."""
    guard.allowed = item.get_closest_marker("allow_network") is not None


def _close_phase(when: str, ended_normally: bool) -> None:
    """Put the guard back; fail the phase if anything tried to reach the network in it.

    Each phase (setup, call, teardown) takes every attempt refused since the last phase ended,
    so none is lost: not one a fixture swallowed, nor one a thread made between two phases.
    A phase that already failed keeps its own error.
    """
    __tracebackhide__ = True
    guard.allowed = False
    attempts = guard.take_attempts()
    if attempts and ended_normally:
        during = "" if when == "call" else f" (during {when})"
        raise NetworkBlocked(f"this test tried to reach the network{during}: {', '.join(attempts)}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a test whose fixtures tried to reach the network while they were set up.

    Before that, an empty file for the chapters whose stubs the test will reach: every
    ``Todo`` notes its chapter there (``claw.todo.note_reached``), also one a test's code
    catches and one raised in a process the test starts, which inherits the variable.
    """
    __tracebackhide__ = True
    _session.unawaited.clear()
    if _session.reached is not None:
        _session.reached.unlink(missing_ok=True)
        os.environ[REACHED_ENV] = str(_session.reached)
    with _guarded(item, "setup"):
        result = yield
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Stop property tests at a stub, and fail a test that tried to reach the network."""
    __tracebackhide__ = True
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    original = getattr(handle, "inner_test", None)
    if original is not None:
        handle.inner_test = _stop_at_todo(original)  # type: ignore[union-attr]
    try:
        with _guarded(item, "call"):
            result = yield
    finally:
        if original is not None:
            handle.inner_test = original  # type: ignore[union-attr]
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, None, None]:
    """Fail a test whose fixtures tried to reach the network while they were torn down.

    Then the chapters whose stubs the test reached travel in its last report.
    """
    __tracebackhide__ = True
    try:
        with _guarded(item, "teardown"):
            result = yield
    finally:
        if _session.reached is not None:
            item.user_properties.append((REACHED_KEY, _reached(_session.reached)))
    return result


def _reached(path: Path) -> list[str]:
    """The chapters noted in a test's file of reached stubs, sorted, each once."""
    try:
        return sorted(set(path.read_text(encoding="utf-8").split()))
    except OSError:
        return []


def _describe_failure(item: pytest.Item, error: BaseException) -> _Failure:
    assert _session.package_dir is not None
    root = _relative_root()
    where = frames.in_exception(error, _session.package_dir, root)
    called_from = frames.in_test_file(error, Path(str(item.path)), _session.root)
    function = getattr(item, "originalname", None) or item.name
    test_line = frames.in_test_function(error, Path(str(item.path)), function, _session.root)
    if test_line is not None and called_from is not None and test_line.line == called_from.line:
        test_line = None
    message = label_diff(_message(error))
    timeout = find_timeout(error)
    if timeout is not None:
        interrupted, seconds = timeout
        chapter = _chapter_of(item.location[0])
        own = frames.in_own_code(interrupted, _session.package_dir, root, _own_functions(chapter))
        where = (
            (own[-1] if own else None)
            or frames.in_exception(interrupted, _session.package_dir, root)
            or where
            or frames.in_other_threads(_session.package_dir, root)
            or frames.in_tasks(_session.package_dir, root)
        )
        message = f"seems to loop forever: still running after {seconds:g} s"
        if len(own) > 1:  # the loop may be in any of them: name each, the outermost first
            chain = ", which called ".join(f"{o.path}:{o.line} ({o.function})" for o in own)
            message += f"\nin {chapter}'s code: {chain}"
        return _Failure(Outcome.HUNG, where, called_from, message, test_line)
    suspected = MISSING_AWAIT.search(message) is not None
    forgotten = _forgotten_await(error, suspected)
    if forgotten is not None:
        # Where the coroutine was made is the learner's line; an error of another kind keeps
        # its own place, and the note still names the missing await.
        name, made = forgotten
        where = made if suspected or where is None else where
        message = _noted(
            message.replace(f"\n{AWAIT_NOTE}", ""),
            f"(coroutine '{name}' was made at {made} and never awaited: "
            "the `await` is missing there)",
        )
    return _Failure(Outcome.FAILED, where, called_from, message, test_line)


def _own_functions(chapter: str | None) -> dict[str, set[str]]:
    """Per implementation file, the functions whose bodies ``chapter`` has the learner write.

    Read from the course's catalogue of stubs (``clawbook/starter-stubs.json``) when a test
    hangs; a missing or unreadable catalogue means none are known.
    """
    from clawbook.course import stubs

    try:
        catalogue = stubs.read_catalogue(CATALOGUE)
    except stubs.ResetError:
        return {}
    return {
        path: {entry.function for entry in entries if entry.chapter == chapter}
        for path, entries in catalogue.stubs.items()
    }


def _forgotten_await(error: BaseException, suspected: bool) -> tuple[str, Location] | None:
    """The first coroutine of this test that the implementation made and never awaited.

    Those already dropped were noted as Python warned about them; one the failure still holds
    (in a frame of its traceback) is found there. Only when the message points at a
    coroutine (``suspected``) is the garbage collector run, for one caught in a cycle.
    """
    assert _session.package_dir is not None
    candidates = list(_session.unawaited)
    for current in behind(error):
        tb = current.__traceback__
        while tb is not None:
            for value in list(tb.tb_frame.f_locals.values()):
                if (
                    inspect.iscoroutine(value)
                    and value.cr_origin
                    and inspect.getcoroutinestate(value) == inspect.CORO_CREATED
                ):
                    candidates.append((value.__qualname__, tuple(value.cr_origin)))
            tb = tb.tb_next
    if not candidates and suspected:
        gc.collect()
        candidates = list(_session.unawaited)
    for name, origin in candidates:
        for path, line, function in origin:
            if frames.inside(path, _session.package_dir):
                return name, frames.location(path, line, function, _relative_root())
    return None


MISSING_AWAIT = re.compile(r"'coroutine'|<coroutine object ")
"""Errors that come from using a coroutine as if it were its result."""
AWAIT_NOTE = (
    "(a coroutine was used as if it were its result: an `await` is probably missing where it "
    "was made, in the call that returned it)"
)


def _message(error: BaseException) -> str:
    """``Type: message``, then any notes (Hypothesis puts its falsifying example there).

    A coroutine used as a value (a forgotten ``await``) fails far from its cause, so the
    message then says what to look for.
    """
    text = str(error).strip()
    name = type(error).__name__
    lines = [f"{name}: {text}" if text else name]
    lines.extend(str(note) for note in getattr(error, "__notes__", ()))
    message = "\n".join(lines)
    return _noted(message, AWAIT_NOTE) if MISSING_AWAIT.search(text) else message


def _noted(message: str, note: str) -> str:
    """The message with the harness's note right under its first line.

    A long diff follows that line, and ``clawbook check`` shows only a failure's first lines:
    a note at the end would be cut off exactly when the learner needs it.
    """
    first, newline, rest = message.partition("\n")
    return f"{first}\n{note}{newline}{rest}"


def _todo_of(report: pytest.CollectReport | pytest.TestReport) -> dict[str, Any] | None:
    for key, value in getattr(report, "user_properties", ()):
        if key == TODO_KEY:
            return dict(value)
    return None


def _failure_of(report: pytest.TestReport) -> _Failure | None:
    """What makereport found for this phase's failure: the last one the report carries."""
    found = None
    for key, value in getattr(report, "user_properties", ()):
        if key == FAILURE_KEY:
            found = value
    if found is None:
        return None

    def place(data: dict[str, Any] | None) -> Location | None:
        return Location(**data) if data else None

    return _Failure(
        Outcome(found["outcome"]),
        place(found["where"]),
        place(found["called_from"]),
        found["message"],
        place(found["test_line"]),
    )


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """Show todo tests as ``T`` / ``TODO`` and count them as ``todo`` in the summary line."""
    if _todo_of(report) is not None:
        return "todo", "T", ("TODO", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """After the run: what cannot be imported, then one line per chapter with todo tests."""
    if _session.problems:
        terminalreporter.section("cannot import the implementation", sep="-", red=True)
        for problem in _session.problems:
            terminalreporter.line(f"{problem.where}: {problem.message}")
            if problem.where.source:
                terminalreporter.line(f"    {problem.where.source}")
    reports = terminalreporter.stats.get("todo", [])
    if not reports:
        return
    by_chapter: dict[str, tuple[int, str, str]] = {}
    for report in reports:
        todo = _todo_of(report) or {}
        chapter = todo.get("chapter", "?")
        where = todo.get("where") or {}
        place = f"  ({where['path']}:{where['line']})" if where else ""
        count, hint, first = by_chapter.get(chapter, (0, todo.get("hint", ""), place))
        by_chapter[chapter] = (count + 1, hint, first)
    terminalreporter.section("todo: stubs still to write", sep="-", yellow=True)
    for chapter, (count, hint, place) in sorted(by_chapter.items()):
        plural = "s" if count != 1 else ""
        terminalreporter.line(f"{chapter}: {count} test{plural} waiting; first hint: {hint}{place}")
    terminalreporter.line("see `clawbook status` for your progress, `clawbook hint <id>` for help")


# ---------------------------------------------------------------- results for clawbook


def _chapter_of(path: str) -> str | None:
    """The chapter of a test file, found once per file (every test's report asks again)."""
    if path not in _session.chapters:
        chapter = load_curriculum().chapter_for_test_file(path)
        _session.chapters[path] = chapter.id if chapter else None
    return _session.chapters[path]


def pytest_collectstart(collector: pytest.Collector) -> None:
    """Say that collection goes on, so a watchdog can tell a slow start from a stuck one."""
    writer = _session.writer or _session.heartbeat
    if writer is not None and isinstance(collector, pytest.Module):
        writer.write("collecting", path=str(collector.path))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say which tests will run, and which may take longer than the run's limit.

    Without pytest-xdist, that is; with it, the workers collect, and each says the limits of
    the tests marked ``pytest.mark.timeout(N)``.
    """
    limits = _limits(session.items)
    if _session.writer is not None:
        nodeids = [item.nodeid for item in session.items]
        _session.writer.write("collected", nodeids=nodeids, limits=limits)
    elif _session.heartbeat is not None and limits:
        _session.heartbeat.write("limits", limits=limits)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, put the tests that declare a longer time limit first.

    A worker that is done takes tests from the end of another's queue, so the run ends when
    the last long test does. Started last, the 9-second eval test kept one worker busy while
    the other waited; started first, the long tests overlap the short ones. A test that
    declares ``pytest.mark.timeout(N)`` above the suite's limit is one its author knew to be
    long (real processes, servers, workers), so the largest ``N`` runs first; the rest keep
    their order. Every worker sorts the same collection the same way, as pytest-xdist requires.
    """
    if _worker_id(config) is None:
        return
    limits = _limits(items)
    items.sort(key=lambda item: -limits.get(item.nodeid, 0.0))


def _limits(items: list[pytest.Item]) -> dict[str, float]:
    """The tests marked ``timeout(N)``, with N: the watchdog gives them as long."""
    limits = {}
    for item in items:
        marker = item.get_closest_marker("timeout")
        if marker is None:
            continue
        seconds = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
        if isinstance(seconds, int | float) and seconds > 0:
            limits[item.nodeid] = float(seconds)
    return limits


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Say which tests will run: what the first pytest-xdist worker collected.

    Every worker collects the same tests (pytest-xdist stops the run if they differ).
    """
    if _session.writer is not None and not _session.collected_said:
        _session.collected_said = True
        _session.writer.write("collected", nodeids=list(ids))


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Say which test is running, so a run that dies or hangs can name it."""
    if _session.writer is not None:
        _session.writer.write("start", nodeid=nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Fold the setup, call and teardown reports of each test into one result."""
    path = report.location[0]
    result = _session.results.get(report.nodeid) or TestResult(
        nodeid=report.nodeid, file=path, chapter=_chapter_of(path), outcome=Outcome.PASSED
    )
    _session.results[report.nodeid] = result
    for key, value in report.user_properties:
        if key == REACHED_KEY and isinstance(value, list):
            result.reached = [str(chapter) for chapter in value]
    if result.outcome in (Outcome.PASSED, Outcome.SKIPPED):
        _fold(result, report)
        if report.failed and report.when != "teardown" and _session.writer is not None:
            # Said at once: the test's teardown might never end (a stuck worker thread).
            _session.writer.result(result, final=False)
    if report.when == "teardown" and _session.writer is not None:
        _session.writer.result(result)


def _fold(result: TestResult, report: pytest.TestReport) -> None:
    """Take one phase's report into a result that has not gone wrong yet."""
    todo = _todo_of(report)
    if todo is not None:
        result.outcome = Outcome.TODO
        result.todo_chapter, result.hint = todo["chapter"], todo["hint"]
        result.where = Location(**todo["where"]) if todo.get("where") else None
    elif report.failed:
        failure = _failure_of(report) or _Failure(
            Outcome.FAILED, None, None, _longrepr_line(report)
        )
        result.outcome, result.message = failure.outcome, failure.message
        result.where, result.called_from = failure.where, failure.called_from
        result.test_line = failure.test_line
        result.line = failure.called_from.line if failure.called_from else _crash_line(report)
    elif report.skipped and report.when in ("setup", "call"):
        result.outcome, result.message = Outcome.SKIPPED, _skip_reason(report)


def _skip_reason(report: pytest.TestReport) -> str | None:
    """Why a test did not run to a pass: ``expected to fail: WHY`` or ``skipped: WHY``."""
    expected = getattr(report, "wasxfail", None)
    if expected is not None:
        return f"expected to fail: {expected}" if expected else "expected to fail"
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return "skipped: " + str(report.longrepr[2]).removeprefix("Skipped: ")
    return None


def _crash_line(report: pytest.TestReport) -> int | None:
    crash = getattr(report.longrepr, "reprcrash", None)
    return int(crash.lineno) if crash is not None else None


def _longrepr_line(report: pytest.CollectReport | pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    lines = [line for line in str(report.longrepr or "").splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (errors or lines or ["(no message)"])[-1]


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Record a test module that cannot be imported, and find the module to blame."""
    if not report.failed:
        return
    _diagnose()
    path = report.nodeid.split("::")[0]
    problem = _session.problems[0] if _session.problems else None
    message = _longrepr_line(report)
    if problem is not None:
        where = problem.where
        message = f"cannot import {where.path} (line {where.line}): {problem.message}"
    result = TestResult(
        nodeid=report.nodeid,
        file=path,
        chapter=_chapter_of(path),
        outcome=Outcome.ERROR,
        message=message,
        where=problem.where if problem else None,
    )
    _session.results[report.nodeid] = result
    if _session.writer is not None:
        _session.writer.result(result)


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """Note why the session was interrupted: pytest-xdist stops so after a worker's test hung."""
    _session.interrupted = str(excinfo.value).strip() or None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Mark the results file complete: everything before this line is the whole story.

    With why the run ended early, if it did: then some selected tests never ran.
    """
    if _session.writer is not None:
        reasons = (session.shouldstop, session.shouldfail, _session.interrupted)
        why = next((reason for reason in reasons if isinstance(reason, str) and reason), None)
        _session.writer.write("finished", exitstatus=int(exitstatus), cut_short=why)
