"""Project instructions: the ``AGENTS.md`` and ``CLAUDE.md`` files that tell claw a project's rules.

Discovery walks from the working directory up to the repository root (the nearest directory
holding ``.git``) and no further: a file above the root belongs to some other project. The
files found are merged from general to specific (the user's own file, the repository root,
..., the working directory; ``AGENTS.md`` before ``CLAUDE.md`` in one directory), each labelled
with its path and cut to ``MAX_FILE_CHARS``, and travel to the model as ONE developer message:
what the application knows, apart from the system prompt and from what the user typed.

A repository's file is read only if it really is in the repository: ``AGENTS.md`` committed as
a link to ``/proc/self/environ`` or ``~/.ssh/id_ed25519`` would otherwise send that file to the
model. And only the start of a file is read, never all of a 400 MB one.

Nothing here raises for a bad file: a file that cannot be read, or is not UTF-8, becomes a
note in the message, and the agent starts anyway.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .types import DeveloperMessage, Message

# --8<-- [start:names]
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
"""The file names read in each directory, in this order: the cross-tool name first."""
MAX_FILE_CHARS = 20_000
"""The most characters kept of one file (about 5,000 tokens); the rest is cut, with a note."""
PREAMBLE = (
    "Project instructions, from the most general file to the most specific. Where two "
    "disagree, the later one wins."
)
"""The first paragraph of the developer message: how to read what follows."""


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read: its path, the text kept, and a note if not all of it was."""

    path: Path
    text: str
    """The file's text, cut to the limit; empty if it could not be read."""
    note: str | None = None
    """Why the text is cut or missing, for the model to see; ``None`` when it is whole."""
# --8<-- [end:names]


def repository_root(start: Path) -> Path | None:
    """The nearest of ``start`` and its ancestors that holds ``.git``; ``None`` outside a repo.

    ``.git`` may be a directory (a normal clone) or a file (a worktree or a submodule).
    """
    # region ch08: look in start, then each parent in turn, for a .git entry of any kind
    # more: for directory in (start, *start.parents): (directory / ".git").exists()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None
    # endregion


def git_could_find(start: Path) -> bool:
    """Whether git could find a repository for ``start``, so that asking git is worth a process.

    Yes with a ``.git`` there or in a folder above it (``repository_root``), or with ``GIT_DIR``
    set; otherwise git would only say no.
    """
    return "GIT_DIR" in os.environ or repository_root(start.resolve()) is not None


# --8<-- [start:discover]
def instruction_directories(cwd: Path) -> list[Path]:
    """The directories searched, most general first: the repository root down to ``cwd``.

    Outside a repository only ``cwd`` itself.
    """
    # region ch08: cwd and its parents up to the root, then reversed so the root comes first
    # more: cwd.resolve(); repository_root; walk (cwd, *cwd.parents) and stop after the root
    cwd = cwd.resolve()
    root = repository_root(cwd)
    if root is None:
        return [cwd]
    directories: list[Path] = []
    for directory in (cwd, *cwd.parents):
        directories.append(directory)
        if directory == root:
            break
    return directories[::-1]
    # endregion


def discover_instructions(cwd: Path, user_file: Path | None = None) -> list[Path]:
    """Every instruction file that applies in ``cwd``, in the order they are merged.

    ``user_file`` (such as ``~/.claw/AGENTS.md``) comes first if it is a file; then, for each
    directory of ``instruction_directories``, its ``AGENTS.md`` and its ``CLAUDE.md``.
    """
    # region ch08: the user's file first, then each directory's files in INSTRUCTION_FILES order
    # more: keep only paths where .is_file(); a missing user file is simply left out
    found = [user_file] if user_file is not None and user_file.is_file() else []
    for directory in instruction_directories(cwd):
        found += [directory / name for name in INSTRUCTION_FILES if (directory / name).is_file()]
    return found
    # endregion
# --8<-- [end:discover]


def read_start(path: Path, max_chars: int) -> tuple[str, bool]:
    """The first ``max_chars`` characters of the UTF-8 file ``path``, and whether it has more.

    Reads at most ``4 * max_chars + 5`` bytes (a character is 1 to 4 bytes in UTF-8, and one
    byte more says whether the file goes on), so the memory a file costs does not grow with
    its size. Raises ``OSError`` when the file cannot
    be read and ``UnicodeDecodeError`` when what was read is not UTF-8.
    """
    with path.open("rb") as file:
        data = file.read(4 * max_chars + 4)
        more = file.read(1) != b""
    # A cut can fall inside a character: the incremental decoder keeps those bytes back.
    text = codecs.getincrementaldecoder("utf-8")().decode(data, final=not more)
    return text[:max_chars], more or len(text) > max_chars


def read_instruction_file(
    path: Path, max_chars: int = MAX_FILE_CHARS, *, within: Path | None = None
) -> InstructionFile:
    """Read ``path`` as UTF-8, keeping at most ``max_chars`` characters.

    A longer file is cut, and the note says so and from which file. With ``within`` (the
    repository), a path that leads outside it (a link to ``/proc/self/environ``) is not read
    at all. A file that cannot be read, or is not UTF-8, gives empty text and a note that says
    why. Never raises.
    """
    # region ch08: refuse a path out of within; read_start; OSError, UnicodeDecodeError become notes
    # more: path.resolve().is_relative_to(within.resolve()); f"cut {path} to its first {n:,} ..."
    real = path.resolve()
    if within is not None and not real.is_relative_to(within.resolve()):
        return InstructionFile(
            path, "", f"{path} leads to {real}, outside the project {within}; left out"
        )
    try:
        text, cut = read_start(path, max_chars)
    except OSError as error:
        return InstructionFile(path, "", f"{path} could not be read ({error.strerror or error})")
    except UnicodeDecodeError as error:
        return InstructionFile(
            path, "", f"{path} is not UTF-8 text (bad byte at offset {error.start}); left out"
        )
    if not cut:
        return InstructionFile(path, text)
    note = f"cut {path} to its first {max_chars:,} characters (the limit for one file)"
    return InstructionFile(path, text, note)
    # endregion


# --8<-- [start:message]
def format_instructions(files: Sequence[InstructionFile]) -> str:
    """The developer message's text: ``PREAMBLE``, then each file in a labelled block.

    Each block is ``<instructions path="...">``, the text, the note in square brackets if
    there is one, and ``</instructions>``; blocks are separated by a blank line.
    """
    # region ch08: PREAMBLE, then one <instructions path="..."> block a file, in order
    # more: the text without its trailing newlines; f"[{file.note}]" on a line of its own
    blocks = [PREAMBLE]
    for file in files:
        lines = [f'<instructions path="{file.path}">']
        if file.text.strip():
            lines.append(file.text.rstrip("\n"))
        if file.note:
            lines.append(f"[{file.note}]")
        lines.append("</instructions>")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
    # endregion


def load_instructions(
    cwd: Path,
    user_file: Path | None = None,
    *,
    max_file_chars: int = MAX_FILE_CHARS,
    warn: Callable[[str], None] | None = None,
) -> DeveloperMessage | None:
    """The project instructions for a session in ``cwd``: ONE developer message, or ``None``.

    ``None`` when no instruction file exists: no empty message is sent. Each file of the
    project must be within the repository (``cwd`` outside one); the user's file may be
    anywhere. Every note (a file cut, or left out) is also given to ``warn``, for the user.
    """
    # region ch08: discover, read each file within the project, warn each note, format them all
    # more: within=repository_root(cwd.resolve()) or cwd, except for the user_file (within=None)
    paths = discover_instructions(cwd, user_file)
    if not paths:
        return None
    project = repository_root(cwd.resolve()) or cwd.resolve()
    files = [
        read_instruction_file(
            path, max_file_chars, within=None if path == user_file else project
        )
        for path in paths
    ]
    for file in files:
        if file.note is not None and warn is not None:
            warn(file.note)
    return DeveloperMessage(content=format_instructions(files))
    # endregion
# --8<-- [end:message]


def keep_developer_role(
    messages: Sequence[Message], wire: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``wire`` with the role of each developer message's dictionary set back to ``"developer"``.

    ``wire`` is ``messages`` as ``message_to_wire`` wrote them, one dictionary a message.
    ``message_to_wire`` folds a developer message into a system message, which every
    OpenAI-compatible server accepts. A provider told that its model knows the developer
    role calls this on the converted list. The dictionaries given are not changed.
    """
    # region ch08: pair each message with its wire dict; a DeveloperMessage's copy gets the role
    # more: zip(..., strict=True); {**item, "role": "developer"} for isinstance DeveloperMessage
    return [
        {**item, "role": "developer"} if isinstance(message, DeveloperMessage) else item
        for message, item in zip(messages, wire, strict=True)
    ]
    # endregion
