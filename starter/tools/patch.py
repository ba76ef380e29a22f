"""The ``apply_patch`` tool: changes to several files in one call, applied all or not at all.

The model writes one patch in the format OpenAI's Codex uses (often called V4A): an envelope
``*** Begin Patch`` ... ``*** End Patch`` holding file sections, ``*** Add File: path``,
``*** Delete File: path`` and ``*** Update File: path`` (optionally renamed with
``*** Move to: path``). An update is a list of chunks; each chunk is found in the file by its
lines, not by line numbers: context lines (``' '``) and removed lines (``'-'``) must be in the
file, in that order, and ``'+'`` lines take the removed lines' place. ``@@ text`` lines before a
chunk name lines to find first (``@@ class Cart``, ``@@ def total``), for a chunk whose context
alone appears more than once.

The work is done in three layers, each testable alone: ``parse_patch`` turns the text into typed
operations (pure, with errors that give the patch's line number); ``plan_patch`` computes every
file's new content in memory, so a chunk that does not fit stops everything before a byte is
written; ``Plan.carry_out`` then writes, moves and deletes. The one fuzz allowed when finding a
chunk is trailing whitespace: indentation is meaning in Python and YAML, and is never ignored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from pydantic import Field

from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .edit import TextFile, line_ending
from .tracker import FileTracker
from .write import atomic_write

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"

MAX_QUOTE_CHARS = 60
"""How much of a wrong patch line an error message quotes."""


@dataclass(frozen=True)
class Chunk:
    """One change inside a file: its lines, each with its kind, and the lines to find first.

    ``lines`` are ``(kind, text)`` pairs in the patch's order: kind ``" "`` is context (in the
    file, kept), ``"-"`` removed, ``"+"`` added. ``anchors`` are the texts of the ``@@`` lines
    before the chunk, each a line to find (in order) before the chunk is looked for.
    ``end_of_file`` is set by ``*** End of File``: the chunk must then end at the file's end.
    """

    anchors: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()
    end_of_file: bool = False

    @property
    def old(self) -> list[str]:
        """The lines the file holds now: context and removed lines."""
        return [text for kind, text in self.lines if kind != "+"]

    @property
    def new(self) -> list[str]:
        """The lines that take their place: context and added lines."""
        return [text for kind, text in self.lines if kind != "-"]


@dataclass(frozen=True)
class AddFile:
    """Create the file ``path`` holding ``lines`` (each followed by a newline)."""

    path: str
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeleteFile:
    """Delete the file ``path``."""

    path: str


@dataclass(frozen=True)
class UpdateFile:
    """Change the file ``path`` chunk by chunk, and rename it to ``move_to`` if that is set."""

    path: str
    move_to: str | None = None
    chunks: tuple[Chunk, ...] = ()


Operation = AddFile | DeleteFile | UpdateFile
"""One file section of a patch."""


class PatchError(ValueError):
    """A patch that does not follow the format; ``line`` is the patch's line (1 is the first)."""

    def __init__(self, line: int, message: str) -> None:
        """``message`` says what was expected there and what was found."""
        super().__init__(f"line {line}: {message}")
        self.line = line


class ApplyError(ValueError):
    """A well-formed patch that does not fit the files: a chunk not found, a file missing."""


def quote(line: str) -> str:
    """``line`` in quotes for an error message, cut to ``MAX_QUOTE_CHARS`` characters."""
    if len(line) > MAX_QUOTE_CHARS:
        line = line[: MAX_QUOTE_CHARS - 1] + "…"
    return repr(line)


class Cursor:
    """A position in the lines of a patch: the parser reads them one at a time.

    ``peek`` looks at the next line without taking it, ``take`` takes it; ``number`` is the
    patch's line number of the next line (1 for the first), for error messages.
    """

    def __init__(self, lines: Sequence[str]) -> None:
        """Start before the first of ``lines``."""
        self.lines = lines
        self.index = 0

    @property
    def number(self) -> int:
        """The line number of the next line (one past the last line at the end)."""
        return self.index + 1

    def at_end(self) -> bool:
        """Whether every line has been taken."""
        return self.index >= len(self.lines)

    def peek(self) -> str | None:
        """The next line, or ``None`` at the end."""
        return None if self.at_end() else self.lines[self.index]

    def take(self) -> str:
        """The next line, which is then behind the cursor."""
        line = self.lines[self.index]
        self.index += 1
        return line


def file_header(line: str, number: int) -> AddFile | DeleteFile | UpdateFile | None:
    """The operation a header line starts, with an empty body; ``None`` if it is no header.

    ``*** Add File: notes.md`` gives ``AddFile("notes.md")``, and so on for the other two. The
    path is stripped of surrounding spaces; an empty path, or an absolute one, is a
    ``PatchError`` at line ``number``.
    """
    raise Todo(
        "ch09",
        "match the three prefixes; take the path after it; refuse empty and absolute",
    )


def parse_chunk(cursor: Cursor) -> Chunk:
    """Read one chunk: its ``@@`` lines, then its ``' '``, ``'-'`` and ``'+'`` lines.

    The chunk ends before a ``@@`` line that follows its body (the next chunk), before a line
    starting with ``*** `` (a header), or at the end; ``*** End of File`` ends it too, and is
    taken. An empty line in the body is an empty context line. Errors: a line that fits none
    of these, a chunk with no body, and a chunk that neither removes nor adds a line.
    """
    raise Todo("ch09", "anchors first, then body lines by their first character, until a header")


def finish_chunk(start: int, chunk: Chunk) -> Chunk:
    """``chunk``, read from line ``start`` on; a ``PatchError`` if it has no body or no change."""
    if not chunk.lines:
        raise PatchError(start, "expected lines starting with ' ', '-' or '+' after '@@'")
    if all(kind == " " for kind, _ in chunk.lines):
        raise PatchError(start, "the chunk changes nothing: it has no '-' or '+' line")
    return chunk


def parse_section(cursor: Cursor, header: Operation, number: int) -> Operation:
    """``header`` (from ``file_header``, at line ``number``) with its body read from ``cursor``.

    An ``AddFile`` takes the ``'+'`` lines that follow; a ``DeleteFile`` has no body; an
    ``UpdateFile`` takes an optional ``*** Move to:`` line, then chunks. Each body ends before
    the next line starting with ``*** ``.
    """
    raise Todo(
        "ch09",
        "Add: '+' lines; Update: an optional Move to line, then parse_chunk in a loop",
    )


def split_patch(text: str) -> list[str]:
    r"""The lines of a patch: split at ``\n``, a ``\r`` before it dropped, no line ends kept.

    A final newline ends the last line; it does not start an empty one.
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()
    return lines


def parse_patch(text: str) -> list[Operation]:
    r"""The operations of a patch, in the order it lists them.

    Blank lines before ``*** Begin Patch`` and after ``*** End Patch`` are ignored. Every error
    is a ``PatchError`` naming the patch's line. A path may appear in one section only (as
    the file a section changes, or as a ``Move to`` target), so no two sections fight.
    """
    raise Todo(
        "ch09",
        "Begin; then header, section, header, section... until End; then only blanks",
    )


@dataclass
class FileLines:
    r"""A file's text as lines without their ends, and what it takes to put the text back.

    ``"a\r\nb\r\n"`` is ``FileLines(["a", "b"], "\r\n", True)``. ``join`` writes every
    line end as the file's own (``line_ending``, from the edit tool) and ends the text with
    one only if it ended with one: CRLF stays CRLF, a missing final newline stays missing.
    """

    lines: list[str]
    newline: str = "\n"
    final_newline: bool = True

    @classmethod
    def split(cls, text: str) -> FileLines:
        """The lines of ``text``, its line end and whether its last line has one."""
        lines = text.replace("\r\n", "\n").split("\n")
        final_newline = lines[-1] == ""
        if final_newline:
            lines.pop()
        return cls(lines, line_ending(text), final_newline)

    def join(self) -> str:
        """The text of the lines, each line end the file's own."""
        text = self.newline.join(self.lines)
        return text + self.newline if self.lines and self.final_newline else text


def seek(lines: Sequence[str], pattern: Sequence[str], start: int, end_of_file: bool) -> int | None:
    """Where ``pattern`` first occurs in ``lines`` at or after index ``start``, or ``None``.

    Exact matches are tried first, over the whole range; only if there is none, lines that
    differ in trailing whitespace alone also match (``rstrip`` both sides). Nothing else is
    forgiven. With ``end_of_file``, the only place tried is the very end of ``lines``.
    """
    raise Todo("ch09", "two passes over the candidate starts: exact, then rstrip; None if neither")


def find_anchor(lines: Sequence[str], anchor: str, start: int) -> int | None:
    """The index of the first line at or after ``start`` that begins with ``anchor``.

    Indentation and trailing spaces are ignored here, and only here: an anchor names a line,
    it is not text to replace. ``@@ def total`` finds ``    def total(self) -> Money:``.
    """
    for index in range(start, len(lines)):
        if lines[index].strip().startswith(anchor):
            return index
    return None


def apply_chunks(lines: Sequence[str], chunks: Sequence[Chunk], path: str) -> list[str]:
    """The lines of the file after ``chunks``, each found after the one before it.

    For each chunk: find its anchors in order, each after the last; then ``seek`` its ``old``
    lines from there and put its ``new`` lines in their place. Context lines are copied from
    the file, not from the patch, so a line matched despite trailing spaces keeps them. A
    chunk that only adds lines goes right after its last anchor, or at the end of the file if
    it has none. An anchor or a chunk that cannot be found is an ``ApplyError`` naming
    ``path``, the chunk's number and what was looked for.
    """
    raise Todo("ch09", "a position that only moves forward; collect the pieces of the new file")


@dataclass
class Plan:
    """Everything a patch will do, computed before anything is done.

    ``writes`` maps each file to write to its new bytes, ``deletes`` lists the files to remove
    (the sources of moves among them), ``summary`` has one ``git status --short`` line per file.
    """

    writes: dict[Path, bytes] = field(default_factory=dict)
    deletes: list[Path] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)

    def carry_out(self) -> None:
        """Write every new content (creating folders), then delete; ``OSError`` on failure."""
        for path, data in self.writes.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        for path in self.deletes:
            path.unlink()


def plan_patch(
    root: Path, operations: Sequence[Operation], files: FileTracker | None = None
) -> Plan:
    """What ``operations`` will do to the files under ``root``, or an ``ApplyError``.

    Nothing is written here: each file is read and its new content computed in memory. An
    Add of a file that exists, an Update or Delete of one that does not, a Move onto a file
    that exists, a file that is not UTF-8 text, a chunk that does not fit, and (when ``files``
    is given) an Update of a file not read, or changed since, are all ``ApplyError``.
    """
    raise Todo("ch09", "one case per kind; check, read, apply_chunks, encode; record in the plan")


class PatchArguments(ToolArguments):
    """The one argument of ``apply_patch``: the whole patch (other arguments are refused)."""

    patch: str = Field(
        min_length=1,
        description=(
            "The patch, from '*** Begin Patch' to '*** End Patch'. Inside it, one section per "
            "file: '*** Add File: <path>' followed by the new file's lines, each starting with "
            "'+'; '*** Delete File: <path>'; or '*** Update File: <path>' (optionally followed "
            "by '*** Move to: <new path>') and chunks. A chunk is lines starting with ' ' "
            "(context, unchanged), '-' (removed) or '+' (added), usually 3 lines of context "
            "before and after a change; put '@@ <line>' before a chunk (e.g. '@@ class Cart' "
            "or '@@ def total') to find that line first when the context is not unique, and "
            "'*** End of File' after a chunk that ends at the end of the file. Paths are "
            "relative to the workspace."
        ),
    )


class ApplyPatchTool(ArgumentsTool[PatchArguments]):
    """Apply a patch to files under ``root``: every change, or none of them."""

    name = "apply_patch"
    description = (
        "Change several files in one call with a patch: add, update (by chunks of context and "
        "changed lines), rename and delete files. The patch is applied whole or not at all. "
        "Read a file before updating it."
    )
    Arguments = PatchArguments
    read_only = False

    def __init__(self, root: Path | str = ".", files: FileTracker | None = None) -> None:
        """Patch files under ``root``; with ``files``, only files read and unchanged since."""
        self.root = Path(root)
        self.files = files

    async def call(self, args: PatchArguments) -> ToolOutput:
        """Parse, plan, carry out; the summary, or an error result and no file changed."""
        raise Todo(
            "ch09",
            "parse_patch, plan_patch, carry_out, tell files; each failure is an error",
        )
