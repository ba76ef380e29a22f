"""ch27 · Before-images: what the file tools change is kept per prompt, and a rewind puts it back.

The tools are claw's own (``default_tools``), called the way the loop calls them
(``checkpointed.Workspace``); no git here: only before-images.
"""

import json
from pathlib import Path

import pytest
from checkpointed import Workspace, tree

from claw.checkpoints import CheckpointError, rewind_command

BINARY = bytes(range(256)) * 4
CRLF = b"one\r\ntwo\r\n"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    root = tmp_path / "work"
    root.mkdir()
    return Workspace(root, tmp_path / "sessions", git=False, limit=10_000)


async def test_checkpoint_a_rewind_puts_back_binary_and_crlf_files_byte_for_byte(
    space: Workspace,
) -> None:
    (space.root / "crlf.txt").write_bytes(CRLF)
    (space.root / "logo.bin").write_bytes(BINARY)
    before = tree(space.root)
    await space.prompt("Tidy up.")
    await space.read("crlf.txt")
    patch = (
        "*** Begin Patch\n*** Delete File: logo.bin\n*** Update File: crlf.txt\n"
        "@@\n one\n-two\n+three\n*** End Patch"
    )
    assert not (await space.call("apply_patch", patch=patch)).is_error
    assert (space.root / "crlf.txt").read_bytes() == b"one\r\nthree\r\n"

    said = space.checkpoints.rewind(1, "code")

    assert tree(space.root) == before
    assert said.splitlines() == [
        "rewound the code to before prompt 1",
        "  restored crlf.txt",
        "  restored logo.bin",
    ]


async def test_checkpoint_a_file_that_did_not_exist_is_removed_by_the_rewind(
    space: Workspace,
) -> None:
    await space.prompt("Add a module.")
    await space.call("write", path="pkg/new.py", content="x = 1\n")

    said = space.checkpoints.rewind(1, "code")

    assert not (space.root / "pkg" / "new.py").exists()
    assert "  removed pkg/new.py" in said.splitlines()
    record = json.loads(space.transcript.read_bytes().splitlines()[-1])
    assert (record["type"], record["rewind"]["prompt"], record["rewind"]["what"]) == (
        "rewind",
        1,
        "code",
    )


async def test_checkpoint_the_state_a_prompt_found_wins_over_later_changes(
    space: Workspace,
) -> None:
    (space.root / "a.txt").write_text("first\n")
    await space.prompt("One.")
    await space.read("a.txt")
    await space.call("edit", path="a.txt", old_string="first", new_string="second")
    await space.call("edit", path="a.txt", old_string="second", new_string="third")
    await space.prompt("Two.")
    await space.call("edit", path="a.txt", old_string="third", new_string="fourth")

    objects = space.checkpoints.folder / "objects"
    assert not any(b"second" in stored.read_bytes() for stored in objects.iterdir())  # not kept
    space.checkpoints.rewind(2, "code")
    assert (space.root / "a.txt").read_text() == "third\n"  # as prompt 2 found it
    space.checkpoints.rewind(1, "code")
    assert (space.root / "a.txt").read_text() == "first\n"  # not "second": the prompt's start


async def test_checkpoint_a_rename_by_patch_is_undone_at_both_paths(space: Workspace) -> None:
    (space.root / "old.txt").write_bytes(CRLF)
    await space.prompt("Rename it.")
    await space.read("old.txt")
    patch = (
        "*** Begin Patch\n*** Update File: old.txt\n*** Move to: sub/new.txt\n"
        "@@\n one\n-two\n+2\n*** End Patch"
    )
    assert not (await space.call("apply_patch", patch=patch)).is_error

    space.checkpoints.rewind(1, "code")

    assert tree(space.root) == {"old.txt": CRLF}


async def test_checkpoint_a_file_over_the_cap_is_not_kept_and_the_rewind_says_so(
    space: Workspace,
) -> None:
    big = b"x" * 10_001  # the workspace's cap is 10,000 bytes
    (space.root / "big.log").write_bytes(big)
    at_the_cap = b"k" * 10_000  # exactly the cap: kept
    (space.root / "small.txt").write_bytes(at_the_cap)
    await space.prompt("Clear both.")
    for path in ("big.log", "small.txt"):
        await space.read(path)
        await space.call("write", path=path, content="")

    said = space.checkpoints.rewind(1, "code")

    assert not any(big in path.read_bytes() for path in space.checkpoints.folder.rglob("*.*"))
    assert (space.root / "small.txt").read_bytes() == at_the_cap
    assert (space.root / "big.log").read_bytes() == b""  # left as it is: nothing to restore
    assert said.splitlines() == [
        "rewound the code to before prompt 1",
        "  restored small.txt",
        "  could not restore big.log: it was over 10,000 bytes when it was changed, "
        "so no copy was kept",
    ]


async def test_checkpoint_the_list_shows_each_prompt_and_the_files_it_changed(
    space: Workspace,
) -> None:
    (space.root / "a.txt").write_text("a\n")
    assert space.checkpoints.listing() == "no checkpoints yet: each prompt you send makes one"
    await space.prompt("Fix the parser\nand its tests, please")
    await space.call("write", path="c.txt", content="c\n")
    await space.call("write", path="b.txt", content="b\n")
    await space.call("write", path="a.txt", content="not read first\n")  # refused: no change
    await space.call("write", path="../escape.txt", content="out\n")  # refused: outside
    await space.prompt("Explain it. " + "very " * 20 + "slowly.")

    listing = space.checkpoints.listing()

    assert listing.splitlines() == [
        "  1. Fix the parser  [b.txt, c.txt]",
        "  2. Explain it. very very very very very very very ve…  "
        "[no file changed by claw's file tools]",
    ]


async def test_checkpoint_an_unknown_prompt_or_a_wrong_command_changes_nothing(
    space: Workspace,
) -> None:
    await space.prompt("One.")
    await space.call("write", path="a.txt", content="a\n")

    with pytest.raises(CheckpointError, match=r"^there is no prompt 7 \(the prompts are 1 to 1\)$"):
        space.checkpoints.rewind(7, "code")
    with pytest.raises(CheckpointError, match=r"^the conversation no longer holds prompt "):
        space.checkpoints.rewind(1, "conversation")  # and no history to rewind
    said = await rewind_command(space.checkpoints, "1 everything", space.history, None)

    assert said.splitlines() == [
        "not understood: /rewind 1 everything",
        "/rewind N [code|conversation|both]: go back to before prompt N (both, if not said)",
    ]
    assert tree(space.root) == {"a.txt": b"a\n"}


async def test_checkpoint_a_rewind_never_writes_through_a_link_that_leads_out(
    space: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (space.root / "sub").mkdir()
    (space.root / "sub" / "a.txt").write_text("mine\n")
    await space.prompt("Change it.")
    await space.read("sub/a.txt")
    await space.call("write", path="sub/a.txt", content="changed\n")
    # The attack: the folder is swapped for a link to a folder outside the workspace.
    (space.root / "sub" / "a.txt").unlink()
    (space.root / "sub").rmdir()
    (space.root / "sub").symlink_to(outside)

    said = await rewind_command(space.checkpoints, "1 code", space.history, None)

    assert said == (
        "cannot rewind: sub/a.txt now leads out of the workspace (through a symbolic link); "
        "nothing was changed"
    )
    assert list(outside.iterdir()) == []
    assert not space.checkpoints.journal.exists()
