"""The scripted model: a Messages API server that asks for one tool call after another.

It writes down what Claude Code answered to each.

It is the suite's ``LoopbackServer`` (clawbook.harness.loopback) with a reply chosen from the
request instead of from a queue, its bodies built by the suite's wire helpers
(tests/anthropic_wire.py). A session's requests are told apart by what they carry: the main
loop's request offers the scenario's tools; any other request Claude Code makes on the side (a
title, a summary) gets a short text answer and is otherwise ignored.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from anthropic_wire import message, stream, text, tool_use  # type: ignore[import-not-found]

from clawbook.harness.loopback import JSONReply, LoopbackServer, RecordedRequest, Reply, StreamReply


@dataclass
class Call:
    """One tool call the scripted model asks for, and what became of it."""

    id: str
    tool: str
    input: dict[str, Any]
    result: dict[str, Any] | None = None
    """The ``tool_result`` block Claude Code sent back (None: it never did)."""
    asked: int = 0
    """How many times the permission-prompt tool was consulted for this call."""
    prelude: bool = False
    """A call made only so that the next one can be decided (the Read before an Edit: Claude
    Code refuses to edit a file not read in the session); the prompt tool allows it, and it
    is not recorded."""


@dataclass
class Script:
    """The calls of one session, asked for one per turn, then a closing text."""

    calls: list[Call]
    turn: int = 0
    """How many calls have been asked for."""
    offered: set[str] = field(default_factory=set)
    """The tool names the main loop's first request offered the model (a bare deny rule
    takes a tool away: it is never offered)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def outstanding(self) -> Call | None:
        """The call asked for last whose result has not come back yet."""
        if self.turn and self.calls[self.turn - 1].result is None:
            return self.calls[self.turn - 1]
        return None


def _reply(request: RecordedRequest, blocks: list[dict[str, Any]], stop: str) -> Reply:
    """The Message of ``blocks``, streamed when the request asked for a stream."""
    if request.json.get("stream"):
        return StreamReply(pieces=[stream(blocks, stop)])
    return JSONReply(message(blocks, stop))


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the request's last user message."""
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return []
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if block.get("type") == "tool_result"]


class ScriptedModel(LoopbackServer):
    """A Messages API server on 127.0.0.1 that plays a ``Script``."""

    def __init__(self, script: Script) -> None:
        """Serve ``script``: each main-loop request gets its next call."""
        super().__init__()
        self.script = script
        self.seen: list[str] = []
        """One line per request: its path and the tools it offered (for ``--show``)."""

    @property
    def base_url(self) -> str:
        """The address for ``ANTHROPIC_BASE_URL`` (Claude Code adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or "/messages" not in request.path:
            return JSONReply(
                {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}},
                status=404,
            )
        if request.path.split("?")[0].endswith("/count_tokens"):
            return JSONReply({"input_tokens": 100})
        body = request.json
        names = [tool.get("name", "?") for tool in body.get("tools") or []]
        self.seen.append(f"{request.path} tools={names} stream={body.get('stream')}")
        if not body.get("tools"):  # a side request (a title, a summary), or no tool is left
            return _reply(request, [text("ok")], "end_turn")
        script = self.script
        with script.lock:
            if not script.turn:
                script.offered = {tool.get("name", "") for tool in body["tools"]}
            for block in _tool_results(body):
                for call in script.calls:
                    if call.id == block.get("tool_use_id") and call.result is None:
                        call.result = block
            if script.outstanding is not None or script.turn >= len(script.calls):
                return _reply(request, [text("done")], "end_turn")
            call = script.calls[script.turn]
            script.turn += 1
        return _reply(request, [tool_use(call.id, call.tool, call.input)], "tool_use")


def result_text(block: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block, whether its content is a string or blocks."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)
