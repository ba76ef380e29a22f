"""The ``edit`` tool: replace one exact piece of a file with another, and show the diff.

The model quotes the text to change (``old_string``) and gives its replacement
(``new_string``). The quote must match the file exactly, and exactly once, so the edit goes
where the model meant and nowhere else; ``replace_all`` changes every occurrence instead. A
quote that matches nothing, or several places, is refused with a message that helps the next
try: the lines most like the quote, or the line numbers of every match.

The file keeps what the model cannot see in ``read``'s output: its line endings (a Windows
file keeps its CRLF endings), a UTF-8 byte order mark, and whether it ends with a newline.
The model must have read the file in this session, and the file must not have changed since
(``FileTracker``). The new content is written with ``atomic_write`` and the result is a short
unified diff, so the model (and the person watching) sees what changed.
"""

from __future__ import annotations

import codecs
import difflib
import stat
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..errors import ToolError
from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .fs import Root, as_root
from .read import number_lines
from .tracker import FileTracker
from .write import atomic_write_at

MAX_DIFF_LINES = 60
"""How many lines of diff an edit's result shows; the rest are counted."""

MAX_LINE_NUMBERS = 10
"""How many line numbers a message about several matches lists."""

MIN_SIMILARITY = 0.5
"""How alike (difflib's ratio, 0 to 1) lines must be to be shown as "the most similar"."""


class EditError(ToolError):
    """An edit that cannot be made; the message is written for the model."""


class EditArguments(ToolArguments):
    """Which file to change, the exact text to find, and what replaces it."""

    path: str = Field(min_length=1, description="The file to edit, relative to the workspace.")
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace, copied from the file, whitespace included. "
        "It must occur exactly once unless replace_all is true; add lines around it if not.",
    )
    new_string: str = Field(description="The text to put in its place (different from it).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string, not just one."
    )


@dataclass(frozen=True)
class TextFile:
    r"""A text file's content, and what must survive an edit of it.

    ``text`` is the content as on disk (its line endings included), without the byte order
    mark; ``bom`` says whether the file started with one.
    """

    text: str
    bom: bool

    @classmethod
    def decode(cls, data: bytes) -> TextFile:
        """Read ``data`` as UTF-8 text; raises ``UnicodeDecodeError`` if it is not."""
        raise Todo("ch09a", "note and strip a UTF-8 byte order mark, then decode strictly")

    def encode(self, text: str) -> bytes:
        """``text`` (already in this file's line endings) as this file's bytes: BOM and UTF-8."""
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode("utf-8")


def line_ending(text: str) -> str:
    r"""The line ending ``text`` uses most: ``"\r\n"`` if more lines end so than in ``"\n"``."""
    raise Todo(
        "ch09a",
        "count \"\\r\\n\", and the \"\\n\" that have no \"\\r\" before them; more wins",
    )


def with_newline(text: str, newline: str) -> str:
    r"""``text`` with every line ending (``\n`` or ``\r\n``) written as ``newline``."""
    text = text.replace("\r\n", "\n")
    return text if newline == "\n" else text.replace("\n", newline)


def find_all(text: str, part: str) -> list[int]:
    """Where ``part`` starts in ``text``: every offset, overlapping matches included.

    ``"aa"`` is at 0 and at 1 in ``"aaa"``: for the model's quote to pick one place, both
    count, although ``str.count`` would say 1.
    """
    raise Todo("ch09a", "str.find from one past the previous match until it returns -1")


def line_of(text: str, offset: int) -> int:
    """The number (from 1) of the line of ``text`` that holds character ``offset``."""
    return text.count("\n", 0, offset) + 1


def most_similar(text: str, quote: str) -> str | None:
    r"""The lines of ``text`` most like ``quote``, numbered like ``read`` shows them, or ``None``.

    Every run of as many lines as ``quote`` has is compared with it (``difflib``'s ratio);
    the best run is shown if its ratio is at least ``MIN_SIMILARITY``. Both are ``\n`` text.
    """
    raise Todo("ch09a", "slide a window of len(quote lines) over the lines; keep the best ratio")


def replace_once(
    text: str, old: str, new: str, *, replace_all: bool = False, shown: str = "the file"
) -> tuple[str, int]:
    r"""``text`` with ``old`` replaced by ``new``, and how many replacements were made.

    ``old`` and ``new`` are written in ``text``'s line endings first (the model writes ``\n``).
    Unless ``replace_all``, ``old`` must occur exactly once; otherwise ``EditError`` says why,
    for the model: the most similar lines when nothing matches, the line numbers of the
    matches when several do. ``shown`` names the file in those messages.
    """
    raise Todo("ch09a", "match in the file's own line endings; zero or several matches → EditError")


def show_diff(before: str, after: str, shown: str, max_lines: int = MAX_DIFF_LINES) -> str:
    r"""A unified diff of ``before`` and ``after`` (``\n`` text), at most ``max_lines`` lines.

    The headers name the file as ``a/path`` and ``b/path``, like ``git diff``; a diff cut short
    ends with a line saying how many lines were left out.
    """
    raise Todo("ch09a", "difflib.unified_diff over the lines; keep max_lines, count the rest")


class EditTool(ArgumentsTool[EditArguments]):
    """Replace an exact, unique piece of a file the model has read; answer with the diff."""

    name = "edit"
    description = (
        "Replace old_string with new_string in a file. old_string must match the file exactly "
        "(whitespace included) and occur once, unless replace_all is true. Read the file "
        "first. The result is a diff of the change."
    )
    Arguments = EditArguments
    read_only = False

    def __init__(self, root: Root | Path | str = ".", *, files: FileTracker | None = None) -> None:
        """Edit files under ``root``; ``files``: the tracker shared with ``read`` and ``write``.

        Files are opened through ``self.fs`` (a ``Root``), so no path leads out of ``root``.
        """
        self.fs = as_root(root)
        self.root = self.fs.path
        self.files = files if files is not None else FileTracker()

    async def call(self, args: EditArguments) -> ToolOutput:
        """Make the edit; every failure is an error result and leaves the file as it was."""
        raise Todo(
            "ch09a",
            "refuse old == new, a missing file, one not read; decode; replace; write",
        )
