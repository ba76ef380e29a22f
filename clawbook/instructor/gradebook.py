"""The gradebook ``clawbook grade`` writes for a class.

``gradebook.csv`` (a row per submission, no cell a spreadsheet would run as a formula),
``gradebook.json`` (the rows with every failing test), ``report.html``
(``instructor.gradereport``) and, if asked, Gradescope's ``results.json`` per submission. Any
value of a secret-looking variable of the grader's environment is blanked out of the rows first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from clawbook.instructor import sandbox
from clawbook.instructor.gradereport import render
from clawbook.instructor.reference import Course, SubmissionLimits
from clawbook.instructor.rows import ChapterScore, Grade


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
    found = {v for k, v in os.environ.items() if sandbox.SECRET_WORDS.search(k) and len(v) >= 8}
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
    limits: SubmissionLimits,
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
    (out / "report.html").write_text(render(course, grades, complete), encoding="utf-8")
    written = [out / "gradebook.csv", out / "gradebook.json", out / "report.html"]
    if gradescope:
        write_gradescope(out / "gradescope", grades, course)
        written.append(out / "gradescope")
    return written
