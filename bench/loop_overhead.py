"""Benchmark 2: what one step of ``SimpleAgent``'s loop costs, apart from the model and tools.

A ``MockProvider`` is scripted for N turns that each call a tool doing nothing, then a final
text turn; ``SimpleAgent.run`` is timed over all of them and divided by N. The script is
built before the clock starts, so what is measured is the loop itself: the provider call,
looking up and checking the tool, running it, the result messages and the history.

For reference points, the same run also times the loop at N/10 steps, the loop over a
``ReplayProvider`` that keeps no record of its calls (``MockProvider`` snapshots the whole
history on every call, a cost that grows with N), and the "peer" baseline: N bare
``MockProvider.complete`` calls, each followed by awaiting a no-op coroutine, which is the
least any loop over this provider and tool could do.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from statistics import median
from typing import Any

from solution.agent import SimpleAgent
from solution.mock import MockProvider
from solution.types import AssistantTurn, Message, ToolCall, ToolDefinition, ToolOutput, UserMessage

from .common import Result, timed

NOOP = ToolDefinition(name="noop", description="Do nothing.")


class NoopTool:
    """A tool with no parameters that does nothing and succeeds."""

    definition = NOOP

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Return an empty successful result."""
        return ToolOutput.ok("")


class ReplayProvider:
    """A provider that hands out scripted turns and, unlike ``MockProvider``, records nothing.

    ``MockProvider`` keeps a snapshot of the history for every call, which costs time in
    proportion to the history's length; this one shows what the loop costs without that.
    """

    def __init__(self, turns: Sequence[AssistantTurn]) -> None:
        """Script ``turns``, handed out first to last."""
        self._turns = deque(turns)

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """The next scripted turn."""
        return self._turns.popleft()


async def noop() -> None:
    """A coroutine that does nothing: the least a tool call can cost."""


def script(steps: int) -> list[AssistantTurn]:
    """``steps`` turns that each call ``noop`` once, then a final text turn."""
    turns = [
        AssistantTurn(tool_calls=(ToolCall(id=f"call_{n}", name="noop"),)) for n in range(steps)
    ]
    turns.append(AssistantTurn(text="done"))
    return turns


async def agent_seconds(turns: Sequence[AssistantTurn], *, record: bool = True) -> float:
    """Seconds ``SimpleAgent.run`` takes to play ``turns`` (checked to end as scripted).

    The provider is a ``MockProvider``, or with ``record=False`` a ``ReplayProvider``.
    """
    provider = MockProvider(turns) if record else ReplayProvider(turns)
    agent = SimpleAgent(provider, [NoopTool()], max_steps=len(turns))
    outcome: list[Any] = []

    async def action() -> None:
        outcome.append(await agent.run("go"))

    seconds = await timed(action)
    result = outcome[0]
    assert result.turns == len(turns) and result.text == "done", result
    return seconds


async def peer_seconds(turns: Sequence[AssistantTurn]) -> float:
    """Seconds for the bare baseline: ``MockProvider.complete`` plus a no-op await per turn."""
    provider = MockProvider(turns)
    messages: list[Message] = [UserMessage(content="go")]
    definitions = [NOOP]

    async def action() -> None:
        for _ in range(len(turns)):
            await provider.complete(messages, definitions)
            await noop()

    return await timed(action)


async def measure(steps: int, small: int, warmup: int, repetitions: int) -> dict[str, list[float]]:
    """Per-step seconds of each variant, the variants interleaved round by round.

    ``agent``: the headline, N steps; ``agent_small``: ``small`` steps; ``replay``: N steps
    with a provider that records nothing; ``peer``: the bare baseline.
    """
    turns, few = script(steps), script(small)
    times: dict[str, list[float]] = {"agent": [], "agent_small": [], "replay": [], "peer": []}
    for round_ in range(warmup + repetitions):
        measured = {
            "agent": await agent_seconds(turns) / steps,
            "agent_small": await agent_seconds(few) / small,
            "replay": await agent_seconds(turns, record=False) / steps,
            "peer": await peer_seconds(turns) / steps,
        }
        if round_ >= warmup:
            for key, seconds in measured.items():
                times[key].append(seconds)
    return times


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is the median per-step time at N steps, in µs."""
    steps, small = (300, 30) if quick else (1000, 100)
    warmup, repetitions = (1, 3) if quick else (2, 9)
    times = asyncio.run(measure(steps, small, warmup, repetitions))
    agent, agent_small, replay, peer = (
        median(times[key]) * 1e6 for key in ("agent", "agent_small", "replay", "peer")
    )
    return Result(
        benchmark="Agent-loop overhead",
        metric=f"SimpleAgent per step, N={steps:,}",
        value=agent,
        unit="µs",
        target=100.0,
        better="lower",
        context={
            "per step": f"{agent:.1f} µs median at N={steps:,} (best "
            f"{min(times['agent']) * 1e6:.1f} µs); {agent_small:.1f} µs at N={small:,} "
            "(the history grows with N)",
            "without recording": f"{replay:.1f} µs per step at N={steps:,} with a provider "
            "that keeps no snapshot of the history (MockProvider keeps one per call)",
            "peer baseline": f"{peer:.1f} µs per step (MockProvider.complete + no-op await); "
            f"the loop costs {agent / peer:.0f}× that",
            "repetitions": f"{repetitions} after {warmup} warm-up",
        },
        raw={
            "steps": steps,
            "agent_us_per_step": agent,
            "agent_small_steps": small,
            "agent_small_us_per_step": agent_small,
            "replay_us_per_step": replay,
            "peer_us_per_step": peer,
            "agent_s_per_step": times["agent"],
            "peer_s_per_step": times["peer"],
        },
    )
