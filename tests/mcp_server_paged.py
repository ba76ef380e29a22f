"""An MCP server written by hand, without the SDK: pages, content blocks, a list that changes.

    python mcp_server_paged.py

It needs nothing but the standard library (and ``mcp_json``), so the tests run it with
``python -I -S``: it starts in a hundredth of a second. It lists seven tools two a page
(``tool_0`` ... ``tool_4``, ``mixed``, ``grow``), with ``nextCursor`` between pages, as the
specification's "Pagination" says. ``mixed`` answers with a text, an image and an embedded
resource block; ``tool_N`` answers ``tool N`` (or the text ``say``, if the call's arguments
have one), and ``isError`` when called with ``{"fail": true}``; ``grow`` adds the tool
``grown`` (which answers ``grown``) and sends ``notifications/tools/list_changed`` before its
answer, ``grew``.

It refuses, with ``-32602``, an ``initialize`` without ``capabilities`` or ``clientInfo``
objects: the specification's schema requires both, and the SDK's servers refuse it too. It
answers with the protocol version the client asked for.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # python -I leaves this folder off the path
from mcp_json import dumps, loads  # json's own codec, without json's imports

PAGE = 2
names = [f"tool_{n}" for n in range(5)] + ["mixed", "grow"]
SCHEMA = {"type": "object", "properties": {"fail": {"type": "boolean"}}}


def write(message: dict[str, object]) -> None:
    sys.stdout.write(dumps(message) + "\n")
    sys.stdout.flush()


def answer(id: object, result: dict[str, object]) -> None:
    write({"jsonrpc": "2.0", "id": id, "result": result})


def listing(params: dict[str, object] | None) -> dict[str, object]:
    """One page of the tools, from the position the cursor names."""
    start = int(str((params or {}).get("cursor") or 0))
    page = names[start : start + PAGE]
    tools = [{"name": n, "description": f"The tool {n}.", "inputSchema": SCHEMA} for n in page]
    result: dict[str, object] = {"tools": tools}
    if start + PAGE < len(names):
        result["nextCursor"] = str(start + PAGE)
    return result


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    """The result of calling the tool ``name``."""
    if name == "mixed":
        return {"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "a note"}},
        ]}
    if name == "grow":
        if "grown" not in names:
            names.append("grown")
        write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "grew"}]}
    text = {"type": "text", "text": str(arguments.get("say", name.replace("_", " ")))}
    return {"content": [text], "isError": bool(arguments.get("fail"))}


for line in sys.stdin:
    message = loads(line)
    method = message.get("method")
    if method == "initialize":
        params = message["params"]
        if not all(isinstance(params.get(key), dict) for key in ("capabilities", "clientInfo")):
            error = {"code": -32602, "message": "initialize needs capabilities and clientInfo"}
            write({"jsonrpc": "2.0", "id": message["id"], "error": error})
            continue
        info = {"name": "paged", "version": "0"}
        capabilities = {"tools": {"listChanged": True}}
        answer(message["id"], {"protocolVersion": params["protocolVersion"],
                               "capabilities": capabilities, "serverInfo": info})
    elif method == "tools/list":
        answer(message["id"], listing(message.get("params")))
    elif method == "tools/call":
        params = message["params"]
        answer(message["id"], call(params["name"], params.get("arguments") or {}))
