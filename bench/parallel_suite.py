"""Benchmark: the whole suite in one process, and spread over pytest-xdist's workers.

A learner who has finished every chapter and runs ``clawbook status --fresh`` (or anyone
running the solution suite) waits for about 1,500 tests. Spread over worker processes, they
can run at once (``clawbook/learner/console.py``'s ``workers_for``: two per CPU, at most 8, on
a machine with two CPUs or more; this benchmark uses what it chooses, and at least 2).

Both sides run in this benchmark, alternately, on the same fresh copy of the repository: the
peer is the same command in one process (``CLAWBOOK_WORKERS=0``, or pytest without ``-n``).
The number is the ratio of the two medians; the target is 0.6.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from clawbook.learner.console import workers_for

from .common import Result
from .feedback import fresh_copy, time_command

TARGET = 0.6
"""At most this share of the one-process time."""

STATUS = ["-m", "clawbook", "status", "--fresh", "--impl", "solution"]
SUITE = ["-m", "pytest", "-q", "-p", "no:randomly", "--ignore=tests/tooling"]
SPREAD = ["-n", str(max(2, workers_for(1_000))), "--dist", "worksteal"]
"""As ``clawbook status`` spreads a run: a worker that is done takes tests from the others,
so a few long tests at the end (the pseudo-terminal ones) do not all wait in one queue."""


def run(quick: bool) -> list[Result]:
    """Time ``clawbook status --fresh`` and the solution suite, in one process and spread."""
    rounds = 1 if quick else 2
    workers = max(2, workers_for(1_000))
    results = []
    with tempfile.TemporaryDirectory(prefix="clawbook-parallel-") as scratch:
        repo = fresh_copy(Path(scratch))
        time_command(repo, SUITE, {"CLAW_IMPL": "solution"})  # fills the bytecode caches
        results.append(
            _compare(
                "clawbook status --fresh",
                "every chapter done (--impl solution)",
                rounds,
                lambda: time_command(repo, STATUS, {"CLAWBOOK_WORKERS": "0"}),
                lambda: time_command(repo, STATUS, {"CLAWBOOK_WORKERS": str(workers)}),
                workers,
            )
        )
        results.append(
            _compare(
                "solution suite",
                "CLAW_IMPL=solution pytest, tests/tooling aside",
                rounds,
                lambda: time_command(repo, SUITE, {"CLAW_IMPL": "solution"}),
                lambda: time_command(repo, [*SUITE, *SPREAD], {"CLAW_IMPL": "solution"}),
                workers,
            )
        )
    return results


Timed = Callable[[], tuple[float, str]]
"""One timed run: its seconds and what it printed."""


def _compare(
    name: str, what: str, rounds: int, alone: Timed, spread: Timed, workers: int
) -> Result:
    """Run ``alone`` and ``spread`` alternately ``rounds`` times; their ratio as a result."""
    one, many, loads = [], [], []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        seconds, output = alone()
        one.append(seconds)
        _check(name, output)
        seconds, output = spread()
        many.append(seconds)
        _check(name, output)
    ratio = statistics.median(many) / statistics.median(one)
    return Result(
        benchmark=name,
        metric=f"{workers} workers / one process, {what}",
        value=ratio,
        unit="×",
        target=TARGET,
        better="lower",
        context={
            "one process": ", ".join(f"{t:.1f} s" for t in one),
            f"{workers} workers": ", ".join(f"{t:.1f} s" for t in many),
            "machine": f"{os.cpu_count()} CPUs, load {', '.join(f'{x:.1f}' for x in loads)}",
        },
        raw={"one": one, "many": many, "workers": workers},
    )


def _check(name: str, output: str) -> None:
    """A run that failed or broke off measures nothing: say so instead of a number."""
    if re.search(r"\b\d+ failed\b|seems to loop forever|crashed|not run", output):
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise RuntimeError(f"{name}: the run did not pass, so its time means nothing:\n{tail}")
