"""The ``read`` tool: show a text file to the model, with line numbers, a window at a time.

The output looks like ``cat -n``: each line is prefixed with its number, so the model can say
"line 42" and a later edit can find it. Long files are shown in windows (``offset`` and
``limit``, in lines); when the output stops early, a note at the end says how to read on.
Every failure (a missing file, a directory, a binary file, bytes that are not UTF-8, a name the
operating system rejects) comes back as an error result the model can read, never as an
exception that would end the agent's loop.

The file is read a line at a time and reading stops as soon as the window is full, so one call
needs about as much memory as its window, whatever the size of the file; only its first 8 KiB
decide whether it is binary. Anything but a regular file (a FIFO, a device such as
``/dev/zero``, a socket) is refused on the word of ``stat``, before it is opened: opening a
FIFO waits for a writer that may never come, and a device may have no end.
"""

from __future__ import annotations

import asyncio
import io
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from pydantic import Field

from ..types import ToolDefinition, ToolOutput
from .base import ArgumentsTool, ToolArguments
from .fs import Root, as_root
from .tracker import FileTracker

BINARY_SNIFF_BYTES = 8192
"""How much of the start of a file is checked for NUL bytes to decide it is binary."""

SKIP_CHARS = 65536
"""How much of a line too long to show is read, and dropped, at a time."""


class ReadArguments(ToolArguments):
    """Which file to read and, for a long file, which lines."""

    path: str = Field(min_length=1, description="The file to read, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="The first line to show (1 is the first).")
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to show at most (default: all that fit)."
    )


def number_lines(lines: list[str], first: int, *, max_line_chars: int = 2000) -> str:
    """Format ``lines`` like ``cat -n``: the number right-aligned in 6 columns, a tab, the text.

    ``first`` is the number of the first line. A line longer than ``max_line_chars`` is cut
    and ends with ``…`` so one enormous line (minified JavaScript, say) cannot flood the output.
    """
    # region ch02: number each line like cat -n, counting from `first`; cut and mark long lines
    # more: enumerate(lines, start=first), a format spec that right-aligns in 6, "\n".join
    numbered = []
    for number, line in enumerate(lines, start=first):
        if len(line) > max_line_chars:
            line = line[:max_line_chars] + "…"
        numbered.append(f"{number:>6}\t{line}")
    return "\n".join(numbered)
    # endregion


def read_lines(file: IO[str], max_line_chars: int) -> Iterator[str]:
    r"""Yield the lines of a text file one at a time, split the way editors and ``grep -n`` split.

    Only ``\n`` ends a line (a ``\r`` before it is dropped, for Windows files), and a final
    newline does not start an extra empty line. ``str.splitlines`` would also split at form
    feeds and Unicode separators, and line numbers would drift from what other tools show.
    ``file`` must be opened with ``newline="\n"``, so that Python leaves line endings alone.

    A line longer than ``max_line_chars`` is cut after ``max_line_chars + 1`` characters, enough
    for ``number_lines`` to see that it is too long, and the rest of it is read and dropped a
    piece at a time: an enormous line costs no more memory than a short one.
    """
    # region ch02: one line per readline, never more than max_line_chars + 1 characters of it
    # more: while line := file.readline(size); a piece not ending in "\n" means the line goes on
    while line := file.readline(max_line_chars + 1):
        piece = line
        while not piece.endswith("\n") and (piece := file.readline(SKIP_CHARS)):
            pass  # the line goes on past what can be shown: drop the rest of it
        yield line.removesuffix("\n").removesuffix("\r")
    # endregion


def looks_binary(data: bytes) -> bool:
    """Guess whether ``data`` is a binary file: text files do not contain NUL bytes."""
    # region ch02: is there a NUL byte near the start of the data?
    # more: `in` works on bytes; slice off the first BINARY_SNIFF_BYTES bytes
    return b"\x00" in data[:BINARY_SNIFF_BYTES]
    # endregion


def utf8_error(line: str, number: int, path: str) -> ToolOutput | None:
    """An error result if line ``number`` holds a byte that is not UTF-8; else ``None``.

    The file is decoded with ``errors="surrogateescape"``, which turns each byte that is not
    UTF-8 into one character between U+DC80 and U+DCFF (0xDC00 plus the byte): reading never
    fails, and the bad byte can still be named.
    """
    # region ch02: find the first escaped byte in the line; name its line, column and value
    # more: enumerate(line, start=1); compare with "\udc80" and "\udcff"; ord(char) - 0xDC00
    for column, char in enumerate(line, start=1):
        if "\udc80" <= char <= "\udcff":
            return ToolOutput.error(
                f"{path} is not valid UTF-8 text: line {number}, column {column} holds byte "
                f"{ord(char) - 0xDC00:#04x}, which cannot be decoded; read only shows UTF-8 text"
            )
    return None
    # endregion


class ReadTool(ArgumentsTool[ReadArguments]):
    """Read a text file from the workspace, with line numbers, a window of lines at a time.

    ``run``, which validates the arguments, comes from ``ArgumentsTool`` (chapter 6).
    """

    name = "read"
    description = "Read a text file, with line numbers, a window of lines at a time."
    Arguments = ReadArguments
    read_only = True

    def __init__(
        self,
        root: Root | Path | str = ".",
        *,
        max_lines: int = 2000,
        max_chars: int = 100_000,
        max_line_chars: int = 2000,
        files: FileTracker | None = None,
    ) -> None:
        """Read files under ``root``, within limits on how much one call shows.

        At most ``max_lines`` lines and about ``max_chars`` characters per call; a single
        line longer than ``max_line_chars`` is cut. ``files``, if given, is told of every file
        read, so that the edit tools of chapter 9 know what the model has seen. ``root`` may
        be a ``Root`` (``tools/fs.py``), which also allows extra folders; files are opened
        through it, never by name, so no path leads out of it.
        """
        self.fs = as_root(root)
        self.root = self.fs.path
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.max_line_chars = max_line_chars
        self.files = files

    @property
    def definition(self) -> ToolDefinition:
        """How ``read`` is described to the model: the description names the window's size."""
        return ToolDefinition.from_model(
            "read",
            "Read a text file. Lines are numbered like `cat -n`. Long files are shown in "
            f"windows of at most {self.max_lines} lines: pass `offset` (the first line to show) "
            "and `limit` (how many lines) to read further.",
            ReadArguments,
        )

    def window(self, lines: Iterable[str], offset: int, limit: int | None, path: str) -> ToolOutput:
        """Show ``lines`` from line ``offset`` on, within the caps, with a note if cut short.

        ``lines`` is consumed only as far as the window needs, plus one line to learn whether
        more are left; so the number of lines in the file is known only when the window
        reaches its end. Each line shown is checked for bytes that are not UTF-8.
        """
        # region ch02: walk the lines to the window; stop once it is full; a note if lines are left
        # more: enumerate(lines, start=1); for ... else runs when no break ended the loop
        count = min(limit or self.max_lines, self.max_lines)
        shown: list[str] = []
        size = 0
        number = 0
        for number, line in enumerate(lines, start=1):
            if number < offset:
                continue
            size += min(len(line), self.max_line_chars) + 8  # number, tab and newline
            if len(shown) == count or (shown and size > self.max_chars):
                break  # the window is full, and this line is left for the next call
            if (error := utf8_error(line, number, path)) is not None:
                return error
            shown.append(line)
        else:  # no break: the file ended, and its last line was line `number`
            if number == 0:
                return ToolOutput.ok("(the file is empty)")
            if offset > number:
                return ToolOutput.error(
                    f"offset {offset} is past the end of the file, which has {number} lines"
                )
            return ToolOutput.ok(number_lines(shown, offset, max_line_chars=self.max_line_chars))
        last = offset + len(shown) - 1
        text = number_lines(shown, offset, max_line_chars=self.max_line_chars)
        note = f"(showing lines {offset}-{last}; call read with offset={last + 1} to see more)"
        return ToolOutput.ok(f"{text}\n\n{note}")
        # endregion

    def read_window(self, args: ReadArguments) -> ToolOutput:
        """Open the regular file ``args.path`` through ``self.fs``; show the window asked for.

        It blocks, so ``read`` calls it in a worker thread. Only the first
        ``BINARY_SNIFF_BYTES`` bytes are checked for binary, and lines are decoded as they are
        read, so the file is never in memory as a whole.
        """
        # region ch02: open the bytes; sniff the start; decode lines as they are read; window
        # more: self.fs.open_regular(path), read(n), seek(0); io.TextIOWrapper(file, encoding, ...)
        with self.fs.open_regular(args.path) as file:
            if looks_binary(file.read(BINARY_SNIFF_BYTES)):
                return ToolOutput.error(
                    f"{args.path} looks like a binary file (a NUL byte near its start); "
                    "read only shows text files"
                )
            file.seek(0)
            text = io.TextIOWrapper(file, "utf-8-sig", errors="surrogateescape", newline="\n")
            lines = read_lines(text, self.max_line_chars)
            return self.window(lines, args.offset, args.limit, args.path)
        # endregion

    async def call(self, args: ReadArguments) -> ToolOutput:
        """Read the file; tell ``files`` (if any) that the model has seen it."""
        output = await self.read(args)
        if self.files is not None and not output.is_error:
            self.files.saw(self.root / args.path)
        return output

    async def read(self, args: ReadArguments) -> ToolOutput:
        """Read the file ``args`` names; every failure is an error result."""
        # region ch02: ask stat what is there; refuse all but a regular file; read in a thread
        # more: self.fs.stat(args.path).st_mode; stat.S_ISDIR, S_ISREG; FileNotFoundError first
        try:
            mode = self.fs.stat(args.path).st_mode
        except FileNotFoundError:
            return ToolOutput.error(f"file not found: {args.path}")
        except OSError as error:  # a name too long, a loop of links, no permission
            return ToolOutput.error(f"cannot read {args.path}: {error.strerror or error}")
        except ValueError:  # a NUL character in the name
            return ToolOutput.error(f"cannot read {args.path!r}: a file name cannot hold NUL")
        if stat.S_ISDIR(mode):
            return ToolOutput.error(
                f"{args.path} is a directory, not a file; read one of the files inside it"
            )
        if not stat.S_ISREG(mode):
            return ToolOutput.error(
                f"{args.path} is not a regular file (a FIFO, a device or a socket); "
                "read only shows regular files"
            )
        try:
            return await asyncio.to_thread(self.read_window, args)
        except OSError as error:
            return ToolOutput.error(f"cannot read {args.path}: {error.strerror or error}")
        # endregion
