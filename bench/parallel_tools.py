"""Benchmark: eight read-only tool calls in one turn, through the ``Agent`` with concurrency on.

Each call sleeps 100 ms (the stand-in for a slow search or a web page). A ``MockStreamProvider``
scripts one turn with the eight calls and then a text turn; ``Agent(..., concurrent=True).run``
is timed. The peer, measured in the same run: the same agent with a turn of ONE such call.
Run side by side, eight calls should cost about what one does; the target is at most 1.5×.
For context the sequential agent (``concurrent=False``, chapter 7's behaviour) is timed on the
eight calls as well: about eight times one.
"""

from __future__ import annotations

import asyncio
from statistics import median
from typing import Any

from solution.loop import Agent
from solution.streaming import MockStreamProvider
from solution.types import AssistantTurn, StopReason, ToolCall, ToolDefinition, ToolOutput

from .common import Result, timed

SLEEP = 0.1
"""How long each tool call takes, in seconds."""

CALLS = 8
"""How many read-only calls the turn makes."""


class SlowLook:
    """A read-only tool that takes ``SLEEP`` seconds and succeeds."""

    read_only = True
    definition = ToolDefinition(name="look", description="Take a slow look.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Sleep, then report."""
        await asyncio.sleep(SLEEP)
        return ToolOutput.ok("looked")


async def one_run(calls: int, concurrent: bool) -> None:
    """One agent run whose first turn makes ``calls`` calls of ``look``."""
    turn = AssistantTurn(
        tool_calls=tuple(ToolCall(id=f"c{i}", name="look", arguments={}) for i in range(calls)),
        stop_reason=StopReason.TOOL_USE,
    )
    agent = Agent(MockStreamProvider([turn, "done"]), [SlowLook()], concurrent=concurrent)
    finished = await agent.run("look around")
    if finished.reason != "done" or finished.steps != 2:
        raise RuntimeError(f"the benchmark run ended {finished.reason} after {finished.steps}")


async def measure(rounds: int) -> tuple[list[float], list[float], list[float]]:
    """Alternate: eight concurrent calls, one call, eight sequential calls."""
    many: list[float] = []
    one: list[float] = []
    sequential: list[float] = []
    await one_run(CALLS, True)  # warm up
    for _ in range(rounds):
        many.append(await timed(lambda: one_run(CALLS, True)))
        one.append(await timed(lambda: one_run(1, True)))
        sequential.append(await timed(lambda: one_run(CALLS, False)))
    return many, one, sequential


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is median(eight at once) / median(one)."""
    rounds = 3 if quick else 10
    many, one, sequential = asyncio.run(measure(rounds))
    many_median, one_median, sequential_median = median(many), median(one), median(sequential)
    return Result(
        benchmark="Parallel read-only tools",
        metric=f"{CALLS} read-only calls of {SLEEP * 1000:.0f} ms in one turn / one call",
        value=many_median / one_median,
        unit="×",
        target=1.5,
        better="lower",
        context={
            f"{CALLS} calls, concurrent": f"median {many_median * 1000:.1f} ms per run",
            "1 call": f"median {one_median * 1000:.1f} ms per run",
            f"{CALLS} calls, sequential": f"median {sequential_median * 1000:.1f} ms per run "
            f"({sequential_median / one_median:.1f}× one call)",
        },
        raw={
            "rounds": rounds,
            "many_median_seconds": many_median,
            "one_median_seconds": one_median,
            "sequential_median_seconds": sequential_median,
            "many_seconds": many,
            "one_seconds": one,
            "sequential_seconds": sequential,
        },
    )
