"""ch29 · Your own tools: ``@tool`` functions served in this process, no MCP server to start."""

from pathlib import Path
from typing import Any

import pytest
from claw_command import calls, no_fsync, says, tool_results
from sdk_run import collect, options
from sdk_run import project as project_folder

from claw.sdk import BadOption, ResultMessage, UserMessage, create_sdk_mcp_server, tool
from claw.sdk.tools import InProcessTool, SdkMcpTool, json_schema
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here
project = pytest.fixture(project_folder)


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}


@tool("explode", "Always fails", {"type": "object", "properties": {}})
async def explode(arguments: dict[str, Any]) -> dict[str, Any]:
    raise ValueError("the fuse was lit")


def test_sdk_a_short_schema_becomes_json_schema_and_a_full_one_stays() -> None:
    assert json_schema({"a": float, "n": int, "s": str, "ok": bool}) == {
        "type": "object",
        "properties": {"a": {"type": "number"}, "n": {"type": "integer"},
                       "s": {"type": "string"}, "ok": {"type": "boolean"}},
        "required": ["a", "n", "s", "ok"],
    }  # fmt: skip
    full = {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}
    assert json_schema(full) == full
    with pytest.raises(BadOption, match="'when'"):
        json_schema({"when": complex})


async def test_sdk_a_tool_reply_is_its_text_blocks_and_its_is_error() -> None:
    replies: list[Any] = [
        {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "..."},
                     {"type": "text"}, {"type": "text", "text": "b"}], "is_error": True},
        {},
        "just a string",
    ]  # fmt: skip

    async def handler(arguments: dict[str, Any]) -> Any:
        return replies.pop(0)

    made = InProcessTool("srv", SdkMcpTool("t", "A tool", {"x": str}, handler))
    assert made.definition.name == "mcp__srv__t"
    first, empty, wrong = [await made.run({"x": "1"}) for _ in range(3)]
    assert (first.content, first.is_error) == ("a\n\nb", True)
    assert (empty.content, empty.is_error) == ("", False)
    assert wrong.is_error and wrong.content == "the tool returned str, not a dict"


async def test_sdk_a_tool_function_is_called_in_process_by_its_mcp_name(
    server: LoopbackServer, project: Path
) -> None:
    calculator = create_sdk_mcp_server("calc", tools=[add])
    server.add(calls("mcp__calc__add", {"a": 2, "b": 3.5}), says("5.5"))

    messages = await collect(
        "2 + 3.5?", options(server, mcp_servers={"calc": calculator},
                            allowed_tools=["mcp__calc__add"])
    )  # fmt: skip

    assert tool_results(server) == ["5.5"]
    sent = {t["function"]["name"]: t["function"] for t in server.requests[0].json["tools"]}
    assert sent["mcp__calc__add"]["description"] == "Add two numbers"
    assert sent["mcp__calc__add"]["parameters"]["required"] == ["a", "b"]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error


async def test_sdk_a_tool_that_raises_is_an_error_result_for_the_model(
    server: LoopbackServer, project: Path
) -> None:
    server.add(calls("mcp__boom__explode", {}), says("It failed."))

    messages = await collect(
        "Try it.", options(server, mcp_servers={"boom": create_sdk_mcp_server("boom",
                           tools=[explode])}, permission_mode="bypassPermissions")
    )  # fmt: skip

    (answer,) = [m.content[0] for m in messages if isinstance(m, UserMessage)]
    assert answer.is_error and answer.content == "ValueError: the fuse was lit"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "It failed."
