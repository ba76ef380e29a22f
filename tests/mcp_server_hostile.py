"""A hostile MCP server, written by hand. ``python mcp_server_hostile.py MODE [SIZE]``.

It needs nothing but the standard library (and ``mcp_json``), so the tests run it with
``python -I -S``.

- ``names``: lists tools whose names try to confuse ``mcp__<server>__<tool>`` (a newline at the
  end, ``__`` inside, a space, a non-ASCII letter, 200 characters, a leading ``_``), with
  descriptions and results full of terminal escapes, and writes escapes to its stderr;
- ``huge-line``: answers ``tools/call`` with one line of ``SIZE`` bytes;
- ``wild``: lists tools as servers in the wild name them (``db.query``, as the specification
  allows, beside ``db_query``; ``files/read``, whose ``outputSchema`` is ``true``, not an
  object), and entries that are not tools at all: one without a name (whose description has
  non-ASCII letters), one whose name is a number, one whose name is empty, a string; and two
  whose ``inputSchema`` no model could be offered (a list; a schema of type ``string``);
- ``surrogate``: lists ``go``, whose description, and the result of a call, hold a lone
  surrogate (JSON's ``\\ud800``, half of a pair), and ``\\ud83d\\ude00``, a whole pair.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # python -I leaves this folder off the path
from mcp_json import dumps, loads  # json's own codec, without json's imports

mode = sys.argv[1]
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b[31m"
NAMES = ["read", "read\n", "a__b", "my tool", "wr\u00efte", "x" * 200, "_evil"]
WILD = ["db.query", "db_query", "files/read"]
NAMELESS = [{"description": "no name, déjà"}, {"name": 42}, {"name": ""}, "a string"]
UNCALLABLE = [
    {"name": "listed", "inputSchema": ["path"]},
    {"name": "text", "inputSchema": {"type": "string"}},
]
HALF = "\ud800"  # mcp_json writes it as JSON does: the escape \ud800


def answer(id: object, result: object) -> None:
    sys.stdout.write(dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


sys.stderr.write(f"{ESCAPES}hostile server starting\n")
sys.stderr.flush()
for line in sys.stdin:
    message = loads(line)
    method = message.get("method")
    if method == "initialize":
        info = {"name": "hostile", "version": "0"}
        version = message["params"]["protocolVersion"]
        answer(message["id"], {"protocolVersion": version, "capabilities": {}, "serverInfo": info})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        names = {"names": NAMES, "wild": WILD}.get(mode, ["go"])
        tools: list[object] = [
            {"name": name, "description": f"{ESCAPES}Does {name}.", "inputSchema": schema}
            for name in names
        ]
        if mode == "wild":
            tools[2]["outputSchema"] = True  # type: ignore[index]  # a schema, but no object
            tools[1:1] = NAMELESS + UNCALLABLE  # among the others: they must be kept
        if mode == "surrogate":
            tools = [{"name": "go", "description": f"half {HALF} here", "inputSchema": schema}]
        answer(message["id"], {"tools": tools})
    elif method == "tools/call":
        if mode == "huge-line":
            sys.stdout.write("x" * int(sys.argv[2]) + "\n")
            sys.stdout.flush()
        elif mode == "surrogate":
            text = f"a lone {HALF} and a pair \U0001f600"
            answer(message["id"], {"content": [{"type": "text", "text": text}]})
        else:
            name = message["params"]["name"]
            text = f"{ESCAPES}called {name}"
            answer(message["id"], {"content": [{"type": "text", "text": text}]})
