"""Realistic Anthropic Messages API traffic for chapter 24's tests, built from content blocks.

A stream is built the way the API sends one: ``message_start`` with the input's usage, then
for each block a ``content_block_start``, its deltas (text and thinking in small pieces, a
tool's input as fragments of JSON, a thinking block's signature last) and a
``content_block_stop``, with ``ping`` events in between, then ``message_delta`` with the stop
reason and the output tokens, then ``message_stop``. Every event carries its name twice, as the
API does: in the SSE ``event:`` field and as ``type`` in its JSON.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "claude-test-1"
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" + "Qk" * 40


def event(data: dict[str, Any], name: str | None = None) -> str:
    """One SSE event: ``event: <type>`` and ``data: <json>``, then the blank line."""
    return f"event: {name or data['type']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def usage(
    input_tokens: int = 20, output_tokens: int = 7, *, read: int = 0, written: int = 0
) -> dict[str, Any]:
    """A Messages API usage object, with the cache counts."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
    }


def thinking(text: str, signature: str = SIGNATURE) -> dict[str, Any]:
    """A thinking block, signed."""
    return {"type": "thinking", "thinking": text, "signature": signature}


def text(words: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": words}


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def pieces(words: str, size: int) -> list[str]:
    """``words`` in pieces of ``size`` characters."""
    return [words[i : i + size] for i in range(0, len(words), size)] or [""]


def block_events(index: int, block: dict[str, Any], size: int = 5) -> list[dict[str, Any]]:
    """The events that stream one content block."""
    kind = block["type"]
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"], size)]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": piece}
            for piece in pieces(block["thinking"], size)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        start = {**block, "input": {}}
        arguments = json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [
            {"type": "input_json_delta", "partial_json": piece} for piece in pieces(arguments, size)
        ]
    else:  # redacted_thinking and others arrive whole
        start, deltas = block, []
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def message(
    blocks: list[dict[str, Any]],
    stop_reason: str = "end_turn",
    counts: dict[str, Any] | None = None,
    *,
    message_id: str = "msg_01XFDUDYJgAACzvnptvVoYEL",
) -> dict[str, Any]:
    """A whole Message, as a non-streamed request gets it."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": counts or usage(),
    }


def stream_events(
    blocks: list[dict[str, Any]],
    stop_reason: str = "end_turn",
    counts: dict[str, Any] | None = None,
    *,
    size: int = 5,
) -> list[dict[str, Any]]:
    """The events of a stream that builds ``message(blocks, stop_reason, counts)``."""
    counts = counts or usage()
    start_usage = {**counts, "output_tokens": 1}
    start = message([], None, start_usage)  # type: ignore[arg-type]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(blocks):
        events.append({"type": "ping"})
        events.extend(block_events(index, block, size))
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": counts["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events


def stream(
    blocks: list[dict[str, Any]],
    stop_reason: str = "end_turn",
    counts: dict[str, Any] | None = None,
    *,
    size: int = 5,
) -> bytes:
    """The bytes of that stream."""
    return "".join(event(e) for e in stream_events(blocks, stop_reason, counts, size=size)).encode()


def error(kind: str, words: str) -> dict[str, Any]:
    """An error body, or the data of an ``error`` event."""
    return {"type": "error", "error": {"type": kind, "message": words}}
