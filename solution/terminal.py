"""How the ``claw`` command reads the user's answers at a terminal.

The approval questions (``guard``), the plan question (``guard``) and the trust question
(``trust``) all read a line this way. Given code, without chapters 13-16, so that chapter 12's
claw (``--unguarded``) can ask the trust question too.
"""

from __future__ import annotations

import asyncio
import select
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TextIO

ReadLine = Callable[[], Awaitable[str]]
"""Reads one line the user typed, without its newline; ``""`` at the end of input."""


def interactive() -> bool:
    """Whether a person is there to answer: standard input is a terminal."""
    try:
        return sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def at_terminal() -> bool:
    """Whether claw can converse: standard input and standard output are both a terminal.

    ``claw "prompt"`` with its output captured or piped is a one-shot run, never the REPL
    (chapter 19), even when standard input is still the terminal.
    """
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (OSError, ValueError):
        return False


def piped_now(stdin: TextIO) -> bool:
    """Whether ``stdin`` is a pipe or a file that holds something to read now, or its end.

    ``echo notes | claw "sum up"``: the one-shot run adds what was piped in, as ``-p`` does.
    A pipe still open with nothing in it (a program that runs claw and never writes) is not
    waited for: reading it would hang. A terminal, or a stream with no file, is never read.
    """
    try:
        if stdin.isatty():
            return False
        ready, _, _ = select.select([stdin.fileno()], [], [], 0)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False
    return bool(ready)


async def read_stdin_line() -> str:
    """One line from standard input, read in a daemon thread so the event loop goes on.

    A daemon thread, not ``asyncio.to_thread``: if the run is cancelled while the user is
    being asked, a thread of the default executor would keep ``asyncio.run`` from returning
    until someone pressed Enter.
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def deliver(line: str) -> None:
        if not answer.done():
            answer.set_result(line)

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):  # stdin closed or not readable: the end of input
            line = ""
        loop.call_soon_threadsafe(deliver, line)

    threading.Thread(target=read, name="claw-stdin", daemon=True).start()
    line = await answer
    return line.rstrip("\r\n") if line else ""


def echo_answer(out: TextIO, line: str) -> None:
    """Write ``line`` after its question when stdin is not a terminal, which would have shown it.

    With answers piped in (a script, a test), the transcript then reads like a terminal's.
    """
    if not interactive():
        out.write(f"{line}\n")
