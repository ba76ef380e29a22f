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

from ..todo import Todo
from ..types import ToolDefinition, ToolOutput

BINARY_SNIFF_BYTES = 8192
"""How much of the start of a file is checked for NUL bytes to decide it is binary."""


class ReadArguments(BaseModel):
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
    raise Todo(
        "ch02",
        "number each line like cat -n, counting from `first`; cut and mark long lines",
    )


def looks_binary(data: bytes) -> bool:
    """Guess whether ``data`` is a binary file: text files do not contain NUL bytes."""
    raise Todo("ch02", "is there a NUL byte near the start of the data?")


def decode_text(data: bytes, path: str) -> str | ToolOutput:
    """The bytes of a text file as a string, or an error result the model can act on."""
    raise Todo("ch02", "refuse binary data, then decode the text, or say which byte is not UTF-8")


def split_lines(text: str) -> list[str]:
    r"""Split text into lines the way editors and ``grep -n`` count them.

    Only ``\n`` ends a line (a ``\r`` before it is dropped, for Windows files), and a final
    newline does not start an extra empty line. ``str.splitlines`` would also split at form
    feeds and Unicode separators, and line numbers would drift from what other tools show.
    """
    raise Todo("ch02", "split where editors split, with no phantom last line and no stray \\r")


class ReadTool:
    """Read a text file from the workspace, with line numbers, a window of lines at a time."""

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

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Read the file named in ``arguments``; every failure is an error result."""
        try:
            args = ReadArguments.model_validate(arguments)
        except ValidationError as error:
            return ToolOutput.error(f"invalid arguments for read: {error}")
        raise Todo(
            "ch02",
            "from a path to the file's bytes, every failure a result; then decode, window",
        )

    def window(self, lines: list[str], offset: int, limit: int | None) -> ToolOutput:
        """Show ``lines`` from line ``offset`` on, within the caps, with a note if cut short."""
        raise Todo(
            "ch02",
            "the lines from `offset` that fit the limits, and a note if more are left",
        )
