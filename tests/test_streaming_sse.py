"""ch05a · Streaming: Server-Sent Events into chunks, chunks into events, events into a turn."""

import itertools
import json
import re
from decimal import Decimal
from typing import Any

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from claw.errors import MalformedResponseError, ResponseTooLargeError, StreamError
from claw.mock import MockProviderExhausted
from claw.streaming import (
    Done,
    MockStreamProvider,
    ReasoningDelta,
    ServerSentEvent,
    SSEDecoder,
    StreamAccumulator,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
    chunk_events,
    parse_sse_line,
    turn_events,
    usage_from_wire,
)
from claw.types import (
    AssistantTurn,
    StopReason,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    UserMessage,
)
from clawbook.harness.loopback import (
    call_delta,
    call_start,
    chunk,
    split,
    sse,
    text_chunks,
    usage_body,
)

READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")


def decode(*pieces: bytes) -> list[ServerSentEvent]:
    """Feed ``pieces`` to one decoder, in order; return every event they complete."""
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    return events


def accumulate(events: list[StreamEvent], model: str | None = None) -> AssistantTurn:
    accumulator = StreamAccumulator()
    for event in events:
        accumulator.add(event)
    return accumulator.turn(model)


# ---------------------------------------------------------------- the SSE decoder


def test_streaming_sse_strips_one_space_after_the_colon_and_no_more():
    events = decode(b"data: with space\n\ndata:without\n\ndata:  two spaces\n\n")
    assert [event.data for event in events] == ["with space", "without", " two spaces"]


def test_streaming_sse_ignores_comment_lines_such_as_openrouter_keepalives():
    stream = b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\n"
    assert decode(stream) == [ServerSentEvent(data="{}")]


def test_streaming_sse_accepts_crlf_line_endings():
    events = decode(b"data: one\r\n\r\ndata: two\r\n\r\n")
    assert [event.data for event in events] == ["one", "two"]
    # "\r\n" is one line end: two data lines of one event, not two events.
    assert decode(b"data: a\r\ndata: b\r\n\r\n") == [ServerSentEvent(data="a\nb")]


def test_streaming_sse_accepts_lone_cr_line_endings_and_dispatches_at_once():
    # The second "\r" ends the event: waiting for more bytes would hang on the last event.
    events = decode(b"data: one\r\rdata: [DONE]\r\r")
    assert [event.data for event in events] == ["one", "[DONE]"]


def test_streaming_sse_counts_a_cr_and_an_lf_split_across_feeds_as_one_line_end():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: one\r") == []
    assert decoder.feed(b"\n") == []  # the rest of "\r\n", not the blank line that dispatches
    assert decoder.feed(b"\r") == [ServerSentEvent(data="one")]
    assert decoder.feed(b"\ndata: two\r\n\r\n") == [ServerSentEvent(data="two")]


def test_streaming_sse_a_newline_completes_a_cr_only_once():
    # The "\n" that starts a piece after a "\r" is dropped, and only that one.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: one\r") == []
    assert decoder.feed(b"\ndata: two\n\n") == [ServerSentEvent(data="one\ntwo")]
    decoder = SSEDecoder()
    assert decoder.feed(b"data: one\r") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\n") == [ServerSentEvent(data="one")], "a second \\n is a blank line"


def test_streaming_sse_joins_several_data_lines_with_newlines():
    events = decode(b"data: first line\ndata: second line\ndata:\n\n")
    assert events == [ServerSentEvent(data="first line\nsecond line\n")]


def test_streaming_sse_gives_the_same_events_however_the_bytes_are_cut():
    stream = "data: h\u00e9llo \U0001f980\n\n: keep-alive\n\ndata: \u20ac2\r\n\r\n".encode()
    expected = [ServerSentEvent(data="h\u00e9llo \U0001f980"), ServerSentEvent(data="\u20ac2")]
    assert decode(*(bytes([byte]) for byte in stream)) == expected
    for first in range(len(stream) + 1):
        for second in range(first, len(stream) + 1):
            pieces = stream[:first], stream[first:second], stream[second:]
            assert decode(*pieces) == expected, f"cut at bytes {first} and {second}"


def test_streaming_sse_returns_several_events_of_one_feed_in_order():
    decoder = SSEDecoder()
    events = decoder.feed(b"data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4")
    assert [event.data for event in events] == ["1", "2", "3"]
    assert decoder.feed(b"\n\n") == [ServerSentEvent(data="4")]


def test_streaming_sse_blank_lines_without_data_dispatch_nothing():
    assert decode(b"\n\n\n\r\n") == []
    # An event type with no data is dropped at the blank line, and does not leak into the next.
    assert decode(b"event: lost\n\ndata: x\n\n") == [ServerSentEvent(data="x", event="message")]


def test_streaming_sse_reads_event_types_and_ids():
    stream = b"event: ping\ndata: 1\n\nid: 7\ndata: 2\n\ndata: 3\n\nunknown: field\ndata: 4\n\n"
    assert decode(stream) == [
        ServerSentEvent(data="1", event="ping", id=None),
        ServerSentEvent(data="2", event="message", id="7"),
        ServerSentEvent(data="3", event="message", id="7"),  # the last id stays
        ServerSentEvent(data="4", event="message", id="7"),
    ]
    # An id holding a NUL character is ignored: the last good id stays.
    assert decode(b"id: 7\ndata: 1\n\nid: 8\x00\ndata: 2\n\n")[-1].id == "7"


def test_streaming_sse_skips_a_leading_byte_order_mark_only():
    bom = "\ufeff".encode()
    assert decode(bom + b"data: x\n\n") == [ServerSentEvent(data="x")]
    assert decode(bom[:2], bom[2:] + b"data: x\n\n") == [ServerSentEvent(data="x")]
    assert decode(bom + b"data: " + bom + b"y\n\n") == [ServerSentEvent(data="\ufeffy")]
    assert decode(b"data: ", bom + b"y\n\n") == [ServerSentEvent(data="\ufeffy")]


def test_streaming_sse_is_pending_in_the_middle_of_an_event():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: hal") == []
    assert decoder.pending
    assert decoder.feed(b"f\n") == []
    assert decoder.pending  # the data line is complete, the event is not
    assert decoder.feed(b"\n") == [ServerSentEvent(data="half")]
    assert not decoder.pending
    assert decoder.feed(b": keep-alive\n") == []
    assert not decoder.pending


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("data: hello", ("data", "hello")),
        ("data:hello", ("data", "hello")),
        ("data:  indented", ("data", " indented")),
        ("data:\ttab", ("data", "\ttab")),
        ("data", ("data", "")),
        ("data:", ("data", "")),
        ("id: a:b: c", ("id", "a:b: c")),
        ("event:update", ("event", "update")),
        (": OPENROUTER PROCESSING", None),
        (":", None),
    ],
)
def test_streaming_parse_sse_line_splits_field_and_value(line, expected):
    assert parse_sse_line(line) == expected


# ---------------------------------------------------------------- a decoder fed by a stranger


def test_streaming_sse_refuses_an_event_that_grows_past_max_event_chars():
    line = b"data: " + b"x" * 5000 + b"\n\n"
    for size in (100, 1, len(line)):
        decoder = SSEDecoder(max_event_chars=1000)
        with pytest.raises(ResponseTooLargeError) as caught:
            for start in range(0, len(line), size):
                decoder.feed(line[start : start + size])
        assert caught.value.limit == 1000
        assert "max_event_chars" in str(caught.value)
        assert start < 1200, f"in pieces of {size}: the decoder kept on past the limit"


def test_streaming_sse_counts_every_data_line_of_an_event_against_the_limit():
    decoder = SSEDecoder(max_event_chars=1000)
    with pytest.raises(ResponseTooLargeError):
        for _ in range(50):
            decoder.feed(b"data: " + b"y" * 100 + b"\n")  # one event, never dispatched


def test_streaming_sse_an_event_of_exactly_max_event_chars_is_kept_however_many_came_before():
    decoder = SSEDecoder(max_event_chars=10)
    for _ in range(3):
        assert decoder.feed(b"data: 0123456789\n\n") == [ServerSentEvent(data="0123456789")]
    with pytest.raises(ResponseTooLargeError):
        decoder.feed(b"data: 0123456789A\n\n")


def test_streaming_sse_limit_is_per_event_and_ignores_what_was_dispatched():
    decoder = SSEDecoder(max_event_chars=1000)
    events = []
    for _ in range(200):
        events += decoder.feed(b": keep-alive\n\ndata: " + b"z" * 500 + b"\n\n")
    assert len(events) == 200
    assert events[-1] == ServerSentEvent(data="z" * 500)


def test_streaming_sse_keeps_an_unfinished_line_as_pieces_and_joins_them_once():
    # Linear time, shown without a clock: the kept pieces stay as they came, however many.
    decoder = SSEDecoder()
    decoder.feed(b"data: ")
    for _ in range(2000):
        assert decoder.feed(b"x" * 64) == []
    assert len(decoder._buffer) == 2001, "each piece is kept as it came, not glued on"
    assert {len(piece) for piece in decoder._buffer} == {6, 64}
    assert decoder.feed(b"\n\n") == [ServerSentEvent(data="x" * 128_000)]
    assert decoder._buffer == []


def test_streaming_sse_close_gives_the_last_event_when_the_blank_line_never_came():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: 1\n\ndata: [DONE]") == [ServerSentEvent(data="1")]
    assert decoder.close() == ServerSentEvent(data="[DONE]")
    assert decoder.close() is None
    finished = SSEDecoder()
    finished.feed(b"data: 1\n\n: keep-alive\n")
    assert finished.close() is None, "a finished stream leaves no event behind"


# ---------------------------------------------------------------- usage and finish reasons


def test_streaming_usage_from_wire_reads_tokens_cached_tokens_and_an_exact_cost():
    usage = usage_from_wire(usage_body(1200, 34, cached_tokens=1000, cost=0.1))
    assert usage == TokenUsage(
        input_tokens=1200, output_tokens=34, cached_input_tokens=1000, cost=Decimal("0.1")
    )
    assert usage.cost != Decimal.from_float(0.1)  # 0.1000000000000000055511151231257827...


def test_streaming_usage_from_wire_treats_missing_fields_as_zero():
    assert usage_from_wire({}) == TokenUsage()
    assert usage_from_wire({"prompt_tokens": 9, "prompt_tokens_details": None}) == TokenUsage(
        input_tokens=9
    )
    free = usage_from_wire({"prompt_tokens": 3, "completion_tokens": 1, "cost": 0})
    assert free.cost == Decimal(0)  # a reported price of zero, not "no price reported"


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [
        ("stop", StopReason.END_TURN),
        ("tool_calls", StopReason.TOOL_USE),
        ("length", StopReason.MAX_TOKENS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("error", StopReason.ERROR),
        ("a_reason_from_the_future", StopReason.END_TURN),
    ],
)
def test_streaming_chunk_finish_reasons_become_stop_reasons(finish_reason, stop_reason):
    assert chunk_events(chunk(finish_reason=finish_reason)) == [Done(stop_reason)]


# ---------------------------------------------------------------- chunk_events


def test_streaming_chunk_events_text_and_skips_empty_deltas():
    assert chunk_events(chunk("Hel")) == [TextDelta("Hel")]
    assert chunk_events(chunk("", role="assistant")) == []
    assert chunk_events(chunk(None)) == []


def test_streaming_chunk_events_a_tool_call_start_then_argument_fragments():
    assert chunk_events(chunk(tool_calls=[call_start(0, "call_1", "read")])) == [
        ToolCallStart(0, "call_1", "read")
    ]
    assert chunk_events(chunk(tool_calls=[call_delta(0, '{"pa')])) == [ToolCallDelta(0, '{"pa')]
    start_with_arguments = {
        "index": 0,
        "id": "call_2",
        "type": "function",
        "function": {"name": "read", "arguments": '{"path"'},
    }
    assert chunk_events(chunk(tool_calls=[start_with_arguments])) == [
        ToolCallStart(0, "call_2", "read"),
        ToolCallDelta(0, '{"path"'),
    ]


def test_streaming_chunk_events_tell_parallel_tool_calls_apart_by_index():
    starts = chunk(tool_calls=[call_start(0, "call_a", "read"), call_start(1, "call_b", "grep")])
    assert chunk_events(starts) == [
        ToolCallStart(0, "call_a", "read"),
        ToolCallStart(1, "call_b", "grep"),
    ]
    deltas = chunk(tool_calls=[call_delta(1, '{"pattern"'), call_delta(0, '{"path"')])
    assert chunk_events(deltas) == [ToolCallDelta(1, '{"pattern"'), ToolCallDelta(0, '{"path"')]


def test_streaming_chunk_events_number_calls_without_an_index_by_their_position():
    # A whole, non-streamed message lists its calls without "index"; chapter 5b reads it here.
    calls = [
        {"type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}},
        {"type": "function", "function": {"name": "grep", "arguments": '{"pattern": "b"}'}},
    ]
    assert chunk_events(chunk(tool_calls=calls)) == [
        ToolCallStart(0, "", "read"),
        ToolCallDelta(0, '{"path": "a"}'),
        ToolCallStart(1, "", "grep"),
        ToolCallDelta(1, '{"pattern": "b"}'),
    ]


def test_streaming_chunk_events_a_usage_only_final_chunk_without_choices():
    final = chunk(choices=False, usage=usage_body(12, 5, cost=0.002))
    assert final["choices"] == []
    assert chunk_events(final) == [
        UsageUpdate(TokenUsage(input_tokens=12, output_tokens=5, cost=Decimal("0.002")))
    ]
    both = chunk_events(chunk(finish_reason="stop", usage=usage_body(3, 4)))
    assert len(both) == 2
    assert Done(StopReason.END_TURN) in both
    assert UsageUpdate(TokenUsage(input_tokens=3, output_tokens=4)) in both


def test_streaming_chunk_with_an_error_object_raises_a_stream_error_with_its_message():
    broken = chunk(choices=False, error={"code": 502, "message": "Upstream model overloaded"})
    with pytest.raises(StreamError, match="Upstream model overloaded"):
        chunk_events(broken)
    with pytest.raises(StreamError, match="rate limited"):
        chunk_events(chunk("partial", error={"code": 429, "message": "rate limited"}))


def test_streaming_chunk_with_an_error_without_a_message_quotes_what_the_server_sent():
    with pytest.raises(StreamError, match="Internal Server Error"):
        chunk_events({**chunk(choices=False), "error": "Internal Server Error"})
    with pytest.raises(StreamError, match="502"):
        chunk_events(chunk(choices=False, error={"code": 502}))


def test_streaming_chunk_with_an_error_object_carries_its_message_exactly_as_sent():
    message = "Upstream error from 'Example':\n  model overloaded"
    with pytest.raises(StreamError) as caught:
        chunk_events(chunk(choices=False, error={"code": 502, "message": message}))
    assert message in str(caught.value)


# ---------------------------------------------------------------- StreamAccumulator


def test_streaming_accumulator_assembles_interleaved_parallel_calls_by_index():
    turn = accumulate(
        [
            TextDelta("Looking "),
            TextDelta("twice."),
            ToolCallStart(0, "call_a", "read"),
            ToolCallStart(1, "call_b", "grep"),
            ToolCallDelta(0, '{"pa'),
            ToolCallDelta(1, '{"patt'),
            ToolCallDelta(0, 'th": "a.txt"}'),
            ToolCallDelta(1, 'ern": "TODO"}'),
            Done(StopReason.TOOL_USE),
        ]
    )
    assert turn.text == "Looking twice."
    assert turn.tool_calls == (
        ToolCall(id="call_a", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="call_b", name="grep", arguments={"pattern": "TODO"}),
    )
    assert turn.stop_reason is StopReason.TOOL_USE


def test_streaming_accumulator_merges_a_repeated_start_of_the_same_call():
    turn = accumulate(
        [
            ToolCallStart(0, "call_1", ""),
            ToolCallDelta(0, '{"path":'),
            ToolCallStart(0, "call_1", "read"),
            ToolCallStart(0, "", "read"),
            ToolCallDelta(0, ' "x.py"}'),
            Done(StopReason.TOOL_USE),
        ]
    )
    assert turn.tool_calls == (ToolCall(id="call_1", name="read", arguments={"path": "x.py"}),)


def test_streaming_accumulator_a_new_id_at_a_used_index_starts_a_new_call():
    turn = accumulate(
        [
            ToolCallStart(0, "call_1", "read"),
            ToolCallDelta(0, '{"path": "a.txt"}'),
            ToolCallStart(0, "call_2", "read"),
            ToolCallDelta(0, '{"path": "b.txt"}'),
            Done(StopReason.TOOL_USE),
        ]
    )
    assert turn.tool_calls == (
        ToolCall(id="call_1", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="call_2", name="read", arguments={"path": "b.txt"}),
    )


def test_streaming_accumulator_keeps_the_last_usage_reported_not_the_sum():
    early = TokenUsage(input_tokens=10, output_tokens=1)
    final = TokenUsage(input_tokens=10, output_tokens=7, cost=Decimal("0.002"))
    accumulator = StreamAccumulator()
    for event in [
        UsageUpdate(early),
        TextDelta("ok"),
        Done(StopReason.END_TURN),
        UsageUpdate(final),
    ]:
        accumulator.add(event)
    assert accumulator.usage == final
    assert accumulator.turn().usage == final


def test_streaming_accumulator_without_done_raises_a_stream_error():
    accumulator = StreamAccumulator()
    accumulator.add(TextDelta("The answer is"))
    accumulator.add(UsageUpdate(TokenUsage(input_tokens=5)))
    with pytest.raises(StreamError):
        accumulator.turn()


def test_streaming_accumulator_cut_off_by_max_tokens_keeps_text_and_drops_tool_calls():
    turn = accumulate(
        [
            TextDelta("I will read it."),
            ToolCallStart(0, "call_1", "read"),
            ToolCallDelta(0, '{"path": "a.t'),  # truncated: not valid JSON
            Done(StopReason.MAX_TOKENS),
        ]
    )
    assert turn == AssistantTurn(text="I will read it.", stop_reason=StopReason.MAX_TOKENS)


def test_streaming_accumulator_tool_calls_with_finish_stop_still_mean_tool_use():
    turn = accumulate(
        [
            ToolCallStart(0, "call_1", "read"),
            ToolCallDelta(0, '{"path": "a.txt"}'),
            Done(StopReason.END_TURN),
        ]
    )
    assert turn.stop_reason is StopReason.TOOL_USE
    assert [call.id for call in turn.tool_calls] == ["call_1"]


def test_streaming_accumulator_tool_use_without_any_call_is_malformed():
    with pytest.raises(MalformedResponseError):
        accumulate([TextDelta("Let me check."), Done(StopReason.TOOL_USE)])


def test_streaming_accumulator_invalid_json_arguments_are_malformed_and_quoted():
    events: list[StreamEvent] = [
        ToolCallStart(0, "call_7", "read"),
        ToolCallDelta(0, '{"path": '),
        ToolCallDelta(0, '"notes.txt"'),
        Done(StopReason.TOOL_USE),
    ]
    with pytest.raises(MalformedResponseError) as caught:
        accumulate(events)
    message = str(caught.value)
    assert '{"path": "notes.txt"' in message
    assert "call_7" in message


def test_streaming_accumulator_empty_arguments_mean_no_arguments():
    turn = accumulate([ToolCallStart(0, "call_1", "list_files"), Done(StopReason.TOOL_USE)])
    assert turn.tool_calls == (ToolCall(id="call_1", name="list_files", arguments={}),)


def test_streaming_accumulator_arguments_that_are_a_json_array_are_malformed():
    events: list[StreamEvent] = [
        ToolCallStart(0, "call_1", "read"),
        ToolCallDelta(0, '["a.txt"]'),
        Done(StopReason.TOOL_USE),
    ]
    with pytest.raises(MalformedResponseError, match="object"):
        accumulate(events)


def test_streaming_accumulator_two_calls_with_one_id_are_malformed_and_name_it():
    # Each call would be answered by a result carrying its id: two calls with one id cannot
    # both be answered, and the accumulator, not the turn's own validation, must say so.
    twice: list[StreamEvent] = [
        ToolCallStart(0, "call_9", "read"),
        ToolCallDelta(0, '{"path": "a.txt"}'),
        ToolCallStart(1, "call_9", "grep"),
        ToolCallDelta(1, '{"pattern": "TODO"}'),
        Done(StopReason.TOOL_USE),
    ]
    with pytest.raises(MalformedResponseError, match="call_9"):
        accumulate(twice)
    # A call without an id is numbered by its position; that number may repeat a real id too.
    numbered: list[StreamEvent] = [
        ToolCallStart(0, "call_1", "read"),
        ToolCallStart(1, "", "read"),
        Done(StopReason.TOOL_USE),
    ]
    with pytest.raises(MalformedResponseError, match="call_1"):
        accumulate(numbered)


def test_streaming_accumulator_arguments_for_a_call_that_never_started_are_malformed():
    with pytest.raises(MalformedResponseError) as caught:
        accumulate(
            [
                ToolCallStart(0, "call_1", "read"),
                ToolCallDelta(3, '{"path": "a.txt"}'),
                Done(StopReason.TOOL_USE),
            ]
        )
    assert re.search(r"\b3\b", str(caught.value)), "the message names the index, 3"


# ---------------------------------------------------------------- turn_events and the mock


def test_streaming_turn_events_round_trip_through_the_accumulator():
    turn = AssistantTurn(
        text="Reading both files \u2026 \U0001f980",
        tool_calls=[
            ToolCall(id="call_1", name="read", arguments={"path": "caf\u00e9.md", "limit": 5}),
            ToolCall(id="call_2", name="read", arguments={}),
        ],
        usage=TokenUsage(
            input_tokens=120, output_tokens=30, cached_input_tokens=100, cost=Decimal("0.00042")
        ),
    )
    events = turn_events(turn, chunk_size=3)
    deltas = [event for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 1
    assert all(len(delta.text) <= 3 for delta in deltas)
    assert accumulate(events) == turn
    assert accumulate(events, model="test/model") == turn.model_copy(update={"model": "test/model"})
    cut_off = AssistantTurn(text="Once upon a", stop_reason=StopReason.MAX_TOKENS)
    assert accumulate(turn_events(cut_off)) == cut_off


async def test_streaming_mock_records_every_call():
    provider = MockStreamProvider(["one", "two"])
    first = [SystemMessage(content="Be brief."), UserMessage(content="hi")]
    _ = [event async for event in provider.stream(first, [READ])]
    _ = [event async for event in provider.stream([*first, UserMessage(content="again")], [])]
    assert len(provider.calls) == 2
    assert list(provider.calls[0].messages) == first
    assert provider.calls[0].tool_names == ("read",)
    assert provider.calls[1].messages[-1] == UserMessage(content="again")
    assert provider.calls[1].tools == ()


async def test_streaming_mock_streams_a_scripted_turn_in_small_pieces():
    provider = MockStreamProvider(["Hello, world!"], chunk_size=4)
    events = [event async for event in provider.stream([UserMessage(content="hi")], [])]
    texts = [event.text for event in events if isinstance(event, TextDelta)]
    assert texts == ["Hell", "o, w", "orld", "!"]
    assert Done(StopReason.END_TURN) in events
    assert events.index(Done(StopReason.END_TURN)) > events.index(TextDelta("!"))


async def test_streaming_mock_streams_a_raw_event_list_exactly_as_given():
    script: list[StreamEvent] = [
        UsageUpdate(TokenUsage(input_tokens=1)),
        TextDelta("cut"),
        Done(StopReason.MAX_TOKENS),
    ]
    provider = MockStreamProvider(["first"])
    provider.add(script)
    _ = [event async for event in provider.stream([UserMessage(content="hi")], [])]
    assert [event async for event in provider.stream([UserMessage(content="hi")], [])] == script


async def test_streaming_mock_raises_exhausted_when_the_script_is_used_up():
    provider = MockStreamProvider(["only one"])
    _ = [event async for event in provider.stream([UserMessage(content="hi")], [])]
    with pytest.raises(MockProviderExhausted):
        _ = [event async for event in provider.stream([UserMessage(content="again")], [READ])]
    assert len(provider.calls) == 2
    assert provider.calls[1].tool_names == ("read",)


async def test_streaming_mock_complete_returns_the_assembled_turns_in_order():
    call = ToolCall(id="call_1", name="read", arguments={"path": "README.md"})
    scripted = AssistantTurn(
        text="Let me look.", tool_calls=[call], usage=TokenUsage(input_tokens=8, output_tokens=2)
    )
    provider = MockStreamProvider([scripted, "It is a readme."], chunk_size=2)
    assert await provider.complete([UserMessage(content="hi")], [READ]) == scripted
    second = await provider.complete([UserMessage(content="hi")], [READ])
    assert second == AssistantTurn(text="It is a readme.")
    assert len(provider.calls) == 2


# ---------------------------------------------------------------- everything together

# Any text, well mixed with multi-byte UTF-8 and the characters a line splitter may trip on:
# U+2028 and U+0085 end lines for str.splitlines, but not in an event stream.
AWKWARD = ["h\u00e9llo", " \u20ac5", "\U0001f980", "\u2028", "\x85", "\r\n", "data: ", '"\\']
TEXT = st.lists(st.sampled_from(AWKWARD) | st.text(max_size=4), max_size=8).map("".join)


@st.composite
def tool_calls(draw: st.DrawFn) -> list[ToolCall]:
    count = draw(st.integers(min_value=0, max_value=3))
    return [
        ToolCall(
            id=f"call_{number}",
            name=draw(st.sampled_from(["read", "grep", "bash"])),
            arguments={"path": draw(TEXT), "note": draw(TEXT)},
        )
        for number in range(count)
    ]


def wire_stream(
    text: str, calls: list[ToolCall], usage: dict[str, Any], newline: str, size: int
) -> bytes:
    """The bytes a server sends for this turn, with real UTF-8 and parallel calls interleaved."""
    chunks = text_chunks(text, size)
    chunks += [chunk(tool_calls=[call_start(i, c.id, c.name)]) for i, c in enumerate(calls)]
    fragments = []
    for call in calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        fragments.append([arguments[k : k + size] for k in range(0, len(arguments), size)])
    for round_ in range(max((len(pieces) for pieces in fragments), default=0)):
        for index, pieces in enumerate(fragments):
            if round_ < len(pieces):
                chunks.append(chunk(tool_calls=[call_delta(index, pieces[round_])]))
    chunks.append(chunk(finish_reason="tool_calls" if calls else "stop"))
    chunks.append(chunk(choices=False, usage=usage))
    frames = [f": OPENROUTER PROCESSING{newline}{newline}"]
    frames += [f"data: {json.dumps(c, ensure_ascii=False)}{newline}{newline}" for c in chunks]
    frames.append(f"data: [DONE]{newline}{newline}")
    return sse(*frames, done=False)


def turn_from_pieces(pieces: list[bytes]) -> AssistantTurn:
    decoder, accumulator, done = SSEDecoder(), StreamAccumulator(), False
    for piece in pieces:
        for event in decoder.feed(piece):
            assert not done, "an event arrived after data: [DONE]"
            if event.data == "[DONE]":
                done = True
                continue
            for item in chunk_events(json.loads(event.data)):
                accumulator.add(item)
    assert done, "data: [DONE] never arrived"
    return accumulator.turn()


@settings(deadline=None, max_examples=examples(50))
@given(
    text=TEXT,
    calls=tool_calls(),
    tokens=st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**6)),
    micro_dollars=st.integers(0, 10**6),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    size=st.integers(min_value=1, max_value=6),
    data=st.data(),
)
def test_streaming_any_cut_of_a_wire_stream_gives_the_same_turn(
    text, calls, tokens, micro_dollars, newline, size, data
):
    prompt, completion, cached = tokens
    usage = usage_body(prompt, completion, cached_tokens=cached, cost=micro_dollars / 10**6)
    stream = wire_stream(text, calls, usage, newline, size)
    # Cut points from piece sizes repeated until the stream is used up, so that the cuts land
    # all over it: inside lines, between "\r" and "\n", inside UTF-8 characters.
    sizes = data.draw(st.lists(st.integers(1, 24), min_size=1, max_size=8), label="sizes")
    cuts = list(
        itertools.takewhile(
            lambda cut: cut < len(stream), itertools.accumulate(itertools.cycle(sizes))
        )
    )
    pieces = [
        stream[start:end] for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True)
    ]
    expected = AssistantTurn(
        text=text,
        tool_calls=calls,
        usage=TokenUsage(
            input_tokens=prompt,
            output_tokens=completion,
            cached_input_tokens=cached,
            cost=Decimal(micro_dollars).scaleb(-6),
        ),
    )
    whole = turn_from_pieces([stream])
    assert whole == expected
    assert turn_from_pieces(pieces) == whole


# ---------------------------------------------------------------- reasoning, apart from the text


def reasoning_chunk(text: str, *, name: str = "reasoning", content: str | None = None) -> dict:
    """A chunk whose delta carries reasoning under ``name`` (and, if given, some text)."""
    body = chunk(content)
    body["choices"][0]["delta"][name] = text
    return body


def test_streaming_chunk_events_reasoning_is_its_own_event_before_the_text():
    assert chunk_events(reasoning_chunk("The user wants ")) == [ReasoningDelta("The user wants ")]
    both = reasoning_chunk("so: 42.", content="It is 42.")
    assert chunk_events(both) == [ReasoningDelta("so: 42."), TextDelta("It is 42.")]


def test_streaming_chunk_events_read_deepseeks_reasoning_content_too():
    deepseek = reasoning_chunk("Six times seven.", name="reasoning_content")
    assert chunk_events(deepseek) == [ReasoningDelta("Six times seven.")]


def test_streaming_chunk_events_reasoning_under_both_names_counts_once():
    twice = reasoning_chunk("Hmm.", name="reasoning_content")
    twice["choices"][0]["delta"]["reasoning"] = "Hmm."
    assert chunk_events(twice) == [ReasoningDelta("Hmm.")]
    empty = reasoning_chunk("", name="reasoning_content")
    empty["choices"][0]["delta"]["reasoning"] = None
    assert chunk_events(empty) == []


def test_streaming_usage_from_wire_reads_reasoning_tokens():
    body = {**usage_body(100, 340), "completion_tokens_details": {"reasoning_tokens": 300}}
    usage = usage_from_wire(body)
    assert (usage.output_tokens, usage.reasoning_tokens) == (340, 300)
    assert usage_from_wire({**usage_body(1, 2), "completion_tokens_details": None}) == (
        TokenUsage(input_tokens=1, output_tokens=2)
    )


def test_streaming_accumulator_keeps_reasoning_apart_from_the_text():
    accumulator = StreamAccumulator()
    for event in [ReasoningDelta("Six "), TextDelta("It is "), ReasoningDelta("times seven.")]:
        accumulator.add(event)
    assert (accumulator.reasoning, accumulator.text) == ("Six times seven.", "It is ")
    accumulator.add(TextDelta("42."))
    accumulator.add(Done(StopReason.END_TURN))
    turn = accumulator.turn()
    assert turn == AssistantTurn(text="It is 42.", reasoning="Six times seven.")
    assert turn.to_message().reasoning_content == "Six times seven."


def test_streaming_turn_events_stream_the_reasoning_first_and_round_trip():
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.py"})
    turn = AssistantTurn(text="Reading.", tool_calls=[call], reasoning="I need to see a.py first.")
    events = turn_events(turn, chunk_size=5)
    kinds = [type(event) for event in events]
    assert kinds.index(TextDelta) > max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert all(len(e.text) <= 5 for e in events if isinstance(e, ReasoningDelta))
    assert accumulate(events) == turn


async def test_streaming_mock_streams_a_reasoning_turn_and_complete_keeps_it():
    scripted = AssistantTurn(text="42", reasoning="6 * 7")
    provider = MockStreamProvider([scripted, scripted], chunk_size=2)
    events = [event async for event in provider.stream([UserMessage(content="6*7?")], [])]
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["6 ", "* ", "7"]
    assert await provider.complete([UserMessage(content="6*7?")], []) == scripted


def test_streaming_a_reasoning_stream_from_the_wire_gives_a_turn_with_reasoning():
    stream = sse(
        ": OPENROUTER PROCESSING\n\n",
        reasoning_chunk("The user asks for 6 \u00d7 7; "),
        reasoning_chunk("that is 42."),
        chunk("It is 42."),
        chunk(finish_reason="stop"),
        chunk(
            choices=False,
            usage={**usage_body(20, 30), "completion_tokens_details": {"reasoning_tokens": 25}},
        ),
    )
    turn = turn_from_pieces(split(stream, 7))
    assert turn.text == "It is 42."
    assert turn.reasoning == "The user asks for 6 \u00d7 7; that is 42."
    assert turn.usage.reasoning_tokens == 25
