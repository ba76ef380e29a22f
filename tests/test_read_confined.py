"""ch02 · read stays inside its root on its own: no ``..``, no absolute path, no link, no race.

Each test performs the escape and asserts it fails: the secret outside the workspace never
appears in an output. ``ReadTool`` opens through ``Root`` (``tools/fs.py``), a walk that opens
one component at a time with ``O_NOFOLLOW``, so no check-then-open window exists to race.
"""

import asyncio
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from budget import examples
from confine import INSIDE, SECRET, SEEN, Swapper, keep_calling, tree
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from claw.tools.read import ReadTool
from claw.types import ToolOutput


async def read(tool: ReadTool, path: str) -> ToolOutput:
    output = await tool.run({"path": path})
    assert isinstance(output, ToolOutput)
    return output


def swap_on_look(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, swaps: dict[tuple[str, int], str]
) -> None:
    """Make ``os.stat`` swap a name for a link right after the walk looks at it.

    ``swaps`` maps (name in its folder, which look at it by that name) to where the link put
    there leads; each entry is taken out once it swapped, so a test can check they all did.
    """
    real_stat = os.stat
    looks: dict[str, int] = {}

    def look_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        info = real_stat(path, *args, **kwargs)
        if kwargs.get("dir_fd") is not None and isinstance(path, str):
            looks[path] = looks.get(path, 0) + 1
            target = swaps.pop((path, looks[path]), None)
            if target is not None:
                os.rename(workspace / path, workspace / f"{path}.away")
                os.symlink(target, workspace / path)
        return info

    monkeypatch.setattr(os, "stat", look_then_swap)


async def test_read_refuses_dotdot_that_climbs_out_of_the_workspace(tmp_path: Path) -> None:
    workspace, _ = tree(tmp_path)
    tool = ReadTool(workspace)
    for path in ["../outside/secret.txt", "d/../../outside/secret.txt", ".."]:
        output = await read(tool, path)
        assert output.is_error, path
        assert SECRET.strip() not in output.content
    output = await read(tool, "../outside/secret.txt")
    assert "outside the workspace" in output.content
    assert "inside the workspace" in (await read(tool, "d/../notes.txt")).content


async def test_read_dot_and_a_folder_reached_back_through_dotdot_are_directories(
    tmp_path: Path,
) -> None:
    workspace, _ = tree(tmp_path)
    (workspace / "d" / "e" / "g").mkdir(parents=True)
    (workspace / "here").symlink_to(".")  # a link to the workspace itself
    (workspace / "d" / "home").symlink_to(workspace)
    tool = ReadTool(workspace)
    every_spelling = [".", "./", ".//.", "d/..", "d/e/..", "d/e/g/..", "./d/e/g/../"]
    every_spelling += [str(workspace), f"{workspace}/d/..", "here", "d/home"]
    for path in every_spelling:
        output = await read(tool, path)
        assert output.is_error, path
        assert "directory" in output.content.lower(), (path, output.content)


async def test_read_refuses_an_absolute_path_outside_but_reads_one_inside(tmp_path: Path) -> None:
    workspace, outside = tree(tmp_path)
    tool = ReadTool(workspace)
    output = await read(tool, str(outside / "secret.txt"))
    assert output.is_error
    assert "outside the workspace" in output.content
    assert (await read(tool, f"{workspace}/../outside/secret.txt")).is_error
    inside = await read(tool, str(workspace / "notes.txt"))
    assert not inside.is_error and INSIDE.strip() in inside.content
    everything = await read(ReadTool("/"), str(workspace / "notes.txt"))  # a workspace of /
    assert not everything.is_error and INSIDE.strip() in everything.content


async def test_read_refuses_links_that_lead_out_and_follows_links_that_stay_in(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "file-link").symlink_to(outside / "secret.txt")
    (workspace / "folder-link").symlink_to(outside)
    (workspace / "relative-link").symlink_to("../outside/secret.txt")
    (workspace / "d" / "up").symlink_to("../..")
    (workspace / "kept").symlink_to("d/f.txt")
    tool = ReadTool(workspace)
    for path in ["file-link", "folder-link/secret.txt", "relative-link", "d/up/outside/secret.txt"]:
        output = await read(tool, path)
        assert output.is_error, path
        assert "outside the workspace" in output.content, path
    assert INSIDE.strip() in (await read(tool, "kept")).content


async def test_read_follows_a_chain_of_links_as_far_as_the_system_does(tmp_path: Path) -> None:
    tool = ReadTool(tmp_path)
    (tmp_path / "f.txt").write_text(INSIDE)
    for length in (40, 41):  # Linux follows 40 links in one path, and refuses the 41st
        name = "f.txt"
        for number in range(length, 0, -1):
            (tmp_path / f"c{length}-{number}").symlink_to(name)
            name = f"c{length}-{number}"
        try:
            system = (tmp_path / name).read_text()
        except OSError as error:
            system = os.strerror(error.errno or 0)
        output = await read(tool, name)
        assert system in (INSIDE, "Too many levels of symbolic links"), system
        if system == INSIDE:
            assert not output.is_error and INSIDE.strip() in output.content, length
        else:
            assert output.is_error, length
            assert "too many levels of symbolic links" in output.content
    (tmp_path / "loop").symlink_to("loop")
    assert "too many levels of symbolic links" in (await read(tool, "loop")).content


async def test_read_a_folder_that_becomes_a_link_as_the_walk_reaches_it_is_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, outside = tree(tmp_path)
    for folder, text in [("e", "moved inside\n"), ("g", INSIDE)]:
        (workspace / folder).mkdir()
        (workspace / folder / "f.txt").write_text(text)
    # each folder becomes a link, once: after the walk looked at it, before it opens it
    swap_on_look(monkeypatch, workspace, {("d", 1): "e", ("g", 1): str(outside / "d")})
    tool = ReadTool(workspace)

    inside = await read(tool, "d/f.txt")  # d is now a link to e: followed, it stays inside
    out = await read(tool, "g/f.txt")  # g is now a link out: refused

    monkeypatch.undo()
    assert not inside.is_error and "moved inside" in inside.content, inside.content
    assert out.is_error and "outside the workspace" in out.content, out.content
    assert SECRET.strip() not in out.content


async def test_read_a_file_that_becomes_a_link_as_it_is_opened_is_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, outside = tree(tmp_path)
    (workspace / "e.txt").write_text("moved inside\n")
    (workspace / "g.txt").write_text(INSIDE)
    (workspace / "h.txt").write_text(INSIDE)
    # notes.txt and h.txt change as read checks them, g.txt as read opens it
    swaps = {
        ("notes.txt", 1): "e.txt",
        ("h.txt", 1): str(outside / "d"),
        ("g.txt", 3): str(outside / "secret.txt"),
    }
    swap_on_look(monkeypatch, workspace, swaps)
    tool = ReadTool(workspace)

    inside = await read(tool, "notes.txt")
    out = await read(tool, "g.txt")
    folder_out = await read(tool, "h.txt")

    monkeypatch.undo()
    assert not swaps, f"the walk did not look as expected: {swaps} never swapped"
    assert not inside.is_error and "moved inside" in inside.content, inside.content
    for refused in (out, folder_out):  # not even what is outside is told
        assert refused.is_error and "outside the workspace" in refused.content, refused.content
    assert SECRET.strip() not in out.content


async def test_read_a_file_that_keeps_becoming_a_link_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, _ = tree(tmp_path)
    real_stat = os.stat
    looks = {"k": 0, "m": 0}
    first = {"k": 1, "m": 3}  # k changes from read's check on, m from its open on
    made = {"k": 0, "m": 0}
    for chain in looks:
        (workspace / f"{chain}0").write_text(INSIDE)

    def look_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        info = real_stat(path, *args, **kwargs)
        chain = path[:1] if isinstance(path, str) else ""
        if kwargs.get("dir_fd") is not None and chain in looks and stat.S_ISREG(info.st_mode):
            looks[chain] += 1
            if looks[chain] >= first[chain]:  # each file it reaches becomes a link to a new one
                made[chain] += 1
                (workspace / f"{chain}{made[chain]}").write_text(INSIDE)
                os.rename(workspace / path, workspace / f"{path}.away")
                os.symlink(f"{chain}{made[chain]}", workspace / path)
        return info

    monkeypatch.setattr(os, "stat", look_then_swap)
    tool = ReadTool(workspace)

    checked = await read(tool, "k0")
    opened = await read(tool, "m0")

    monkeypatch.undo()
    for output in (checked, opened):
        assert output.is_error, output.content
        assert "it kept changing into a symbolic link" in output.content


async def test_read_a_folder_swapped_for_a_link_mid_read_never_reads_outside(
    tmp_path: Path,
) -> None:
    workspace, outside = tree(tmp_path)
    tool = ReadTool(workspace)
    escapes = 0

    async def once(number: int) -> None:
        nonlocal escapes
        escapes += SECRET.strip() in (await read(tool, "d/f.txt")).content

    with Swapper(workspace, outside):
        seen = await keep_calling(workspace, once)
    assert seen >= SEEN, "the swapper never got going: the race did not happen"
    assert escapes == 0, f"{escapes} reads reached outside the workspace"


PLACES = ["ws", "ws/a", "ws/a/b", "out", "out/c"]


@st.composite
def linked_tree(draw: st.DrawFn) -> dict[str, Any]:
    """Folders, files and links (relative or absolute targets) in ``ws`` and ``out``; paths."""
    places = st.sampled_from(PLACES)
    target = st.one_of(
        st.tuples(st.just("abs"), st.sampled_from(["ws", "ws/a", "out", "out/c", "ws/f", "out/f"])),
        st.tuples(st.just("rel"), st.sampled_from(["..", "../..", "a", "../out", "l1", "f",
                                                   "../../out/c", "nowhere", ".", "b/f"])),
    )
    return {
        "folders": draw(st.lists(places, max_size=4)),
        "files": draw(st.lists(st.tuples(places, st.sampled_from(["f", "g"])), max_size=5)),
        "links": draw(st.lists(st.tuples(places, st.sampled_from(["l1", "l2"]), target),
                               min_size=1, max_size=5)),
        "paths": draw(st.lists(st.lists(st.sampled_from(["a", "b", "c", "f", "l1", "l2", "..",
                                                         ".", "out"]),
                                        min_size=1, max_size=4), min_size=30, max_size=30)),
    }


# No shrinking: a failure is reported at once, as found (shrinking trees of links takes minutes).
@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(plan=linked_tree())
def test_read_no_path_through_any_links_reaches_a_file_outside(plan: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        base = Path(temporary)
        for folder in ["ws", "out/c", *plan["folders"]]:
            (base / folder).mkdir(parents=True, exist_ok=True)
        for name in ["out/f", "out/c/f"]:  # always a secret to reach for
            (base / name).write_text(SECRET)
        for folder, name in plan["files"]:
            if (base / folder).is_dir() and not os.path.lexists(base / folder / name):
                (base / folder / name).write_text(SECRET if folder.startswith("out") else INSIDE)
        for folder, name, (kind, spec) in plan["links"]:
            if (base / folder).is_dir() and not os.path.lexists(base / folder / name):
                (base / folder / name).symlink_to(str(base / spec) if kind == "abs" else spec)
        tool = ReadTool(base / "ws")
        real_root = os.path.realpath(base / "ws")
        for parts in plan["paths"]:
            path = "/".join(parts)
            output = asyncio.run(read(tool, path))
            assert SECRET.strip() not in output.content, path
            if not output.is_error:  # what the walk opened, the system also finds inside
                truth = os.path.realpath(base / "ws" / path)
                assert truth.startswith(real_root + os.sep), (path, truth)
