"""ch24 · The real ``Agent`` over either provider: one ``StreamProvider`` protocol, two wires.

The same multi-step task (read a file, then search, then answer) runs through chapter 7's
``Agent`` with chapter 5b's ``OpenRouterProvider`` and with chapter 24's ``AnthropicProvider``,
each against a loopback server speaking its own wire format. The agent must not notice which
one it has: same tool runs, same answer, same usage; and the Anthropic run must send the
model's signed thinking back, verbatim, on the requests that follow it.
"""

import json
from pathlib import Path
from typing import Any

import anthropic_oracle  # noqa: F401 (starts test_anthropic_sdk's oracle: see its docstring)
import pytest
from anthropic_wire import stream, text, thinking, tool_use, usage

from claw.events import RunFinished
from claw.loop import Agent
from claw.providers.anthropic import AnthropicProvider, usage_from_anthropic
from claw.providers.openrouter import OpenRouterProvider
from claw.tools.read import ReadTool
from claw.types import TokenUsage, ToolDefinition, ToolOutput
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    split,
    sse,
    text_chunks,
    usage_body,
)

KEY = "sk-test-0123456789-agent"


class Count:
    """A tool that counts the lines of a text containing a word."""

    definition = (
        ToolDefinition(name="count", description="Count lines containing a word.")
        .param("word", "string", "The word.")
        .param("text", "string", "The text.")
    )

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.seen.append(arguments)
        lines = arguments["text"].splitlines()
        return ToolOutput.ok(str(sum(arguments["word"] in line for line in lines)))


def openrouter_script(server: LoopbackServer) -> OpenRouterProvider:
    server.add(
        StreamReply(
            split(
                sse(
                    *text_chunks("Reading."),
                    chunk(tool_calls=[call_start(0, "toolu_1", "read")]),
                    chunk(tool_calls=[call_delta(0, json.dumps({"path": "notes.txt"}))]),
                    chunk(finish_reason="tool_calls"),
                    chunk(choices=False, usage=usage_body(100, 10, cached_tokens=40)),
                ),
                9,
            )
        ),
        StreamReply(
            split(
                sse(
                    chunk(tool_calls=[call_start(0, "toolu_2", "count")]),
                    chunk(
                        tool_calls=[
                            call_delta(
                                0,
                                json.dumps({"word": "milk", "text": "buy milk\nmilk again\neggs"}),
                            )
                        ]
                    ),
                    chunk(finish_reason="tool_calls"),
                    chunk(choices=False, usage=usage_body(200, 20, cached_tokens=100)),
                ),
                9,
            )
        ),
        StreamReply(
            split(
                sse(
                    *text_chunks("Two lines mention milk."),
                    chunk(finish_reason="stop"),
                    chunk(choices=False, usage=usage_body(300, 5, cached_tokens=200)),
                ),
                9,
            )
        ),
    )
    return OpenRouterProvider("m", base_url=server.base_url, api_key=KEY)


def anthropic_script(server: LoopbackServer) -> AnthropicProvider:
    server.add(
        StreamReply(
            split(
                stream(
                    [
                        thinking("Read notes.txt first."),
                        text("Reading."),
                        tool_use("toolu_1", "read", {"path": "notes.txt"}),
                    ],
                    "tool_use",
                    usage(60, 10, read=40),
                ),
                9,
            )
        ),
        StreamReply(
            split(
                stream(
                    [
                        thinking("Now count.", signature="sig-two"),
                        tool_use(
                            "toolu_2",
                            "count",
                            {"word": "milk", "text": "buy milk\nmilk again\neggs"},
                        ),
                    ],
                    "tool_use",
                    usage(100, 20, read=100),
                ),
                9,
            )
        ),
        StreamReply(
            split(
                stream(
                    [text("Two lines mention milk.")],
                    "end_turn",
                    usage(100, 5, read=200),
                ),
                9,
            )
        ),
    )
    return AnthropicProvider("m", base_url=server.base_url.removesuffix("/v1"), api_key=KEY)


@pytest.mark.parametrize(
    "script", [openrouter_script, anthropic_script], ids=["openrouter", "anthropic"]
)
async def test_anthropic_and_openrouter_run_the_same_agent_task(server, tmp_path: Path, script):
    # The OpenRouter half needs no chapter 24 code: without this it would pass before chapter
    # 24 is written. It waits for chapter 24 (todo), as the Anthropic half does.
    usage_from_anthropic({"input_tokens": 1})
    (tmp_path / "notes.txt").write_text("buy milk\nmilk again\neggs\n")
    counter = Count()
    async with script(server) as provider:
        agent = Agent(provider, [ReadTool(str(tmp_path)), counter], system="You are claw.")
        finished = await agent.run("How many lines of notes.txt mention milk?")

    assert isinstance(finished, RunFinished)
    assert finished.text == "Two lines mention milk."
    assert finished.steps == 3
    assert counter.seen == [{"word": "milk", "text": "buy milk\nmilk again\neggs"}]
    assert finished.usage == TokenUsage(input_tokens=600, output_tokens=35, cached_input_tokens=340)
    assert len(server.requests) == 3
    assert "buy milk" in json.dumps(server.requests[1].json)  # the read result went back


async def test_anthropic_agent_sends_each_signed_thinking_block_back(server, tmp_path: Path):
    (tmp_path / "notes.txt").write_text("buy milk\nmilk again\neggs\n")
    async with anthropic_script(server) as provider:
        agent = Agent(provider, [ReadTool(str(tmp_path)), Count()], system="You are claw.")
        await agent.run("How many lines of notes.txt mention milk?")

    third = server.requests[2].json["messages"]
    assistants = [message["content"] for message in third if message["role"] == "assistant"]
    assert [blocks[0] for blocks in assistants] == [
        thinking("Read notes.txt first."),
        thinking("Now count.", signature="sig-two"),
    ]
    # Each tool result answers its call in the user message right after, first in it.
    results = [message["content"][0] for message in third[1:] if message["role"] == "user"]
    assert [result["tool_use_id"] for result in results] == ["toolu_1", "toolu_2"]
    assert results[1]["content"] == "2"
    assert server.requests[2].json["system"] == [{"type": "text", "text": "You are claw."}]


async def test_anthropic_agent_sees_a_paused_turn_as_one_step(server, tmp_path: Path):
    """``pause_turn`` is the provider's business: the agent gets one turn, runs its call once."""
    (tmp_path / "notes.txt").write_text("buy milk\n")
    server.add(
        StreamReply([stream([thinking("Look first."), text("Looking. ")], "pause_turn")]),
        StreamReply(
            [
                stream(
                    [text("Reading."), tool_use("toolu_1", "read", {"path": "notes.txt"})],
                    "tool_use",
                )
            ]
        ),
        StreamReply([stream([text("It says buy milk.")])]),
    )
    async with AnthropicProvider(
        "m", base_url=server.base_url.removesuffix("/v1"), api_key=KEY
    ) as provider:
        agent = Agent(provider, [ReadTool(str(tmp_path))], system="You are claw.")
        finished = await agent.run("What does notes.txt say?")

    assert isinstance(finished, RunFinished)
    assert (finished.steps, finished.text) == (2, "It says buy milk.")
    assert len(server.requests) == 3
    # The continuation ends with the paused content; the next step's history holds the
    # whole turn once, its call answered right after it.
    assert server.requests[1].json["messages"][-1] == {
        "role": "assistant",
        "content": [thinking("Look first."), text("Looking. ")],
    }
    *_, assistant, result = server.requests[2].json["messages"]
    assert assistant["content"] == [
        thinking("Look first."),
        text("Looking. Reading."),
        tool_use("toolu_1", "read", {"path": "notes.txt"}),
    ]
    assert result["content"][0]["tool_use_id"] == "toolu_1"
