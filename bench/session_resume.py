"""Benchmark: how long resuming a long session takes, and whether it grows linearly.

Two sessions are written with claw's own records (``transcript.py``): one of 10,000 messages
and one of 1,000, shaped like real work: a prompt, then steps in which the assistant calls a
tool (with arguments and some reasoning) and the result comes back, a ``StepUsage`` and a
``ToolCalled``/``ToolResult`` event each, non-ASCII text here and there, and every hundredth
step a plain answer. ``load_session`` (read, parse, validate every message, decode every
event) is timed on each, in alternation, in the same run. The headline is the time for 10,000
messages (target ≤ 300 ms) and the ratio 10,000 / 1,000 (target ≤ 12×: linear, with a little
room for caches that hold 1,000 messages and not 10,000). The ratio is taken of the CPU time
this process spends (``time.process_time``): linearity is a property of the work done, and the
wall times of the two sides swing by ±30% on a shared machine (another job starting during one
side), while their CPU times stay within a few per cent. The wall ratio is shown beside it.
For context, the standard library alone:
``json.loads`` of every line of the long file, and nothing else.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from solution.events import StepUsage, ToolCalled, ToolResult
from solution.sessions import header, load_session
from solution.transcript import Record, TranscriptWriter, event_record, message_record
from solution.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .common import Result


def session_records(messages: int) -> list[Record]:
    """The records of a session of ``messages`` messages (after its ``session`` record)."""
    history: list[Message] = [
        SystemMessage(content="You are claw, a coding agent. " * 40),
        UserMessage(
            content="Rename `mean` to `average` everywhere — and run the tests, s'il te plaît."
        ),
    ]
    records: list[Record | None] = [message_record(m) for m in history]
    step = 0
    while len(history) < messages:
        step += 1
        usage = TokenUsage(input_tokens=1200 + step, output_tokens=80, cost=Decimal("0.00042"))
        if step % 100 == 0:
            answer = AssistantMessage(content=f"Step {step}: all tests pass ✓. Next file?")
            history.append(answer)
            records += [message_record(answer), event_record(StepUsage(step, usage))]
            question = UserMessage(content="Go on with the next module, please.")
            history.append(question)
            records.append(message_record(question))
            continue
        call = ToolCall(
            id=f"call-{step}",
            name="grep",
            arguments={"pattern": r"\bmean\(", "path": f"src/m{step}.py"},
        )
        turn = AssistantMessage(
            content="",
            tool_calls=(call,),
            reasoning_content="Find every use first; naïve replace breaks `meaning`.",
        )
        output = "".join(f"src/m{step}.py:{n}: x = mean(values)  # ‘mean’ #{n}\n" for n in range(8))
        result = ToolResultMessage(tool_call_id=call.id, content=output)
        history += [turn, result]
        records += [
            event_record(StepUsage(step, usage)),
            event_record(ToolCalled(step, call.id, call.name, call.arguments)),
            message_record(turn),
            message_record(result),
            event_record(ToolResult(step, call.id, call.name, output, False, 0.004)),
        ]
    return [r for r in records if r is not None]


def write_session(folder: Path, messages: int) -> Path:
    """A transcript of ``messages`` messages in ``folder``."""
    path = folder / f"s{messages}.jsonl"
    writer = TranscriptWriter(path)
    writer.append([header(path.stem, folder), *session_records(messages)])
    writer.close()
    return path


def time_load(path: Path, cpu: list[float] | None = None) -> float:
    """Seconds ``load_session`` takes on ``path`` (checked to rebuild every message).

    ``cpu``, if given, gets the CPU seconds this process spent on it: unlike the wall time,
    they do not grow when other processes share the machine.
    """
    start, start_cpu = time.perf_counter(), time.process_time()
    session = load_session(path)
    seconds = time.perf_counter() - start
    if cpu is not None:
        cpu.append(time.process_time() - start_cpu)
    if not session.history or session.notices:
        raise RuntimeError(f"{path} did not load cleanly: {session.notices}")
    return seconds


def time_json_floor(path: Path) -> float:
    """Seconds to ``json.loads`` every line of ``path``: the least any reader must do."""
    start = time.perf_counter()
    with path.open("rb") as file:
        for line in file:
            json.loads(line)
    return time.perf_counter() - start


def run(quick: bool = False) -> list[Result]:
    """Time resuming 10,000 and 1,000 messages, alternating, and report time and ratio."""
    rounds = 3 if quick else 9
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        long, short = write_session(folder, 10_000), write_session(folder, 1_000)
        if len(load_session(long).history) < 10_000:
            raise RuntimeError("the long session did not rebuild 10,000 messages")
        time_load(long), time_load(short)  # warm-up: imports, pydantic's validators
        long_times: list[float] = []
        short_times: list[float] = []
        long_cpu: list[float] = []
        short_cpu: list[float] = []
        floor: list[float] = []
        for number in range(rounds):
            pair = [(long_times, long_cpu, long), (short_times, short_cpu, short)]
            for times, cpu, path in pair if number % 2 == 0 else reversed(pair):
                times.append(time_load(path, cpu))
            floor.append(time_json_floor(long))
        size = long.stat().st_size
    long_ms = statistics.median(long_times) * 1000
    short_ms = statistics.median(short_times) * 1000
    floor_ms = statistics.median(floor) * 1000
    context = {
        "10,000 messages": f"median {long_ms:.1f} ms, best {min(long_times) * 1000:.1f} ms "
        f"({size / 1e6:.1f} MB transcript)",
        "1,000 messages": f"median {short_ms:.1f} ms, best {min(short_times) * 1000:.1f} ms",
        "json.loads of every line, nothing else (stdlib parser)": f"median {floor_ms:.1f} ms",
        "wall time, 10,000 / 1,000": f"{long_ms / short_ms:.1f}×",
        "CPU time of this process": f"10,000 messages {statistics.median(long_cpu) * 1000:.1f} ms, "
        f"1,000 {statistics.median(short_cpu) * 1000:.1f} ms: "
        f"{statistics.median(long_cpu) / statistics.median(short_cpu):.1f}×",
    }
    raw: dict[str, float | int | list[float]] = {
        "long_seconds": long_times,
        "short_seconds": short_times,
        "json_floor_seconds": floor,
        "long_bytes": size,
        "long_cpu_seconds": long_cpu,
        "short_cpu_seconds": short_cpu,
    }
    return [
        Result(
            "Session resume",
            "load_session, 10,000 messages",
            long_ms,
            "ms",
            300.0,
            "lower",
            context,
            raw,
        ),
        Result(
            "Session resume scaling",
            "CPU time for 10,000 / for 1,000 messages",
            statistics.median(long_cpu) / statistics.median(short_cpu),
            "×",
            12.0,
            "lower",
            context,
            raw,
        ),
    ]
