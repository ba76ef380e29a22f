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


def test_help_documents_the_exit_codes_scripts_rely_on():
    for args in (("--help",), ("check", "--help"), ("status", "--help")):
        result = clawbook(*args)
        assert result.returncode == 0
        for line in ("0    done", "1    a test fails", "2    usage error", "3    nothing fails"):
            assert line in result.stdout, (args, result.stdout)


def test_check_k_runs_only_the_selected_tests_and_never_claims_the_chapter_done():
    result = clawbook("check", "ch04", "-k", "frozen or unknown")
    assert result.returncode == 0, result.stdout
    assert "these pass" in result.stdout and "ch04 is done" not in result.stdout
    names = [line for line in result.stdout.splitlines() if line.strip().startswith("✓ test_")]
    assert names and all("frozen" in n or "unknown" in n for n in names)


def test_check_k_that_selects_nothing_is_a_usage_error():
    result = clawbook("check", "ch04", "-k", "no_such_test_name")
    assert result.returncode == 2
    assert "No test of ch04 matches" in result.stdout
