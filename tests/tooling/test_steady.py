"""The reference passes every chapter's tests on a machine made slow on purpose.

A learner's laptop runs a browser, an editor and a build beside the tests; a grader runs two
submissions at once; CI shares its cores. A test that decides on a wall-clock margin (a sleep
raced against a limit, "finished within 2 s") passes on a quiet machine and fails there, on the
reference code, and a learner is told their correct code is wrong. So the suite runs here with
four CPU-bound processes beside its two workers: every process gets a third of a CPU, as if
the machine were three times slower. No test may fail or be stopped as a loop.

The run also proves that the chapters' tests need only ``tests/`` and the package under test:
it runs in a copy that has no ``book/``, no ``bench/`` and no ``solution/`` beside the tests
(``clawbook grade`` gives a submission's tests just that).
"""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from clawbook.instructor.reference import copy_repository

REPO = Path(__file__).resolve().parents[2]
HOGS = 4
"""CPU-bound processes beside the two workers: six runnable processes on a two-CPU machine."""
HOG = "while True: pass"


@pytest.mark.timeout(900)
def test_the_reference_passes_every_test_with_the_cpus_busy_and_only_tests_beside_it(tmp_path):
    copy = copy_repository(tmp_path / "repo", ("claw", "clawbook", "tests", "pyproject.toml"), REPO)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAW", "PYTEST"))}
    env.update(CLAW_IMPL="solution", CLAW_IMPL_PATH=str(REPO), CLAWBOOK_EXAMPLES="quick")
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(HOGS)]
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"],
            cwd=copy, env=env, capture_output=True, text=True, check=False, timeout=840,
        )  # fmt: skip
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGKILL)
            hog.wait()
    tail = completed.stdout[-4000:]
    failures = re.findall(r"^(?:FAILED|ERROR) .*$", completed.stdout, re.MULTILINE)
    assert completed.returncode == 0 and not failures, "\n".join([*failures, tail])
    assert re.search(r"\d+ passed", tail), tail
