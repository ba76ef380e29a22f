"""Benchmark 4: how fast the learner's loop answers, command by command.

A learner runs ``pytest``, ``clawbook status``, ``clawbook check`` and ``clawbook watch`` a
hundred times while working through the book, so each must answer in about a second or two.
This benchmark makes a fresh copy of the repository's code with an untouched starter (what a
learner has after cloning), warms Python's bytecode caches with one untimed run, as any second
run on a learner's machine would find them, and then times each command as a learner types it.

The peer, measured in the same run, is the floor every command stands on: starting Python and
importing pytest (``python -m pytest --version``). Each command's time is also given as a
multiple of that floor, which reads the same on a fast laptop and a slow CI runner.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from clawbook.course import stubgen
from clawbook.instructor.reference import copy_repository

from .common import Result

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("claw", "clawbook", "solution", "tests", "pyproject.toml")
OWN_VARIABLES = ("CLAW_IMPL", "CLAW_IMPL_PATH", "CLAWBOOK_REPORT", "CLAWBOOK_CHAPTERS")

COMMANDS: list[tuple[str, str, list[str], dict[str, str], float]] = [
    ("pytest", "untouched starter, whole suite", ["-m", "pytest"], {}, 3.0),
    (
        "clawbook status --fresh",
        "untouched starter, every test run",
        ["-m", "clawbook", "status", "--fresh"],
        {},
        3.0,
    ),
    (
        "clawbook status",
        "nothing changed since the last run",
        ["-m", "clawbook", "status"],
        {},
        2.0,
    ),
    ("clawbook check ch01", "untouched starter", ["-m", "clawbook", "check", "ch01"], {}, 1.0),
    (
        "clawbook check ch14",
        "every test runs (--impl solution)",
        ["-m", "clawbook", "check", "ch14", "--impl", "solution"],
        {},
        3.0,
    ),
    (
        "clawbook check ch09b",
        "every test runs (--impl solution)",
        ["-m", "clawbook", "check", "ch09b", "--impl", "solution"],
        {},
        3.0,
    ),
]
"""(name, what, arguments to python, extra environment, target in seconds). ``status`` after
``status --fresh`` finds nothing changed: it reuses the results (``clawbook/learner/cache.py``)."""

EDITED = "permissions.py"
"""The starter file the "one file edited" measurement changes before each ``status``."""


def fresh_copy(into: Path) -> Path:
    """The repository's code and tests, with a freshly generated (untouched) starter."""
    repo = copy_repository(into / "repo", COPIED, ROOT)
    stubgen.write_tree(stubgen.render_tree(repo / "solution"), repo / "starter")
    return repo


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A learner's environment: bytecode caching on, none of clawbook's own settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in OWN_VARIABLES and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(extra or {})
    return env


def time_command(repo: Path, arguments: list[str], extra: dict[str, str]) -> tuple[float, str]:
    """Seconds one run of ``python <arguments>`` takes in ``repo``, and what it printed.

    ``PYTHONPATH`` names the copy: a process a test starts from a script elsewhere would
    otherwise import ``starter`` through this environment's editable install, which points at
    the repository the copy was made from, not at the copy (a learner's own checkout is where
    their install points).
    """
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, *arguments],
        cwd=repo,
        env=environment({"PYTHONPATH": str(repo), **extra}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started, completed.stdout + completed.stderr


def time_watch(repo: Path) -> float:
    """Seconds from starting ``clawbook watch`` to its first answer (the next chapter's tests)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "clawbook", "watch"],
        cwd=repo,
        env=environment({"PYTHONPATH": str(repo)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if "watching starter/ for changes" in line:
                return time.perf_counter() - started
        raise RuntimeError("clawbook watch ended without its first answer")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def run(quick: bool) -> list[Result]:
    """Time each command of the learner's loop against its target."""
    rounds = 2 if quick else 5
    with tempfile.TemporaryDirectory(prefix="clawbook-feedback-") as scratch:
        repo = fresh_copy(Path(scratch))
        time_command(repo, ["-m", "pytest"], {})  # fills the bytecode caches, untimed
        time_command(repo, ["-m", "pytest"], {"CLAW_IMPL": "solution"})
        floor = statistics.median(
            time_command(repo, ["-m", "pytest", "--version"], {})[0] for _ in range(rounds)
        )
        results = []
        for name, what, arguments, extra, target in COMMANDS:
            times = [time_command(repo, arguments, extra)[0] for _ in range(rounds)]
            results.append(_result(name, what, times, target, floor))
        edited = []
        for round_ in range(rounds):
            with (repo / "starter" / EDITED).open("a", encoding="utf-8") as file:
                file.write(f"# edited {round_}\n")
            edited.append(time_command(repo, ["-m", "clawbook", "status"], {})[0])
        results.append(
            _result("clawbook status", f"after editing starter/{EDITED}", edited, 3.0, floor)
        )
        watch = [time_watch(repo) for _ in range(rounds)]
        results.append(_result("clawbook watch", "until its first answer", watch, 3.0, floor))
        results.append(_solution_suite(repo, rounds, floor))
    return results


def _result(name: str, what: str, times: Sequence[float], target: float, floor: float) -> Result:
    middle = statistics.median(times)
    return Result(
        benchmark=name,
        metric=f"median wall time, {what}",
        value=middle,
        unit="s",
        target=target,
        better="lower",
        context={
            "times": ", ".join(f"{t:.2f} s" for t in times),
            "against the floor": f"{middle / floor:.1f}× `python -m pytest --version` "
            f"({floor:.2f} s, measured in the same run)",
        },
        raw={"times": list(times), "floor": floor},
    )


def _solution_suite(repo: Path, rounds: int, floor: float) -> Result:
    """The whole suite against the solution, in milliseconds per test."""
    times, count = [], 0
    for _ in range(rounds):
        seconds, output = time_command(repo, ["-m", "pytest", "-q"], {"CLAW_IMPL": "solution"})
        counts = [int(n) for n in re.findall(r"(\d+) (?:passed|skipped|failed)", output)]
        count = sum(counts)
        times.append(seconds)
    middle = statistics.median(times)
    per_test = middle / max(count, 1) * 1000
    return Result(
        benchmark="solution suite",
        metric=f"ms per test, CLAW_IMPL=solution pytest ({count} tests)",
        value=per_test,
        unit="ms",
        target=15.0,
        better="lower",
        context={
            "times": ", ".join(f"{t:.2f} s" for t in times),
            "against the floor": f"{middle / floor:.1f}× `python -m pytest --version` "
            f"({floor:.2f} s)",
        },
        raw={"times": times, "tests": count, "floor": floor},
    )
