"""What a learner sees: a wrong stub shows as failing with its assertion, a right one as done."""

from pathlib import Path

import pytest

from clawbook.course import stubgen, stubs
from clawbook.course.chapters import load, parse
from clawbook.harness.report import Outcome
from clawbook.harness.runner import (
    ROOT,
    Progress,
    chapter_test_files,
    next_chapter,
    progress,
    run_pytest,
)

CH01 = load().get("ch01")


@pytest.fixture
def scratch_starter(tmp_path):
    """A fresh starter in a scratch folder, so the learner's own starter/ is never touched."""
    stubgen.write_tree(stubgen.render_tree(ROOT / "solution"), tmp_path / "starter")
    return tmp_path


def ch01_progress(scratch: Path) -> Progress:
    run = run_pytest(chapter_test_files(CH01), implementation="starter", impl_path=scratch)
    return Progress(CH01, run.for_chapter(CH01))


def test_an_untouched_chapter_is_todo_with_its_hint(scratch_starter):
    p = ch01_progress(scratch_starter)
    assert p.state == "todo"
    assert p.total >= CH01.min_tests
    assert p.first_todo is not None and p.first_todo.todo_chapter == "ch01"
    assert p.first_todo.hint


def test_a_wrong_implementation_is_failing_with_a_readable_message(scratch_starter):
    mock = scratch_starter / "starter" / "mock.py"
    solved = stubgen.render((ROOT / "solution" / "mock.py").read_text(), "mock.py", keep={"ch01"})
    # A classic slip: popping from the wrong end turns the queue into a stack.
    mock.write_text(solved.replace("self._script.popleft()", "self._script.pop()"))
    p = ch01_progress(scratch_starter)
    assert p.state == "failing"
    problem = p.first_problem
    assert problem is not None
    assert problem.name == "test_mock_returns_turns_in_the_order_they_were_scripted"
    assert "assert" in (problem.message or "")
    assert problem.line is not None


def test_the_right_implementation_turns_the_chapter_done(scratch_starter):
    files = stubgen.render_tree(ROOT / "solution", keep={"ch01"})
    stubgen.write_tree(files, scratch_starter / "starter")
    assert ch01_progress(scratch_starter).state == "done"


def test_a_syntax_error_in_the_starter_is_an_error_not_a_crash(scratch_starter):
    (scratch_starter / "starter" / "mock.py").write_text('"""A module."""\n\ndef broken(:\n')
    p = ch01_progress(scratch_starter)
    assert p.state == "cannot import"
    problem = p.first_problem
    assert problem is not None and problem.outcome == Outcome.ERROR
    assert problem.where is not None
    assert (problem.where.path, problem.where.line) == ("starter/mock.py", 3)


def test_the_next_chapter_is_the_first_written_one_not_done():
    curriculum = parse(
        """
[[part]]
number = 1
title = "P"
[[chapter]]
id = "ch01"
title = "A"
part = 1
page = "a.md"
minutes = 1
tests = { test_a_ = 1 }
[[chapter]]
id = "ch02"
title = "B"
part = 1
page = "b.md"
minutes = 1
tests = { test_b_ = 1 }
"""
    )
    from clawbook.harness.runner import Run, TestResult

    run = Run(
        results=(
            TestResult("tests/test_a_x.py::test_a_1", "tests/test_a_x.py", "ch01", Outcome.PASSED),
            TestResult("tests/test_b_x.py::test_b_1", "tests/test_b_x.py", "ch02", Outcome.TODO),
        ),
        returncode=0,
        output="",
    )
    report = progress(curriculum, run)
    assert [p.state for p in report] == ["done", "todo"]
    upcoming = next_chapter(report)
    assert upcoming is not None and upcoming.chapter.id == "ch02"


def test_a_run_that_broke_off_never_sends_the_learner_back_to_chapters_it_did_not_reach():
    curriculum = parse(
        "[[part]]\nnumber = 1\ntitle = \"P\"\n"
        + "".join(
            f'[[chapter]]\nid = "ch0{n}"\ntitle = "{n}"\npart = 1\npage = "{n}.md"\n'
            f"minutes = 1\ntests = {{ test_{c}_ = 2 }}\n"
            for n, c in enumerate("abcd", start=1)
        )
    )
    from clawbook.harness.runner import Run, Stop, TestResult

    def result(letter: str, n: int, chapter: str, outcome: Outcome) -> TestResult:
        path = f"tests/test_{letter}_x.py"
        return TestResult(f"{path}::test_{letter}_{n}", path, chapter, outcome)

    run = Run(
        results=(
            # ch01: one test passed, the other never ran; ch02: nothing ran at all
            result("a", 1, "ch01", Outcome.PASSED),
            result("c", 1, "ch03", Outcome.PASSED),
            result("c", 2, "ch03", Outcome.TODO),
            result("d", 1, "ch04", Outcome.HUNG),
        ),
        returncode=-15,
        output="",
        stopped=Stop(Outcome.HUNG, "test_d_1 seems to loop forever"),
        collected=tuple(
            f"tests/test_{c}_x.py::test_{c}_{n}" for c in "abcd" for n in (1, 2)
        ),
    )
    report = progress(curriculum, run)
    assert [p.state for p in report] == ["in progress", "not run", "in progress", "failing"]
    upcoming = next_chapter(report)
    assert upcoming is not None and upcoming.chapter.id == "ch03"


def test_hint_lists_the_remaining_stubs_with_their_functions(scratch_starter):
    remaining = stubs.remaining_stubs(scratch_starter / "starter", CH01)
    assert {s.function for s in remaining} == {
        "MockProvider.__init__",
        "MockProvider.add",
        "MockProvider.remaining",
        "MockProvider.complete",
    }
    assert all(s.path == "mock.py" and s.hint for s in remaining)


def test_hint_lists_stubs_in_the_order_the_chapter_lists_its_files(scratch_starter):
    chapter = load().get("ch05b")
    remaining = stubs.remaining_stubs(scratch_starter / "starter", chapter)
    paths = [s.path for s in remaining]
    assert paths == sorted(paths, key=chapter.files.index)
    assert paths[0] == chapter.files[0] != chapter.files[-1] == paths[-1]


def test_reset_restores_only_the_chapters_functions_and_backs_up(scratch_starter):
    starter = scratch_starter / "starter"
    solved = stubgen.render((ROOT / "solution" / "mock.py").read_text(), "mock.py", keep={"ch01"})
    mine = solved + "\n\ndef my_helper() -> int:\n    return 7\n"
    (starter / "mock.py").write_text(mine)
    catalogue = stubs.read_catalogue(ROOT / "clawbook" / "starter-stubs.json")
    plan = stubs.plan_reset(CH01, catalogue, starter)
    assert plan.functions["mock.py"] == sorted(
        [
            "MockProvider.__init__",
            "MockProvider.add",
            "MockProvider.remaining",
            "MockProvider.complete",
        ]
    )
    backup = stubs.apply_reset(plan, starter, scratch_starter / "backups")
    after = (starter / "mock.py").read_text()
    assert 'raise Todo("ch01"' in after
    assert "def my_helper() -> int:" in after  # the learner's own code outside the stubs stays
    assert (backup / "starter" / "mock.py").read_text() == mine  # nothing is lost
    assert len(stubs.remaining_stubs(starter, CH01)) == 4
    assert "from .todo import Todo" in after  # the finished file had lost the import


def test_a_test_file_belongs_to_the_chapter_with_the_longest_matching_prefix(tmp_path):
    curriculum = parse(
        """
[[part]]
number = 1
title = "Core"

[[chapter]]
id = "ch05a"
title = "Streaming"
part = 1
minutes = 1
files = ["streaming.py"]
tests = { test_streaming_ = 1 }

[[chapter]]
id = "ch05b"
title = "Provider"
part = 1
minutes = 1
files = ["agent.py"]
tests = { test_streaming_agent_ = 1 }
"""
    )
    (tmp_path / "tests").mkdir()
    for name in ("test_streaming_sse.py", "test_streaming_agent.py"):
        (tmp_path / "tests" / name).write_text("")
    ch05a, ch05b = curriculum.chapters
    assert curriculum.chapter_for_test_file("test_streaming_agent.py") is ch05b
    assert curriculum.chapter_for_test_file("test_streaming_sse.py") is ch05a
    assert chapter_test_files(ch05a, tmp_path, curriculum) == ["tests/test_streaming_sse.py"]
    assert chapter_test_files(ch05b, tmp_path, curriculum) == ["tests/test_streaming_agent.py"]
