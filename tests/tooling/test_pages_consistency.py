"""The book reads as one book (issue 39): chapter headers, section names, links, times.

Each rule is checked on a tiny fake course with a planted violation, and the check must name
the page and the line; the real book keeps the rules through ``clawbook verify``'s page rules.
"""

from clawbook.course import mkdocs_hooks
from clawbook.course.chapters import load


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
