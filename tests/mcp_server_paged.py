"""An MCP server written by hand, without the SDK: pages, content blocks, a list that changes.

    python mcp_server_paged.py

It needs nothing but the standard library, so the tests run it with ``python -I -S``: it starts
in a few hundredths of a second. It lists seven tools two a page (``tool_0`` ... ``tool_4``,
``mixed``, ``grow``), with ``nextCursor`` between pages, as the specification's "Pagination"
says. ``mixed`` answers with a text, an image and an embedded resource block; ``tool_N``
answers ``tool N`` and ``isError`` when called with ``{"fail": true}``; ``grow`` adds the tool
``grown`` (which answers ``grown``) and sends ``notifications/tools/list_changed`` before its
answer, ``grew``.
"""

import json
import sys

PAGE = 2
names = [f"tool_{n}" for n in range(5)] + ["mixed", "grow"]
SCHEMA = {"type": "object", "properties": {"fail": {"type": "boolean"}}}


def write(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
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
    text = {"type": "text", "text": name.replace("_", " ")}
    return {"content": [text], "isError": bool(arguments.get("fail"))}


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        info = {"name": "paged", "version": "0"}
        capabilities = {"tools": {"listChanged": True}}
        version = message["params"]["protocolVersion"]
        answer(message["id"], {"protocolVersion": version, "capabilities": capabilities,
                               "serverInfo": info})
    elif method == "tools/list":
        answer(message["id"], listing(message.get("params")))
    elif method == "tools/call":
        params = message["params"]
        answer(message["id"], call(params["name"], params.get("arguments") or {}))
