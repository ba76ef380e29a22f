"""A server's tools as claw tools: named ``mcp__<server>__<tool>``, results as text.

The name carries the server, so a permission rule or a hook matcher can name one tool
(``mcp__fs__write``) or every tool of a server (``mcp__fs``, ``mcp__fs__*``). A tool's result
is a list of content blocks; claw's ``ToolOutput`` is text, so each block becomes text, and a
result with ``isError`` becomes an error result the model reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..todo import Todo
from ..types import ToolDefinition, ToolOutput
from .client import McpClient, McpError, RemoteTool
from .jsonrpc import RemoteError

PREFIX = "mcp__"
"""How every MCP tool's name in claw begins."""

NAME_PART = re.compile(r"[A-Za-z0-9_-]+")
"""What a server's or a tool's name may hold to be part of a claw tool name (``fullmatch``:
``$`` would let a name end with a newline)."""

MAX_NAME = 64
"""The longest tool name the providers accept (``types.TOOL_NAME_PATTERN``)."""


def tool_name(server: str, tool: str) -> str:
    """The claw name of the server's tool: ``mcp__<server>__<tool>``.

    ``ValueError`` if it cannot be one: a part that is empty or holds anything but letters,
    digits, ``_`` and ``-``, a server name with ``__`` or ending with ``_`` (a name must split
    one way only: ``mcp__fs___x`` is server ``fs``'s tool ``_x``, never server ``fs_``'s tool
    ``x``), or a name longer than ``MAX_NAME``.
    """
    raise Todo(
        "ch23",
        "fullmatch both parts with NAME_PART, no \"__\" in the server nor \"_\" at its end",
    )


def block_text(block: dict[str, Any]) -> str:
    """One content block as text for the model.

    ``text`` is its text; an ``image`` or ``audio`` block is a note of its type and size (claw
    shows the model text only); a ``resource`` is its text, or a note for a blob; a
    ``resource_link`` its URI; anything else its JSON.
    """
    raise Todo("ch23", "by block[\"type\"]: text, image/audio, resource, resource_link, else JSON")


def result_output(result: dict[str, Any]) -> ToolOutput:
    """A ``CallToolResult`` as a ``ToolOutput``: its blocks' text, one after the other.

    ``isError: true`` makes it an error result. No content at all, but ``structuredContent``,
    gives that object's JSON.
    """
    raise Todo(
        "ch23",
        "join block_text of result[\"content\"] with \"\\n\"; error if result[\"isError\"]",
    )


class McpTool:
    """One tool of an MCP server, as a claw tool. Not read-only: claw cannot know what it does."""

    def __init__(self, client: McpClient, remote: RemoteTool) -> None:
        self.client = client
        self.remote = remote
        self.name = tool_name(client.name, remote.name)

    @property
    def definition(self) -> ToolDefinition:
        """The server's description and input schema, under claw's name for the tool."""
        remote, server = self.remote.name, self.client.name
        description = self.remote.description or f"The tool {remote} of {server}."
        return ToolDefinition(
            name=self.name, description=description, parameters=self.remote.input_schema
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Call the tool on the server; every failure is an error result that says what failed."""
        raise Todo(
            "ch23",
            "call_tool; result_output; McpError and RemoteError become error results",
        )
