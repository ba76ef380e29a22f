"""ch13 · a Read deny rule holds for the search tools, file by file, in every mode.

A call to ``grep``, ``glob`` or ``list_dir`` names one folder; the permission rules decide
about that folder. These attacks search the folder around a denied file and check that
``search_withhold`` (from chapter 13's ``Permissions.decide_one``) keeps the file out.
"""

from pathlib import Path

import pytest
from search_tree import make_project, no_personal_git_config  # noqa: F401

from claw.permissions import Mode, Permissions
from claw.search_guard import search_withhold
from claw.tools.glob import GlobTool
from claw.tools.grep import GrepTool, find_ripgrep
from claw.tools.ls import ListDirTool
from claw.types import ToolOutput

FILES = {
    "app.py": "password = ask()\n",
    "secrets/prod.txt": "password=hunter2\n",
    "config/db.txt": "password=db-secret\n",
    "private/notes.txt": "password=private-note\n",
}
ENGINES = [False, *([True] if find_ripgrep() else [])]


async def run(tool: object, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)  # type: ignore[attr-defined]
    assert isinstance(output, ToolOutput)
    return output


def tools(root: Path, permissions: Permissions, ripgrep: bool = False) -> tuple[object, ...]:
    return (
        GrepTool(root, ripgrep=ripgrep, withhold=search_withhold(permissions=permissions)),
        GlobTool(root, withhold=search_withhold(permissions=permissions, tool="glob")),
        ListDirTool(root, withhold=search_withhold(permissions=permissions, tool="list_dir")),
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``FILES`` in a folder of their own, which the searches only read: one for the module."""
    return make_project(tmp_path_factory.mktemp("project"), FILES)


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_permissions_read_deny_holds_for_grep_glob_and_list_dir_in_every_mode(
    project, mode, ripgrep
):
    permissions = Permissions(
        project, deny=["Read(secrets/**)", "Read(config/db.txt)"], mode=mode
    )
    grep, glob, lister = tools(project, permissions, ripgrep)
    found = await run(grep, pattern="password")
    assert "hunter2" not in found.content
    assert "db-secret" not in found.content
    assert "app.py:1: password = ask()" in found.content
    named = await run(glob, pattern="**/*.txt")
    assert sorted(named.content.splitlines()) == ["private/notes.txt"]
    listed = await run(lister, all=True)
    assert "secrets" not in listed.content
    assert "db.txt" not in (await run(lister, path="config")).content
    refused = await run(grep, pattern="password", path="secrets")
    assert refused.is_error
    assert "Read(secrets/**)" in refused.content


async def test_permissions_an_ask_rule_about_paths_leaves_its_files_out_a_bare_one_does_not(
    tmp_path,
):
    make_project(tmp_path, FILES)
    grep = tools(tmp_path, Permissions(tmp_path, ask=["Read(private/**)"]))[0]
    output = await run(grep, pattern="password")
    assert "private-note" not in output.content
    assert "hunter2" in output.content
    grep = tools(tmp_path, Permissions(tmp_path, ask=["Read"]))[0]
    output = await run(grep, pattern="password")
    assert "private-note" in output.content  # the call itself was asked about


async def test_permissions_a_grep_rule_covers_grep_only_and_a_link_is_judged_resolved(tmp_path):
    make_project(tmp_path, FILES)
    (tmp_path / "alias.txt").symlink_to(tmp_path / "secrets" / "prod.txt")
    permissions = Permissions(tmp_path, deny=["Grep(secrets/**)"])
    grep, glob, _ = tools(tmp_path, permissions)
    output = await run(grep, pattern="hunter2")
    assert output.content.startswith("no matches"), output.content
    named = await run(glob, pattern="secrets/*")
    assert named.content == "secrets/prod.txt"


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_permissions_a_rule_about_hidden_files_leaves_out_the_hidden_files_only(
    tmp_path, monkeypatch, ripgrep
):
    # claw runs in the project's folder; `.*` matches `.env` at any depth, and `.` too, the
    # folder itself, which no search asks about: app.py and its neighbours stay visible.
    make_project(tmp_path, {**FILES, ".env": "password=dotenv\n", "config/.db": "password=dot\n"})
    monkeypatch.chdir(tmp_path)
    grep, glob, lister = tools(tmp_path, Permissions(tmp_path, deny=["Read(.*)"]), ripgrep)
    found = await run(grep, pattern="password")
    assert sorted(line.split(":")[0] for line in found.content.splitlines()) == [
        "app.py",
        "config/db.txt",
        "private/notes.txt",
        "secrets/prod.txt",
    ], found.content
    named = await run(glob, pattern="**/*")
    assert sorted(named.content.splitlines()) == [
        "app.py",
        "config/db.txt",
        "private/notes.txt",
        "secrets/prod.txt",
    ], named.content
    listed = await run(lister, all=True)
    assert "app.py" in listed.content and ".env" not in listed.content
