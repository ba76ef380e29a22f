"""The ``write`` tool, and ``atomic_write``, the one way claw's tools put bytes in a file.

A file is never written in place. ``atomic_write`` writes the new bytes to a temporary file in
the same directory, flushes them to the disk, and only then renames the temporary file over
the old one. On POSIX a rename within one file system is atomic: anyone who opens the file
sees the old content or the new, never half of each. A crash, a full disk or a killed process
before the rename leaves the old file as it was, and the temporary file is removed.

``write`` creates a file (and its parent directories) or replaces one. Replacing a file the
model has not read in this session, or that changed on disk since it read it, is refused: the
model would be overwriting content it has never seen. ``edit`` (``tools/edit.py``) and
``apply_patch`` (``tools/patch.py``) write with ``atomic_write`` too.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from pydantic import Field

from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .tracker import FileTracker

NEW_FILE_MODE = 0o666
"""The permission bits asked for a new file; the process's umask takes some away (to 0o644)."""


class WriteArguments(ToolArguments):
    """Which file to write, and everything it should hold."""

    path: str = Field(
        min_length=1, description="The file to create or replace, relative to the workspace."
    )
    content: str = Field(description="The whole new content of the file.")


def fsync_directory(directory: Path) -> None:
    """Ask the disk to keep the directory's entries (a rename is one), as far as it can.

    Best effort: a file system that cannot sync a directory raises, and that is ignored, since
    by then the new file is already in place.
    """
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Make the file at ``path`` hold exactly ``data``, or leave it as it was.

    The bytes go to a new temporary file next to ``path`` (same directory, so same file
    system), are flushed and synced, take the old file's permission bits, and the temporary
    file is then renamed over ``path`` with ``os.replace``. Any failure raises ``OSError``
    after removing the temporary file; the old file is untouched. A symbolic link is followed:
    the file it points to is replaced, and the link stays a link.
    """
    raise Todo(
        "ch09",
        "write a temporary file beside the target, fsync it, then os.replace it over",
    )


class WriteTool(ArgumentsTool[WriteArguments]):
    """Create a file, or replace one the model has read, with the content it gives."""

    name = "write"
    description = (
        "Write a whole file: create it (and its directories) or replace it. To replace an "
        "existing file, read it first. To change part of a file, use edit instead."
    )
    Arguments = WriteArguments
    read_only = False

    def __init__(self, root: Path | str = ".", *, files: FileTracker | None = None) -> None:
        """Write files under ``root``; ``files``: the tracker shared with ``read`` and ``edit``."""
        self.root = Path(root)
        self.files = files if files is not None else FileTracker()

    async def call(self, args: WriteArguments) -> ToolOutput:
        """Create or replace the file; every failure is an error result."""
        raise Todo(
            "ch09",
            "refuse a directory, or a file not read (or changed); mkdir; atomic_write",
        )
