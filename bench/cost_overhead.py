"""Benchmark: what chapter 17's cost tracking adds to a step of the agent loop.

A ``PreflightAgent`` over a ``MockStreamProvider`` plays N scripted steps, each a short text
and a call of a tool that does nothing, with OpenRouter-style usage (a reported cost, cached
and reasoning tokens); the runs alternate between the bare agent and the same agent with a
``CostTracker`` observer and a ``Budget`` preflight (priced from a ``ModelCatalog``, for the
steps without a reported cost). The headline is the tracker's and the budget's own time per
step, measured directly in the same run (the tracker fed the same ``StepUsage`` events, the
budget asked with the same history), as a percentage of the bare loop's time per step. The
end-to-end difference between the two agents is reported too; it is noisier, being the
difference of two close numbers.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from statistics import median
from typing import Any

from solution.cost import Budget, CostTracker
from solution.events import StepUsage
from solution.loop import Limits
from solution.models import ModelCatalog, ModelInfo
from solution.preflight import PreflightAgent
from solution.streaming import MockStreamProvider
from solution.types import (
    AssistantTurn,
    Message,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    UserMessage,
)

from .common import Result, timed

MODEL = "bench/model"
NOOP = ToolDefinition(name="noop", description="Do nothing.")


class NoopTool:
    """A tool with no parameters that does nothing and succeeds."""

    definition = NOOP

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Return an empty successful result."""
        return ToolOutput.ok("")


def usage(step: int) -> TokenUsage:
    """Step ``step``'s usage: every other step reports its cost, the others are priced."""
    return TokenUsage(
        input_tokens=1000 + 50 * step,
        output_tokens=40,
        cached_input_tokens=900,
        reasoning_tokens=10,
        cost=Decimal("0.00123") if step % 2 else None,
    )


def script(steps: int) -> list[AssistantTurn]:
    """``steps`` turns that each say a little and call ``noop``, then a final text turn."""
    turns = [
        AssistantTurn(
            text="Looking.",
            tool_calls=(ToolCall(id=f"call_{n}", name="noop"),),
            usage=usage(n),
        )
        for n in range(steps)
    ]
    turns.append(AssistantTurn(text="done", usage=usage(steps)))
    return turns


def catalog() -> ModelCatalog:
    """A catalog that knows the benchmark's model, as if loaded from the model list."""
    known = ModelCatalog("http://127.0.0.1/unused", Path("unused-cache.json"))
    known.models[MODEL] = ModelInfo(
        MODEL, 200_000, Decimal("0.000003"), Decimal("0.000015"), Decimal("0.0000003")
    )
    return known


async def agent_seconds(steps: int, *, tracked: bool) -> float:
    """Seconds a run of ``steps`` steps takes, with or without the tracker and the budget."""
    agent = PreflightAgent(
        MockStreamProvider(script(steps)), [NoopTool()], limits=Limits(max_steps=steps + 1)
    )
    if tracked:
        tracker = CostTracker(MODEL, catalog())
        agent.sink.add(tracker)
        agent.preflight.append(Budget(Decimal(1000), tracker).check)

    async def action() -> None:
        finished = await agent.run("go")
        assert finished.steps == steps + 1 and finished.reason == "done", finished

    return await timed(action)


async def parts_seconds(steps: int) -> float:
    """Seconds the tracker and the budget take for ``steps`` steps, alone."""
    tracker = CostTracker(MODEL, catalog())
    budget = Budget(Decimal(1000), tracker)
    events = [StepUsage(n, usage(n)) for n in range(steps)]
    history: list[Message] = [UserMessage(content="go")]
    for turn in script(steps):
        history += [turn.to_message(), *(ToolOutput.ok("").to_message(c) for c in turn.tool_calls)]
    sent = [history[: 1 + 2 * n] for n in range(steps)]  # what each call sends, cut beforehand

    async def action() -> None:
        for event, messages in zip(events, sent, strict=True):
            budget.check(messages)
            tracker(event)

    return await timed(action)


async def measure(steps: int, warmup: int, repetitions: int) -> dict[str, list[float]]:
    """Per-step seconds of each variant, interleaved round by round."""
    times: dict[str, list[float]] = {"bare": [], "tracked": [], "parts": []}
    for round_ in range(warmup + repetitions):
        measured = {
            "bare": await agent_seconds(steps, tracked=False) / (steps + 1),
            "tracked": await agent_seconds(steps, tracked=True) / (steps + 1),
            "parts": await parts_seconds(steps) / steps,
        }
        if round_ >= warmup:
            for key, seconds in measured.items():
                times[key].append(seconds)
    return times


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is the tracker's share of a step, in percent."""
    steps = 100 if quick else 300
    warmup, repetitions = (1, 3) if quick else (2, 9)
    times = asyncio.run(measure(steps, warmup, repetitions))
    bare, tracked, parts = (median(times[key]) * 1e6 for key in ("bare", "tracked", "parts"))
    share = 100 * parts / bare
    return Result(
        benchmark="Cost tracking overhead",
        metric=f"tracker + budget time / loop time per step, N={steps}",
        value=share,
        unit="%",
        target=2.0,
        better="lower",
        context={
            "loop per step": f"{bare:.1f} µs (PreflightAgent over MockStreamProvider, a text "
            "and a no-op tool call per step)",
            "tracker + budget per step": f"{parts:.2f} µs, measured alone on the same events "
            "and histories",
            "end to end": f"{tracked:.1f} µs per step with them in the loop, "
            f"{100 * (tracked - bare) / bare:+.1f} % (the difference of two close medians)",
            "repetitions": f"{repetitions} after {warmup} warm-up",
        },
        raw={
            "steps": steps,
            "bare_us_per_step": bare,
            "tracked_us_per_step": tracked,
            "parts_us_per_step": parts,
            "share_percent": share,
        },
    )
