"""ch07 · The agent loop, deep dive: events and observers, finish reasons, limits, cancellation."""

import asyncio
import dataclasses
import logging
import time
import unicodedata
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from fake_tools import Broken, Echo
from history import assert_valid_history
from hypothesis import example, given
from hypothesis import strategies as st
from paced_stream import PacedReply

from claw.agent import CANCELLED, Finish
from claw.events import (
    AssistantText,
    EventSink,
    RunFinished,
    StepUsage,
    ToolCalled,
    ToolResult,
)
from claw.loop import Agent, Limits, history_chars, truncate_output
from claw.streaming import (
    Done,
    MockStreamProvider,
    StreamEvent,
    TextDelta,
    UsageUpdate,
)
from claw.types import (
    AssistantMessage,
    AssistantTurn,
    DeveloperMessage,
    Message,
    StopReason,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    UserMessage,
    dump_messages,
)

LOOP_EVENTS = (AssistantText, StepUsage, ToolCalled, ToolResult, RunFinished)
NOTE = "\n[output truncated: "


# ------------------------------------------------------------------ helpers


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def calls_turn(*calls: ToolCall, text: str = "", usage: TokenUsage | None = None) -> AssistantTurn:
    return AssistantTurn(text=text, tool_calls=calls, usage=usage or TokenUsage())


def results_in(history: Sequence[Message]) -> list[tuple[str, str, bool]]:
    return [
        (m.tool_call_id, m.content, m.is_error) for m in history if isinstance(m, ToolResultMessage)
    ]


def loop_events(events: list[Any]) -> list[Any]:
    """The loop's own events, each ToolResult's duration set to 0 after checking it."""
    kept = []
    for event in events:
        if isinstance(event, ToolResult):
            assert isinstance(event.duration, float) and event.duration >= 0
            event = dataclasses.replace(event, duration=0.0)
        if isinstance(event, LOOP_EVENTS):
            kept.append(event)
    return kept


async def collect(agent: Agent, prompt: str) -> list[Any]:
    return [event async for event in agent.events(prompt)]


class Flaky:
    """``flaky``: fails for any path but ``good.txt``."""

    definition = ToolDefinition(name="flaky", description="Works for good.txt only.").param(
        "path", "string", "A path."
    )

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.seen.append(arguments["path"])
        if arguments["path"] == "good.txt":
            return ToolOutput.ok("contents")
        return ToolOutput.error(f"no such file: {arguments['path']}")


class Slow:
    """``slow``: waits a long time; notes when it starts and whether it was cancelled."""

    definition = ToolDefinition(name="slow", description="Takes a while.")

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False
        self.finished = False

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.started.set()
        try:
            await asyncio.sleep(8)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished = True
        return ToolOutput.ok("slept")


class Huge:
    """``huge``: returns a large output of numbered lines."""

    definition = ToolDefinition(name="huge", description="Prints a lot.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput.ok("".join(f"line {n}: {'é' * 20}\n" for n in range(5000)))


class StubReached(NotImplementedError):
    """What a tool whose body is still a stub raises; the loop must let it through."""


class Unfinished:
    definition = ToolDefinition(name="unfinished", description="Not written yet.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        raise StubReached("unfinished tool")


class SlowStream:
    """A stream provider that sends a little text, then hangs until it is cancelled."""

    def __init__(self) -> None:
        self.calls = 0
        self.closed = False

    async def complete(self, messages: Sequence[Message], tools: Sequence[Any]) -> AssistantTurn:
        raise AssertionError("the agent streams")

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Any]
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        try:
            yield TextDelta("Thinking")
            await asyncio.sleep(8)
            yield TextDelta(" too long")
            yield Done(StopReason.END_TURN)
        finally:
            self.closed = True


# ------------------------------------------------------------------ events and observers


async def test_agent_two_step_run_reports_text_calls_results_usage_and_finish_in_order():
    u1 = TokenUsage(input_tokens=120, output_tokens=30)
    u2 = TokenUsage(input_tokens=200, output_tokens=12)
    first = calls_turn(
        call("call_1", "echo", text="hi"), call("call_2", "broken"), text="Let me look.", usage=u1
    )
    provider = MockStreamProvider(
        [first, AssistantTurn(text="It says hi.", usage=u2)], chunk_size=3
    )
    agent = Agent(provider, [Echo(), Broken()])
    events = await collect(agent, "Echo hi.")

    assert loop_events(events) == [
        AssistantText(1, "Let me look."),
        StepUsage(1, u1),
        ToolCalled(1, "call_1", "echo", {"text": "hi"}),
        ToolResult(1, "call_1", "echo", "hi", False, 0.0),
        ToolCalled(1, "call_2", "broken", {}),
        ToolResult(1, "call_2", "broken", "broken failed: OSError: permission denied", True, 0.0),
        AssistantText(2, "It says hi."),
        StepUsage(2, u2),
        RunFinished(Finish.DONE, 2, "It says hi.", u1 + u2),
    ]
    # The stream events come first, as they arrive: step 1's text is complete before its summary.
    summary = events.index(AssistantText(1, "Let me look."))
    text = "".join(e.text for e in events[:summary] if isinstance(e, TextDelta))
    assert text == "Let me look."
    assert any(isinstance(e, Done) for e in events[:summary])
    assert events[-1] == RunFinished(Finish.DONE, 2, "It says hi.", u1 + u2)


async def test_agent_sends_no_assistant_text_for_a_step_without_text():
    provider = MockStreamProvider([calls_turn(call("c1", "echo", text="x")), "Done."])
    events = loop_events(await collect(Agent(provider, [Echo()]), "Go."))
    assert [type(e).__name__ for e in events] == [
        "StepUsage",
        "ToolCalled",
        "ToolResult",
        "AssistantText",
        "StepUsage",
        "RunFinished",
    ]


async def test_agent_observers_get_exactly_the_events_the_caller_gets():
    seen_a: list[Any] = []
    seen_b: list[Any] = []
    provider = MockStreamProvider([calls_turn(call("c1", "echo", text="a")), "Fine."])
    agent = Agent(provider, [Echo()], observers=[seen_a.append])
    agent.sink.add(seen_b.append)
    events = await collect(agent, "Go.")
    assert seen_a == events
    assert seen_b == events
    assert isinstance(events[-1], RunFinished) and len(events) > 8


async def test_agent_run_returns_the_finish_and_observers_still_see_everything():
    seen: list[Any] = []
    provider = MockStreamProvider(["Hello there."])
    agent = Agent(
        provider,
        system="You are claw.",
        context=[DeveloperMessage(content="Use tabs.")],
        observers=[seen.append],
    )
    finished = await agent.run("Hi.")
    assert finished == RunFinished(Finish.DONE, 1, "Hello there.", TokenUsage())
    assert seen[-1] == finished
    assert any(isinstance(e, TextDelta) for e in seen)
    assert [type(m) for m in provider.calls[0].messages] == [
        SystemMessage,
        DeveloperMessage,
        UserMessage,
    ]
    assert agent.history[-1] == AssistantMessage(content="Hello there.")


async def test_agent_a_raising_observer_is_reported_once_and_the_run_completes(caplog):
    calls: list[str] = []

    def broken_observer(event: Any) -> None:
        calls.append(type(event).__name__)
        raise ValueError("the progress bar fell over")

    good: list[Any] = []
    provider = MockStreamProvider([calls_turn(call("c1", "echo", text="a")), "Fine."])
    agent = Agent(provider, [Echo()], observers=[broken_observer, good.append])
    with caplog.at_level(logging.WARNING, logger="claw.events"):
        events = await collect(agent, "Go.")
    assert events[-1] == RunFinished(Finish.DONE, 2, "Fine.", TokenUsage())
    assert good == events
    assert len(calls) == len(events)  # it kept being called
    warnings = [r for r in caplog.records if r.name == "claw.events"]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    assert warnings[0].exc_info is not None
    assert "the progress bar fell over" in caplog.text


def test_agent_event_sink_reports_each_failing_observer_once(caplog):
    def first(event: Any) -> None:
        raise RuntimeError("first observer broke")

    def second(event: Any) -> None:
        raise KeyError("second observer broke")

    got: list[Any] = []
    sink = EventSink([first, second, got.append])
    with caplog.at_level(logging.WARNING, logger="claw.events"):
        for n in range(3):
            sink.emit(TextDelta(str(n)))
    assert got == [TextDelta("0"), TextDelta("1"), TextDelta("2")]
    warnings = [r for r in caplog.records if r.name == "claw.events"]
    assert len(warnings) == 2
    assert "first observer broke" in caplog.text and "second observer broke" in caplog.text


# ------------------------------------------------------------------ finish reasons


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        (StopReason.MAX_TOKENS, Finish.MAX_TOKENS),
        (StopReason.CONTENT_FILTER, Finish.CONTENT_FILTER),
        (StopReason.ERROR, Finish.ERROR),
    ],
)
async def test_agent_finishes_for_the_reason_the_provider_stopped(stop_reason, finish):
    provider = MockStreamProvider(
        [
            calls_turn(call("c1", "echo", text="a")),
            AssistantTurn(text="Cut", stop_reason=stop_reason),
        ]
    )
    finished = await Agent(provider, [Echo()]).run("Go.")
    assert finished == RunFinished(finish, 2, "Cut", TokenUsage())


async def test_agent_tool_errors_never_end_the_loop():
    turn = calls_turn(
        call("c1", "nosuch"),
        call("c2", "echo", text=5),
        call("c3", "broken"),
        text="Trying things.",
    )
    provider = MockStreamProvider([turn, "None of that worked."])
    agent = Agent(provider, [Echo(), Broken()])
    finished = await agent.run("Go.")
    assert finished.reason is Finish.DONE and finished.steps == 2
    errors = [(call_id, is_error) for call_id, _, is_error in results_in(agent.history)]
    assert errors == [("c1", True), ("c2", True), ("c3", True)]


async def test_agent_max_steps_ends_a_run_that_still_wants_tools():
    provider = MockStreamProvider(
        [calls_turn(call(f"c{n}", "echo", text=str(n)), text=f"Step {n}.") for n in range(1, 5)]
    )
    agent = Agent(provider, [Echo()], limits=Limits(max_steps=3))
    finished = await agent.run("Loop.")
    assert (finished.reason, finished.steps, finished.text) == (Finish.MAX_STEPS, 3, "Step 3.")
    assert len(provider.calls) == 3
    assert_valid_history(agent.history)


@pytest.mark.parametrize("after", [2, 3])
async def test_agent_stuck_after_exactly_n_identical_failing_calls(after):
    # The arguments repeat with their keys in another order: still the same call.
    script = [
        calls_turn(ToolCall(id=f"c{n}", name="flaky", arguments=dict(args)))
        for n, args in enumerate(
            [[("path", "a.txt"), ("mode", "r")], [("mode", "r"), ("path", "a.txt")]] * 3
        )
    ]
    tool = Flaky()
    provider = MockStreamProvider(script)
    agent = Agent(provider, [tool], limits=Limits(stuck_after=after))
    finished = await agent.run("Read a.txt.")
    assert (finished.reason, finished.steps) == (Finish.STUCK, after)
    assert len(tool.seen) == after
    assert_valid_history(agent.history)


async def test_agent_not_stuck_when_arguments_differ_or_a_success_intervenes():
    paths = ["a.txt", "a.txt", "b.txt", "b.txt", "good.txt", "a.txt", "a.txt"]
    script: list[AssistantTurn | str] = [
        calls_turn(call(f"c{n}", "flaky", path=path)) for n, path in enumerate(paths)
    ]
    provider = MockStreamProvider([*script, "I give up."])
    agent = Agent(provider, [Flaky()], limits=Limits(stuck_after=3))
    finished = await agent.run("Read something.")
    assert (finished.reason, finished.steps) == (Finish.DONE, len(paths) + 1)


async def test_agent_stuck_counts_identical_failing_calls_within_one_turn():
    turn = calls_turn(*(call(f"c{n}", "flaky", path="a.txt") for n in range(3)))
    provider = MockStreamProvider([turn, "unused"])
    agent = Agent(provider, [Flaky()])
    finished = await agent.run("Read a.txt.")
    assert (finished.reason, finished.steps) == (Finish.STUCK, 1)
    assert len(provider.calls) == 1


async def test_agent_history_limit_ends_the_run_past_the_size_limit():
    def script() -> MockStreamProvider:
        return MockStreamProvider([calls_turn(call("c1", "echo", text="x" * 500)), "Done."])

    measure = Agent(script(), [Echo()])
    await measure.run("Echo.")
    size = history_chars(measure.history[:3])
    assert size == len(dump_messages(measure.history[:3]))

    at_limit = Agent(script(), [Echo()], limits=Limits(max_history_chars=size))
    assert (await at_limit.run("Echo.")).reason is Finish.DONE

    provider = script()
    over = Agent(provider, [Echo()], limits=Limits(max_history_chars=size - 1))
    finished = await over.run("Echo.")
    assert (finished.reason, finished.steps, len(provider.calls)) == (Finish.HISTORY_LIMIT, 1, 1)
    assert_valid_history(over.history)


async def test_agent_gate_refuses_a_call_and_can_end_the_run_with_a_reason():
    echo = Echo()
    asked: list[str] = []

    async def gate(tool_call: ToolCall) -> ToolOutput | None:
        asked.append(tool_call.id)
        if tool_call.arguments.get("text") == "rm -rf /":
            agent.request_finish(Finish.PERMISSION_DENIALS)
            return ToolOutput.error("denied by the permission rules")
        return None

    turn = calls_turn(call("c1", "echo", text="ok"), call("c2", "echo", text="rm -rf /"))
    provider = MockStreamProvider([turn, "unused"])
    agent = Agent(provider, [echo], gate=gate)
    finished = await agent.run("Go.")
    assert (finished.reason, finished.steps) == (Finish.PERMISSION_DENIALS, 1)
    assert asked == ["c1", "c2"]
    assert echo.seen == ["ok"]
    assert results_in(agent.history) == [
        ("c1", "ok", False),
        ("c2", "denied by the permission rules", True),
    ]


async def test_agent_request_finish_from_a_tool_ends_with_plan_pending():
    class ExitPlan:
        definition = ToolDefinition(name="exit_plan", description="Submit the plan.")

        async def run(self, arguments: dict[str, Any]) -> ToolOutput:
            agent.request_finish(Finish.PLAN_PENDING)
            return ToolOutput.ok("plan submitted")

    provider = MockStreamProvider([calls_turn(call("c1", "exit_plan"), text="My plan."), "x"])
    agent = Agent(provider, [ExitPlan()])
    finished = await agent.run("Plan it.")
    assert finished == RunFinished(Finish.PLAN_PENDING, 1, "My plan.", TokenUsage())
    # The next run is a fresh one: the request does not carry over.
    assert (await agent.run("Approved.")).reason is Finish.DONE


# ------------------------------------------------------------------ cancellation


async def test_agent_cancel_between_steps_finishes_cancelled():
    provider = MockStreamProvider([calls_turn(call("c1", "echo", text="a"), text="One."), "Two."])
    agent = Agent(provider, [Echo()])
    agent.sink.add(lambda event: agent.cancel() if isinstance(event, ToolResult) else None)
    events = await collect(agent, "Go.")
    assert events[-1] == RunFinished(Finish.CANCELLED, 1, "One.", TokenUsage())
    assert len(provider.calls) == 1
    assert results_in(agent.history) == [("c1", "a", False)]
    # A cancel() after a run does not cancel the next one.
    assert (await agent.run("Again.")).reason is Finish.DONE


async def test_agent_cancel_during_a_slow_tool_cancels_it_and_keeps_the_history_valid():
    slow, echo = Slow(), Echo()
    turn = calls_turn(
        call("c1", "echo", text="first"), call("c2", "slow"), call("c3", "echo", text="x")
    )
    provider = MockStreamProvider([turn, "unused"])
    agent = Agent(provider, [slow, echo])

    async def cancel_when_started() -> None:
        await slow.started.wait()
        agent.cancel()

    canceller = asyncio.create_task(cancel_when_started())
    try:
        events = await collect(agent, "Go.")
    finally:
        canceller.cancel()
    assert slow.cancelled and not slow.finished
    assert echo.seen == ["first"]
    assert events[-1] == RunFinished(Finish.CANCELLED, 1, "", TokenUsage())
    assert_valid_history(agent.history)
    assert results_in(agent.history) == [
        ("c1", "first", False),
        ("c2", CANCELLED.content, True),
        ("c3", CANCELLED.content, True),
    ]


async def test_agent_cancel_during_a_stream_stops_the_stream():
    provider = SlowStream()
    agent = Agent(provider)
    events = []
    async for event in agent.events("Think."):
        events.append(event)
        if event == TextDelta("Thinking"):
            # Due long before the stream's 8-s wait ends: the cancel comes while it waits.
            asyncio.get_running_loop().call_later(0.05, agent.cancel)
    assert events == [TextDelta("Thinking"), RunFinished(Finish.CANCELLED, 1, "", TokenUsage())]
    assert provider.closed
    assert agent.history == [UserMessage(content="Think.")]


async def test_agent_task_cancelled_from_outside_tells_observers_and_reraises():
    slow = Slow()
    seen: list[Any] = []
    first = calls_turn(call("c1", "echo", text="a"), text="One.", usage=TokenUsage(input_tokens=7))
    second = calls_turn(call("c2", "slow"), call("c3", "echo", text="b"), text="Two.")
    provider = MockStreamProvider([first, second, "unused"])
    agent = Agent(provider, [slow, Echo()], observers=[seen.append])
    task = asyncio.create_task(agent.run("Go."))
    started = asyncio.create_task(slow.started.wait())
    await asyncio.wait([task, started], return_when=asyncio.FIRST_COMPLETED)
    if task.done():  # it ended before the slow tool even started
        started.cancel()
        await task
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled
    assert seen[-1] == RunFinished(Finish.CANCELLED, 2, "Two.", TokenUsage(input_tokens=7))
    assert_valid_history(agent.history)
    assert results_in(agent.history) == [
        ("c1", "a", False),
        ("c2", CANCELLED.content, True),
        ("c3", CANCELLED.content, True),
    ]


async def test_agent_not_implemented_error_from_a_tool_propagates():
    provider = MockStreamProvider([calls_turn(call("c1", "unfinished")), "unused"])
    agent = Agent(provider, [Unfinished()])
    with pytest.raises(StubReached, match="unfinished tool"):
        await agent.run("Go.")
    assert_valid_history(agent.history)


# ------------------------------------------------------------------ truncation


def split_note(result: str) -> tuple[str, str]:
    kept, marker, note = result.rpartition(NOTE)
    assert marker, f"no truncation note in {result[-200:]!r}"
    return kept, marker.lstrip("\n") + note


def test_agent_truncate_output_leaves_text_within_the_limit_alone():
    text = "naïve café\n" * 3  # 13 bytes a line
    assert truncate_output(text, len(text.encode())) == text
    kept, _ = split_note(truncate_output(text, len(text.encode()) - 1))
    assert kept == "naïve café\n" * 2


def test_agent_truncate_output_never_splits_a_utf8_character():
    text = "price: " + "€" * 10  # "price: " is 7 bytes, each euro sign 3
    for limit, euros in [(7, 0), (8, 0), (9, 0), (10, 1), (11, 1), (12, 1), (13, 2)]:
        kept, _ = split_note(truncate_output(text, limit))
        assert kept == "price: " + "€" * euros, limit


def test_agent_truncate_output_keeps_combining_marks_with_their_base():
    text = "cafe\u0301 cre\u0300\u0301me"  # é and è as base letters with combining accents
    kept, _ = split_note(truncate_output(text, 5))  # the cut would fall before U+0301
    assert kept == "caf"
    kept, _ = split_note(truncate_output(text, 13))  # before the second of two marks
    assert kept == "cafe\u0301 cr"


def test_agent_truncate_output_prefers_the_last_line_end_within_the_limit():
    lines = "".join(f"{n:03d} some output\n" for n in range(10))  # 16 bytes a line
    kept, _ = split_note(truncate_output(lines, 60))
    assert kept == lines[:48]
    # A line end that would keep less than half the limit is not worth it: cut mid-line.
    text = "short\n" + "x" * 200
    kept, _ = split_note(truncate_output(text, 40))
    assert kept == text[:40]


def test_agent_truncate_output_note_says_how_much_was_cut_and_how_to_see_it():
    text = "".join(f"line {n}\n" for n in range(1, 11))  # 7 bytes each, 8 for line 10
    result = truncate_output(text, 21)
    assert result == (
        "line 1\nline 2\nline 3\n\n[output truncated: the last 50 bytes (7 lines) are not shown. "
        "To see them, ask for a smaller part: read the file with offset and limit, "
        "or narrow the command or the search.]"
    )
    one = truncate_output("a" * 5000 + "b" * 1000, 5000)
    assert one.endswith(
        "the last 1,000 bytes (1 line) are not shown. To see them, ask for a "
        "smaller part: read the file with offset and limit, "
        "or narrow the command or the search.]"
    )


@given(text=st.text(), limit=st.integers(min_value=1, max_value=64))
@example(text="ab\n\u0301cd", limit=5)  # a line end cut would leave the mark first
@example(text="€\u0301" * 4, limit=8)
def test_agent_truncate_output_properties(text, limit):
    result = truncate_output(text, limit)
    result.encode("utf-8")  # valid text: no half characters, no lone surrogates
    if len(text.encode()) <= limit:
        assert result == text
        return
    kept, note = split_note(result)
    assert text.startswith(kept)
    assert len(kept.encode()) <= limit
    rest = text[len(kept) :]
    assert not unicodedata.category(rest[0]).startswith("M") or not kept
    cut = len(text.encode()) - len(kept.encode())
    assert note.startswith(f"[output truncated: the last {cut:,} bytes (")


async def test_agent_huge_tool_output_is_truncated_in_the_history_and_the_event():
    provider = MockStreamProvider([calls_turn(call("c1", "huge")), "Too much."])
    agent = Agent(provider, [Huge()], limits=Limits(max_output_bytes=2000))
    events = await collect(agent, "Print it.")
    [result] = [e for e in events if isinstance(e, ToolResult)]
    [(_, content, is_error)] = results_in(agent.history)
    assert content == result.output and not is_error
    kept, note = split_note(content)
    assert 1000 <= len(kept.encode()) <= 2000 and kept.endswith("\n")
    assert kept.startswith("line 0: éééé")
    assert "lines) are not shown" in note
    # The model saw the truncated text, not the whole output.
    sent = provider.calls[1].messages[-1]
    assert isinstance(sent, ToolResultMessage) and sent.content == content


async def test_agent_usage_events_add_up_to_the_total():
    usages = [TokenUsage(input_tokens=n * 100, output_tokens=n) for n in (1, 2, 3)]
    script: list[AssistantTurn | list[StreamEvent]] = [
        calls_turn(call("c1", "echo", text="a"), usage=usages[0]),
        calls_turn(call("c2", "echo", text="b"), usage=usages[1]),
        [TextDelta("End."), Done(StopReason.END_TURN), UsageUpdate(usages[2])],
    ]
    events = await collect(Agent(MockStreamProvider(script), [Echo()]), "Go.")
    steps = [e for e in events if isinstance(e, StepUsage)]
    assert steps == [StepUsage(n, usage) for n, usage in enumerate(usages, start=1)]
    assert events[-1] == RunFinished(Finish.DONE, 3, "End.", usages[0] + usages[1] + usages[2])


# ------------------------------------------------------------------ over a real HTTP stream


async def test_agent_over_openrouter_cancels_a_stream_in_flight_and_runs_again(server):
    from claw.providers.openrouter import OpenRouterProvider
    from clawbook.harness.loopback import MODEL, StreamReply, chunk, sse, text_chunks, usage_body

    slow = PacedReply()  # the start of an answer, and then the server keeps the rest back
    slow.send(sse(*text_chunks("This answer takes far too long"), done=False))
    quick = sse(
        *text_chunks("Quick."),
        chunk(finish_reason="stop"),
        chunk(choices=False, usage=usage_body(10, 2)),
    )
    server.add(slow, StreamReply([quick]))
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        agent = Agent(provider)
        events: list[Any] = []
        async for event in agent.events("Slow, please."):
            events.append(event)
            if event == TextDelta("This"):
                # It ends the run once the agent waits on the network for the rest.
                asyncio.get_running_loop().call_soon(agent.cancel)
        assert events[-1].reason is Finish.CANCELLED
        assert agent.history == [UserMessage(content="Slow, please.")]
        finished = await agent.run("Quick, then.")
    assert (finished.reason, finished.text) == (Finish.DONE, "Quick.")


def test_agent_truncate_output_measures_lone_surrogates_and_obeys_small_limits():
    # A shell's undecodable byte, kept by surrogateescape: measured, never a crash.
    shell_output = "a\udcff" * 40
    cut = truncate_output(shell_output, 20)
    kept = cut.partition("\n")[0]
    assert shell_output.startswith(kept) and len(kept.encode("utf-8", "surrogatepass")) <= 20
    assert truncate_output("hello", 0).startswith("\n[output truncated: the last 5 bytes")
    # A line end that keeps a third of the limit, not half of it, is not used.
    assert truncate_output("abcdefg\n" + "x" * 40, 20).startswith("abcdefg\nxxxx")
    # One that keeps exactly half of it is.
    assert truncate_output("abcdefghi\n" + "x" * 40, 20).startswith("abcdefghi\n\n[output")


def test_agent_event_sink_warning_names_the_observer_and_the_event(caplog):
    def broken_bar(event: Any) -> None:
        raise RuntimeError("bar")

    class BrokenMeter:
        def __call__(self, event: Any) -> None:
            raise RuntimeError("meter")

    sink = EventSink([broken_bar, BrokenMeter()])
    with caplog.at_level(logging.WARNING, logger="claw.events"):
        sink.emit(TextDelta("a"))
    messages = [r.getMessage() for r in caplog.records if r.name == "claw.events"]
    assert len(messages) == 2
    assert "broken_bar" in messages[0] and "TextDelta" in messages[0]
    assert "BrokenMeter" in messages[1] and "TextDelta" in messages[1]


async def test_agent_tool_result_duration_is_the_time_the_call_took():
    provider = MockStreamProvider(
        [calls_turn(call("call_1", "echo", text="hi")), AssistantTurn(text="ok")]
    )
    agent = Agent(provider, [Echo()])
    started = time.monotonic()
    events = await collect(agent, "Echo hi.")
    elapsed = time.monotonic() - started
    durations = [e.duration for e in events if isinstance(e, ToolResult)]
    assert len(durations) == 1 and 0 <= durations[0] <= elapsed


def test_agent_not_stuck_after_a_success_even_when_one_failure_is_enough():
    from claw.loop import StuckDetector

    detector = StuckDetector(after=1)
    detector.record(call("call_1", "echo", text="hi"), is_error=False)
    assert not detector.stuck
