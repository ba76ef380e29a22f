"""`clawbook grade` on a synthetic class built from the solution, row by row.

The class: starters with the regions of chapters <= k filled in for several k, one with a
planted bug, one with an endless loop, one that segfaults, one with a syntax error, one whole
clone whose tests were edited to pass, two archives of earlier submissions, an archive that
tries to write outside its folder, and a folder without a starter. Every row of the gradebook
is checked against how its submission was built. Grading covers ch01..ch03 with a short per-test
limit (5 s here), so the whole module takes about a minute on two cores.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from clawbook.course import stubgen
from clawbook.course.chapters import load
from clawbook.harness.report import Outcome
from clawbook.instructor import grade, gradebook, intake, reference
from clawbook.instructor.rows import ChapterScore, Failure, Grade, RowStatus

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = ("ch01", "ch02", "ch03")
BODY = "        return len(self._script)\n"
"""The body of MockProvider.remaining (ch01), where the bug, the loop and the crash go."""
OWN_VARIABLES = ("CLAW_IMPL", "CLAW_IMPL_PATH", "CLAWBOOK_REPORT", "CLAWBOOK_CHAPTERS")


def filled(folder: Path, *chapters: str) -> Path:
    """A submission: ``folder/starter`` with the regions of ``chapters`` filled in."""
    stubgen.write_tree(
        stubgen.render_tree(REPO / "solution", keep=set(chapters)), folder / "starter"
    )
    return folder


def plant(folder: Path, old: str, new: str) -> int:
    """Replace ``old`` (once) in the submission's mock.py; the 1-based line of the change."""
    mock = folder / "starter" / "mock.py"
    text = mock.read_text()
    assert text.count(old) == 1
    mock.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def instructor_files() -> dict[str, bytes]:
    """The instructor's files the graded chapters use (others may be edited meanwhile)."""
    curriculum = load()
    names = ["tests/conftest.py", "pyproject.toml"]
    for chapter_id in CHAPTERS:
        chapter = curriculum.get(chapter_id)
        names += [f"starter/{f}" for f in chapter.files]
        names += [str(p.relative_to(REPO)) for g in chapter.test_globs for p in REPO.glob(g)]
    return {name: (REPO / name).read_bytes() for name in names}


def reference_counts() -> dict[str, int]:
    """How many tests each graded chapter has, counted by pytest against the solution."""
    curriculum = load()
    counts = {}
    for chapter_id in CHAPTERS:
        files = [str(p.relative_to(REPO)) for g in curriculum.get(chapter_id).test_globs
                 for p in sorted(REPO.glob(g))]  # fmt: skip
        files = [f for f in files if curriculum.chapter_for_test_file(f).id == chapter_id]
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             *files],
            cwd=REPO, env={**environment(), "CLAW_IMPL": "solution"}, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
        counts[chapter_id] = sum(1 for line in result.stdout.splitlines() if "::" in line)
    return counts


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in OWN_VARIABLES}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Build the class, grade it once with the real command, and read everything it wrote."""
    base = tmp_path_factory.mktemp("class")
    subs = base / "submissions"
    lines = {}
    filled(subs / "untouched")
    filled(subs / "upto-ch01", "ch01")
    filled(subs / "upto-ch02", "ch01", "ch02")
    filled(subs / "upto-ch03", *CHAPTERS)
    lines["bug"] = plant(
        filled(subs / "bug", *CHAPTERS), BODY, "        return self._script.size()\n"
    )
    lines["loop"] = plant(
        filled(subs / "loop", *CHAPTERS), BODY, "        while True:\n            pass\n"
    )
    lines["crash"] = plant(
        filled(subs / "crash", *CHAPTERS), BODY,
        "        import ctypes\n        ctypes.string_at(0)\n" + BODY,
    ) + 1  # fmt: skip
    lines["syntax"] = plant(
        filled(subs / "syntax", *CHAPTERS),
        "    def remaining(self) -> int:", "    def remaining(self) -> int",
    )  # fmt: skip
    # A whole clone whose tests were edited to pass and that carries a conftest of its own:
    # neither counts, so it grades exactly as the untouched starter does.
    clone = filled(subs / "edited-tests")
    shutil.copytree(
        REPO / "tests", clone / "tests", ignore=shutil.ignore_patterns("tooling", "__pycache__")
    )
    for test_file in (clone / "tests").glob("test_*.py"):
        text = test_file.read_text()
        test_file.write_text(text + "\n\ndef test_mock_extra():\n    assert True\n")
    (clone / "tests" / "conftest.py").write_text(
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    yield\n"
    )
    (clone / "starter" / "conftest.py").write_text("raise SystemExit('a conftest ran')\n")
    (clone / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\naddopts = ['-p', 'no:clawbook']\n"
    )
    # Archives: a zip of upto-ch01 inside a folder, a tar.gz of upto-ch02 at its top.
    archives = base / "archives"
    archives.mkdir()
    with zipfile.ZipFile(archives / "zipped.zip", "w") as zipped:
        for path in sorted((subs / "upto-ch01").rglob("*")):
            zipped.write(path, "alice/" + str(path.relative_to(subs / "upto-ch01")))
    with tarfile.open(archives / "tarred.tar.gz", "w:gz") as tarred:
        tarred.add(subs / "upto-ch02" / "starter", "starter")
    with zipfile.ZipFile(archives / "evil.zip", "w") as zipped:
        zipped.writestr("starter/__init__.py", "")
        zipped.writestr("../outside.py", "print('escaped')\n")
    with tarfile.open(archives / "linked.tar.gz", "w:gz") as tarred:
        tarred.add(subs / "untouched" / "starter", "starter")
        link = tarfile.TarInfo("starter/secrets")
        link.type, link.linkname = tarfile.SYMTYPE, "../../../../etc"
        tarred.addfile(link)
    (subs / "empty").mkdir()
    (subs / "empty" / "README.md").write_text("I forgot my code\n")

    paths = sorted(subs.iterdir()) + sorted(archives.iterdir())
    before = {p.name: snapshot(p) if p.is_dir() else p.read_bytes() for p in paths}
    instructor_before = instructor_files()
    out = base / "out"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "clawbook", "grade", *map(str, paths), "--out", str(out),
         "--chapters", "ch01..ch03", "--workers", "2", "--timeout", "5", "--gradescope"],
        cwd=REPO, env={**environment(), "OPENROUTER_API_KEY": "sk-must-not-leak",
                       "HTTPS_PROXY": "http://127.0.0.1:9"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    after = {p.name: snapshot(p) if p.is_dir() else p.read_bytes() for p in paths}
    with (out / "gradebook.csv").open(newline="") as file:
        rows = {row["submission"]: row for row in csv.DictReader(file)}
    return {
        "result": result,
        "elapsed": elapsed,
        "out": out,
        "rows": rows,
        "json": json.loads((out / "gradebook.json").read_text()),
        "lines": lines,
        "unchanged": before == after,
        "instructor_unchanged": instructor_before == instructor_files(),
        "base": base,
        "counts": reference_counts(),
    }


def row(graded, name):
    return graded["rows"][name]


def entry(graded, name):
    return next(s for s in graded["json"]["submissions"] if s["submission"] == name)


def assert_progression(graded, name, done):
    """Chapters in ``done`` pass completely; every later one is todo to the last test."""
    r = row(graded, name)
    counts = graded["counts"]
    for chapter in CHAPTERS:
        assert int(r[f"{chapter}_total"]) == counts[chapter], (name, chapter)
        expected = counts[chapter] if chapter in done else 0
        assert int(r[f"{chapter}_passed"]) == expected, (name, chapter)
    assert int(r["passed"]) == sum(counts[c] for c in done)
    assert int(r["todo"]) == sum(counts[c] for c in CHAPTERS if c not in done)
    assert int(r["failing"]) == 0
    assert r["status"] == "ok", r
    assert r["detail"] == ""


def test_grade_writes_a_row_per_submission_and_exits_1_when_some_are_not_ok(graded):
    result = graded["result"]
    assert result.returncode == 1, result.stdout + result.stderr
    assert set(graded["rows"]) == {
        "bug", "crash", "edited-tests", "empty", "evil", "linked", "loop", "syntax",
        "tarred", "untouched", "upto-ch01", "upto-ch02", "upto-ch03", "zipped",
    }  # fmt: skip
    header = next(csv.reader((graded["out"] / "gradebook.csv").open()))
    assert header == [
        "submission", "ch01_passed", "ch01_total", "ch02_passed", "ch02_total",
        "ch03_passed", "ch03_total", "passed", "total", "todo", "failing", "status", "seconds",
        "detail",
    ]  # fmt: skip
    assert graded["elapsed"] < 150


@pytest.mark.parametrize(
    ("name", "done"),
    [
        ("untouched", ()),
        ("upto-ch01", ("ch01",)),
        ("upto-ch02", ("ch01", "ch02")),
        ("upto-ch03", CHAPTERS),
        ("edited-tests", ()),
        ("zipped", ("ch01",)),
        ("tarred", ("ch01", "ch02")),
    ],
)
def test_grade_a_starter_filled_up_to_a_chapter_passes_exactly_those_chapters(graded, name, done):
    assert_progression(graded, name, done)


def test_grade_a_planted_bug_fails_its_tests_at_the_learners_line_and_nothing_else(graded):
    r, e = row(graded, "bug"), entry(graded, "bug")
    assert r["status"] == "ok"
    assert int(r["failing"]) > 0
    assert int(r["passed"]) + int(r["failing"]) == int(r["total"])
    assert int(r["ch02_passed"]) == int(r["ch02_total"])
    assert len(e["failures"]) == int(r["failing"])
    for failure in e["failures"]:
        assert failure["outcome"] == "failed"
        assert "AttributeError" in failure["message"] and "size" in failure["message"]
        assert failure["where"] == f"starter/mock.py:{graded['lines']['bug']}"
        assert failure["chapter"] in ("ch01", "ch03")


def test_grade_an_endless_loop_costs_only_the_tests_that_reach_it(graded):
    r, e = row(graded, "loop"), entry(graded, "loop")
    assert r["status"] == "hung"
    assert "seems to loop forever" in r["detail"]
    # The run resumed after each loop: every other test ran, and it is the bug's set exactly.
    assert int(r["passed"]) + int(r["failing"]) == int(r["total"])
    bug_tests = {f["test"] for f in entry(graded, "bug")["failures"]}
    assert {f["test"] for f in e["failures"]} == bug_tests
    line = graded["lines"]["loop"]
    for failure in e["failures"]:
        assert failure["outcome"] == "hung"
        assert failure["where"] in (f"starter/mock.py:{line}", f"starter/mock.py:{line + 1}")
    # The row says the chapter the loop holds the learner in, and the page lists the looping
    # tests once, at their one line.
    assert e["standing"].startswith("stuck at ch01: hung: "), e["standing"]
    page = (graded["out"] / "report.html").read_text()
    section = page[page.index('id="learner-loop"') :].split("</section>")[0]
    assert section.count("<li>") == 1


def test_grade_a_segfault_is_a_crashed_row_and_the_other_tests_still_run(graded):
    r, e = row(graded, "crash"), entry(graded, "crash")
    assert r["status"] == "crashed"
    assert "Segmentation fault" in r["detail"]
    assert f"starter/mock.py:{graded['lines']['crash']}" in r["detail"]
    assert int(r["passed"]) + int(r["failing"]) == int(r["total"])
    bug_tests = {f["test"] for f in entry(graded, "bug")["failures"]}
    assert {f["test"] for f in e["failures"]} == bug_tests


def test_grade_a_syntax_error_is_cannot_import_with_its_line(graded):
    r = row(graded, "syntax")
    assert r["status"] == "cannot-import"
    assert f"starter/mock.py:{graded['lines']['syntax']}" in r["detail"]
    assert "SyntaxError" in r["detail"]
    assert int(r["ch01_passed"]) == 0
    chapters = entry(graded, "syntax")["chapters"]
    assert chapters["ch01"]["failing"] == chapters["ch01"]["total"]
    assert chapters["ch02"]["passed"] == chapters["ch02"]["total"]  # read.py imports no mock
    errors = [f for f in entry(graded, "syntax")["failures"] if f["outcome"] == "error"]
    assert errors and all("SyntaxError" in f["message"] for f in errors)
    # One cause, said once: the row is stuck in the chapter of the broken file, and ch03, which
    # only cannot import it, is blocked by it rather than failing on its own.
    cause = f"cannot import starter/mock.py (line {graded['lines']['syntax']})"
    assert entry(graded, "syntax")["standing"] == f"stuck at ch01: {cause}"
    assert chapters["ch03"]["blocked"] == chapters["ch03"]["failing"] > 0
    assert all(f["cause"] == cause for f in entry(graded, "syntax")["failures"])
    page = (graded["out"] / "report.html").read_text()
    section = page[page.index('id="learner-syntax"') :].split("</section>")[0]
    assert section.count("SyntaxError") == 1, section


def test_grade_unsafe_archives_and_missing_starters_are_invalid_rows(graded):
    assert row(graded, "evil")["status"] == "invalid"
    assert "outside" in row(graded, "evil")["detail"]
    assert row(graded, "linked")["status"] == "invalid"
    assert "points outside" in row(graded, "linked")["detail"]
    assert not (graded["base"] / "outside.py").exists()
    assert row(graded, "empty")["status"] == "invalid"
    assert "no starter/" in row(graded, "empty")["detail"]
    for name in ("evil", "linked", "empty"):
        assert int(row(graded, name)["passed"]) == 0
        assert int(row(graded, name)["total"]) == sum(graded["counts"].values())


def test_grade_changes_neither_the_submissions_nor_the_instructors_tree(graded):
    assert graded["unchanged"]
    assert graded["instructor_unchanged"]


def test_grade_report_html_has_the_class_table_a_chart_and_a_section_per_learner(graded):
    page = (graded["out"] / "report.html").read_text()
    assert "<script" not in page
    assert "<svg" in page
    for name in graded["rows"]:
        assert f'id="learner-{name}"' in page
    assert "return self._script.size()" not in page or "AttributeError" in page


def test_grade_gradescope_results_follow_the_documented_format(graded):
    for name, r in graded["rows"].items():
        data = json.loads((graded["out"] / "gradescope" / name / "results.json").read_text())
        assert data["score"] == int(r["passed"])
        assert [t["name"].split(" · ")[0] for t in data["tests"]] == list(CHAPTERS)
        for test, chapter in zip(data["tests"], CHAPTERS, strict=True):
            assert test["score"] == int(r[f"{chapter}_passed"])
            assert test["max_score"] == int(r[f"{chapter}_total"])
            assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
            assert isinstance(test["output"], str)
        assert sum(t["score"] for t in data["tests"]) == data["score"]
    bug = json.loads((graded["out"] / "gradescope" / "bug" / "results.json").read_text())
    assert f"starter/mock.py:{graded['lines']['bug']}" in bug["tests"][0]["output"]


def test_grade_the_tests_see_no_secret_no_proxy_and_a_scratch_home(tmp_path):
    """A submission that reads its environment: what it sees is what the grader passed on."""
    sub = filled(tmp_path / "spy", *CHAPTERS)
    plant(sub, BODY, "        import os\n        assert 0, sorted(os.environ)\n")
    course = reference.Course(load(), [load().get("ch01")],
                          limits=reference.SubmissionLimits(test_timeout=5))  # fmt: skip
    course.prepare()
    os.environ["CLAWBOOK_TEST_API_KEY"] = "sk-secret"
    os.environ["http_proxy"] = "http://127.0.0.1:9"
    try:
        result = grade.grade_submission(course, intake.Submission("spy", sub))
    finally:
        del os.environ["CLAWBOOK_TEST_API_KEY"], os.environ["http_proxy"]
    messages = " ".join(f.message for f in result.failures)
    assert "HOME" in messages
    assert "CLAWBOOK_TEST_API_KEY" not in messages and "http_proxy" not in messages


def test_grade_every_submission_gets_the_unicode_tables_the_reference_built(tmp_path):
    """Hypothesis builds them once (seconds); a submission's run must not pay for them again."""
    course = reference.Course(
        load(), [load().get("ch01")], limits=reference.SubmissionLimits(test_timeout=5)
    )
    course.prepare()
    assert any(name.endswith("charmap.json.gz") for name in course.tables)
    sub = filled(tmp_path / "learner", *CHAPTERS)
    work = grade._set_up(course, intake.Submission("learner", sub), tmp_path / "scratch")
    for name, content in course.tables.items():
        assert (work / name).read_bytes() == content


def test_grade_a_network_call_fails_the_tests_that_make_it(tmp_path):
    sub = filled(tmp_path / "chatty", *CHAPTERS)
    call = "        socket.create_connection(('192.0.2.1', 80))\n"
    line = plant(sub, BODY, "        import socket\n" + call + BODY) + 1
    course = reference.Course(
        load(), [load().get("ch01")], limits=reference.SubmissionLimits(test_timeout=5)
    )
    course.prepare()
    result = grade.grade_submission(course, intake.Submission("chatty", sub))
    assert result.status == RowStatus.OK
    assert result.failures
    for failure in result.failures:
        assert "NetworkBlocked" in failure.message
        assert failure.where == f"starter/mock.py:{line}"


def test_grade_a_cancel_stops_the_class_and_keeps_the_rows_that_finished(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # this test's runs, no one else's
    subs = [filled(tmp_path / f"s{i}", "ch01") for i in range(4)]
    plant(subs[1], BODY, "        while True:\n            pass\n")
    course = reference.Course(
        load(), [load().get("ch01")], limits=reference.SubmissionLimits(test_timeout=30)
    )
    course.prepare()
    cancel = threading.Event()
    done = []

    def on_done(row):
        done.append(row)
        cancel.set()

    started = time.monotonic()
    # Two workers: s1 is looping (for up to 30 s a test) when s0 finishes and cancels.
    rows = grade.grade_class(course, intake.submissions(subs), 2, on_done, cancel)
    assert time.monotonic() - started < 20  # the looping one was stopped, not waited for
    assert [r.submission for r in rows] == ["s0"]

    def leftover() -> list[str]:
        return [
            pid for pid in os.listdir("/proc") if pid.isdigit()
            and _cwd(pid).startswith(str(scratch))
        ]  # fmt: skip

    deadline = time.monotonic() + 3  # killed ones may take a moment to be reaped on a busy box
    while leftover() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not leftover()
    assert not list(scratch.iterdir())  # every scratch folder was removed


def _cwd(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def test_grade_memory_is_limited_for_the_tests(tmp_path):
    sub = filled(tmp_path / "greedy", *CHAPTERS)
    plant(sub, BODY, "        bytearray(3 * 1024**3)\n" + BODY)
    course = reference.Course(
        load(), [load().get("ch01")], limits=reference.SubmissionLimits(memory=1024**3)
    )
    course.prepare()
    result = grade.grade_submission(course, intake.Submission("greedy", sub))
    assert result.failures
    assert all("MemoryError" in f.message for f in result.failures)


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ("ch01..ch03", ["ch01", "ch02", "ch03"]),
        ("ch03,ch01", ["ch01", "ch03"]),
        ("ch02..ch02", ["ch02"]),
    ],
)
def test_grade_chapters_accepts_ids_and_ranges_in_book_order(spec, ids):
    assert [c.id for c in reference.select_chapters(load(), spec)] == ids


@pytest.mark.parametrize(
    ("spec", "message"),
    [("ch99", "no chapter 'ch99'"), ("ch03..ch01", "comes after"), ("ch00", "no tests")],
)
def test_grade_chapters_refuses_what_names_no_chapter_with_tests(spec, message):
    with pytest.raises(ValueError, match=message):
        reference.select_chapters(load(), spec)


def test_grade_default_chapters_come_from_chapters_toml():
    curriculum = load()
    chosen = [c.id for c in reference.select_chapters(curriculum, None)]
    assert chosen[:3] == list(CHAPTERS)
    assert all(curriculum.get(c).written for c in chosen)


def test_grade_run_autograder_writes_gradescope_results_for_the_submission(tmp_path):
    """Gradescope's layout in a temporary folder: course, venv, submission, results."""
    root = tmp_path / "autograder"
    root.mkdir()
    (root / "course").symlink_to(REPO)
    (root / "venv").symlink_to(Path(sys.prefix))
    # What Gradescope hands over: the package's files, uploaded without their folder.
    filled(tmp_path / "upload", "ch01")
    shutil.copytree(tmp_path / "upload" / "starter", root / "submission")
    result = subprocess.run(
        [str(REPO / "autograder" / "run_autograder")],
        env={**environment(), "AUTOGRADER_ROOT": str(root), "GRADE_CHAPTERS": "ch01,ch02",
             "GRADE_ARGS": "--timeout 5"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads((root / "results" / "results.json").read_text())
    counts = reference_counts()
    assert data["score"] == counts["ch01"]
    assert [(t["score"], t["max_score"]) for t in data["tests"]] == [
        (counts["ch01"], counts["ch01"]),
        (0, counts["ch02"]),
    ]
    assert data["tests"][0]["status"] == "passed" and data["tests"][1]["status"] == "failed"
    assert "todo" in data["tests"][1]["output"]


def test_grade_run_autograder_never_reports_a_silent_zero(tmp_path):
    root = tmp_path / "autograder"
    root.mkdir()
    (root / "course").symlink_to(REPO)
    (root / "venv").symlink_to(Path(sys.prefix))
    (root / "submission").mkdir()
    result = subprocess.run(
        [str(REPO / "autograder" / "run_autograder")],
        env={**environment(), "AUTOGRADER_ROOT": str(root), "GRADE_ARGS": "--workers 0 --no-such"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and data["tests"] == []
    assert "could not grade" in data["output"]


def handmade() -> tuple[reference.Course, Grade]:
    """A course of ch01 and ch02 and one graded row, built by hand (no test run)."""
    curriculum = load()
    course = reference.Course(curriculum, [curriculum.get("ch01"), curriculum.get("ch02")])
    row = Grade(
        "<b>mallory</b>",
        "ok",
        chapters=[ChapterScore("ch01", 3, 4, 0, 1), ChapterScore("ch02", 0, 5, 5, 0)],
        failures=[
            Failure(
                "tests/test_mock_provider.py::test_mock_x", "ch01", Outcome.FAILED,
                "ValueError: <script>alert(1)</script>", "starter/mock.py:7",
            )
        ],
        seconds=2.5,
    )  # fmt: skip
    return course, row


def test_grade_gradescope_results_score_one_point_per_passing_test():
    course, row = handmade()
    data = gradebook.gradescope_results(row, course)
    assert data["score"] == 3
    assert data["execution_time"] == 2  # whole seconds, rounded half to even
    ch01, ch02 = data["tests"]
    assert (ch01["score"], ch01["max_score"], ch01["status"]) == (3, 4, "failed")
    assert (ch02["score"], ch02["max_score"], ch02["status"]) == (0, 5, "failed")
    assert ch01["name"] == "ch01 · Your first LLM call"
    assert "test_mock_x (failed)" in ch01["output"]
    assert "at starter/mock.py:7" in ch01["output"]
    assert "5 test(s) still reach a stub" in ch02["output"]
    assert json.loads(json.dumps(data)) == data


def test_grade_report_escapes_everything_a_learner_wrote():
    course, row = handmade()
    from clawbook.instructor.gradereport import render

    page = render(course, [row])
    assert "<script>" not in page and "<b>mallory" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;mallory&lt;/b&gt;" in page


def test_grade_report_tells_not_started_broken_stubs_left_and_stuck_apart():
    course, mallory = handmade()  # ch01: 3/4 with 1 failing; ch02: all todo
    idle = Grade(
        "idle", RowStatus.OK,
        chapters=[ChapterScore("ch01", 0, 4, 4, 0), ChapterScore("ch02", 0, 5, 5, 0)],
    )  # fmt: skip
    broken = Grade(
        "broken", RowStatus.CANNOT_IMPORT, "cannot import starter/mock.py:3: SyntaxError",
        chapters=[ChapterScore("ch01", 0, 4, 0, 4), ChapterScore("ch02", 0, 5, 0, 5)],
        failures=[Failure("tests/test_mock_provider.py::test_mock_x", "ch01", Outcome.ERROR,
                                "SyntaxError: invalid syntax", "starter/mock.py:3")],
    )  # fmt: skip
    halfway = Grade(
        "halfway", RowStatus.OK,
        chapters=[ChapterScore("ch01", 4, 4, 0, 0), ChapterScore("ch02", 2, 5, 3, 0)],
    )  # fmt: skip
    from clawbook.instructor.gradereport import render

    page = render(course, [mallory, idle, broken, halfway])
    rows = {name: page[page.index(f">{name}</a>") :].split("</tr>")[0] for name in
            ("idle", "broken", "halfway")}  # fmt: skip
    assert 'class="none"' in rows["idle"] and "not started" in rows["idle"]
    assert 'class="status-ok"' not in rows["idle"]  # no green "ok" for a learner who did nothing
    assert 'class="failing"' in rows["broken"] and 'class="none"' not in rows["broken"]
    assert 'class="done"' in rows["halfway"] and 'class="part"' in rows["halfway"]
    assert "working on ch02: 2/5, 3 todo" in rows["halfway"]
    assert "stuck at ch01: 1 failing (first: test_mock_x at starter/mock.py:7)" in page
    assert 'name="viewport"' in page
    most = page[page.index("The tests most of the class fails") :]
    assert "test_mock_x</code>: 2 of 4 learners" in most


def test_grade_json_says_where_each_learner_is():
    _course, row = handmade()
    assert row.to_json()["standing"].startswith("stuck at ch01: 1 failing")


def test_grade_passing_only_a_reading_chapters_tests_is_not_started():
    # A reading chapter's tests pass on the untouched starter: they say nothing of the learner.
    reading = ChapterScore("ch04", 38, 38, 0, 0, stubs=False)
    untouched = Grade("ada", RowStatus.OK, chapters=[ChapterScore("ch01", 0, 4, 4, 0), reading])
    assert not untouched.started
    assert untouched.standing.startswith("not started")
    begun = Grade("bo", RowStatus.OK, chapters=[ChapterScore("ch01", 1, 4, 3, 0), reading])
    assert begun.started
