"""An MCP server built with the official SDK's ``MCPServer`` (FastMCP), run over stdio.

    python mcp_server_sdk.py [--noisy]

``--noisy`` writes 1 MB to standard error before serving, ending with the line
``noisy: the last line``. The tests start it as a real subprocess and talk to it with claw's
client; the SDK's own ``Client`` imports it as a module and connects to ``app`` in memory.
"""

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("sdk-demo")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name, in any language's letters."""
    return f"Hello, {name}{'!' if excited else '.'}"


@app.tool()
def fail(why: str) -> str:
    """Always fails with ``why``."""
    raise ToolError(why)


@app.tool()
async def wait(flag: str) -> str:
    """Wait for a long time; write ``cancelled`` to the file ``flag`` if cancelled."""
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        Path(flag).write_text("cancelled")
        raise
    return "waited"


@app.tool()
def spawn(marker: str) -> str:
    """Start a long-running child process named ``marker`` and leave it running."""
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", marker],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return f"started {marker}"


if __name__ == "__main__":
    if "--noisy" in sys.argv:
        line = b"noisy: " + b"x" * 1017 + b"\n"
        for _ in range(1024):
            os.write(2, line)
        os.write(2, b"noisy: the last line\n")
    app.run("stdio")
