"""ch18 · Context management in the running agent: compaction before each request.

A scripted session whose history would overflow a small window runs through the real
``Agent``: claw compacts twice, every request fits, the task finishes, and every request
still carries the system prompt and the first task. The provider here reports prompt tokens
the way a real one does (its own count, in its usage), so the estimate is calibrated on it.
"""

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from context_histories import assert_valid_for_every_provider

from claw.agent import Finish
from claw.context import SUMMARY_PROMPT, ContextWindow, summarize_with
from claw.events import Compacted, Event, StepUsage
from claw.loop import Agent
from claw.streaming import MockStreamProvider, StreamEvent, UsageUpdate
from claw.types import (
    AssistantTurn,
    Message,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
)

WINDOW = 2_000
"""The model's window in this session, in tokens: small, so a short task overflows it."""


def tokens_of(messages: Sequence[Message]) -> int:
    """This provider's tokenizer: three characters a token, and ten for each message's frame."""
    size = 0
    for message in messages:
        size += len(message.text) + 30  # 30 characters of framing: 10 tokens
        for call in getattr(message, "tool_calls", ()):
            size += len(call.name) + len(json.dumps(call.arguments))
    return size // 3


class ReportingProvider(MockStreamProvider):
    """Streams the scripted turns and reports the prompt tokens of each request it got."""

    def __init__(self, script: list[AssistantTurn | str]) -> None:
        super().__init__(script)
        self.prompt_tokens: list[int] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        tokens = tokens_of(messages)
        self.prompt_tokens.append(tokens)
        async for event in super().stream(messages, tools):
            if isinstance(event, UsageUpdate):
                event = UsageUpdate(TokenUsage(input_tokens=tokens, output_tokens=20))
            yield event


class Logs:
    """A tool that answers each call with 1,200 characters of build log."""

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="logs", description="Show a build log.").param(
            "part", "integer", "Which part."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        part = arguments["part"]
        return ToolOutput.ok("\n".join(f"[part {part}] step {n}: ok" for n in range(60))[:1_200])


def read_logs(parts: int) -> list[AssistantTurn | str]:
    """The model reads ``parts`` parts of the log, one per turn, then answers."""
    turns: list[AssistantTurn | str] = [
        AssistantTurn(
            text=f"Reading part {n}.",
            tool_calls=(ToolCall(id=f"call_{n}", name="logs", arguments={"part": n}),),
        )
        for n in range(parts)
    ]
    return [*turns, "The build is fine: every step of every part is ok."]


async def test_context_a_session_that_would_overflow_finishes_after_compacting_twice() -> None:
    provider = ReportingProvider(read_logs(7))
    summaries = MockStreamProvider(
        ["Parts 0 to 3 of the log were read: every step ok.", "Parts 0 to 5 read: all ok."]
    )
    agent = Agent(provider, [Logs()], system="You are claw.")
    window = ContextWindow(WINDOW, summarize_with(summaries), keep=2, model="m")
    window.attach(agent)
    seen: list[Event] = []
    agent.sink.add(seen.append)
    events = [event async for event in agent.events("Check every part of the build log.")]
    finished = events[-1]
    assert finished.reason is Finish.DONE, finished  # type: ignore[union-attr]
    compactions = [e for e in events if isinstance(e, Compacted)]
    assert len(compactions) == 2, compactions
    assert [e for e in seen if isinstance(e, Compacted)] == compactions, "observers see them too"
    assert all(c.removed > 0 and c.tokens_after < c.tokens_before for c in compactions)
    without = tokens_of(_uncompacted(provider))
    assert without > WINDOW, "the task would not have fit without compaction"
    assert max(provider.prompt_tokens) <= WINDOW * 0.8, provider.prompt_tokens
    assert len(summaries.calls) == 2
    for request in provider.calls:
        assert request.messages[0].text == "You are claw."
        assert request.messages[1].text == "Check every part of the build log."
        assert_valid_for_every_provider(request.messages)
    last = provider.calls[-1].messages
    assert "Parts 0 to 5 read: all ok." in last[2].text, "the second summary replaced the first"
    assert "This is a summary of the earlier part of this conversation" in last[2].text
    assert window.counter.ratio("m") != 4.0, "calibrated on the provider's reports"
    usage_steps = [e for e in events if isinstance(e, StepUsage)]
    assert len(usage_steps) == 8


def _uncompacted(provider: ReportingProvider) -> list[Message]:
    """The history the session would have had with no compaction: every turn and result."""
    history: list[Message] = []
    for request in provider.calls:
        for message in request.messages:
            if message not in history and "This is a summary" not in message.text:
                history.append(message)
    return history


async def test_context_compact_now_on_demand_and_prepare_leaves_small_histories_alone() -> None:
    provider = ReportingProvider(read_logs(5))
    agent = Agent(provider, [Logs()], system="You are claw.")
    summaries = MockStreamProvider(["Parts 0 to 2 were read."])
    window = ContextWindow(1_000_000, summarize_with(summaries), keep=2)
    window.attach(agent)
    finished = await agent.run("Check the log.")
    assert finished.reason is Finish.DONE
    assert not summaries.calls, "far below the threshold: no compaction"
    assert len(provider.calls[-1].messages) == len(agent.history) - 1
    seen: list[Event] = []
    agent.sink.add(seen.append)
    before = list(agent.history)
    event = await window.compact_now(agent, focus="which parts were read")
    assert isinstance(event, Compacted) and event.removed > 0
    assert seen == [event]
    (asked,) = summaries.calls
    prompt = asked.messages[0].text
    assert prompt.startswith(SUMMARY_PROMPT)
    assert "The user asks the summary to focus on:" in prompt
    assert prompt.endswith(": which parts were read"), "the focus ends the prompt"
    assert len(agent.history) == event.kept < len(before)
    assert agent.history[-1] == before[-1]
    assert_valid_for_every_provider(agent.history)
    again = ContextWindow(1_000_000, summarize_with(summaries), keep=20)
    assert await again.compact_now(agent) is None, "too few turns for keep=20: nothing to do"
