"""``claw view [SESSION] [-o FILE]``: find a session, write its page, print where it went."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..display import error_line, terminal_text
from ..sessions import find_session, latest_session, sessions_folder
from ..transcript import TranscriptError
from .model import build_view, read_records
from .page import render


def transcript_path(session: str | None, cwd: Path) -> Path:
    """The transcript ``session`` names: a path to one, an id (or its prefix), or the latest.

    ``None`` is the latest session of the project at ``cwd`` (as ``--continue`` finds it), and
    ``TranscriptError`` if it has none yet. A name ending in ``.jsonl``, or naming a file that
    exists, is a path; anything else an id, or a unique prefix of one (``find_session``).
    """
    # region ch31: None: latest_session or an error; a .jsonl or existing path; else find_session
    # more: TranscriptError(f"no session in {sessions_folder(cwd)} yet")
    if session is None:
        info = latest_session(cwd)
        if info is None:
            raise TranscriptError(f"no session in {sessions_folder(cwd)} yet")
        return info.path
    given = Path(session)
    if given.suffix == ".jsonl" or given.exists():
        return given
    return find_session(cwd, session).path
    # endregion


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, mode 600 when it is made: the page holds what tools read."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


def view_main(
    argv: Sequence[str],
    out: TextIO | None = None,
    err: TextIO | None = None,
    cwd: Path | None = None,
) -> int:
    """``claw view [SESSION] [-o FILE]``: write a session's page and print where it is.

    Without ``-o`` the page goes beside the transcript, as ``<session-id>.html``. 0 when it
    was written; 1 when the session cannot be found or read, or the page cannot be written
    (one line on ``err`` says why); 2 for a usage error.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    parser = argparse.ArgumentParser(
        prog="claw view", description="Write a session as one HTML page you can open."
    )
    parser.add_argument("session", nargs="?", help="a session id or a transcript's path")
    parser.add_argument("-o", "--output", metavar="FILE", type=Path, help="where to write it")
    arguments = parser.parse_args(argv)
    try:
        path = transcript_path(arguments.session, cwd or Path.cwd())
        page = render(build_view(*read_records(path)))
        target: Path = arguments.output or path.with_suffix(".html")
        write_private(target, page)
    except TranscriptError as error:
        print(error_line(error), file=err)
        return 1
    except OSError as error:
        print(
            f"claw: cannot read or write {terminal_text(str(error.filename))}: {error.strerror}",
            file=err,
        )
        return 1
    print(terminal_text(str(target)), file=out)
    return 0
