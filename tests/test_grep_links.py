"""ch11 · grep's edges: links out of the workspace, the withhold seam, odd names, long lines.

Each search tool must stay inside its root on its own (defence in depth: chapter 14's checks
come later and see only the folder the model names), hide what a ``withhold`` callable names,
and give the same output with either engine, whatever the file names and line lengths.
"""

import os
from pathlib import Path

import pytest
from search_tree import make_project, no_personal_git_config  # noqa: F401

from claw.tools.grep import GrepTool, find_ripgrep
from claw.types import ToolOutput

ENGINES = [False, *([True] if find_ripgrep() else [])]
"""The Python engine always; ripgrep's where ``rg`` is installed."""


async def run(tool: GrepTool, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)
    assert isinstance(output, ToolOutput)
    return output


def outside_secret(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace, and beside it a folder with a secret file the workspace links to."""
    root, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    make_project(root, {"app.py": "TOKEN = read_token()\n"})
    make_project(elsewhere, {"secret.txt": "TOKEN=outside-the-workspace\n"})
    (root / "notes.txt").symlink_to(elsewhere / "secret.txt")
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    return root, elsewhere


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_grep_never_follows_a_link_out_of_the_workspace(tmp_path, ripgrep):
    root, _ = outside_secret(tmp_path)
    tool = GrepTool(root, ripgrep=ripgrep)
    output = await run(tool, pattern="TOKEN")
    assert not output.is_error
    assert output.content == "app.py:1: TOKEN = read_token()"
    for path in ("notes.txt", "linked", "linked/secret.txt", "../elsewhere"):
        refused = await run(tool, pattern="TOKEN", path=path)
        assert refused.is_error, path
        assert "outside the workspace" in refused.content
        assert "outside-the-workspace" not in refused.content


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_grep_a_link_to_a_file_inside_the_workspace_is_searched(tmp_path, ripgrep):
    make_project(tmp_path, {"src/real.py": "needle = 1\n"})
    (tmp_path / "alias.py").symlink_to(tmp_path / "src" / "real.py")
    output = await run(GrepTool(tmp_path, ripgrep=ripgrep), pattern="needle")
    assert output.content.splitlines() == ["alias.py:1: needle = 1", "src/real.py:1: needle = 1"]


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_grep_withhold_hides_files_and_folders_and_refuses_a_withheld_path(
    tmp_path, ripgrep
):
    make_project(tmp_path, {"a.py": "key\n", "private/b.py": "key\n", "c.secret": "key\n"})
    seen: list[str] = []

    def withhold(relative: str) -> str | None:
        seen.append(relative)
        if relative == "private" or relative.endswith(".secret"):
            return "kept private by the test"
        return None

    tool = GrepTool(tmp_path, ripgrep=ripgrep, withhold=withhold)
    output = await run(tool, pattern="key")
    assert output.content == "a.py:1: key"
    assert "private/b.py" not in seen  # a withheld folder is not entered
    refused = await run(tool, pattern="key", path="c.secret")
    assert refused.is_error
    assert "kept private by the test" in refused.content


async def test_grep_a_file_name_that_is_not_utf8_works_with_both_engines(tmp_path):
    if find_ripgrep() is None:
        pytest.skip("ripgrep (rg) is not installed: `pip install ripgrep` to compare engines")
    name = os.fsdecode(b"caf\xe9.txt")
    try:
        (tmp_path / name).write_text("needle here\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system does not take file names that are not UTF-8")
    (tmp_path / "plain.txt").write_text("needle too\n")
    fast = await run(GrepTool(tmp_path), pattern="needle")
    slow = await run(GrepTool(tmp_path, ripgrep=False), pattern="needle")
    assert not fast.is_error
    assert fast == slow
    assert fast.content.splitlines() == [f"{name}:1: needle here", "plain.txt:1: needle too"]


async def test_grep_long_lines_give_the_same_output_with_both_engines(tmp_path):
    if find_ripgrep() is None:
        pytest.skip("ripgrep (rg) is not installed: `pip install ripgrep` to compare engines")
    make_project(tmp_path, {
        "wide.txt": "before\n" + "é" * 5000 + " needle " + "x" * 5000 + "\nafter\n",
        "late.txt": "y" * 3000 + "needle\n",
        "mixed.txt": "needle" + "ü" * 2000 + "\n" + "context " * 900 + "\n",
    })  # fmt: skip
    for arguments in ({"pattern": "needle"}, {"pattern": "needle", "before": 1, "after": 1}):
        fast = await run(GrepTool(tmp_path, max_line_chars=40), **arguments)
        slow = await run(GrepTool(tmp_path, max_line_chars=40, ripgrep=False), **arguments)
        assert fast == slow, arguments
        assert all(len(line) < 80 for line in fast.content.splitlines()), fast.content
