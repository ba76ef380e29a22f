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
        # region ch09a: note and strip a UTF-8 byte order mark, then decode strictly
        # more: codecs.BOM_UTF8; bytes.startswith, bytes.removeprefix; data.decode("utf-8") raises
        bom = data.startswith(codecs.BOM_UTF8)
        return cls(data.removeprefix(codecs.BOM_UTF8).decode("utf-8"), bom)
        # endregion

    def encode(self, text: str) -> bytes:
        """``text`` (already in this file's line endings) as this file's bytes: BOM and UTF-8."""
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode("utf-8")


def line_ending(text: str) -> str:
    r"""The line ending ``text`` uses most: ``"\r\n"`` if more lines end so than in ``"\n"``."""
    # region ch09a: count "\r\n", and the "\n" that have no "\r" before them; more wins
    # more: text.count("\r\n"); every "\r\n" holds a "\n" too; a tie (no line break) is "\n"
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"
    # endregion


def with_newline(text: str, newline: str) -> str:
    r"""``text`` with every line ending (``\n`` or ``\r\n``) written as ``newline``."""
    text = text.replace("\r\n", "\n")
    return text if newline == "\n" else text.replace("\n", newline)


def find_all(text: str, part: str) -> list[int]:
    """Where ``part`` starts in ``text``: every offset, overlapping matches included.

    ``"aa"`` is at 0 and at 1 in ``"aaa"``: for the model's quote to pick one place, both
    count, although ``str.count`` would say 1.
    """
    # region ch09a: str.find from one past the previous match until it returns -1
    # more: start = text.find(part, start) in a loop; append, then start + 1
    found = []
    start = text.find(part)
    while start != -1:
        found.append(start)
        start = text.find(part, start + 1)
    return found
    # endregion


def line_of(text: str, offset: int) -> int:
    """The number (from 1) of the line of ``text`` that holds character ``offset``."""
    return text.count("\n", 0, offset) + 1


def most_similar(text: str, quote: str) -> str | None:
    r"""The lines of ``text`` most like ``quote``, numbered like ``read`` shows them, or ``None``.

    Every run of as many lines as ``quote`` has is compared with it (``difflib``'s ratio);
    the best run is shown if its ratio is at least ``MIN_SIMILARITY``. Both are ``\n`` text.
    """
    # region ch09a: slide a window of len(quote lines) over the lines; keep the best ratio
    # more: SequenceMatcher(None, autojunk=False): set_seq2(quote) once, set_seq1(window) each
    lines = text.split("\n")
    wanted = quote.strip("\n").split("\n")
    size = len(wanted)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2("\n".join(wanted))
    best, best_start = MIN_SIMILARITY, -1
    for start in range(max(1, len(lines) - size + 1)):
        matcher.set_seq1("\n".join(lines[start : start + size]))
        if matcher.real_quick_ratio() < best or matcher.quick_ratio() < best:
            continue
        if (ratio := matcher.ratio()) > best or (ratio == best and best_start == -1):
            best, best_start = ratio, start
    if best_start == -1:
        return None
    return number_lines(lines[best_start : best_start + size], best_start + 1)
    # endregion


def replace_once(
    text: str, old: str, new: str, *, replace_all: bool = False, shown: str = "the file"
) -> tuple[str, int]:
    r"""``text`` with ``old`` replaced by ``new``, and how many replacements were made.

    ``old`` and ``new`` are written in ``text``'s line endings first (the model writes ``\n``).
    Unless ``replace_all``, ``old`` must occur exactly once; otherwise ``EditError`` says why,
    for the model: the most similar lines when nothing matches, the line numbers of the
    matches when several do. ``shown`` names the file in those messages.
    """
    # region ch09a: match in the file's own line endings; zero or several matches → EditError
    # more: line_ending and with_newline first; find_all, line_of, most_similar; str.replace
    newline = line_ending(text)
    old, new = with_newline(old, newline), with_newline(new, newline)
    found = find_all(text, old)
    if not found:
        plain = text.replace("\r\n", "\n")
        similar = most_similar(plain, old.replace("\r\n", "\n"))
        if similar is None:
            raise EditError(
                f"old_string was not found in {shown}, and no lines are close to it; "
                "read the file to see what it holds"
            )
        raise EditError(
            f"old_string was not found in {shown}. The most similar lines are:\n{similar}\n"
            "old_string must match the file exactly, whitespace and indentation included"
        )
    if len(found) > 1 and not replace_all:
        numbers = [str(line_of(text, offset)) for offset in found[:MAX_LINE_NUMBERS]]
        more = ", …" if len(found) > MAX_LINE_NUMBERS else ""
        raise EditError(
            f"old_string occurs {len(found)} times in {shown} (lines {', '.join(numbers)}{more}); "
            "include more surrounding lines in old_string so that it matches once, "
            "or set replace_all to true to replace every occurrence"
        )
    if replace_all:
        return text.replace(old, new), text.count(old)
    return text[: found[0]] + new + text[found[0] + len(old) :], 1
    # endregion


def show_diff(before: str, after: str, shown: str, max_lines: int = MAX_DIFF_LINES) -> str:
    r"""A unified diff of ``before`` and ``after`` (``\n`` text), at most ``max_lines`` lines.

    The headers name the file as ``a/path`` and ``b/path``, like ``git diff``; a diff cut short
    ends with a line saying how many lines were left out.
    """
    # region ch09a: difflib.unified_diff over the lines; keep max_lines, count the rest
    # more: splitlines() and lineterm=""; fromfile=f"a/{shown}", tofile=f"b/{shown}"
    diff = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{shown}", f"b/{shown}", lineterm=""
        )
    )
    if len(diff) > max_lines:
        diff = [*diff[:max_lines], f"… ({len(diff) - max_lines} more lines of diff)"]
    return "\n".join(diff)
    # endregion


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
        # region ch09a: refuse old == new, a missing file, one not read; decode; replace; write
        # more: self.fs.stat, .read_bytes, .locate as place; replace_once; atomic_write_at
        shown = args.path
        path = self.root / shown
        if args.old_string == args.new_string:
            return ToolOutput.error("old_string and new_string are the same; nothing would change")
        try:
            try:
                mode = self.fs.stat(shown).st_mode
            except FileNotFoundError:
                mode = None
            if mode is None or not stat.S_ISREG(mode):
                what = (
                    "was not found"
                    if mode is None
                    else ("is a directory" if stat.S_ISDIR(mode) else "is not a regular file")
                )
                return ToolOutput.error(
                    f"{shown} {what}; edit changes an existing file (use write to create one)"
                )
            if (problem := self.files.check(path, shown)) is not None:
                return ToolOutput.error(problem)
            file = TextFile.decode(self.fs.read_bytes(shown))
            after, count = replace_once(
                file.text, args.old_string, args.new_string,
                replace_all=args.replace_all, shown=shown,
            )
            with self.fs.locate(shown) as place:
                atomic_write_at(place.folder, place.name, file.encode(after))
        except UnicodeDecodeError as error:
            line = error.object[: error.start].count(b"\n") + 1
            return ToolOutput.error(
                f"{shown} is not UTF-8 text (line {line} holds byte "
                f"{error.object[error.start]:#04x}); edit only changes UTF-8 files"
            )
        except EditError as error:
            return ToolOutput.error(str(error))
        except OSError as error:
            return ToolOutput.error(
                f"cannot edit {shown}: {error.strerror or error}; the file was not changed"
            )
        except ValueError:  # a NUL character in the name
            return ToolOutput.error(f"cannot edit {shown!r}: a file name cannot hold NUL")
        self.files.saw(path)
        diff = show_diff(file.text.replace("\r\n", "\n"), after.replace("\r\n", "\n"), shown)
        replacements = "1 replacement" if count == 1 else f"{count} replacements"
        return ToolOutput.ok(f"edited {shown} ({replacements})\n{diff}")
        # endregion
