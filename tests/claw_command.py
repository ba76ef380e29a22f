"""Helpers for the tests that run the ``claw`` command against the loopback server.

``run_claw`` runs ``claw.main.main`` in this process, in ``project``, with ``answers`` typed at
the terminal (standard input); ``calls`` and ``says`` are the streamed model turns to script.
"""

import io
import json
from pathlib import Path

import pytest

from claw.main import main
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    sse,
    text_chunks,
    usage_body,
)


class Terminal(io.StringIO):
    """Standard input that is a terminal, with the answers typed at it."""

    def isatty(self) -> bool:
        """A terminal: claw may ask its questions here."""
        return True


def calls(
    name: str,
    arguments: dict[str, object],
    call_id: str = "call-1",
    usage: dict[str, object] | None = None,
) -> StreamReply:
    """A streamed turn that asks for one call of ``name`` with ``arguments``.

    ``usage`` is the usage object its last chunk reports (default: ``usage_body()``).
    """
    return StreamReply(
        pieces=[
            sse(
                chunk("", role="assistant"),
                chunk(tool_calls=[call_start(0, call_id, name)]),
                chunk(tool_calls=[call_delta(0, json.dumps(arguments))]),
                chunk(finish_reason="tool_calls"),
                chunk(choices=False, usage=usage_body() if usage is None else usage),
            )
        ]
    )


def says(text: str) -> StreamReply:
    """A streamed turn with ``text`` and no tool calls."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks(text),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=usage_body()),
            )
        ]
    )


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
