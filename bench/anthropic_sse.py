"""Benchmark: how fast claw reads a long Messages API stream, compared with the ``anthropic`` SDK.

Chapter 24's sibling of ``sse_throughput``. One long streamed Message (a thinking block of
hundreds of ``thinking_delta`` events and its ``signature_delta``, thousands of ``text_delta``
events with non-ASCII words, two tool calls whose JSON input arrives in hundreds of
``input_json_delta`` fragments each, ``ping`` events sprinkled in) is served by a
``LoopbackServer`` in network-sized pieces. claw reads it with ``AnthropicProvider.stream_turn``;
the SDK with ``AsyncAnthropic.messages.stream(...).get_final_message()``. Both must assemble the
same turn. The two alternate, and the medians are compared.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from dataclasses import dataclass
from statistics import median
from typing import Any

import anthropic

from clawbook.harness.loopback import LoopbackServer, StreamReply
from solution.providers.anthropic import AnthropicProvider
from solution.types import AssistantTurn, UserMessage

from .common import Result, timed
from .sse_throughput import WORDS, arguments_for, network_pieces

MODEL = "claude-bench"
KEY = "sk-ant-bench-0123456789"


@dataclass(frozen=True)
class Workload:
    """The stream to serve and what a correct client must make of it."""

    pieces: list[bytes]
    events: int
    """How many SSE events the body holds."""
    text: str
    thinking: str
    arguments: list[dict[str, Any]]

    @property
    def size(self) -> int:
        """The body's length in bytes."""
        return sum(len(piece) for piece in self.pieces)


def event(data: dict[str, Any]) -> str:
    """One named SSE event, as the Messages API sends it."""
    return f"event: {data['type']}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    """A ``content_block_delta`` event's data."""
    return {"type": "content_block_delta", "index": index, "delta": body}


def build_workload(text_deltas: int, fragments_per_call: int, seed: int = 24) -> Workload:
    """A long streamed Message: thinking, text, two tool calls, pings."""
    rng = random.Random(seed)

    def words(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + " "

    thinking = [words(2, 5) for _ in range(text_deltas // 4)]
    text = [words(1, 2) for _ in range(text_deltas)]
    arguments = [arguments_for(name, rng, fragments_per_call * 7) for name in ("alpha", "beta")]
    usage = {"input_tokens": 1200, "output_tokens": 1, "cache_read_input_tokens": 30000}
    message: dict[str, Any] = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    start = {"type": "thinking", "thinking": "", "signature": ""}
    events.append({"type": "content_block_start", "index": 0, "content_block": start})
    events += [delta(0, {"type": "thinking_delta", "thinking": piece}) for piece in thinking]
    events.append(delta(0, {"type": "signature_delta", "signature": "Eq" + "Qk" * 200}))
    events.append({"type": "content_block_stop", "index": 0})
    events.append(
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}
    )
    events += [delta(1, {"type": "text_delta", "text": piece}) for piece in text]
    events.append({"type": "content_block_stop", "index": 1})
    for number, value in enumerate(arguments, start=2):
        block = {"type": "tool_use", "id": f"toolu_{number}", "name": "write_file", "input": {}}
        events.append({"type": "content_block_start", "index": number, "content_block": block})
        encoded = json.dumps(value)
        step = len(encoded) / fragments_per_call
        bounds = [round(i * step) for i in range(fragments_per_call + 1)]
        events += [
            delta(number, {"type": "input_json_delta", "partial_json": encoded[a:b]})
            for a, b in itertools.pairwise(bounds)
        ]
        events.append({"type": "content_block_stop", "index": number})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(events)},
        }
    )
    events.append({"type": "message_stop"})
    with_pings: list[dict[str, Any]] = []
    for item in events:
        with_pings.append(item)
        if rng.random() < 0.01:
            with_pings.append({"type": "ping"})
    body = "".join(event(item) for item in with_pings).encode()
    return Workload(
        network_pieces(body, rng), len(with_pings), "".join(text), "".join(thinking), arguments
    )


async def read_with_sdk(client: anthropic.AsyncAnthropic) -> anthropic.types.Message:
    """One streamed Message assembled by the SDK."""
    async with client.messages.stream(
        model=MODEL, max_tokens=8192, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        return await stream.get_final_message()


def check(turn: AssistantTurn, final: anthropic.types.Message, workload: Workload) -> None:
    """Fail loudly unless claw and the SDK assembled the workload's turn."""
    text = "".join(block.text for block in final.content if block.type == "text")
    thinking = "".join(block.thinking for block in final.content if block.type == "thinking")
    calls = [block.input for block in final.content if block.type == "tool_use"]
    assert turn.text == text == workload.text, "claw and the SDK read different text"
    assert turn.reasoning == thinking == workload.thinking, "different thinking"
    assert [call.arguments for call in turn.tool_calls] == calls == workload.arguments, (
        "different tool input"
    )
    signature = next(block.signature for block in final.content if block.type == "thinking")
    assert turn.provider_blocks[0].data["signature"] == signature, "different signatures"


async def measure(workload: Workload, warmup: int, repetitions: int) -> dict[str, list[float]]:
    """Seconds per read for claw and the SDK, alternating which goes first."""
    times: dict[str, list[float]] = {"claw": [], "sdk": []}
    with LoopbackServer() as server:
        base_url = server.base_url.removesuffix("/v1")
        provider = AnthropicProvider(MODEL, base_url=base_url, api_key=KEY)
        client = anthropic.AsyncAnthropic(base_url=base_url, api_key=KEY, max_retries=0)

        async def claw() -> AssistantTurn:
            server.add(StreamReply(pieces=workload.pieces))
            return await provider.stream_turn([UserMessage(content="go")], [])

        async def sdk() -> anthropic.types.Message:
            server.add(StreamReply(pieces=workload.pieces))
            return await read_with_sdk(client)

        try:
            check(await claw(), await sdk(), workload)
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
    workload = (
        build_workload(text_deltas=1200, fragments_per_call=300)
        if quick
        else build_workload(text_deltas=3600, fragments_per_call=1200)
    )
    warmup, repetitions = (1, 3) if quick else (2, 9)
    times = asyncio.run(measure(workload, warmup, repetitions))
    claw, sdk = median(times["claw"]), median(times["sdk"])
    return Result(
        benchmark="Messages SSE throughput",
        metric="anthropic SDK time / claw time",
        value=sdk / claw,
        unit="×",
        target=1.0,
        better="higher",
        context={
            "workload": f"{workload.events:,} events, {workload.size / 1024:,.0f} KiB "
            f"in {len(workload.pieces)} pieces of 1–4 KiB",
            "claw": f"{claw * 1e3:.1f} ms median = {workload.events / claw:,.0f} events/s "
            f"(best {min(times['claw']) * 1e3:.1f} ms)",
            "anthropic SDK": f"{sdk * 1e3:.1f} ms median = {workload.events / sdk:,.0f} events/s "
            f"(best {min(times['sdk']) * 1e3:.1f} ms)",
            "repetitions": f"{repetitions} each, alternating, after {warmup} warm-up",
        },
        raw={
            "events": workload.events,
            "bytes": workload.size,
            "claw_median_s": claw,
            "sdk_median_s": sdk,
            "claw_s": times["claw"],
            "sdk_s": times["sdk"],
        },
    )


if __name__ == "__main__":
    result = run()
    print(f"{result.benchmark}: {result.metric} = {result.value:.2f}{result.unit}")
    for key, value in result.context.items():
        print(f"  {key}: {value}")
