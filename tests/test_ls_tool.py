"""ch11 · list_dir: one folder, folders first, sizes for files, ignored entries hidden."""

import re
from pathlib import Path

from search_tree import (
    make_project,
    no_personal_git_config,  # noqa: F401
    shared_project,  # noqa: F401
)

from claw.tools.ls import Entry, ListDirTool, human_size
from claw.types import ToolOutput


async def ls(root: Path, **arguments: object) -> ToolOutput:
    output = await ListDirTool(root).run(arguments)
    assert isinstance(output, ToolOutput)
    return output


def entries(output: ToolOutput) -> list[str]:
    """The entry lines of an output: the lines before the first blank one."""
    return output.content.split("\n\n")[0].splitlines()


def test_ls_human_size_whole_bytes_then_one_decimal_in_the_largest_unit():
    assert human_size(0) == "0 B"
    assert human_size(1023) == "1023 B"
    assert human_size(1024) == "1.0 KiB"
    assert human_size(1536) == "1.5 KiB"
    assert human_size(1024 * 1024 - 1) == "1024.0 KiB"
    assert human_size(1024 * 1024) == "1.0 MiB"
    assert human_size(3 * 1024 * 1024) == "3.0 MiB"
    assert human_size(5 * 1024**3) == "5.0 GiB"
    assert human_size(2 * 1024**4) == "2.0 TiB"
    assert human_size(1000 * 1024**4) == "1000.0 TiB"


async def test_ls_folders_first_with_a_slash_then_files_with_sizes(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "setup.py").write_text("x" * 1536)
    (tmp_path / "README.md").write_text("hello\n")
    (tmp_path / "Makefile").write_text("")
    output = await ls(tmp_path)
    assert not output.is_error
    assert output.content == "\n".join([
        "docs/",
        "src/",
        "Makefile  0 B",
        "README.md  6 B",
        "setup.py  1.5 KiB",
    ]), "no notes: no blank line"
    shown, hidden, withheld = ListDirTool(tmp_path).entries("", False)
    assert shown[:2] == [Entry("docs", True, 0), Entry("src", True, 0)], "a folder's size is 0"
    assert (hidden, withheld) == ([], 0)
    (tmp_path / "Xnotes ").mkdir()
    (tmp_path / "Xnotes " / "todo.md").write_text("x")
    spaced = await ls(tmp_path, path="Xnotes ")
    assert spaced.content == "todo.md  1 B", "a folder's name is used as it is, spaces kept"


async def test_ls_hides_git_venvs_node_modules_and_ignored_entries_and_says_so(project):
    output = await ls(project)
    shown = entries(output)
    assert [e for e in shown if e.endswith("/")] == ["assets/", "logs/", "src/", "tests/"]
    for name in (".git/", "env/", "node_modules/", "build/"):
        assert name not in shown
    sizes = dict(e.split("  ") for e in shown if not e.endswith("/"))
    assert sizes[".gitignore"] == human_size(36)
    note = output.content.split("\n\n", 1)[1]
    assert "4 hidden" in note and "all: true" in note
    assert "node_modules/" in note and "env/" in note


async def test_ls_all_true_shows_everything(project):
    shown = entries(await ls(project, all=True))
    assert [e for e in shown if e.endswith("/")] == [
        ".git/", "assets/", "build/", "env/", "logs/", "node_modules/", "src/", "tests/",
    ]  # fmt: skip
    assert "hidden" not in (await ls(project, all=True)).content


async def test_ls_a_subfolder_obeys_every_gitignore_above_and_in_it(project):
    shop = [e.split("  ")[0] for e in entries(await ls(project, path="src/shop"))]
    assert shop == [".gitignore", "__init__.py", "cart.py", "debug.log", "prices.py"], (
        "no __pycache__/ (root .gitignore), no .env (its own), debug.log re-included"
    )
    logs = [e.split("  ")[0] for e in entries(await ls(project, path="logs"))]
    assert logs == ["keep.log"]
    _, hidden, _ = ListDirTool(project).entries("logs", False)
    assert hidden == ["server.log"], "a hidden file's name has no slash"


async def test_ls_caps_the_entries_with_a_note_counting_the_rest(tmp_path):
    for n in range(12):
        (tmp_path / f"f{n:02}.txt").write_text("x")
    output = await ListDirTool(tmp_path, max_entries=5).run({})
    assert entries(output) == [f"f{n:02}.txt  1 B" for n in range(5)]
    assert "7 more" in output.content
    assert re.search(r"(?<!\d)7 more", output.content), "7, not 17 or 27"
    exactly = await ListDirTool(tmp_path, max_entries=12).run({})
    assert len(entries(exactly)) == 12
    assert "\n\n" not in exactly.content, "all 12 are shown: no note"


async def test_ls_names_at_most_ten_hidden_entries_then_an_ellipsis(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / ".gitignore").write_text("*.log\n")
    for n in range(10):
        (tmp_path / f"{n}.log").write_text("")
    ten = (await ls(tmp_path)).content.split("\n\n", 1)[1]
    assert "…" not in ten
    assert all(f"{n}.log" in ten for n in range(10))
    (tmp_path / "z.log").write_text("")
    eleven = (await ls(tmp_path)).content.split("\n\n", 1)[1]
    assert "…" in eleven
    assert "z.log" not in eleven, "the first ten names, sorted; the rest is the …"


async def test_ls_an_empty_folder_says_so_and_a_missing_one_or_a_file_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    empty = await ls(tmp_path, path="empty")
    assert not empty.is_error and "empty" in empty.content
    missing = await ls(tmp_path, path="ghost")
    assert missing.is_error and "not found" in missing.content
    a_file = await ls(tmp_path, path="notes.txt")
    assert a_file.is_error and "not a folder" in a_file.content


async def test_ls_a_venv_is_found_by_its_pyvenv_cfg_whatever_its_name(tmp_path):
    (tmp_path / "python-env").mkdir()
    (tmp_path / "python-env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "venv").mkdir()  # a venv's name, but no pyvenv.cfg: an ordinary folder
    output = await ls(tmp_path)
    assert entries(output) == ["venv/"]
    assert "python-env/" in output.content.split("\n\n", 1)[1]


async def test_ls_a_broken_link_is_listed_not_an_error(tmp_path):
    (tmp_path / "real.txt").write_text("hello")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.txt")
    output = await ls(tmp_path)
    assert not output.is_error
    assert entries(output) == ["dangling  0 B", "real.txt  5 B"]


async def test_ls_a_link_out_of_the_workspace_is_withheld_and_counted_even_with_all(tmp_path):
    root, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    make_project(root, {"app.py": "x = 1\n"})
    make_project(elsewhere, {"secret.txt": "a secret of 27 bytes here\n"})
    (root / "leak.txt").symlink_to(elsewhere / "secret.txt")
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    for show_all in (False, True):
        output = await ls(root, all=show_all)
        assert entries(output) == ["app.py  6 B"]
        assert "leak" not in output.content
        assert "linked" not in output.content
        assert "2 withheld" in output.content
        assert ListDirTool(root).entries("", show_all)[2] == 2
    refused = await ls(root, path="linked")
    assert refused.is_error
    assert "outside the workspace" in refused.content


async def test_ls_withhold_hides_entries_even_with_all_and_refuses_a_withheld_folder(tmp_path):
    make_project(tmp_path, {"a.py": "", "keys/id": "", ".env": ""})

    def withhold(relative: str) -> str | None:
        return "kept back" if relative in ("keys", ".env") else None

    tool = ListDirTool(tmp_path, withhold=withhold)
    output = await tool.run({"all": True})
    assert isinstance(output, ToolOutput)
    assert entries(output) == ["a.py  0 B"]
    assert ".env" not in output.content
    assert "keys" not in output.content
    assert "2 withheld" in output.content
    refused = await tool.run({"path": "keys"})
    assert isinstance(refused, ToolOutput)
    assert refused.is_error
    assert "kept back" in refused.content


async def test_ls_a_path_the_system_refuses_is_an_error_result_naming_the_error(tmp_path):
    output = await ListDirTool(tmp_path).run({"path": "x" * 300})
    assert isinstance(output, ToolOutput)
    assert output.is_error
    assert "too long" in output.content.lower()
