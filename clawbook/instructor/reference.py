"""What a class is graded against: the course's chapters, the limits and the reference run.

``Course`` holds the instructor's tree, the chapters graded (``select_chapters``), what one
submission may use (``SubmissionLimits``) and, once ``prepare`` ran the instructor's tests
against ``solution/``, each chapter's tests: every learner is graded against that same
denominator.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import CHAPTERS_ENV, Chapter, Curriculum
from clawbook.harness.report import Outcome
from clawbook.harness.runner import ROOT, Run, chapter_test_files, default_timeout, run_pytest
from clawbook.instructor import sandbox

DEFAULT_WALL_TIME = 300.0
"""Seconds a whole submission may take (the reference solution needs a few)."""
DEFAULT_MEMORY = 2 * 1024**3
"""Bytes of address space the test process may use."""
DEFAULT_FILE_SIZE = 256 * 1024**2
"""The largest file the test process may write."""
HYPOTHESIS_TABLES = Path(".hypothesis") / "unicode_data"


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


@dataclass(frozen=True)
class SubmissionLimits:
    """What one submission may use."""

    wall_time: float = DEFAULT_WALL_TIME
    """Seconds for the whole submission, resumed runs included."""
    test_timeout: float = field(default_factory=default_timeout)
    """Seconds one test may run before it is stopped as an endless loop."""
    memory: int = DEFAULT_MEMORY
    """Bytes of address space (``RLIMIT_AS``)."""
    file_size: int = DEFAULT_FILE_SIZE
    """The largest file the tests may write (``RLIMIT_FSIZE``)."""


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


@dataclass
class Course:
    """What every submission is graded against: the instructor's tree, chapters and tests."""

    curriculum: Curriculum
    chapters: list[Chapter]
    root: Path = ROOT
    limits: SubmissionLimits = field(default_factory=SubmissionLimits)
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
                extra_env=chapters_variable(),
                timeout=self.limits.test_timeout,
            )
            tables = work / HYPOTHESIS_TABLES
            self.tables = {
                path.relative_to(work).as_posix(): path.read_bytes()
                for path in sorted(tables.rglob("*"))
                if path.is_file()
            }
        refused = run.stopped is not None and run.stopped.reason == Outcome.ERROR
        if run.collected is None or refused:
            raise RuntimeError(
                "cannot run the instructor's tests against solution/: "
                + (run.stopped.detail if run.stopped else run.output[-2000:])
            )
        skipped = {r.nodeid for r in run.results if r.outcome == Outcome.SKIPPED}
        self.expected = {c.id: [] for c in self.chapters}
        for nodeid in run.collected:
            chapter = self.curriculum.chapter_for_test_file(nodeid.split("::")[0])
            if chapter is not None and chapter.id in self.expected and nodeid not in skipped:
                self.expected[chapter.id].append(nodeid)
        return run


def chapters_variable() -> dict[str, str]:
    """``CLAWBOOK_CHAPTERS`` for a test run, if the grader's environment sets it (else nothing)."""
    value = os.environ.get(CHAPTERS_ENV)
    return {CHAPTERS_ENV: value} if value else {}
