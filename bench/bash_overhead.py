"""Benchmark: what ``BashTool`` adds to running a command, against asyncio doing it directly.

Both sides run ``bash -c true`` (so both pay for the same ``fork``/``exec`` of bash), in turns,
N times each. The tool does everything a real call does: validates the arguments, scrubs the
environment, makes its own pipe, starts bash in a new session, reads the output through the
keeper, waits with a timeout, checks that the process group is empty, and formats the result.
The peer is the least asyncio needs for the same: ``create_subprocess_exec`` with stdin from
``/dev/null`` and stdout piped, then ``communicate()``. The headline is the ratio of the
medians; the per-call difference in milliseconds is in the context.
"""

from __future__ import annotations

import asyncio
import tempfile
from statistics import median

from solution.tools.bash import BashTool

from .common import Result, timed


async def direct() -> None:
    """``bash -c true`` through asyncio, with the output read: the peer."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        "true",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"bash -c true exited {process.returncode}")


async def measure(rounds: int, folder: str) -> tuple[list[float], list[float]]:
    """Time ``rounds`` tool calls and ``rounds`` direct runs, alternating; warm both first."""
    tool = BashTool(folder)
    arguments = {"command": "true"}

    async def through_tool() -> None:
        output = await tool.run(arguments)
        if output.is_error or output.content != "(no output)\nexit code: 0":
            raise RuntimeError(f"BashTool gave {output!r}")

    for _ in range(3):
        await through_tool()
        await direct()
    tool_times: list[float] = []
    direct_times: list[float] = []
    for _ in range(rounds):
        tool_times.append(await timed(through_tool))
        direct_times.append(await timed(direct))
    return tool_times, direct_times


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is median(tool) / median(direct)."""
    rounds = 30 if quick else 200
    with tempfile.TemporaryDirectory() as folder:
        tool_times, direct_times = asyncio.run(measure(rounds, folder))
    tool_median = median(tool_times)
    direct_median = median(direct_times)
    ratio = tool_median / direct_median
    return Result(
        benchmark="Bash tool overhead",
        metric="median time of `true`, BashTool / asyncio subprocess",
        value=ratio,
        unit="×",
        target=1.5,
        better="lower",
        context={
            "BashTool": f"median {tool_median * 1000:.2f} ms per call ({rounds} calls)",
            "asyncio subprocess": f"median {direct_median * 1000:.2f} ms per run ({rounds} runs)",
            "difference": f"{(tool_median - direct_median) * 1000:.2f} ms per call",
        },
        raw={
            "rounds": rounds,
            "tool_median_seconds": tool_median,
            "direct_median_seconds": direct_median,
            "tool_seconds": tool_times,
            "direct_seconds": direct_times,
        },
    )
