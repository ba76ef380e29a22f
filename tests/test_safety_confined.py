"""ch14 · The checks and the tools' opener together: no check-then-open race, extra folders.

The safety check resolves a path and compares it; the tool opens it later. A folder swapped
for a link in between used to take the open outside (21 of 3,000 reads in one measurement).
Now the tools open through ``Root``'s walk, so whatever changes after the check, the open
stays inside. A ``Workspace`` is a ``Root``: handed to the tools, its extra folders reach them.
"""

import os
from pathlib import Path

import pytest
from confine import INSIDE, SECRET, SEEN, Swapper, keep_calling, outside_untouched, tree

from claw.registry import default_tools
from claw.safety import SafetyChecks, Workspace, WorkspaceError
from claw.tools.read import ReadTool
from claw.types import ToolCall, ToolOutput


async def checked(safety: SafetyChecks, tool: object, name: str, **arguments: object) -> str:
    """Run one call the way the agent does: the check first, then the tool if it passes."""
    call = ToolCall(id="1", name=name, arguments=arguments)
    allowed = await safety.check(call)
    if isinstance(allowed, ToolOutput):
        return allowed.content
    output = await tool.run(arguments)  # type: ignore[attr-defined]
    assert isinstance(output, ToolOutput)
    return output.content


@pytest.mark.timeout(60)  # a race against another process: counted calls, a busy machine slows both
async def test_safety_a_folder_swapped_after_the_check_never_leads_a_read_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    safety, tools = SafetyChecks(workspace), default_tools(workspace)
    escapes = 0

    async def once(number: int) -> None:
        nonlocal escapes
        content = await checked(safety, tools["read"], "read", path="d/f.txt")
        escapes += SECRET.strip() in content

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert escapes == 0, f"{escapes} checked reads reached outside the workspace"


@pytest.mark.timeout(60)  # a race against another process: counted calls, a busy machine slows both
async def test_safety_a_folder_swapped_after_the_check_never_leads_a_write_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    safety, tools = SafetyChecks(workspace), default_tools(workspace)

    async def once(number: int) -> None:
        await checked(safety, tools["write"], "write", path=f"d/n{number}.txt", content="x")

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert outside_untouched(outside)


async def test_safety_a_workspace_given_to_the_tools_lets_them_into_its_extra_folders(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "shared").symlink_to(outside)
    confined = Workspace(workspace, extra=[outside])
    assert confined.resolve("shared/secret.txt") == (outside / "secret.txt").resolve()
    alone = ReadTool(workspace)
    assert "outside the workspace" in (await alone.run({"path": "shared/secret.txt"})).content
    tool = ReadTool(confined)
    for path in ["shared/secret.txt", str(outside / "secret.txt")]:
        output = await tool.run({"path": path})
        assert not output.is_error and SECRET.strip() in output.content, path
    assert "outside the workspace" in (await tool.run({"path": "../ws/../.."})).content
    assert INSIDE.strip() in (await tool.run({"path": "notes.txt"})).content
    tools = default_tools(confined)  # type: ignore[arg-type]  # a Root is path-like
    listing = tools.get("list_dir")
    assert listing is not None
    listed = await listing.run({"path": "."})
    assert not listed.is_error and "notes.txt" in listed.content, listed.content


def test_safety_open_makes_missing_folders_only_when_it_creates_the_file(tmp_path: Path) -> None:
    workspace, _ = tree(tmp_path)
    confined = Workspace(workspace)
    with pytest.raises(FileNotFoundError):
        confined.open("new/deeper/notes.txt")
    assert not (workspace / "new").exists()  # opening to read made nothing
    fd = confined.open("new/deeper/notes.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    os.close(fd)
    assert (workspace / "new" / "deeper" / "notes.txt").is_file()


def test_safety_resolve_refuses_a_path_that_changes_while_it_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, _ = tree(tmp_path)
    confined = Workspace(workspace)

    real = os.path.realpath

    def vanished(path: str, *, strict: bool = False) -> str:
        # what realpath raises when a link it is reading is removed under it
        if str(path).endswith("f.txt"):
            raise FileNotFoundError(2, "No such file or directory", path)
        return real(path, strict=strict)

    monkeypatch.setattr(os.path, "realpath", vanished)
    with pytest.raises(WorkspaceError, match="changed while it was being checked"):
        confined.resolve("d/f.txt")
