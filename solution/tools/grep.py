r"""The ``grep`` tool: search the contents of the workspace's files with a regular expression.

Each matching line comes back as ``path:line: text``, the shape ``grep -n`` made familiar, so
the model can go straight to ``read`` with an offset. Context lines (``before`` and ``after``)
are written ``path-line- text``, and ``--`` separates groups of lines that are not next to each
other. At most ``max_matches`` matching lines are shown; a note says how many more there were.

Files are found with ``ignore.walk`` (no ``.git``, virtual environments, ``node_modules`` or
ignored files), optionally narrowed by a glob on their names, and binary files (a NUL byte in
the first 8 KiB, the rule of chapter 2's ``looks_binary``) are passed over. Lines are split at
``\n`` only, a ``\r`` before it is dropped, bytes that are not UTF-8 read as U+FFFD.

Two engines give the same results. When ``ripgrep`` (``rg``) is installed, it searches the
files the walk found, in batches, and its ``--json`` output is turned into the same lines. The
Python engine compiles the pattern once, reads a small file in one piece (a plain word is first
looked for in the raw bytes, and most files end there) and a large one a line at a time. If
``rg`` refuses a pattern (it does not know look-behind, for one), the Python engine runs.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import Field

from ..errors import ToolError
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .glob import glob_regex
from .ignore import Withhold, refusal, walk
from .read import BINARY_SNIFF_BYTES, looks_binary, read_lines

WHOLE_FILE_BYTES = 1024 * 1024
"""Files up to this size are read in one piece; larger ones a line at a time."""

MAX_SEARCHED_LINE = 65536
"""In a file larger than ``WHOLE_FILE_BYTES``, only this many characters of a line are searched."""

REGEX_SYNTAX = frozenset(".^$*+?{}[]\\|()")
"""The characters that make a pattern more than a plain string."""

BATCH = 256
"""How many files one ``rg`` process searches."""

CHUNK = 65536
"""How many bytes of ``rg``'s output are read at a time."""

MAX_RECORD = 1024 * 1024
"""The longest record of ``rg``'s output claw accepts (a long path and a cut line fit)."""


class GrepArguments(ToolArguments):
    """What to look for, where, and how much context to show."""

    pattern: str = Field(min_length=1, description="A Python regular expression.")
    path: str = Field(
        default=".", description="A folder or a file to search, relative to the workspace."
    )
    glob: str | None = Field(
        default=None,
        description="Only files whose path matches this glob; a glob without `/` (`*.py`) "
        "matches file names in every folder.",
    )
    ignore_case: bool = Field(default=False, description="Match upper and lower case alike.")
    before: int = Field(default=0, ge=0, le=20, description="Lines of context before a match.")
    after: int = Field(default=0, ge=0, le=20, description="Lines of context after a match.")


@dataclass(frozen=True)
class Line:
    """One line to show: its number in the file, its text, and whether it matched."""

    number: int
    text: str
    is_match: bool


def literal_of(pattern: str, ignore_case: bool) -> bytes | None:
    """The UTF-8 bytes every match must contain, when ``pattern`` is a plain string.

    ``None`` when it holds regex syntax (``REGEX_SYNTAX``) or case is ignored: then no one
    string of bytes is sure to be in every line that matches.
    """
    # region ch11: None for ignore_case or any REGEX_SYNTAX character; else the encoded pattern
    # more: any(char in REGEX_SYNTAX for char in pattern); pattern.encode()
    if ignore_case or any(char in REGEX_SYNTAX for char in pattern):
        return None
    return pattern.encode()
    # endregion


def screen_of(pattern: str, flags: int = 0) -> re.Pattern[str] | None:
    r"""``pattern`` compiled to search a whole file at once, when that is safe; else ``None``.

    With ``re.MULTILINE``, ``^`` and ``$`` match at the start and end of every line, so a line
    that matches on its own also matches inside the whole text: one search of the text can
    rule a file out. Not when the pattern looks past a line's end: a look-ahead or look-behind
    (``(?=``, ``(?!``, ``(?<=``, ``(?<!``) or ``\A`` / ``\Z`` (the ends of the whole text).
    """
    # region ch11: None if a look-around or \A / \Z is in the pattern; else compile | MULTILINE
    # more: re.search(r"\(\?<?[=!]|\\[AZ]", pattern)
    if re.search(r"\(\?<?[=!]|\\[AZ]", pattern):
        return None
    return re.compile(pattern, flags | re.MULTILINE)
    # endregion


def search_lines(
    lines: Iterable[str], regex: re.Pattern[str], before: int = 0, after: int = 0
) -> Iterator[Line]:
    """The lines that match ``regex``, each with up to ``before`` and ``after`` lines around it.

    Numbered from 1; every line is yielded once, in order, even where the context of two
    matches overlaps. Only ``before`` earlier lines are kept at any time.
    """
    # region ch11: enumerate; a deque(maxlen=before) of recent lines; a count of after-lines due
    # more: on a match yield the deque's lines, clear it, yield the match, set left = after
    recent: deque[Line] = deque(maxlen=before)
    left = 0
    for number, text in enumerate(lines, start=1):
        if regex.search(text):
            yield from recent
            recent.clear()
            yield Line(number, text, True)
            left = after
        elif left > 0:
            yield Line(number, text, False)
            left -= 1
        elif before:
            recent.append(Line(number, text, False))
    # endregion


def search_file(
    path: str | os.PathLike[str],
    regex: re.Pattern[str],
    literal: bytes | None = None,
    before: int = 0,
    after: int = 0,
    screen: re.Pattern[str] | None = None,
) -> list[Line]:
    """The lines of the file at ``path`` to show (see ``search_lines``); none for a binary file.

    A file of at most ``WHOLE_FILE_BYTES`` is read in one piece. When ``literal`` is given and
    not in its bytes, the search ends there, before anything is decoded; when ``screen`` (see
    ``screen_of``) finds nothing in the whole decoded text, it ends there too. A larger file is
    read a line at a time (``read_lines``), and only ``MAX_SEARCHED_LINE`` characters of a line.
    """
    # region ch11: open in binary; binary? []; small: literal, decode once, screen, split at "\n"
    # more: data.decode("utf-8-sig", "replace"); "\r\n" to "\n" first; drop the "" at the end
    with open(path, "rb") as file:
        data = file.read(WHOLE_FILE_BYTES + 1)
        if looks_binary(data[:BINARY_SNIFF_BYTES]):
            return []
        if len(data) <= WHOLE_FILE_BYTES:
            if literal is not None and literal not in data:
                return []
            text = data.decode("utf-8-sig", "replace")
            if "\r" in text:
                text = text.replace("\r\n", "\n").removesuffix("\r")
            if screen is not None and not screen.search(text):
                return []
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            return list(search_lines(lines, regex, before, after))
        file.seek(0)
        wrapper = io.TextIOWrapper(file, "utf-8-sig", errors="replace", newline="\n")
        return list(search_lines(read_lines(wrapper, MAX_SEARCHED_LINE), regex, before, after))
    # endregion


def show_line(path: str, line: Line, max_line_chars: int) -> str:
    """``path:7: text`` for a match, ``path-7- text`` for context; a long text cut with ``…``."""
    text = line.text if len(line.text) <= max_line_chars else line.text[:max_line_chars] + "…"
    mark = ":" if line.is_match else "-"
    return f"{path}{mark}{line.number}{mark} {text}"


def format_matches(
    results: Iterable[tuple[str, list[Line]]],
    max_matches: int,
    before: int = 0,
    after: int = 0,
    max_line_chars: int = 300,
) -> tuple[list[str], int, int]:
    """The output lines for ``results`` (each file's path and lines), with the counts.

    Returns the lines, how many matching lines they show (at most ``max_matches``) and how many
    matched in all. With context (``before`` or ``after`` above 0), ``--`` comes between groups
    of lines that are not next to each other, and between files. Once ``max_matches`` are shown,
    only the ``after`` lines of the last one follow; the rest is counted, not shown.
    """
    # region ch11: count every match; show up to max_matches; hold context lines until a match
    # more: a pending list for lines before a match; a line within `after` of the last shown match
    out: list[str] = []
    shown = total = 0
    for path, lines in results:
        last_number: int | None = None  # of the last line shown from this file
        last_match: int | None = None
        pending: list[Line] = []
        for line in lines:
            if line.is_match:
                total += 1
                if shown == max_matches:
                    continue
                shown += 1
                group, pending = [*pending, line], []
                last_match = line.number
            elif last_match is not None and line.number - last_match <= after:
                group = [line]
            else:
                pending.append(line)
                continue
            for item in group:
                gap = last_number is None or item.number != last_number + 1
                if (before or after) and out and gap:
                    out.append("--")
                out.append(show_line(path, item, max_line_chars))
                last_number = item.number
    return out, shown, total
    # endregion


def find_ripgrep() -> str | None:
    """The ``rg`` program: on the ``PATH``, or beside this Python (the ``ripgrep`` wheel)."""
    return shutil.which("rg") or shutil.which("rg", path=sysconfig.get_path("scripts"))


class RipgrepFailed(ToolError):
    """``rg`` could not do the search (most often: a pattern it does not understand)."""


def is_binary_file(path: str) -> bool:
    """Whether the file at ``path`` looks binary; one that cannot be read counts as binary."""
    try:
        with open(path, "rb") as file:
            return looks_binary(file.read(BINARY_SNIFF_BYTES))
    except OSError:
        return True


# --8<-- [start:ripgrep]
def ripgrep_records(stream: IO[bytes]) -> Iterator[tuple[str, Line]]:
    r"""The ``(path, Line)`` records of ``rg --null --line-number`` output, read as a stream.

    Each record is ``path``, a NUL byte, the line number, ``:`` (a match) or ``-`` (context),
    the text and ``\n``. At most one chunk and one record are held at any time; a record longer
    than ``MAX_RECORD`` bytes (``--max-columns`` keeps them short) stops the search.
    """
    buffer = b""
    while True:
        cut = buffer.find(b"\0")
        end = buffer.find(b"\n", cut + 1) if cut != -1 else -1
        if end == -1:
            if len(buffer) > MAX_RECORD:
                raise RipgrepFailed("rg wrote a record longer than --max-columns allows")
            chunk = stream.read(CHUNK)
            if not chunk:
                return
            buffer += chunk
            continue
        name, rest, buffer = buffer[:cut], buffer[cut + 1 : end], buffer[end + 1 :]
        digits = re.match(rb"(\d+)([:-])", rest)
        if digits is None:
            raise RipgrepFailed(f"rg wrote a line claw cannot read: {rest[:80]!r}")
        number = int(digits[1])
        text = rest[digits.end() :].removesuffix(b"\r").decode("utf-8", "replace")
        if number == 1:
            text = text.removeprefix("\ufeff")
        yield os.fsdecode(name), Line(number, text, digits[2] == b":")


def ripgrep_results(
    rg: str, root: str, files: Iterable[str], args: GrepArguments, max_columns: int = 1204
) -> Iterator[tuple[str, list[Line]]]:
    r"""The files with matches and their lines, as ``rg`` finds them, in ``files``' order.

    ``rg`` is given the files the walk found, ``BATCH`` at a time, so that it skips exactly
    what the Python engine skips; binary files are left out first, by the same rule, and ``-a``
    keeps ``rg`` from applying its own. ``--crlf`` makes ``$`` match before a ``\r\n``. Its
    output is read as a stream, never whole, and ``--max-columns`` cuts every line it prints to
    ``max_columns`` bytes (a line longer than that is shown cut in any case), so a batch's
    matching lines are all that is held, each short, however long the lines of the files.
    """
    command = [rg, "--no-config", "-a", "--crlf", "--null", "--line-number",
               "--with-filename", "--no-heading", "--color", "never",
               "--no-context-separator", "--max-columns", str(max_columns),
               "--max-columns-preview", "-B", str(args.before), "-A", str(args.after)]  # fmt: skip
    if args.ignore_case:
        command.append("-i")
    batch: list[str] = []
    for path in [*files, None]:
        if path is not None:
            if not is_binary_file(os.path.join(root, path)):
                batch.append(path)
            if len(batch) < BATCH:
                continue
        if not batch:
            break
        yield from ripgrep_batch([*command, "-e", args.pattern, "--", *batch], root, batch)
        batch = []


def ripgrep_batch(
    command: list[str], root: str, batch: list[str]
) -> Iterator[tuple[str, list[Line]]]:
    """Run one ``rg`` command in ``root`` over ``batch``: each file's lines, in ``batch``'s order.

    ``rg`` searches the files in parallel and writes them in the order it finishes them, so a
    batch's records are gathered, then handed out in the walk's order.
    """
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=errors)
        assert process.stdout is not None
        try:
            found: dict[str, list[Line]] = {}
            for name, line in ripgrep_records(process.stdout):
                found.setdefault(name, []).append(line)
            if process.wait() not in (0, 1):
                errors.seek(0)
                raise RipgrepFailed(errors.read(4000).decode(errors="replace").strip())
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            process.stdout.close()
    for name in batch:
        if name in found:
            yield name, found[name]
# --8<-- [end:ripgrep]


class GrepTool(ArgumentsTool[GrepArguments]):
    """Search file contents under the workspace with a regular expression."""

    name = "grep"
    description = (
        "Search the contents of files with a Python regular expression. Each matching line "
        "is shown as `path:line: text` (context lines as `path-line- text`). `glob` narrows "
        "the files (`*.py`); .git, virtual environments, node_modules, ignored and binary "
        "files are skipped."
    )
    Arguments = GrepArguments
    read_only = True

    def __init__(
        self,
        root: Path | str = ".",
        *,
        max_matches: int = 100,
        max_line_chars: int = 300,
        ripgrep: bool = True,
        withhold: Withhold | None = None,
    ) -> None:
        """Search under ``root``; show at most ``max_matches`` lines that match a call.

        A line longer than ``max_line_chars`` is cut. With ``ripgrep`` true (the default),
        ``rg`` does the searching when it is installed; false always searches in Python.
        ``withhold`` (see ``ignore.Withhold``) hides more files than the ignore rules do.
        """
        self.root = Path(root)
        self.max_matches = max_matches
        self.max_line_chars = max_line_chars
        self.rg = find_ripgrep() if ripgrep else None
        self.withhold = withhold

    def files(self, args: GrepArguments) -> Iterator[str]:
        """The paths (relative to the root) of the files to search: one file, or a walk.

        Like ``walk``, never a file a link leads to outside the root, nor one ``withhold``
        hides (``call`` has checked ``args.path`` itself already).
        """
        start = Path(args.path).as_posix().strip("/")
        start = "" if start == "." else start
        if (self.root / start).is_file():
            yield start
            return
        name_only = args.glob is not None and "/" not in args.glob
        pattern = glob_regex(args.glob) if args.glob is not None else None
        for relative, _ in walk(self.root, start, self.withhold):
            if pattern is not None:
                subject = relative.rsplit("/", 1)[-1] if name_only else relative
                if not pattern.fullmatch(subject):
                    continue
            yield relative

    def python_results(
        self, args: GrepArguments, regex: re.Pattern[str]
    ) -> Iterator[tuple[str, list[Line]]]:
        """The files with matches and their lines, searched in Python."""
        # region ch11: for each of self.files(args): search_file; yield (path, lines) if any
        # more: literal_of and screen_of once, before the loop; skip a file that cannot be read
        literal = literal_of(args.pattern, args.ignore_case)
        screen = screen_of(args.pattern, regex.flags)
        for relative in self.files(args):
            try:
                lines = search_file(
                    self.root / relative, regex, literal, args.before, args.after, screen
                )
            except OSError:
                continue
            if lines:
                yield relative, lines
        # endregion

    def search(self, args: GrepArguments) -> ToolOutput:
        """Run the search (blocking): compile, pick the engine, format, add the note."""
        # region ch11: compile (re.error is an error result); format_matches; a note if cut
        # more: re.IGNORECASE; "no matches" when total is 0; name how many more were not shown
        if not (self.root / args.path).exists():
            return ToolOutput.error(f"{args.path}: not found; grep searches the workspace")
        try:
            regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
        except re.error as error:
            return ToolOutput.error(f"invalid regular expression {args.pattern!r}: {error}")
        results = (
            ripgrep_results(
                self.rg, str(self.root), self.files(args), args, 4 * self.max_line_chars + 4
            )
            if self.rg is not None
            else self.python_results(args, regex)
        )
        try:
            out, shown, total = format_matches(
                results, self.max_matches, args.before, args.after, self.max_line_chars
            )
        except RipgrepFailed:
            out, shown, total = format_matches(
                self.python_results(args, regex), self.max_matches, args.before, args.after,
                self.max_line_chars,
            )  # fmt: skip
        if total == 0:
            return ToolOutput.ok(f"no matches for {args.pattern!r}")
        text = "\n".join(out)
        if total > shown:
            text += (
                f"\n\n(showing the first {shown} of {total} matching lines; {total - shown} "
                "more not shown: narrow the pattern, or pass glob or path)"
            )
        return ToolOutput.ok(text)
        # endregion

    async def call(self, args: GrepArguments) -> ToolOutput:
        """Search in a worker thread: walking and reading block.

        A path that leads out of the root, or that ``withhold`` hides, is refused first.
        """
        why = refusal(self.root, args.path, self.withhold)
        if why is not None:
            return ToolOutput.error(f"{args.path}: {why}; grep did not search it")
        try:
            return await asyncio.to_thread(self.search, args)
        except (OSError, ValueError) as error:
            return ToolOutput.error(f"grep failed: {error}")
