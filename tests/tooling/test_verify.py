"""The instructor checks, run on a tiny fake course: each must catch what it promises to."""

import pytest
from fake_course import make_course

from clawbook.harness.report import Outcome
from clawbook.instructor import verify


@pytest.fixture
def course(tmp_path):
    return make_course(tmp_path / "course")


def test_a_sound_course_passes_the_checks(course):
    for check in (
        verify.check_starter_in_sync,
        verify.check_chapter_data,
        verify.check_untouched_starter,
        verify.check_progression,
        verify.check_book_commands,
    ):
        outcome = check(course)
        assert outcome.ok, (check.__name__, outcome.summary, outcome.details)


def test_a_stale_starter_is_caught(course):
    double = course.solution / "double.py"
    double.write_text(double.read_text().replace('"""Twice x."""', '"""Two times x."""'))
    outcome = verify.check_starter_in_sync(course)
    assert not outcome.ok
    assert "clawbook stubs" in outcome.summary
    assert outcome.details == ["out of date: double.py"]


def test_a_test_that_passes_against_the_untouched_starter_is_caught(course):
    (course.root / "tests" / "test_double_accident.py").write_text(
        "def test_double_always_true():\n    assert True\n"
    )
    outcome = verify.check_untouched_starter(course)
    assert not outcome.ok
    assert any("test_double_always_true" in line and "ch01" in line for line in outcome.details)


def test_too_few_tests_for_a_chapter_is_caught(course):
    (course.root / "tests" / "test_double_basic.py").write_text(
        "from claw.double import double\n\ndef test_double_two():\n    assert double(2) == 4\n"
    )
    outcome = verify.check_untouched_starter(course)
    assert not outcome.ok
    assert any("1 tests named test_double_*" in line for line in outcome.details)


def test_an_opt_in_skipped_test_is_allowed_but_does_not_count_towards_the_minimum(course):
    (course.root / "tests" / "test_double_basic.py").write_text(
        "import pytest\n\nfrom claw.double import double\n\n"
        "def test_double_two():\n    assert double(2) == 4\n\n"
        "@pytest.mark.skip(reason='opt-in')\n"
        "def test_double_live():\n    assert double(1) == 2\n"
    )
    outcome = verify.check_untouched_starter(course)
    assert not outcome.ok
    assert not any("test_double_live" in line for line in outcome.details)
    assert any("1 tests named test_double_*" in line for line in outcome.details)


def test_a_chapter_that_needs_a_later_chapter_is_caught(course):
    # ch01's double() now calls ch02's triple(): filling in ch01 alone cannot make it pass.
    (course.solution / "double.py").write_text(
        '"""Doubling."""\n\n\ndef double(x: int) -> int:\n    """Twice x."""\n'
        "    # region ch01: use triple\n    from .triple import triple\n\n"
        "    return triple(x) - x\n    # endregion\n"
    )
    outcome = verify.check_progression(course)
    assert not outcome.ok
    assert any("up to ch01" in line and "test_double_two" in line for line in outcome.details)


def test_a_change_that_a_later_chapter_brings_to_an_earlier_test_is_caught(course):
    # double() probes ch02's triple() and catches its Todo: ch01's test passes while ch02 is a
    # stub, and fails once ch02 is written. The progression runs it again at ch02 because its
    # run at ch01 reached a ch02 stub, even though the stub's Todo never left double().
    (course.solution / "double.py").write_text(
        '"""Doubling."""\n\nfrom .triple import triple\n\n\n'
        'def double(x: int) -> int:\n    """Twice x."""\n'
        "    try:\n        triple(0)\n    except NotImplementedError:\n        pass\n"
        "    else:\n        return x * 3\n"
        "    # region ch01: add x to itself\n    return x + x\n    # endregion\n"
    )
    (course.solution / "triple.py").write_text(
        '"""Tripling."""\n\n\ndef triple(x: int) -> int:\n    """Three times x."""\n'
        "    # region ch02: x three times\n    return 3 * x\n    # endregion\n"
    )
    assert verify.check_untouched_starter(course).ok
    outcome = verify.check_progression(course)
    assert not outcome.ok
    assert any(
        "up to ch02" in line and "test_double_two is failed" in line for line in outcome.details
    )
    assert not any("up to ch01" in line for line in outcome.details)


def test_a_stub_reached_in_a_process_the_test_started_counts_as_reached(course):
    (course.root / "tests" / "test_double_process.py").write_text(
        "import subprocess, sys\n\n"
        "def test_double_in_a_process():\n"
        "    code = ('from claw.triple import triple\\n'\n"
        "            'try:\\n    triple(1)\\nexcept NotImplementedError:\\n    pass')\n"
        "    subprocess.run([sys.executable, '-c', code], check=True)\n"
    )
    run = course.pytest(["tests/test_double_process.py"], "starter")
    [result] = run.results
    assert result.outcome == Outcome.PASSED
    assert result.reached == ["ch02"]


def test_a_progression_run_in_which_no_test_ran_is_caught(course):
    # pytest breaks off before any test reports, only on the progression's starters: a run
    # without results is a failure of the check, never a silent pass.
    (course.root / "tests" / "conftest.py").write_text(
        "import os\n\n"
        "if 'clawbook-progress-' in os.environ.get('CLAW_IMPL_PATH', ''):\n"
        "    raise SystemExit('conftest: cannot start')\n"
    )
    assert verify.check_untouched_starter(course).ok
    outcome = verify.check_progression(course)
    assert not outcome.ok
    assert any("up to ch01" in line and "no test ran" in line for line in outcome.details)
    assert any("up to ch02" in line and "no test ran" in line for line in outcome.details)


def test_a_book_command_that_selects_no_test_is_caught(course):
    page = course.book / "ch02.md"
    page.write_text(page.read_text() + "\nThen run `pytest tests/test_tripple_typo.py`.\n")
    outcome = verify.check_book_commands(course)
    assert not outcome.ok
    assert outcome.details == ["book/ch02.md: `pytest tests/test_tripple_typo.py` selects no test"]


def test_a_book_command_naming_a_test_that_is_not_there_is_caught(course):
    # the file exists, so the whole suite's collection answers it: no test of that name
    page = course.book / "ch01.md"
    text = page.read_text() + "\n`pytest tests/test_double_basic.py::test_double_nine -q`\n"
    page.write_text(text + "`pytest tests/test_double_basic.py::test_double_two`\n")
    outcome = verify.check_book_commands(course)
    assert not outcome.ok
    assert outcome.details == [
        "book/ch01.md: `pytest tests/test_double_basic.py::test_double_nine -q` selects no test"
    ]


def test_book_commands_are_found_in_code_blocks_and_inline_code(course):
    commands = verify.book_commands(course.book)
    assert commands == [
        ("ch01.md", "clawbook check ch01"),
        ("ch01.md", "pytest tests/test_double_basic.py"),
        ("ch02.md", "pytest -k test_triple_"),
    ]


def test_a_book_command_continued_over_lines_is_read_whole(course):
    # a phone shows about 45 characters of a shell line: long commands go on after a backslash
    page = course.book / "ch02.md"
    continued = (
        "```bash\npytest tests/test_double_basic.py \\\n    tests/test_tripple_typo.py\n```\n"
    )
    page.write_text(page.read_text() + "\n" + continued)
    commands = verify.book_commands(course.book)
    assert ("ch02.md", "pytest tests/test_double_basic.py tests/test_tripple_typo.py") in commands
    assert not [command for _, command in commands if "\\" in command]
    outcome = verify.check_book_commands(course)
    assert outcome.details == [
        "book/ch02.md: `pytest tests/test_double_basic.py tests/test_tripple_typo.py` selects "
        "no test"
    ]


def test_a_region_in_a_file_its_chapter_does_not_list_is_caught(course):
    (course.solution / "extra.py").write_text(
        "def f():\n    # region ch01: something\n    return 1\n    # endregion\n"
    )
    outcome = verify.check_chapter_data(course)
    assert not outcome.ok
    assert any("extra.py" in line and "ch01" in line for line in outcome.details)


def test_a_misnamed_test_is_caught(course):
    (course.root / "tests" / "test_double_more.py").write_text("def test_something():\n    pass\n")
    outcome = verify.check_chapter_data(course)
    assert not outcome.ok
    assert any("test_something should start with test_double_" in line for line in outcome.details)


def test_a_failed_check_is_repeated_at_the_end_of_the_report(course, monkeypatch):
    import io

    from rich.console import Console

    def broken(project):
        return verify._fail("notebooks differ", ["FAILED book/notebooks/ch12.ipynb::Cell 7"])

    def fine(project):
        return verify.CheckOutcome(True, "all good")

    monkeypatch.setattr(verify, "CHECKS", [("broken", broken, False), ("fine", fine, False)])
    monkeypatch.setattr(verify, "run_solution_suite", lambda project: 0)
    out = io.StringIO()
    code = verify.verify(Console(file=out, width=200), project=course)
    assert code == 1
    tail = out.getvalue().split("every test must pass against the reference agent")[1]
    assert "broken: notebooks differ" in tail
    assert "ch12.ipynb::Cell 7" in tail
    assert "fine" not in tail
    assert tail.rstrip().endswith("verify failed: broken")


def test_dead_anchors_finds_a_contents_link_whose_heading_has_another_id(tmp_path):
    from clawbook.instructor.verify import dead_anchors

    page = tmp_path / "notebooks" / "ch06" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        '<a href="#a-tool-is-a-model-and-a">A tool</a><a href="#intro">Intro</a>'
        '<h2 id="a-tool-is-a-model-and-a-call">A tool</h2><h2 id="intro">Intro</h2>'
        '<a href="#__skip">skip</a>'
    )
    assert dead_anchors(tmp_path) == ["notebooks/ch06/index.html: #a-tool-is-a-model-and-a"]


def test_book_captions_included_code_with_the_learners_path():
    from clawbook.course.mkdocs_hooks import learner_paths

    page = '```python title="solution/tools/read.py"\n--8<-- "solution/tools/read.py:run"\n```'
    assert learner_paths(page) == (
        '```python title="starter/tools/read.py"\n--8<-- "solution/tools/read.py:run"\n```'
    )


def test_chapter_data_refuses_a_template_box_styled_unlike_the_others(tmp_path):
    from clawbook.instructor.verify import check_chapter_data

    project = make_course(tmp_path)
    page = project.book / "ch01.md"
    page.write_text(page.read_text() + '\n!!! info "Python concept: deque"\n\n    text\n')
    outcome = check_chapter_data(project)
    assert not outcome.ok
    assert any('ch01.md' in d and "`!!! python`, not `info`" in d for d in outcome.details)
