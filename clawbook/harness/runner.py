"""Run the shared test suite in a subprocess, watch it, and read back one result per test.

The run is watched, not just awaited. The plugin writes each event to a results file as it
happens (``harness.report``); this module reads them while pytest works, so a caller can show
progress, and it stops a run that has gone quiet for longer than any test may take: it asks the
process for every thread's stack (``SIGUSR1``, answered by ``faulthandler``), finds the
learner's line in it, and ends the whole process group. A run that ends without saying it
finished (a crash, a kill) is never read as a complete one.

When the run is over, no process of it is left running, whatever the tests did: everything
still in pytest's session or process group, and every process that inherited the run's mark
(``RUN_MARK_ENV``, which carries on through ``setsid`` and double forks), is killed, and the
run says which (``Run.leftovers``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawbook.course.chapters import CHAPTERS_ENV, Chapter, Curriculum
from clawbook.course.chapters import load as load_curriculum
from clawbook.harness import frames, impl
from clawbook.harness.report import (
    REPORT_ENV,
    STACKS_SUFFIX,
    Location,
    Outcome,
    Problem,
    Report,
    ReportReader,
    TestResult,
)

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_ENV = "CLAWBOOK_TIMEOUT"
DEFAULT_TIMEOUT = 10.0
"""Seconds a single test may run under ``clawbook`` before it is stopped as a likely loop."""
OUTPUT_TAIL = 256 * 1024
"""Bytes of a run's output kept in ``Run.output``: its end, where pytest's summary and a crash's
stack are. The whole output can be far larger (a test that prints in a loop) and stays on disk."""
_OWN_VARIABLES = (impl.IMPL_ENV, impl.PATH_ENV, REPORT_ENV, CHAPTERS_ENV)
RUN_MARK_ENV = "CLAWBOOK_RUN_MARK"
"""Every process of a run inherits this variable, holding the run's own word (after those of
any runs it is part of): at the end, a process whose environment holds the word is one the run
left behind, even if it left pytest's session."""


@dataclass(frozen=True)
class Stop:
    """Why a run ended before pytest said it had finished."""

    reason: Outcome
    """``HUNG`` (stopped by the watchdog), ``CRASHED`` (the process died), ``ERROR``
    (pytest refused to start, for example a broken ``chapters.toml``) or ``TIMEOUT`` (the
    run's ``wall_time`` ran out): the outcome of the test that was running, if any."""
    detail: str
    test: str | None = None
    """The test that was running, if any."""
    where: Location | None = None


@dataclass(frozen=True)
class Run:
    """The results of one pytest run."""

    results: tuple[TestResult, ...]
    returncode: int
    output: str
    """The last ``OUTPUT_TAIL`` bytes of what pytest printed."""
    problems: tuple[Problem, ...] = ()
    """Modules of the implementation that cannot be imported."""
    stopped: Stop | None = None
    """Set when the run did not finish: then some tests may not have run at all."""
    collected: tuple[str, ...] | None = None
    """The ids of every test the run selected (None if it never got that far)."""
    leftovers: tuple[str, ...] = ()
    """The command lines of the processes the tests left running, which the run killed."""
    cut_short: str | None = None
    """Why pytest ended before every selected test ran, when it finished but said so (after a
    test that seemed to loop forever): the tests without a result did not run."""

    @property
    def complete(self) -> bool:
        """True when pytest ran to its end and said so."""
        return self.stopped is None

    def for_chapter(self, chapter: Chapter) -> tuple[TestResult, ...]:
        """The results of a chapter's tests."""
        return tuple(r for r in self.results if r.chapter == chapter.id)

    def not_run_because(self) -> str:
        """Why the selected tests without a result did not run, in words."""
        if self.stopped is not None:
            return self.stopped.detail
        if self.cut_short:
            return self.cut_short
        hung = next((r for r in self.results if r.outcome == Outcome.HUNG), None)
        if hung is not None:
            return f"the run stopped after {hung.name}, which seemed to loop forever"
        return "the test run ended before it"

    def expected_for(
        self, chapter: Chapter, curriculum: Curriculum | None = None
    ) -> tuple[str, ...] | None:
        """The ids of the chapter's tests that the run selected, if it got that far."""
        if self.collected is None:
            return None
        curriculum = curriculum or load_curriculum()
        return tuple(
            nodeid
            for nodeid in self.collected
            if curriculum.chapter_for_test_file(nodeid.split("::")[0]) == chapter
        )


def chapter_test_files(
    chapter: Chapter, root: Path = ROOT, curriculum: Curriculum | None = None
) -> list[str]:
    """The chapter's test files that exist, relative to ``root``.

    A file matched by the globs of two chapters goes to the one with the longer prefix.
    """
    curriculum = curriculum or load_curriculum()
    paths = {path for glob in chapter.test_globs for path in root.glob(glob)}
    return [
        path.relative_to(root).as_posix()
        for path in sorted(paths)
        if curriculum.chapter_for_test_file(path.name) == chapter
    ]


def pytest_command(*args: str) -> list[str]:
    """The command that runs this environment's pytest, without its cache, on ``args``."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


def default_timeout() -> float:
    """The per-test limit: ``CLAWBOOK_TIMEOUT`` seconds if set, else ``DEFAULT_TIMEOUT``."""
    try:
        return float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


Watcher = Callable[[Report, float], None]
"""Called while a run goes on with what has been reported so far and the seconds elapsed."""


def run_pytest(
    args: Sequence[str] = (),
    *,
    implementation: str = "starter",
    impl_path: Path | None = None,
    root: Path = ROOT,
    extra_env: dict[str, str] | None = None,
    timeout: float | None = None,
    watch: Watcher | None = None,
    base_env: Mapping[str, str] | None = None,
    wrapper: Sequence[str] = (),
    wall_time: float | None = None,
    scratch: Path | None = None,
    nested: bool = False,
    workers: int = 0,
) -> Run:
    """Run pytest on ``args`` against an implementation and collect every test's result.

    ``timeout`` limits each test (default ``default_timeout()``); a process that reports nothing
    for longer than that (plus a grace period) is stopped and its stuck test named.
    ``base_env`` is the environment to start from (default ``os.environ``); ``wrapper`` is put
    in front of the command (``instructor.sandbox``'s limits); ``wall_time`` limits the whole run
    (a run stopped by it ends with reason ``timeout``). ``scratch`` is the folder the run's
    own files (the results file, the output) are made in (default: the system's temporary
    folder). ``nested`` says that ``wrapper`` starts pytest in a PID namespace of its own
    (bubblewrap): the watchdog then signals the first process inside it, and an exit status
    above 128 is read as the signal that ended pytest. ``workers`` above 0 runs the tests in
    that many pytest-xdist worker processes at once.
    """
    timeout = timeout or default_timeout()
    with tempfile.TemporaryDirectory(prefix="clawbook-", dir=scratch) as folder:
        report_path = Path(folder) / "report.jsonl"
        # Start from a clean slate: an outer run's settings must not leak into this one.
        source = os.environ if base_env is None else base_env
        env = {k: v for k, v in source.items() if k not in _OWN_VARIABLES}
        env.update({impl.IMPL_ENV: implementation, REPORT_ENV: str(report_path)})
        mark = f"run-{os.getpid()}-{secrets.token_hex(6)}"
        env[RUN_MARK_ENV] = " ".join(filter(None, [source.get(RUN_MARK_ENV, ""), mark]))
        if impl_path is not None:
            env[impl.PATH_ENV] = str(impl_path)
        env.update(extra_env or {})
        command = [*wrapper, *pytest_command(
            "-q", "--tb=line", "--continue-on-collection-errors", f"--timeout={timeout:g}",
            *(["-n", str(workers), "--dist", "worksteal"] if workers > 0 else []), *args,
        )]  # fmt: skip
        output_path = Path(folder) / "output.txt"
        with output_path.open("wb") as output:
            process = subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                reader = ReportReader(report_path)
                stopped = _supervise(
                    process, reader, timeout, watch, wall_time, nested, workers > 0
                )
            finally:
                _end_group(process, nested)
                leftovers = _end_leftovers(process.pid, mark)
        reader.poll()
        text = _tail(output_path)
        report = reader.report
        returncode = process.returncode
        if nested and returncode > 128:
            returncode = 128 - returncode  # bwrap passes a signal on as 128 + its number
        if stopped is None and not report.finished:
            stopped = _crash(returncode, report, text, impl_path, implementation, root)
        if stopped is not None and stopped.reason == Outcome.HUNG and stopped.where is None:
            stopped = _locate_hang(stopped, Path(str(report_path) + STACKS_SUFFIX), impl_path,
                                   implementation, root)  # fmt: skip
    results = list(report.results.values())
    if stopped is not None and stopped.test and stopped.test not in report.results:
        results.append(_stopped_result(stopped))
    return Run(
        results=tuple(results),
        returncode=returncode,
        output=text,
        problems=tuple(report.problems),
        stopped=stopped,
        collected=report.collected,
        leftovers=tuple(leftovers),
        cut_short=report.cut_short,
    )


def _tail(path: Path) -> str:
    """The last ``OUTPUT_TAIL`` bytes of a file, as text: never the whole of a huge one."""
    with path.open("rb") as file:
        file.seek(0, os.SEEK_END)
        file.seek(max(0, file.tell() - OUTPUT_TAIL))
        return file.read(OUTPUT_TAIL).decode("utf-8", errors="replace")


STARTUP_LIMIT = 120.0
"""Seconds pytest may take to start before the plugin's first event (a very slow machine)."""


def grace(timeout: float) -> float:
    """Seconds beyond the per-test limit before the watchdog decides the process is stuck.

    pytest-timeout stops a test that loops in the main thread at the limit itself; the grace
    leaves it time to do so before the whole process is ended.
    """
    return max(2.0, timeout / 2)


def _supervise(
    process: subprocess.Popen[bytes],
    reader: ReportReader,
    timeout: float,
    watch: Watcher | None,
    wall_time: float | None = None,
    nested: bool = False,
    distributed: bool = False,
) -> Stop | None:
    """Wait for the process, reading its events; stop it if it goes quiet for too long.

    With ``wall_time``, also stop it when the whole run takes longer than that.
    """
    started = last_event = time.monotonic()
    heard = False
    while True:
        finished = process.poll() is not None
        if reader.poll():
            last_event, heard = time.monotonic(), True
        now = time.monotonic()
        if watch is not None:
            watch(reader.report, now - started)
        if finished:
            return None
        # Until the plugin speaks, only pytest itself is starting: no learner code runs yet.
        # With workers, once the implementation has imported, the workers start and collect
        # the tests before any of them runs, which takes a while, and every one must be done
        # before the first test starts.
        # Once every test has its result, pytest (and each worker) ends its session, which on
        # a busy machine can take as long.
        report = reader.report
        starting = (
            not heard
            or _all_done(report)
            or (distributed and report.imported and not report.started and not report.results)
        )
        own = max((report.limits.get(test, 0.0) for test in report.started), default=0.0)
        longest = max(timeout, own)  # a test marked timeout(N) may take N seconds
        limit = STARTUP_LIMIT if starting else longest + grace(longest)
        if now - last_event > limit:
            return _stop_hung(process, reader.report, now - last_event, nested, distributed)
        if wall_time is not None and now - started > wall_time:
            detail = f"the test run took longer than its limit of {wall_time:g} s"
            return Stop(Outcome.TIMEOUT, detail, reader.report.running)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(0.05)  # returns as soon as the process ends


def _all_done(report: Report) -> bool:
    """Whether every test the run selected has its final result."""
    return (
        report.collected is not None
        and not report.started
        and all(nodeid in report.results for nodeid in report.collected)
    )


def _stop_hung(
    process: subprocess.Popen[bytes],
    report: Report,
    quiet: float,
    nested: bool = False,
    distributed: bool = False,
) -> Stop:
    """Ask for every thread's stack, then say which test seems to loop forever.

    With pytest-xdist (``distributed``), the tests run in the workers, pytest's children:
    each of them is asked too, and writes its own stacks file.
    """
    target = _first_inside(process.pid) if nested else process.pid
    targets = [target] if target is not None else []
    if distributed and target is not None:
        children, _bwrap = _processes()
        targets += [child for _started, child in children.get(target, [])]
    for pid in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGUSR1)
    time.sleep(0.3)  # faulthandler writes at once; give the files a moment
    test = report.running
    if test is None and report.collected is None:
        detail = f"importing the code under test never finished: nothing happened for {quiet:.0f} s"
    elif test is None:
        detail = f"the test run seems to loop forever: nothing happened for {quiet:.0f} s"
    elif test in report.results:  # it failed, and then its cleanup got stuck as well
        detail = (
            f"{test.split('::')[-1]} failed and then never finished cleaning up "
            "(something it started is still stuck), so the run was stopped"
        )
    else:
        detail = f"{test.split('::')[-1]} seems to loop forever: nothing happened for {quiet:.0f} s"
    return Stop(Outcome.HUNG, detail, test)


def _processes() -> tuple[dict[int, list[tuple[int, int]]], set[int]]:
    """Every process's children (start time, pid), and which processes are bubblewrap's."""
    children: dict[int, list[tuple[int, int]]] = {}
    bwrap: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/comm", encoding="utf-8", errors="replace") as file:
                name = file.read().strip()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append((int(fields[19]), int(entry)))
        if name == "bwrap":
            bwrap.add(int(entry))
    return children, bwrap


def _first_inside(pid: int) -> int | None:
    """The first process below ``pid`` that is not bubblewrap's own: pytest, in a sandbox."""
    children, bwrap = _processes()
    level = [pid]
    while level:
        below = sorted(child for p in level for child in children.get(p, []))
        for _started, child in below:
            if child not in bwrap:
                return child
        level = [child for _started, child in below]
    return None


def _below(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs, and so on."""
    children, _bwrap = _processes()
    found, level = [], [pid]
    while level:
        level = [child for p in level for _started, child in children.get(p, [])]
        found += level
    return found


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as file:
            return file.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _end_group(process: subprocess.Popen[bytes], nested: bool = False) -> None:
    """End the process and everything it started: SIGTERM, a moment, then SIGKILL.

    ``nested``: the process is bubblewrap, and what it started is in a session and a PID
    namespace of its own, out of reach of its process group. Killing bubblewrap makes the
    kernel kill the namespace, but not at once; so every process below it is killed too, and
    waited for, so that none is left when this returns.
    """
    inside = _below(process.pid) if nested and process.poll() is None else []
    if process.poll() is None:
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
    for pid in inside:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while inside and time.monotonic() < deadline:
        inside = [pid for pid in inside if not _gone(pid)]
        time.sleep(0.02)


def _left_behind(session: int, mark: str) -> dict[int, str]:
    """The live processes of a run: in its session or group, or holding its mark; pid: command.

    A process's environment is the one it was started with (``/proc/PID/environ``): only one
    that cleared its own environment and left the session escapes.
    """
    needle = mark.encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
            if fields[0] in (b"Z", b"X"):
                continue
            ours = session in (int(fields[2]), int(fields[3]))  # its group, its session
            if not ours:
                with open(f"/proc/{entry}/environ", "rb") as file:
                    ours = any(
                        variable.startswith(RUN_MARK_ENV.encode() + b"=")
                        and needle in variable.split(b"=", 1)[1].split()
                        for variable in file.read().split(b"\0")
                    )
            if ours:
                with open(f"/proc/{entry}/cmdline", "rb") as file:
                    command = file.read().replace(b"\0", b" ").strip()
                found[int(entry)] = command.decode("utf-8", errors="replace") or "?"
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return found


def _end_leftovers(session: int, mark: str) -> list[str]:
    """Kill every process the run left behind (``_left_behind``); their command lines.

    Killed at once (the run is over, so nothing of it should still run) and looked for again,
    for one started meanwhile by another that was being killed; waited for, so that none is
    left when this returns.
    """
    killed: dict[int, str] = {}
    for _round in range(5):
        found = _left_behind(session, mark)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(found)
        deadline = time.monotonic() + 5.0
        while not all(_gone(pid) for pid in found) and time.monotonic() < deadline:
            time.sleep(0.01)
    return list(killed.values())


def _package_dir(impl_path: Path | None, implementation: str, root: Path = ROOT) -> Path:
    return ((impl_path or root) / implementation).resolve()


def _locate_hang(
    stop: Stop, stacks: Path, impl_path: Path | None, implementation: str, root: Path = ROOT
) -> Stop:
    # pytest's own file, then one per pytest-xdist worker (``.stacks.gw0``, ...)
    dumps = []
    for path in sorted(stacks.parent.glob(stacks.name + "*")):
        with contextlib.suppress(OSError):
            dumps.append(path.read_text(encoding="utf-8", errors="replace"))
    if not dumps:
        return stop
    dump = "\n".join(dumps)
    directory = _package_dir(impl_path, implementation, root)
    where = frames.in_faulthandler_dump(dump, directory, directory.parent)
    return Stop(stop.reason, stop.detail, stop.test, where)


def _crash(
    returncode: int,
    report: Report,
    output: str,
    impl_path: Path | None,
    implementation: str,
    root: Path = ROOT,
) -> Stop:
    """Describe a run that ended without its ``finished`` event."""
    if not report.results and report.running is None and returncode in (2, 3, 4):
        lines = [line for line in output.strip().splitlines() if line.strip()]
        detail = lines[-1] if lines else f"pytest exited with status {returncode}"
        return Stop(Outcome.ERROR, detail.removeprefix("ERROR: "))
    if returncode < 0:
        try:
            how = signal.Signals(-returncode).name
        except ValueError:
            how = f"signal {-returncode}"
        detail = f"the test process was killed by {how}"
    else:
        detail = f"the test process exited with status {returncode} before it finished"
    if "Segmentation fault" in output:
        detail = "the test process crashed: Segmentation fault"
    directory = _package_dir(impl_path, implementation, root)
    where = frames.in_faulthandler_dump(output, directory, directory.parent)
    return Stop(Outcome.CRASHED, detail, report.running, where)


def _stopped_result(stop: Stop) -> TestResult:
    assert stop.test is not None
    path = stop.test.split("::")[0]
    chapter = load_curriculum().chapter_for_test_file(path)
    return TestResult(
        nodeid=stop.test,
        file=path,
        chapter=chapter.id if chapter else None,
        outcome=stop.reason,
        message=stop.detail,
        where=stop.where,
    )


@dataclass
class Progress:
    """How far a chapter has come, from its test results."""

    chapter: Chapter
    results: tuple[TestResult, ...] = field(default_factory=tuple)
    expected: tuple[str, ...] | None = None
    """The ids of the chapter's tests the run selected, when known; the ones without a result
    did not run (the run stopped early)."""

    def count(self, outcome: Outcome) -> int:
        """How many of the chapter's tests ended with ``outcome``."""
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def total(self) -> int:
        """How many tests the chapter has (a module that failed to import counts as one)."""
        ran = {r.nodeid for r in self.results}
        return len(ran | set(self.expected or ()))

    @property
    def not_run(self) -> int:
        """How many of the chapter's selected tests have no result."""
        ran = {r.nodeid for r in self.results}
        return len(set(self.expected or ()) - ran)

    @property
    def passed(self) -> int:
        """How many of the chapter's tests pass."""
        return self.count(Outcome.PASSED)

    @property
    def state(self) -> str:
        """What to tell the learner about this chapter, in a word or two.

        ``coming`` (no page yet), ``reading`` (no tests), ``cannot import`` (a module of the
        implementation is broken), ``failing``, ``not run`` (the run stopped before any of its
        tests), ``done``, ``todo`` or ``in progress``.
        """
        if not self.chapter.written:
            return "coming"
        if not self.chapter.tests:
            return "reading"
        if self.count(Outcome.ERROR):
            return "cannot import"
        if any(r.is_problem for r in self.results):
            return "failing"
        if not self.results:
            return "not run"
        if self.not_run == 0 and self.passed + self.count(Outcome.SKIPPED) == self.total:
            return "done"
        if self.passed == 0:
            return "todo"
        return "in progress"

    @property
    def first_problem(self) -> TestResult | None:
        """The first failure, hang, crash or import error, if any."""
        return next((r for r in self.results if r.is_problem), None)

    @property
    def first_todo(self) -> TestResult | None:
        """The first test still waiting for a stub."""
        return next((r for r in self.results if r.outcome == Outcome.TODO), None)


def progress(curriculum: Curriculum, run: Run) -> list[Progress]:
    """The progress of every chapter, in book order."""
    return [
        Progress(chapter, run.for_chapter(chapter), run.expected_for(chapter, curriculum))
        for chapter in curriculum.chapters
    ]


def next_chapter(report: Iterable[Progress]) -> Progress | None:
    """The first written chapter with tests that is not done yet.

    A chapter none of whose tests ran (the run broke off before them) says nothing about
    where the learner is: it is passed over, so that a run stopped at chapter 23 does not send
    someone who finished chapter 22 back to chapter 1.
    """
    skipped = ("coming", "reading", "done", "not run")
    return next(
        (p for p in report if p.state not in skipped and not _unknown(p)),
        None,
    )


def _unknown(p: Progress) -> bool:
    """Whether all that keeps a chapter from done is tests that never ran."""
    return p.not_run > 0 and p.passed + p.count(Outcome.SKIPPED) + p.not_run == p.total
