"""Benchmark: claw's Python grep against ``grep -rn`` (and ripgrep) over the same large tree.

A tree of 10,000 files (about 100 MB; 1,000 files in a quick run) is generated once into a
temporary folder: Python-like source files in 100 folders, 1 file in 50 binary (a NUL near
the start), a ``.gitignore`` that ignores ``*.tmp``, and a few ``.tmp`` files. Each search runs
once to warm the page cache, then three times; the best time counts. Two patterns: a plain word
that is in few files (claw checks the raw bytes of each file for it before decoding anything)
and a regular expression (every line of every text file is decoded and searched).

The peer is GNU ``grep -rn`` on the same tree in the same run, which has no ignore rules and
reads the ignored ``.tmp`` files too (they are small). ``rg -n`` and claw's ripgrep engine are
timed as well when ``rg`` is installed. The headline is claw's Python time over grep's (target:
at most 5×).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from solution.tools.grep import GrepArguments, GrepTool, find_ripgrep

from .common import Result

WORDS = [
    "price", "item", "cart", "order", "total", "user", "session", "request", "response", "value",
    "result", "data", "config", "handler", "client", "server", "cache", "buffer", "stream",
    "token", "model", "error", "retry", "limit", "offset",
]
"""The words the generated source is made of."""


def make_tree(root: Path, files: int, seed: int = 7) -> int:
    """Write the tree under ``root``; return its size in bytes."""
    rng = random.Random(seed)
    size = 0
    (root / ".gitignore").write_text("*.tmp\n")
    for n in range(files):
        folder = root / f"pkg{n % 100:02}"
        folder.mkdir(exist_ok=True)
        if n % 50 == 0:
            data = b"\x89BIN\x00" + rng.randbytes(10_000)
            (folder / f"blob{n}.bin").write_bytes(data)
            size += len(data)
            continue
        lines = []
        for i in range(200):
            a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
            if i % 25 == 0:
                lines.append(f"def {a}_{b}_handler({c}, {a}={i}):")
            else:
                lines.append(f"    {a}_{b} = {c}.{a}({b}, {i}) + {rng.randint(0, 9999)}")
        if n % 1000 == 3:
            lines.append("    # needle_in_the_haystack: the one line the literal search wants")
        text = "\n".join(lines) + "\n"
        name = f"mod{n}.tmp" if n % 500 == 7 else f"mod{n}.py"
        (folder / name).write_text(text)
        size += len(text)
    return size


def best_of(action: Callable[[], object], runs: int = 3) -> float:
    """The fastest of ``runs`` timings of ``action`` (after one warm-up run)."""
    action()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def run(quick: bool = False) -> list[Result]:
    """Run the benchmark; one result a pattern, each claw's Python time over grep's."""
    count = 1_000 if quick else 10_000
    grep = shutil.which("grep")
    if grep is None:
        raise RuntimeError("grep is not installed: the benchmark's peer is GNU grep -rn")
    rg = find_ripgrep()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        size = make_tree(root, count)
        python = GrepTool(root, ripgrep=False, max_matches=50)
        ripgrep = GrepTool(root, max_matches=50) if rg else None
        for label, pattern in [("literal", "needle_in_the_haystack"),
                               ("regex", r"def \w+_total_handler\(")]:  # fmt: skip
            args = GrepArguments(pattern=pattern)
            output = python.search(args)
            if output.is_error or "no matches" in output.content:
                raise RuntimeError(f"claw's grep found nothing for {pattern}: {output.content}")
            claw_s = best_of(partial(python.search, args))
            grep_s = best_of(partial(
                subprocess.run, [grep, "-rnE", pattern.replace(r"\(", "[(]"), "."], cwd=root,
                capture_output=True, check=False,
            ))  # fmt: skip
            context = {
                "claw (Python)": f"{claw_s:.2f} s",
                "grep -rn": f"{grep_s:.2f} s",
            }
            raw: dict[str, float | int | list[float]] = {
                "claw_python_s": claw_s, "grep_s": grep_s, "tree_bytes": size, "files": count,
            }  # fmt: skip
            if rg is not None and ripgrep is not None:
                rg_s = best_of(partial(
                    subprocess.run, [rg, "-n", "--no-heading", "-e", pattern, "."], cwd=root,
                    capture_output=True, check=False,
                ))  # fmt: skip
                claw_rg_s = best_of(partial(ripgrep.search, args))
                context["rg -n"] = f"{rg_s:.2f} s"
                context["claw (ripgrep engine)"] = f"{claw_rg_s:.2f} s"
                raw |= {"rg_s": rg_s, "claw_ripgrep_s": claw_rg_s}
            else:
                context["rg"] = "not installed"
            context["tree"] = f"{count:,} files, {size / 1e6:.0f} MB, 1 in 50 binary, a .gitignore"
            results.append(
                Result(
                    benchmark=f"grep speed ({label})",
                    metric="claw Python grep time / grep -rn time",
                    value=claw_s / grep_s,
                    unit="×",
                    target=5.0,
                    better="lower",
                    context=context,
                    raw=raw,
                )
            )
    return results


if __name__ == "__main__":
    for result in run():
        print(result.benchmark, f"{result.value:.2f}×", result.context)
