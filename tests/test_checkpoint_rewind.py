"""ch27 · Rewinding: a crash leaves the old state or the new; the conversation stays append-only.

A crash is injected by making ``Checkpoints.put`` (which puts back one file) or the encoding
of the transcript's record raise ``Crash``, which no ``except Exception`` stops; a new
``Checkpoints`` on the same folder is the next claw to start.
"""

import json
from pathlib import Path

import pytest
from checkpointed import Workspace, tree

from claw import checkpoints as module
from claw.checkpoints import CheckpointError, Checkpoints, Crash
from claw.sessions import load_session
from claw.types import AssistantMessage, UserMessage


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    root = tmp_path / "work"
    root.mkdir()
    return Workspace(root, tmp_path / "sessions", git=False)


async def four_files_changed(space: Workspace) -> dict[str, bytes]:
    """Prompt 1 changes three files and makes a fourth; the tree as prompt 1 found it."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (space.root / name).write_text(f"{name} at first\n")
    found = tree(space.root)
    await space.prompt("Change all three, add one.")
    for name in ("a.txt", "b.txt", "c.txt", "new.txt"):
        await space.read(name)
        await space.call("write", path=name, content=f"{name} changed\n")
    return found


def crash_on_call(monkeypatch: pytest.MonkeyPatch, target: object, name: str, when: int) -> None:
    """Make ``target.name`` crash on its ``when``-th call (counting from 1)."""
    real = getattr(target, name)
    count = 0

    def crashing(*args: object, **kwargs: object) -> object:
        nonlocal count
        count += 1
        if count == when:
            raise Crash
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, crashing)


async def test_checkpoint_a_crash_while_files_are_put_back_is_finished_at_the_next_start(
    space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = await four_files_changed(space)
    with monkeypatch.context() as patched:
        crash_on_call(patched, Checkpoints, "put", 2)  # one file put back, then the crash
        with pytest.raises(Crash):
            space.checkpoints.rewind(1, "code")
    assert tree(space.root) != found  # mid-rewind: a mix on disk, until the next start

    said = space.reopen().recover()

    assert said == "a rewind to prompt 1 was interrupted; it is now finished (4 files)"
    assert tree(space.root) == found
    assert space.reopen().recover() is None  # the journal is gone: done once


async def test_checkpoint_a_crash_before_the_rewind_counts_is_undone_at_the_next_start(
    space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (space.root / "a.txt").write_text("first\n")
    await space.prompt("One.")
    await space.read("a.txt")
    await space.call("write", path="a.txt", content="second\n")
    space.checkpoints.rewind(1, "code")  # a rewind that took effect, before the one that crashes
    await space.prompt("Two.")
    await space.read("a.txt")
    await space.call("write", path="a.txt", content="third\n")
    changed = tree(space.root)
    transcript = space.transcript.read_bytes()
    with monkeypatch.context() as patched:
        crash_on_call(patched, module, "encode", 1)  # the rewind record is never written
        with pytest.raises(Crash):
            space.checkpoints.rewind(2, "code")

    said = space.reopen().recover()

    assert said == (
        "a rewind to prompt 2 was interrupted before it took effect; it was undone: the files "
        "are as they were before it (1 file)"
    )
    assert tree(space.root) == changed
    assert space.transcript.read_bytes() == transcript


async def test_checkpoint_a_conversation_rewind_appends_and_loading_replays_it(
    space: Workspace,
) -> None:
    await space.prompt("First.")
    space.history.append(AssistantMessage(content="One."))
    await space.prompt("Second.")
    space.history.append(AssistantMessage(content="Two."))
    space.transcript.write_bytes(
        space.transcript.read_bytes()
        + b"".join(
            module.encode(module.history_record(space.history[:n])) for n in (2, 4)
        )  # what chapter 22's recorder would have written, in one form it may take
    )
    before = space.transcript.read_bytes()

    said = space.checkpoints.rewind(2, "conversation", space.history)

    assert said == "rewound the conversation to before prompt 2"
    assert space.transcript.read_bytes().startswith(before)  # append-only: nothing rewritten
    record = json.loads(space.transcript.read_bytes().splitlines()[-1])
    assert (record["type"], record["rewind"]["prompt"], record["rewind"]["what"]) == (
        "history",
        2,
        "conversation",
    )
    assert space.history == [UserMessage(content="First."), AssistantMessage(content="One.")]
    assert load_session(space.transcript).history == space.history


async def test_checkpoint_a_prompt_no_longer_in_the_conversation_cannot_be_rewound_to(
    space: Workspace,
) -> None:
    await space.prompt("First.")
    await space.prompt("Second.")
    space.history[:] = [UserMessage(content="A summary of both.")]  # compacted, say
    before = space.transcript.read_bytes()

    with pytest.raises(CheckpointError) as raised:
        space.checkpoints.rewind(2, "both", space.history)

    assert str(raised.value) == (
        "the conversation no longer holds prompt 2 where it was (it was compacted, rewound or "
        "replaced since); rewind the code only: /rewind 2 code"
    )
    assert space.transcript.read_bytes() == before
