"""Whether the ``claw`` command may use what a repository brings: each file claw reads from it.

A repository can carry files meant for claw itself (``BROUGHT``, and the instruction files):
``.claw/settings.json`` and ``.claw/settings.local.json``, whose hooks are commands that run on
your machine, whose allow rules let the model's calls run unasked and whose ``base_url``
receives your API key; ``.claw/skills/``, whose descriptions go into the system prompt;
``.mcp.json``, whose servers are commands; and ``AGENTS.md`` / ``CLAUDE.md``, text the model
reads as the project's rules. Written by whoever wrote the repository, they deserve the trust
you give its code, no more. So, as Claude Code does with its "Do you trust the files in this
folder?" question, the first time claw runs in a folder that brings any of them it asks, and
remembers a yes for this user in ``trusted-folders.json`` in claw's own folder (``~/.claw``, or
``$CLAW_CONFIG_DIR``), keyed by the folder's real path. A yes trusts that folder and, when it is
a git repository's root, the repository's own folders; never a folder merely inside a trusted
one (a repository cloned into a trusted ``~/work`` is not trusted for it).

Until the folder is trusted, claw uses none of them but the deny and ask rules of its settings
(they can only make claw ask more, or refuse more), and says so on stderr. A run without a
terminal to ask at (stdin piped or closed) uses them only after a remembered yes, or with
``--trust-project``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TextIO

from .display import terminal_text
from .errors import ClawError
from .instructions import discover_instructions, repository_root
from .private import claw_home, private_folder
from .settings_file import LOCAL_SETTINGS_FILE, SETTINGS_FILE
from .skills import SKILLS_FOLDER
from .terminal import ReadLine, interactive

TRUST_FILE = Path("trusted-folders.json")
"""Where the folders a user trusts are kept, relative to claw's own folder (``claw_home``)."""

BROUGHT = (SETTINGS_FILE, LOCAL_SETTINGS_FILE, SKILLS_FOLDER, Path(".mcp.json"))
"""What a repository can bring for claw in its folder, besides its instruction files: the two
settings files (chapters 13, 15 and 17), the skills (chapter 21) and the MCP servers (chapter
23's ``.mcp.json``). A part of claw that reads a new file from the folder adds it here."""

TRUST_QUESTION = "Do you trust the files in this folder? [y] yes, remember it, [n] no: "
"""The question, after the list of what the folder brings."""

NOT_TRUSTED = (
    "claw: this folder is not trusted, so its settings, hooks, skills, MCP servers and "
    "instruction files are not used (its deny and ask rules are): {files}. {how}"
)
"""What claw says on stderr when it runs without what the folder brings; ``how`` says how to
trust it, which depends on whether claw could ask."""
HOW_WITHOUT_TERMINAL = "Run claw here at a terminal to be asked, or pass --trust-project."
HOW_AFTER_NO = "You answered no: claw asks again next time (--trust-project trusts it once)."
NOT_REMEMBERED = (
    "claw: your yes could not be saved in {store} ({error}): the folder is trusted for this run "
    "only, and claw asks again next time"
)
"""What claw says on stderr when a yes cannot be written down; the run goes on trusted."""


class BadTrustFile(ClawError):
    """The user's list of trusted folders cannot be read: claw stops rather than guess."""


def trust_file(home: Path | None = None) -> Path:
    """The file that lists the user's trusted folders, in claw's own folder: ``claw_home(home)``."""
    return claw_home(home) / TRUST_FILE


def brought_files(cwd: Path) -> list[Path]:
    """What the repository brings for claw in ``cwd``: each of ``BROUGHT`` there, then instructions.

    A link counts, wherever it leads. The user's own instruction file is not among them: it is
    the user's, not the repository's.
    """
    found = [cwd / name for name in BROUGHT if os.path.lexists(cwd / name)]
    return found + discover_instructions(cwd)


def trusted_folders(store: Path) -> list[str]:
    """The folders listed in ``store``; none when it does not exist.

    Raises ``BadTrustFile`` when it exists but is not the JSON it should be.
    """
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadTrustFile(f"{store} cannot be read ({error}): fix or delete it") from error
    folders = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise BadTrustFile(f'{store} must hold {{"trusted": [folder, ...]}}: fix or delete it')
    return folders


def is_trusted(folder: Path, store: Path) -> bool:
    """Whether the user trusted ``folder`` itself, or the root of the git repository holding it.

    By real paths, as Claude Code 2.1.332 decides: ``src/`` of a trusted repository is trusted,
    but a folder inside a trusted one is not, unless it is part of the same repository (a clone
    inside a trusted folder, or inside a trusted repository, has a ``.git`` and a root of its own).
    """
    real = folder.resolve()
    trusted = {Path(path) for path in trusted_folders(store)}
    return real in trusted or repository_root(real) in trusted


def remember_trust(folder: Path, store: Path) -> None:
    """Add ``folder``'s real path to ``store``, atomically: a crash leaves the old list whole.

    The file and its folder are the user's alone (modes 600 and 700).
    """
    folders = trusted_folders(store)
    real = str(folder.resolve())
    if real not in folders:
        folders.append(real)
    private_folder(store.parent)  # tightened if an older claw left it open to others
    data = (json.dumps({"trusted": folders}, indent=2) + "\n").encode("utf-8")
    handle, temporary = tempfile.mkstemp(prefix=".trusted-", dir=store.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, store)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def shown(files: list[Path], cwd: Path) -> list[str]:
    """``files`` as the user knows them: relative to ``cwd`` where they are under it."""
    return [
        terminal_text(str(path.relative_to(cwd) if path.is_relative_to(cwd) else path))
        for path in files
    ]


async def decide_trust(
    cwd: Path,
    *,
    flag: bool,
    read_line: ReadLine,
    out: TextIO,
    err: TextIO,
    store: Path | None = None,
) -> bool:
    """Whether claw may use what the repository in ``cwd`` brings (``brought_files``).

    Yes when it brings none, with ``flag`` (``--trust-project``), or when the user trusted
    the folder before. Otherwise, at a terminal, the user is asked on ``out`` and a yes is
    remembered; a no is not (claw asks again next time, as Claude Code does). When the answer
    is no, claw says on ``err`` what it leaves out.
    """
    files = brought_files(cwd)
    if not files or flag:
        return True
    store = store if store is not None else trust_file()
    if is_trusted(cwd, store):
        return True
    names = shown(files, cwd)
    how = HOW_WITHOUT_TERMINAL
    if interactive():
        out.write(f"This folder brings its own files for claw ({terminal_text(str(cwd))}):\n")
        for name in names:
            out.write(f"  {name}\n")
        out.write(
            "Its hooks and MCP servers run commands on your machine, its settings can let calls "
            "run without asking and send your API key elsewhere, and the model reads its "
            "instructions and skills.\n" + TRUST_QUESTION
        )
        out.flush()
        answer = (await read_line()).strip().lower()
        if answer in ("y", "yes"):
            try:
                remember_trust(cwd, store)
            except OSError as error:  # a full disk, a read-only home: the yes still holds now
                err.write(terminal_text(NOT_REMEMBERED.format(store=store, error=error)) + "\n")
                err.flush()
            return True
        how = HOW_AFTER_NO
    err.write(NOT_TRUSTED.format(files=", ".join(names), how=how) + "\n")
    err.flush()
    return False
