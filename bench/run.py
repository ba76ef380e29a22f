"""Run claw's benchmarks and report each number against its target: ``python -m bench.run``.

Every number is measured in this run, and every ratio compares things measured side by side
in it, so results from different machines can be read the same way. The benchmarks report;
they do not gate: the exit status is 0 whether targets are met or not, and non-zero only if a
benchmark fails to run (for example, claw and the SDK read the stream differently).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from . import (
    anthropic_sse,
    bash_overhead,
    context_compaction,
    cost_overhead,
    feedback,
    grade,
    grep_memory,
    grep_speed,
    loop_overhead,
    parallel_suite,
    parallel_tools,
    read_memory,
    session_resume,
    sse_throughput,
    stream_latency,
    terminal_app,
)
from .common import Result

BENCHMARKS: list[tuple[str, Callable[[bool], Result | list[Result]]]] = [
    ("sse_throughput", sse_throughput.run),
    ("anthropic_sse", anthropic_sse.run),
    ("loop_overhead", loop_overhead.run),
    ("stream_latency", stream_latency.run),
    ("feedback", feedback.run),
    ("read_memory", read_memory.run),
    ("grep_speed", grep_speed.run),
    ("grep_memory", grep_memory.run),
    ("bash_overhead", bash_overhead.run),
    ("parallel_tools", parallel_tools.run),
    ("cost_overhead", cost_overhead.run),
    ("session_resume", session_resume.run),
    ("grade", grade.run),
    ("context_compaction", context_compaction.run),
    ("terminal_app", terminal_app.run),
    ("parallel_suite", parallel_suite.run),
]
"""Each benchmark's key and its ``run(quick)`` function (one result, or several), in order."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description="Measure claw's SSE throughput (against the openai SDK), agent-loop "
        "overhead, streaming latency and the learner tools' response times, each against its "
        "target.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a short smoke run (fewer, smaller repetitions)"
    )
    parser.add_argument(
        "--json", metavar="PATH", type=Path, help="also write the results as JSON to PATH"
    )
    return parser.parse_args(argv)


def format_value(result: Result) -> str:
    """The headline number with its unit, to a sensible precision."""
    if result.unit == "×":
        return f"{result.value:.2f}×"
    if result.unit == "ms":
        return f"{result.value:.3f} ms"
    if result.unit == "s":
        return f"{result.value:.2f} s"
    return f"{result.value:.1f} {result.unit}"


def report(console: Console, results: Sequence[Result]) -> None:
    """Print the table of headline numbers, then each benchmark's supporting numbers."""
    table = Table(title="claw benchmarks", title_justify="left")
    table.add_column("Benchmark")
    table.add_column("Metric")
    table.add_column("Measured", justify="right")
    table.add_column("Target", justify="right")
    table.add_column("Result")
    for result in results:
        verdict = "[green]PASS[/green]" if result.passed else "[red]MISS[/red]"
        table.add_row(
            result.benchmark, result.metric, format_value(result), result.target_text, verdict
        )
    console.print(table)
    for result in results:
        console.print(f"[bold]{result.benchmark}[/bold]")
        for label, text in result.context.items():
            console.print(f"  {label}: {text}", highlight=False, soft_wrap=True)


def to_json(results: Sequence[tuple[str, Result]], quick: bool, seconds: float) -> dict[str, Any]:
    """Everything measured, with the machine it ran on, as a JSON-ready dict."""
    return {
        "quick": quick,
        "seconds": seconds,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "results": {key: {**asdict(result), "passed": result.passed} for key, result in results},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run every benchmark, print the report and a summary line; return the exit status."""
    args = parse_args(argv)
    console = Console()
    if not console.is_terminal:
        console.width = 100  # piped or redirected: no terminal to fit, so use the full table
    mode = "quick" if args.quick else "full"
    console.print(f"Running {len(BENCHMARKS)} benchmarks ({mode} run) on 127.0.0.1 ...")
    started = time.perf_counter()
    keyed: list[tuple[str, Result]] = []
    for key, run in BENCHMARKS:
        began = time.perf_counter()
        outcome = run(args.quick)
        several = outcome if isinstance(outcome, list) else [outcome]
        keyed.extend((key if len(several) == 1 else f"{key}: {r.benchmark}", r) for r in several)
        console.print(f"  {key}: done in {time.perf_counter() - began:.1f} s", highlight=False)
    seconds = time.perf_counter() - started
    results = [result for _, result in keyed]
    report(console, results)
    if args.json is not None:
        text = json.dumps(to_json(keyed, args.quick, seconds), indent=2, ensure_ascii=False)
        args.json.write_text(text + "\n", encoding="utf-8")
        console.print(f"Results written to {args.json}", highlight=False)
    passed = sum(result.passed for result in results)
    missed = [result.benchmark for result in results if not result.passed]
    summary = f"bench: {passed}/{len(results)} targets met ({mode} run, {seconds:.1f} s)"
    if missed:
        summary += "; missed: " + ", ".join(missed)
    console.print(summary, highlight=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
