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
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from pydantic import Field

from ..errors import ToolError
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .edit import TextFile, line_ending
from .fs import OutsideRoot, Root, as_root
from .tracker import FileTracker
from .write import atomic_write_at

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"

MARKERS = (BEGIN, END, END_OF_FILE, ADD.rstrip(), DELETE.rstrip(), UPDATE.rstrip(), MOVE.rstrip())
"""The marker lines of the format; a line that is one of them once its spaces are stripped
(``  *** Update File: x``, `` *** End Patch``) is read as the marker, as Codex reads it."""

MAX_QUOTE_CHARS = 60
"""How much of a wrong patch line an error message quotes."""


# --8<-- [start:operations]
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
# --8<-- [end:operations]


# --8<-- [start:errors]
class PatchError(ToolError, ValueError):
    """A patch that does not follow the format; ``line`` is the patch's line (1 is the first)."""

    def __init__(self, line: int, message: str) -> None:
        """``message`` says what was expected there and what was found."""
        super().__init__(f"line {line}: {message}")
        self.line = line


class ApplyError(ToolError, ValueError):
    """A well-formed patch that does not fit the files: a chunk not found, a file missing."""


def quote(line: str) -> str:
    """``line`` in quotes for an error message, cut to ``MAX_QUOTE_CHARS`` characters."""
    if len(line) > MAX_QUOTE_CHARS:
        line = line[: MAX_QUOTE_CHARS - 1] + "…"
    return repr(line)


def is_marker(line: str) -> bool:
    """Whether ``line``, without the spaces around it, is one of the format's ``MARKERS``.

    ``*** End Patch`` and ``*** End of File`` must be the whole line; the headers
    (``*** Update File:`` …) start it.
    """
    text = line.strip()
    return text in (END, END_OF_FILE) or text.startswith(MARKERS[3:])


def control_character(path: str) -> str | None:
    """The first control character in ``path``, shown as ``repr`` shows it, or ``None``.

    A file name may hold one, but a path in a patch that does is far more likely an accident
    or a trick (an escape sequence that rewrites the terminal), and shows invisibly.
    """
    for char in path:
        if ord(char) < 32 or 127 <= ord(char) < 160:
            return repr(char)
    return None
# --8<-- [end:errors]


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


def separates(cursor: Cursor) -> bool:
    """Whether the blank lines at ``cursor`` only separate: a marker, ``@@`` or the end follows.

    Only empty lines count (a line holding a space is a context line). Codex skips such
    blank lines, and models write them (before ``*** End Patch``, after
    ``*** End of File``); read as empty context lines, they would make the chunk unfindable.
    """
    for line in cursor.lines[cursor.index :]:
        if line.strip():
            return is_marker(line) or line.startswith("@@")
    return True


def file_header(line: str, number: int) -> AddFile | DeleteFile | UpdateFile | None:
    """The operation a header line starts, with an empty body; ``None`` if it is no header.

    ``*** Add File: notes.md`` gives ``AddFile("notes.md")``, and so on for the other two. The
    path is stripped of surrounding spaces; an empty path, or an absolute one, is a
    ``PatchError`` at line ``number``.
    """
    # region ch09b: match the three prefixes; take the path after it; refuse empty and absolute
    # more: line.strip().startswith(prefix.rstrip()); control_character(path); is_absolute()
    line = line.strip()  # models pad markers with spaces; Codex reads them all the same
    for prefix, kind in ((ADD, AddFile), (DELETE, DeleteFile), (UPDATE, UpdateFile)):
        if line.startswith(prefix) or line == prefix.rstrip():
            path = line.removeprefix(prefix.rstrip()).strip()
            if not path:
                raise PatchError(number, f"expected a path after {prefix.rstrip()!r}")
            if (char := control_character(path)) is not None:
                raise PatchError(
                    number, f"the path {quote(path)} holds the control character {char}"
                )
            if PurePath(path).is_absolute() or path.startswith("/"):
                raise PatchError(
                    number, f"expected a path relative to the workspace, got {quote(path)}"
                )
            return kind(path)
    return None
    # endregion


def parse_chunk(cursor: Cursor) -> Chunk:
    """Read one chunk: its ``@@`` lines, then its ``' '``, ``'-'`` and ``'+'`` lines.

    The chunk ends before a ``@@`` line that follows its body (the next chunk), before a
    marker line (``is_marker``: a header or ``*** End Patch``, padded with spaces or not), or at
    the end; ``*** End of File`` ends it too, and is taken. An empty line in the body is an
    empty context line, except blank lines with only a marker, a ``@@`` line or the end after
    them: those separate, as in Codex, and are skipped. Errors: a line that fits none of
    these, a chunk with no body, and a chunk that neither removes nor adds a line.
    """
    # region ch09b: anchors first, then body lines by their first character, until a marker
    # more: line.startswith("@@") -> anchor line[2:].strip(); "" is context "" unless trailing
    start = cursor.number
    anchors: list[str] = []
    lines: list[tuple[str, str]] = []
    while (line := cursor.peek()) is not None:
        if line.startswith("@@"):
            if lines:
                break  # the next chunk
            cursor.take()
            if text := line[2:].strip():
                anchors.append(text)
            continue
        if line.strip() == END_OF_FILE and lines:
            cursor.take()
            return finish_chunk(start, Chunk(tuple(anchors), tuple(lines), end_of_file=True))
        if is_marker(line):
            break
        if line == "" and separates(cursor):
            while cursor.peek() == "":
                cursor.take()
            continue
        if line == "":
            lines.append((" ", ""))
        elif line[0] in " -+":
            lines.append((line[0], line[1:]))
        else:
            raise PatchError(
                cursor.number,
                "expected a line starting with ' ', '-', '+' or '@@', or a '*** ' header, "
                f"got {quote(line)}",
            )
        cursor.take()
    return finish_chunk(start, Chunk(tuple(anchors), tuple(lines)))
    # endregion


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
    # region ch09b: Add: '+' lines; Update: an optional Move to line, then parse_chunk in a loop
    # more: while (line := cursor.peek()) is not None and not is_marker(line); replace()
    if isinstance(header, AddFile):
        added: list[str] = []
        while (line := cursor.peek()) is not None and not is_marker(line):
            if line == "" and separates(cursor):
                cursor.take()
                continue
            if not line.startswith("+"):
                raise PatchError(
                    cursor.number,
                    "expected a line starting with '+' (a line of the new file) or a "
                    f"'*** ' header, got {quote(line)}",
                )
            added.append(cursor.take()[1:])
        return replace(header, lines=tuple(added))
    if isinstance(header, DeleteFile):
        return header
    move_to = None
    if (line := cursor.peek()) is not None and line.strip().startswith(MOVE.rstrip()):
        move_number = cursor.number
        move_to = cursor.take().strip().removeprefix(MOVE.rstrip()).strip()
        if not move_to:
            raise PatchError(move_number, f"expected a path after {MOVE.rstrip()!r}")
        if (char := control_character(move_to)) is not None:
            raise PatchError(
                move_number, f"the path {quote(move_to)} holds the control character {char}"
            )
    chunks: list[Chunk] = []
    while (line := cursor.peek()) is not None and (
        not is_marker(line) or line.strip() == END_OF_FILE
    ):
        if not line.strip() and separates(cursor):
            cursor.take()
            continue
        chunks.append(parse_chunk(cursor))
    if not chunks and move_to is None:
        raise PatchError(
            number,
            f"{quote(UPDATE + header.path)} changes nothing: expected '@@' or lines starting "
            "with ' ', '-' or '+' after it",
        )
    return replace(header, move_to=move_to, chunks=tuple(chunks))
    # endregion


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
    # region ch09b: Begin; then header, section, header, section... until End; then only blanks
    # more: a dict from os.path.normpath(path) to the line that named it finds a path twice
    cursor = Cursor(split_patch(text))
    while (line := cursor.peek()) is not None and not line.strip():
        cursor.take()
    number = cursor.number
    first = "" if cursor.at_end() else cursor.take()
    if first.strip() != BEGIN:
        raise PatchError(number, f"expected {BEGIN!r}, got {quote(first)}")
    operations: list[Operation] = []
    named: dict[str, int] = {}  # each path the patch names, and the line that named it
    while True:
        if cursor.at_end():
            raise PatchError(cursor.number, f"the patch ended without {END!r}")
        number, line = cursor.number, cursor.take()
        if line.strip() == END:
            if not operations:
                raise PatchError(number, "the patch changes no files")
            break
        header = file_header(line, number)
        if header is None and line.strip().startswith(MOVE.rstrip()):
            raise PatchError(
                number, f"{MOVE.rstrip()!r} must come right after an {UPDATE.rstrip()!r} line"
            )
        if header is None:
            raise PatchError(
                number,
                f"expected {ADD.rstrip()!r}, {UPDATE.rstrip()!r}, {DELETE.rstrip()!r} or "
                f"{END!r}, got {quote(line)}",
            )
        operation = parse_section(cursor, header, number)
        targets = [(operation.path, number)]
        if isinstance(operation, UpdateFile) and operation.move_to is not None:
            targets.append((operation.move_to, number + 1))
        for path, where in targets:
            if (before := named.setdefault(os.path.normpath(path), where)) != where:
                raise PatchError(
                    where, f"{path} is already changed by this patch (line {before})"
                )
        operations.append(operation)
    while not cursor.at_end():
        number, line = cursor.number, cursor.take()
        if line.strip():
            raise PatchError(number, f"expected nothing after {END!r}, got {quote(line)}")
    return operations
    # endregion


# --8<-- [start:file-lines]
class EndedLine(str):
    r"""A line of a file without its line end; ``end`` is the end it had (``"\r\n"``, ``"\n"``).

    It compares as the plain text, so finding chunks is unchanged; a context line copied from
    the file is this object, so it keeps its own end, in a file of mixed line ends too.
    """

    end: str

    def __new__(cls, text: str, end: str) -> EndedLine:
        """``text``, remembering ``end``."""
        line = super().__new__(cls, text)
        line.end = end
        return line


@dataclass
class FileLines:
    r"""A file's text as lines without their ends, and what it takes to put the text back.

    ``"a\r\nb\r\n"`` is ``FileLines(["a", "b"], "\r\n", True)``. Each line split from the
    file is an ``EndedLine`` and keeps its own end; ``join`` ends a line the patch added with
    the file's usual one (``line_ending``, from the edit tool), and ends the text with a line end
    only if it ended with one: CRLF stays CRLF, a lone LF in a CRLF file stays LF, a missing
    final newline stays missing.
    """

    lines: list[str]
    newline: str = "\n"
    final_newline: bool = True

    @classmethod
    def split(cls, text: str) -> FileLines:
        """The lines of ``text`` (each an ``EndedLine``), its usual line end, its final newline."""
        pieces = text.split("\n")
        final_newline = pieces[-1] == ""
        if final_newline:
            pieces.pop()
        lines: list[str] = []
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1 and not final_newline
            if piece.endswith("\r") and not last:
                lines.append(EndedLine(piece[:-1], "\r\n"))
            else:
                lines.append(EndedLine(piece, "" if last else "\n"))
        return cls(lines, line_ending(text), final_newline)

    def join(self) -> str:
        """The text of the lines: each with its own end (an added line: the file's usual one)."""
        parts = []
        for index, line in enumerate(self.lines):
            end = getattr(line, "end", "") or self.newline
            if index == len(self.lines) - 1 and not self.final_newline:
                end = ""
            parts.append(line + end)
        return "".join(parts)
# --8<-- [end:file-lines]


def seek(lines: Sequence[str], pattern: Sequence[str], start: int, end_of_file: bool) -> int | None:
    """Where ``pattern`` first occurs in ``lines`` at or after index ``start``, or ``None``.

    Exact matches are tried first, over the whole range; only if there is none, lines that
    differ in trailing whitespace alone also match (``rstrip`` both sides). Nothing else is
    forgiven. With ``end_of_file``, the only place tried is the very end of ``lines``.
    """
    # region ch09b: two passes over the candidate starts: exact, then rstrip; None if neither
    # more: candidates are range(start, len(lines) - len(pattern) + 1), or just the last one
    width = len(pattern)
    last = len(lines) - width
    places = [last] if end_of_file else range(start, last + 1)
    candidates = [index for index in places if index >= start]
    for index in candidates:
        if list(lines[index : index + width]) == list(pattern):
            return index
    stripped = [want.rstrip() for want in pattern]
    for index in candidates:
        if [line.rstrip() for line in lines[index : index + width]] == stripped:
            return index
    return None
    # endregion


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
    # region ch09b: a position that only moves forward; collect the pieces of the new file
    # more: copy lines[done:at]; then walk chunk.lines: " " copies the file's line, "-" skips it
    result: list[str] = []
    done = 0  # lines before this index are in `result` already
    position = 0  # where the next search starts
    for number, chunk in enumerate(chunks, start=1):
        for anchor in chunk.anchors:
            found = find_anchor(lines, anchor, position)
            if found is None:
                raise ApplyError(
                    f"{path}: chunk {number} not found: no line starting with "
                    f"{quote(anchor)} after line {position}"
                )
            position = found + 1
        old = chunk.old
        if not old:
            at = position if chunk.anchors and not chunk.end_of_file else len(lines)
        elif (found := seek(lines, old, position, chunk.end_of_file)) is not None:
            at = found
        else:
            where = "at the end of the file" if chunk.end_of_file else f"after line {position}"
            # a blank line would show as nothing: show it quoted ('' or '  ')
            looked_for = "\n".join(f"    {line if line.strip() else repr(line)}" for line in old)
            raise ApplyError(
                f"{path}: chunk {number} not found: these lines are not in the file "
                f"{where}:\n{looked_for}"
            )
        result += lines[done:at]
        for kind, text in chunk.lines:
            if kind == "+":
                result.append(text)
            else:  # the file's own line, trailing whitespace and all
                if kind == " ":
                    result.append(lines[at])
                at += 1
        done = position = at
    return result + list(lines[done:])
    # endregion


@dataclass
class Plan:
    """Everything a patch will do, computed before anything is done.

    ``writes`` maps each file to write (its path in the patch) to its new bytes, ``deletes``
    lists the files to remove (the sources of moves among them), ``summary`` has one
    ``git status --short`` line per file.
    """

    writes: dict[str, bytes] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)

    def carry_out(self, root: Root) -> None:
        """Write every new content (creating folders), then delete; ``OSError`` on failure.

        Every file is reached through ``root`` (``tools/fs.py``), never by name.
        """
        for path, data in self.writes.items():
            with root.locate(path, parents=True) as place:
                atomic_write_at(place.folder, place.name, data)
        for path in self.deletes:
            root.unlink(path)


def kind_of(root: Root, path: str) -> str | None:
    """What ``path`` is under ``root``: ``"file"``, ``"other"`` (a folder…), or ``None``.

    A link is followed if it stays inside; a dangling link counts as something (``"other"``),
    so that an Add never writes through it. A path that leads out of ``root`` is an
    ``ApplyError`` naming it.
    """
    try:
        mode = root.stat(path).st_mode
    except OutsideRoot as error:
        raise ApplyError(f"cannot change {path}: {error}") from None
    except FileNotFoundError:
        try:
            with root.locate(path, follow=False) as place:
                os.stat(place.name, dir_fd=place.folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return "other"
    return "file" if stat.S_ISREG(mode) else "other"


def plan_patch(
    root: Root | Path | str, operations: Sequence[Operation], files: FileTracker | None = None
) -> Plan:
    """What ``operations`` will do to the files under ``root``, or an ``ApplyError``.

    Nothing is written here: each file is read (through the ``Root``) and its new content
    computed in memory. An Add of a file that exists, an Update or Delete of one that does
    not, a Move onto a file that exists, a file that is not UTF-8 text, a chunk that does not
    fit, and (when ``files`` is given) an Update of a file not read, or changed since, are all
    ``ApplyError``. A path that leads out of ``root`` raises ``OutsideRoot`` (an ``OSError``).
    """
    # region ch09b: one case per kind; check, read, apply_chunks, encode; record in the plan
    # more: kind_of(fs, path); fs.read_bytes; TextFile.decode, FileLines.split, apply_chunks
    fs = as_root(root)
    plan = Plan()
    for operation in operations:
        kind = kind_of(fs, operation.path)
        if isinstance(operation, AddFile):
            if kind is not None:
                raise ApplyError(
                    f"cannot add {operation.path}: it already exists; "
                    "use '*** Update File: ' to change it"
                )
            plan.writes[operation.path] = "".join(f"{line}\n" for line in operation.lines).encode()
            plan.summary.append(f"A {operation.path}")
        elif isinstance(operation, DeleteFile):
            if kind != "file":
                what = "it is not a file" if kind else "no such file"
                raise ApplyError(f"cannot delete {operation.path}: {what}")
            plan.deletes.append(operation.path)
            plan.summary.append(f"D {operation.path}")
        else:
            if kind != "file":
                what = "it is not a file" if kind else "no such file"
                raise ApplyError(f"cannot update {operation.path}: {what}")
            if files is not None and (
                reason := files.check(fs.path / operation.path, operation.path)
            ):
                raise ApplyError(reason)
            try:
                file = TextFile.decode(fs.read_bytes(operation.path))
            except UnicodeDecodeError:
                raise ApplyError(f"cannot update {operation.path}: it is not UTF-8 text") from None
            body = FileLines.split(file.text)
            body.lines = apply_chunks(body.lines, operation.chunks, operation.path)
            data = file.encode(body.join())
            if operation.move_to is None:
                plan.writes[operation.path] = data
                plan.summary.append(f"M {operation.path}")
                continue
            if kind_of(fs, operation.move_to) is not None:
                raise ApplyError(
                    f"cannot move {operation.path} to {operation.move_to}: "
                    f"{operation.move_to} already exists"
                )
            plan.writes[operation.move_to] = data
            plan.deletes.append(operation.path)
            plan.summary.append(f"R {operation.path} -> {operation.move_to}")
    return plan
    # endregion


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

    def __init__(self, root: Root | Path | str = ".", files: FileTracker | None = None) -> None:
        """Patch files under ``root``; with ``files``, only files read and unchanged since.

        Files are opened through ``self.fs`` (a ``Root``), so no path leads out of ``root``,
        with or without chapter 14's checks in front.
        """
        self.fs = as_root(root)
        self.root = self.fs.path
        self.files = files

    async def call(self, args: PatchArguments) -> ToolOutput:
        """Parse, plan, carry out; the summary, or an error result and no file changed."""
        # region ch09b: parse_patch, plan_patch, carry_out, tell files; each failure is an error
        # more: catch ValueError and OSError (OutsideRoot is one) before carry_out(self.fs)
        try:
            plan = plan_patch(self.fs, parse_patch(args.patch), self.files)
        except (ValueError, OSError) as error:
            return ToolOutput.error(f"the patch was not applied: {error}")
        try:
            plan.carry_out(self.fs)
        except OSError as error:
            return ToolOutput.error(f"the patch failed while writing: {error}")
        if self.files is not None:
            for path in plan.writes:
                self.files.saw(self.root / path)
        return ToolOutput.ok("\n".join(plan.summary))
        # endregion
