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
    # region ch11: bytes as a whole number below 1024; then divide by 1024 until it fits
    # more: for unit in ("KiB", "MiB", "GiB", "TiB"); f"{value:.1f} {unit}"
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TiB"
    # endregion


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
        # region ch11: scandir; withhold links out and withheld entries; hide skipped; sort
        # more: stays_inside(real_root, item); self.withhold(child(directory, item.name))
        rules = [] if show_all else rules_above(str(self.root), directory)
        real_root = os.path.realpath(self.root)
        shown: list[Entry] = []
        hidden: list[str] = []
        withheld = 0
        with os.scandir(self.root / directory) as scan:
            for item in scan:
                relative = child(directory, item.name)
                if not stays_inside(real_root, item) or (
                    self.withhold is not None and self.withhold(relative) is not None
                ):
                    withheld += 1
                    continue
                is_dir = item.is_dir()
                if not show_all and (
                    (is_dir and is_skipped_dir(item.path, item.name))
                    or is_ignored(rules, relative, is_dir)
                ):
                    hidden.append(item.name + "/" if is_dir else item.name)
                    continue
                try:
                    size = 0 if is_dir else item.stat().st_size
                except OSError:  # a link to nothing, or a file gone since the listing
                    size = 0
                shown.append(Entry(item.name, is_dir, size))
        shown.sort(key=lambda entry: (not entry.is_dir, entry.name))
        return shown, sorted(hidden), withheld
        # endregion

    def list(self, args: ListDirArguments) -> ToolOutput:
        """List the folder (blocking) and shape the result for the model."""
        # region ch11: refuse a missing folder or a file; show the first max_entries; two notes
        # more: "(empty folder)"; a note with how many more; a note naming what was hidden
        folder = self.root / args.path
        if not folder.exists():
            return ToolOutput.error(f"{args.path}: not found")
        if not folder.is_dir():
            return ToolOutput.error(f"{args.path} is a file, not a folder; use read to see it")
        directory = Path(args.path).as_posix().strip("/")
        shown, hidden, withheld = self.entries("" if directory == "." else directory, args.all)
        lines = [entry.show() for entry in shown[: self.max_entries]]
        notes = []
        if len(shown) > self.max_entries:
            notes.append(
                f"(showing {self.max_entries} of {len(shown)} entries; "
                f"{len(shown) - self.max_entries} more not shown)"
            )
        if hidden:
            notes.append(
                f"({len(hidden)} hidden: {', '.join(hidden[:10])}"
                f"{', …' if len(hidden) > 10 else ''}; pass all: true to show them)"
            )
        if withheld:
            notes.append(
                f"({withheld} withheld: links out of the workspace, or files claw's safety "
                "checks or permission rules keep from the tools)"
            )
        if not lines and not notes:
            return ToolOutput.ok("(empty folder)")
        return ToolOutput.ok("\n".join([*lines, *([""] if lines and notes else []), *notes]))
        # endregion

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
