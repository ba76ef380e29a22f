"""The clawbook command's exit codes and messages for things a learner types wrong."""

import subprocess
import sys


def clawbook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawbook", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def test_an_unknown_chapter_is_a_usage_error_that_lists_the_chapters():
    result = clawbook("check", "ch99")
    assert result.returncode == 2
    assert "no chapter 'ch99'" in result.stdout
    assert "ch01" in result.stdout


def test_hint_for_a_reading_chapter_says_there_is_nothing_to_write():
    result = clawbook("hint", "ch04")
    assert result.returncode == 0
    assert "reading chapter" in result.stdout


def test_reset_without_a_terminal_refuses_unless_confirmed():
    result = clawbook("reset", "ch01")
    assert result.returncode == 2
    assert "--yes" in result.stdout


def test_a_reading_chapter_with_passing_tests_checks_as_done():
    result = clawbook("check", "ch04")
    assert result.returncode == 0, result.stdout
    assert "ch04 is done" in result.stdout
