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
"""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import re
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from clawbook.course import stubgen
from clawbook.course.chapters import CHAPTERS_ENV, Chapter, Curriculum
from clawbook.harness.report import Location, Problem, Report, TestResult
from clawbook.harness.runner import ROOT, Run, chapter_test_files, default_timeout, run_pytest
from clawbook.instructor import sandbox

STATUSES = ("ok", "timeout", "crashed", "cannot-import", "error", "invalid")
"""A row's ``status``: ``ok`` (the run finished; tests may still fail), ``timeout`` (a test
looped, or the whole run hit its wall time), ``crashed`` (the test process died: a segfault, a
kill), ``cannot-import`` (a module of the submission cannot be imported: a syntax or import
error), ``error`` (the tests could not start) or ``invalid`` (the submission could not be read:
no ``starter/`` package, an unsafe or broken archive)."""

DEFAULT_WALL_TIME = 300.0
"""Seconds a whole submission may take (the reference solution needs a few)."""
DEFAULT_MEMORY = 2 * 1024**3
"""Bytes of address space the test process may use."""
DEFAULT_FILE_SIZE = 256 * 1024**2
"""The largest file the test process may write."""
MAX_UNPACKED = 200 * 1024**2
"""An archive that unpacks to more than this is refused (a zip bomb, or a whole virtualenv)."""
MAX_MEMBERS = 20_000
MAX_RESUMES = 20
"""How many times a run that stopped early is resumed with the tests still to run."""
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
PROBLEM_OUTCOMES = ("failed", "error", "hung", "crashed", "timeout")
HYPOTHESIS_TABLES = Path(".hypothesis") / "unicode_data"

_KEPT_VARIABLES = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|VIRTUAL_ENV|PYTHONPATH)$")
"""The only variables a submission's test process inherits: nothing secret, no proxies."""
_SECRET_WORDS = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PROXY|AUTH)", re.I)


# ---------------------------------------------------------------- chapters


def gradable_chapters(curriculum: Curriculum, root: Path = ROOT) -> list[Chapter]:
    """The written chapters whose tests exist, in book order: what a grade covers by default."""
    return [c for c in curriculum.chapters if c.written and chapter_test_files(c, root, curriculum)]


def select_chapters(curriculum: Curriculum, spec: str | None, root: Path = ROOT) -> list[Chapter]:
    """The chapters ``--chapters`` names: ids and ranges (``ch01..ch05b``), comma-separated.

    A range runs in book order and keeps the chapters with tests; naming a chapter without
    tests, or an unknown id, raises ``ValueError`` saying which.
    """
    if not spec:
        return gradable_chapters(curriculum, root)
    ids = [c.id for c in curriculum.chapters]
    chosen: list[Chapter] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        first, dots, last = item.partition("..")
        for end in (first, last) if dots else (first,):
            if end not in ids:
                raise ValueError(f"no chapter {end!r}; the chapters are {', '.join(ids)}")
        if dots:
            start, stop = ids.index(first), ids.index(last)
            if start > stop:
                raise ValueError(f"{item}: {first} comes after {last} in the book")
            chapters = [c for c in curriculum.chapters[start : stop + 1]]
            chapters = [c for c in chapters if chapter_test_files(c, root, curriculum)]
        else:
            chapter = curriculum.get(first)
            if not chapter_test_files(chapter, root, curriculum):
                raise ValueError(f"{first} has no tests to grade")
            chapters = [chapter]
        chosen.extend(c for c in chapters if c not in chosen)
    if not chosen:
        raise ValueError(f"--chapters {spec!r} selects no chapter with tests")
    return sorted(chosen, key=lambda c: ids.index(c.id))


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    wall_time: float = DEFAULT_WALL_TIME
    """Seconds for the whole submission, resumed runs included."""
    test_timeout: float = field(default_factory=default_timeout)
    """Seconds one test may run before it is stopped as an endless loop."""
    memory: int = DEFAULT_MEMORY
    """Bytes of address space (``RLIMIT_AS``)."""
    file_size: int = DEFAULT_FILE_SIZE
    """The largest file the tests may write (``RLIMIT_FSIZE``)."""


@dataclass(frozen=True)
class Failure:
    """A test that did not pass, as the learner would be told."""

    test: str
    """The test's id (``tests/test_mock_provider.py::test_mock_...``), or a test file that
    could not be imported."""
    chapter: str | None
    outcome: str
    """``failed``, ``hung``, ``crashed``, ``timeout`` or ``error`` (the file did not import)."""
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
    status: str
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
        if self.status != "ok":
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


# ---------------------------------------------------------------- submissions


@dataclass(frozen=True)
class Submission:
    """A learner's work: a directory or an archive, and the name its row goes under."""

    name: str
    path: Path


class InvalidSubmission(Exception):
    """The submission cannot be graded at all; the message says why, for its row."""


def submission_name(path: Path) -> str:
    """The directory's name, or the archive's without its suffix."""
    name = path.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def submissions(paths: Iterable[Path]) -> list[Submission]:
    """One ``Submission`` per path, named after it; a repeated name gets ``-2``, ``-3``..."""
    found: list[Submission] = []
    names: set[str] = set()
    for path in paths:
        base = name = submission_name(path)
        number = 1
        while name in names:
            number += 1
            name = f"{base}-{number}"
        names.add(name)
        found.append(Submission(name, path))
    return found


def _check_member(name: str) -> None:
    """Refuse a member name that would land outside the extraction directory."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or pure.is_absolute():
        raise InvalidSubmission(f"unsafe archive: member {name!r} has an absolute path")
    if ".." in pure.parts:
        raise InvalidSubmission(f"unsafe archive: member {name!r} points outside it (..)")


def _check_link(name: str, target: str) -> None:
    """Refuse a link whose target leaves the archive."""
    if target.startswith("/") or re.match(r"^[A-Za-z]:", target):
        raise InvalidSubmission(f"unsafe archive: link {name!r} points to {target!r}")
    depth = 0
    for part in (PurePosixPath(name).parent / target).parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            raise InvalidSubmission(f"unsafe archive: link {name!r} points outside it ({target})")


def extract(archive: Path, into: Path) -> None:
    """Unpack a ``.zip`` or ``.tar.gz`` into ``into``, after checking every member.

    Raises ``InvalidSubmission`` for an absolute or ``..`` member, a link pointing outside the
    archive, a device or pipe, more than ``MAX_MEMBERS`` members or more than ``MAX_UNPACKED``
    bytes, and for a file that is not such an archive at all.
    """
    into.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, into)
        else:
            _extract_tar(archive, into)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise InvalidSubmission(f"cannot read the archive: {error}") from None


def _extract_zip(archive: Path, into: Path) -> None:
    """Extract member by member, in order, each checked against what is already on disk.

    A name or a link target can stay inside the archive as written and still lead out once
    the links before it exist (``a -> .``, then ``a/a/b -> ../..``): like tarfile's ``data``
    filter, every member's real path, links resolved, must lie inside ``into``, and so must
    every link's target.
    """
    top = into.resolve()
    with zipfile.ZipFile(archive) as zipped:
        members = zipped.infolist()
        _check_sizes(len(members), sum(m.file_size for m in members))
        for member in members:
            _check_member(member.filename)
        for member in members:
            name = PurePosixPath(member.filename.replace("\\", "/"))
            if stat.S_ISLNK(member.external_attr >> 16):
                target = zipped.read(member).decode("utf-8", "replace")
                _check_link(member.filename, target)
                where = _inside(top, str(name.parent), member.filename) / name.name
                _inside(top, str(name.parent / target), member.filename, target)
                where.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    os.symlink(target, where)
                continue
            where = _inside(top, str(name), member.filename)
            if member.is_dir():
                where.mkdir(parents=True, exist_ok=True)
            else:
                where.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as source, where.open("wb") as target_file:
                    shutil.copyfileobj(source, target_file)


def _inside(top: Path, name: str, member: str, target: str | None = None) -> Path:
    """``top / name`` with every link in it resolved; refused unless it stays in ``top``."""
    real = Path(os.path.realpath(top / name))
    if real != top and top not in real.parents:
        what = f"link {member!r} points to {target!r}" if target else f"member {member!r}"
        raise InvalidSubmission(f"unsafe archive: {what}, outside it through its links")
    return real


def _extract_tar(archive: Path, into: Path) -> None:
    with tarfile.open(archive, "r:*") as tarred:
        members = tarred.getmembers()
        _check_sizes(len(members), sum(m.size for m in members))
        for member in members:
            _check_member(member.name)
            if member.issym():
                _check_link(member.name, member.linkname)
            elif member.islnk():
                _check_member(member.linkname)
            elif not (member.isfile() or member.isdir()):
                raise InvalidSubmission(
                    f"unsafe archive: {member.name!r} is a device or pipe, not a file"
                )
        tarred.extractall(into, filter="data")


def _check_sizes(count: int, size: int) -> None:
    if count > MAX_MEMBERS:
        raise InvalidSubmission(f"the archive holds {count} files (at most {MAX_MEMBERS})")
    if size > MAX_UNPACKED:
        raise InvalidSubmission(
            f"the archive unpacks to {size / 1024**2:.0f} MB (at most {MAX_UNPACKED // 1024**2})"
        )


def find_starter(root: Path) -> Path:
    """The learner's ``starter/`` package in a submission.

    It may be at the top, or one or two folders down (an archive of a folder, a whole clone),
    or the submission may be the package's own files (``__init__.py``, ``todo.py``, ...).
    Raises ``InvalidSubmission`` if there is none or there are several.
    """
    if root.name == "starter" and (root / "__init__.py").is_file():
        return root
    for depth in range(3):
        pattern = "/".join(["*"] * depth + ["starter", "__init__.py"])
        found = sorted(
            p.parent
            for p in root.glob(pattern)
            if "__MACOSX" not in p.parts and not _through_link(root, p.parent)
        )
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            places = ", ".join(str(p.relative_to(root)) for p in found)
            raise InvalidSubmission(f"more than one starter/ package: {places}")
    if (root / "__init__.py").is_file() and (root / "todo.py").is_file():
        return root  # the package's files themselves, uploaded without their folder
    raise InvalidSubmission("no starter/ package (a folder starter/ with __init__.py) in it")


def _through_link(root: Path, path: Path) -> bool:
    """True if ``path``, or a folder on the way to it from ``root``, is a link."""
    while path != root:
        if path.is_symlink():
            return True
        path = path.parent
    return False


def copy_package(package: Path, into: Path) -> None:
    """Copy a learner's package over ``into`` without following a single link.

    Files and folders are copied; caches, ``conftest.py`` files and links are not. A link is
    never followed, so one to a folder above it (``a -> .``) cannot make the copy recurse; and
    none is copied, since a chain of links that each stay inside the package can still lead
    out of it once they all exist. More than ``MAX_MEMBERS`` files or ``MAX_UNPACKED`` bytes
    make the submission invalid, as for an archive.
    """
    top = package.resolve()
    count = size = 0
    pending = [(top, into)]
    while pending:
        source, target = pending.pop()
        target.mkdir(parents=True, exist_ok=True)
        with os.scandir(source) as entries:
            for entry in entries:
                if entry.name in ("__pycache__", "conftest.py") or entry.name.endswith(".pyc"):
                    continue
                count += 1
                destination = target / entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((Path(entry.path), destination))
                elif entry.is_file(follow_symlinks=False):
                    size += entry.stat(follow_symlinks=False).st_size
                    _check_copy(count, size)
                    shutil.copyfile(entry.path, destination, follow_symlinks=False)
                _check_copy(count, size)


def _check_copy(count: int, size: int) -> None:
    if count > MAX_MEMBERS:
        raise InvalidSubmission(f"its starter/ holds more than {MAX_MEMBERS} files")
    if size > MAX_UNPACKED:
        raise InvalidSubmission(f"its starter/ holds more than {MAX_UNPACKED // 1024**2} MB")


def copy_repository(into: Path, names: Sequence[str], root: Path = ROOT) -> Path:
    """Copy ``names`` (folders and files of the repository) into ``into``; return ``into``.

    Caches and ``tests/tooling`` are left out: the scratch copy the learner-loop tests, the
    feedback benchmark and the grader each make.
    """
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "tooling")
    into.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=ignore, dirs_exist_ok=True)
        elif source.exists():
            shutil.copy2(source, into / name)
    return into


def compile_quietly(folder: Path) -> None:
    """Write the bytecode of every module under ``folder``, where none is up to date.

    A file that does not compile is left to the test run, which reports it.
    """
    if folder.is_dir():
        compileall.compile_dir(folder, quiet=2, force=False)


def scrubbed_environment(home: Path, tmp: Path) -> dict[str, str]:
    """The environment of a submission's tests: a short allow-list, nothing secret."""
    env = {
        k: v
        for k, v in os.environ.items()
        if _KEPT_VARIABLES.match(k) and not _SECRET_WORDS.search(k)
    }
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        PYTHONHASHSEED="0",
        NO_COLOR="1",
    )
    return env


# ---------------------------------------------------------------- grading one submission


class Cancelled(Exception):
    """The grading was interrupted (Ctrl-C): this submission has no row."""


@dataclass
class Course:
    """What every submission is graded against: the instructor's tree, chapters and tests."""

    curriculum: Curriculum
    chapters: list[Chapter]
    root: Path = ROOT
    limits: Limits = field(default_factory=Limits)
    expected: dict[str, list[str]] = field(default_factory=dict)
    """Per chapter, the ids of its tests: those the solution runs (not the ones it skips)."""
    starter: dict[str, str | bytes] = field(default_factory=dict)
    """The course's current starter, under the submission's files."""
    isolation: sandbox.Isolation = field(default_factory=sandbox.isolation)
    """bubblewrap, if it can run here; otherwise why not (the fallback: limits only)."""
    tables: dict[str, bytes] = field(default_factory=dict)
    """Hypothesis's Unicode tables as the reference run built them (``.hypothesis/
    unicode_data``), put in every submission's folder: building them costs each run seconds."""

    @property
    def test_files(self) -> list[str]:
        """The graded chapters' test files, relative to the repository."""
        return [f for c in self.chapters for f in chapter_test_files(c, self.root, self.curriculum)]

    def prepare(self) -> Run:
        """Run the tests against the solution and render the starter (once, before grading).

        The reference run fixes each chapter's tests: every test it collects, except those it
        skips (live tests without a key). Returns it, so a caller can warn about tests the
        solution itself does not pass: no learner can pass those either.
        """
        self.starter = stubgen.render_tree(self.root / "solution")
        # The sandbox mounts clawbook read-only: compiled now, every process of every
        # submission finds its bytecode instead of compiling the plugin again.
        here = Path(__file__).resolve().parents[1]
        for package in (here, here.parent / "claw"):
            compile_quietly(package)
        # In a scratch copy too, so that nothing (not even Hypothesis's database) is written
        # into the instructor's checkout.
        with tempfile.TemporaryDirectory(prefix="clawbook-grade-reference-") as scratch:
            names = ("pyproject.toml", "tests", "solution")
            work = copy_repository(Path(scratch) / "work", names, self.root)
            run = run_pytest(
                self.test_files,
                implementation="solution",
                impl_path=work,
                root=work,
                extra_env=_chapters_variable(),
                timeout=self.limits.test_timeout,
            )
            tables = work / HYPOTHESIS_TABLES
            self.tables = {
                path.relative_to(work).as_posix(): path.read_bytes()
                for path in sorted(tables.rglob("*"))
                if path.is_file()
            }
        if run.collected is None or (run.stopped is not None and run.stopped.reason == "error"):
            raise RuntimeError(
                "cannot run the instructor's tests against solution/: "
                + (run.stopped.detail if run.stopped else run.output[-2000:])
            )
        skipped = {r.nodeid for r in run.results if r.outcome == "skipped"}
        self.expected = {c.id: [] for c in self.chapters}
        for nodeid in run.collected:
            chapter = self.curriculum.chapter_for_test_file(nodeid.split("::")[0])
            if chapter is not None and chapter.id in self.expected and nodeid not in skipped:
                self.expected[chapter.id].append(nodeid)
        return run


def _chapters_variable() -> dict[str, str]:
    value = os.environ.get(CHAPTERS_ENV)
    return {CHAPTERS_ENV: value} if value else {}


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
            grade = _empty(course, submission.name, "invalid", str(error))
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
    env = scrubbed_environment(scratch / "home", scratch / "tmp")
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
            extra_env=_chapters_variable(),
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
        if stop is not None and stop.reason in ("error", "timeout"):
            break
        if run.problems:
            break  # a module that cannot be imported stays that way
        # Resume with the tests no run has reached yet, if this one broke off.
        broke = stop is not None or any(r.outcome in ("hung", "crashed") for r in run.results)
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
    return failed is not None and failed.outcome == "error"


def _empty(course: Course, name: str, status: str, detail: str) -> Grade:
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
        return cause if result.outcome == "error" else None

    chapters: list[ChapterScore] = []
    failures: list[Failure] = []
    not_run = 0
    for chapter in course.chapters:
        passed = todo = failing = blocked = 0
        for nodeid in course.expected.get(chapter.id, []):
            result = results.get(nodeid)
            file_error = results.get(nodeid.split("::")[0])
            if result is None and file_error is not None and file_error.outcome == "error":
                failing += 1
                blocked += cause is not None
            elif result is None:
                not_run += 1
            elif result.outcome == "passed":
                passed += 1
            elif result.outcome == "todo":
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
        if result.outcome == "error":
            message = result.message or ""
            failures.append(
                Failure(
                    result.nodeid, result.chapter, "error", message, _where(result),
                    stopped_by(result),
                )
            )  # fmt: skip
    status, detail, where, test = _status(runs)
    if not_run:
        detail = "; ".join(filter(None, [detail, f"{not_run} test(s) did not run"]))
    row = Grade(name, status, detail, chapters, failures)
    if status not in ("ok", "error"):
        row.stuck_in = _stuck_in(course, row, where, test)
        row.cause = cause if status == "cannot-import" and cause else f"{status}: {detail}"
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


def _status(runs: list[Run]) -> tuple[str, str, str | None, str | None]:
    """The row's status from every run of the submission, worst first.

    With its detail, the learner's file it points at and the test it stopped in (either may
    be None).
    """
    problems = [p for run in runs for p in run.problems]
    stops = [run.stopped for run in runs if run.stopped is not None]
    results = [r for run in runs for r in run.results]
    if any(s.reason == "error" for s in stops):
        return "error", next(s.detail for s in stops if s.reason == "error"), None, None
    if problems:
        first = problems[0]
        where = first.where if first.where.line else first.where.path
        return "cannot-import", f"cannot import {where}: {first.message}", first.where.path, None
    crashed = [s for s in stops if s.reason == "crashed"]
    if crashed:
        stop = crashed[0]
        where = f" at {stop.where}" if stop.where else ""
        return "crashed", stop.detail + where, _path(stop.where), stop.test
    timed_out = [s for s in stops if s.reason == "timeout"]
    if timed_out:
        return "timeout", timed_out[0].detail, None, timed_out[0].test
    stuck = [s for s in stops if s.reason == "hung" and s.test is None]
    if stuck:  # before any test started: importing the submission never finished
        where = f" at {stuck[0].where}" if stuck[0].where else ""
        return "timeout", stuck[0].detail + where, _path(stuck[0].where), None
    hung = [r for r in results if r.outcome == "hung"]
    if hung:
        where = f" at {hung[0].where}" if hung[0].where else ""
        detail = f"{hung[0].name}: {hung[0].message}{where}"
        return "timeout", detail, _path(hung[0].where), hung[0].nodeid
    return "ok", "", None, None


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
        grade = _empty(course, submission.name, "error", f"{type(error).__name__}: {error}")
        grade.seconds = time.monotonic() - started
        return grade


# ---------------------------------------------------------------- writing the gradebook


def csv_header(chapters: Sequence[str]) -> list[str]:
    """The columns of ``gradebook.csv``."""
    columns = ["submission"]
    for chapter in chapters:
        columns += [f"{chapter}_passed", f"{chapter}_total"]
    return [*columns, "passed", "total", "todo", "failing", "status", "seconds", "detail"]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A spreadsheet reads a cell that starts with one of these as a formula (CSV injection)."""


def as_text(cell: object) -> object:
    """A CSV cell a spreadsheet shows as the text it is: a ``'`` before a formula's start."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def secrets() -> list[str]:
    """The values of this process's secret-looking variables (API keys, tokens, passwords)."""
    found = {v for k, v in os.environ.items() if _SECRET_WORDS.search(k) and len(v) >= 8}
    return sorted(found, key=len, reverse=True)


def redact(grade: Grade, hidden: Sequence[str] | None = None) -> Grade:
    """The row with every secret value replaced by ``[redacted]``.

    A second line of defence, for the fallback without bubblewrap, where a submission can read
    the environment of the grader's process: it stops the key itself from reaching the
    gradebook, not a submission that encodes it first.
    """
    hidden = secrets() if hidden is None else hidden

    def clean(text: str) -> str:
        for value in hidden:
            text = text.replace(value, "[redacted]")
        return text

    if not hidden:
        return grade
    failures = [
        replace(f, test=clean(f.test), message=clean(f.message),
                where=clean(f.where) if f.where else None,
                cause=clean(f.cause) if f.cause else None)
        for f in grade.failures
    ]  # fmt: skip
    return replace(
        grade, submission=clean(grade.submission), detail=clean(grade.detail),
        failures=failures, cause=clean(grade.cause),
    )  # fmt: skip


def write_csv(path: Path, chapters: Sequence[str], grades: Sequence[Grade]) -> None:
    """``gradebook.csv``: one row per submission; no text cell can become a formula."""
    import csv

    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(csv_header(chapters))
        for grade in grades:
            by_id = {c.chapter: c for c in grade.chapters}
            row: list[object] = [grade.submission]
            for chapter in chapters:
                score = by_id.get(chapter)
                row += [score.passed, score.total] if score else [0, 0]
            row += [grade.passed, grade.total, grade.todo, grade.failing, grade.status]
            row += [f"{grade.seconds:.2f}", grade.detail]
            writer.writerow([as_text(cell) for cell in row])


def write_json(
    path: Path,
    chapters: Sequence[str],
    grades: Sequence[Grade],
    limits: Limits,
    complete: bool,
    isolation: sandbox.Isolation,
) -> None:
    """``gradebook.json``: the rows, with each failing test's name, message and line."""
    data = {
        "chapters": list(chapters),
        "limits": asdict(limits),
        "isolation": {
            "sandbox": isolation.sandbox,
            "program": isolation.program,
            "problem": isolation.problem,
        },
        "complete": complete,
        "submissions": [g.to_json() for g in grades],
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def gradescope_results(grade: Grade, course: Course) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one submission: one test entry per chapter.

    Each chapter scores one point per passing test (``max_score`` its number of tests); its
    ``output`` lists the failing tests with their messages and lines, and how many are todo;
    tests stopped by a module that does not import are one line naming that cause. The
    top-level ``score`` is the sum, ``output`` the status and where the learner is stuck.
    """
    by_id = {c.chapter: c for c in grade.chapters}
    tests = []
    for number, chapter in enumerate(course.chapters, 1):
        score = by_id.get(chapter.id) or ChapterScore(chapter.id, 0, 0, 0, 0)
        lines = [f"{score.passed} of {score.total} tests pass."]
        if score.todo:
            lines.append(f"{score.todo} test(s) still reach a stub (todo).")
        if score.blocked:
            lines.append(f"{score.blocked} test(s) cannot run: {grade.standing}.")
        for failure in (f for f in grade.failures if f.chapter == chapter.id and not f.cause):
            lines.append(f"\n✗ {failure.test.split('::')[-1]} ({failure.outcome})")
            lines.append(failure.message)
            if failure.where:
                lines.append(f"at {failure.where}")
        tests.append(
            {
                "name": f"{chapter.id} · {chapter.title}",
                "number": str(number),
                "score": score.passed,
                "max_score": score.total,
                "status": "passed" if score.complete else "failed",
                "output": "\n".join(lines),
                "visibility": "visible",
            }
        )
    summary = f"{grade.passed} of {grade.total} tests pass; status: {grade.status}."
    if grade.stuck_in is not None:
        summary += f"\n{grade.standing}."
    if grade.detail:
        summary += f"\n{grade.detail}"
    return {
        "score": grade.passed,
        "execution_time": round(grade.seconds),
        "output": summary,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_gradescope(folder: Path, grades: Sequence[Grade], course: Course) -> None:
    """``folder/<submission>/results.json`` for every graded submission."""
    for grade in grades:
        target = folder / grade.submission / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(gradescope_results(grade, course), indent=2, ensure_ascii=False)
        target.write_text(text + "\n", encoding="utf-8")


def write_all(
    out: Path,
    course: Course,
    grades: Sequence[Grade],
    *,
    complete: bool = True,
    gradescope: bool = False,
) -> list[Path]:
    """Write the gradebook (CSV, JSON), the report and, if asked, Gradescope's results.

    Any value of a secret-looking variable of the grader's environment is blanked out of what
    the rows say first (``redact``).
    """
    grades = [redact(g) for g in grades]
    out.mkdir(parents=True, exist_ok=True)
    chapters = [c.id for c in course.chapters]
    write_csv(out / "gradebook.csv", chapters, grades)
    write_json(out / "gradebook.json", chapters, grades, course.limits, complete, course.isolation)
    from clawbook.instructor.gradereport import render

    (out / "report.html").write_text(render(course, grades, complete), encoding="utf-8")
    written = [out / "gradebook.csv", out / "gradebook.json", out / "report.html"]
    if gradescope:
        write_gradescope(out / "gradescope", grades, course)
        written.append(out / "gradescope")
    return written
