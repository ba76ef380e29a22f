"""ch05b · OpenRouterProvider: real HTTP to an OpenAI-compatible server, whole and streamed.

Every test talks over real sockets to ``LoopbackServer`` (see ``clawbook/harness/loopback.py``),
which answers with scripted, realistic OpenRouter traffic: chunked Server-Sent Events with
keep-alive comments, error bodies, ``Retry-After`` headers, dropped connections. Waiting between
retries goes through an injected fake ``sleep`` that only records the delays, and the time limits
are tested on a clock the test moves by hand (``tests/loop_clock.py``), so no test really waits.
"""

import asyncio
import email.utils
import json
import os
import random
import socket
import time
from decimal import Decimal
from typing import Any

import pytest
from loop_clock import LoopClock
from paced_stream import PacedReply, ReadWatch

from claw.errors import (
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    MalformedResponseError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    RequestTimeoutError,
    ResponseTooLargeError,
    ServerError,
    StreamError,
)
from claw.providers.http import HTTPLimits, RetryPolicy
from claw.providers.openrouter import OpenRouterProvider, turn_from_wire
from claw.streaming import (
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
)
from claw.types import (
    AssistantMessage,
    CacheControl,
    Message,
    StopReason,
    SystemMessage,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from clawbook.harness.loopback import (
    MODEL,
    DropReply,
    EndlessReply,
    JSONReply,
    LoopbackServer,
    StallReply,
    StreamReply,
    TextReply,
    call_delta,
    call_start,
    chunk,
    completion,
    error_body,
    split,
    sse,
    text_chunks,
    tool_call,
    usage_body,
)

KEY = "sk-or-v1-0123456789abcdef-test-key"
KEEP_ALIVE = ": OPENROUTER PROCESSING\n\n"
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")
GREP = ToolDefinition(name="grep", description="Search files.").param(
    "pattern", "string", "A regular expression."
)


class FakeSleep:
    """Stands in for ``asyncio.sleep``: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider_for(server: LoopbackServer, **options: Any) -> OpenRouterProvider:
    """A provider for the loopback server, with a test key and a sleep that never waits."""
    options.setdefault("api_key", KEY)
    options.setdefault("sleep", FakeSleep())
    options.setdefault("rng", random.Random(0))
    return OpenRouterProvider(MODEL, base_url=server.base_url, **options)


def hello() -> list[UserMessage]:
    return [UserMessage(content="hello")]


def no_retries() -> HTTPLimits:
    return HTTPLimits(retry=RetryPolicy(max_retries=0))


async def events_of(provider: OpenRouterProvider, tools: list[ToolDefinition] | None = None):
    """Every event ``provider.stream`` yields for a one-message conversation."""
    return [event async for event in provider.stream(hello(), tools or [])]


def is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def stream_of(*events: dict[str, Any] | str, pause: float = 0.0) -> StreamReply:
    return StreamReply(pieces=[sse(*events)], pause=pause)


# ---------------------------------------------------------------- the request


async def test_openrouter_posts_to_the_chat_completions_path_with_a_bearer_key_and_the_model(
    server,
):
    server.add(JSONReply(completion("Hi!")))
    async with provider_for(server) as provider:
        await provider.complete(hello(), [])
    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"].startswith("application/json")
    assert request.json["model"] == MODEL
    assert request.json["messages"] == [{"role": "user", "content": "hello"}]


async def test_openrouter_sends_attribution_headers_only_when_configured(server):
    server.add(JSONReply(completion("plain")), JSONReply(completion("attributed")))
    async with provider_for(server) as plain:
        await plain.complete(hello(), [])
    async with provider_for(
        server, app_url="https://example.com/claw", app_title="claw tests"
    ) as attributed:
        await attributed.complete(hello(), [])
    without, with_them = server.requests[0].headers, server.requests[1].headers
    assert not {"http-referer", "x-openrouter-title", "x-title"} & set(without)
    assert with_them["http-referer"] == "https://example.com/claw"
    assert with_them["x-openrouter-title"] == "claw tests"
    assert with_them["x-title"] == "claw tests"


async def test_openrouter_converts_a_whole_conversation_to_the_openai_message_format(server):
    read = ToolCall(id="call_1", name="read", arguments={"path": "README.md", "limit": 10})
    grep = ToolCall(id="call_2", name="grep", arguments={"pattern": "TODO"})
    conversation = [
        SystemMessage(content="You are claw."),
        UserMessage(content="What is in README.md?"),
        AssistantMessage(content="Let me look.", tool_calls=(read,)),
        ToolResultMessage(tool_call_id="call_1", content="# claw"),
        AssistantMessage(tool_calls=(grep,)),
        ToolResultMessage(tool_call_id="call_2", content="bad regex", is_error=True),
        AssistantMessage(content="It is a heading."),
    ]
    server.add(JSONReply(completion("Done.")))
    async with provider_for(server) as provider:
        await provider.complete(conversation, [])
    messages = server.requests[0].json["messages"]
    assert messages[0] == {"role": "system", "content": "You are claw."}
    assert messages[1] == {"role": "user", "content": "What is in README.md?"}
    assert messages[2]["role"] == "assistant"
    assert messages[2]["content"] == "Let me look."
    (wire_call,) = messages[2]["tool_calls"]
    assert wire_call["id"] == "call_1"
    assert wire_call["type"] == "function"
    assert wire_call["function"]["name"] == "read"
    arguments = wire_call["function"]["arguments"]
    assert isinstance(arguments, str), "arguments travel as JSON text, not as an object"
    assert json.loads(arguments) == {"path": "README.md", "limit": 10}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "# claw"}
    assert messages[4]["content"] is None, "only tool calls: content must be null"
    assert json.loads(messages[4]["tool_calls"][0]["function"]["arguments"]) == {"pattern": "TODO"}
    assert messages[5] == {"role": "tool", "tool_call_id": "call_2", "content": "Error: bad regex"}
    assert messages[6] == {"role": "assistant", "content": "It is a heading."}
    assert len(messages) == 7


async def test_openrouter_sends_tools_as_functions_and_leaves_them_out_when_there_are_none(server):
    server.add(JSONReply(completion("with tools")), JSONReply(completion("without")))
    async with provider_for(server) as provider:
        await provider.complete(hello(), [READ, GREP])
        await provider.complete(hello(), [])
    assert server.requests[0].json["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file.",
                "parameters": READ.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "grep",
                "description": "Search files.",
                "parameters": GREP.parameters,
            },
        },
    ]
    assert "tools" not in server.requests[1].json


async def test_openrouter_asks_for_a_stream_with_usage_only_when_streaming(server):
    server.add(
        JSONReply(completion("whole")),
        stream_of(*text_chunks("streamed"), chunk(finish_reason="stop")),
    )
    async with provider_for(server) as provider:
        await provider.complete(hello(), [])
        await provider.stream_turn(hello(), [])
    whole, streamed = server.requests[0].json, server.requests[1].json
    assert "stream" not in whole or whole["stream"] is False
    assert "stream_options" not in whole
    assert streamed["stream"] is True
    assert streamed["stream_options"] == {"include_usage": True}


async def test_openrouter_sends_the_tools_with_a_streamed_request_too(server):
    server.add(stream_of(*text_chunks("streamed"), chunk(finish_reason="stop")))
    async with provider_for(server) as provider:
        await provider.stream_turn(hello(), [READ, GREP])
    tools = server.requests[0].json["tools"]
    assert [tool["function"]["name"] for tool in tools] == ["read", "grep"]


async def test_openrouter_sends_max_tokens_and_temperature_only_when_set(server):
    server.add(JSONReply(completion("defaults")), JSONReply(completion("tuned")))
    async with provider_for(server) as defaults:
        await defaults.complete(hello(), [])
    async with provider_for(server, max_tokens=256, temperature=0.0) as tuned:
        await tuned.complete(hello(), [])
    assert "max_tokens" not in server.requests[0].json
    assert "temperature" not in server.requests[0].json
    assert server.requests[1].json["max_tokens"] == 256
    assert server.requests[1].json["temperature"] == 0.0, "a temperature of 0 is still set"


# ---------------------------------------------------------------- whole completions


async def test_openrouter_reads_a_text_completion_with_usage_cached_tokens_cost_and_model(server):
    usage = usage_body(1200, 34, cached_tokens=1024, cost=0.00123)
    server.add(JSONReply(completion("Hello there!", usage=usage, model="openai/gpt-4o-mini")))
    async with provider_for(server) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "Hello there!"
    assert turn.tool_calls == ()
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.model == "openai/gpt-4o-mini"
    assert turn.usage == TokenUsage(
        input_tokens=1200, output_tokens=34, cached_input_tokens=1024, cost=Decimal("0.00123")
    )
    assert str(turn.usage.cost) == "0.00123", "the cost must be exact, not a binary float"


async def test_openrouter_reads_tool_calls_whose_arguments_arrive_as_json_text(server):
    calls = [
        tool_call("call_a", "read", {"path": "src/main.py"}),
        tool_call("call_b", "grep", '{"pattern": "def \\\\w+", "paths": ["a", "b"]}'),
        tool_call("call_c", "read", ""),
    ]
    server.add(JSONReply(completion(None, tool_calls=calls)))
    async with provider_for(server) as provider:
        turn = await provider.complete(hello(), [READ, GREP])
    assert turn.text == "", "content: null is an empty text"
    assert turn.stop_reason is StopReason.TOOL_USE
    assert turn.tool_calls == (
        ToolCall(id="call_a", name="read", arguments={"path": "src/main.py"}),
        ToolCall(id="call_b", name="grep", arguments={"pattern": "def \\w+", "paths": ["a", "b"]}),
        ToolCall(id="call_c", name="read", arguments={}),
    )


async def test_openrouter_calls_it_tool_use_when_a_server_says_stop_but_sends_tool_calls(server):
    calls = [tool_call("call_1", "read", {"path": "a.txt"})]
    server.add(JSONReply(completion("", tool_calls=calls, finish_reason="stop")))
    async with provider_for(server) as provider:
        turn = await provider.complete(hello(), [READ])
    assert turn.stop_reason is StopReason.TOOL_USE
    assert [call.name for call in turn.tool_calls] == ["read"]


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", StopReason.END_TURN),
        ("length", StopReason.MAX_TOKENS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("error", StopReason.ERROR),
    ],
)
async def test_openrouter_maps_each_finish_reason_to_a_stop_reason(
    server, finish_reason, stop_reason
):
    server.add(JSONReply(completion("Some text", finish_reason=finish_reason)))
    async with provider_for(server) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.stop_reason is stop_reason
    assert turn.text == "Some text"


async def test_openrouter_drops_tool_calls_cut_off_by_the_token_limit(server):
    truncated = [tool_call("call_1", "read", '{"path": "src/ma')]
    server.add(JSONReply(completion("Reading", tool_calls=truncated, finish_reason="length")))
    async with provider_for(server, max_tokens=8) as provider:
        turn = await provider.complete(hello(), [READ])
    assert turn.stop_reason is StopReason.MAX_TOKENS
    assert turn.tool_calls == ()
    assert turn.text == "Reading"


async def test_openrouter_raises_the_servers_error_from_a_200_body_with_an_error_object(server):
    server.add(JSONReply(error_body(502, "Upstream provider returned an error"), status=200))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(hello(), [])
    assert caught.value.status == 502
    assert caught.value.message == "Upstream provider returned an error"


async def test_openrouter_rejects_a_body_that_is_not_json_as_malformed(server):
    server.add(TextReply("Welcome to nginx!", content_type="text/html"))
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError, match="JSON"):
            await provider.complete(hello(), [])


async def test_openrouter_rejects_a_body_that_is_not_even_utf8_as_malformed(server):
    server.add(TextReply(b"\xff\xfe{\x00garbage", content_type="application/json"))
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError, match="JSON"):
            await provider.complete(hello(), [])


async def test_openrouter_rejects_tool_call_arguments_that_are_not_valid_json(server):
    broken = [tool_call("call_bad", "read", '{"path": "a.txt"')]
    server.add(JSONReply(completion(None, tool_calls=broken)))
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError, match="call_bad"):
            await provider.complete(hello(), [READ])


@pytest.mark.parametrize(
    "body",
    [
        [completion("a list, not an object")],
        {"id": "gen-1", "object": "chat.completion", "model": MODEL, "choices": []},
        completion("", finish_reason="tool_calls"),
    ],
    ids=["not-an-object", "no-choices", "tool-calls-finish-without-calls"],
)
async def test_openrouter_rejects_json_that_is_not_a_valid_completion(server, body):
    server.add(JSONReply(body))
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError):
            await provider.complete(hello(), [])


def test_openrouter_turn_from_wire_wants_a_message_in_the_first_choice():
    for body in ({"choices": [{"finish_reason": "stop"}]}, {"choices": ["not a choice"]}):
        with pytest.raises(MalformedResponseError):
            turn_from_wire(body)


# ---------------------------------------------------------------- streaming


async def test_openrouter_streams_events_and_skips_keep_alive_comments(server):
    server.add(
        stream_of(
            KEEP_ALIVE,
            KEEP_ALIVE,
            chunk("", role="assistant"),
            chunk("Hel"),
            KEEP_ALIVE,
            chunk("lo!"),
            chunk(finish_reason="stop"),
            chunk(usage=usage_body(9, 2, cost=0.0004), choices=False),
        )
    )
    async with provider_for(server) as provider:
        events = await events_of(provider)
    assert events == [
        TextDelta("Hel"),
        TextDelta("lo!"),
        Done(StopReason.END_TURN),
        UsageUpdate(TokenUsage(input_tokens=9, output_tokens=2, cost=Decimal("0.0004"))),
    ]


async def test_openrouter_stream_survives_chunks_split_mid_line_and_mid_character(server):
    text = "Grüße aus Köln ☕ — naïve 🎉"
    body = sse(
        KEEP_ALIVE,
        chunk(text[:13], role="assistant"),
        chunk(text[13:]),
        chunk(finish_reason="stop", usage=usage_body(7, 11)),
    )
    *pieces, last = split(body, 11)  # about 55 pieces
    assert any(not is_utf8(piece) for piece in pieces), "some piece must cut a character in two"
    reply = PacedReply()
    server.add(reply)
    watch = ReadWatch(timeout=60.0)
    async with watch.client, provider_for(server, client=watch.client) as provider:
        reading = asyncio.ensure_future(provider.stream_turn(hello(), []))
        for count, piece in enumerate(pieces, start=1):
            reply.send(piece)
            await watch.read(count, reading)  # each piece is read on its own
        reply.send(last)
        turn = await reading
    assert turn.text == text
    assert turn.stop_reason is StopReason.END_TURN
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (7, 11)


async def test_openrouter_stream_turn_takes_usage_from_the_usage_only_final_chunk(server):
    usage = usage_body(2048, 64, cached_tokens=1536, cost=0.0123)
    server.add(
        stream_of(
            *text_chunks("Cached answer."),
            chunk(finish_reason="stop"),
            KEEP_ALIVE,
            chunk(usage=usage, choices=False, model="anthropic/claude-sonnet-4.5"),
        )
    )
    async with provider_for(server) as provider:
        turn = await provider.stream_turn(hello(), [])
    assert turn.text == "Cached answer."
    assert turn.usage == TokenUsage(
        input_tokens=2048, output_tokens=64, cached_input_tokens=1536, cost=Decimal("0.0123")
    )


async def test_openrouter_stream_turn_assembles_parallel_tool_calls(server):
    server.add(
        stream_of(
            chunk("", role="assistant"),
            chunk("Looking."),
            chunk(tool_calls=[call_start(0, "call_r", "read")]),
            chunk(tool_calls=[call_start(1, "call_g", "grep")]),
            chunk(tool_calls=[call_delta(0, '{"pa'), call_delta(1, '{"pattern":')]),
            chunk(tool_calls=[call_delta(1, ' "TODO"}')]),
            chunk(tool_calls=[call_delta(0, 'th": "ü.md"}')]),
            chunk(finish_reason="tool_calls"),
            chunk(usage=usage_body(30, 20), choices=False),
        )
    )
    async with provider_for(server) as provider:
        turn = await provider.stream_turn(hello(), [READ, GREP])
    assert turn.text == "Looking."
    assert turn.stop_reason is StopReason.TOOL_USE
    assert turn.tool_calls == (
        ToolCall(id="call_r", name="read", arguments={"path": "ü.md"}),
        ToolCall(id="call_g", name="grep", arguments={"pattern": "TODO"}),
    )
    assert turn.usage.output_tokens == 20


async def test_openrouter_yields_events_as_they_arrive_not_after_the_whole_body(server):
    reply = PacedReply()
    server.add(reply)
    reply.send(sse(chunk("", role="assistant"), chunk("first"), done=False))
    async with provider_for(server) as provider:
        events = provider.stream(hello(), [])
        # The server holds the rest back until the first text has come out.
        first = await anext(events)
        reply.send(sse(chunk(" second"), done=False), sse(chunk(finish_reason="stop")))
        reply.end()
        rest = [event async for event in events]
    assert [first, *rest] == [TextDelta("first"), TextDelta(" second"), Done(StopReason.END_TURN)]


async def test_openrouter_raises_stream_error_for_an_error_in_the_middle_of_a_stream(server):
    server.add(
        stream_of(
            *text_chunks("Partial answer"),
            chunk(
                "",
                error={"code": 502, "message": "Provider disconnected unexpectedly"},
                finish_reason="error",
            ),
        )
    )
    received: list[StreamEvent] = []
    async with provider_for(server) as provider:
        with pytest.raises(StreamError, match="Provider disconnected unexpectedly"):
            async for event in provider.stream(hello(), []):
                received.append(event)
    assert "".join(e.text for e in received if isinstance(e, TextDelta)) == "Partial answer"
    assert len(server.requests) == 1, "a stream that has started must not be sent again"


async def test_openrouter_raises_stream_error_when_the_connection_drops_before_done(server):
    body = sse(*text_chunks("This answer is cut"), done=False)
    server.add(StreamReply(pieces=split(body, 40), cut_off=True))
    server.add(stream_of(*text_chunks("a second try"), chunk(finish_reason="stop")))
    async with provider_for(server) as provider:
        with pytest.raises(StreamError):
            await provider.stream_turn(hello(), [])
    assert len(server.requests) == 1, "a stream that has started must not be sent again"


async def test_openrouter_raises_stream_error_when_a_stream_ends_cleanly_without_done(server):
    body = sse(
        *text_chunks("Looks complete"),
        chunk(finish_reason="stop"),
        chunk(usage=usage_body(), choices=False),
        done=False,
    )
    server.add(StreamReply(pieces=[body]))
    async with provider_for(server) as provider:
        with pytest.raises(StreamError, match=r"\[DONE\]"):
            await events_of(provider)


# --8<-- [start:retry-before-start]
async def test_openrouter_retries_a_stream_only_before_it_starts(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(error_body(503, "No instances available"), status=503),
        TextReply("", status=429, headers={"Retry-After": "1"}),
        stream_of(KEEP_ALIVE, *text_chunks("Third time lucky"), chunk(finish_reason="stop")),
    )
    async with provider_for(server, sleep=sleep) as provider:
        turn = await provider.stream_turn(hello(), [])
    assert turn.text == "Third time lucky"
    assert len(server.requests) == 3
    assert all(request.json["stream"] is True for request in server.requests)
    assert len(sleep.delays) == 2
    assert sleep.delays[1] == 1.0


# --8<-- [end:retry-before-start]


# ---------------------------------------------------------------- error statuses


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (402, InsufficientCreditsError),
        (403, PermissionDeniedError),
        (408, RequestTimeoutError),
        (429, RateLimitError),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
    ],
)
async def test_openrouter_maps_error_statuses_to_typed_errors_with_the_servers_message(
    server, status, error_type
):
    message = f"the server says no ({status})"
    server.add(JSONReply(error_body(status, message, provider_name="Example"), status=status))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(error_type) as caught:
            await provider.complete(hello(), [])
    assert type(caught.value) is error_type
    assert caught.value.status == status
    assert caught.value.message == message
    assert message in str(caught.value)


async def test_openrouter_gives_a_clear_error_for_an_html_error_page(server):
    page = "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>"
    # Known for a page by its Content-Type alone: it does not start the way a page usually does.
    proxy = "<head><title>Proxy Error</title></head><body><p>No answer upstream.</p></body>"
    server.add(TextReply(page, status=502, content_type="text/html"))
    server.add(TextReply(proxy, status=502, content_type="text/html; charset=utf-8"))
    server.add(TextReply("", status=503))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ServerError) as html:
            await provider.complete(hello(), [])
        with pytest.raises(ServerError) as headless:
            await provider.complete(hello(), [])
        with pytest.raises(ServerError) as empty:
            await provider.complete(hello(), [])
    assert html.value.status == 502
    assert "502 Bad Gateway" in html.value.message
    assert headless.value.message == "Proxy Error: No answer upstream."
    assert empty.value.status == 503
    assert empty.value.message.strip(), "an empty error body still needs a message"


async def test_openrouter_an_html_error_page_becomes_its_status_and_a_few_redacted_words(server):
    page = (
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>"
        "<style>body { color: red }</style></head>\n"
        "<body><center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx/1.25.3</center>\n"
        f"<p>request: Authorization: Bearer {KEY}</p><script>track()</script></body></html>"
    )
    server.add(TextReply(page, status=502, content_type="text/html"))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.stream_turn(hello(), [])
    assert str(caught.value) == (
        "HTTP 502: 502 Bad Gateway: nginx/1.25.3 request: Authorization: Bearer [redacted]"
    )


async def test_openrouter_an_html_page_instead_of_a_stream_is_not_reported_as_a_cut_stream(
    server,
):
    portal = (
        "<html><head><title>Hotel Wi-Fi</title></head><body><h1>Hotel Wi-Fi</h1>"
        "<p>Accept the terms to go online.</p></body></html>"
    )
    server.add(
        TextReply(portal, content_type="text/html; charset=utf-8"),
        TextReply(portal, content_type="text/html; charset=utf-8"),
    )
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(MalformedResponseError) as streamed:
            await provider.stream_turn(hello(), [])
        with pytest.raises(MalformedResponseError) as whole:
            await provider.complete(hello(), [])
    assert str(streamed.value) == (
        f"{server.base_url} answered HTTP 200 with an HTML page, not an event stream (is a "
        "proxy or a login page in the way?): Hotel Wi-Fi: Accept the terms to go online."
    )
    assert "answered HTTP 200 with an HTML page, not JSON" in str(whole.value)


async def test_openrouter_an_error_page_that_is_not_utf8_is_still_a_typed_error(server):
    page = "<html><body>Erreur interne du serveur, réessayez</body></html>".encode("latin-1")
    server.add(TextReply(page, status=500, content_type="text/html"))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(hello(), [])
    assert "Erreur interne du serveur" in caught.value.message


async def test_openrouter_any_other_4xx_is_a_bad_request_and_the_status_beats_the_bodys_code(
    server,
):
    server.add(JSONReply(error_body(404, "No endpoints found for this model"), status=404))
    server.add(JSONReply(error_body(429, "the body's code is not the status"), status=400))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(BadRequestError) as missing:
            await provider.complete(hello(), [])
        with pytest.raises(BadRequestError) as bad:
            await provider.complete(hello(), [])
    assert (type(missing.value), missing.value.status) == (BadRequestError, 404)
    assert (type(bad.value), bad.value.status) == (BadRequestError, 400)


async def test_openrouter_an_error_object_under_200_without_an_integer_code_is_a_500(server):
    server.add(JSONReply({"error": {"message": "Internal error"}}, status=200))
    server.add(JSONReply({"error": {"message": "overloaded", "code": "overloaded"}}, status=200))
    async with provider_for(server, limits=no_retries()) as provider:
        for message in ("Internal error", "overloaded"):
            with pytest.raises(ServerError) as caught:
                await provider.complete(hello(), [])
            assert (caught.value.status, caught.value.message) == (500, message)


async def test_openrouter_an_error_body_of_another_shape_still_gives_the_servers_words(server):
    server.add(JSONReply("model is required", status=400))
    server.add(JSONReply({"detail": "Not Found: no such model"}, status=404))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(BadRequestError) as text:
            await provider.complete(hello(), [])
        with pytest.raises(BadRequestError) as detail:
            await provider.complete(hello(), [])
    assert "model is required" in text.value.message
    assert "Not Found: no such model" in detail.value.message


async def test_openrouter_raises_a_connection_error_when_nothing_listens():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = FakeSleep()
    base_url = f"http://127.0.0.1:{port}/v1"
    async with OpenRouterProvider(
        MODEL,
        base_url=base_url,
        api_key=KEY,
        sleep=sleep,
        limits=HTTPLimits(retry=RetryPolicy(max_retries=1)),
    ) as provider:
        with pytest.raises(ProviderConnectionError) as caught:
            await provider.complete(hello(), [])
    assert base_url in str(caught.value)
    assert len(sleep.delays) == 1, "a refused connection is worth one retry here"


# ---------------------------------------------------------------- retries


async def test_openrouter_retries_a_429_after_exactly_the_retry_after_seconds(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(
            error_body(429, "Rate limit exceeded: free-models-per-min"),
            status=429,
            headers={"Retry-After": "2"},
        ),
        JSONReply(completion("after the wait")),
    )
    async with provider_for(server, sleep=sleep) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "after the wait"
    assert sleep.delays == [2.0]
    assert len(server.requests) == 2
    assert server.requests[0].json == server.requests[1].json


@pytest.mark.parametrize(
    ("header", "expected"),
    [("1.5", 1.5), ("0", 0.0), ("-3", 0.0)],
)
async def test_openrouter_reads_retry_after_as_a_number_of_seconds(server, header, expected):
    sleep = FakeSleep()
    server.add(
        JSONReply(error_body(429, "slow down"), status=429, headers={"Retry-After": header}),
        JSONReply(completion("ok")),
    )
    async with provider_for(server, sleep=sleep) as provider:
        await provider.complete(hello(), [])
    assert sleep.delays == [expected]


async def test_openrouter_falls_back_to_backoff_for_a_retry_after_it_cannot_read(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(error_body(429, "slow down"), status=429, headers={"Retry-After": "soon"}),
        JSONReply(completion("ok")),
    )
    policy = RetryPolicy(max_retries=1, base_delay=0.5)
    async with provider_for(server, sleep=sleep, limits=HTTPLimits(retry=policy)) as provider:
        await provider.complete(hello(), [])
    (delay,) = sleep.delays
    assert 0.25 <= delay <= 0.5


async def test_openrouter_honours_retry_after_given_as_an_http_date(server):
    sleep = FakeSleep()
    when = email.utils.formatdate(time.time() + 50, usegmt=True)
    server.add(
        JSONReply(error_body(429, "slow down"), status=429, headers={"Retry-After": when}),
        JSONReply(completion("ok")),
    )
    async with provider_for(server, sleep=sleep) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "ok"
    (delay,) = sleep.delays
    # 50 s less the time the test has taken so far (the date counts whole seconds), and a
    # test runs for less than its 10-s limit: the date was read, not a backoff computed.
    assert 30.0 <= delay <= 50.0


async def test_openrouter_does_not_retry_when_retry_after_exceeds_the_limit(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(error_body(429, "daily limit"), status=429, headers={"Retry-After": "3600"}),
        JSONReply(completion("should not be fetched")),
    )
    policy = RetryPolicy(max_retries=3, max_retry_after=60.0)
    async with provider_for(server, sleep=sleep, limits=HTTPLimits(retry=policy)) as provider:
        with pytest.raises(RateLimitError) as caught:
            await provider.complete(hello(), [])
    assert caught.value.retry_after == 3600.0
    assert caught.value.message == "daily limit"
    assert sleep.delays == []
    assert len(server.requests) == 1


def test_openrouter_retry_policy_honours_a_retry_after_up_to_the_limit_exactly():
    policy = RetryPolicy(max_retries=3, max_retry_after=60.0)
    assert policy.delay(0, 60.0, random.Random(0)) == 60.0
    assert policy.delay(0, 60.5, random.Random(0)) is None


def test_openrouter_retry_policy_spreads_backoff_over_all_of_half_to_whole():
    policy = RetryPolicy(max_retries=1, base_delay=1.0)
    rng = random.Random(3)
    waits = [policy.delay(0, None, rng) for _ in range(200)]
    assert all(wait is not None and 0.5 <= wait <= 1.0 for wait in waits)
    assert min(waits) < 0.55 and max(waits) > 0.95, "waits cover the range from b/2 to b"


@pytest.mark.parametrize("status", [408, 500, 502, 503, 504])
async def test_openrouter_retries_timeouts_and_server_errors_with_growing_jittered_backoff(
    server, status
):
    sleep = FakeSleep()
    for attempt in range(3):
        server.add(JSONReply(error_body(status, f"failure {attempt}"), status=status))
    server.add(JSONReply(completion("finally")))
    policy = RetryPolicy(max_retries=3, base_delay=0.5, max_delay=20.0)
    async with provider_for(
        server, sleep=sleep, limits=HTTPLimits(retry=policy), rng=random.Random(7)
    ) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "finally"
    assert len(server.requests) == 4
    assert len(sleep.delays) == 3
    for attempt, delay in enumerate(sleep.delays):
        backoff = 0.5 * 2**attempt
        assert backoff / 2 <= delay <= backoff, f"retry {attempt} waited {delay}"
    assert sleep.delays[0] < sleep.delays[1] < sleep.delays[2]


async def test_openrouter_jitters_backoff_with_the_injected_random_generator(server):
    delays = []
    for seed in (1, 2):
        sleep = FakeSleep()
        server.add(JSONReply(error_body(500, "boom"), status=500), JSONReply(completion("ok")))
        policy = RetryPolicy(max_retries=1, base_delay=1.0)
        async with provider_for(
            server, sleep=sleep, limits=HTTPLimits(retry=policy), rng=random.Random(seed)
        ) as p:
            await p.complete(hello(), [])
        delays.append(sleep.delays[0])
    assert delays[0] != delays[1], "the wait must be random, not always the same"
    assert all(0.5 <= delay <= 1.0 for delay in delays)


async def test_openrouter_never_waits_longer_than_max_delay(server):
    sleep = FakeSleep()
    for _ in range(4):
        server.add(JSONReply(error_body(503, "overloaded"), status=503))
    server.add(JSONReply(completion("ok")))
    policy = RetryPolicy(max_retries=4, base_delay=1.0, max_delay=1.5)
    async with provider_for(server, sleep=sleep, limits=HTTPLimits(retry=policy)) as provider:
        await provider.complete(hello(), [])
    assert len(sleep.delays) == 4
    assert all(delay <= 1.5 for delay in sleep.delays)
    assert all(delay >= 0.75 for delay in sleep.delays[1:])


async def test_openrouter_retries_dropped_connections(server):
    sleep = FakeSleep()
    server.add(DropReply(), DropReply(), JSONReply(completion("third connection works")))
    async with provider_for(server, sleep=sleep) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "third connection works"
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2


async def test_openrouter_retries_a_connection_that_drops_while_an_error_is_read(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(
            error_body(503, "overloaded, and then the server fell over"), status=503, cut_off=True
        ),
        JSONReply(completion("the retry got through")),
    )
    async with provider_for(server, sleep=sleep) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "the retry got through"
    assert len(server.requests) == 2
    assert len(sleep.delays) == 1


async def test_openrouter_reports_a_body_cut_off_mid_answer_as_a_connection_error(server):
    server.add(JSONReply(completion("a whole answer that never fully arrives"), cut_off=True))
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ProviderConnectionError, match="mid-response"):
            await provider.complete(hello(), [])


async def test_openrouter_gives_up_after_max_retries_with_the_last_error(server):
    sleep = FakeSleep()
    server.add(
        JSONReply(error_body(500, "first failure"), status=500),
        JSONReply(error_body(502, "second failure"), status=502),
        JSONReply(error_body(503, "last failure"), status=503),
        JSONReply(completion("never reached")),
    )
    async with provider_for(
        server, sleep=sleep, limits=HTTPLimits(retry=RetryPolicy(max_retries=2))
    ) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(hello(), [])
    assert (caught.value.status, caught.value.message) == (503, "last failure")
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2
    assert server.remaining == 1


async def test_openrouter_gives_up_on_connections_that_keep_dropping(server):
    sleep = FakeSleep()
    server.add(DropReply(), DropReply())
    async with provider_for(
        server, sleep=sleep, limits=HTTPLimits(retry=RetryPolicy(max_retries=1))
    ) as provider:
        with pytest.raises(ProviderConnectionError):
            await provider.complete(hello(), [])
    assert len(server.requests) == 2
    assert len(sleep.delays) == 1


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (402, InsufficientCreditsError),
        (403, PermissionDeniedError),
    ],
)
async def test_openrouter_never_retries_a_request_that_would_fail_the_same_way(
    server, status, error_type
):
    sleep = FakeSleep()
    refusal = JSONReply(error_body(status, "no"), status=status, headers={"Retry-After": "1"})
    server.add(
        refusal,
        JSONReply(error_body(status, "no"), status=status, headers={"Retry-After": "1"}),
        JSONReply(completion("a retry would have got this")),
    )
    async with provider_for(
        server, sleep=sleep, limits=HTTPLimits(retry=RetryPolicy(max_retries=3))
    ) as provider:
        with pytest.raises(error_type):
            await provider.complete(hello(), [])
        with pytest.raises(error_type):
            await provider.stream_turn(hello(), [])
    assert len(server.requests) == 2, "one request each for complete and stream, no retries"
    assert sleep.delays == []


# ---------------------------------------------------------------- the key and the URL


async def test_openrouter_reads_the_key_from_the_environment_and_requires_one(server, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-from-the-environment")
    server.add(JSONReply(completion("ok")))
    async with OpenRouterProvider(MODEL, base_url=server.base_url) as provider:
        await provider.complete(hello(), [])
    assert server.requests[0].headers["authorization"] == "Bearer sk-or-v1-from-the-environment"
    monkeypatch.delenv("OPENROUTER_API_KEY")
    with pytest.raises(AuthenticationError, match="OPENROUTER_API_KEY"):
        OpenRouterProvider(MODEL)


async def test_openrouter_never_reveals_the_key_in_repr_or_errors(server):
    server.add(
        JSONReply(error_body(401, f"Invalid API key: {KEY}"), status=401),
        TextReply(f"<html>key {KEY} rejected</html>", status=403, content_type="text/html"),
    )
    async with provider_for(server) as provider:
        with pytest.raises(AuthenticationError) as unauthorised:
            await provider.complete(hello(), [])
        with pytest.raises(PermissionDeniedError) as forbidden:
            await provider.stream_turn(hello(), [])
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    for error in (unauthorised.value, forbidden.value):
        assert KEY not in str(error)
        assert KEY not in error.message
        assert KEY not in repr(error)
    assert "Invalid API key" in unauthorised.value.message
    assert KEY not in repr(provider)
    assert KEY not in str(provider)
    assert MODEL in repr(provider)


async def test_openrouter_never_reveals_the_key_in_malformed_answers_it_quotes(server):
    server.add(
        TextReply(f"proxy says: bad key {KEY}", status=200),
        StreamReply(pieces=[f"data: echo {KEY}\n\n".encode()]),
    )
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(MalformedResponseError) as whole:
            await provider.complete(hello(), [])
        with pytest.raises(MalformedResponseError) as streamed:
            await provider.stream_turn(hello(), [])
    for error in (whole.value, streamed.value):
        assert "bad key" in str(error) or "echo" in str(error)
        assert KEY not in str(error)
        assert "[redacted]" in str(error)


async def test_openrouter_sends_no_authorization_header_with_an_empty_key(server, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-must-not-leak-to-a-local-server")
    server.add(JSONReply(completion("local model says hi")))
    async with OpenRouterProvider("qwen3:8b", base_url=server.base_url, api_key="") as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "local model says hi"
    assert "authorization" not in server.requests[0].headers
    assert server.requests[0].json["model"] == "qwen3:8b"


async def test_openrouter_accepts_a_base_url_with_a_trailing_slash(server):
    server.add(
        JSONReply(completion("ok")), stream_of(*text_chunks("ok"), chunk(finish_reason="stop"))
    )
    async with OpenRouterProvider(MODEL, base_url=server.base_url + "/", api_key=KEY) as provider:
        await provider.complete(hello(), [])
        await provider.stream_turn(hello(), [])
    assert [request.path for request in server.requests] == ["/v1/chat/completions"] * 2


# ---------------------------------------------------------------- hostile servers
#
# A base_url can point at any server. These tests script servers that stall, never stop, send
# too much, garble their bodies or misbehave at the end of a stream. A time limit is tested by
# what happens when it passes: the test sets the scene (the server has the request, the provider
# has read what was sent and waits for more), then moves the clock past the limit by hand. Waits
# between retries go through FakeClock, which only pretends time passes.


class FakeClock:
    """A clock whose time moves only when ``sleep`` is awaited: retries cost no real time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.delays: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds


async def requests_reach(server: LoopbackServer, count: int, call: asyncio.Future[Any]) -> None:
    """Return once the server has received ``count`` requests, or ``call`` has ended early.

    Then one more turn of the loop lets the provider take the step it has pending: httpx starts
    its read timeout in the step after the one that wrote the end of the request.
    """
    while len(server.requests) < count and not call.done():
        await asyncio.sleep(0.001)
    await asyncio.sleep(0)


async def test_openrouter_names_a_timeout_waiting_for_headers_and_does_not_retry_it(server):
    clock = LoopClock.install()
    sleep = FakeSleep()
    server.add(StallReply(), JSONReply(completion("a retry would have got this")))
    async with provider_for(
        server, limits=HTTPLimits(timeout=30.0), sleep=sleep, clock=clock.time
    ) as provider:
        call = asyncio.ensure_future(provider.complete(hello(), []))
        await requests_reach(server, 1, call)
        await clock.advance(31.0)
        with pytest.raises(ProviderTimeoutError) as caught:
            await call
    assert caught.value.setting == "timeout"
    assert caught.value.seconds == 30.0
    assert "response headers" in str(caught.value)
    assert "30 s" in str(caught.value)
    assert "cannot reach" not in str(caught.value), "the server was reached"
    assert len(server.requests) == 1, "the server may be working on it: not sent again"
    assert sleep.delays == []


async def test_openrouter_idle_limit_counts_only_events_that_carry_data(server):
    clock = LoopClock.install()
    reply = PacedReply()
    server.add(reply)
    reply.send(sse(chunk("", role="assistant"), chunk("Hel"), done=False))
    watch = ReadWatch(timeout=3600.0)
    received: list[StreamEvent] = []
    async with (
        watch.client,
        provider_for(
            server, client=watch.client, limits=HTTPLimits(idle_timeout=250.0), clock=clock.time
        ) as provider,
    ):

        async def read_the_stream() -> None:
            async for event in provider.stream(hello(), []):
                received.append(event)

        streaming = asyncio.ensure_future(read_the_stream())
        await watch.read(1, streaming)
        assert received == [TextDelta("Hel")]
        for pieces in (2, 3):  # a keep-alive comment every 100 s
            await clock.advance(100.0)
            reply.send(KEEP_ALIVE.encode())
            await watch.read(pieces, streaming)
        await clock.advance(100.0)  # 300 s since "Hel", with only comments: past the idle limit
        reply.send(KEEP_ALIVE.encode())
        # The stream ends before it reads this comment; one that read it kept a stuck stream alive.
        with pytest.raises(ProviderTimeoutError) as caught:
            await watch.read(4, streaming)
    assert received == [TextDelta("Hel")]
    assert caught.value.setting == "idle_timeout"
    assert "idle_timeout" in str(caught.value)
    assert "keep-alive" in str(caught.value)
    assert len(server.requests) == 1


async def test_openrouter_idle_limit_starts_again_with_each_event_that_carries_data(server):
    clock = LoopClock.install()
    reply = PacedReply()
    server.add(reply)
    reply.send(sse(chunk("", role="assistant"), chunk("a"), done=False))
    rest = [(KEEP_ALIVE + sse(chunk(word), done=False).decode()).encode() for word in "bcde"]
    rest.append(sse(chunk(finish_reason="stop")))
    texts: list[str] = []
    async with provider_for(
        server, limits=HTTPLimits(idle_timeout=150.0), clock=clock.time
    ) as provider:
        async for event in provider.stream(hello(), []):
            if isinstance(event, TextDelta):
                texts.append(event.text)
                await clock.advance(100.0)  # 500 s in all, but never 150 s without data
                reply.send(rest.pop(0))
    assert "".join(texts) == "abcde"


async def test_openrouter_deadline_ends_a_stream_that_never_stops_sending_data(server):
    clock = LoopClock.install()
    reply = PacedReply()
    server.add(reply)
    reply.send(sse(chunk("", role="assistant"), chunk("more "), done=False))
    received: list[StreamEvent] = []
    async with provider_for(
        server, limits=HTTPLimits(deadline=450.0), clock=clock.time
    ) as provider:
        with pytest.raises(ProviderTimeoutError) as caught:
            async for event in provider.stream(hello(), []):
                received.append(event)
                await clock.advance(60.0)  # a word a minute: never idle, and never ending
                reply.send(sse(chunk("more "), done=False))
    assert len(received) == 8, "the words of the first 420 s are passed on, none after 480 s"
    assert caught.value.setting == "deadline"
    assert "deadline" in str(caught.value)
    assert "450 s" in str(caught.value)


async def test_openrouter_deadline_bounds_a_whole_answer_and_a_stream_that_never_start(server):
    clock = LoopClock.install()
    server.add(StallReply(), StallReply(b"HTTP/1.1 200 OK\r\n"))
    errors: list[ProviderTimeoutError] = []
    # httpx's read timeout is an hour: only the deadline can end these calls.
    async with provider_for(
        server, limits=HTTPLimits(deadline=30.0, timeout=3600.0), clock=clock.time
    ) as provider:
        for count, call in enumerate((provider.complete, provider.stream_turn), start=1):
            running = asyncio.ensure_future(call(hello(), []))
            await requests_reach(server, count, running)
            await clock.advance(31.0)
            with pytest.raises(ProviderTimeoutError) as caught:
                await running
            errors.append(caught.value)
    for error in errors:
        assert error.setting == "deadline"
        assert error.seconds == 30.0
    assert len(server.requests) == 2, "a time-out is not retried"


async def test_openrouter_names_a_read_timeout_in_the_middle_of_a_stream(server):
    clock = LoopClock.install()
    reply = PacedReply()  # the start of a turn, then silence
    server.add(reply)
    reply.send(sse(chunk("", role="assistant"), chunk("Hel"), done=False))
    async with provider_for(server, limits=HTTPLimits(timeout=30.0), clock=clock.time) as provider:
        events = provider.stream(hello(), [])
        assert await anext(events) == TextDelta("Hel")
        rest = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0)  # the provider asks for the next piece, and waits
        await clock.advance(31.0)
        with pytest.raises(ProviderTimeoutError) as caught:
            await rest
    assert caught.value.setting == "timeout"
    assert "30 s" in str(caught.value)


async def test_openrouter_deadline_stops_retries_whose_wait_would_pass_it(server):
    clock = FakeClock()
    server.add(
        JSONReply(error_body(503, "overloaded"), status=503),
        JSONReply(error_body(503, "still overloaded"), status=503),
        JSONReply(error_body(429, "slow down"), status=429, headers={"Retry-After": "30"}),
        JSONReply(completion("never fetched")),
    )
    policy = RetryPolicy(max_retries=5, base_delay=4.0, max_delay=100.0)
    async with provider_for(
        server, limits=HTTPLimits(retry=policy, deadline=5.0), clock=clock, sleep=clock.sleep
    ) as provider:
        with pytest.raises(ServerError) as overloaded:
            await provider.complete(hello(), [])
        with pytest.raises(RateLimitError) as limited:
            await provider.complete(hello(), [])
    assert overloaded.value.message == "still overloaded", "the first wait fitted, the second not"
    assert len(clock.delays) == 1 and 2.0 <= clock.delays[0] <= 4.0
    assert limited.value.retry_after == 30.0, "30 s of Retry-After do not fit in 5 s"
    assert len(server.requests) == 3
    for error in (overloaded.value, limited.value):
        assert any("deadline" in note for note in getattr(error, "__notes__", ()))


async def test_openrouter_refuses_a_body_larger_than_max_body_bytes_without_reading_it_all(server):
    huge = EndlessReply(
        head=b'{"choices": [{"message": {"content": "',
        piece=b"a" * 65536,
        size=256 * 2**20,
        content_type="application/json",
    )
    server.add(huge)
    async with provider_for(server, limits=HTTPLimits(max_body_bytes=2**20)) as provider:
        with pytest.raises(ResponseTooLargeError) as caught:
            await provider.complete(hello(), [])
    assert caught.value.limit == 2**20
    assert "max_body_bytes" in str(caught.value)
    assert caught.value.setting in str(caught.value)
    assert huge.finished.wait(30.0)
    assert huge.sent < 64 * 2**20, f"the client went on reading: {huge.sent} bytes sent"


async def test_openrouter_reads_only_the_start_of_a_huge_error_body(server):
    huge = EndlessReply(
        status=502,
        head=b"<html><title>502 Bad Gateway</title>",
        piece=b"x" * 65536,
        size=256 * 2**20,
        content_type="text/html",
    )
    server.add(huge)
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(ServerError) as caught:
            await provider.complete(hello(), [])
    assert caught.value.status == 502
    assert "502 Bad Gateway" in caught.value.message
    assert len(caught.value.message) <= 500
    assert huge.finished.wait(30.0)
    assert huge.sent < 64 * 2**20, f"the client went on reading: {huge.sent} bytes sent"


async def test_openrouter_refuses_a_stream_event_larger_than_max_event_chars(server):
    many = [chunk("x" * 10_000) for _ in range(20)]  # 200,000 characters, 10,000 an event
    server.add(
        StreamReply(pieces=split(sse(*many, chunk(finish_reason="stop")), 16384)),
        StreamReply(pieces=split(sse(chunk("x" * 200_000)), 16384)),
    )
    async with provider_for(server, limits=HTTPLimits(max_event_chars=65536)) as provider:
        turn = await provider.stream_turn(hello(), [])
        with pytest.raises(ResponseTooLargeError) as caught:
            await provider.stream_turn(hello(), [])
    assert len(turn.text) == 200_000, "the cap is per event, not per stream"
    assert caught.value.setting == "max_event_chars"
    assert "max_event_chars" in str(caught.value)


@pytest.mark.parametrize("finish", ["left out", "null"])
async def test_openrouter_a_body_without_finish_reason_ends_the_turn(server, finish):
    text_only = completion("Hello from a local server")
    with_calls = completion(None, tool_calls=[tool_call("call_1", "read", {"path": "a"})])
    for body in (text_only, with_calls):
        if finish == "null":
            body["choices"][0]["finish_reason"] = None
        else:
            del body["choices"][0]["finish_reason"]
        server.add(JSONReply(body))
    async with provider_for(server) as provider:
        text = await provider.complete(hello(), [])
        calls = await provider.complete(hello(), [READ])
    assert (text.text, text.stop_reason) == ("Hello from a local server", StopReason.END_TURN)
    assert calls.stop_reason is StopReason.TOOL_USE
    assert [call.id for call in calls.tool_calls] == ["call_1"]


async def test_openrouter_a_stream_with_done_but_no_finish_reason_ends_the_turn(server):
    usage = chunk(usage=usage_body(5, 2), choices=False)
    server.add(stream_of(*text_chunks("No reason given"), usage))
    server.add(stream_of(*text_chunks("No reason given"), usage))
    async with provider_for(server) as provider:
        events = await events_of(provider)
        turn = await provider.stream_turn(hello(), [])
    assert events[-1] == Done(StopReason.END_TURN), "[DONE] with no finish_reason: the turn ended"
    assert sum(isinstance(event, Done) for event in events) == 1
    assert (turn.text, turn.stop_reason) == ("No reason given", StopReason.END_TURN)
    assert turn.usage.output_tokens == 2


async def test_openrouter_a_stream_with_a_finish_reason_gets_no_second_done(server):
    server.add(stream_of(*text_chunks("Cut short"), chunk(finish_reason="length")))
    async with provider_for(server) as provider:
        events = await events_of(provider)
    assert [event for event in events if isinstance(event, Done)] == [Done(StopReason.MAX_TOKENS)]


@pytest.mark.parametrize("ending", [b"data: [DONE]", b"data: [DONE]\n", b"data: [DONE]\r\n"])
async def test_openrouter_accepts_a_final_done_without_the_blank_line_after_it(server, ending):
    body = sse(*text_chunks("Complete"), chunk(finish_reason="stop"), done=False)
    server.add(StreamReply(pieces=[body + ending]))
    async with provider_for(server) as provider:
        turn = await provider.stream_turn(hello(), [])
    assert (turn.text, turn.stop_reason) == ("Complete", StopReason.END_TURN)


async def test_openrouter_a_final_done_without_its_blank_line_gives_exactly_one_done(server):
    for finish in ([], [chunk(finish_reason="length")]):
        body = sse(*text_chunks("Said"), *finish, done=False)
        server.add(StreamReply(pieces=[body + b"data: [DONE]"]))
    async with provider_for(server) as provider:
        unexplained = await events_of(provider)
        cut_off = await events_of(provider)
    assert [e for e in unexplained if isinstance(e, Done)] == [Done(StopReason.END_TURN)]
    assert [e for e in cut_off if isinstance(e, Done)] == [Done(StopReason.MAX_TOKENS)]


async def test_openrouter_says_a_stream_ended_in_the_middle_of_an_event(server):
    body = sse(*text_chunks("Cut"), done=False) + b'data: {"choices": [{"delta": {"content": "of'
    server.add(StreamReply(pieces=[body]))
    async with provider_for(server) as provider:
        with pytest.raises(StreamError, match="middle of an event") as caught:
            await provider.stream_turn(hello(), [])
    assert "[DONE]" in str(caught.value)


async def test_openrouter_strips_whitespace_around_the_key_and_refuses_a_key_it_cannot_send(
    server,
):
    server.add(JSONReply(completion("ok")))
    async with provider_for(server, api_key=f"  {KEY}\n") as provider:
        await provider.complete(hello(), [])
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    for bad in (f"{KEY[:10]}\n{KEY[10:]}", f"{KEY[:10]} {KEY[10:]}", KEY + "é", KEY + "\x7f"):
        with pytest.raises(AuthenticationError) as caught:
            provider_for(server, api_key=bad)
        assert KEY[10:] not in str(caught.value)
        assert "API key" in str(caught.value)
    with pytest.raises(ValueError, match="app_title"):
        provider_for(server, app_title="claw \N{EM DASH} tests")
    assert len(server.requests) == 1, "a key that cannot be sent is refused before any request"


async def test_openrouter_never_reveals_the_key_in_connection_errors():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1/{KEY}"  # a gateway that takes the key in its path
    async with OpenRouterProvider(
        MODEL, base_url=base_url, api_key=KEY, limits=HTTPLimits(retry=RetryPolicy(max_retries=0))
    ) as provider:
        with pytest.raises(ProviderConnectionError) as caught:
            await provider.complete(hello(), [])
    assert KEY not in str(caught.value)
    assert "[redacted]" in str(caught.value)
    assert f"127.0.0.1:{port}" in str(caught.value)


async def test_openrouter_reports_a_garbled_gzip_body_as_malformed(server):
    gzip = {"Content-Encoding": "gzip"}
    server.add(
        TextReply(b"this is not gzip", content_type="application/json", headers=gzip),
        StreamReply(pieces=[b"neither is this"], headers=gzip),
        TextReply(b"nor this", status=503, headers=gzip),
    )
    async with provider_for(server, limits=no_retries()) as provider:
        with pytest.raises(MalformedResponseError, match="gzip") as whole:
            await provider.complete(hello(), [])
        with pytest.raises(MalformedResponseError, match="gzip"):
            await provider.stream_turn(hello(), [])
        with pytest.raises(ServerError) as failed:
            await provider.complete(hello(), [])
    assert "Content-Encoding" in str(whole.value)
    assert failed.value.status == 503
    assert failed.value.message.strip(), "a garbled error body still gives a message"


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"message": "just text"}]},
        {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": [1]},
        completion("hi", usage={"prompt_tokens": "many"}),
        completion("hi", usage={"cost": "a lot"}),
        completion(None, tool_calls=[{"id": "call_1", "function": "read"}]),
    ],
    ids=["message-not-an-object", "usage-a-list", "tokens-as-text", "cost-as-text", "bad-call"],
)
async def test_openrouter_reports_json_of_the_wrong_shape_as_malformed(server, body):
    chunk_body = {"choices": [{"delta": body["choices"][0]["message"]}], "usage": body.get("usage")}
    server.add(JSONReply(body), stream_of(chunk_body, chunk(finish_reason="stop")))
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError):
            await provider.complete(hello(), [READ])
        with pytest.raises(MalformedResponseError):
            await provider.stream_turn(hello(), [READ])


async def test_openrouter_reports_stream_events_that_are_not_chunks_as_malformed(server):
    events = ("42", '"text"', '{"choices": [1]}', '{"choices": {"delta": 1}}')
    for event in events:
        server.add(StreamReply(pieces=[f"data: {event}\n\ndata: [DONE]\n\n".encode()]))
    async with provider_for(server) as provider:
        for event in events:
            with pytest.raises(MalformedResponseError) as caught:
                await provider.stream_turn(hello(), [])
            assert event in str(caught.value), "the error quotes the event"


async def test_openrouter_reports_duplicate_tool_call_ids_as_malformed(server):
    twice = [tool_call("call_1", "read", {"path": "a"}), tool_call("call_1", "read", {"path": "b"})]
    server.add(
        JSONReply(completion(None, tool_calls=twice)),
        stream_of(
            chunk(tool_calls=[call_start(0, "call_1", "read"), call_delta(0, "{}")]),
            chunk(tool_calls=[call_start(1, "call_1", "grep"), call_delta(1, "{}")]),
            chunk(finish_reason="tool_calls"),
        ),
    )
    async with provider_for(server) as provider:
        with pytest.raises(MalformedResponseError, match="call_1"):
            await provider.complete(hello(), [READ])
        with pytest.raises(MalformedResponseError, match="call_1"):
            await provider.stream_turn(hello(), [READ, GREP])


# ---------------------------------------------------------------- live (opt-in)

LIVE = bool(os.environ.get("OPENROUTER_API_KEY")) and os.environ.get("CLAW_LIVE") == "1"


@pytest.mark.allow_network
@pytest.mark.skipif(not LIVE, reason="live test: set OPENROUTER_API_KEY and CLAW_LIVE=1")
async def test_openrouter_live_streams_a_one_word_answer_with_usage():
    model = os.environ.get("CLAW_LIVE_MODEL", "openai/gpt-4o-mini")
    conversation = [
        SystemMessage(content="Answer with exactly one word, nothing else."),
        UserMessage(content="What colour is the sky on a clear day?"),
    ]
    async with OpenRouterProvider(
        model, max_tokens=16, temperature=0.0, app_title="Clawbook live test"
    ) as provider:
        events = [event async for event in provider.stream(conversation, [])]
    text = "".join(event.text for event in events if isinstance(event, TextDelta))
    usages = [event.usage for event in events if isinstance(event, UsageUpdate)]
    assert text.strip(), "the model answered nothing"
    assert len(text.split()) <= 3, f"not one word: {text!r}"
    assert "blue" in text.lower()
    assert any(isinstance(event, Done) for event in events)
    assert not any(isinstance(event, ToolCallStart | ToolCallDelta) for event in events)
    assert usages, "no usage arrived"
    assert usages[-1].input_tokens > 0
    assert usages[-1].output_tokens > 0


# ---------------------------------------------------------------- content parts, caching, reasoning


async def sent_messages(server: LoopbackServer, conversation: list[Any]) -> list[dict[str, Any]]:
    """The ``messages`` of the request that sending ``conversation`` makes."""
    server.add(JSONReply(completion("ok")))
    async with provider_for(server) as provider:
        await provider.complete(conversation, [])
    return server.requests[-1].json["messages"]


async def test_openrouter_sends_a_string_as_a_string_and_parts_as_text_parts(server):
    messages = await sent_messages(
        server,
        [
            Message.system("You are claw."),
            Message.user([TextPart(text="Read "), TextPart(text="notes.txt.")]),
            Message.assistant([TextPart(text="Reading.")]),
        ],
    )
    assert messages[0] == {"role": "system", "content": "You are claw."}
    assert messages[1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Read "}, {"type": "text", "text": "notes.txt."}],
    }
    assert messages[2] == {"role": "assistant", "content": [{"type": "text", "text": "Reading."}]}


async def test_openrouter_sends_a_cache_breakpoint_on_the_last_text_part(server):
    messages = await sent_messages(
        server,
        [
            Message.system("You are claw.", cache_control=CacheControl()),
            Message.developer(
                [TextPart(text="Use pytest. "), TextPart(text="Never push.")],
                cache_control=CacheControl(ttl="1h"),
            ),
            Message.user("Fix the test."),
            Message.assistant("On it.", cache_control=CacheControl()),
        ],
    )
    ephemeral = {"type": "ephemeral"}
    assert messages[0]["content"] == [
        {"type": "text", "text": "You are claw.", "cache_control": ephemeral}
    ]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Use pytest. "},
        {
            "type": "text",
            "text": "Never push.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
    ]
    assert messages[2] == {"role": "user", "content": "Fix the test."}
    assert messages[3]["content"] == [
        {"type": "text", "text": "On it.", "cache_control": ephemeral}
    ]


async def test_openrouter_sends_a_developer_message_as_a_system_message_for_now(server):
    messages = await sent_messages(server, [Message.developer("Use pytest."), Message.user("hi")])
    assert messages[0] == {"role": "system", "content": "Use pytest."}


async def test_openrouter_sends_the_reasoning_back_under_both_names(server):
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.py"})
    messages = await sent_messages(
        server,
        [
            Message.user("What does a.py do?"),
            Message.assistant(tool_calls=[call], reasoning_content="I should read a.py first."),
            Message.tool_result("call_1", "print('hi')"),
            Message.assistant("It prints hi."),
        ],
    )
    thinking = messages[1]
    assert thinking["reasoning"] == "I should read a.py first."
    assert thinking["reasoning_content"] == "I should read a.py first."
    assert thinking["content"] is None and thinking["tool_calls"][0]["id"] == "call_1"
    assert "reasoning" not in messages[3] and "reasoning_content" not in messages[3]


@pytest.mark.parametrize("name", ["reasoning", "reasoning_content"])
async def test_openrouter_reads_a_whole_answers_reasoning_apart_from_its_text(server, name):
    body = completion(
        "It is 42.",
        usage={
            **usage_body(30, 120, cached_tokens=24),
            "completion_tokens_details": {"reasoning_tokens": 100},
        },
    )
    body["choices"][0]["message"][name] = "6 times 7 is 42."
    server.add(JSONReply(body))
    async with provider_for(server) as provider:
        turn = await provider.complete(hello(), [])
    assert turn.text == "It is 42."
    assert turn.reasoning == "6 times 7 is 42."
    assert (turn.usage.cached_input_tokens, turn.usage.reasoning_tokens) == (24, 100)


async def test_openrouter_streams_reasoning_as_its_own_events_never_as_text(server):
    thinking = []
    for text in ["The user ", "wants 6 \u00d7 7; ", "that is 42."]:
        piece = chunk()
        piece["choices"][0]["delta"]["reasoning"] = text
        thinking.append(piece)
    server.add(
        stream_of(
            KEEP_ALIVE,
            *thinking,
            *text_chunks("It is 42."),
            chunk(finish_reason="stop"),
            chunk(
                choices=False,
                usage={**usage_body(9, 40), "completion_tokens_details": {"reasoning_tokens": 31}},
            ),
        )
    )
    async with provider_for(server) as provider:
        events = await events_of(provider)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert (reasoning, text) == ("The user wants 6 \u00d7 7; that is 42.", "It is 42.")
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(not isinstance(e, ReasoningDelta) for e in events[first_text:])
    (usage,) = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert usage.reasoning_tokens == 31


async def test_openrouter_a_reasoning_tool_loop_sends_the_reasoning_back_next_time(server):
    first = [chunk(), chunk(tool_calls=[call_start(0, "call_1", "read")])]
    first[0]["choices"][0]["delta"]["reasoning_content"] = "Read a.py before answering."
    first.append(chunk(tool_calls=[call_delta(0, '{"path": "a.py"}')]))
    server.add(
        stream_of(*first, chunk(finish_reason="tool_calls")),
        stream_of(*text_chunks("It prints hi."), chunk(finish_reason="stop")),
    )
    history: list[Message] = [Message.user("What does a.py do?")]
    async with provider_for(server) as provider:
        turn = await provider.stream_turn(history, [READ])
        history += [turn.to_message(), Message.tool_result("call_1", "print('hi')")]
        await provider.stream_turn(history, [READ])
    assert turn.reasoning == "Read a.py before answering."
    resent = server.requests[1].json["messages"][1]
    assert resent["role"] == "assistant"
    assert resent["reasoning_content"] == "Read a.py before answering."
    assert resent["reasoning"] == "Read a.py before answering."
