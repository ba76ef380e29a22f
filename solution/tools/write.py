"""The ``write`` tool, and ``atomic_write``, the one way claw's tools put bytes in a file.

A file is never written in place. ``atomic_write`` writes the new bytes to a temporary file in
the same directory, flushes them to the disk, and only then renames the temporary file over
the old one. On POSIX a rename within one file system is atomic: anyone who opens the file
sees the old content or the new, never half of each. A crash, a full disk or a killed process
before the rename leaves the old file as it was, and the temporary file is removed.

Every file tool opens through ``Root`` (``tools/fs.py``), never by name: ``atomic_write_at``
works inside a folder already opened there, so the temporary file, the rename and the sync all
happen in that folder, whatever is swapped for a link meanwhile.

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

from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .fs import Root, as_root
from .tracker import FileTracker

NEW_FILE_MODE = 0o666
"""The permission bits asked for a new file; the process's umask takes some away (to 0o644)."""
TEMP_STEM_BYTES = 200
"""The most bytes of the target's name a temporary file's name repeats (a name may take 255)."""


class WriteArguments(ToolArguments):
    """Which file to write, and everything it should hold."""

    path: str = Field(
        min_length=1, description="The file to create or replace, relative to the workspace."
    )
    content: str = Field(description="The whole new content of the file.")


def fsync_directory(folder: int) -> None:
    """Ask the disk to keep the entries of the open ``folder`` (a rename is one), if it can.

    Best effort: a file system that cannot sync a directory raises, and that is ignored, since
    by then the new file is already in place.
    """
    with contextlib.suppress(OSError):
        os.fsync(folder)


def atomic_write_at(folder: int, name: str, data: bytes) -> None:
    """Make the file ``name`` in the open directory ``folder`` hold exactly ``data``, or not.

    The bytes go to a new temporary file in the same folder (so the same file system), are
    flushed and synced, take the old file's permission bits, and the temporary file is then
    renamed over ``name`` with ``os.replace``. Every step names its file relative to
    ``folder`` (``dir_fd``), so nothing is looked up by a path that could have changed. Any
    failure raises ``OSError`` after removing the temporary file; the old file is untouched.
    """
    # region ch09a: write a temporary file beside the target, fsync it, then os.replace it over
    # more: os.open(temp, O_WRONLY | O_CREAT | O_EXCL, mode, dir_fd=folder); os.fsync; unlink
    try:
        old = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    # Only a regular file's bits are kept: a symbolic link's own are 0o777, and a link swapped
    # in while claw works must not make the new file writable by everyone.
    regular = old is not None and stat.S_ISREG(old.st_mode)
    mode = stat.S_IMODE(old.st_mode) if old is not None and regular else None  # None: the default
    # A name may take 255 bytes: its first TEMP_STEM_BYTES leave room for the random part.
    stem = os.fsdecode(os.fsencode(name)[:TEMP_STEM_BYTES])
    temp = f".{stem}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(temp, flags, NEW_FILE_MODE, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
            if mode is not None:
                os.fchmod(file.fileno(), mode)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
    fsync_directory(folder)
    # endregion


def atomic_write(path: Path, data: bytes) -> None:
    """``atomic_write_at`` for a plain path: the folder is opened, then the file written in it.

    A symbolic link is followed (by ``realpath``, before anything is opened): the file it
    points to is replaced, and the link stays a link. For code that trusts ``path``; the
    tools go through ``Root`` instead.
    """
    target = Path(os.path.realpath(path))
    folder = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        atomic_write_at(folder, target.name, data)
    finally:
        os.close(folder)


class WriteTool(ArgumentsTool[WriteArguments]):
    """Create a file, or replace one the model has read, with the content it gives."""

    name = "write"
    description = (
        "Write a whole file: create it (and its directories) or replace it. To replace an "
        "existing file, read it first. To change part of a file, use edit instead."
    )
    Arguments = WriteArguments
    read_only = False

    def __init__(self, root: Root | Path | str = ".", *, files: FileTracker | None = None) -> None:
        """Write files under ``root``; ``files``: the tracker shared with ``read`` and ``edit``.

        Files are opened through ``self.fs`` (a ``Root``), so no path leads out of ``root``.
        """
        self.fs = as_root(root)
        self.root = self.fs.path
        self.files = files if files is not None else FileTracker()

    async def call(self, args: WriteArguments) -> ToolOutput:
        """Create or replace the file; every failure is an error result."""
        # region ch09a: refuse a directory, or a file not read (or changed); mkdir; atomic_write
        # more: self.fs.stat (FileNotFoundError: new); self.fs.locate(path, parents=True) as place
        path = self.root / args.path
        if args.path.endswith("/"):
            return ToolOutput.error(f"{args.path} ends with /, so it names a directory, not a file")
        try:
            try:
                exists = True
                if stat.S_ISDIR(self.fs.stat(args.path).st_mode):
                    return ToolOutput.error(f"{args.path} is a directory; write needs a file path")
            except FileNotFoundError:
                exists = False
            if exists and (problem := self.files.check(path, args.path)) is not None:
                return ToolOutput.error(problem)
            data = args.content.encode("utf-8")
            with self.fs.locate(args.path, parents=True) as place:
                atomic_write_at(place.folder, place.name, data)
        except UnicodeEncodeError as error:
            return ToolOutput.error(
                f"content cannot be written as UTF-8: character {error.start} is a lone "
                "surrogate; send text only"
            )
        except OSError as error:
            return ToolOutput.error(
                f"cannot write {args.path}: {error.strerror or error}; the file was not changed"
            )
        except ValueError:  # a NUL character in the name
            return ToolOutput.error(f"cannot write {args.path!r}: a file name cannot hold NUL")
        self.files.saw(path)
        count = len(args.content.splitlines())
        lines = "1 line" if count == 1 else f"{count} lines"
        verb = "replaced" if exists else "created"
        size = "1 byte" if len(data) == 1 else f"{len(data)} bytes"
        return ToolOutput.ok(f"{verb} {args.path} ({lines}, {size})")
        # endregion
