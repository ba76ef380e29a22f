"""The ``glob`` tool: find files by name pattern, newest first.

A pattern is matched against each file's path relative to the folder searched, part by part:
``*`` and ``?`` stay within one part (``*.py`` is only the top folder's Python files),
``**/`` is any number of folders, none included (``**/*.py`` is every Python file, and
``src/**/test_*.py`` every test file anywhere under ``src``), and ``[abc]`` / ``[!abc]`` are
sets of characters. Files that ``ignore.walk`` skips (``.git``, virtual environments,
``node_modules``, what ``.gitignore`` ignores) are never listed.

The newest files come first, by modification time (ties by path): what the model is working
on is most likely what changed last. At most ``max_results`` paths are shown, with a note
saying how many more matched. The tree is walked as a stream: only the best ``max_results``
matches are held at any time, however many files match.
"""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .ignore import Withhold, refusal, walk


class GlobArguments(ToolArguments):
    """A pattern, and the folder to look in."""

    pattern: str = Field(
        min_length=1,
        description="A glob pattern such as `**/*.py` or `src/**/test_*.py`; `*` stays within "
        "one folder, `**/` crosses any number of them.",
    )
    path: str = Field(
        default=".", description="The folder to search in, relative to the workspace."
    )


@dataclass(frozen=True)
class Found:
    """One file that matched: its path relative to the workspace and when it last changed."""

    path: str
    mtime: float


def set_end(pattern: str, start: int) -> int:
    """The index of the ``]`` that closes the set opened at ``start``, or -1 if none does.

    A ``]`` right after the ``[`` (or after ``[!``) is a member, not the end, as in ``fnmatch``.
    """
    first = start + 1
    if pattern.startswith("!", first):
        first += 1
    if pattern.startswith("]", first):
        first += 1
    return pattern.find("]", first)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regular expression that matches the whole relative paths ``pattern`` matches.

    ``**/`` becomes "any folders, or none", a ``**`` at the end anything at all, ``*`` any
    characters but ``/``, ``?`` one character but ``/``, ``[...]`` a set (``[!...]`` its
    complement); everything else matches itself. A leading ``./`` is dropped.
    """
    # region ch11: walk the pattern a character at a time; translate **/, **, *, ?, [...]
    # more: re.escape for plain characters; "(?:.*/)?" for **/; "[^/]*" for *; re.fullmatch
    pattern = pattern.removeprefix("./")
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := set_end(pattern, i)) != -1:
            inside = pattern[i + 1 : end]
            negate = inside.startswith("!")
            inside = re.sub(r"([\\\[&~|])", r"\\\1", inside.removeprefix("!"))
            if inside.startswith("^"):
                inside = "\\" + inside  # a member here; first in a regex set it would negate
            out.append(f"[{'^' if negate else ''}{inside}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)
    # endregion


def newest_first(found: Iterable[Found], limit: int) -> tuple[list[Found], int]:
    """The ``limit`` newest of ``found`` (ties: by path) and how many there were in all.

    ``found`` is consumed once, as a stream: no more than ``limit`` items are kept.
    """
    # region ch11: count while you go; heapq.nsmallest keeps only the best `limit`
    # more: key=lambda f: (-f.mtime, f.path); a generator that counts as it yields
    total = 0

    def counted() -> Iterator[Found]:
        nonlocal total
        for item in found:
            total += 1
            yield item

    best = heapq.nsmallest(limit, counted(), key=lambda item: (-item.mtime, item.path))
    return best, total
    # endregion


class GlobTool(ArgumentsTool[GlobArguments]):
    """Find files by glob pattern under the workspace, newest first, skipping ignored files."""

    name = "glob"
    description = (
        "Find files by name with a glob pattern (`**/*.py`, `src/**/test_*.py`). Paths are "
        "relative to the workspace, newest first; .git, virtual environments, node_modules "
        "and files .gitignore ignores are skipped."
    )
    Arguments = GlobArguments
    read_only = True

    def __init__(
        self, root: Path | str = ".", *, max_results: int = 100, withhold: Withhold | None = None
    ) -> None:
        """Search under ``root``; show at most ``max_results`` paths a call.

        ``withhold`` (see ``ignore.Withhold``) hides more files than the ignore rules do.
        """
        self.root = Path(root)
        self.max_results = max_results
        self.withhold = withhold

    def matches(self, args: GlobArguments) -> Iterator[Found]:
        """Every file under ``args.path`` whose path relative to it matches ``args.pattern``."""
        # region ch11: walk from args.path; match the part below it; yield Found with st_mtime
        # more: start = "" for "."; walk(self.root, start, self.withhold); entry.stat().st_mtime
        regex = glob_regex(args.pattern)
        start = Path(args.path).as_posix().strip("/")
        start = "" if start == "." else start
        for relative, entry in walk(self.root, start, self.withhold):
            below = relative[len(start) + 1 :] if start else relative
            if regex.fullmatch(below):
                try:
                    yield Found(relative, entry.stat().st_mtime)
                except OSError:
                    continue  # gone since the walk saw it
        # endregion

    def search(self, args: GlobArguments) -> ToolOutput:
        """Run the search (blocking) and shape the result for the model."""
        # region ch11: check the folder; the newest max_results; one path a line; a note if cut
        # more: newest_first(self.matches(args), self.max_results); "no files match" if none
        folder = self.root / args.path
        if not folder.is_dir():
            what = "not a folder" if folder.exists() else "not found"
            return ToolOutput.error(f"{args.path}: {what}; glob searches a folder of the workspace")
        best, total = newest_first(self.matches(args), self.max_results)
        if total == 0:
            return ToolOutput.ok(f"no files match {args.pattern}")
        text = "\n".join(found.path for found in best)
        if total > len(best):
            text += (
                f"\n\n(showing the {len(best)} newest of {total} matches; "
                f"{total - len(best)} more not shown: narrow the pattern or the path)"
            )
        return ToolOutput.ok(text)
        # endregion

    async def call(self, args: GlobArguments) -> ToolOutput:
        """Search in a worker thread: a walk blocks.

        A path that leads out of the root, or that ``withhold`` hides, is refused first.
        """
        why = refusal(self.root, args.path, self.withhold)
        if why is not None:
            return ToolOutput.error(f"{args.path}: {why}; glob did not search it")
        try:
            return await asyncio.to_thread(self.search, args)
        except re.error as error:  # a reversed range: [z-a]
            return ToolOutput.error(f"{args.pattern!r} is not a valid glob pattern: {error}")
        except (OSError, ValueError) as error:
            return ToolOutput.error(f"glob failed: {error}")
