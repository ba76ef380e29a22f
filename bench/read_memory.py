"""Benchmark 5: how much memory ``ReadTool`` needs to show the last page of a 200 MB file.

The file is sparse, so it costs no disk: 1,000 numbered lines, a 200 MB hole (zeros, so one
enormous line with no newline in it), then 2,000 more lines. ``ReadTool.run`` is asked for the
page that starts at the first line after the hole, so it must read through the whole file;
what matters is that it holds only a window and one line at a time. The peer, measured in the
same run on the same file, is a plain ``f.read()`` of the file, which is what a tool that reads
"the whole file, then a window of it" needs at the very least (the ReadTool before issue 8 held
about four times that: bytes, decoded text and the split lines).

Peak memory is measured with ``tracemalloc``, which sees every allocation made through Python's
allocators in every thread (``ReadTool`` reads in a worker thread). Times are wall-clock, with
``tracemalloc`` running, so they are for context only.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from solution.tools.read import ReadTool

from .common import Result

MIB = 1024 * 1024


def make_file(folder: Path, hole: int, before: int = 1000, after: int = 2000) -> Path:
    """``before`` lines, a sparse hole of ``hole`` zero bytes, then ``after`` lines."""
    path = folder / "huge.log"
    with path.open("wb") as file:
        file.write("".join(f"line {n} of the head\n" for n in range(1, before + 1)).encode())
        file.seek(hole, os.SEEK_CUR)
        file.write(b"\n")
        file.write("".join(f"line {n} of the tail\n" for n in range(1, after + 1)).encode())
    return path


def peak(action: Callable[[], object]) -> tuple[int, float]:
    """The peak bytes traced while ``action`` runs, and its wall-clock seconds."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        action()
    finally:
        seconds = time.perf_counter() - start
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return top, seconds


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is how many times less memory ReadTool needs."""
    hole = (32 if quick else 200) * MIB
    with tempfile.TemporaryDirectory() as folder:
        path = make_file(Path(folder), hole)
        size = path.stat().st_size
        tool = ReadTool(folder)
        first_after_hole = 1000 + 2  # the head, then the hole's one line
        arguments = {"path": path.name, "offset": first_after_hole}
        output = asyncio.run(tool.run(arguments))
        if output.is_error or "line 1 of the tail" not in output.content:
            raise RuntimeError(f"ReadTool did not show the last page: {output.content[:200]}")
        tool_peak, tool_seconds = peak(lambda: asyncio.run(tool.run(arguments)))
        read_peak, read_seconds = peak(path.read_bytes)
    ratio = read_peak / tool_peak
    return Result(
        benchmark="Read tool memory",
        metric="peak memory, f.read() / ReadTool",
        value=ratio,
        unit="×",
        target=20.0,
        better="higher",
        context={
            "ReadTool": f"peak {tool_peak / MIB:.2f} MiB, {tool_seconds:.2f} s (the last page)",
            "f.read()": f"peak {read_peak / MIB:.2f} MiB, {read_seconds:.2f} s (the whole file)",
            "file": f"{size / MIB:.0f} MiB, sparse: 1,000 lines, a {hole // MIB} MiB line of "
            "zeros, 2,000 lines",
        },
        raw={
            "file_bytes": size,
            "tool_peak_bytes": tool_peak,
            "read_peak_bytes": read_peak,
            "tool_seconds": tool_seconds,
            "read_seconds": read_seconds,
        },
    )
