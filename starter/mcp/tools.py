"""A server's tools as claw tools: named ``mcp__<server>__<tool>``, results as text.

The name carries the server, so a permission rule or a hook matcher can name one tool
(``mcp__fs__write``) or every tool of a server (``mcp__fs``, ``mcp__fs__*``). A tool's result
is a list of content blocks; claw's ``ToolOutput`` is text, so each block becomes text, and a
result with ``isError`` becomes an error result the model reads.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Collection
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

NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
"""One character a name part may not hold (``claw_part`` replaces each with ``_``)."""


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


def claw_part(tool: str, taken: Collection[str]) -> str:
    """The part of claw's name for the server's tool ``tool``, unique among ``taken``.

    ``tool`` itself if it is letters, digits, ``_`` and ``-`` (``NAME_PART``); else the same
    with every other character replaced by ``_`` (``db.query`` is ``db_query``, Claude Code's
    rule). If that part is ``taken`` (by another of the server's tools), the first of
    ``PART_2``, ``PART_3``, ... that is not. The server is still called by ``tool``.
    """
    raise Todo("ch23", "NOT_NAME.sub(\"_\", tool); while taken: add _2, _3, ...")


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


def schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not match the JSON Schema ``schema``; ``None`` if it does.

    ``jsonschema`` is imported here, at the first check, not when claw starts: its import
    takes a second, most of it building a grammar for a format (``iri``) that claw never
    checks (like the SDK, it checks no ``format``), so that grammar is left out.
    """
    if "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
        try:
            import jsonschema
        finally:
            del sys.modules["rfc3987_syntax"]  # the next importer gets the real module
    import jsonschema
    from referencing.exceptions import Unresolvable

    try:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        error = jsonschema.exceptions.best_match(kind(schema).iter_errors(value))
    except jsonschema.exceptions.SchemaError as bad:
        return f"its output schema is not a valid JSON Schema: {bad.message}"
    except Unresolvable as bad:
        return f"its output schema has a $ref that leads nowhere: {bad}"
    if error is None:
        return None
    where = "".join(f"[{part!r}]" for part in error.absolute_path)
    return f"structuredContent{where}: {error.message}"


class McpTool:
    """One tool of an MCP server, as a claw tool. Not read-only: claw cannot know what it does."""

    def __init__(self, client: McpClient, remote: RemoteTool, part: str | None = None) -> None:
        """``part`` is claw's part of its name (``claw_part``); by default the server's name."""
        self.client = client
        self.remote = remote
        self.name = tool_name(client.name, remote.name if part is None else part)

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
