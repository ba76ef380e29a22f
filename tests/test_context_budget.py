"""ch18 · Compaction and chapter 17's budget share one seam, in order: compact, then check.

Before each request, ``PreflightAgent.before_request`` first lets chapter 18's ``prepare``
make the history smaller, and only then asks chapter 17's budget what the call will cost. The
budget so prices the request that will really be sent: a session whose uncompacted history
would be too dear goes on once compaction has cut it down.
"""

from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from typing import Any

from claw.agent import Finish
from claw.context import ContextWindow
from claw.cost import Budget, CostTracker
from claw.events import Compacted, Event
from claw.preflight import PreflightAgent
from claw.streaming import MockStreamProvider, StreamEvent, UsageUpdate
from claw.types import (
    AssistantTurn,
    Message,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
)

PRICE = Decimal("0.000001")
"""Dollars per prompt token, as the provider's reported costs imply."""
BIG = 40_000
"""Characters of the first tool result: about 10,000 tokens until it is trimmed."""


class PricedProvider(MockStreamProvider):
    """Streams the script; reports each request's prompt tokens (4 characters a token) and cost."""

    def __init__(self, script: list[AssistantTurn | str]) -> None:
        super().__init__(script)
        self.prompt_tokens: list[int] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        tokens = sum(len(message.text) + 40 for message in messages) // 4
        self.prompt_tokens.append(tokens)
        async for event in super().stream(messages, tools):
            if isinstance(event, UsageUpdate):
                event = UsageUpdate(TokenUsage(input_tokens=tokens, cost=tokens * PRICE))
            yield event


class Cat:
    """A tool ``cat``: the file ``big`` is ``BIG`` characters long, any other one is short."""

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="cat", description="Show a file.").param(
            "path", "string", "The file."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        if arguments["path"] == "big":
            return ToolOutput.ok("\n".join(f"line {n}: ok" for n in range(BIG // 10))[:BIG])
        return ToolOutput.ok("short file")


def cat(path: str, call_id: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=(ToolCall(id=call_id, name="cat", arguments={"path": path}),))


async def session(limit: Decimal) -> tuple[PricedProvider, list[Event]]:
    """Read ``big``, then a short file, then answer; compacting at 1,000 tokens; ``limit`` $."""
    provider = PricedProvider([cat("big", "c1"), cat("small", "c2"), "Both files are fine."])
    tracker = CostTracker("m")
    agent = PreflightAgent(provider, [Cat()], system="You are claw.", observers=[tracker])
    window = ContextWindow(1_250, unused_summary, threshold=0.8, keep=1, model="m")
    window.attach(agent)
    budget = Budget(limit, tracker)
    agent.preflight.append(budget.check)
    events = [event async for event in agent.events("Check both files.")]
    return provider, events


async def unused_summary(messages: Sequence[Message], focus: str = "") -> str:
    raise AssertionError("trimming the old tool result is enough here; nothing is summarised")


async def test_context_is_compacted_before_the_budget_prices_the_next_request() -> None:
    # The second request carries the whole 30,000-character result: about 7,600 tokens. Before
    # the third, chapter 18 trims that result (it is in an older turn), so the request is
    # under 1,000 tokens. A budget with room for that, but not for 7,600 more tokens, must let
    # it go: the budget is asked after the compaction, about what is really sent.
    limit = Decimal("0.0120")
    provider, events = await session(limit)

    finished = events[-1]
    assert [type(e).__name__ for e in events].count("Compacted") == 1, events
    [compacted] = [e for e in events if isinstance(e, Compacted)]
    assert compacted.trimmed == 1 and compacted.tokens_after < compacted.tokens_before
    assert finished.reason is Finish.DONE, finished  # type: ignore[union-attr]
    assert len(provider.prompt_tokens) == 3
    second, third = provider.prompt_tokens[1:]
    uncompacted_third = second  # at least everything the second request carried
    assert (sum(provider.prompt_tokens[:2]) + uncompacted_third) * PRICE > limit
    assert third < 1_000 < second, provider.prompt_tokens
    assert sum(provider.prompt_tokens) * PRICE <= limit


async def test_context_budget_still_stops_a_request_too_dear_even_after_compaction() -> None:
    # $0.0084 lets the second request go (spent $0.00003, estimated $0.0082), but not the third
    # (spent $0.0076, estimated $0.0010 once compacted).
    provider, events = await session(Decimal("0.0084"))

    finished = events[-1]
    assert finished.reason is Finish.BUDGET, finished  # type: ignore[union-attr]
    assert finished.steps == 2  # type: ignore[union-attr]
    assert len(provider.prompt_tokens) == 2
    assert any(isinstance(e, Compacted) for e in events), "compacted first, then stopped"
