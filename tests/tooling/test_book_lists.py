"""Pages that list what a chapter's tests hold: the page and the tests must agree.

These live here, not in the chapter's tests, because a chapter's tests also run where the book
is not: a graded submission's scratch copy has the instructor's tests and the learner's code.
"""

import re

from test_patch_codex import BOOK, DIFFERS


def test_every_deliberate_difference_from_codex_is_listed_on_the_ch09b_page():
    page = re.sub(r"\s+", " ", BOOK.read_text(encoding="utf-8"))
    missing = [d.page for d in DIFFERS if d.page not in page]
    assert not missing, f"list these differences on {BOOK.name}: {missing}"


def test_the_chapters_tests_need_only_tests_and_the_package_under_test(tmp_path):
    """What ``clawbook grade`` has: the instructor's tests and a package, no book, no solution/."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from clawbook.instructor.grade import copy_repository

    repo = Path(__file__).resolve().parents[2]
    copy = copy_repository(tmp_path / "repo", ("claw", "clawbook", "tests", "pyproject.toml"), repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAW", "PYTEST"))}
    env.update(CLAW_IMPL="solution", CLAW_IMPL_PATH=str(repo), CLAWBOOK_EXAMPLES="quick")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"],
        cwd=copy, env=env, capture_output=True, text=True, check=False, timeout=500,
    )  # fmt: skip
    tail = completed.stdout[-3000:]
    assert completed.returncode == 0, tail
    assert " passed" in tail and "failed" not in tail
