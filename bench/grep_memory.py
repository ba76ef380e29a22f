"""Benchmark: how much memory ``grep`` needs for a file that is one enormous line.

Issue 17: with ripgrep installed, the grep tool used to read the whole of ``rg --json`` into
memory and parse every line of it, so a 10 MB one-line file cost about 900 MB. The engine now
reads ``rg``'s plain output as a stream and has ``rg`` cut every printed line
(``--max-columns``), so the Python process holds a chunk and a short line, whatever the file.

Each measurement runs in a fresh Python process that imports claw, notes its peak resident
memory (``ru_maxrss``), runs one search and notes the peak again: the difference is what the
search cost. ``rg``'s own peak is its process's (``RUSAGE_CHILDREN``); ``rg`` holds the line
it searches, so it grows with the longest line, which claw cannot change. Three engines run on
the same files in the same run: claw's ripgrep engine, claw's Python engine, and the peer, the
way the ripgrep engine read ``rg`` before (``rg --json`` captured whole, every line parsed).
The headline is the peer's cost over the ripgrep engine's, on the 10 MB file (the peer is
not run on the 100 MB one: it needs about 9 GB there, which a shared machine may not have).
A child process's peak includes ``git config``, which the walk runs once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from solution.tools.grep import find_ripgrep

from .common import Result

MIB = 1024 * 1024

PEER_LIMIT = 10 * MIB
"""The peer runs on files up to this size only: on the 100 MB file it needs about 9 GB."""

PROBE = r"""
import asyncio, json, resource, subprocess, sys, time, tracemalloc
from solution.tools.grep import GrepTool, find_ripgrep
folder, engine = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if engine != "json-whole":
    tracemalloc.start()
start = time.perf_counter()
if engine == "json-whole":  # the peer: the ripgrep engine as it was before issue 17
    done = subprocess.run([find_ripgrep(), "--json", "--no-config", "-a", "--crlf", "-e",
                           "needle", "--", "one-line.txt"], cwd=folder, capture_output=True)
    lines = []
    for raw in done.stdout.splitlines():
        message = json.loads(raw)
        if message["type"] == "match":
            lines.append(message["data"]["lines"]["text"])
    shown = len(lines[0][:300]) if lines else 0
else:
    tool = GrepTool(folder, ripgrep=engine == "ripgrep")
    assert (tool.rg is not None) == (engine == "ripgrep")
    output = asyncio.run(tool.run({"pattern": "needle"}))
    assert not output.is_error and "needle" in output.content, output.content[:200]
    shown = len(output.content)
seconds = time.perf_counter() - start
traced = tracemalloc.get_traced_memory()[1] // 1024 if tracemalloc.is_tracing() else -1
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"before": before, "after": after, "children": children, "traced": traced,
                  "seconds": seconds, "shown": shown}))
"""
"""What each fresh process runs; sizes in KiB, as Linux's ``ru_maxrss`` gives them."""


def make_file(folder: Path, size: int) -> Path:
    """A file of about ``size`` bytes that is one line: ``needle`` over and over.

    Every word matches, the worst case for ``rg --json``, which lists each match.
    """
    path = folder / "one-line.txt"
    with path.open("wb") as file:
        file.write(b"needle " * (size // 7) + b"\n")
    return path


def measure(folder: Path, engine: str) -> dict[str, float]:
    """One search by ``engine`` in a fresh process: its memory and time."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder), engine], capture_output=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def run(quick: bool = False) -> Result:
    """Run the benchmark; the headline is the peer's peak over the ripgrep engine's."""
    if find_ripgrep() is None:
        raise RuntimeError("ripgrep (rg) is not installed: `pip install ripgrep`")
    sizes = [10 * MIB] if quick else [10 * MIB, 100 * MIB]
    context: dict[str, str] = {}
    raw: dict[str, float | int | list[float]] = {}
    costs: dict[str, float] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            make_file(folder, size)
            engines = ["ripgrep", "python"]
            if size <= PEER_LIMIT:
                engines.append("json-whole")
            for engine in engines:
                numbers = measure(folder, engine)
                cost = (numbers["after"] - numbers["before"]) / 1024  # MiB
                rg_peak = numbers["children"] / 1024
                label = f"{engine}, {size // MIB} MB line"
                traced = (
                    f", traced peak {numbers['traced'] / 1024:.2f} MiB"
                    if numbers["traced"] >= 0
                    else ""
                )
                context[label] = (
                    f"peak RSS +{cost:.1f} MiB{traced}; child processes' peak "
                    f"{rg_peak:.0f} MiB; {numbers['seconds']:.2f} s"
                )
                raw[f"{engine}_{size // MIB}mb_python_mib"] = cost
                raw[f"{engine}_{size // MIB}mb_rg_mib"] = rg_peak
                costs[label] = cost
    ours = max(costs["ripgrep, 10 MB line"], 1.0)  # below 1 MiB is noise
    ratio = costs["json-whole, 10 MB line"] / ours
    return Result(
        benchmark="Grep memory",
        metric="peak RSS growth, rg --json read whole / claw's ripgrep engine (10 MB line)",
        value=ratio,
        unit="×",
        target=20.0,
        better="higher",
        context=context,
        raw=raw,
    )


if __name__ == "__main__":
    result = run(quick="--quick" in sys.argv)
    print(f"{result.benchmark}: {result.value:.0f}× (target {result.target_text})")
    for name, text in result.context.items():
        print(f"  {name}: {text}")
