"""ch05b · StreamingAgent: the agent loop over a streaming provider, reporting every event."""

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from decimal import Decimal
from typing import Any

import pytest
from fake_tools import Broken
from history import assert_valid_history

from claw.agent import (
    AgentFinished,
    AgentResult,
    Finish,
    StreamingAgent,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from claw.providers.openrouter import OpenRouterProvider
from claw.streaming import (
    Done,
    MockStreamProvider,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
)
from claw.types import (
    AssistantMessage,
    AssistantTurn,
    Message,
    StopReason,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    UserMessage,
)
from clawbook.harness.loopback import (
    MODEL,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    split,
    sse,
    text_chunks,
    usage_body,
)

STREAM_EVENTS = (TextDelta, ToolCallStart, ToolCallDelta, UsageUpdate, Done)


class Shout:
    """A tool that upper-cases its text and remembers every call."""

    definition = ToolDefinition(name="shout", description="Upper-case a text.").param(
        "text", "string", "The text to shout."
    )

    def __init__(self, log: list[str] | None = None) -> None:
        self.seen: list[dict[str, Any]] = []
        self.log = log if log is not None else []

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.seen.append(arguments)
        self.log.append(f"shout {arguments['text']}")
        return ToolOutput.ok(arguments["text"].upper())


def shout(call_id: str, text: str) -> ToolCall:
    return ToolCall(id=call_id, name="shout", arguments={"text": text})


def text_between(events: list[Any], start: int, end: int) -> str:
    return "".join(event.text for event in events[start:end] if isinstance(event, TextDelta))


async def test_streaming_agent_reports_deltas_turns_and_tools_in_order():
    first = AssistantTurn(
        text="Shouting twice.", tool_calls=[shout("call_1", "hi"), shout("call_2", "bye")]
    )
    provider = MockStreamProvider([first, "Done: HI and BYE."], chunk_size=3)
    log: list[str] = []  # what the consumer received, and when each tool really ran
    agent = StreamingAgent(provider, [Shout(log)])
    events = []
    async for event in agent.run("Shout hi and bye."):
        events.append(event)
        if not isinstance(event, STREAM_EVENTS):
            log.append(type(event).__name__)

    result = AgentResult("Done: HI and BYE.", Finish.DONE, 2, TokenUsage())
    assert [event for event in events if not isinstance(event, STREAM_EVENTS)] == [
        TurnFinished(first),
        ToolStarted(shout("call_1", "hi")),
        ToolFinished(shout("call_1", "hi"), ToolOutput.ok("HI")),
        ToolStarted(shout("call_2", "bye")),
        ToolFinished(shout("call_2", "bye"), ToolOutput.ok("BYE")),
        TurnFinished(AssistantTurn(text="Done: HI and BYE.")),
        AgentFinished(result),
    ]
    turn_ends = [i for i, event in enumerate(events) if isinstance(event, TurnFinished)]
    last_tool = max(i for i, event in enumerate(events) if isinstance(event, ToolFinished))
    assert log == [
        "TurnFinished",
        "ToolStarted",
        "shout hi",
        "ToolFinished",
        "ToolStarted",
        "shout bye",
        "ToolFinished",
        "TurnFinished",
        "AgentFinished",
    ]
    assert text_between(events, 0, turn_ends[0]) == "Shouting twice."
    assert text_between(events, turn_ends[0], last_tool) == ""
    assert text_between(events, last_tool, turn_ends[1]) == "Done: HI and BYE."
    assert sum(1 for event in events[turn_ends[0] :] if isinstance(event, TextDelta)) > 1
    assert events[-1] == AgentFinished(result)
    assert sum(isinstance(event, AgentFinished) for event in events) == 1


class CountingProvider:
    """Streams fixed events and counts how many it has produced so far."""

    def __init__(self, events: list[StreamEvent]) -> None:
        self.events = events
        self.produced = 0

    async def complete(self, messages: Sequence[Message], tools: Sequence[Any]) -> AssistantTurn:
        raise AssertionError("a streaming agent must stream, not call complete()")

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Any]
    ) -> AsyncIterator[StreamEvent]:
        for event in self.events:
            self.produced += 1
            yield event


async def test_streaming_agent_yields_text_before_the_provider_has_finished():
    events: list[StreamEvent] = [
        TextDelta("Once "),
        TextDelta("upon "),
        TextDelta("a time."),
        Done(StopReason.END_TURN),
        UsageUpdate(TokenUsage(input_tokens=4, output_tokens=5)),
    ]
    provider = CountingProvider(events)
    produced_at_first_delta = None
    texts = []
    async for event in StreamingAgent(provider).run("Tell me a story."):
        if isinstance(event, TextDelta):
            if produced_at_first_delta is None:
                produced_at_first_delta = provider.produced
            texts.append(event.text)
    assert produced_at_first_delta == 1
    assert texts == ["Once ", "upon ", "a time."]
    assert provider.produced == len(events)


async def test_streaming_agent_history_and_what_the_provider_receives_next():
    call = shout("call_1", "hi")
    provider = MockStreamProvider([AssistantTurn(text="On it.", tool_calls=[call]), "HI!"])
    agent = StreamingAgent(provider, [Shout()], system="Be loud.")
    _ = [event async for event in agent.run("Shout hi.")]

    assert agent.history == [
        SystemMessage(content="Be loud."),
        UserMessage(content="Shout hi."),
        AssistantMessage(content="On it.", tool_calls=(call,)),
        ToolResultMessage(tool_call_id="call_1", content="HI"),
        AssistantMessage(content="HI!"),
    ]
    assert len(provider.calls) == 2
    assert list(provider.calls[0].messages) == agent.history[:2]
    assert list(provider.calls[1].messages) == agent.history[:4]
    assert provider.calls[1].tool_names == ("shout",)


async def test_streaming_agent_tool_errors_become_error_results_and_the_loop_goes_on():
    calls = [ToolCall(id="call_1", name="fly", arguments={}), ToolCall(id="call_2", name="broken")]
    provider = MockStreamProvider([AssistantTurn(tool_calls=calls), "Neither worked."])
    agent = StreamingAgent(provider, [Shout(), Broken("disk on fire")])
    events = [event async for event in agent.run("Try both.")]

    finished = [event for event in events if isinstance(event, ToolFinished)]
    assert [event.call.id for event in finished] == ["call_1", "call_2"]
    assert all(event.output.is_error for event in finished)
    assert "fly" in finished[0].output.content
    assert "disk on fire" in finished[1].output.content
    results = provider.calls[1].messages[-2:]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("call_1", True), ("call_2", True)]
    assert events[-1] == AgentFinished(AgentResult("Neither worked.", Finish.DONE, 2, TokenUsage()))


async def test_streaming_agent_stops_after_max_steps():
    provider = MockStreamProvider(
        [AssistantTurn(text=f"Again {n}.", tool_calls=[shout(f"call_{n}", "x")]) for n in range(3)]
    )
    agent = StreamingAgent(provider, [Shout()], max_steps=2)
    events = [event async for event in agent.run("Keep going.")]

    assert len(provider.calls) == 2
    assert sum(isinstance(event, AgentFinished) for event in events) == 1
    assert events[-1] == AgentFinished(AgentResult("Again 1.", Finish.MAX_STEPS, 2, TokenUsage()))
    assert agent.history[-1] == ToolResultMessage(tool_call_id="call_1", content="X")


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        (StopReason.MAX_TOKENS, Finish.MAX_TOKENS),
        (StopReason.CONTENT_FILTER, Finish.CONTENT_FILTER),
    ],
)
async def test_streaming_agent_finishes_for_the_reason_the_last_turn_stopped(stop_reason, finish):
    provider = MockStreamProvider([AssistantTurn(text="Once upon a", stop_reason=stop_reason)])
    events = [event async for event in StreamingAgent(provider).run("Tell me a story.")]
    assert events[-1] == AgentFinished(AgentResult("Once upon a", finish, 1, TokenUsage()))


async def test_streaming_agent_sums_usage_over_all_turns():
    first = AssistantTurn(
        tool_calls=[shout("call_1", "a")],
        usage=TokenUsage(input_tokens=100, output_tokens=10, cost=Decimal("0.001")),
    )
    # The second turn reports running totals twice: only its last report counts.
    second: list[StreamEvent] = [
        TextDelta("A."),
        UsageUpdate(TokenUsage(input_tokens=120, output_tokens=1)),
        Done(StopReason.END_TURN),
        UsageUpdate(
            TokenUsage(
                input_tokens=120, output_tokens=3, cached_input_tokens=100, cost=Decimal("0.002")
            )
        ),
    ]
    provider = MockStreamProvider([first, second])
    events = [event async for event in StreamingAgent(provider, [Shout()]).run("Shout a.")]

    assert events[-1] == AgentFinished(
        AgentResult(
            "A.",
            Finish.DONE,
            2,
            TokenUsage(
                input_tokens=220, output_tokens=13, cached_input_tokens=100, cost=Decimal("0.003")
            ),
        )
    )


async def test_streaming_agent_can_be_abandoned_after_the_first_delta():
    tool = Shout()
    turn = AssistantTurn(text="A long preamble before a tool.", tool_calls=[shout("call_1", "x")])
    provider = MockStreamProvider([turn, "unused"])
    agent = StreamingAgent(provider, [tool])
    seen = []
    async with aclosing(agent.run("Go.")) as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, TextDelta):
                break
    assert seen == [TextDelta("A lo")]
    assert tool.seen == []
    assert len(provider.calls) == 1


async def test_streaming_agent_runs_end_to_end_against_a_loopback_server(server):
    first = sse(
        ": OPENROUTER PROCESSING\n\n",
        *text_chunks("Let me shout it."),
        chunk(tool_calls=[call_start(0, "call_1", "shout")]),
        chunk(tool_calls=[call_delta(0, '{"text": ')]),
        chunk(tool_calls=[call_delta(0, '"h\u00e9"}')]),
        chunk(finish_reason="tool_calls"),
        chunk(choices=False, usage=usage_body(20, 8, cost=0.001)),
    )
    second = sse(
        *text_chunks("H\u00c9, shouted."),
        chunk(finish_reason="stop"),
        chunk(choices=False, usage=usage_body(40, 4, cached_tokens=20, cost=0.002)),
    )
    server.add(StreamReply(split(first, 7)), StreamReply(split(second, 5)))
    tool = Shout()
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        agent = StreamingAgent(provider, [tool])
        events = [event async for event in agent.run("Shout h\u00e9.")]

    assert tool.seen == [{"text": "h\u00e9"}]
    assert text_between(events, 0, len(events)) == "Let me shout it.H\u00c9, shouted."
    assert events[-1] == AgentFinished(
        AgentResult(
            "H\u00c9, shouted.",
            Finish.DONE,
            2,
            TokenUsage(
                input_tokens=60, output_tokens=12, cached_input_tokens=20, cost=Decimal("0.003")
            ),
        )
    )
    sent = server.requests[1].json
    assert sent["stream"] is True
    assert sent["messages"][-2]["tool_calls"][0]["id"] == "call_1"
    assert sent["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "H\u00c9"}


# ---------------------------------------------------------------- interrupted runs


def results_in(history: Sequence[Message]) -> list[tuple[str, bool, str]]:
    return [
        (m.tool_call_id, m.is_error, m.content) for m in history if isinstance(m, ToolResultMessage)
    ]


TWO_CALLS = AssistantTurn(text="Both.", tool_calls=[shout("call_1", "a"), shout("call_2", "b")])


def is_call(kind: type, call_id: str) -> Callable[[Any], bool]:
    return lambda event: isinstance(event, kind) and event.call.id == call_id


@pytest.mark.parametrize(
    ("stop", "ran"),
    [
        pytest.param(lambda event: isinstance(event, TextDelta), 0, id="first-text"),
        pytest.param(lambda event: isinstance(event, TurnFinished), 0, id="turn-finished"),
        pytest.param(is_call(ToolStarted, "call_1"), 0, id="first-tool-started"),
        pytest.param(is_call(ToolFinished, "call_1"), 1, id="first-tool-finished"),
        pytest.param(is_call(ToolStarted, "call_2"), 1, id="second-tool-started"),
    ],
)
async def test_streaming_agent_history_stays_valid_wherever_the_consumer_stops(stop, ran):
    provider = MockStreamProvider([TWO_CALLS, "Fine."])
    tool = Shout()
    agent = StreamingAgent(provider, [tool])
    async with aclosing(agent.run("Shout a and b.")) as events:
        async for event in events:
            if stop(event):
                break
    assert len(tool.seen) == ran
    assert_valid_history(agent.history)
    results = results_in(agent.history)
    assert results[:ran] == [("call_1", False, "A")][:ran], "a finished tool keeps its result"
    for call_id, is_error, content in results[ran:]:
        assert is_error, call_id
        assert "cancelled" in content.lower(), call_id

    events = [event async for event in agent.run("Go on.")]
    assert events[-1] == AgentFinished(AgentResult("Fine.", Finish.DONE, 1, TokenUsage()))
    assert_valid_history(provider.calls[-1].messages)


async def test_streaming_agent_history_is_valid_while_an_abandoned_run_is_still_open():
    provider = MockStreamProvider([TWO_CALLS, "Fine."])
    agent = StreamingAgent(provider, [Shout()])
    abandoned = agent.run("Shout a and b.")
    try:
        while not isinstance(await anext(abandoned), ToolStarted):
            pass
        # Not closed, as when a consumer just drops the generator: the next run starts now.
        _ = [event async for event in agent.run("Go on.")]
        assert_valid_history(provider.calls[-1].messages)
    finally:
        await abandoned.aclose()


class StubReached(NotImplementedError):
    """What a tool whose body is still a stub raises; ``run_tool`` lets it through."""


class Unfinished:
    definition = ToolDefinition(name="unfinished", description="Not written yet.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        raise StubReached("unfinished")


async def test_streaming_agent_history_stays_valid_when_a_stub_raises_in_a_tool():
    calls = [shout("call_1", "a"), ToolCall(id="call_2", name="unfinished"), shout("call_3", "c")]
    provider = MockStreamProvider([AssistantTurn(tool_calls=calls), "Fine."])
    agent = StreamingAgent(provider, [Shout(), Unfinished()])
    with pytest.raises(StubReached):
        _ = [event async for event in agent.run("Go.")]
    assert_valid_history(agent.history)
    assert [(call_id, is_error) for call_id, is_error, _ in results_in(agent.history)] == [
        ("call_1", False),
        ("call_2", True),
        ("call_3", True),
    ]
    _ = [event async for event in agent.run("Go on.")]
    assert_valid_history(provider.calls[-1].messages)


class DropsTheFirstStream:
    """The first stream breaks off after a call has begun; later ones answer "Fine."."""

    def __init__(self) -> None:
        self.requests: list[list[Message]] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Any]
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(list(messages))
        if len(self.requests) == 1:
            yield TextDelta("Let me ")
            yield ToolCallStart(0, "call_1", "shout")
            raise ConnectionError("the connection dropped")
        yield TextDelta("Fine.")
        yield Done(StopReason.END_TURN)


async def test_streaming_agent_records_no_turn_when_the_stream_breaks_off():
    provider = DropsTheFirstStream()
    agent = StreamingAgent(provider, [Shout()])
    with pytest.raises(ConnectionError):
        _ = [event async for event in agent.run("Shout a.")]
    assert agent.history == [UserMessage(content="Shout a.")]
    _ = [event async for event in agent.run("Go on.")]
    assert_valid_history(provider.requests[-1])


class Hang:
    """A tool that never finishes; ``started`` is set once it runs."""

    definition = ToolDefinition(name="hang", description="Never finishes.")

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_streaming_agent_history_stays_valid_when_the_run_is_cancelled_in_a_tool():
    hang = Hang()
    calls = [shout("call_1", "a"), ToolCall(id="call_2", name="hang"), shout("call_3", "c")]
    provider = MockStreamProvider([AssistantTurn(tool_calls=calls), "Fine."])
    agent = StreamingAgent(provider, [Shout(), hang])

    async def consume() -> None:
        async for _ in agent.run("Go."):
            pass

    run = asyncio.create_task(consume())
    started = asyncio.create_task(hang.started.wait())
    await asyncio.wait({run, started}, return_when=asyncio.FIRST_COMPLETED)
    started.cancel()
    if run.done():
        run.result()  # raises whatever ended the run early
        pytest.fail("the run ended before the hanging tool started")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert_valid_history(agent.history)
    assert [(call_id, is_error) for call_id, is_error, _ in results_in(agent.history)] == [
        ("call_1", False),
        ("call_2", True),
        ("call_3", True),
    ]
    _ = [event async for event in agent.run("Go on.")]
    assert_valid_history(provider.calls[-1].messages)
