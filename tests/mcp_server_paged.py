"""An MCP server built with the official SDK's low-level ``Server``: pages and content blocks.

    python mcp_server_paged.py

It lists seven tools two a page (``tool_0`` ... ``tool_4``, ``mixed``, ``grow``), with
``nextCursor`` between pages. ``mixed`` answers with a text, an image and an embedded
resource block; ``tool_N`` answers ``tool N`` and ``isError`` when called with
``{"fail": true}``; ``grow`` adds the tool ``grown`` and sends
``notifications/tools/list_changed``.
"""

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

PAGE = 2
names = [f"tool_{n}" for n in range(5)] + ["mixed", "grow"]
SCHEMA = {"type": "object", "properties": {"fail": {"type": "boolean"}}}


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, description=f"The tool {name}.", input_schema=SCHEMA)


async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
    start = int(params.cursor) if params is not None and params.cursor else 0
    page = [tool(name) for name in names[start : start + PAGE]]
    more = start + PAGE < len(names)
    return types.ListToolsResult(tools=page, next_cursor=str(start + PAGE) if more else None)


async def call_tool(ctx, params):  # type: ignore[no-untyped-def]
    if params.name == "mixed":
        resource = types.TextResourceContents(uri="file:///notes.txt", text="a note")
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="first"),
                types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
                types.EmbeddedResource(type="resource", resource=resource),
            ]
        )
    if params.name == "grow":
        if "grown" not in names:
            names.append("grown")
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="grew")])
    failing = bool((params.arguments or {}).get("fail"))
    text = params.name.replace("_", " ")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=failing
    )


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        options = server.create_initialization_options(
            notification_options=NotificationOptions(tools_changed=True),
            experimental_capabilities=None,
        )
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
