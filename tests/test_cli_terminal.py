"""ch19 · The terminal app: the REPL at a terminal, and print mode through real pipes and signals.

Most tests run claw's REPL in this process (``claw_command.converse``): standard input and
output are a terminal, the keys are typed at prompt_toolkit's input. Three things need a real
process (``claw_process.py``: forked from this one, with its own terminal or pipes, signals and
exit status), six processes in all:

- a real pseudo-terminal, where Ctrl-C during an answer is a SIGINT the terminal sends, and
  closing the window is a SIGHUP (``test_cli_terminal_converses_in_a_real_terminal...``), and
  where a server's error text must not move the cursor or write the clipboard
  (``test_cli_terminal_a_server_error_is_one_harmless_line...``);
- a pipe whose reader goes away, with ``-p`` and without (``..._piped_into_head_ends_quietly...``);
- SIGTERM and SIGHUP in the middle of a bash command, which must die with claw
  (``test_cli_a_signal_cancels_the_run_kills_its_commands_and_exits``).

Every wait is for something claw shows or does, never a fixed sleep.
"""

import json
import signal
import stat
from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, says, tool_results
from claw_process import TIMEOUT, piped, raise_todo, terminal
from marked_processes import assert_none_marked, marked, unique_marker

from claw.plan import PLAN_MODE_NOTE, PLAN_MODE_OVER, refusal
from claw.repl import EXIT_HINT
from clawbook.harness.loopback import (
    DropReply,
    JSONReply,
    LoopbackServer,
    StreamReply,
    chunk,
    error_body,
    sse,
    text_chunks,
)

pytestmark = pytest.mark.timeout(60)  # whole conversations, or processes, on a busy machine

marker = pytest.fixture(unique_marker)
no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def stalling(first: str) -> StreamReply:
    """A turn that streams ``first`` in one chunk, then nothing for a long time (till cancelled)."""
    return StreamReply(
        pieces=[
            sse(*text_chunks(first, size=len(first)), done=False),
            sse(chunk(finish_reason="stop")),
        ],
        pause=TIMEOUT,
    )


def users(server: LoopbackServer, request: int) -> list[str]:
    """The user messages of request number ``request``."""
    return [m["content"] for m in server.requests[request].json["messages"] if m["role"] == "user"]


def test_cli_terminal_converses_in_a_real_terminal_ctrl_c_cancels_and_sighup_ends_it(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.add(
        says("Paris is the capital."),
        stalling("Let me think about this"),
        says("Shorter then: 42."),
    )
    with terminal(server, tmp_path) as claw:
        claw.expect("claw>")
        claw.type("What is the capital of France?")
        claw.expect("Paris is the capital.")
        claw.expect("claw>")
        claw.type("Explain everything.")
        claw.expect("think")  # the answer is streaming
        claw.press_ctrl_c()  # the terminal sends SIGINT: the run is cancelled, claw stays
        claw.expect("[cancelled after 1 step(s)]")
        claw.expect("claw>")
        claw.type("Just the answer.")
        claw.expect("Shorter then: 42.")
        claw.expect("claw>")
        claw.signal(signal.SIGHUP)  # the terminal window was closed
        assert claw.exit_status() == 128 + signal.SIGHUP
    assert "Traceback" not in claw.seen
    # One conversation: the last prompt was sent with everything before it.
    assert users(server, 2) == [
        "What is the capital of France?",
        "Explain everything.",
        "Just the answer.",
    ]


def test_cli_terminal_a_server_error_is_one_harmless_line_and_the_conversation_goes_on(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real terminal is the subject: what a hostile server's error text would make it do.
    # The attack: an OSC 52 clipboard write ("pwned") and a clear-screen in the error body.
    from claw.providers.http import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda *_: None)  # forked claw: no retries
    hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"
    message = f"test/model is not a valid model ID{hostile}"
    server.add(
        JSONReply(error_body(400, message), status=400),
        says("Paris is the capital."),
        DropReply(),  # the server goes away without an answer
    )
    with terminal(server, tmp_path) as claw:
        claw.expect("claw>")
        claw.type("Hello?")
        claw.expect(r"claw: HTTP 400: test/model is not a valid model ID\x1b]52;c;cHduZWQ=")
        claw.expect("claw>")  # the REPL goes on
        claw.type("What is the capital of France?")
        claw.expect("Paris is the capital.")
        claw.expect("claw>")
        claw.type("And of Spain?")
        claw.expect(f"claw: the connection to {server.base_url} failed before a response")
        claw.expect("claw>")
        claw.child.send("\x04")  # Ctrl-D: leave
        assert claw.exit_status() == 0
    assert "\x1b]52" not in claw.seen and "\x1b[2J" not in claw.seen
    assert "Traceback" not in claw.seen
    assert users(server, 1) == ["Hello?", "What is the capital of France?"]  # one conversation


def test_cli_terminal_keeps_the_prompts_for_the_next_session_where_up_recalls_them(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Paris is the capital."), says("About two million people."))
    typed = "What is the capital of France?\rHow many people live there?\r\x04"
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(tmp_path / ".claw"))  # not made yet: claw makes it
    first = converse(server, tmp_path, monkeypatch, keys=typed)
    assert first.status == 0
    assert "Paris is the capital." in first.out and "About two million people." in first.out
    # One conversation: the second prompt was sent with the first exchange before it.
    assert users(server, 1) == ["What is the capital of France?", "How many people live there?"]
    history = tmp_path / ".claw" / "history"
    assert "How many people live there?" in history.read_text()
    modes = [stat.S_IMODE(path.stat().st_mode) for path in (history.parent, history)]
    assert modes == [0o700, 0o600], "the prompts are the user's alone"

    # A new session: Up recalls the last prompt, Enter sends it again.
    server.add(says("Still about two million."))
    second = converse(server, tmp_path, monkeypatch, keys="\x1b[A\r\x04")
    assert second.status == 0
    assert users(server, 2) == ["How many people live there?"]  # a new conversation
    assert "Still about two million." in second.out


def test_cli_terminal_ctrl_c_clears_the_line_and_twice_at_an_empty_prompt_leaves(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Sent."))
    keys = (
        "\x03"  # at the empty prompt: the hint
        "more\x03"  # text typed, then Ctrl-C: the line is cleared, and the count starts again
        "\x03"  # so this is a first one again: the hint, no exit
        "Sent on.\r"
        "half a prompt\x03"  # cleared: nothing is sent
        "\x03\x03"  # the hint, then the second Ctrl-C in a row at the empty prompt: leave
        "Never sent.\r"  # never read
    )
    left = converse(server, tmp_path, monkeypatch, keys=keys)
    assert left.status == 0
    assert left.err.count(EXIT_HINT) == 3
    assert [users(server, n) for n in range(len(server.requests))] == [["Sent on."]]


def test_cli_terminal_runs_slash_commands_without_asking_the_model(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Hello."))
    keys = "/model test/other\r/nope\r/exit\rNever sent.\r"
    # A first prompt on the command line, answered before the first prompt is shown.
    done = converse(server, tmp_path, monkeypatch, "Say hello.", keys=keys)
    assert done.status == 0
    assert "Hello." in done.out and "model: test/other" in done.out
    assert "unknown command /nope: the commands are /help, /clear, /model" in done.err
    assert len(server.requests) == 1  # /exit left: "Never sent." was not


def test_cli_terminal_asks_with_a_diff_and_writes_after_a_yes(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("DEBUG = True\n")
    edit = {"path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    server.add(
        calls("read", {"path": "app.py"}, call_id="r"),  # an edit needs a read first
        calls("edit", edit, call_id="e"),
        says("Debugging is off."),
    )
    keys = "Turn debugging off.\ry\r"
    done = converse(server, tmp_path, monkeypatch, "--permission-mode", "default", keys=keys)
    assert done.status == 0
    question = done.err[done.err.index("needs approval") :]
    assert question.index("-DEBUG = True") < question.index("+DEBUG = False")
    assert question.index("+DEBUG = False") < question.index("[n] no:")
    assert (tmp_path / "app.py").read_text() == "DEBUG = False\n"
    assert "Debugging is off." in done.out


def test_cli_print_mode_piped_into_head_ends_quietly_and_so_does_a_one_shot_run(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # Small events, some 200 KB of them: more than a pipe holds (64 KiB), so claw is still
    # writing when `head` leaves, with a line or two in its own buffer.
    answer = "".join(f"line {n} of a long answer\n" for n in range(6_000))
    # -p first, then chapter 12's one-shot run (a prompt, no -p, no terminal): one line each.
    for arguments, first_line in (
        (["-p", "Write a lot.", "--output-format", "stream-json"], '{"type": "system"'),
        (["Write a lot.", "--unguarded"], "line 0 of a long answer"),
    ):
        server.add(
            StreamReply(pieces=[sse(*text_chunks(answer, size=64), chunk(finish_reason="stop"))])
        )
        with piped(server, tmp_path, *arguments) as claw:
            first = claw.stdout.readline()
            if not first:
                raise_todo(claw.stderr.read().decode())
            assert first.decode().startswith(first_line)  # one event, or one line, at a time
            claw.stdout.close()  # what `head -1` does after its line
            status, err = claw.wait()
        assert status == 141, arguments  # 128 + SIGPIPE, as a shell reports it
        # No BrokenPipeError, no traceback: nothing but claw's own warnings (such as the one
        # that a chapter still unwritten, ch22's sessions, leaves this run unrecorded).
        assert [line for line in err.splitlines() if not line.startswith("claw: warning: ")] == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_cli_a_signal_cancels_the_run_kills_its_commands_and_exits(
    server: LoopbackServer, tmp_path: Path, marker: str, signum: signal.Signals
) -> None:
    # The command tells the test it runs by creating a file; the marker is an argument of both
    # shells, which stay while sleep runs.
    started = tmp_path / "started"
    command = f"sh -c 'touch {started}; sleep 300; :' {marker}; :"
    server.add(calls("bash", {"command": command, "timeout": 600}))
    arguments = ["-p", "Wait.", "--output-format", "json", "--permission-mode", "bypassPermissions"]
    with piped(server, tmp_path, *arguments) as claw:
        # Whatever claw writes before the command starts fits in the pipes: read it at the end.
        claw.wait_until(started.exists, "the bash command started")
        assert marked(marker), "the bash command runs"
        claw.signal(signum)
        out = claw.stdout.read().decode()
        status, err = claw.wait()
    assert status == 128 + signum
    assert_none_marked(marker)  # the bash tool's process group was killed
    result = json.loads(out)
    assert result["finish_reason"] == "cancelled" and result["is_error"] is True
    assert "Traceback" not in err


def test_cli_terminal_shows_the_mode_in_the_prompt_shift_tab_cycles_and_leaving_plan_works(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = {"path": "notes.md", "content": "planned\n"}
    server.add(
        calls("write", write, call_id="w1"),
        says("I may only plan."),
        calls("write", write, call_id="w2"),
        says("Written."),
    )
    keys = (
        "\x1b[Z/permissions\r"  # Shift+Tab: acceptEdits
        "\x1b[ZWrite the notes.\r"  # Shift+Tab again: plan, where the write is refused
        "/permissions\r"
        "/permissions default\r"  # leaves plan mode
        "Write them now.\r"
        "y\r"  # default mode asks before a write
    )
    done = converse(server, tmp_path, monkeypatch, keys=keys, screen=True)
    assert done.status == 0
    # Each prompt is drawn with the mode it is in (the default mode is the bare prompt).
    drawn = done.screen
    assert drawn.index("claw [acceptEdits]> ") < drawn.index("claw [plan]> ")
    assert drawn.rindex("claw [plan]> ") < drawn.rindex("claw> ")
    said = [line for line in done.out.splitlines() if line.startswith("mode: ")]
    assert said == ["mode: acceptEdits", "mode: plan", "mode: default"]
    assert PLAN_MODE_NOTE in json.dumps(server.requests[0].json["messages"])  # model told
    assert refusal("write") in tool_results(server)[0]
    assert PLAN_MODE_OVER in json.dumps(server.requests[2].json["messages"])
    assert (tmp_path / "notes.md").read_text() == "planned\n"
