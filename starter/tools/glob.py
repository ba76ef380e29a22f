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

from ..todo import Todo
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
    raise Todo("ch11", "walk the pattern a character at a time; translate **/, **, *, ?, [...]")


def newest_first(found: Iterable[Found], limit: int) -> tuple[list[Found], int]:
    """The ``limit`` newest of ``found`` (ties: by path) and how many there were in all.

    ``found`` is consumed once, as a stream: no more than ``limit`` items are kept.
    """
    raise Todo("ch11", "count while you go; heapq.nsmallest keeps only the best `limit`")


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
        raise Todo(
            "ch11",
            "walk from args.path; match the part below it; yield Found with st_mtime",
        )
        yield  # never reached; keeps this a generator

    def search(self, args: GlobArguments) -> ToolOutput:
        """Run the search (blocking) and shape the result for the model."""
        raise Todo(
            "ch11",
            "check the folder; the newest max_results; one path a line; a note if cut",
        )

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
