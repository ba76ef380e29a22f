"""Pages that list what a chapter's tests hold: the page and the tests must agree.

These live here, not in the chapter's tests, because a chapter's tests also run where the book
is not: a graded submission's scratch copy has the instructor's tests and the learner's code.
"""

import re

from test_patch_codex import BOOK, DIFFERS


def test_every_deliberate_difference_from_codex_is_listed_on_the_ch09b_page():
    page = re.sub(r"\s+", " ", BOOK.read_text(encoding="utf-8"))
    missing = [d.page for d in DIFFERS if d.page not in page]
    assert not missing, f"list these differences on {BOOK.name}: {missing}"


def test_the_ch13_table_of_differences_from_claude_code_matches_the_oracle_test():
    from test_permissions_oracle import DIFFERENCES

    page = (BOOK.parent / "ch13-permissions.md").read_text(encoding="utf-8")
    table = page.split("<!-- oracle-differences -->")[1].split("<!-- /oracle-differences -->")[0]
    listed = set(re.findall(r"\*\*(.+?)\*\*", re.sub(r"\s+", " ", table)))
    assert listed == set(DIFFERENCES.values()), (
        f"only on the ch13 page: {sorted(listed - set(DIFFERENCES.values()))}; "
        f"only in tests/test_permissions_oracle.py: {sorted(set(DIFFERENCES.values()) - listed)}"
    )
