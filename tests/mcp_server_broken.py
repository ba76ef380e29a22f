"""A deliberately broken MCP server, written by hand. ``python mcp_server_broken.py MODE [MARKER]``.

It answers ``initialize`` and ``tools/list`` (one tool, ``go``) correctly, then breaks as
``MODE`` says when ``go`` is called:

- ``bad-json``: writes a line that is not JSON;
- ``crash``: writes ``crash: dying now`` to stderr and exits with code 3;
- ``hang``: never answers, and ignores ``SIGTERM``;
- ``old-version``: (at the handshake) claims the protocol version ``1999-01-01``;
- ``hang-start``: never answers ``initialize``.

With ``MARKER``, it first starts a child process named ``MARKER`` that sleeps for 300 s, so
the tests can see whether stopping the server stops its children too.
"""

import json
import signal
import subprocess
import sys

mode = sys.argv[1]
if len(sys.argv) > 2:
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", sys.argv[2]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
if mode == "hang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def answer(id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        if mode == "hang-start":
            continue
        version = "1999-01-01" if mode == "old-version" else message["params"]["protocolVersion"]
        info = {"name": "broken", "version": "0"}
        answer(message["id"], {"protocolVersion": version, "capabilities": {}, "serverInfo": info})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        answer(message["id"], {"tools": [{"name": "go", "inputSchema": schema}]})
    elif method == "tools/call":
        if mode == "bad-json":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        elif mode == "crash":
            sys.stderr.write("crash: dying now\n")
            sys.exit(3)
        elif mode != "hang":
            answer(message["id"], {"content": [{"type": "text", "text": "fine"}]})
