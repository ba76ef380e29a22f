"""ch22 · A crash loses only the step in flight: kill -9 a real ``claw`` process, then resume.

claw runs as a process of its own against the loopback server (``claw_process.Piped``, forked
from the test's process, with its own pipes and exit status). Its first step reads a file;
its second asks ``bash`` to run a command that signals it has started and then waits. While it
waits, the step is in flight, and the test kills claw with SIGKILL: no handler, no cleanup, no
last write. The transcript must hold the first step whole and nothing of the second, and
``claw --continue`` must send the model exactly what it was sent before the second step. Then a
torn half-line, as a kill in the middle of a write leaves, is reported with its file and line,
skipped, and cut off when the session goes on.
"""

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from claw_command import calls, run_claw, says
from claw_process import piped
from marked_processes import unique_marker

from claw.sessions import list_sessions, load_session, sessions_folder
from claw.types import AssistantMessage, ToolResultMessage
from clawbook.harness.loopback import LoopbackServer


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.mark.timeout(60)  # a process of its own, on a machine that may be busy
def test_session_kill_9_mid_step_loses_only_that_step_and_resumes(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    marker: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sessions_folder(tmp_path)
    (tmp_path / "notes.txt").write_text("step one\n")
    wait = f"touch started && (exec -a {marker} sleep 60)"
    server.add(calls("read", {"path": "notes.txt"}), calls("bash", {"command": wait}, "call-2"))

    with piped(server, tmp_path, "Read, then wait.", "--unguarded") as claw:
        claw.wait_until((tmp_path / "started").exists, "the second step's command started")
        claw.signal(signal.SIGKILL)  # no handler, no cleanup, no last write
        status, _ = claw.wait()
    assert status == 128 + signal.SIGKILL

    [info] = list_sessions(tmp_path)
    crashed = load_session(info.path)
    assert crashed.notices == []
    roles = [message.role for message in crashed.history]
    assert roles == ["system", "user", "assistant", "tool"]  # step one whole, step two not at all
    assert isinstance(crashed.history[2], AssistantMessage)
    assert crashed.history[2].tool_calls[0].name == "read"
    assert isinstance(crashed.history[3], ToolResultMessage)
    assert "step one" in crashed.history[3].content
    before_step_two = server.requests[1].json["messages"]

    # A kill in the middle of a write leaves half a line: reported, skipped, then cut off.
    with info.path.open("ab") as file:
        file.write(b'{"type":"message","message":{"role":"assistant","content":"hal')
    torn_line = len(info.path.read_bytes().split(b"\n"))
    server.add(says("Resumed."))
    assert run_claw(server, tmp_path, monkeypatch, "Go on.", "--continue", "--unguarded") == 0

    error = capsys.readouterr().err
    assert f"{info.path}:{torn_line}: the last line is incomplete" in error
    resumed = server.requests[-1].json["messages"]
    assert resumed == [*before_step_two, {"role": "user", "content": "Go on."}]
    after = load_session(info.path)
    assert after.notices == []
    assert [m.role for m in after.history] == [*roles, "user", "assistant"]
