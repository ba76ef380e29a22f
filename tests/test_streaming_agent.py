"""ch05b · StreamingAgent: the agent loop over a streaming provider, reporting every event."""

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from decimal import Decimal
from typing import Any

from fake_tools import Broken

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
from clawbook.loopback import (
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


async def test_streaming_agent_stops_after_max_turns():
    provider = MockStreamProvider(
        [AssistantTurn(text=f"Again {n}.", tool_calls=[shout(f"call_{n}", "x")]) for n in range(3)]
    )
    agent = StreamingAgent(provider, [Shout()], max_turns=2)
    events = [event async for event in agent.run("Keep going.")]

    assert len(provider.calls) == 2
    assert sum(isinstance(event, AgentFinished) for event in events) == 1
    assert events[-1] == AgentFinished(AgentResult("Again 1.", Finish.MAX_TURNS, 2, TokenUsage()))
    assert agent.history[-1] == ToolResultMessage(tool_call_id="call_1", content="X")


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
