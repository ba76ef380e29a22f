"""Chapter 29: your own tools, Python functions the agent calls in this process.

``@tool(name, description, schema)`` makes an async function a tool; a server made by
``create_sdk_mcp_server`` groups tools under a name, as the Claude Agent SDK does, and the
model sees each as ``mcp__<server>__<tool>`` (the name chapter 23 gives an MCP server's
tools). No process and no protocol: the call goes straight from claw's ``ToolSet`` to the
function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import ToolDefinition, ToolOutput
from .types import BadOption

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""A tool's function: given the arguments, returns ``{"content": [{"type": "text", "text":
...}], "is_error": ...}`` (``is_error`` may be left out)."""

JSON_TYPES: dict[type, str] = {
    str: "string", int: "integer", float: "number", bool: "boolean", list: "array",
    dict: "object",
}  # fmt: skip
"""The JSON Schema type of each Python type a short schema (``{"a": float}``) may use."""


@dataclass(frozen=True)
class SdkMcpTool:
    """A tool made by ``@tool``: its name, description, argument schema and function."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Handler


def tool(
    name: str, description: str, input_schema: Mapping[str, Any]
) -> Callable[[Handler], SdkMcpTool]:
    """Decorate an async function to make it the tool ``name`` (``@tool("add", "...", {...})``)."""

    def make(handler: Handler) -> SdkMcpTool:
        return SdkMcpTool(name, description, input_schema, handler)

    return make


@dataclass(frozen=True)
class McpSdkServerConfig:
    """Tools served in this process under the server name ``name``."""

    name: str
    version: str = "1.0.0"
    tools: Sequence[SdkMcpTool] = field(default_factory=tuple)
    type: str = "sdk"


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: Sequence[SdkMcpTool] | None = None
) -> McpSdkServerConfig:
    """A server of ``tools`` for ``ClawAgentOptions.mcp_servers``, as the Claude Agent SDK's."""
    return McpSdkServerConfig(name, version, tuple(tools or ()))


def json_schema(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """``input_schema`` as a JSON Schema object: a short one (``{"a": float}``) made whole.

    A schema with ``"type": "object"`` is already one, and is used as it is. Otherwise each
    key is a required property whose JSON type is ``JSON_TYPES``'s for its Python type; a
    type it does not know is ``BadOption`` naming the property.
    """
    # region ch29: a JSON Schema as it is; {"name": type} to properties, all of them required
    # more: {"type": "object", "properties": {name: {"type": JSON_TYPES[t]}}, "required": [...]}
    if input_schema.get("type") == "object":
        return dict(input_schema)
    properties: dict[str, Any] = {}
    for key, kind in input_schema.items():
        if kind not in JSON_TYPES:
            raise BadOption(f"the tool argument {key!r} has a type claw cannot describe: {kind!r}")
        properties[key] = {"type": JSON_TYPES[kind]}
    return {"type": "object", "properties": properties, "required": list(properties)}
    # endregion


class InProcessTool:
    """An ``SdkMcpTool`` as a claw ``Tool``, named ``mcp__<server>__<tool>``."""

    def __init__(self, server: str, sdk_tool: SdkMcpTool) -> None:
        """The tool ``sdk_tool`` of the server ``server``."""
        self.sdk_tool = sdk_tool
        self._definition = ToolDefinition(
            name=f"mcp__{server}__{sdk_tool.name}",
            description=sdk_tool.description,
            parameters=json_schema(sdk_tool.input_schema),
        )

    @property
    def definition(self) -> ToolDefinition:
        """How the model sees the tool."""
        return self._definition

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Call the function; its text blocks joined are the output, ``is_error`` its kind.

        An exception the function raises is an error output naming it (``ValueError: ...``),
        for the model to read: never the agent's. So is a reply that is not a dict.
        """
        # region ch29: await the handler; join the text blocks; an exception is an error output
        # more: "\n".join(b["text"] for b in reply["content"] if b.get("type") == "text")
        try:
            reply = await self.sdk_tool.handler(arguments)
        except Exception as error:
            return ToolOutput.error(f"{type(error).__name__}: {error}")
        if not isinstance(reply, Mapping):
            return ToolOutput.error(f"the tool returned {type(reply).__name__}, not a dict")
        blocks = reply.get("content", [])
        text = "\n".join(
            str(block.get("text", "")) for block in blocks if block.get("type") == "text"
        )
        return ToolOutput(content=text, is_error=bool(reply.get("is_error", False)))
        # endregion
