r"""JSON-RPC 2.0 messages, framed as MCP's stdio transport frames them: one JSON object a line.

The transport's rules (MCP specification, "Transports: stdio"): a message is a JSON-RPC
request, notification or response, encoded as UTF-8, ended by a newline and never containing
one; the server writes only messages to its standard output and may log anything to its
standard error. JSON never needs a raw newline (inside a string it is ``\n``), so
``json.dumps`` without indentation already writes one line.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ClawError
from ..todo import Todo

JSONRPC = "2.0"
"""The protocol version every message carries in its ``"jsonrpc"`` member."""

METHOD_NOT_FOUND = -32601
"""JSON-RPC's error code for a method the receiver does not have."""

MAX_SHOWN = 120
"""How much of a bad line an error message quotes."""


class ProtocolError(ClawError):
    """The server broke the protocol: a line that is not a JSON-RPC message, say."""


class RemoteError(ClawError):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.data = data


def request(id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request: it has an ``id``, and the receiver must answer it with a response."""
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notification: no ``id``, and no answer ever comes."""
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def without_surrogates(value: Any) -> Any:
    r"""``value`` with each lone surrogate in its strings (keys too) written as ``\udXXX``.

    Such a string cannot be encoded as UTF-8: printing it, saving it or sending it on to the
    model would raise ``UnicodeEncodeError``. Escaped, it is text, and nothing of it is lost.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def encode(message: dict[str, Any]) -> bytes:
    r"""``message`` as one line of UTF-8 JSON, ending with ``\n`` and holding no other newline."""
    raise Todo("ch23", "compact JSON, UTF-8, one \"\\n\" at the end")


def decode(line: bytes) -> dict[str, Any]:
    r"""The message on one line the server wrote; ``ProtocolError`` if it is not one.

    The line must be UTF-8 JSON (the newline at its end and spaces around it do not count)
    holding an object whose ``"jsonrpc"`` is ``"2.0"``. The error quotes the start of the line.
    A lone surrogate (JSON's ``\ud800``, half of a pair, no character) in a string becomes
    the six characters ``\ud800`` (``without_surrogates``).
    """
    raise Todo(
        "ch23",
        "strip, parse; not JSON, not an object or no \"jsonrpc\": \"2.0\" is a ProtocolError",
    )
