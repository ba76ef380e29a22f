"""ch19 · The terminal app in a real terminal, and print mode through real pipes and signals.

claw runs as a process of its own here (``claw_process.py``): in a pseudo-terminal driven with
``pexpect`` for the conversation, with pipes for print mode. Every wait is for something claw
shows or does, never a fixed sleep, so that a busy machine only makes the tests slower.
"""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from claw_command import calls, says
from claw_process import TIMEOUT, Terminal, claw_command, claw_environment, raise_todo
from marked_processes import assert_none_marked, marked, unique_marker

from claw.signals import exit_status
from clawbook.harness.loopback import LoopbackServer, StreamReply, chunk, sse, text_chunks

pytestmark = pytest.mark.timeout(120)  # real processes on a machine that may be busy

marker = pytest.fixture(unique_marker)


def stalling(first: str) -> StreamReply:
    """A turn that streams ``first`` and then nothing for a long time (until cancelled)."""
    return StreamReply(
        pieces=[sse(*text_chunks(first), done=False), sse(chunk(finish_reason="stop"))],
        pause=TIMEOUT,
    )


def users(server: LoopbackServer, request: int) -> list[str]:
    """The user messages of request number ``request``."""
    return [m["content"] for m in server.requests[request].json["messages"] if m["role"] == "user"]


def test_cli_terminal_converses_keeps_history_across_sessions_and_ctrl_d_exits(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.add(says("Paris is the capital."), says("About two million people."))
    claw = Terminal(server, tmp_path)
    claw.expect("claw>")
    claw.type("What is the capital of France?")
    claw.expect("Paris is the capital.")
    claw.expect("claw>")
    claw.type("How many people live there?")
    claw.expect("About two million people.")
    claw.expect("claw>")
    claw.child.sendeof()
    assert claw.exit_status() == 0
    # One conversation: the second prompt was sent with the first exchange before it.
    assert users(server, 1) == ["What is the capital of France?", "How many people live there?"]
    history = (tmp_path / ".claw" / "history").read_text()
    assert "What is the capital of France?" in history  # kept for the next session

    claw = Terminal(server, tmp_path)  # a new session: Up recalls the last prompt
    claw.expect("claw>")
    claw.child.send("\x1b[A")
    claw.expect("How many people live there?")
    claw.child.sendintr()  # Ctrl-C with text typed clears the line, in the same prompt
    claw.child.sendeof()  # so this Ctrl-D is at an empty prompt: leave
    assert claw.exit_status() == 0


def test_cli_terminal_runs_slash_commands_without_asking_the_model(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.add(says("Hello."))
    claw = Terminal(server, tmp_path, "Say hello.")  # a first prompt on the command line
    claw.expect("Hello.")
    claw.expect("claw>")
    claw.type("/model test/other")
    claw.expect("model: test/other")
    claw.type("/nope")
    claw.expect("unknown command /nope: the commands are /help, /clear, /model")
    claw.type("/exit")
    assert claw.exit_status() == 0
    assert len(server.requests) == 1


def test_cli_terminal_asks_with_a_diff_and_writes_after_a_yes(
    server: LoopbackServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("DEBUG = True\n")
    server.add(
        calls(
            "edit", {"path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
        ),
        says("Debugging is off."),
    )
    server.add(calls("read", {"path": "app.py"}, call_id="r"))  # the edit needs a read first
    server.add(says("unused"))
    claw = Terminal(server, tmp_path, "--permission-mode", "default")
    claw.expect("claw>")
    claw.type("Turn debugging off.")
    claw.expect("needs approval")
    claw.expect("-DEBUG = True")
    claw.expect("+DEBUG = False")
    claw.expect("[n] no:")
    claw.type("y")
    claw.expect("claw>")
    claw.child.sendeof()
    assert claw.exit_status() == 0


def test_cli_terminal_ctrl_c_cancels_the_answer_and_keeps_the_conversation(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.add(stalling("Let me think about this"), says("Shorter then: 42."))
    claw = Terminal(server, tmp_path)
    claw.expect("claw>")
    claw.type("Explain everything.")
    claw.expect("think")  # the answer is streaming
    claw.child.sendintr()
    claw.expect("[cancelled after 1 step(s)]")
    claw.expect("claw>")
    claw.type("Just the answer.")
    claw.expect("Shorter then: 42.")
    claw.expect("claw>")
    claw.child.sendintr()  # at an empty prompt: a hint first
    claw.expect("press Ctrl-C again to exit")
    claw.expect("claw>")  # the prompt is back (a Ctrl-C in between would be a signal, dropped)
    claw.child.sendintr()
    assert claw.exit_status() == 0
    assert users(server, 1) == ["Explain everything.", "Just the answer."]


def test_cli_print_mode_piped_into_head_ends_quietly(
    server: LoopbackServer, tmp_path: Path
) -> None:
    answer = "".join(f"line {n} of a long answer\n" for n in range(20_000))  # > a pipe's buffer
    server.add(
        StreamReply(pieces=[sse(*text_chunks(answer, size=64), chunk(finish_reason="stop"))])
    )
    claw = subprocess.Popen(
        claw_command(server, "-p", "Write a lot.", "--output-format", "stream-json"),
        cwd=tmp_path,
        env=claw_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert claw.stdout is not None and claw.stderr is not None
    first = claw.stdout.readline()
    if not first:
        raise_todo(claw.stderr.read().decode())
    assert json.loads(first)["type"] == "system"  # one event a line
    claw.stdout.close()  # what `head -1` does after its line
    err = claw.stderr.read().decode()
    raise_todo(err)
    assert claw.wait(TIMEOUT) == 141  # 128 + SIGPIPE, as a shell reports it
    # No BrokenPipeError, no traceback: nothing but claw's own warnings (such as the one that a
    # chapter still unwritten, ch22's sessions, leaves this run unrecorded).
    assert [line for line in err.splitlines() if not line.startswith("claw: warning: ")] == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_cli_a_signal_cancels_the_run_kills_its_commands_and_exits(
    server: LoopbackServer, tmp_path: Path, marker: str, signum: signal.Signals
) -> None:
    # The marker is an argument of both shells, which stay while sleep runs.
    server.add(calls("bash", {"command": f"sh -c 'sleep 300; :' {marker}; :", "timeout": 600}))
    claw = subprocess.Popen(
        claw_command(
            server,
            "-p",
            "Wait.",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ),
        cwd=tmp_path,
        env=claw_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + TIMEOUT
    while not marked(marker) and claw.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # polling for the command to start, not waiting a fixed time
    if claw.poll() is not None:
        raise_todo(claw.communicate()[1])
    assert marked(marker), "the bash command never started"

    claw.send_signal(signum)
    out, err = claw.communicate(timeout=TIMEOUT)

    assert claw.returncode == 128 + signum
    assert_none_marked(marker)  # the bash tool's process group was killed
    result = json.loads(out)
    assert result["finish_reason"] == "cancelled" and result["is_error"] is True
    assert "Traceback" not in err


def test_cli_terminal_ends_on_sighup_at_the_prompt(server: LoopbackServer, tmp_path: Path) -> None:
    # A process SIGHUP kills ends with 129 even without chapter 19's handler, so this test
    # waits for chapter 19's exit statuses first (todo until they are written).
    assert exit_status(None, signal.SIGHUP) == 128 + signal.SIGHUP
    claw = Terminal(server, tmp_path)
    claw.expect("claw>")
    claw.child.kill(signal.SIGHUP)  # the terminal window was closed
    assert claw.exit_status() == 128 + signal.SIGHUP
    assert "Traceback" not in claw.seen
