"""The loopback server speaks the protocol: the official ``openai`` SDK reads its traffic.

Every provider test trusts ``clawbook/harness/loopback.py`` to send what OpenRouter sends. This test
checks that trust against an independent client, the official SDK, reading the same whole and
streamed replies, and compares what it reads with what the reference provider reads. It lives
here, with the tooling's tests, because it tests the test server (and importing the SDK costs
every learner's run half a second).
"""

import json
from decimal import Decimal

import openai

from clawbook.harness.loopback import (
    MODEL,
    JSONReply,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    completion,
    split,
    sse,
    tool_call,
    usage_body,
)
from solution.providers.openrouter import OpenRouterProvider
from solution.types import ToolCall, ToolDefinition, UserMessage

KEEP_ALIVE = ": OPENROUTER PROCESSING\n\n"
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")
GREP = ToolDefinition(name="grep", description="Search files.").param(
    "pattern", "string", "A regular expression."
)


def hello() -> list[UserMessage]:
    return [UserMessage(content="hello")]


async def test_the_official_openai_sdk_reads_the_loopback_servers_traffic_as_claw_does(server):
    usage = usage_body(50, 12, cached_tokens=32, cost=0.00042)
    whole = completion(
        "Reading it.", tool_calls=[tool_call("call_1", "read", {"path": "a.py"})], usage=usage
    )
    stream = sse(
        KEEP_ALIVE,
        chunk("", role="assistant"),
        chunk("Café "),
        KEEP_ALIVE,
        chunk("time."),
        chunk(tool_calls=[call_start(0, "call_9", "grep")]),
        chunk(tool_calls=[call_delta(0, '{"pattern": ')]),
        chunk(tool_calls=[call_delta(0, '"é+"}')]),
        chunk(finish_reason="tool_calls"),
        chunk(usage=usage, choices=False),
    )

    def replies() -> list[JSONReply | StreamReply]:
        return [JSONReply(whole), StreamReply(pieces=split(stream, 24), pause=0.0005)]

    # claw reads the traffic first...
    server.add(*replies())
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        turn = await provider.complete(hello(), [READ])
        streamed = await provider.stream_turn(hello(), [GREP])

    # ...then the official SDK reads the same traffic.
    server.add(*replies())
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="sk-test", max_retries=0
    ) as client:
        sdk_whole = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hello"}]
        )
        sdk_text, sdk_args = "", ""
        sdk_call: tuple[str, str] | None = None
        sdk_usage = None
        sdk_finish = None
        sdk_stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hello"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for piece in sdk_stream:
            if piece.usage is not None:
                sdk_usage = piece.usage
            for choice in piece.choices:
                sdk_text += choice.delta.content or ""
                sdk_finish = choice.finish_reason or sdk_finish
                for fragment in choice.delta.tool_calls or ():
                    if fragment.id:
                        sdk_call = (fragment.id, fragment.function.name)
                    sdk_args += fragment.function.arguments or ""

    # The SDK understands the loopback server...
    message = sdk_whole.choices[0].message
    assert message.content == "Reading it."
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "a.py"}
    assert sdk_whole.usage.prompt_tokens == 50
    assert sdk_text == "Café time."
    assert sdk_call == ("call_9", "grep")
    assert sdk_finish == "tool_calls"
    assert sdk_usage is not None
    assert sdk_usage.completion_tokens == 12

    # ...and claw read it the same way.
    assert turn.text == message.content
    assert turn.tool_calls == (
        ToolCall(
            id=message.tool_calls[0].id,
            name=message.tool_calls[0].function.name,
            arguments=json.loads(message.tool_calls[0].function.arguments),
        ),
    )
    assert turn.usage.input_tokens == sdk_whole.usage.prompt_tokens
    assert turn.usage.output_tokens == sdk_whole.usage.completion_tokens
    assert turn.usage.cost == Decimal(str(sdk_whole.usage.model_extra["cost"]))
    assert streamed.text == sdk_text
    assert streamed.tool_calls == (
        ToolCall(id=sdk_call[0], name=sdk_call[1], arguments=json.loads(sdk_args)),
    )
    assert streamed.usage.input_tokens == sdk_usage.prompt_tokens
    assert streamed.usage.output_tokens == sdk_usage.completion_tokens
    assert streamed.usage.cached_input_tokens == sdk_usage.prompt_tokens_details.cached_tokens
    assert server.requests[2].json["messages"] == server.requests[0].json["messages"]
