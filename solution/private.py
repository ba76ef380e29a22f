"""Private by default: what claw keeps in its own folder is for the user's eyes only.

claw's own folder (``claw_home``: ``~/.claw``, or ``$CLAW_CONFIG_DIR``) holds the session
transcripts, which keep every tool result (a password that ``read`` returned, a token a
command printed), the memory, the list of trusted folders, the prompt history. So every folder
claw makes there is mode 700 and every file mode 600, whatever the umask; and a folder or file
found open to other users (made by an older claw, or by hand) is tightened, with one line on
stderr that names it, its old mode and its new one. Nothing in it is moved or lost.

Given code, used by chapter 16 (the trusted folders), 17 (the settings and the model list's
cache), 19 (the prompt history), 20 (the memory) and 22 (the sessions).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import TextIO

from .display import terminal_text

PRIVATE_FOLDER = 0o700
"""The mode of a folder claw keeps its own things in: the user may list, enter and change it."""

PRIVATE_FILE = 0o600
"""The mode of a file claw keeps its own things in: the user may read and write it."""

OPEN_TO_OTHERS = 0o077
"""The permission bits of the group and of everyone else: none may be set."""

TIGHTENED = (
    "claw: {path} was open to other users (mode {old:03o}); "
    "claw made it private (mode {new:03o})\n"
)
"""What claw says on stderr when it tightens a folder or file it found open to others."""

NOT_TIGHTENED = (
    "claw: warning: {path} is open to other users (mode {old:03o}) "
    "and claw could not make it private ({error})\n"
)
"""What claw says when it cannot (the file belongs to someone else, say); it goes on."""

CONFIG_DIR_VARIABLE = "CLAW_CONFIG_DIR"
"""Moves claw's own folder (default ``~/.claw``), like Claude Code's ``CLAUDE_CONFIG_DIR``."""

CLAW_FOLDER = ".claw"
"""The name of claw's own folder in a home folder."""


def claw_home(home: Path | None = None) -> Path:
    """Claw's own folder: ``$CLAW_CONFIG_DIR`` if set, else ``~/.claw``.

    Every file claw keeps for itself is in it: the user's settings, instructions and skills,
    the trusted folders, the model list's cache, the prompt history, the memory, the sessions.
    With ``home`` (a test's home folder, or a caller's), it is ``home/.claw`` whatever the
    variable says.
    """
    if home is not None:
        return home / CLAW_FOLDER
    configured = os.environ.get(CONFIG_DIR_VARIABLE)
    return Path(configured) if configured else Path.home() / CLAW_FOLDER


def tighten(path: Path, err: TextIO | None = None) -> None:
    """Take the group's and everyone else's bits off ``path`` if it has any, and say so on ``err``.

    The owner's bits are kept as they are. ``err`` defaults to ``sys.stderr`` at the time of
    the call. A ``chmod`` that fails is a warning, not an error: the run goes on.
    """
    old = stat.S_IMODE(os.stat(path).st_mode)
    if not old & OPEN_TO_OTHERS:
        return
    new = old & ~OPEN_TO_OTHERS
    out = err if err is not None else sys.stderr
    shown = terminal_text(str(path))
    try:
        os.chmod(path, new)
    except OSError as error:
        out.write(NOT_TIGHTENED.format(path=shown, old=old, error=error.strerror or error))
        return
    out.write(TIGHTENED.format(path=shown, old=old, new=new))


def private_folder(folder: Path, *, top: Path | None = None, err: TextIO | None = None) -> Path:
    """Make ``folder`` exist and be private (mode 700), with every folder from ``top`` down to it.

    Each folder claw creates (``folder`` and any missing parent) gets mode 700 exactly, whatever
    the umask. Of those that exist already, the ones from ``top`` (a folder that holds
    ``folder``; default ``folder`` itself) down to ``folder`` are tightened if they are open to
    others (``tighten``, which says so on ``err``); the ones above ``top`` are not claw's and
    are left alone. Returns ``folder``.
    """
    below = len(folder.relative_to(folder if top is None else top).parts)
    make_folders(folder)
    for place in reversed([folder, *folder.parents[:below]]):
        if place.is_dir():  # else the caller's next step fails with a clear OSError
            tighten(place, err)
    return folder


def make_folders(folder: Path) -> None:
    """Make ``folder`` and its missing parents, each with mode 700 exactly (none if it exists)."""
    if folder.is_dir():
        return
    make_folders(folder.parent)  # ends at the first folder that exists ("/" does)
    try:
        os.mkdir(folder, PRIVATE_FOLDER)
    except FileExistsError:
        return  # another claw made it meanwhile, or it is a file (the caller's next step says so)
    os.chmod(folder, PRIVATE_FOLDER)  # the umask may have taken some of the owner's bits


def private_file(path: Path, *, create: bool = True, err: TextIO | None = None) -> Path:
    """Make the file ``path`` private (mode 600): created empty if missing, tightened if not.

    With ``create`` false a missing file stays missing (for files another program makes, such
    as SQLite's ``-wal``). A file found open to others is tightened and ``err`` told
    (``tighten``). Returns ``path``.
    """
    if not create:
        with contextlib.suppress(FileNotFoundError):  # none: nothing to tighten
            tighten(path, err)
        return path
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except FileExistsError:
        tighten(path, err)
        return path
    try:
        os.fchmod(handle, PRIVATE_FILE)  # the umask may have taken some of the owner's bits
    finally:
        os.close(handle)
    return path
