"""The permission-prompt tool: an MCP server over HTTP with one tool.

Claude Code consults it (``--permission-prompt-tool``) for exactly the calls that would ask.

In print mode an "ask" that nobody answers ends as a denial; this tool is how the recorder tells
the two apart. It counts the consultation against the call and answers "deny", so nothing the
scenario asked for runs on its say-so. It runs in the recorder's process, in a thread, inside
the same network namespace as Claude Code.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

from oracle.model import Script

SERVER = "oracle"
TOOL = "decide"
PROMPT_TOOL = f"mcp__{SERVER}__{TOOL}"
"""The name to give ``--permission-prompt-tool``."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PromptTool:
    """The MCP server, serving in a background thread; ``config`` is for ``--mcp-config``."""

    def __init__(self) -> None:
        """Build the server; ``start`` serves it."""
        self.script: Script | None = None
        """The session being played: a consultation is counted against its calls."""
        self.port = _free_port()
        app = MCPServer(SERVER)
        app.tool(name=TOOL, structured_output=False)(self.decide)
        starlette = app.streamable_http_app(stateless_http=True, json_response=True)
        config = uvicorn.Config(starlette, host="127.0.0.1", port=self.port, log_level="error")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="prompt-tool", daemon=True)

    def decide(self, tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
        """Count a consultation for the call it is about; answer "deny" (a prelude: "allow")."""
        script = self.script
        if script is not None:
            with script.lock:
                call = next((c for c in script.calls if c.id == tool_use_id), None)
                call = call or script.outstanding
                if call is not None:
                    call.asked += 1
                    if call.prelude:
                        return json.dumps({"behavior": "allow", "updatedInput": input})
        return json.dumps({"behavior": "deny", "message": "recorded"})

    @property
    def config(self) -> str:
        """The ``--mcp-config`` JSON that names this server."""
        url = f"http://127.0.0.1:{self.port}/mcp"
        return json.dumps({"mcpServers": {SERVER: {"type": "http", "url": url}}})

    def start(self) -> PromptTool:
        """Serve; return once the port listens."""
        self._thread.start()
        for _ in range(200):
            if self._server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError("the permission-prompt tool did not start")

    def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        self._thread.join(timeout=5)
