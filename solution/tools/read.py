"""The ``read`` tool: show a text file to the model, with line numbers, a window at a time.

The output looks like ``cat -n``: each line is prefixed with its number, so the model can say
"line 42" and a later edit can find it. Long files are shown in windows (``offset`` and
``limit``, in lines); when the output stops early, a note at the end says how to read on.
Every failure (a missing file, a directory, a binary file, bytes that are not UTF-8) comes back
as an error result the model can read, never as an exception that would end the agent's loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..types import ToolDefinition, ToolOutput

BINARY_SNIFF_BYTES = 8192
"""How much of the start of a file is checked for NUL bytes to decide it is binary."""


# --8<-- [start:arguments]
class ReadArguments(BaseModel):
    """Which file to read and, for a long file, which lines."""

    path: str = Field(min_length=1, description="The file to read, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="The first line to show (1 is the first).")
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to show at most (default: all that fit)."
    )
# --8<-- [end:arguments]


# --8<-- [start:number-lines]
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
# --8<-- [end:number-lines]


# --8<-- [start:looks-binary]
def looks_binary(data: bytes) -> bool:
    """Guess whether ``data`` is a binary file: text files do not contain NUL bytes."""
    # region ch02: is there a NUL byte near the start of the data?
    # more: `in` works on bytes; slice off the first BINARY_SNIFF_BYTES bytes
    return b"\x00" in data[:BINARY_SNIFF_BYTES]
    # endregion
# --8<-- [end:looks-binary]


# --8<-- [start:decode]
def decode_text(data: bytes, path: str) -> str | ToolOutput:
    """The bytes of a text file as a string, or an error result the model can act on."""
    # region ch02: refuse binary data, then decode the text, or say which byte is not UTF-8
    # more: looks_binary first; the "utf-8-sig" codec; UnicodeDecodeError.start is the offset
    if looks_binary(data):
        return ToolOutput.error(
            f"{path} looks like a binary file ({len(data)} bytes); read only shows text files"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return ToolOutput.error(
            f"{path} is not valid UTF-8 text: byte {data[error.start]:#04x} at offset "
            f"{error.start} cannot be decoded; read only shows UTF-8 text files"
        )
    # endregion
# --8<-- [end:decode]


# --8<-- [start:split-lines]
def split_lines(text: str) -> list[str]:
    r"""Split text into lines the way editors and ``grep -n`` count them.

    Only ``\n`` ends a line (a ``\r`` before it is dropped, for Windows files), and a final
    newline does not start an extra empty line. ``str.splitlines`` would also split at form
    feeds and Unicode separators, and line numbers would drift from what other tools show.
    """
    # region ch02: split where editors split, with no phantom last line and no stray \r
    # more: str.split("\n"), drop one trailing "" (only one), then str.removesuffix on each
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
    # endregion
# --8<-- [end:split-lines]


# --8<-- [start:tool]
class ReadTool:
    """Read a text file from the workspace, with line numbers, a window of lines at a time."""

    # --8<-- [start:init]
    def __init__(
        self,
        root: Path | str = ".",
        *,
        max_lines: int = 2000,
        max_chars: int = 100_000,
        max_line_chars: int = 2000,
    ) -> None:
        """Read files under ``root``, within limits on how much one call shows.

        At most ``max_lines`` lines and about ``max_chars`` characters per call; a single
        line longer than ``max_line_chars`` is cut.
        """
        self.root = Path(root)
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.max_line_chars = max_line_chars
    # --8<-- [end:init]

    # --8<-- [start:definition]
    @property
    def definition(self) -> ToolDefinition:
        """How ``read`` is described to the model."""
        return ToolDefinition.from_model(
            "read",
            "Read a text file. Lines are numbered like `cat -n`. Long files are shown in "
            f"windows of at most {self.max_lines} lines: pass `offset` (the first line to show) "
            "and `limit` (how many lines) to read further.",
            ReadArguments,
        )
    # --8<-- [end:definition]

    # --8<-- [start:run]
    # --8<-- [start:run-head]
    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Read the file named in ``arguments``; every failure is an error result."""
        try:
            args = ReadArguments.model_validate(arguments)
        except ValidationError as error:
            return ToolOutput.error(f"invalid arguments for read: {error}")
        # --8<-- [end:run-head]
        # region ch02: from a path to the file's bytes, every failure a result; then decode, window
        # more: self.root / args.path; exists(), is_dir(); asyncio.to_thread(...); OSError
        path = self.root / args.path
        if not path.exists():
            return ToolOutput.error(f"file not found: {args.path}")
        if path.is_dir():
            return ToolOutput.error(
                f"{args.path} is a directory, not a file; read one of the files inside it"
            )
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as error:
            return ToolOutput.error(f"cannot read {args.path}: {error.strerror or error}")
        text = decode_text(data, args.path)
        if isinstance(text, ToolOutput):
            return text
        return self.window(split_lines(text), args.offset, args.limit)
        # endregion
    # --8<-- [end:run]

    # --8<-- [start:window]
    def window(self, lines: list[str], offset: int, limit: int | None) -> ToolOutput:
        """Show ``lines`` from line ``offset`` on, within the caps, with a note if cut short."""
        # region ch02: the lines from `offset` that fit the limits, and a note if more are left
        # more: the slice starts at offset - 1; limit never beats max_lines; keep one line, always
        total = len(lines)
        if total == 0:
            return ToolOutput.ok("(the file is empty)")
        if offset > total:
            return ToolOutput.error(
                f"offset {offset} is past the end of the file, which has {total} lines"
            )
        count = min(limit or self.max_lines, self.max_lines)
        shown: list[str] = []
        size = 0
        for line in lines[offset - 1 : offset - 1 + count]:
            size += min(len(line), self.max_line_chars) + 8  # number, tab and newline
            if shown and size > self.max_chars:
                break
            shown.append(line)
        text = number_lines(shown, offset, max_line_chars=self.max_line_chars)
        last = offset + len(shown) - 1
        if last < total:
            text += (
                f"\n\n(showing lines {offset}-{last} of {total}; "
                f"call read with offset={last + 1} to see more)"
            )
        return ToolOutput.ok(text)
        # endregion
    # --8<-- [end:window]
# --8<-- [end:tool]
