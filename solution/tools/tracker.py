"""What the model has read: the rule that a file must be read, unchanged, before it is edited.

An edit is written against what the model believes a file holds. If the model never read the
file, or the file changed on disk since it did (the user saved it, a formatter ran), that
belief is wrong and the edit may undo someone's work. ``FileTracker`` remembers, per file, what
the file looked like on disk when the model last read it; the edit tools ask it before
changing a file, and tell it after, since a file the model just wrote is one it knows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Seen:
    """A file's state on disk: enough to notice that it changed.

    The inode changes when an editor saves by replacing the file, even within the
    modification time's resolution; the size catches most other quick changes.
    """

    mtime_ns: int
    size: int
    inode: int


def resolved(path: Path) -> Path:
    """``path`` with its links followed, to tell files apart; made absolute if that fails.

    ``Path.resolve`` raises when a link changes under it while it reads it (another process
    swapping a folder); the tracker must not crash the tool for that.
    """
    try:
        return path.resolve()
    except OSError:
        return Path(os.path.abspath(path))


def seen_now(path: Path) -> Seen | None:
    """The state of the file at ``path`` now, or ``None`` if there is no such file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return Seen(info.st_mtime_ns, info.st_size, info.st_ino)


class FileTracker:
    """Which files the model has read in this session, and how each looked at the time."""

    def __init__(self) -> None:
        self._seen: dict[Path, Seen] = {}

    def saw(self, path: Path) -> None:
        """Remember that the model has just read (or written) the file at ``path``."""
        # region ch09a: remember the file's state under its resolved path
        # more: resolved(path) so that two spellings of one file agree; seen_now(path)
        state = seen_now(path)
        if state is not None:
            self._seen[resolved(path)] = state
        # endregion

    def check(self, path: Path, shown: str) -> str | None:
        """Why the file at ``path`` may not be edited now, or ``None`` if it may.

        ``shown`` is the path as the model wrote it, for the message.
        """
        # region ch09a: never read: say to read it; changed since: say to read it again
        # more: compare the remembered Seen with seen_now(path); dataclasses compare by value
        before = self._seen.get(resolved(path))
        if before is None:
            return f"read {shown} before editing it, so the edit is made against what it holds"
        if seen_now(path) != before:
            return (
                f"{shown} has changed on disk since it was last read; read it again "
                "before editing it"
            )
        return None
        # endregion
