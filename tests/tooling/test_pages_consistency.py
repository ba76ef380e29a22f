"""The book reads as one book (issue 39): chapter headers, section names, links, times.

Each rule is checked on a tiny fake course with a planted violation, and the check must name
the page and the line; the real book keeps the rules through ``clawbook verify``'s page rules.
"""

import json
import textwrap

import pytest
from fake_course import make_course

from clawbook.course import mkdocs_hooks
from clawbook.course.chapters import load
from clawbook.instructor import consistency, verify


def test_the_eyebrow_names_the_chapter_and_its_part_not_the_id_again():
    curriculum = load()
    eyebrows = {
        chapter_id: mkdocs_hooks.kicker(curriculum.get(chapter_id), curriculum)
        for chapter_id in ("ch00", "ch05a", "ch17", "ch25")
    }
    assert eyebrows == {
        "ch00": 'Chapter <span class="chapter-number">0</span> · Start here',
        "ch05a": 'Chapter <span class="chapter-number">5a</span> · Part I'
        '<span class="part-title"> · The core agent</span>',
        "ch17": 'Chapter <span class="chapter-number">17</span> · Part IV'
        '<span class="part-title"> · Configuration and long sessions</span>',
        "ch25": 'Chapter <span class="chapter-number">25</span> · Part V'
        '<span class="part-title"> · Shipping a real agent</span>',
    }


@pytest.fixture
def course(tmp_path):
    return make_course(tmp_path / "course")


def write_page(course, name, text):
    (course.book / name).write_text(textwrap.dedent(text))


def write_notebook(course, name, first_cell):
    cell = {"cell_type": "markdown", "metadata": {}, "source": first_cell}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (course.book / "notebooks").mkdir(exist_ok=True)
    (course.book / "notebooks" / name).write_text(json.dumps(notebook, indent=1) + "\n")


def found(course):
    return [str(finding) for finding in consistency.findings(course.root, course.curriculum)]


def test_a_notebook_titled_unlike_its_chapter_is_named_and_verify_fails(course):
    write_notebook(course, "ch01.ipynb", ["# Chapter 1 · Doubling\n", "\n", "Play.\n"])
    write_notebook(course, "ch02.ipynb", ["# Chapter 2 · Playing with triple\n", "\n"])
    assert found(course) == [
        "book/notebooks/ch02.ipynb:7: the notebook's title is '# Chapter 2 · Playing with "
        "triple'; its first cell must open with the chapter's title from chapters.toml: "
        "'# Chapter 2 · Tripling'"
    ]
    outcome = verify.check_page_rules(course)
    assert not outcome.ok
    assert outcome.details == found(course)


def test_the_claw_command_section_has_one_name(course):
    write_page(
        course,
        "ch01.md",
        """\
        # Doubling

        ## In the `claw` command

        ```bash
        ## Chapter 1 in the `claw` command (a comment in code is no heading)
        ```

        ## Doubling in the `claw` command

        ### In the `claw` command
        """,
    )
    assert [line.split(": ")[0] for line in found(course)] == ["book/ch01.md:9", "book/ch01.md:11"]
    assert found(course)[0].endswith(
        "the section on the claw command is called '## In the `claw` command' on every page, "
        "not ## 'Doubling in the `claw` command'"
    )


def test_the_test_tables_columns_come_from_one_vocabulary(course):
    write_page(
        course,
        "ch01.md",
        """\
        ### What the tests verify

        | Behaviour | Tests (`test_double_` and) | Steps |
        |---|---|---|
        | doubling | `two` | 1 |
        """,
    )
    write_page(
        course,
        "ch02.md",
        """\
        ### What the tests verify

        | Behaviour | Checked |
        |---|---|
        | tripling | three times |
        """,
    )
    assert found(course) == [
        "book/ch02.md:3: the test table's columns are named from Behaviour, Tests, What the "
        "tests check, Steps (Tests may add a prefix: Tests (`test_x_` and)), not Checked"
    ]


def test_the_last_chapters_next_page_is_the_closing_page_not_an_appendix():
    book = mkdocs_hooks.ROOT / "book"
    nav = mkdocs_hooks.build_nav(load(), book)
    pages = [
        page
        for entry in nav
        for value in entry.values()
        for page in (
            [v for item in value for v in item.values()] if isinstance(value, list) else [value]
        )
    ]
    last = load().written[-1].page
    assert pages[pages.index(last) + 1] == mkdocs_hooks.CLOSING
    assert (book / mkdocs_hooks.CLOSING).read_text().startswith("# Where to go from here\n")
    assert all(page.startswith("appendix-") for page in pages[pages.index(last) + 2 :])


def test_a_chapters_minutes_far_from_the_estimate_are_named_in_chapters_toml(course):
    steps = "".join(f"## Step {n}: doubling again\n\nDouble it.\n\n" for n in (1, 2, 3))
    write_page(course, "ch01.md", "# Doubling\n\n" + steps)
    wanted = consistency.estimate(course.curriculum.get("ch01"), course.book)
    assert (wanted.steps, wanted.minutes) == (3, 5 * -(-(30 + wanted.words / 200) // 5))
    assert found(course) == [
        f"clawbook/chapters.toml:13: ch01 states 5 minutes; its page gives {wanted.minutes} "
        f"({wanted.words} words at 200 a minute, 3 steps at 10 minutes): write minutes = "
        f"{wanted.minutes}"
    ]
    assert not verify.check_page_rules(course).ok


def test_a_parts_hours_are_the_functions_and_a_vague_one_is_refused(course):
    write_page(
        course,
        "ch02.md",
        """\
        # Tripling

        Part I is about an hour of reading
        and three hours of coding. The rest is about an hour of reading and a few hours of
        coding.
        """,
    )
    assert [line.split(": ", 1) for line in found(course)] == [
        [
            "book/ch02.md:3",
            "Part I's time is about 1 hours of reading and 1 of coding (the function "
            "consistency.estimate), not 'Part I is about an hour of reading and three hours "
            "of coding'",
        ],
        [
            "book/ch02.md:4",
            "a part's time is stated as 'Part N ... about X hours of reading and Y hours of "
            "coding' (numbers as words), so verify can check it",
        ],
        [
            "book/ch02.md:4",
            "a part's time is stated as 'Part N ... about X hours of reading and Y hours of "
            "coding' (numbers as words), so verify can check it",
        ],
    ]


MENTIONS = """\
# Tripling, after chapter 1

Chapter 1's `double` is given. As in chapter 1, ch01 and [chapter 1](ch01.md) say, this
is chapter 2 itself, and chapter 9 is not written.

```python
x = 1  # chapter 1 in code
```

!!! note "Chapter 1 in a box title"
    The box's text names chapter 1.

<!-- chapter 1 in a comment --> See `chapter 1` and ch01-style.md and chapters 1 to 2.
"""


def test_a_plain_chapter_mention_in_prose_is_named_and_the_linker_links_it(course):
    write_page(course, "ch02.md", MENTIONS)
    assert [line.split(": ")[0] for line in found(course)] == [
        "book/ch02.md:3",
        "book/ch02.md:3",
        "book/ch02.md:3",
        "book/ch02.md:11",
    ]
    assert found(course)[0].endswith(
        "'Chapter 1' in prose is a link: [Chapter 1](ch01.md) (python -m "
        "clawbook.instructor.consistency book/ch02.md links them all)"
    )
    page = course.book / "ch02.md"
    assert consistency.main([str(page)]) == 0
    assert page.read_text() == MENTIONS.replace(
        "Chapter 1's `double` is given. As in chapter 1, ch01 and",
        "[Chapter 1](ch01.md)'s `double` is given. As in [chapter 1](ch01.md), [ch01](ch01.md) and",
    ).replace("The box's text names chapter 1.", "The box's text names [chapter 1](ch01.md).")
    assert found(course) == []


def test_documentation_cited_as_plain_text_is_named_and_a_link_passes(course):
    write_page(
        course,
        "ch01.md",
        """\
        # Doubling

        As [Claude Code's documentation](https://code.claude.com/docs/en/permissions) says,
        and as the hooks reference
        says too. The reference solution is no citation, and neither is `the CLI reference`.
        """,
    )
    assert found(course) == [
        "book/ch01.md:4: 'the hooks reference' is cited as plain text; make it a link to the "
        "page it means"
    ]


def test_a_chapter_mention_a_line_break_cuts_is_named_and_linked_whole(course):
    """Prose wrapped at 100 characters often ends a line between "chapter" and its number."""
    write_page(
        course, "ch02.md", "# Two\n\nAs the loop of chapter\n1 showed, and [chapter 1](ch01.md).\n"
    )
    (finding,) = found(course)
    assert finding.startswith("book/ch02.md:3: 'chapter\\n1' in prose is a link")
    page = course.book / "ch02.md"
    assert consistency.main([str(page)]) == 0
    assert "As the loop of [chapter\n1](ch01.md) showed" in page.read_text()
    assert found(course) == []
