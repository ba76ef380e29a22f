"""The ``list_dir`` tool: what is in one folder of the workspace.

Folders come first, each with a trailing ``/``, then files with their sizes in a form people
read (``512 B``, ``1.5 KiB``, ``3.0 MiB``), each group sorted by name. What the search tools skip
(``.git``, ``node_modules``, virtual environments, what ``.gitignore`` ignores) is hidden and
counted in a note, unless the model asks for ``all``. At most ``max_entries`` entries are shown,
with a note saying how many more there are.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .ignore import Withhold, child, is_ignored, is_skipped_dir, refusal, rules_above, stays_inside


class ListDirArguments(ToolArguments):
    """Which folder to list, and whether to show what is normally hidden."""

    path: str = Field(default=".", description="The folder to list, relative to the workspace.")
    all: bool = Field(
        default=False,
        description="Also show .git, node_modules, virtual environments and ignored files.",
    )


def human_size(size: int) -> str:
    """``size`` bytes for people: ``0 B``, ``1023 B``, ``1.0 KiB``, ``1.5 MiB``, ``2.0 GiB``.

    Whole bytes below 1,024; above, one decimal and the largest unit (KiB, MiB, GiB, TiB) that
    keeps the number below 1,024.
    """
    raise Todo("ch11", "bytes as a whole number below 1024; then divide by 1024 until it fits")


@dataclass(frozen=True)
class Entry:
    """One entry of a folder: its name, whether it is a folder, and a file's size."""

    name: str
    is_dir: bool
    size: int = 0

    def show(self) -> str:
        """``name/`` for a folder, ``name  1.5 KiB`` for a file."""
        return f"{self.name}/" if self.is_dir else f"{self.name}  {human_size(self.size)}"


class ListDirTool(ArgumentsTool[ListDirArguments]):
    """List one folder of the workspace: folders first, sizes for files, ignored entries hidden."""

    name = "list_dir"
    description = (
        "List a folder: subfolders first (with a trailing /), then files with their sizes. "
        ".git, node_modules, virtual environments and ignored files are hidden unless `all` "
        "is true."
    )
    Arguments = ListDirArguments
    read_only = True

    def __init__(
        self, root: Path | str = ".", *, max_entries: int = 200, withhold: Withhold | None = None
    ) -> None:
        """List folders under ``root``; show at most ``max_entries`` entries a call.

        ``withhold`` (see ``ignore.Withhold``) hides more entries than the ignore rules do,
        even with ``all``.
        """
        self.root = Path(root)
        self.max_entries = max_entries
        self.withhold = withhold

    def entries(self, directory: str, show_all: bool) -> tuple[list[Entry], list[str], int]:
        """The entries of ``directory`` (relative to the root): shown, hidden, withheld.

        The entries come folders first, each group by name; the hidden ones are names, a
        folder's with a trailing ``/``, sorted. A link that leads out of the root, and an entry
        ``withhold`` gives a reason for, is withheld even with ``show_all``: only counted.
        """
        raise Todo("ch11", "scandir; withhold links out and withheld entries; hide skipped; sort")

    def list(self, args: ListDirArguments) -> ToolOutput:
        """List the folder (blocking) and shape the result for the model."""
        raise Todo(
            "ch11",
            "refuse a missing folder or a file; show the first max_entries; two notes",
        )

    async def call(self, args: ListDirArguments) -> ToolOutput:
        """List in a worker thread: ``scandir`` and ``stat`` block.

        A path that leads out of the root, or that ``withhold`` hides, is refused first.
        """
        why = refusal(self.root, args.path, self.withhold)
        if why is not None:
            return ToolOutput.error(f"{args.path}: {why}; list_dir did not list it")
        try:
            return await asyncio.to_thread(self.list, args)
        except (OSError, ValueError) as error:
            return ToolOutput.error(f"cannot list {args.path}: {error}")
