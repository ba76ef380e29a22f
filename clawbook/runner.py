"""Run the shared test suite in a subprocess and read back one result per test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import impl
from .chapters import CHAPTERS_ENV, Chapter, Curriculum
from .chapters import load as load_curriculum
from .pytest_plugin import REPORT_ENV, TestResult

ROOT = Path(__file__).resolve().parent.parent
_OWN_VARIABLES = (impl.IMPL_ENV, impl.PATH_ENV, REPORT_ENV, CHAPTERS_ENV)


@dataclass(frozen=True)
class Run:
    """The results of one pytest run."""

    results: tuple[TestResult, ...]
    returncode: int
    output: str

    def for_chapter(self, chapter: Chapter) -> tuple[TestResult, ...]:
        """The results of a chapter's tests."""
        return tuple(r for r in self.results if r.chapter == chapter.id)


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


def run_pytest(
    args: Sequence[str] = (),
    *,
    implementation: str = "starter",
    impl_path: Path | None = None,
    root: Path = ROOT,
    extra_env: dict[str, str] | None = None,
) -> Run:
    """Run pytest on ``args`` against an implementation and collect every test's result."""
    with tempfile.TemporaryDirectory(prefix="clawbook-") as scratch:
        report = Path(scratch) / "report.json"
        # Start from a clean slate: an outer run's settings must not leak into this one.
        env = {k: v for k, v in os.environ.items() if k not in _OWN_VARIABLES}
        env.update({impl.IMPL_ENV: implementation, REPORT_ENV: str(report)})
        if impl_path is not None:
            env[impl.PATH_ENV] = str(impl_path)
        env.update(extra_env or {})
        command = pytest_command("-q", "--continue-on-collection-errors", *args)
        completed = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, check=False
        )
        raw = json.loads(report.read_text(encoding="utf-8")) if report.exists() else []
    results = tuple(TestResult(**item) for item in raw)
    return Run(
        results=results, returncode=completed.returncode, output=completed.stdout + completed.stderr
    )


@dataclass
class Progress:
    """How far a chapter has come, from its test results."""

    chapter: Chapter
    results: tuple[TestResult, ...] = field(default_factory=tuple)

    def count(self, outcome: str) -> int:
        """How many of the chapter's tests ended with ``outcome``."""
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def total(self) -> int:
        """How many tests the chapter has (a module that failed to import counts as one)."""
        return len(self.results)

    @property
    def passed(self) -> int:
        """How many of the chapter's tests pass."""
        return self.count("passed")

    @property
    def state(self) -> str:
        """One of ``coming``, ``reading``, ``done``, ``failing``, ``todo``, ``in progress``.

        ``coming``: the chapter is not written yet; ``reading``: it has no tests.
        """
        if not self.chapter.written:
            return "coming"
        if not self.results:
            return "reading"
        if self.count("failed") or self.count("error"):
            return "failing"
        if self.passed + self.count("skipped") == self.total:
            return "done"
        if self.passed == 0:
            return "todo"
        return "in progress"

    @property
    def first_problem(self) -> TestResult | None:
        """The first failure or import error, if any."""
        return next((r for r in self.results if r.outcome in ("failed", "error")), None)

    @property
    def first_todo(self) -> TestResult | None:
        """The first test still waiting for a stub."""
        return next((r for r in self.results if r.outcome == "todo"), None)


def progress(curriculum: Curriculum, run: Run) -> list[Progress]:
    """The progress of every chapter, in book order."""
    return [Progress(chapter, run.for_chapter(chapter)) for chapter in curriculum.chapters]


def next_chapter(report: Iterable[Progress]) -> Progress | None:
    """The first written chapter with tests that is not done yet."""
    return next((p for p in report if p.state in ("todo", "in progress", "failing")), None)
