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


# --8<-- [start:name]
def tool_name(server: str, tool: str) -> str:
    """The claw name of the server's tool: ``mcp__<server>__<tool>``.

    ``ValueError`` if it cannot be one: a part that is empty or holds anything but letters,
    digits, ``_`` and ``-``, a server name with ``__`` or ending with ``_`` (a name must split
    one way only: ``mcp__fs___x`` is server ``fs``'s tool ``_x``, never server ``fs_``'s tool
    ``x``), or a name longer than ``MAX_NAME``.
    """
    # region ch23: fullmatch both parts with NAME_PART, no "__" in the server nor "_" at its end
    # more: f"{PREFIX}{server}__{tool}"; its length
    for part in (server, tool):
        if not NAME_PART.fullmatch(part):
            raise ValueError(f"{part!r} cannot be part of a tool name (letters, digits, _ and -)")
    if "__" in server or server.endswith("_"):
        raise ValueError(f"the server name {server!r} may not contain '__' nor end with '_'")
    name = f"{PREFIX}{server}__{tool}"
    if len(name) > MAX_NAME:
        raise ValueError(f"the tool name {name!r} is longer than {MAX_NAME} characters")
    return name
    # endregion


def claw_part(tool: str, taken: Collection[str]) -> str:
    """The part of claw's name for the server's tool ``tool``, unique among ``taken``.

    ``tool`` itself if it is letters, digits, ``_`` and ``-`` (``NAME_PART``); else the same
    with every other character replaced by ``_`` (``db.query`` is ``db_query``, Claude Code's
    rule). If that part is ``taken`` (by another of the server's tools), the first of
    ``PART_2``, ``PART_3``, ... that is not. The server is still called by ``tool``.
    """
    # region ch23: NOT_NAME.sub("_", tool); while taken: add _2, _3, ...
    # more: itertools.count(2) or a while loop; the part with no suffix if it is free
    part = NOT_NAME.sub("_", tool)
    unique, n = part, 1
    while unique in taken:
        n += 1
        unique = f"{part}_{n}"
    return unique
    # endregion
# --8<-- [end:name]


# --8<-- [start:text]
def block_text(block: dict[str, Any]) -> str:
    """One content block as text for the model.

    ``text`` is its text; an ``image`` or ``audio`` block is a note of its type and size (claw
    shows the model text only); a ``resource`` is its text, or a note for a blob; a
    ``resource_link`` its URI; anything else its JSON.
    """
    # region ch23: by block["type"]: text, image/audio, resource, resource_link, else JSON
    # more: "[image: image/png, 1234 bytes of base64]"; resource: block["resource"]["text"]
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", "")))
        return f"[{kind}: {block.get('mimeType', '?')}, {size} bytes of base64]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return str(resource["text"])
        return f"[resource {resource.get('uri', '?')}: binary, not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.get('uri', '?')}]"
    return json.dumps(block, ensure_ascii=False)
    # endregion


def result_output(result: dict[str, Any]) -> ToolOutput:
    """A ``CallToolResult`` as a ``ToolOutput``: its blocks' text, one after the other.

    ``isError: true`` makes it an error result. No content at all, but ``structuredContent``,
    gives that object's JSON.
    """
    # region ch23: join block_text of result["content"] with "\n"; error if result["isError"]
    # more: ToolOutput.error(text) / ToolOutput.ok(text)
    blocks = result.get("content") or []
    text = "\n".join(block_text(block) for block in blocks if isinstance(block, dict))
    if not blocks and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    return ToolOutput.error(text) if result.get("isError") else ToolOutput.ok(text)
    # endregion
# --8<-- [end:text]


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
        # region ch23: call_tool; result_output; McpError and RemoteError become error results
        # more: a tool the server no longer lists is an error result too
        if all(tool.name != self.remote.name for tool in self.client.tools):
            return ToolOutput.error(
                self.client.explain(f"the server no longer offers the tool {self.remote.name!r}")
            )
        try:
            result = await self.client.call_tool(self.remote.name, arguments)
        except McpError as error:
            return ToolOutput.error(str(error))
        except RemoteError as error:
            return ToolOutput.error(self.client.explain(f"{self.remote.name} failed: {error}"))
        schema = self.remote.output_schema
        if schema is not None and not result.get("isError"):
            if "structuredContent" not in result:
                problem: str | None = "no structuredContent, though it has an output schema"
            else:
                problem = schema_problem(schema, result["structuredContent"])
            if problem is not None:
                why = f"the tool {self.remote.name!r} broke its output schema: {problem}"
                return ToolOutput.error(self.client.explain(why))
        return result_output(result)
        # endregion
