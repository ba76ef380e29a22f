"""Open files under a root folder and nowhere else, whatever the path says and whatever changes.

A file tool is given a path by the model, and the path is text: ``../../etc/passwd``, an
absolute path, or a name whose folder is a symbolic link to somewhere else. Checking the text
and then opening it by name is not enough: between the check and the open, another process can
swap a folder for a link, and the open follows the link out. So the tools never open by name.
``Root.locate`` walks the path one component at a time, each opened relative to the folder
before it (``dir_fd``) with ``O_NOFOLLOW``: a link is never followed by the operating system,
only by the walk, which reads the link, applies its target itself and refuses it when it leads
out of the root. Whatever is swapped while the walk runs, the walk only ever holds folders it
opened itself, inside the root.

The one rule that shapes the module: every folder is opened from the folder before it, never
by name from the top, and the last component is opened from the folder that holds it, with
``O_NOFOLLOW``. POSIX only (``dir_fd``, ``O_NOFOLLOW``, ``O_DIRECTORY``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import ToolError

MAX_LINKS = 40
"""How many symbolic links one walk follows before giving up, as Linux does (``ELOOP``)."""

MAX_RETRIES = 8
"""How many times ``Root.open`` walks again when the last component became a link meanwhile."""

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
"""How each folder on the way is opened: a folder, never through a link."""


class OutsideRoot(ToolError, PermissionError):
    """A path that leads out of the root (by ``..``, an absolute path or a symbolic link)."""


@dataclass
class Place:
    """Where a path leads: an open folder inside the root and the name of the entry in it.

    ``folder`` is a file descriptor the caller must close (``close`` or ``with``); ``name``
    may not exist yet (a file about to be created). ``path`` is the real path of the entry,
    links resolved, for messages and for telling files apart.
    """

    folder: int
    name: str
    path: Path

    def close(self) -> None:
        """Close the folder's descriptor."""
        os.close(self.folder)

    def __enter__(self) -> Place:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_link(name: str, folder: int) -> bool:
    """Whether ``name`` in the open ``folder`` is a symbolic link now."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def parts_of(path: str) -> list[str]:
    """The components of ``path`` without empty ones and ``.`` (``..`` is kept: it is walked)."""
    return [part for part in path.split("/") if part not in ("", ".")]


class Root:
    """A folder the tools may use (the workspace), and any ``extra`` folders also allowed.

    A ``Root`` is path-like (``os.fspath(root)`` is the workspace), so it can be passed where
    a path is expected. Chapter 14's ``Workspace`` builds its checks on top of it.
    """

    def __init__(self, path: Path | str | os.PathLike[str] = ".", extra: Iterable[Path | str] = ()):
        """Allow paths under ``path`` and under each folder in ``extra``."""
        self.path = Path(path)
        self.extra = tuple(Path(folder) for folder in extra)

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __repr__(self) -> str:
        return f"Root({str(self.path)!r})"

    def bases(self) -> list[tuple[Path, list[list[str]]]]:
        """Each allowed folder: its real path, and the spellings an absolute path may start with.

        A spelling is the folder as given (made absolute) or its real path, as components.
        """
        found = []
        for folder in (self.path, *self.extra):
            real = Path(os.path.realpath(folder))
            spellings = [real.parts, Path(os.path.abspath(folder)).parts]
            found.append((real, [list(spelling) for spelling in spellings]))
        return found

    def start(self, path: str) -> tuple[Path, list[str]]:
        """The allowed folder an absolute ``path`` lies in, and the components after it.

        ``..`` in ``path`` is not applied here: it is walked, so ``ws/../outside`` climbs out
        and is refused then.
        """
        parts = [part for part in Path(path).parts if part != "."]
        best: tuple[Path, list[str]] | None = None
        longest = -1
        for real, spellings in self.bases():
            for spelling in spellings:
                if parts[: len(spelling)] == spelling and len(spelling) > longest:
                    best, longest = (real, parts[len(spelling) :]), len(spelling)
        if best is None:
            raise OutsideRoot("the path leads outside the workspace (an absolute path outside it)")
        return best

    def locate(self, path: str, *, parents: bool = False, follow: bool = True) -> Place:
        """Walk ``path`` from the root, one component at a time; the place it leads to.

        Links are followed by the walk (their target read with ``readlink`` and walked in
        turn), so a link that stays inside the root works, and one that leads out raises
        ``OutsideRoot``; so do ``..`` above the root and an absolute path elsewhere. A missing
        folder on the way is ``FileNotFoundError``, or is made when ``parents`` is true. The
        last component is not opened: the caller opens ``place.name`` in ``place.folder``
        with ``O_NOFOLLOW``. With ``follow`` false, a link as the last component is the place
        itself (to remove it), not where it points. A NUL in ``path`` is a ``ValueError``. A
        path that leads to an allowed folder itself (``d/..``, the workspace's absolute path, a
        link to it) has no folder that holds it: ``IsADirectoryError``, whose ``filename`` is
        that folder's real path.
        """
        if "\0" in path:
            raise ValueError("embedded null byte")
        if os.path.isabs(path):
            top, pending = self.start(path)
        else:
            top, pending = Path(os.path.realpath(self.path)), parts_of(path)
        if not pending:
            raise IsADirectoryError(errno.EISDIR, "the workspace itself is a folder", top)
        folders = [os.open(top, FOLDER_FLAGS)]
        names: list[str] = []
        links = 0
        try:
            while pending:
                part = pending.pop(0)
                if part in ("", "."):
                    continue
                if part == "..":
                    if not names:
                        raise OutsideRoot(
                            "the path leads outside the workspace ('..' climbs above it)"
                        )
                    os.close(folders.pop())
                    names.pop()
                    continue
                last = not any(rest not in ("", ".") for rest in pending)
                try:
                    info = os.stat(part, dir_fd=folders[-1], follow_symlinks=False)
                except FileNotFoundError:
                    info = None
                if info is not None and stat.S_ISLNK(info.st_mode) and (follow or not last):
                    links += 1
                    if links > MAX_LINKS:
                        raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
                    target = os.readlink(part, dir_fd=folders[-1])
                    if os.path.isabs(target):
                        try:
                            top, inner = self.start(target)
                        except OutsideRoot:
                            raise OutsideRoot(
                                f"the path leads outside the workspace (through a symbolic link "
                                f"to {target})"
                            ) from None
                        for folder in folders:
                            os.close(folder)
                        folders = [os.open(top, FOLDER_FLAGS)]
                        names = []
                        pending = inner + pending
                    else:
                        pending = parts_of(target) + pending
                    continue
                if last:
                    return Place(os.dup(folders[-1]), part, top.joinpath(*names, part))
                if info is None and parents:
                    with contextlib.suppress(FileExistsError):  # made meanwhile: fine
                        os.mkdir(part, dir_fd=folders[-1])
                try:
                    folders.append(os.open(part, FOLDER_FLAGS, dir_fd=folders[-1]))
                except OSError as error:
                    if error.errno not in (errno.ELOOP, errno.ENOTDIR) or not is_link(
                        part, folders[-1]
                    ):
                        raise
                    pending.insert(0, part)  # it became a link since the stat: walk it again
                    continue
                names.append(part)
            if not names:
                raise IsADirectoryError(errno.EISDIR, "that is the workspace itself", top)
            return Place(os.dup(folders[-2]), names[-1], top.joinpath(*names))
        finally:
            for folder in folders:
                os.close(folder)

    def open(self, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
        """Open ``path`` under the root with ``flags``; the file descriptor.

        The last component is opened with ``O_NOFOLLOW`` in the folder ``locate`` found; if it
        became a link in between, the walk runs again and follows it (or refuses it).
        """
        for _ in range(MAX_RETRIES):
            with self.locate(path, parents=bool(flags & os.O_CREAT)) as place:
                try:
                    return os.open(place.name, flags | os.O_NOFOLLOW, mode, dir_fd=place.folder)
                except OSError as error:
                    if error.errno != errno.ELOOP:
                        raise
        raise OSError(errno.ELOOP, "it kept changing into a symbolic link", path)

    def stat(self, path: str) -> os.stat_result:
        """What ``path`` leads to (links inside the root followed); ``FileNotFoundError``: none.

        Every spelling of an allowed folder itself (``.``, ``d/..``, its absolute path, a link
        to it) is that folder, so a tool can say it is a directory.
        """
        for _ in range(MAX_RETRIES):
            try:
                place = self.locate(path)
            except IsADirectoryError as error:  # the walk ended at an allowed folder itself
                return os.stat(error.filename)
            with place:
                info = os.stat(place.name, dir_fd=place.folder, follow_symlinks=False)
                if not stat.S_ISLNK(info.st_mode):
                    return info
        raise OSError(errno.ELOOP, "it kept changing into a symbolic link", path)

    def open_regular(self, path: str) -> BinaryIO:
        """Open the regular file at ``path`` for reading in binary (see ``regular_file``)."""
        return regular_file(self.open(path, os.O_RDONLY | os.O_NONBLOCK), path)

    def read_bytes(self, path: str) -> bytes:
        """The whole content of the regular file at ``path``."""
        with self.open_regular(path) as file:
            return file.read()

    def unlink(self, path: str) -> None:
        """Remove the file at ``path`` (a link itself, not what it points to, if it is one)."""
        with self.locate(path, follow=False) as place:
            os.unlink(place.name, dir_fd=place.folder)


def regular_file(fd: int, path: str) -> BinaryIO:
    """The file open at ``fd`` for reading in binary, if it is a regular file; it is closed if not.

    ``fd`` was opened without waiting (``O_NONBLOCK``), so a FIFO put at ``path`` could not
    hang the open; ``fstat`` then tells what it is: anything but a regular file (a FIFO, a
    device such as ``/dev/zero``, a folder) is an ``OSError`` that says so.
    """
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path) -> BinaryIO:
    """Open the regular file at ``path`` (anywhere) for reading in binary; see ``regular_file``."""
    return regular_file(os.open(path, os.O_RDONLY | os.O_NONBLOCK), str(path))


def as_root(root: Root | Path | str | os.PathLike[str]) -> Root:
    """``root`` itself if it is a ``Root``, else a ``Root`` of that folder."""
    return root if isinstance(root, Root) else Root(root)
