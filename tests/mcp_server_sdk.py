"""An MCP server built with the official SDK's ``MCPServer`` (FastMCP), run over stdio.

    python mcp_server_sdk.py [--oracle VIEW CALLS]

The tests start it once, as a real subprocess, and talk to it with claw's client. With
``--oracle``, the SDK's own ``Client`` also connects to ``app`` in memory, in this process,
while the server serves claw: it lists the tools, makes each call of ``CALLS`` (JSON:
``[[name, arguments], ...]``) and writes what it saw to the file ``VIEW`` (JSON: ``tools`` and
``answers``, as the SDK's models dump them, and ``versions``, the protocol versions its client
accepts from a server's ``initialize``). That is the oracle the tests hold claw's view to.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

# The SDK's client checks a result against its tool's output schema with jsonschema, which
# builds a grammar for the IRI formats when imported (most of a second) if rfc3987_syntax is
# installed. The SDK's validator has no format checker, so those formats are never checked:
# without the grammar, every check gives the same answer, a second sooner.
sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]

from mcp import Client  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402

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
    """Write ``started`` to the file ``flag``, wait a minute; write ``cancelled`` if cancelled."""
    Path(flag).write_text("started")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        Path(flag).write_text("cancelled")
        raise
    return "waited"


def dumped(model: Any) -> Any:
    """A model of the SDK as JSON, by the protocol's names (``inputSchema``, ``isError``)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def write_sdk_view(view: Path, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """What the SDK's own ``Client`` sees of ``app``, written to ``view`` once complete."""
    async with Client(app) as client:
        listed = await client.list_tools()
        answers = [await client.call_tool(name, arguments) for name, arguments in calls]
    seen = {
        "tools": [dumped(t) for t in listed.tools],
        "answers": [dumped(a) for a in answers],
        # the versions the SDK's client accepts in the server's answer to initialize
        "versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
    }
    partial = view.with_suffix(".partial")
    partial.write_text(json.dumps(seen), encoding="utf-8")
    os.replace(partial, view)  # a reader never sees half of it


async def main(oracle: tuple[Path, list[tuple[str, dict[str, Any]]]] | None) -> None:
    """Serve ``app`` over stdio; with ``oracle``, write the SDK's view meanwhile."""
    async with anyio.create_task_group() as group:
        if oracle is not None:
            group.start_soon(write_sdk_view, *oracle)
        await app.run_stdio_async()
        group.cancel_scope.cancel()


if __name__ == "__main__":
    oracle = None
    if sys.argv[1:2] == ["--oracle"]:
        oracle = (Path(sys.argv[2]), [(name, args) for name, args in json.loads(sys.argv[3])])
    anyio.run(main, oracle)
