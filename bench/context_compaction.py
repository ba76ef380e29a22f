"""Benchmark: chapter 18's compaction on long histories, and its token estimates.

**Planning.** A history of 10,000 messages (a system prompt, a task, then rounds of an
assistant turn with a tool call and its result; one result in ten is 12,000 characters, so
trimming has work to do) goes through ``ContextWindow.compact(..., force=True)``: the estimate,
the plan, the trimming, the summary message and the new history, everything but the model,
whose place a summarizer that answers at once takes. The headline is the median time of 15 runs
(target: at most 50 ms). Its peer is the same work on a history of 1,000 messages in the same
run: the ratio of the two shows whether the work grows linearly (target: at most 12× for 10×
the messages).

**Estimates.** The recorded sessions of ``tests/data/context/sessions.json`` (counted by a real
tokenizer) are replayed through ``TokenCounter``: the median relative error of its estimate of
each request after the first (target: at most 10 %), next to the error of dividing by four.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from solution.context import ContextWindow, TokenCounter, request_chars
from solution.types import Message, ToolCall, load_messages

from .common import Result, timed

SESSIONS = Path(__file__).resolve().parents[1] / "tests" / "data" / "context" / "sessions.json"


def make_history(messages: int) -> list[Message]:
    """A valid history of about ``messages`` messages: rounds of one call and its result."""
    history: list[Message] = [Message.system("You are claw."), Message.user("Fix the build.")]
    n = 0
    while len(history) < messages:
        call = ToolCall(id=f"call_{n}", name="read", arguments={"path": f"src/m{n}.py"})
        body = ("def f():\n    return 1\n" * 600) if n % 10 == 0 else f"ok {n}\n" * 20
        history += [
            Message.assistant(f"Step {n}.", tool_calls=[call]),
            Message.tool_result(call.id, body),
        ]
        n += 1
    return history


async def instant_summary(messages: Sequence[Message], focus: str = "") -> str:
    """The model's place: a short summary, at once."""
    return f"{len(messages)} earlier messages: files read, all fine."


async def plan_ms(history: list[Message], repeats: int) -> list[float]:
    """Milliseconds of each of ``repeats`` compactions of ``history`` (after one warm-up)."""
    window = ContextWindow(1_000, instant_summary, keep=4)

    async def once() -> None:
        compaction = await window.compact(history, force=True)
        if compaction is None or compaction.event.removed == 0:
            raise RuntimeError("the benchmark's history was not compacted")

    await once()
    return [1000 * await timed(once) for _ in range(repeats)]


def estimate_errors() -> tuple[list[float], list[float]]:
    """Relative errors of the anchored estimate and of characters / 4 on the recorded sessions."""
    anchored: list[float] = []
    plain: list[float] = []
    for session in json.loads(SESSIONS.read_text(encoding="utf-8"))["sessions"]:
        messages = load_messages(json.dumps(session["messages"]))
        counter = TokenCounter()
        for request in session["requests"]:
            sent, truth = messages[: request["messages"]], request["prompt_tokens"]
            if counter.sent:
                anchored.append(abs(counter.estimate(sent, session["model"]) - truth) / truth)
            plain.append(abs(math.ceil(request_chars(sent) / 4) - truth) / truth)
            counter.observe(sent, truth, session["model"])
    return anchored, plain


def run(quick: bool = False) -> list[Result]:
    """Run the benchmark: planning time, its growth, and the estimate's error."""
    repeats = 3 if quick else 15
    big, small = make_history(10_000), make_history(1_000)
    big_ms = asyncio.run(plan_ms(big, repeats))
    small_ms = asyncio.run(plan_ms(small, repeats))
    big_median, small_median = statistics.median(big_ms), statistics.median(small_ms)
    anchored, plain = estimate_errors()
    history = f"{len(big):,} messages, {request_chars(big) / 1e6:.1f} M characters"
    return [
        Result(
            benchmark="compaction planning",
            metric="median time to compact 10,000 messages (model excluded)",
            value=big_median,
            unit="ms",
            target=50.0,
            better="lower",
            context={"history": history, "best": f"{min(big_ms):.1f} ms"},
            raw={"ms_10k": big_ms},
        ),
        Result(
            benchmark="compaction growth",
            metric="time for 10,000 messages / time for 1,000",
            value=big_median / small_median,
            unit="×",
            target=12.0,
            better="lower",
            context={"10,000": f"{big_median:.1f} ms", "1,000": f"{small_median:.2f} ms"},
            raw={"ms_10k": big_ms, "ms_1k": small_ms},
        ),
        Result(
            benchmark="token estimate error",
            metric="median relative error on the recorded sessions",
            value=100 * statistics.median(anchored),
            unit="%",
            target=10.0,
            better="lower",
            context={
                "worst": f"{100 * max(anchored):.1f} %",
                "characters / 4": f"median {100 * statistics.median(plain):.1f} %, "
                f"worst {100 * max(plain):.1f} %",
                "requests": f"{len(anchored)}",
            },
            raw={"anchored": anchored, "plain": plain},
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(result.benchmark, f"{result.value:.2f} {result.unit}", result.context)
