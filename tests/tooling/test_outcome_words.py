"""One word per idea (issue 42): a test's outcome and a grade row's status are enums.

``report.Outcome`` (how a test ended, and why a run stopped in one) and ``rows.RowStatus`` (how
grading a submission went) are ``StrEnum``s whose values are the words the results file, the
learner's tools and the gradebook have always written. Each test here goes through the real
writer and reader: what comes back is a member, never a bare string; a word no member has is an
error that names it; and a script reading the gradebook still finds the old words.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest

from clawbook.course.chapters import load
from clawbook.harness import report
from clawbook.harness.runner import Run
from clawbook.instructor import gradebook, reference, rows, sandbox
from clawbook.learner import cache

OUTCOME_WORDS = ("passed", "failed", "todo", "skipped", "error", "hung", "crashed", "timeout")
"""What a results file says of a test: the words scripts and earlier results files use."""
STATUS_WORDS = ("ok", "hung", "timeout", "crashed", "cannot-import", "error", "invalid")
"""A gradebook row's statuses, as the README and the grading appendix list them."""
MOCK_FILE = "tests/test_mock_provider.py"
MOCK_TEST = f"{MOCK_FILE}::test_mock_x"


def mock_result(outcome: report.Outcome) -> report.TestResult:
    """A result of ch01's test file with every field a results file carries."""
    return report.TestResult(
        MOCK_TEST, MOCK_FILE, "ch01", outcome, message="AssertionError: 1 == 2", line=12,
        where=report.Location("starter/mock.py", 53, "return self._script", "remaining"),
    )  # fmt: skip


@pytest.mark.parametrize("word", OUTCOME_WORDS)
def test_an_outcome_is_written_as_its_word_and_read_back_as_its_member(
    tmp_path: Path, word: str
) -> None:
    result = mock_result(report.Outcome(word))
    path = tmp_path / "results.jsonl"
    writer = report.ReportWriter(path)
    writer.result(result)
    writer.close()
    assert json.loads(path.read_text(encoding="utf-8"))["outcome"] == word
    assert f'"outcome": "{word}"' in path.read_text(encoding="utf-8")
    reader = report.ReportReader(path)
    reader.poll()
    back = reader.report.results[MOCK_TEST]
    assert back == result
    assert type(back.outcome) is report.Outcome and back.outcome is report.Outcome(word)
    again = report.TestResult.from_json(json.loads(json.dumps(asdict(result))))
    assert again == result and type(again.outcome) is report.Outcome


def test_an_unknown_outcome_in_a_results_file_is_an_error_that_names_it(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    line = {"event": "result", "nodeid": MOCK_TEST, "file": MOCK_FILE, "chapter": "ch01"}
    path.write_text(json.dumps({**line, "outcome": "timed out"}) + "\n", encoding="utf-8")
    expected = (
        f"unknown test outcome 'timed out' for {MOCK_TEST}: expected one of "
        "passed, failed, todo, skipped, error, hung, crashed, timeout"
    )
    with pytest.raises(ValueError, match=re.escape(expected)):
        report.ReportReader(path).poll()


def test_a_cached_result_with_an_unknown_outcome_is_run_again_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mock_provider.py").write_text("def test_mock_x():\n    pass\n")
    asked: list[list[str]] = []

    def run(files: list[str]) -> Run:
        asked.append(list(files))
        return Run((mock_result(report.Outcome.PASSED),), 0, "", collected=(MOCK_TEST,))

    curriculum = load()
    cache.cached_run(curriculum, "starter", 10.0, run, root=tmp_path)
    stored = cache.cache_file(tmp_path, "starter")
    data = json.loads(stored.read_text(encoding="utf-8"))
    data["files"][MOCK_FILE]["results"][0]["outcome"] = "timed out"
    stored.write_text(json.dumps(data), encoding="utf-8")
    again, _reuse = cache.cached_run(curriculum, "starter", 10.0, run, root=tmp_path)
    assert asked == [[MOCK_FILE], [MOCK_FILE]]
    assert [r.outcome for r in again.results] == [report.Outcome.PASSED]


def test_a_gradebook_row_says_the_words_scripts_read(tmp_path: Path) -> None:
    """CSV, JSON and Gradescope's file say exactly the words they said before the enums."""
    assert [status.value for status in rows.RowStatus] == list(STATUS_WORDS)
    failing = [report.Outcome(w) for w in ("failed", "hung", "crashed", "timeout", "error")]
    failures = [rows.Failure(MOCK_TEST, "ch01", o, "message", "mock.py:53") for o in failing]
    scores = [rows.ChapterScore("ch01", 1, 3, 0, 2)]
    grades = [
        rows.Grade(f"learner-{number}", status, "why", chapters=scores, failures=failures)
        for number, status in enumerate(rows.RowStatus)
    ]
    gradebook.write_csv(tmp_path / "gradebook.csv", ["ch01"], grades)
    with (tmp_path / "gradebook.csv").open(encoding="utf-8", newline="") as file:
        assert [row["status"] for row in csv.DictReader(file)] == list(STATUS_WORDS)
    isolation = sandbox.Isolation(None, "not installed")
    limits = reference.SubmissionLimits()
    gradebook.write_json(tmp_path / "gradebook.json", ["ch01"], grades, limits, True, isolation)
    data = json.loads((tmp_path / "gradebook.json").read_text(encoding="utf-8"))
    assert [row["status"] for row in data["submissions"]] == list(STATUS_WORDS)
    for row in data["submissions"]:
        assert [f["outcome"] for f in row["failures"]] == [
            "failed", "hung", "crashed", "timeout", "error"
        ]  # fmt: skip
    course = reference.Course(load(), [load().get("ch01")])
    scope = gradebook.gradescope_results(grades[4], course)
    assert "status: cannot-import." in scope["output"]
    assert "test_mock_x (hung)" in scope["tests"][0]["output"]
