"""ch27 · ``/rewind`` in the ``claw`` REPL, and checkpoints that ``--resume`` keeps.

claw runs in this process against the loopback server (``claw_command``); what the model is
sent after a rewind is read from the server's requests.
"""

from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, says

from claw.sessions import list_sessions, load_session
from claw.types import UserMessage
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)


def prompts_sent(server: LoopbackServer) -> list[str]:
    """The user messages of the last request the model was sent."""
    messages = server.requests[-1].json["messages"]
    return [message["content"] for message in messages if message["role"] == "user"]


def two_prompts(server: LoopbackServer) -> None:
    server.add(
        calls("write", {"path": "a.txt", "content": "A\n"}),
        says("Wrote a."),
        calls("write", {"path": "b.txt", "content": "B\n"}, "call-2"),
        says("Wrote b."),
    )


def test_checkpoint_repl_lists_the_prompts_and_rewinds_code_and_conversation(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    two_prompts(server)
    server.add(says("Only a.txt is there."))

    done = converse(
        server,
        project,
        monkeypatch,
        "--unguarded",
        home=tmp_path / "home",
        keys="Write a.\rWrite b.\r/rewind\r/rewind 2\rWhat is there?\r",
    )

    assert done.status == 0
    lines = done.out.splitlines()
    listed = lines.index("  1. Write a.  [a.txt]")
    assert lines[listed + 1] == "  2. Write b.  [b.txt]"
    rewound = lines.index("rewound the code and conversation to before prompt 2")
    assert lines[rewound + 1 :][:1] == ["  removed b.txt"]
    assert sorted(path.name for path in project.iterdir()) == ["a.txt"]
    assert prompts_sent(server) == ["Write a.", "What is there?"]
    [session] = list_sessions(project)
    kept = load_session(session.path).history  # what the next run of the session would send
    assert [m.content for m in kept if isinstance(m, UserMessage)] == ["Write a.", "What is there?"]
    transcript = session.path.read_text()
    assert '"Write b."' in transcript  # the rewind was appended: nothing was taken out
    assert transcript.index('"Write b."') < transcript.index('"rewind":')


def test_checkpoint_resume_replays_the_rewind_and_keeps_the_checkpoints(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    two_prompts(server)
    first = converse(
        server,
        project,
        monkeypatch,
        "--unguarded",
        home=home,
        keys="Write a.\rWrite b.\r/rewind 2 conversation\r",
    )
    assert first.status == 0
    [session] = list_sessions(project)
    server.add(says("Back at the start."))

    done = converse(
        server,
        project,
        monkeypatch,
        "--unguarded",
        "--resume",
        session.id,
        home=home,
        keys="/rewind 1 code\rWhere are we?\r",
    )

    assert done.status == 0
    lines = done.out.splitlines()
    rewound = lines.index("rewound the code to before prompt 1")
    assert lines[rewound + 1 :][:2] == ["  removed a.txt", "  removed b.txt"]
    assert list(project.iterdir()) == []
    assert prompts_sent(server) == ["Write a.", "Where are we?"]  # prompt 2 stays rewound
