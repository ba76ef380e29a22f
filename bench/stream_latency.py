"""Benchmark 3: how long a piece of text takes from the server's socket to the agent's consumer.

A ``LoopbackServer`` streams a text reply as one complete SSE event per piece, ``pause``
seconds apart, recording ``time.perf_counter()`` just after each piece is written
(``StreamReply.sent_at``). A ``StreamingAgent`` over ``OpenRouterProvider`` reads it, and the
consumer of ``agent.run(...)`` records the time each ``TextDelta`` reaches it. The k-th
``TextDelta`` came in the k-th piece, so the difference is the latency through HTTP parsing,
SSE decoding, JSON, ``chunk_events``, the accumulator and both async generators.
"""

from __future__ import annotations

import asyncio
import time
from statistics import median

from clawbook.harness.loopback import LoopbackServer, StreamReply, chunk, sse, usage_body
from solution.agent import AgentFinished, StreamingAgent
from solution.providers.openrouter import OpenRouterProvider
from solution.streaming import TextDelta

from .common import Result, p95

MODEL = "bench/model"


def pieces_for(count: int) -> tuple[list[bytes], str]:
    """``count`` text pieces, each one whole SSE event, then finish, usage and ``[DONE]``."""
    texts = [f"word{n} " for n in range(count)]
    pieces = [sse(chunk(text), done=False) for text in texts]
    pieces.append(sse(chunk(finish_reason="stop"), done=False))
    pieces.append(sse(chunk(choices=False, usage=usage_body(10, count))))
    return pieces, "".join(texts)


async def one_run(
    server: LoopbackServer, provider: OpenRouterProvider, count: int, pause: float
) -> list[float]:
    """Seconds from each text piece leaving the server to its ``TextDelta`` reaching us."""
    pieces, text = pieces_for(count)
    reply = StreamReply(pieces=pieces, pause=pause)
    server.add(reply)
    agent = StreamingAgent(provider)
    received: list[float] = []
    finished = None
    async for event in agent.run("go"):
        if isinstance(event, TextDelta):
            received.append(time.perf_counter())
        elif isinstance(event, AgentFinished):
            finished = event.result
    assert finished is not None and finished.text == text, "the agent read the wrong text"
    assert len(received) == count, f"{len(received)} text deltas for {count} pieces"
    # Piece k carried the k-th TextDelta; the last pieces (finish, usage) carried none.
    return [arrived - sent for arrived, sent in zip(received, reply.sent_at[:count], strict=True)]


async def measure(count: int, pause: float, warmup: int, repetitions: int) -> list[float]:
    """Latencies in seconds of every text piece of ``repetitions`` runs, after warm-up."""
    latencies: list[float] = []
    with LoopbackServer() as server:
        provider = OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-bench")
        try:
            for round_ in range(warmup + repetitions):
                run_latencies = await one_run(server, provider, count, pause)
                if round_ >= warmup:
                    latencies += run_latencies
        finally:
            await provider.aclose()
    return latencies


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is the median latency in milliseconds."""
    count, pause = 200, 0.002
    warmup, repetitions = (1, 1) if quick else (1, 5)
    seconds = asyncio.run(measure(count, pause, warmup, repetitions))
    latencies = [value * 1e3 for value in seconds]
    middle, high = median(latencies), p95(latencies)
    return Result(
        benchmark="Streaming latency",
        metric="median, socket → consumer",
        value=middle,
        unit="ms",
        target=5.0,
        better="lower",
        context={
            "latency": f"median {middle:.3f} ms, p95 {high:.3f} ms, max {max(latencies):.3f} ms "
            f"over {len(latencies):,} pieces",
            "reply": f"{count} text pieces, one SSE event each, {pause * 1e3:g} ms apart, "
            f"read by StreamingAgent over OpenRouterProvider",
            "repetitions": f"{repetitions} run(s) after {warmup} warm-up",
        },
        raw={
            "pieces": len(latencies),
            "median_ms": middle,
            "p95_ms": high,
            "max_ms": max(latencies),
            "min_ms": min(latencies),
        },
    )
