"""Helpers for the tests that run the ``claw`` command against the loopback server.

``run_claw`` runs ``claw.main.main`` in this process, in ``project``, with ``answers`` typed at
the terminal (standard input); ``converse`` runs the REPL the same way, with keys typed at its
prompt; ``calls`` and ``says`` are the streamed model turns to script; ``no_fsync`` lets claw's
session records skip the wait for the disk where that is not what a test is about.
"""

import io
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from claw.main import main
from clawbook.harness.loopback import (
    LoopbackServer,
    streamed_call,
    streamed_text,
)


class Terminal(io.StringIO):
    """Standard input that is a terminal, with the answers typed at it."""

    def isatty(self) -> bool:
        """A terminal: claw may ask its questions here."""
        return True


calls = streamed_call
"""A streamed turn that asks for one call: ``calls(name, arguments, call_id, usage)``."""

says = streamed_text
"""A streamed turn with text and no tool calls: ``says(text)``."""


def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.fsync`` returns at once (make it a fixture: ``pytest.fixture(autouse=True)(no_fsync)``).

    Every claw run records its session and waits for the disk at the end of each step
    (chapter 22). That the records reach the disk is the subject of chapter 22's writer tests,
    which check that ``fsync`` is called; in a test about something else the wait only
    measures how busy the disk is (a few milliseconds each, far more beside other writers).
    A process forked during the test inherits it.
    """
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def run_claw(
    server: LoopbackServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    *arguments: str,
    answers: str = "",
    terminal: bool = False,
) -> int:
    """``claw PROMPT ARGUMENTS...`` in ``project`` with ``answers`` on stdin; its exit status.

    With ``terminal``, standard input is a terminal the answers are typed at; otherwise it is
    a pipe, and claw never takes an answer to a question from it.
    """
    monkeypatch.chdir(project)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setattr("sys.stdin", Terminal(answers) if terminal else io.StringIO(answers))
    return main([*arguments, "--model", "test/model", "--base-url", server.base_url])


def tool_results(server: LoopbackServer) -> list[str]:
    """The content of every tool result the model was sent, in the order it first saw them."""
    seen: dict[str, str] = {}
    for request in server.requests:
        for message in request.json["messages"]:
            if message["role"] == "tool":
                seen.setdefault(message["tool_call_id"], message["content"])
    return list(seen.values())


@dataclass
class Conversation:
    """How a conversation with claw's REPL ended, and what it wrote."""

    status: int
    """The exit status."""
    out: str
    """Standard output: the answers, and what slash commands print."""
    err: str
    """Standard error: everything about the answers (approval questions, notices, the summary)."""
    screen: str = ""
    """What prompt_toolkit drew (the prompts, with escape sequences), if ``converse`` kept it."""


def converse(
    server: LoopbackServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    *arguments: str,
    keys: str,
    home: Path | None = None,
    screen: bool = False,
) -> Conversation:
    r"""``claw ARGUMENTS...`` at a terminal, in this process: the REPL, with ``keys`` typed.

    Standard input and output are a terminal; ``keys`` go to prompt_toolkit as a person types
    them, ahead of time: ``\r`` is Enter, ``\x03`` Ctrl-C, ``\x04`` Ctrl-D, ``\x1b[A`` Up.
    Once they run out, the input ends, which the prompt takes as Ctrl-D. Ctrl-C while a run
    goes on is a signal that only a real terminal sends (``claw_process.Terminal``). The home
    folder, which holds the prompt history, is ``home`` (default: ``project``). With
    ``screen``, what prompt_toolkit draws is kept (``Conversation.screen``), as a 24x80
    terminal would be sent it; otherwise it is thrown away.
    """
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput, Output
    from prompt_toolkit.output.vt100 import Vt100_Output

    monkeypatch.chdir(project)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setenv("HOME", str(home or project))
    monkeypatch.setenv("NO_COLOR", "1")
    out, err = Terminal(), io.StringIO()
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    drawn = io.StringIO()
    output: Output = DummyOutput()
    if screen:
        output = Vt100_Output(drawn, lambda: Size(rows=24, columns=80), term="xterm")
    with create_pipe_input() as typed, create_app_session(input=typed, output=output):
        typed.send_text(keys)
        typed.close()  # the end of the input once the keys are read
        status = main([*arguments, "--model", "test/model", "--base-url", server.base_url])
    return Conversation(status, out.getvalue(), err.getvalue(), drawn.getvalue())
