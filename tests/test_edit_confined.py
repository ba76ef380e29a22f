"""ch09a · edit stays inside its root on its own: no ``..``, no absolute path, no link, no race.

The tracker here trusts every file (the read-before-edit rule is tested elsewhere), so the
only thing between the model and the file outside is the tool's own opener.
"""

from pathlib import Path

from confine import SEEN, Swapper, keep_calling, outside_untouched, tree

from claw.tools.edit import EditTool
from claw.tools.tracker import FileTracker
from claw.types import ToolOutput


class Trusting(FileTracker):
    """A tracker that lets every edit through."""

    def check(self, path: Path, shown: str) -> str | None:
        return None


async def edit(tool: EditTool, path: str) -> ToolOutput:
    # "workspace" stays in the file (once) after each edit, so the next edit finds it again
    arguments = {"path": path, "old_string": "workspace", "new_string": "workspace!"}
    output = await tool.run(arguments)
    assert isinstance(output, ToolOutput)
    return output


async def test_edit_refuses_dotdot_that_climbs_out_of_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = EditTool(workspace, files=Trusting())
    for path in ["../outside/secret.txt", "d/../../outside/d/f.txt"]:
        output = await edit(tool, path)
        assert output.is_error and "outside the workspace" in output.content, path
    assert outside_untouched(outside)


async def test_edit_refuses_an_absolute_path_outside_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = EditTool(workspace, files=Trusting())
    output = await edit(tool, str(outside / "secret.txt"))
    assert output.is_error and "outside the workspace" in output.content
    assert outside_untouched(outside)
    assert not (await edit(tool, str(workspace / "notes.txt"))).is_error


async def test_edit_refuses_links_that_lead_out(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "file-link").symlink_to(outside / "secret.txt")
    (workspace / "folder-link").symlink_to(outside / "d")
    tool = EditTool(workspace, files=Trusting())
    for path in ["file-link", "folder-link/f.txt"]:
        output = await edit(tool, path)
        assert output.is_error and "outside the workspace" in output.content, path
    assert outside_untouched(outside)


async def test_edit_a_folder_swapped_for_a_link_mid_edit_never_edits_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    tool = EditTool(workspace, files=Trusting())

    async def once(number: int) -> None:
        assert "SECRET" not in (await edit(tool, "d/f.txt")).content

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert outside_untouched(outside)
