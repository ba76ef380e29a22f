"""Benchmark 1: how fast claw reads a long streamed reply, compared with the ``openai`` SDK.

One long reply (thousands of chunks: text, then two parallel tool calls whose JSON arguments
arrive in hundreds of interleaved fragments, a finish chunk and a usage chunk, with keep-alive
comments sprinkled in) is served by a ``LoopbackServer`` in network-sized pieces. claw reads
it with ``OpenRouterProvider.stream_turn``; the SDK reads it with
``AsyncOpenAI.chat.completions.create(stream=True)``, assembling text and arguments the usual
way. Both must produce the same turn. The two alternate, and the medians are compared.

The server runs in a process of its own. In the same process its thread would take the GIL
from whichever client is reading, and the cost of serving would be added to both: a fixed
amount that hides most of the difference between a fast reader and a slow one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from statistics import median
from typing import Any

import openai

from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    sse,
    usage_body,
)
from solution.providers.openrouter import OpenRouterProvider
from solution.types import AssistantTurn, UserMessage

from .common import Result, timed

MODEL = "bench/model"
KEEP_ALIVE = ": OPENROUTER PROCESSING\n\n"
WORDS = [
    *("the", "agent", "reads", "a", "file,", "edits", "it,", "runs", "tests", "and", "reports"),
    *("streaming", "bytes", "arrive", "in", "pieces", "of", "any", "size"),
    *("naïve", "café", "déjà", "vu", "→", "✓", "日本語", "🚀"),
]
"""Words for the text and arguments; some are non-ASCII, so pieces cut UTF-8 characters."""


@dataclass(frozen=True)
class Workload:
    """The reply to serve and what a correct client must make of it."""

    pieces: list[bytes]
    """The body, cut into the pieces the server writes one by one."""
    chunks: int
    """How many ``chat.completion.chunk`` events the body holds."""
    text: str
    arguments: list[dict[str, Any]]
    """The arguments of each tool call, by index."""

    @property
    def size(self) -> int:
        """The body's length in bytes."""
        return sum(len(piece) for piece in self.pieces)


def network_pieces(
    data: bytes, rng: random.Random, low: int = 1024, high: int = 4096
) -> list[bytes]:
    """``data`` in pieces of ``low`` to ``high`` bytes, cutting lines and UTF-8 characters."""
    pieces, start = [], 0
    while start < len(data):
        end = start + rng.randint(low, high)
        pieces.append(data[start:end])
        start = end
    return pieces


def arguments_for(name: str, rng: random.Random, size: int) -> dict[str, Any]:
    """Tool-call arguments of about ``size`` characters of JSON, with escapes and non-ASCII."""
    lines: list[str] = []
    length = 0
    while length < size:
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + ' "q"\t')
        length += len(lines[-1]) + 1
    return {"path": f"src/{name}.py", "content": "\n".join(lines), "create": True}


def build_workload(text_chunks: int, fragments_per_call: int, seed: int = 5) -> Workload:
    """A long streamed reply: text, two interleaved tool calls, finish, usage, keep-alives."""
    rng = random.Random(seed)
    text_pieces = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))) + " "
        for _ in range(text_chunks)
    ]
    arguments = [
        arguments_for("alpha", rng, fragments_per_call * 7),
        arguments_for("beta", rng, fragments_per_call * 7),
    ]
    # Cut each call's JSON into exactly ``fragments_per_call`` fragments.
    parts: list[list[str]] = []
    for value in arguments:
        encoded = json.dumps(value)
        step = len(encoded) / fragments_per_call
        bounds = [round(i * step) for i in range(fragments_per_call + 1)]
        parts.append([encoded[a:b] for a, b in itertools.pairwise(bounds)])
    events: list[dict[str, Any] | str] = [chunk("", role="assistant")]
    events += [chunk(piece) for piece in text_pieces]
    events.append(chunk(tool_calls=[call_start(0, "call_alpha", "write_file")]))
    events.append(chunk(tool_calls=[call_start(1, "call_beta", "write_file")]))
    # Parallel calls: fragments of the two interleave in random order, each in its own order.
    queues = [list(reversed(p)) for p in parts]
    while queues[0] or queues[1]:
        index = rng.choice([i for i, q in enumerate(queues) if q])
        events.append(chunk(tool_calls=[call_delta(index, queues[index].pop())]))
    events.append(chunk(finish_reason="tool_calls"))
    events.append(chunk(choices=False, usage=usage_body(1200, len(events), cost=0.0123)))
    chunks = len(events)
    with_keep_alives: list[dict[str, Any] | str] = [KEEP_ALIVE]
    for event in events:
        with_keep_alives.append(event)
        if rng.random() < 0.01:
            with_keep_alives.append(KEEP_ALIVE)
    body = sse(*with_keep_alives)
    return Workload(network_pieces(body, rng), chunks, "".join(text_pieces), arguments)


async def read_with_claw(provider: OpenRouterProvider) -> AssistantTurn:
    """One streamed turn read by claw."""
    return await provider.stream_turn([UserMessage(content="go")], [])


async def read_with_sdk(client: openai.AsyncOpenAI) -> tuple[str, list[dict[str, Any]]]:
    """One streamed turn read by the SDK: text and parsed arguments, assembled by index."""
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for part in stream:
        for choice in part.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            for call in delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": []})
                if call.id:
                    entry["id"] = call.id
                if call.function is not None:
                    if call.function.name:
                        entry["name"] = call.function.name
                    if call.function.arguments:
                        entry["arguments"].append(call.function.arguments)
    arguments = [json.loads("".join(calls[i]["arguments"])) for i in sorted(calls)]
    return "".join(text), arguments


def serve(text_chunks: int, fragments_per_call: int, count: int) -> None:
    """Serve ``count`` copies of the workload, print the address, and wait for stdin to close.

    Run by ``served`` in a child process (``python -c``).
    """
    workload = build_workload(text_chunks, fragments_per_call)
    with LoopbackServer([StreamReply(pieces=workload.pieces) for _ in range(count)]) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def served(text_chunks: int, fragments_per_call: int, count: int) -> Iterator[str]:
    """The base URL of a server in a child process that serves ``count`` copies of a workload."""
    code = (
        "from bench.sse_throughput import serve; "
        f"serve({text_chunks}, {fragments_per_call}, {count})"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        base_url = child.stdout.readline().strip()
        if not base_url:
            raise RuntimeError("the benchmark's server process did not start")
        yield base_url
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)


async def measure(
    workload: Workload, base_url: str, warmup: int, repetitions: int
) -> dict[str, list[float]]:
    """Seconds per read for claw and the SDK, alternating which goes first.

    One connection each, kept alive across reads, so the times are of streaming, not of
    connecting. The first read of each is checked against the workload before any timing.
    The server at ``base_url`` must have ``2 * (1 + warmup + repetitions)`` copies queued.
    """
    times: dict[str, list[float]] = {"claw": [], "sdk": []}
    provider = OpenRouterProvider(MODEL, base_url=base_url, api_key="sk-bench")
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)

    async def claw() -> AssistantTurn:
        return await read_with_claw(provider)

    async def sdk() -> tuple[str, list[dict[str, Any]]]:
        return await read_with_sdk(client)

    try:
        turn = await claw()
        text, arguments = await sdk()
        assert turn.text == text == workload.text, "claw and the SDK read different text"
        claw_arguments = [call.arguments for call in turn.tool_calls]
        assert claw_arguments == arguments == workload.arguments, "different tool arguments"
        for round_ in range(warmup + repetitions):
            order = [("claw", claw), ("sdk", sdk)]
            if round_ % 2:
                order.reverse()
            for name, action in order:
                seconds = await timed(action)
                if round_ >= warmup:
                    times[name].append(seconds)
    finally:
        await provider.aclose()
        await client.close()
    return times


def run(quick: bool = False) -> Result:
    """Run the benchmark and compare the median times: ratio = sdk_time / claw_time."""
    sizes = (1200, 300) if quick else (3600, 1200)
    workload = build_workload(*sizes)
    warmup, repetitions = (1, 3) if quick else (2, 9)
    with served(*sizes, count=2 * (1 + warmup + repetitions)) as base_url:
        times = asyncio.run(measure(workload, base_url, warmup, repetitions))
    claw, sdk = median(times["claw"]), median(times["sdk"])
    return Result(
        benchmark="SSE throughput",
        metric="openai SDK time / claw time",
        value=sdk / claw,
        unit="×",
        target=10.0,
        better="higher",
        context={
            "workload": f"{workload.chunks:,} chunks, {workload.size / 1024:,.0f} KiB "
            f"in {len(workload.pieces)} pieces of 1–4 KiB",
            "claw": f"{claw * 1e3:.1f} ms median = {workload.chunks / claw:,.0f} chunks/s "
            f"(best {min(times['claw']) * 1e3:.1f} ms)",
            "openai SDK": f"{sdk * 1e3:.1f} ms median = {workload.chunks / sdk:,.0f} chunks/s "
            f"(best {min(times['sdk']) * 1e3:.1f} ms)",
            "repetitions": f"{repetitions} each, alternating, after {warmup} warm-up",
        },
        raw={
            "chunks": workload.chunks,
            "bytes": workload.size,
            "claw_median_s": claw,
            "sdk_median_s": sdk,
            "claw_chunks_per_s": workload.chunks / claw,
            "sdk_chunks_per_s": workload.chunks / sdk,
            "claw_s": times["claw"],
            "sdk_s": times["sdk"],
        },
    )
