"""ch09a · write stays inside its root on its own: no ``..``, no absolute path, no link, no race.

Each test performs the escape and asserts it fails: nothing outside the workspace is created
or changed. ``WriteTool`` writes through ``Root`` (``tools/fs.py``) and ``atomic_write_at``,
which works inside a folder the walk opened, so a folder swapped for a link cannot redirect it.
"""

import os
from pathlib import Path

import pytest
from confine import SEEN, Swapper, keep_calling, outside_untouched, tree

from claw.tools.tracker import FileTracker
from claw.tools.write import WriteTool
from claw.types import ToolOutput


async def write(tool: WriteTool, path: str, content: str = "overwritten\n") -> ToolOutput:
    output = await tool.run({"path": path, "content": content})
    assert isinstance(output, ToolOutput)
    return output


async def test_write_refuses_dotdot_that_climbs_out_of_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = WriteTool(workspace)
    for path in ["../outside/new.txt", "d/../../outside/secret.txt", "../outside/d/new.txt"]:
        output = await write(tool, path)
        assert output.is_error, path
        assert "outside the workspace" in output.content, path
    assert outside_untouched(outside)
    assert not (await write(tool, "d/../made.txt")).is_error
    assert (workspace / "made.txt").read_text() == "overwritten\n"


async def test_write_refuses_an_absolute_path_outside_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = WriteTool(workspace)
    for path in [str(outside / "new.txt"), f"{workspace}/../outside/secret.txt"]:
        output = await write(tool, path)
        assert output.is_error and "outside the workspace" in output.content, path
    assert outside_untouched(outside)
    assert not (await write(tool, str(workspace / "made.txt"))).is_error


async def test_write_refuses_links_that_lead_out(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "file-link").symlink_to(outside / "secret.txt")
    (workspace / "dangling").symlink_to(outside / "new.txt")
    (workspace / "folder-link").symlink_to(outside)
    (workspace / "relative").symlink_to("../outside")
    tool = WriteTool(workspace)
    for path in ["dangling", "folder-link/new.txt", "relative/d/new.txt", "relative/secret.txt"]:
        output = await write(tool, path)
        assert output.is_error and "outside the workspace" in output.content, path
    assert outside_untouched(outside)


async def test_write_a_folder_swapped_for_a_link_mid_write_never_writes_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    tool = WriteTool(workspace)

    async def once(number: int) -> None:
        await write(tool, f"d/new-{number}.txt")

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert outside_untouched(outside), sorted(p.name for p in (outside / "d").iterdir())


async def test_write_a_path_that_changes_while_it_is_resolved_is_no_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, outside = tree(tmp_path)
    real = os.path.realpath

    def vanished(path: object, *, strict: bool = False) -> str:
        # what realpath raises when a folder it walks is swapped away under it
        if str(path).endswith("racy.txt"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path, strict=strict)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(os.path, "realpath", vanished)
    output = await write(WriteTool(workspace, files=FileTracker()), "d/racy.txt")
    assert not output.is_error, output.content
    assert (workspace / "d" / "racy.txt").read_text() == "overwritten\n"
    assert outside_untouched(outside)


async def test_write_a_folder_another_program_makes_meanwhile_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, outside = tree(tmp_path)
    real_stat = os.stat
    missed = []

    def look_then_make(path: object, *args: object, **kwargs: object) -> os.stat_result:
        try:
            return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        except FileNotFoundError:
            if path == "new" and kwargs.get("dir_fd") is not None:
                missed.append(path)
                if len(missed) == 2:  # the walk that makes folders looked: someone makes it first
                    os.mkdir(workspace / "new")
            raise

    monkeypatch.setattr(os, "stat", look_then_make)
    output = await write(WriteTool(workspace, files=FileTracker()), "new/file.txt")
    monkeypatch.undo()

    assert len(missed) == 2, missed
    assert not output.is_error, output.content
    assert (workspace / "new" / "file.txt").read_text() == "overwritten\n"
    assert outside_untouched(outside)
