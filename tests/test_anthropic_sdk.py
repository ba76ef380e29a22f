"""ch24 · The official ``anthropic`` SDK as the oracle for claw's Anthropic provider.

The same local server sends the same bytes to both: the SDK's ``messages.stream(...)`` and
claw's ``AnthropicProvider`` must assemble the same turn (text, tool calls with their parsed
input, thinking with its signature, usage, stop reason). The SDK, the oracle, reads each stream
whole; claw reads it cut into pieces, down to single bytes. The request claw sends must pass the
SDK's own request types unchanged, and both must agree on which errors are worth a retry.
"""

import ssl
from typing import Any

import anthropic
import anthropic.types
import pytest
from anthropic_wire import error, message, stream, text, thinking, tool_use, usage
from pydantic import TypeAdapter

from claw.errors import ProviderError
from claw.providers.anthropic import AnthropicProvider
from claw.providers.openrouter import RetryPolicy
from claw.types import AssistantTurn, CacheControl, Message, StopReason, ToolDefinition
from clawbook.harness.loopback import JSONReply, LoopbackServer, StreamReply, split

KEY = "sk-ant-api03-oracle-0123456789"
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")
GREP = (
    ToolDefinition(name="grep", description="Search files.")
    .param("pattern", "string", "A regular expression.")
    .param("limit", "integer", "At most this many lines.", required=False)
)

STOP_REASONS = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "refusal": StopReason.CONTENT_FILTER,
}

TURNS: dict[str, tuple[list[dict[str, Any]], str, dict[str, Any]]] = {
    "text": ([text("Hello! The tests pass.")], "end_turn", usage(12, 6)),
    "thinking, text and a call": (
        [
            thinking("The user wants a.py. I will read it, then answer."),
            text("Let me read a.py."),
            tool_use("toolu_01A", "read", {"path": "src/a.py"}),
        ],
        "tool_use",
        usage(812, 95, read=2048, written=300),
    ),
    "two calls, nested input": (
        [
            tool_use("toolu_1", "grep", {"pattern": "def \\w+\\(", "limit": 20}),
            tool_use(
                "toolu_2", "read", {"path": "caf\u00e9/\u65e5\u672c.py", "deep": {"a": [1, 2]}}
            ),
        ],
        "tool_use",
        usage(50, 40, read=10),
    ),
    "redacted thinking": (
        [
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw",
            },
            thinking("Now the answer.", signature="sig-2"),
            text("Done \u2014 nothing to change. \U0001f44d"),
        ],
        "end_turn",
        usage(30, 20),
    ),
    "cut by max_tokens": ([text("A long answer that was cut")], "max_tokens", usage(9, 64)),
    "refused": ([text("I can't help with that.")], "refusal", usage(9, 8)),
}


TLS = ssl.create_default_context()
"""Read once: a client that loads the certificates itself spends 20 ms doing it, every time."""


def sdk_client(server: LoopbackServer) -> anthropic.Anthropic:
    """The official client, pointed at the loopback server, retrying only when told."""
    return anthropic.Anthropic(
        api_key=KEY,
        base_url=server.base_url.removesuffix("/v1"),
        max_retries=0,
        http_client=anthropic.DefaultHttpxClient(verify=TLS),
    )


def provider(server: LoopbackServer, **options: Any) -> AnthropicProvider:
    async def sleep(seconds: float) -> None:
        pass

    return AnthropicProvider(
        "claude-test-1",
        base_url=server.base_url.removesuffix("/v1"),
        api_key=KEY,
        sleep=sleep,
        **options,
    )


def sdk_view(final: anthropic.types.Message) -> dict[str, Any]:
    """What the SDK assembled, in the terms both can be compared in."""
    counts = final.usage
    read = counts.cache_read_input_tokens or 0
    written = counts.cache_creation_input_tokens or 0
    return {
        "text": "".join(block.text for block in final.content if block.type == "text"),
        "calls": [
            (block.id, block.name, block.input)
            for block in final.content
            if block.type == "tool_use"
        ],
        "kept": [
            block.model_dump(exclude_none=True)
            for block in final.content
            if block.type in ("thinking", "redacted_thinking")
        ],
        "reasoning": "".join(block.thinking for block in final.content if block.type == "thinking"),
        "usage": (counts.input_tokens + read + written, counts.output_tokens, read, written),
        "stop": STOP_REASONS[final.stop_reason or "end_turn"],
    }


def claw_view(turn: AssistantTurn) -> dict[str, Any]:
    """What claw assembled, in the same terms."""
    counts = turn.usage
    return {
        "text": turn.text,
        "calls": [(call.id, call.name, call.arguments) for call in turn.tool_calls],
        "kept": [block.data for block in turn.provider_blocks if block.provider == "anthropic"],
        "reasoning": turn.reasoning,
        "usage": (
            counts.input_tokens,
            counts.output_tokens,
            counts.cached_input_tokens,
            counts.cache_write_tokens,
        ),
        "stop": turn.stop_reason,
    }


def piece_sizes(name: str) -> tuple[int, ...]:
    """The sizes claw reads a turn's stream in: single bytes where that cuts characters.

    A stream of ASCII only is cut every 3 bytes instead: with the cuts every 7, that lands on
    every kind of place in its lines at a third of the cost (5,000 one-byte pieces take 0.1 s).
    """
    blocks, reason, counts = TURNS[name]
    first = 3 if stream(blocks, reason, counts, size=3).isascii() else 1
    return (first, 7, 4096)


@pytest.mark.parametrize(("name", "size"), [(n, size) for n in TURNS for size in piece_sizes(n)])
async def test_anthropic_sdk_and_claw_assemble_the_same_turn_from_one_stream(server, name, size):
    blocks, reason, counts = TURNS[name]
    body = stream(blocks, reason, counts, size=3)
    server.add(StreamReply([body]), StreamReply(split(body, size)))
    with sdk_client(server).messages.stream(
        model="claude-test-1", max_tokens=1024, messages=[{"role": "user", "content": "go"}]
    ) as sdk_stream:
        final = sdk_stream.get_final_message()
    async with provider(server) as claw:
        turn = await claw.stream_turn([Message.user("go")], [READ, GREP])

    expected = sdk_view(final)
    assert claw_view(turn) == expected
    # The comparison has teeth: the SDK really saw this turn, not an empty one.
    assert expected["text"] or expected["calls"]


@pytest.mark.parametrize("name", list(TURNS))
async def test_anthropic_sdk_and_claw_read_the_same_whole_message(server, name):
    blocks, reason, counts = TURNS[name]
    server.add(
        JSONReply(message(blocks, reason, counts)), JSONReply(message(blocks, reason, counts))
    )
    final = sdk_client(server).messages.create(
        model="claude-test-1", max_tokens=1024, messages=[{"role": "user", "content": "go"}]
    )
    async with provider(server) as claw:
        turn = await claw.complete([Message.user("go")], [READ])
    assert claw_view(turn) == sdk_view(final)


def tool_round_history() -> list[Message]:
    """A conversation after one thinking, tool-using turn, with caching and an error result."""
    return [
        Message.system("You are claw, a coding agent.", cache_control=CacheControl(ttl="1h")),
        Message.developer("Project rules: run the tests."),
        Message.user("Why does test_parse fail?"),
        Message.assistant(
            "Let me look.",
            tool_calls=[
                *(
                    call
                    for call in AssistantTurn(
                        tool_calls=(
                            {"id": "toolu_1", "name": "read", "arguments": {"path": "p.py"}},
                            {"id": "toolu_2", "name": "grep", "arguments": {"pattern": "x"}},
                        )
                    ).tool_calls
                )
            ],
            provider_blocks=[
                {"provider": "anthropic", "data": thinking("Read p.py and grep.")},
                {"provider": "anthropic", "data": {"type": "redacted_thinking", "data": "abc"}},
            ],
        ),
        Message.tool_result("toolu_1", "     1\tdef parse(): ..."),
        Message.tool_error("toolu_2", "grep: bad pattern"),
    ]


async def test_anthropic_sdk_accepts_claws_request_unchanged(server):
    """claw's body passes the SDK's request types and comes out of the SDK as it went in."""
    server.add(StreamReply([stream([text("ok")])]), StreamReply([stream([text("ok")])]))
    async with provider(server, thinking_budget=1024) as claw:
        await claw.stream_turn(tool_round_history(), [READ, GREP])
    sent = server.requests[0].json

    # Each part of the body, validated by the SDK's own TypedDicts: a key they do not know
    # would be dropped, a wrong type or value refused.
    adapter = TypeAdapter(anthropic.types.MessageParam)  # alive while its iterators are read
    for wire in sent["messages"]:
        checked = adapter.validate_python(wire)
        assert {**checked, "content": list(checked["content"])} == wire
    for block in sent["system"]:
        assert TypeAdapter(anthropic.types.TextBlockParam).validate_python(block) == block
    for tool in sent["tools"]:
        assert TypeAdapter(anthropic.types.ToolParam).validate_python(tool) == tool
    assert TypeAdapter(anthropic.types.ThinkingConfigParam).validate_python(sent["thinking"])

    # The SDK's create() takes every key as a typed argument and sends the same JSON.
    arguments = {key: value for key, value in sent.items() if key != "stream"}
    with sdk_client(server).messages.stream(**arguments) as sdk_stream:
        sdk_stream.get_final_message()
    assert server.requests[1].json == sent
    # The same API version as the SDK: the request types above are that version's.
    assert (
        server.requests[1].headers["anthropic-version"]
        == server.requests[0].headers["anthropic-version"]
    )


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ],
)
async def test_anthropic_sdk_and_claw_agree_on_which_errors_to_retry(server, status, kind):
    def script(on: LoopbackServer) -> None:
        # retry-after-ms keeps the SDK's own wait to a millisecond; claw's sleep is fake.
        on.add(
            JSONReply(error(kind, "the words"), status, headers={"retry-after-ms": "1"}),
            StreamReply([stream([text("second try")])]),
        )

    script(server)
    client = sdk_client(server).with_options(max_retries=1)
    try:
        with client.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as sdk_stream:
            assert sdk_stream.get_final_message().content[0].type == "text"
    except anthropic.APIStatusError as raised:
        assert raised.status_code == status
        assert raised.body["error"]["type"] == kind  # type: ignore[index]
    sdk_tries = len(server.requests)
    assert sdk_tries in (1, 2)

    with LoopbackServer() as fresh:  # the same script, for claw
        script(fresh)
        async with provider(fresh, retry=RetryPolicy(max_retries=1)) as claw:
            try:
                turn = await claw.stream_turn([Message.user("hi")], [])
                assert turn.text == "second try"
            except ProviderError as raised:
                assert f"{kind}: the words" in str(raised)
        assert len(fresh.requests) == sdk_tries


async def test_anthropic_sdk_and_claw_both_fail_on_an_error_event_mid_stream(server):
    events = (
        stream([text("Half of it")], "end_turn", usage()).decode().split("event: message_delta")[0]
    )
    body = (
        events + 'event: error\ndata: {"type": "error", "error": {"type": '
        '"overloaded_error", "message": "Overloaded"}}\n\n'
    ).encode()
    server.add(StreamReply([body]), StreamReply([body]))
    client = sdk_client(server)
    with (
        pytest.raises(anthropic.APIStatusError, match="overloaded_error"),
        client.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as sdk_stream,
    ):
        sdk_stream.get_final_message()
    async with provider(server) as claw:
        with pytest.raises(ProviderError, match="overloaded_error: Overloaded"):
            await claw.stream_turn([Message.user("hi")], [])


@pytest.mark.parametrize("name", ["thinking, text and a call", "two calls, nested input"])
async def test_anthropic_sdk_and_claw_send_a_turn_back_the_same_way(server, name):
    """The SDK's way to continue: the response's content blocks, as they came, as the
    assistant's message. claw's history, sent back, must carry the same blocks."""
    blocks, reason, counts = TURNS[name]
    body = stream(blocks, reason, counts)
    server.add(StreamReply([body]), StreamReply([body]))
    client = sdk_client(server)
    with client.messages.stream(
        model="claude-test-1", max_tokens=1024, messages=[{"role": "user", "content": "go"}]
    ) as sdk_stream:
        final = sdk_stream.get_final_message()
    async with provider(server) as claw:
        turn = await claw.stream_turn([Message.user("go")], [READ, GREP])

    results = [
        (block.id, f"output of {block.name}") for block in final.content if block.type == "tool_use"
    ]
    server.add(StreamReply([stream([text("ok")])]), StreamReply([stream([text("ok")])]))
    sdk_messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": final.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": output}
                for call_id, output in results
            ],
        },
    ]
    with client.messages.stream(
        model="claude-test-1", max_tokens=1024, messages=sdk_messages
    ) as sdk_stream:
        sdk_stream.get_final_message()
    history = [
        Message.user("go"),
        turn.to_message(),
        *(Message.tool_result(call_id, output) for call_id, output in results),
    ]
    async with provider(server) as claw:
        await claw.stream_turn(history, [READ, GREP])

    def without_nulls(value: Any) -> Any:
        # The SDK writes the optional fields of its response models as null; both mean "none".
        if isinstance(value, dict):
            return {k: without_nulls(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [without_nulls(item) for item in value]
        return value

    sdk_sent, claw_sent = (request.json["messages"] for request in server.requests[-2:])
    assert without_nulls(claw_sent) == without_nulls(sdk_sent)
    assert len(sdk_sent[1]["content"]) == len(blocks)
