"""The test-demands check, on a tiny fake course: every word a test demands must be in the text."""

import subprocess
import sys
import textwrap

import pytest
from fake_course import make_course

from clawbook.instructor import demands, verify

ERRORS = """\
import pytest

from claw.double import double


def test_double_refuses_text():
    with pytest.raises(TypeError, match="whole number"):
        double("2")
"""

DEMAND = "tests/test_double_errors.py:7 test_double_refuses_text demands 'whole number' (match=): "
MISSING = DEMAND + (
    "not stated in book/ch01.md's section 'Step 1: doubling' outside collapsed solutions"
)
UNLISTED = DEMAND + "book/ch01.md: no section lists test_double_refuses_text, so no step states it"

LISTING = "## Step 1: doubling\n\n**Tests:** `test_double_*` and `test_triple_*`.\n\n"
"""The step that lists the tests: the demand check wants their wording stated in it."""

DOUBLE_WITH_A_SECTION = '''\
"""Doubling."""


def double(x: int) -> int:
    """Twice x."""
    # region ch01: refuse what is not a whole number, then add x to itself
    # --8<-- [start:check]
    if not isinstance(x, int):
        raise TypeError(f"expected a whole number, got {x!r}")
    # --8<-- [end:check]
    return x + x
    # endregion
'''


@pytest.fixture
def course(tmp_path):
    course = make_course(tmp_path / "course")
    add_test(course, "test_double_errors.py", ERRORS)
    return course


def add_test(course, name, text):
    (course.root / "tests" / name).write_text(textwrap.dedent(text))


def write_page(course, name, text, *, listed=True):
    (course.book / name).write_text((LISTING if listed else "") + textwrap.dedent(text))


def unstated(course):
    return [str(f) for f in demands.findings(course.root, course.curriculum) if not f.stated]


def test_the_check_runs_in_verify_right_after_the_book_commands():
    names = [name for name, _, _ in verify.CHECKS]
    assert names.index("test demands") == names.index("book test commands") + 1
    assert dict((name, check) for name, check, _ in verify.CHECKS)["test demands"] is (
        verify.check_test_demands
    )


def test_a_word_no_page_states_fails_the_check_with_test_demand_and_page(course):
    outcome = verify.check_test_demands(course)
    assert not outcome.ok
    assert "1 of 1" in outcome.summary
    assert outcome.details == [UNLISTED]


def test_the_command_prints_one_line_per_unstated_demand_and_exits_1(course):
    result = subprocess.run(
        [sys.executable, "-m", "clawbook.instructor.demands", "--root", str(course.root), "ch01"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == UNLISTED
    assert lines[1].startswith("1 of 1 demands not stated")


def test_stating_the_word_in_the_lesson_text_passes(course, capsys):
    write_page(
        course,
        "ch01.md",
        """\
        Doubling text makes no sense, so `double("2")` raises `TypeError`; its message contains
        `whole number`, the kind of value it wanted.
        """,
    )
    outcome = verify.check_test_demands(course)
    assert outcome.ok, outcome.details
    assert outcome.summary.startswith("1 demands in 1 chapters are stated")
    assert demands.main(["--root", str(course.root)]) == 0
    assert "all 1 demands of 1 chapter(s) are stated" in capsys.readouterr().out


def test_a_phrase_of_several_words_may_follow_a_cue_unquoted(course):
    write_page(course, "ch01.md", "Text raises `TypeError`; its message asks for a whole number.\n")
    assert unstated(course) == []


def test_a_word_used_in_passing_is_not_a_statement_of_wording(course):
    write_page(course, "ch01.md", "A whole number doubles; text raises `TypeError`.\n")
    assert unstated(course) == [MISSING]


@pytest.mark.parametrize(
    "folded",
    [
        '??? success "Show the solution"\n\n    Its message contains `whole number`.\n',
        '???+ note "Open by default, but still a folded block"\n\n'
        "    Its message contains `whole number`.\n",
        "<quiz>\nWhich is true?\n- [x] The message contains `whole number`.\n"
        "- [ ] The message contains `integer`.\n</quiz>\n",
    ],
    ids=["collapsed", "collapsed-open", "quiz"],
)
def test_a_word_stated_only_in_a_folded_block_or_a_quiz_still_fails(course, folded):
    write_page(course, "ch01.md", "Text raises `TypeError`.\n\n" + folded + "\nThe end.\n")
    assert unstated(course) == [MISSING]


def test_given_code_shown_outside_folded_blocks_states_its_own_wording(course):
    (course.solution / "double.py").write_text(DOUBLE_WITH_A_SECTION)
    include = '```python\n--8<-- "solution/double.py:check"\n```\n'
    write_page(course, "ch01.md", '??? success "Show the solution"\n\n    ' + include)
    assert unstated(course) == [MISSING]
    write_page(course, "ch01.md", "The check is given:\n\n" + include)
    assert unstated(course) == []


def test_an_earlier_page_counts_and_a_later_one_does_not(course):
    add_test(
        course,
        "test_triple_errors.py",
        """\
        import pytest

        from claw.triple import triple


        def test_triple_refuses_text():
            with pytest.raises(TypeError, match="whole number"):
                triple("3")
        """,
    )
    write_page(course, "ch01.md", "Doubling.\n")
    write_page(course, "ch02.md", "Its message contains `whole number`.\n")
    assert unstated(course) == [MISSING]  # ch01's test is not helped by ch02's page
    write_page(course, "ch01.md", "Its message contains `whole number`.\n")
    write_page(course, "ch02.md", "Tripling.\n")
    assert unstated(course) == []  # ch02's test is helped by ch01's page


def test_echoed_test_data_is_not_a_demand_but_the_input_it_echoes_is(course):
    (course.root / "tests" / "test_double_errors.py").unlink()
    add_test(
        course,
        "test_double_echo.py",
        """\
        import pytest

        from claw.double import double

        REPLY = "the model said forty-two"


        def test_double_passes_scripted_text_through():
            assert "forty-two" in str(double(REPLY))
            assert double(REPLY) == "the model said forty-two" * 2


        def test_double_checks_values_the_test_built_itself():
            expected = "doubled " + "twice"
            assert "twice" in expected


        def test_double_names_the_bad_value():
            with pytest.raises(TypeError) as caught:
                double("twelve")
            assert "twelve" in str(caught.value)
        """,
    )
    write_page(course, "ch01.md", "Text raises `TypeError`.\n")
    assert unstated(course) == [
        "tests/test_double_echo.py:21 test_double_names_the_bad_value demands 'x' "
        "(in, echoing 'twelve'): not stated in book/ch01.md's section 'Step 1: doubling' "
        "outside collapsed solutions"
    ]
    write_page(course, "ch01.md", "Text raises `TypeError`, and its message names the `x`.\n")
    assert unstated(course) == []
    write_page(course, "ch01.md", "The message quotes the value, such as `twelve`.\n")
    assert unstated(course) == []


def test_match_patterns_are_read_as_regexes_with_their_escapes_undone(course):
    add_test(
        course,
        "test_double_errors.py",
        r"""
        import pytest

        from claw.double import double


        def test_double_refuses_a_list():
            with pytest.raises(TypeError, match=r"expected \[int\], got \w+"):
                double([2])


        def test_double_refuses_not_a_number():
            with pytest.raises(ValueError, match="not a number|NaN"):
                double(float("nan"))
        """,
    )
    found = demands.file_demands(course.root / "tests" / "test_double_errors.py", course.root)
    assert [(d.kind, d.words) for d in found] == [
        ("match=", ("expected [int], got",)),
        ("match=", ("not a number", "NaN")),
    ]
    write_page(course, "ch01.md", r"The message contains `expected \[int\]`.")
    assert len(unstated(course)) == 2
    write_page(
        course,
        "ch01.md",
        "A list raises `TypeError` whose message contains `expected [int], got list`; NaN\n"
        "raises `ValueError` whose message says `NaN`.\n",
    )
    assert unstated(course) == []


def test_a_test_file_that_does_not_parse_is_left_to_the_test_run(course):
    add_test(course, "test_double_broken.py", "def test_double_broken(:\n")
    assert unstated(course) == [UNLISTED]


def test_the_demand_must_be_stated_in_the_section_that_lists_its_test(course):
    stated = "Text raises `TypeError`; its message contains `whole number`.\n"
    write_page(course, "ch01.md", stated + "\n## Step 2: tripling\n\nTests: none.\n")
    assert unstated(course) == []
    # The same sentence in a later section (a demo's output, say) does not state the contract.
    write_page(course, "ch01.md", "Doubling.\n\n## Taking it for a spin\n\n" + stated)
    assert unstated(course) == [MISSING]
    # Nor does it help when no section lists the test at all.
    write_page(course, "ch01.md", stated, listed=False)
    assert unstated(course) == [UNLISTED]


@pytest.mark.parametrize(
    ("listing", "other"),
    [
        ("`test_double_refuses_text`", "`test_double_refuses_texts`"),
        ("`test_double_*`", "`test_triple_*`"),
        ("`test_double_other` and `..._refuses_text`", "`..._refuses_lists`"),
    ],
    ids=["whole name", "pattern", "ending"],
)
def test_a_section_lists_a_test_by_name_by_pattern_or_by_its_ending(course, listing, other):
    text = "## Step 1: doubling\n\n**Tests:** {}. Its message contains `whole number`.\n"
    write_page(course, "ch01.md", text.format(listing), listed=False)
    assert unstated(course) == []
    write_page(course, "ch01.md", text.format(other), listed=False)
    assert unstated(course) == [UNLISTED]


def test_text_a_test_replaces_in_the_output_before_comparing_it_whole_is_demanded(course):
    """A format the test relies on (``5``, not ``5.0``): issue 39's unstated ``<title>5</title>``.

    The text is demanded whole, even where the test's inputs spell its parts (``title``)."""
    add_test(
        course,
        "test_double_errors.py",
        """\
        from claw.double import double


        def test_double_refuses_text():
            small = double(5)
            assert double(50).replace("<title>100</title>", "<title>10</title>") == small
            assert "<title>1</title>".replace("<title>1</title>", "2") == "2"  # the test's own
        """,
    )
    found = demands.file_demands(course.root / "tests" / "test_double_errors.py", course.root)
    assert [(d.line, d.kind, d.words) for d in found] == [(6, "replace", ("<title>100</title>",))]
    write_page(course, "ch01.md", "Each bar has a `<title>` holding its value.\n")
    assert unstated(course) == [
        "tests/test_double_errors.py:6 test_double_refuses_text demands '<title>100</title>' "
        "(replace): not stated in book/ch01.md's section 'Step 1: doubling' outside collapsed "
        "solutions"
    ]
    write_page(course, "ch01.md", "A value of 100 says `<title>100</title>`, not `100.0`.\n")
    assert unstated(course) == []
