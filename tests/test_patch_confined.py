"""ch09b · apply_patch stays inside its root on its own: no ``..``, no absolute path, no link.

Without chapter 14's checks in front, ``ApplyPatchTool`` is the only thing between a patch
and the disk, so each way out is tried on the bare tool: ``..`` in an Add, Update, Delete or
Move, an absolute path, a link to outside, and a folder swapped for a link while patching.
"""

from pathlib import Path

from confine import INSIDE, SEEN, Swapper, keep_calling, outside_untouched, tree

from claw.tools.patch import ApplyPatchTool
from claw.types import ToolOutput


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


async def apply(tool: ApplyPatchTool, text: str) -> ToolOutput:
    output = await tool.run({"patch": text})
    assert isinstance(output, ToolOutput)
    return output


UPDATE_SECRET = ("@@", "-SECRET outside the workspace", "+rewritten")
UPDATE_INSIDE = ("@@", "-inside the workspace", "+patched")


async def test_patch_refuses_dotdot_in_every_kind_of_section(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = ApplyPatchTool(workspace)
    attempts = [
        patch("*** Add File: ../outside/new.txt", "+planted"),
        patch("*** Update File: ../outside/secret.txt", *UPDATE_SECRET),
        patch("*** Delete File: d/../../outside/secret.txt"),
        patch("*** Update File: notes.txt", "*** Move to: ../outside/moved.txt", *UPDATE_INSIDE),
    ]
    for text in attempts:
        output = await apply(tool, text)
        assert output.is_error, text
        assert "outside the workspace" in output.content, output.content
    assert outside_untouched(outside)
    assert (workspace / "notes.txt").read_text() == INSIDE


async def test_patch_refuses_an_absolute_path(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = ApplyPatchTool(workspace)
    output = await apply(tool, patch(f"*** Add File: {outside}/new.txt", "+planted"))
    assert output.is_error and "relative to the workspace" in output.content
    assert outside_untouched(outside)


async def test_patch_refuses_links_that_lead_out(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "file-link").symlink_to(outside / "secret.txt")
    (workspace / "folder-link").symlink_to(outside)
    tool = ApplyPatchTool(workspace)
    attempts = [
        patch("*** Update File: file-link", *UPDATE_SECRET),
        patch("*** Add File: folder-link/new.txt", "+planted"),
        patch("*** Update File: notes.txt", "*** Move to: folder-link/moved.txt", *UPDATE_INSIDE),
    ]
    for text in attempts:
        output = await apply(tool, text)
        assert output.is_error and "outside the workspace" in output.content, output.content
    assert outside_untouched(outside)
    assert (workspace / "notes.txt").read_text() == INSIDE


async def test_patch_a_folder_swapped_for_a_link_mid_patch_never_writes_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    tool = ApplyPatchTool(workspace)

    async def once(number: int) -> None:
        await apply(tool, patch(f"*** Add File: d/new-{number}.txt", "+planted"))
        await apply(tool, patch("*** Update File: d/f.txt", *UPDATE_SECRET))

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert outside_untouched(outside)


async def test_patch_deleting_a_link_removes_the_link_never_the_file_it_points_to(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "notes-link").symlink_to("notes.txt")
    (workspace / "d" / "f-link").symlink_to("f.txt")
    tool = ApplyPatchTool(workspace)

    deleted = await apply(tool, patch("*** Delete File: notes-link"))
    moved = await apply(
        tool, patch("*** Update File: d/f-link", "*** Move to: moved.txt", *UPDATE_INSIDE)
    )

    assert not deleted.is_error and not moved.is_error, (deleted.content, moved.content)
    assert not (workspace / "notes-link").is_symlink()  # the link is gone...
    assert (workspace / "notes.txt").read_text() == INSIDE  # ...the file it named is not
    assert not (workspace / "d" / "f-link").is_symlink()
    assert (workspace / "d" / "f.txt").read_text() == INSIDE
    assert (workspace / "moved.txt").read_text() == "patched\n"
    assert outside_untouched(outside)


async def test_patch_never_adds_a_file_through_a_dangling_link(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "todo-link").symlink_to("todo.txt")  # inside, but todo.txt does not exist
    tool = ApplyPatchTool(workspace)

    output = await apply(tool, patch("*** Add File: todo-link", "+planted"))

    assert output == ToolOutput.error(
        "the patch was not applied: cannot add todo-link: it already exists; "
        "use '*** Update File: ' to change it"
    )
    assert (workspace / "todo-link").is_symlink()
    assert not (workspace / "todo.txt").exists()
    assert outside_untouched(outside)
