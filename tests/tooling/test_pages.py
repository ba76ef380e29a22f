"""The page-rules check, on a tiny fake course: no answer shown unfolded, no heading by accident."""

import textwrap

import pytest
from fake_course import make_course

from clawbook.instructor import pages, verify

TRIPLE_WITH_A_SECTION = '''\
"""Tripling."""

from .double import double


def triple(x: int) -> int:
    """Three times x."""
    # region ch02: refuse what is not a whole number, then double plus one more
    # --8<-- [start:triple]
    if not isinstance(x, int):
        raise TypeError(f"expected a whole number, got {x!r}")
    return double(x) + x
    # --8<-- [end:triple]
    # endregion
'''

SHOWN = """\
# Tripling

## Step 1: tripling

```python title="solution/triple.py"
--8<-- "solution/triple.py:triple"
```

**Contract.** `triple(x)` is three times `x`; text raises `TypeError`.
"""

FOLDED = """\
# Tripling

## Step 1: tripling

**Contract.** `triple(x)` is three times `x`; text raises `TypeError`.

??? success "Show the solution"

    ```python title="solution/triple.py"
    --8<-- "solution/triple.py:triple"
    ```
"""


@pytest.fixture
def course(tmp_path):
    course = make_course(tmp_path / "course")
    (course.solution / "triple.py").write_text(TRIPLE_WITH_A_SECTION)
    return course


def write_page(course, name, text):
    (course.book / name).write_text(textwrap.dedent(text))


def found(course):
    return [str(finding) for finding in pages.findings(course.root, course.curriculum)]


def test_the_check_runs_in_verify_once_after_the_test_demands():
    names = [name for name, _, _ in verify.CHECKS]
    assert names.count("page rules") == 1
    assert names.index("page rules") == names.index("test demands") + 1
    assert dict((name, check) for name, check, _ in verify.CHECKS)["page rules"] is (
        verify.check_page_rules
    )


def test_an_included_answer_outside_a_fold_is_named_with_page_and_line(course):
    write_page(course, "ch02.md", SHOWN)
    assert found(course) == [
        "book/ch02.md:5: this code block shows the answer to ch02's region triple "
        "(solution/triple.py:8) unfolded; the learner writes it: move the block into the "
        'step\'s ??? success "Show the solution" fold, after the Contract'
    ]
    outcome = verify.check_page_rules(course)
    assert not outcome.ok
    assert outcome.details == found(course)


def test_a_pasted_answer_is_named_too(course):
    write_page(
        course,
        "ch02.md",
        """\
        Some words.

        ```python
        def triple(x: int) -> int:
            if not isinstance(x, int):
                raise TypeError(f"expected a whole number, got {x!r}")
            return double(x) + x
        ```
        """,
    )
    assert [line.split(": this code")[0] for line in found(course)] == ["book/ch02.md:3"]


def test_the_answer_inside_the_solution_fold_passes(course):
    write_page(course, "ch02.md", FOLDED)
    assert found(course) == []
    assert verify.check_page_rules(course).ok


def test_a_fold_that_opens_on_load_hides_nothing(course):
    write_page(course, "ch02.md", FOLDED.replace("??? success", "???+ success"))
    assert [line.split(": this code")[0] for line in found(course)] == ["book/ch02.md:9"]


def test_part_of_a_region_or_an_earlier_chapters_region_may_show(course):
    write_page(
        course,
        "ch02.md",
        """\
        Chapter 1's `double`, given by now, and the check `triple` starts with:

        ```python
        return x + x
        ```

        ```python
        if not isinstance(x, int):
            raise TypeError(f"expected a whole number, got {x!r}")
        ```
        """,
    )
    assert found(course) == []


def test_a_wrapped_line_starting_with_a_hash_in_a_box_is_named(course):
    write_page(
        course,
        "ch01.md",
        """\
        # Doubling

        !!! claude "How Claude Code does it"

            Its tracker lists the lossy names: anthropics/claude-code #9221 for spaces,
            #45718 for non-Latin letters.
        """,
    )
    assert found(course) == [
        "book/ch01.md:6: '#45718 for non-Latin letters.' starts with '#', so Markdown makes "
        "it a heading here; rewrap the text so that no line starts with '#'"
    ]
    assert not verify.check_page_rules(course).ok


def test_a_hash_line_wrapped_into_a_paragraph_is_named_and_real_headings_pass(course):
    write_page(
        course,
        "ch01.md",
        """\
        # Doubling

        ## Step 1: doubling

        The issues are listed in
        #12 and #13.

        <!-- a note to the authors -->
        ### A heading after a comment

        ```bash
        # a comment in a shell block is no heading
        ```
        """,
    )
    assert [line.split(": '")[0] for line in found(course)] == ["book/ch01.md:6"]


TRIPLE_WITH_A_GIVEN_HELPER = '''\
"""Tripling."""

from .double import double

# --8<-- [start:triple]
def as_whole_number(x: object) -> int:
    """``x`` if it is a whole number; TypeError naming it otherwise."""
    if not isinstance(x, int):
        raise TypeError(f"expected a whole number, got {x!r}")
    return x


def triple(x: int) -> int:
    """Three times x."""
    # region ch02: check with as_whole_number, then double plus one more
    x = as_whole_number(x)
    return double(x) + x
    # endregion
# --8<-- [end:triple]
'''


def test_given_code_that_shares_the_folded_section_is_named(course):
    (course.solution / "triple.py").write_text(TRIPLE_WITH_A_GIVEN_HELPER)
    write_page(course, "ch02.md", FOLDED)
    assert found(course) == [
        "book/ch02.md:9: the given as_whole_number (solution/triple.py:6) shows only inside "
        "this solution fold, through section 'triple'; split the section so that the given "
        "code is its own section, shown unfolded where the page introduces it"
    ]
    assert not verify.check_page_rules(course).ok


def test_given_code_in_its_own_section_shown_unfolded_passes(course):
    split = TRIPLE_WITH_A_GIVEN_HELPER.replace(
        "    return x\n\n\n", "    return x\n# --8<-- [end:given]\n\n\n"
    ).replace("# --8<-- [start:triple]\n", "# --8<-- [start:given]\n")
    split = split.replace("def triple", "# --8<-- [start:triple]\ndef triple")
    (course.solution / "triple.py").write_text(split)
    given = """\
        `as_whole_number` is given:

        ```python title="solution/triple.py"
        --8<-- "solution/triple.py:given"
        ```

        """
    page = FOLDED.replace("**Contract.**", textwrap.dedent(given) + "**Contract.**")
    write_page(course, "ch02.md", page)
    assert found(course) == []
    assert verify.check_page_rules(course).ok


BOX = '''\
"""A box."""


class Box:
    """Holds one."""

    # --8<-- [start:box-get]
    def get(self) -> int:
        """One."""
        return 1

    # --8<-- [end:box-get]
'''

BOX_PAGE = """\
# Boxes

```python title="solution/box.py"
--8<-- "solution/box.py:box-get"
```

```python title="solution/box.py"
--8<-- "solution/box.py:box"
```
"""


def test_code_blocks_show_included_code_as_the_book_renders_it(course):
    # The class's own section (named by ast) ends inside box-get, at column 0: pymdownx drops
    # that marker before it dedents box-get, and the highlighter drops a block's blank ends.
    (course.solution / "box.py").write_text(BOX)
    write_page(course, "ch02.md", BOX_PAGE)
    method, whole = pages.code_blocks(course.book / "ch02.md", course.root)
    assert method.lines == ["def get(self) -> int:", '    """One."""', "    return 1"]
    assert method.includes == ["solution/box.py:box-get"]
    assert whole.lines == [
        "class Box:",
        '    """Holds one."""',
        "",
        "    def get(self) -> int:",
        '        """One."""',
        "        return 1",
    ]
