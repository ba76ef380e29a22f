"""Pages that list what a chapter's tests hold: the page and the tests must agree.

These live here, not in the chapter's tests, because a chapter's tests also run where the book
is not: a graded submission's scratch copy has the instructor's tests and the learner's code.
"""

import importlib
import re

import pytest
from test_patch_codex import BOOK, DIFFERS


def test_every_deliberate_difference_from_codex_is_listed_on_the_ch09b_page():
    page = re.sub(r"\s+", " ", BOOK.read_text(encoding="utf-8"))
    missing = [d.page for d in DIFFERS if d.page not in page]
    assert not missing, f"list these differences on {BOOK.name}: {missing}"


@pytest.mark.parametrize(
    ("page", "module"),
    [
        ("ch13-permissions.md", "test_permissions_oracle"),
        ("ch15-hooks.md", "test_hooks_oracle"),
        ("ch17-settings-and-cost.md", "test_config_oracle"),
        ("ch19-terminal-app.md", "test_cli_oracle"),
        ("ch22-sessions.md", "test_session_oracle"),
    ],
)
def test_each_table_of_differences_from_claude_code_matches_its_oracle_test(page, module):
    """The page's table of deliberate differences names (in bold) exactly the reasons of the
    oracle test's ``DIFFERENCES``."""
    differences = importlib.import_module(module).DIFFERENCES
    text = (BOOK.parent / page).read_text(encoding="utf-8")
    table = text.split("<!-- oracle-differences -->")[1].split("<!-- /oracle-differences -->")[0]
    listed = set(re.findall(r"\*\*(.+?)\*\*", re.sub(r"\s+", " ", table)))
    assert listed == set(differences.values()), (
        f"only on the {page} page: {sorted(listed - set(differences.values()))}; "
        f"only in tests/{module}.py: {sorted(set(differences.values()) - listed)}"
    )
