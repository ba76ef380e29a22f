"""ch14 · the search tools withhold protected files: every file they open or name is checked.

``SafetyChecks`` sees only the folder a ``grep``, ``glob`` or ``list_dir`` call names. These
attacks ask for the folder around a secret and check that ``search_withhold`` (from chapter
14's ``Workspace`` and ``protected_reason``) keeps it out of every search tool's output.
"""

from pathlib import Path

import pytest
from search_tree import make_project, no_personal_git_config  # noqa: F401

from claw.safety import SafetyChecks
from claw.search_guard import guard_searches, search_withhold
from claw.tools.glob import GlobTool
from claw.tools.grep import GrepTool, find_ripgrep
from claw.tools.ls import ListDirTool
from claw.types import ToolOutput

SECRETS = {
    ".env": "API_KEY=sk-secret-env\n",
    "config/.env.production": "API_KEY=sk-secret-production\n",
    "deploy/id_rsa": "-----BEGIN sk-secret-key-----\n",
    "certs/server.key": "sk-secret-server-key\n",
    ".env.example": "API_KEY=sk-secret-placeholder\n",
    "app.py": "API_KEY = load('sk-secret-app')\n",
}
ENGINES = [False, *([True] if find_ripgrep() else [])]


async def run(tool: object, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)  # type: ignore[attr-defined]
    assert isinstance(output, ToolOutput)
    return output


def project(root: Path) -> Path:
    make_project(root, SECRETS)
    (root / "docs").mkdir()
    (root / "docs" / "notes.txt").symlink_to(root / ".env")  # a link to a secret, inside
    return root


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_safety_grep_of_a_folder_never_prints_a_secret_file(tmp_path, ripgrep):
    root = project(tmp_path)
    safety = SafetyChecks(root, allow_protected=[".env.example"])
    tool = GrepTool(root, ripgrep=ripgrep, withhold=search_withhold(safety, tool="grep"))
    expected = [
        ".env.example:1: API_KEY=sk-secret-placeholder",
        "app.py:1: API_KEY = load('sk-secret-app')",
    ]
    for arguments in ({"pattern": "sk-secret"}, {"pattern": "sk-secret", "glob": "*"}):
        output = await run(tool, **arguments)
        assert output.content.splitlines() == expected, arguments
    output = await run(tool, pattern="sk-", path="config")
    assert output.content == "no matches for 'sk-'"

async def test_safety_glob_and_list_dir_never_name_a_secret_file(tmp_path):
    root = project(tmp_path)
    safety = SafetyChecks(root)
    found = await run(GlobTool(root, withhold=search_withhold(safety, tool="glob")),
                      pattern="**/*")  # fmt: skip
    assert sorted(found.content.splitlines()) == ["app.py"]
    lister = ListDirTool(root, withhold=search_withhold(safety, tool="list_dir"))
    for folder in (".", "deploy", "certs", "config", "docs"):
        listed = await run(lister, path=folder, all=True)
        for name in ("env", "id_rsa", "server.key", "notes.txt"):
            assert name not in listed.content, (folder, listed.content)


async def test_safety_guard_searches_equips_every_search_tool_and_leaves_others(tmp_path):
    root = project(tmp_path)
    tools = [GrepTool(root, ripgrep=False), GlobTool(root), ListDirTool(root)]
    guard_searches(tools, SafetyChecks(root))
    for tool in tools:
        assert tool.withhold is not None
        assert tool.withhold(".env") is not None
        assert tool.withhold("docs/notes.txt") is not None  # the link, resolved
        assert tool.withhold("app.py") is None
    output = await run(tools[0], pattern="sk-secret")
    assert output.content == "app.py:1: API_KEY = load('sk-secret-app')"


@pytest.mark.parametrize("ripgrep", ENGINES)
async def test_safety_grep_still_searches_a_protected_file_that_holds_no_secret(tmp_path, ripgrep):
    # .bashrc and claw's settings may not be changed, but read may read them: so may grep
    make_project(tmp_path, {
        ".bashrc": "export EDITOR=vim\n",
        ".claw/settings.json": '{"env": {"EDITOR": "nano"}}\n',
        ".env": "EDITOR=secret-editor\n",
    })  # fmt: skip
    tool = GrepTool(tmp_path, ripgrep=ripgrep,
                    withhold=search_withhold(SafetyChecks(tmp_path), tool="grep"))  # fmt: skip
    output = await run(tool, pattern="EDITOR")
    assert sorted(output.content.splitlines()) == [
        '.bashrc:1: export EDITOR=vim',
        '.claw/settings.json:1: {"env": {"EDITOR": "nano"}}',
    ]


async def test_safety_a_search_refused_by_the_workspace_check_says_why(tmp_path):
    tool = GrepTool(tmp_path, withhold=search_withhold(SafetyChecks(tmp_path), tool="grep"))
    output = await run(tool, pattern="x", path="~")
    assert output.is_error
    assert "starts with ~" in output.content
