"""ch24 · AnthropicProvider: the Messages API, whole and streamed, against a loopback server.

Every test talks over real sockets to ``LoopbackServer`` (``clawbook/loopback.py``), scripted
with the traffic the Messages API sends (``tests/anthropic_wire.py``): named SSE events,
content blocks, signed thinking, ``ping``, error bodies with their ``type``. Waits between
retries go through a fake ``sleep`` that only records them.
"""

import asyncio
import json
from typing import Any

import pytest
from anthropic_wire import (
    SIGNATURE,
    error,
    event,
    message,
    stream,
    stream_events,
    text,
    thinking,
    tool_use,
    usage,
)
from loop_clock import LoopClock
from paced_stream import PacedReply, ReadWatch

from claw.errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    PermissionDeniedError,
    ProviderTimeoutError,
    RateLimitError,
    ResponseTooLargeError,
    ServerError,
    StreamError,
)
from claw.providers.anthropic import (
    MAX_PAUSES,
    AnthropicProvider,
    MessageStreamReader,
    error_from_anthropic,
    to_wire,
)
from claw.providers.http import HTTPLimits, RetryPolicy
from claw.streaming import (
    BlockDone,
    Done,
    ReasoningDelta,
    ServerSentEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
)
from claw.types import (
    CacheControl,
    Message,
    ProviderBlock,
    StopReason,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)
from clawbook.harness.loopback import (
    DropReply,
    EndlessReply,
    JSONReply,
    LoopbackServer,
    StreamReply,
    split,
)

KEY = "sk-ant-api03-0123456789abcdef-test-key"
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")


def make(server: LoopbackServer, **options: Any) -> AnthropicProvider:
    """A provider for the loopback server, whose waits are recorded in ``provider.waits``."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    provider = AnthropicProvider(
        "claude-test-1",
        base_url=server.base_url.removesuffix("/v1"),
        api_key=KEY,
        sleep=sleep,
        **options,
    )
    provider.waits = waits  # type: ignore[attr-defined]
    return provider


def conversation() -> list[Message]:
    """A conversation with every kind of message: system, developer, user, a tool round."""
    signed = ProviderBlock(provider="anthropic", data=thinking("I should read it."))
    foreign = ProviderBlock(provider="someone-else", data={"type": "reasoning", "text": "x"})
    return [
        Message.system("You are claw.", cache_control=CacheControl()),
        Message.developer((TextPart(text="Be brief. "), TextPart(text="Cite lines."))),
        Message.user("What does a.py say?"),
        Message.assistant(
            "Let me look.",
            tool_calls=[
                ToolCall(id="toolu_01", name="read", arguments={"path": "a.py"}),
                ToolCall(id="toolu_02", name="read", arguments={"path": "b.py"}),
            ],
            reasoning_content="I should read it.",
            provider_blocks=[signed, foreign],
        ),
        Message.tool_result("toolu_01", "     1\tprint('hi')"),
        Message.tool_error("toolu_02", "no such file: b.py"),
        Message.user("And?"),
    ]


async def test_anthropic_sends_a_conversation_as_content_blocks(server):
    server.add(StreamReply([stream([text("It prints hi.")])]))
    async with make(server) as provider:
        await provider.stream_turn(conversation(), [READ])

    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2026-10-21"
    body = request.json
    assert body["model"] == "claude-test-1"
    assert body["max_tokens"] == 8192
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "You are claw.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Be brief. "},
        {"type": "text", "text": "Cite lines."},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What does a.py say?"}]},
        {
            "role": "assistant",
            "content": [
                thinking("I should read it."),
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "toolu_02", "name": "read", "input": {"path": "b.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": "     1\tprint('hi')",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": "no such file: b.py",
                    "is_error": True,
                },
                {"type": "text", "text": "And?"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file.", "input_schema": READ.parameters}
    ]


async def test_anthropic_sends_thinking_only_when_asked(server):
    server.add(JSONReply(message([text("a")])), JSONReply(message([text("b")])))
    async with make(server) as provider:
        await provider.complete([Message.user("hi")], [])
    async with make(server, thinking_budget=2048) as provider:
        await provider.complete([Message.user("hi")], [])

    plain, thoughtful = (request.json for request in server.requests)
    assert not {"system", "tools", "stream", "thinking"} & plain.keys()
    assert thoughtful["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    with pytest.raises(ValueError, match="thinking_budget must be at least 1024"):
        make(server, thinking_budget=512)


async def test_anthropic_streams_text_tool_calls_and_signed_thinking(server):
    blocks = [
        thinking("The file is a.py; read it."),
        text("I'll read a.py first."),
        tool_use("toolu_01", "read", {"path": "a.py", "note": "h\u00e9"}),
    ]
    counts = usage(30, 42, read=1000, written=12)
    server.add(StreamReply(split(stream(blocks, "tool_use", counts), 9)))
    async with make(server) as provider:
        events = [item async for item in provider.stream([Message.user("go")], [READ])]

    shown = "".join(item.text for item in events if isinstance(item, TextDelta))
    thought = "".join(item.text for item in events if isinstance(item, ReasoningDelta))
    assert shown == "I'll read a.py first."
    assert thought == "The file is a.py; read it."
    assert [item.block.data for item in events if isinstance(item, BlockDone)] == [
        {"type": "thinking", "thinking": "The file is a.py; read it.", "signature": SIGNATURE}
    ]
    server.add(StreamReply(split(stream(blocks, "tool_use", counts), 9)))
    async with make(server) as provider:
        turn = await provider.stream_turn([Message.user("go")], [READ])
    assert turn.text == "I'll read a.py first."
    assert turn.tool_calls == (
        ToolCall(id="toolu_01", name="read", arguments={"path": "a.py", "note": "h\u00e9"}),
    )
    assert turn.stop_reason is StopReason.TOOL_USE
    assert turn.reasoning == "The file is a.py; read it."
    assert turn.provider_blocks == (
        ProviderBlock(provider="anthropic", data=thinking("The file is a.py; read it.")),
    )


async def test_anthropic_counts_cache_reads_and_writes_in_the_usage(server):
    counts = usage(25, 9, read=3000, written=400)
    server.add(StreamReply([stream([text("ok")], "end_turn", counts)]))
    server.add(JSONReply(message([text("ok")], "end_turn", counts)))
    async with make(server) as provider:
        streamed = await provider.stream_turn([Message.user("hi")], [])
        whole = await provider.complete([Message.user("hi")], [])
    expected = TokenUsage(
        input_tokens=3425, output_tokens=9, cached_input_tokens=3000, cache_write_tokens=400
    )
    assert streamed.usage == expected
    assert whole.usage == expected


async def test_anthropic_later_usage_counts_replace_earlier_ones(server):
    events = stream_events([text("ok")], "end_turn", usage(10, 3, read=30))
    # Newer servers repeat the input counts in message_delta, some with null for "unchanged".
    events[-2]["usage"] = {"output_tokens": 50, "input_tokens": 11, "cache_read_input_tokens": None}
    server.add(StreamReply(["".join(event(e) for e in events).encode()]))
    async with make(server) as provider:
        turn = await provider.stream_turn([Message.user("hi")], [])
    assert turn.usage == TokenUsage(input_tokens=41, output_tokens=50, cached_input_tokens=30)


async def test_anthropic_an_error_body_under_status_200_is_its_typed_error(server):
    server.add(JSONReply(error("overloaded_error", "Overloaded")))
    server.add(JSONReply(error("permission_error", "not for this key")))
    async with make(server) as provider:
        with pytest.raises(ServerError, match="overloaded_error: Overloaded") as overloaded:
            await provider.complete([Message.user("hi")], [])
        with pytest.raises(PermissionDeniedError, match="permission_error") as denied:
            await provider.complete([Message.user("hi")], [])
    assert (overloaded.value.status, denied.value.status) == (529, 403)


async def test_anthropic_reads_a_whole_message_like_a_stream(server):
    blocks = [
        thinking("Think."),
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        text("Reading."),
        tool_use("toolu_09", "read", {"path": "x"}),
    ]
    server.add(JSONReply(message(blocks, "tool_use")))
    async with make(server) as provider:
        turn = await provider.complete([Message.user("hi")], [READ])
    assert turn.text == "Reading."
    assert turn.reasoning == "Think."
    assert turn.tool_calls == (ToolCall(id="toolu_09", name="read", arguments={"path": "x"}),)
    assert [block.data for block in turn.provider_blocks] == blocks[:2]
    assert server.requests[0].json.get("stream") is None


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", StopReason.END_TURN),
        ("stop_sequence", StopReason.END_TURN),
        ("max_tokens", StopReason.MAX_TOKENS),
        ("refusal", StopReason.CONTENT_FILTER),
        ("a_reason_from_the_future", StopReason.END_TURN),
    ],
)
async def test_anthropic_maps_stop_reasons(server, reason, expected):
    server.add(StreamReply([stream([text("Some text")], reason)]))
    async with make(server) as provider:
        turn = await provider.stream_turn([Message.user("hi")], [])
    assert turn.stop_reason is expected
    assert turn.text == "Some text"


PAUSED = [
    ([thinking("Search the docs first."), text("Searching. ")], "pause_turn", usage(100, 10)),
    ([text("Still searching. ")], "pause_turn", usage(150, 5, read=100)),
    ([text("Found it.")], "end_turn", usage(200, 7, read=150, written=40)),
]
"""A turn the server pauses twice: the content of each paused Message is part of the turn."""


@pytest.mark.parametrize("mode", ["stream", "complete"])
async def test_anthropic_continues_a_paused_turn_by_sending_its_content_back(server, mode):
    for blocks, reason, counts in PAUSED:
        if mode == "stream":
            server.add(StreamReply([stream(blocks, reason, counts)]))
        else:
            server.add(JSONReply(message(blocks, reason, counts)))
    async with make(server) as provider:
        if mode == "stream":
            turn = await provider.stream_turn([Message.user("go")], [READ])
        else:
            turn = await provider.complete([Message.user("go")], [READ])

    # One turn for the agent: the three Messages' content, in order, and their usage added up.
    assert turn.text == "Searching. Still searching. Found it."
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.reasoning == "Search the docs first."
    assert [block.data for block in turn.provider_blocks] == [thinking("Search the docs first.")]
    assert turn.usage == TokenUsage(
        input_tokens=100 + 250 + 390,
        output_tokens=22,
        cached_input_tokens=250,
        cache_write_tokens=40,
    )
    # Each continuation is the same request with the paused content as the assistant's last
    # message: nothing is added after it.
    assert len(server.requests) == 3
    first, second, third = (request.json for request in server.requests)
    go = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    assert first["messages"] == [go]
    assert second["messages"] == [
        go,
        {"role": "assistant", "content": [thinking("Search the docs first."), text("Searching. ")]},
    ]
    assert third["messages"] == [
        go,
        {
            "role": "assistant",
            "content": [
                thinking("Search the docs first."),
                text("Searching. "),
                text("Still searching. "),
            ],
        },
    ]
    assert first["tools"] == second["tools"] == third["tools"]
    assert first.get("stream") == second.get("stream") == third.get("stream")


async def test_anthropic_stops_continuing_a_turn_paused_too_often(server):
    blocks, reason, counts = PAUSED[1]
    for _ in range(MAX_PAUSES + 2):
        server.add(StreamReply([stream(blocks, reason, counts)]))
    async with make(server) as provider:
        with pytest.raises(StreamError) as raised:
            await provider.stream_turn([Message.user("go")], [])
    assert str(raised.value) == (
        f"the server paused the turn {MAX_PAUSES + 1} times in a row (pause_turn); claw "
        "stopped sending it back; the turn is incomplete"
    )
    assert len(server.requests) == MAX_PAUSES + 1


async def test_anthropic_ignores_ping_and_unknown_events(server):
    events = stream_events([text("Hello there.")])
    body = (
        ": a comment\n\n"
        + event({"type": "ping"})
        + "".join(event(e) for e in events[:3])
        + event({"type": "a_new_event", "index": 0, "surprise": [1, 2]})
        + event({"type": "content_block_delta", "index": 0, "delta": {"type": "new_delta"}})
        + "".join(event(e) for e in events[3:])
    )
    server.add(StreamReply(split(body.encode(), 11)))
    async with make(server) as provider:
        turn = await provider.stream_turn([Message.user("hi")], [])
    assert turn.text == "Hello there."
    assert turn.stop_reason is StopReason.END_TURN


async def test_anthropic_an_error_event_mid_stream_is_a_stream_error_with_its_type(server):
    events = stream_events([text("Half an answer, then")])
    body = "".join(event(e) for e in events[:5]) + event(error("overloaded_error", "Overloaded"))
    server.add(StreamReply([body.encode()]))
    seen: list[str] = []
    async with make(server) as provider:
        with pytest.raises(StreamError, match="overloaded_error: Overloaded"):
            async for item in provider.stream([Message.user("hi")], []):
                if isinstance(item, TextDelta):
                    seen.append(item.text)
    assert "".join(seen) == "Half an an"  # what arrived was passed on before the error
    assert len(server.requests) == 1  # a started stream is never sent again


async def test_anthropic_a_bad_json_event_is_a_clear_error(server):
    events = stream_events([text("Hi")])
    body = (
        "".join(event(e) for e in events[:2])
        + 'event: content_block_start\ndata: {"type": "con\n\n'
    )
    server.add(StreamReply([body.encode()]))
    async with make(server) as provider:
        with pytest.raises(MalformedResponseError, match="not JSON") as raised:
            await provider.stream_turn([Message.user("hi")], [])
    assert '{"type": "con' in str(raised.value)  # the data is quoted


async def test_anthropic_a_delta_for_a_block_that_never_started_is_malformed(server):
    body = event(stream_events([])[0]) + event(
        {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}
    )
    server.add(StreamReply([body.encode()]))
    async with make(server) as provider:
        with pytest.raises(MalformedResponseError, match="block 3, which never started"):
            await provider.stream_turn([Message.user("hi")], [])
    no_index = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}
    server.add(StreamReply([(event(stream_events([])[0]) + event(no_index)).encode()]))
    async with make(server) as provider:
        with pytest.raises(MalformedResponseError) as raised:
            await provider.stream_turn([Message.user("hi")], [])
    assert "content_block_delta" in str(raised.value)  # the event is quoted


async def test_anthropic_a_stream_that_stops_before_message_stop_is_incomplete(server):
    events = stream_events([text("All of it")])
    cut = "".join(event(e) for e in events[:-1]).encode()  # everything but message_stop
    server.add(StreamReply([cut]), StreamReply([cut[:-40]], cut_off=True))
    async with make(server) as provider:
        with pytest.raises(StreamError, match="ended before message_stop"):
            await provider.stream_turn([Message.user("hi")], [])
        with pytest.raises(StreamError, match="connection broke in the middle of the stream"):
            await provider.stream_turn([Message.user("hi")], [])


async def test_anthropic_idle_limit_counts_events_with_data_never_pings(server):
    clock = LoopClock.install()
    reply = PacedReply()
    server.add(reply)
    # message_start, a ping, content_block_start, then a text_delta per letter of "abc"
    events = stream_events([text("abc")], size=1)
    reply.send("".join(event(e) for e in events[:3]).encode())
    letters = [event(e).encode() for e in events[3:6]]
    ping = event({"type": "ping"}).encode()
    watch = ReadWatch(timeout=3600.0)
    received: list[Any] = []
    async with (
        watch.client,
        make(
            server,
            client=watch.client,
            limits=HTTPLimits(idle_timeout=250.0, deadline=3600.0),
            clock=clock.time,
        ) as provider,
    ):

        async def read_the_stream() -> None:
            async for item in provider.stream([Message.user("hi")], []):
                received.append(item)

        streaming = asyncio.ensure_future(read_the_stream())
        await watch.read(1, streaming)
        # A letter every 100 s, a ping between: never 250 s without data. Then only pings.
        a, b, c = letters
        schedule = [(50, ping), (50, a), (50, ping), (50, b), (50, ping), (50, c)]
        schedule += [(100, ping), (100, ping)]
        for pieces, (seconds, piece) in enumerate(schedule, start=2):
            await clock.advance(seconds)
            reply.send(piece)
            await watch.read(pieces, streaming)
        await clock.advance(100.0)  # 300 s since "c", with only pings: past the idle limit
        reply.send(ping)
        # The stream ends before it reads this ping; one that read pings as data never ends.
        with pytest.raises(ProviderTimeoutError) as caught:
            await watch.read(len(schedule) + 2, streaming)
    assert "".join(item.text for item in received if isinstance(item, TextDelta)) == "abc"
    assert caught.value.setting == "idle_timeout"
    assert "250 s (idle_timeout)" in str(caught.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind", "exception"),
    [
        (400, "invalid_request_error", BadRequestError),
        (401, "authentication_error", AuthenticationError),
        (413, "request_too_large", BadRequestError),
    ],
)
async def test_anthropic_does_not_retry_request_errors(server, status, kind, exception):
    server.add(JSONReply(error(kind, f"the {kind} words"), status))
    async with make(server) as provider:
        with pytest.raises(exception) as raised:
            await provider.stream_turn([Message.user("hi")], [])
    assert raised.value.status == status
    assert raised.value.message == f"{kind}: the {kind} words"
    assert len(server.requests) == 1


async def test_anthropic_retries_overload_and_rate_limits_honouring_retry_after(server):
    server.add(
        JSONReply(error("overloaded_error", "Overloaded"), 529),
        JSONReply(error("rate_limit_error", "slow down"), 429, headers={"retry-after": "7"}),
        StreamReply([stream([text("Finally.")])]),
    )
    async with make(server) as provider:
        turn = await provider.stream_turn([Message.user("hi")], [])
        assert turn.text == "Finally."
        assert len(provider.waits) == 2  # type: ignore[attr-defined]
        assert provider.waits[1] == 7  # type: ignore[attr-defined]
        assert 0.25 <= provider.waits[0] <= 0.5  # type: ignore[attr-defined]
    assert len(server.requests) == 3


async def test_anthropic_gives_up_after_the_retries_with_the_last_error(server):
    server.add(
        JSONReply(error("overloaded_error", "Overloaded"), 529),
        DropReply(),
        JSONReply(error("rate_limit_error", "slow down"), 429, headers={"retry-after": "1"}),
    )
    async with make(server, limits=HTTPLimits(retry=RetryPolicy(max_retries=2))) as provider:
        with pytest.raises(RateLimitError, match="rate_limit_error: slow down") as raised:
            await provider.complete([Message.user("hi")], [])
    assert raised.value.retry_after == 1
    assert len(server.requests) == 3


async def test_anthropic_never_shows_the_key_and_refuses_it_over_plain_http(server):
    server.add(JSONReply(error("authentication_error", f"invalid x-api-key {KEY}"), 401))
    async with make(server) as provider:
        assert KEY not in repr(provider)
        with pytest.raises(AuthenticationError) as raised:
            await provider.complete([Message.user("hi")], [])
    assert KEY not in str(raised.value)
    assert "[redacted]" in str(raised.value)
    server.add(StreamReply([stream([text(f"You sent {KEY}.")], size=100)]))
    async with make(server) as provider:  # an event that echoes the key is redacted too
        echoed = await provider.stream_turn([Message.user("hi")], [])
    assert echoed.text == "You sent [redacted]."
    with pytest.raises(Exception, match="refusing to send the API key over plain http"):
        AnthropicProvider("m", base_url="http://example.com", api_key=KEY)
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("m", api_key="")


async def test_anthropic_sends_nothing_a_provider_cannot_read_back(server):
    """Reasoning kept only as text (another provider's) is not sent: unsigned, it is refused."""
    history = [
        Message.user("hi"),
        Message.assistant("Hello.", reasoning_content="unsigned thoughts"),
        Message.assistant(""),  # an empty turn says nothing and is left out
        Message.user("again"),
    ]
    server.add(StreamReply([stream([text("ok")])]))
    async with make(server) as provider:
        await provider.stream_turn(history, [])
    assert server.requests[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]
    assert json.dumps(server.requests[0].json).count("unsigned") == 0


async def test_anthropic_reading_stops_at_message_stop(server):
    events = stream_events([text("Done here.")], None)  # type: ignore[arg-type]
    # Without "type" in its data, an event is known by its SSE name.
    untyped = "".join(event({k: v for k, v in e.items() if k != "type"}, e["type"]) for e in events)
    after = 'event: content_block_delta\ndata: {"type": "content_bl\n\n'  # never read
    server.add(StreamReply([(untyped + after).encode(), after.encode()]))
    async with make(server) as provider:
        items = [item async for item in provider.stream([Message.user("hi")], [])]
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == "Done here."
    assert [item.stop_reason for item in items if isinstance(item, Done)] == [StopReason.END_TURN]


def test_anthropic_reads_an_error_body_of_any_shape():
    overloaded = error("overloaded_error", "Overloaded")
    for status, kind, code in [(400, BadRequestError, 400), (399, ServerError, 529),
                               (None, ServerError, 529), (503, ServerError, 503)]:
        raised = error_from_anthropic(overloaded, status, retry_after=3)
        assert (type(raised), raised.status, raised.retry_after) == (kind, code, 3)
        assert raised.message == "overloaded_error: Overloaded"
    mystery = error_from_anthropic(error("mystery_error", "Hmm."), None)
    assert (type(mystery), mystery.status, mystery.message) == (
        ServerError, 500, "mystery_error: Hmm.")
    for body in [{"error": "plain words"}, "plain words", {"error": {"message": "plain words"}}]:
        raised = error_from_anthropic(body, 404)
        assert (type(raised), raised.status) == (BadRequestError, 404)
        assert "plain words" in raised.message
    untyped = error_from_anthropic({"error": {"message": "plain words"}}, None)
    assert (type(untyped), untyped.status) == (ServerError, 500)


def test_anthropic_leaves_out_what_is_empty_and_marks_the_last_block():
    mark = CacheControl()
    system, wire = to_wire([
        Message.system(""),  # nothing to say: no block
        Message.system((TextPart(text="A"), TextPart(text="B")), cache_control=mark),
        Message.user("hi"),
        Message.assistant("Reading.", tool_calls=[ToolCall(id="t1", name="read", arguments={})],
                          cache_control=mark),
        Message.tool_result("t1", ""),
        Message.user(""),
    ])
    assert system == [
        {"type": "text", "text": "A"},
        {"type": "text", "text": "B", "cache_control": {"type": "ephemeral"}},
    ]
    assert wire == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {},
             "cache_control": {"type": "ephemeral"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
    ]
    assert to_wire([Message.assistant(""), Message.developer("")]) == ([], [])
    calls = [ToolCall(id=name, name="read", arguments={}) for name in ("t1", "t2")]
    _, wire = to_wire([Message.assistant("Both.", tool_calls=calls, cache_control=mark)])
    assert ["cache_control" in block for block in wire[0]["content"]] == [False, False, True]
    with pytest.raises(TypeError, match="str"):  # not a message: its class is named
        to_wire([Message.user("hi"), "hi"])  # type: ignore[list-item]


def test_anthropic_reader_gives_nothing_for_empty_pieces_and_keeps_signatures():
    reader = MessageStreamReader()

    def read(data: dict[str, Any]) -> list[Any]:
        return reader.read(ServerSentEvent(json.dumps(data), data["type"]))

    def start(index: int, block: dict[str, Any]) -> list[Any]:
        return read({"type": "content_block_start", "index": index, "content_block": block})

    def delta(index: int, piece: dict[str, Any]) -> list[Any]:
        return read({"type": "content_block_delta", "index": index, "delta": piece})

    assert start(0, {"type": "text", "text": ""}) == []
    assert delta(0, {"type": "text_delta", "text": ""}) == []
    assert delta(0, {"type": "text_delta", "text": "Hi"}) == [TextDelta("Hi")]
    assert start(1, {"type": "thinking", "thinking": "So", "signature": ""}) == [
        ReasoningDelta("So")
    ]
    assert delta(1, {"type": "thinking_delta", "thinking": ""}) == []
    assert delta(1, {"type": "thinking_delta", "thinking": " then"}) == [ReasoningDelta(" then")]
    assert delta(1, {"type": "signature_delta", "signature": "sig-1"}) == []
    assert delta(1, {"type": "signature_delta", "signature": "sig-2"}) == []
    assert delta(1, {"type": "a_new_delta", "thinking": "no"}) == []
    assert read({"type": "content_block_stop", "index": 1}) == [BlockDone(ProviderBlock(
        provider="anthropic",
        data={"type": "thinking", "thinking": "So then", "signature": "sig-1sig-2"},
    ))]
    assert start(3, {"type": "thinking"}) == []  # a start without thinking or signature
    assert delta(3, {"type": "thinking_delta", "thinking": "Hm"}) == [ReasoningDelta("Hm")]
    assert delta(3, {"type": "signature_delta", "signature": "sig-3"}) == []
    assert read({"type": "content_block_stop", "index": 3}) == [BlockDone(ProviderBlock(
        provider="anthropic", data={"type": "thinking", "thinking": "Hm", "signature": "sig-3"},
    ))]
    call = {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "x"}}
    assert start(2, call) == [ToolCallStart(2, "t1", "read")]
    assert delta(2, {"type": "input_json_delta", "partial_json": ""}) == []
    assert delta(2, {"type": "input_json_delta", "partial_json": '{"path"'}) == [
        ToolCallDelta(2, '{"path"')
    ]
    assert read({"type": "content_block_stop", "index": 2}) == []  # its input came in pieces
    assert read({"type": "content_block_stop", "index": 0}) == []
    with pytest.raises(MalformedResponseError, match="block 0, which never started"):
        read({"type": "content_block_stop", "index": 0})
    with pytest.raises(MalformedResponseError) as raised:
        reader.read(ServerSentEvent("[1, 2]", "message_delta"))
    assert "[1, 2]" in str(raised.value)  # the data is quoted
    assert read({"type": "message_delta", "delta": {"stop_reason": None}, "usage": {}}) == [
        UsageUpdate(TokenUsage())
    ]
    assert not reader.stopped
    assert read({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}) == [
        Done(StopReason.MAX_TOKENS), UsageUpdate(TokenUsage())
    ]
    assert reader.stopped and not reader.finished
    assert read({"type": "message_stop"}) == [] and reader.finished


async def test_anthropic_refuses_a_whole_answer_larger_than_max_body_bytes(server):
    # A hostile server sends a Message without end: the provider stops reading at its limit.
    huge = EndlessReply(
        head=b'{"type": "message", "content": [{"type": "text", "text": "',
        piece=b"a" * 65536,
        size=256 * 2**20,
        content_type="application/json",
    )
    server.add(huge)
    async with make(server, limits=HTTPLimits(max_body_bytes=2**20)) as provider:
        with pytest.raises(ResponseTooLargeError) as caught:
            await provider.complete([Message.user("hi")], [])
    assert (caught.value.setting, caught.value.limit) == ("max_body_bytes", 2**20)
    assert "max_body_bytes" in str(caught.value)
    assert huge.finished.wait(30.0)
    assert huge.sent < 64 * 2**20, f"the client went on reading: {huge.sent} bytes sent"


async def test_anthropic_a_stream_event_over_max_event_chars_is_refused(server):
    server.add(StreamReply([stream([text("x" * 500)], size=500)]))
    async with make(server, limits=HTTPLimits(max_event_chars=300)) as provider:
        with pytest.raises(ResponseTooLargeError, match="max_event_chars"):
            await provider.stream_turn([Message.user("hi")], [])
