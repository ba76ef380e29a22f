"""Benchmark: the terminal app's start-up and its streamed markdown rendering (chapter 19).

Start-up: ``claw --help`` in a fresh interpreter, against its peer measured in the same run,
a fresh interpreter that only imports httpx and pydantic (claw cannot start faster than its
two main dependencies load). ``rich`` and ``prompt_toolkit`` are imported only by the modules
that draw (``render.py``, ``repl.py``), which ``claw --help`` never loads.

Rendering: a 200 KB markdown answer, streamed in 40-character chunks through
``render.MarkdownStream`` (each block rendered once, when it is complete), against printing
the same chunks raw through the same ``rich`` console. For context, the answer rendered in one
piece, and a naive stream that re-renders everything so far at every chunk (on a 10 KB
prefix: it grows with the square of the length).
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections.abc import Callable
from statistics import median

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from solution.render import MarkdownStream

from .common import Result

PARAGRAPH = "Some **bold** words and `code` in a sentence that goes on, as answers do.\n"
BLOCK = (
    "## A heading\n\n" + PARAGRAPH * 3 + "\n```python\ndef f(x):\n    return x + 1\n```\n\n"
    "- one\n- two\n\n"
)
CHUNK = 40


def answer(size: int) -> str:
    """A markdown answer of ``size`` characters: headings, paragraphs, code, lists."""
    return (BLOCK * (size // len(BLOCK) + 1))[:size]


def chunks(text: str) -> list[str]:
    """``text`` cut into ``CHUNK``-character pieces, as a stream delivers it."""
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def console() -> Console:
    """A console that renders into memory, 100 columns wide, with colours."""
    return Console(file=io.StringIO(), width=100, color_system="truecolor")


def seconds(action: Callable[[], object]) -> float:
    """How long ``action()`` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def stream_rendered(pieces: list[str]) -> None:
    """The pieces through ``MarkdownStream``."""
    stream = MarkdownStream(console())
    for piece in pieces:
        stream.feed(piece)
    stream.close()


def stream_raw(pieces: list[str]) -> None:
    """The pieces printed as they are, through the same kind of console."""
    target = console()
    for piece in pieces:
        target.print(Text(piece), end="")


def stream_naive(pieces: list[str]) -> None:
    """Everything so far rendered again at every piece."""
    target, so_far = console(), ""
    for piece in pieces:
        so_far += piece
        target.file = io.StringIO()
        target.print(Markdown(so_far))


def process_seconds(code: str) -> float:
    """Seconds a fresh interpreter takes to run ``code``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def startup(quick: bool) -> Result:
    """``claw --help`` against importing httpx and pydantic, alternating, medians."""
    rounds = 5 if quick else 15
    claw_code = "import sys; sys.argv = ['claw', '--help']\nfrom solution.main import cli; cli()"
    peer_code = "import httpx, pydantic"
    claw_times, peer_times = [], []
    for _ in range(rounds):
        claw_times.append(process_seconds(claw_code))
        peer_times.append(process_seconds(peer_code))
    claw_median, peer_median = median(claw_times), median(peer_times)
    return Result(
        benchmark="claw --help start-up",
        metric="median time of claw --help / python importing httpx and pydantic",
        value=claw_median / peer_median,
        unit="×",
        target=2.0,
        better="lower",
        context={
            "claw --help": f"median {claw_median * 1000:.0f} ms ({rounds} runs)",
            "import httpx, pydantic": f"median {peer_median * 1000:.0f} ms ({rounds} runs)",
        },
        raw={"claw_seconds": claw_times, "peer_seconds": peer_times},
    )


def rendering(quick: bool) -> Result:
    """A streamed 200 KB answer rendered block by block, against printing it raw."""
    rounds = 1 if quick else 5
    pieces = chunks(answer(200_000))
    rendered_times: list[float] = []
    raw_times: list[float] = []
    for _ in range(rounds):  # alternating: a change of load on a shared machine hits both
        rendered_times.append(seconds(lambda: stream_rendered(pieces)))
        raw_times.append(seconds(lambda: stream_raw(pieces)))
    rendered, raw = median(rendered_times), median(raw_times)
    whole_text = answer(200_000)
    whole = seconds(lambda: console().print(Markdown(whole_text)))
    small = chunks(answer(10_000))
    naive_small = seconds(lambda: stream_naive(small))
    rendered_small = seconds(lambda: stream_rendered(small))
    return Result(
        benchmark="Streamed markdown rendering",
        metric="200 KB in 40-character chunks: MarkdownStream / raw rich print",
        value=rendered / raw,
        unit="×",
        target=2.0,
        better="lower",
        context={
            "MarkdownStream": f"median {rendered:.2f} s for 200 KB ({len(pieces)} chunks, "
            f"{rounds} runs)",
            "raw print": f"median {raw:.2f} s ({rounds} runs, alternating with MarkdownStream)",
            "one Markdown of the whole answer": f"{whole:.2f} s",
            "naive re-render per chunk, 10 KB": f"{naive_small:.2f} s "
            f"(MarkdownStream: {rendered_small:.3f} s)",
        },
        raw={
            "rendered": rendered,
            "raw": raw,
            "rendered_seconds": rendered_times,
            "raw_seconds": raw_times,
            "whole": whole,
            "naive_10k": naive_small,
            "rendered_10k": rendered_small,
        },
    )


def run(quick: bool = False) -> list[Result]:
    """Both benchmarks of the terminal app."""
    return [startup(quick), rendering(quick)]
