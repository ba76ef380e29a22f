"""A deliberately broken MCP server, written by hand. ``python mcp_server_broken.py MODE [MARKER]``.

It needs nothing but the standard library (and ``mcp_json``), so the tests run it with
``python -I -S``; it imports only what a mode uses, and starts in a hundredth of a second. It
answers ``initialize`` and ``tools/list`` (one tool, ``go``) correctly (``tools/list`` only
after ``notifications/initialized``, as the specification orders), then breaks as ``MODE``
says when ``go`` is called:

- ``bad-json``: writes a line that is not JSON;
- ``crash``: writes ``crash: dying now`` to stderr and exits with code 3;
- ``hang``: never answers a call, nor reads its input again, and ignores ``SIGTERM``: only
  ``SIGKILL`` stops it;
- ``old-version``: (at the handshake) claims the protocol version ``1999-01-01``;
- ``hang-start``: never answers ``initialize``; ``hang-list``: never answers ``tools/list``;
- ``no-tools``: answers ``tools/list`` with a result that has no ``tools`` at all;
- ``chatty``: before it answers, writes a blank line and an answer to a request nobody made,
  asks claw ``ping`` and ``sampling/createMessage``, and answers with claw's two answers (JSON);
- ``refuse``: answers with a JSON-RPC error (with ``data``); ``odd-error``: with an ``error``
  that is a string, not an object; ``no-result``: with a ``result`` that is a list; a call
  whose arguments are ``{"as": MODE}`` is answered as one of these three ``MODE`` says;
- ``env``: lists ``go`` without a description or a schema, and answers with its variables
  ``MCP_OWN`` and ``MCP_INHERITED`` and its folder (JSON);
- ``cursor-loop``: (at the listing) sends the same ``nextCursor`` twice, then none;
  in every mode, a ``tools/list`` whose ``cursor`` is not one the server gave is refused with
  ``-32602``, as the specification says of an invalid cursor;
- ``close-output``: closes its standard output and sleeps, still running;
- ``fine``: answers ``go`` with ``fine``; ``noisy``: the same, after writing 1 MB to its
  standard error, ending with the line ``noisy: the last line``, before it reads anything;
  ``banner``: the same, after writing three lines that are not JSON (``demo 1.0 starting``,
  ``listening on stdio``, ``ready``) to its standard output, before it reads anything;
- ``schema``: lists ``go`` with an ``outputSchema`` (an object with an integer ``sum``); a call
  with ``{"sum": VALUE}`` answers ``structuredContent`` ``{"sum": VALUE}``, one with
  ``{"omit": true}`` none, one with ``{"fail": true}`` an ``isError`` result without it;
- ``flood``: a call with ``{"flood": N}`` first sends ``N`` ``notifications/tools/list_changed``;
  every call answers how many ``tools/list`` requests the server has had (JSON).

In every mode it answers ``initialize`` with the version in ``MCP_VERSION``, if that is set.

With ``MARKER``, it first starts a child process named ``MARKER`` that sleeps for 300 s, so
the tests can see whether stopping the server stops its children too.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))  # python -I leaves this folder off the path
from mcp_json import dumps, loads  # json's own codec, without json's imports

mode = sys.argv[1]
if len(sys.argv) > 2:  # posix_spawn, not subprocess: importing that would double the start
    sleeper = [sys.executable, "-I", "-S", "-c", "import time; time.sleep(300)", sys.argv[2]]
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1)]
    os.posix_spawn(sys.executable, sleeper, os.environ, file_actions=quiet)
if mode == "hang":
    import signal  # only here: it imports enum

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "noisy":
    for _ in range(1024):
        os.write(2, b"noisy: " + b"x" * 1017 + b"\n")
    os.write(2, b"noisy: the last line\n")
if mode == "banner":  # as some servers greet a terminal, on their standard output
    os.write(1, b"demo 1.0 starting\nlistening on stdio\nready\n")


def write(message: object) -> None:
    sys.stdout.write(dumps(message) + "\n")
    sys.stdout.flush()


def answer(id: object, result: object) -> None:
    write({"jsonrpc": "2.0", "id": id, "result": result})


def text(id: object, value: object) -> None:
    answer(id, {"content": [{"type": "text", "text": dumps(value)}]})


def ask(id: str, method: str) -> object:
    """Send claw a request; its answer (the next line, since claw has nothing else to send)."""
    write({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})
    return loads(sys.stdin.readline())


for line in sys.stdin:
    message = loads(line)
    method = message.get("method")
    if method == "initialize":
        if mode == "hang-start":
            continue
        version = "1999-01-01" if mode == "old-version" else message["params"]["protocolVersion"]
        version = os.environ.get("MCP_VERSION", version)
        info = {"name": "broken", "version": "0"}
        answer(message["id"], {"protocolVersion": version, "capabilities": {}, "serverInfo": info})
    elif method == "notifications/initialized":
        globals()["ready"] = True
    elif method == "tools/list" and not globals().get("ready"):  # as the specification says
        error = {"code": -32600, "message": "tools/list before notifications/initialized"}
        write({"jsonrpc": "2.0", "id": message["id"], "error": error})
    elif method == "tools/list" and "cursor" in (message.get("params") or {}) and (
        message["params"]["cursor"] != "again"
    ):
        error = {"code": -32602, "message": "invalid cursor"}
        write({"jsonrpc": "2.0", "id": message["id"], "error": error})
    elif method == "tools/list" and mode == "hang-list":
        continue
    elif method == "tools/list" and mode == "no-tools":
        answer(message["id"], {})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        go: dict[str, object] = {"name": "go", "inputSchema": schema}
        if mode == "env":  # the least a tool can be: no description, no schema
            go = {"name": "go", "description": None}
        if mode == "schema":
            output = {"type": "object", "properties": {"sum": {"type": "integer"}},
                      "required": ["sum"]}
            go = {"name": "go", "inputSchema": schema, "outputSchema": output}
        page: dict[str, object] = {"tools": [go]}
        listings = globals().get("listings", 0) + 1
        globals()["listings"] = listings
        if mode == "cursor-loop" and listings < 3:  # then, for a client that goes on, the end
            page["nextCursor"] = "again"
        answer(message["id"], page)
    elif method == "tools/call":
        arguments = message["params"].get("arguments") or {}
        how = arguments.get("as", mode)
        if mode == "bad-json":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        elif mode == "crash":
            sys.stderr.write("crash: dying now\n")
            sys.exit(3)
        elif mode == "chatty":
            sys.stdout.write("\n")
            answer(999, {"late": True})
            text(message["id"], [ask("p-1", "ping"), ask("s-1", "sampling/createMessage")])
        elif how == "refuse":
            error = {"code": -32602, "message": "no such tool today", "data": {"asked": "go"}}
            write({"jsonrpc": "2.0", "id": message["id"], "error": error})
        elif how == "odd-error":  # not an error object, as JSON-RPC requires
            write({"jsonrpc": "2.0", "id": message["id"], "error": "no"})
        elif how == "no-result":
            write({"jsonrpc": "2.0", "id": message["id"], "result": [1, 2]})
        elif mode == "env":
            names = ("MCP_OWN", "MCP_INHERITED")
            text(message["id"], [*(os.environ.get(name) for name in names), os.getcwd()])
        elif mode == "close-output":
            sys.stdout.close()
            os.close(1)
            time.sleep(60)
        elif mode == "hang":
            time.sleep(300)
        elif mode == "schema":
            result = {"content": [{"type": "text", "text": dumps(arguments)}]}
            if "sum" in arguments:
                result["structuredContent"] = {"sum": arguments["sum"]}
            if arguments.get("fail"):
                result["isError"] = True
            answer(message["id"], result)
        elif mode == "flood":
            changed = dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            sys.stdout.write((changed + "\n") * int(arguments.get("flood", 0)))
            text(message["id"], globals().get("listings", 0))
        else:
            answer(message["id"], {"content": [{"type": "text", "text": "fine"}]})
