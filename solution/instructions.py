"""Project instructions: the ``AGENTS.md`` and ``CLAUDE.md`` files that tell claw a project's rules.

Discovery walks from the working directory up to the repository root (the nearest directory
holding ``.git``) and no further: a file above the root belongs to some other project. The
files found are merged from general to specific (the user's own file, the repository root,
..., the working directory; ``AGENTS.md`` before ``CLAUDE.md`` in one directory), each labelled
with its path and cut to ``MAX_FILE_CHARS``, and travel to the model as ONE developer message:
what the application knows, apart from the system prompt and from what the user typed.

Nothing here raises for a bad file: a file that cannot be read, or is not UTF-8, becomes a
note in the message, and the agent starts anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
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


# --8<-- [start:root]
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
# --8<-- [end:root]


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


# --8<-- [start:read]
def read_instruction_file(path: Path, max_chars: int = MAX_FILE_CHARS) -> InstructionFile:
    """Read ``path`` as UTF-8, keeping at most ``max_chars`` characters.

    A longer file is cut, and the note says how many characters were cut and from which
    file. A file that cannot be read, or is not UTF-8, gives empty text and a note that says
    why. Never raises.
    """
    # region ch08: bytes, then strict UTF-8; OSError and UnicodeDecodeError become notes; then cut
    # more: f"{path} is not UTF-8 text ..."; f"cut {n:,} of {total:,} characters of {path} ..."
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        return InstructionFile(path, "", f"{path} could not be read ({error.strerror or error})")
    except UnicodeDecodeError as error:
        return InstructionFile(
            path, "", f"{path} is not UTF-8 text (bad byte at offset {error.start}); left out"
        )
    if len(text) <= max_chars:
        return InstructionFile(path, text)
    cut = len(text) - max_chars
    note = (
        f"cut {cut:,} of {len(text):,} characters of {path} "
        f"(the limit is {max_chars:,} characters a file)"
    )
    return InstructionFile(path, text[:max_chars], note)
    # endregion
# --8<-- [end:read]


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
    cwd: Path, user_file: Path | None = None, *, max_file_chars: int = MAX_FILE_CHARS
) -> DeveloperMessage | None:
    """The project instructions for a session in ``cwd``: ONE developer message, or ``None``.

    ``None`` when no instruction file exists: no empty message is sent.
    """
    # region ch08: discover, read each file, and format them all into one DeveloperMessage
    # more: [read_instruction_file(p, max_file_chars) for p in discover_instructions(...)]
    paths = discover_instructions(cwd, user_file)
    if not paths:
        return None
    files = [read_instruction_file(path, max_file_chars) for path in paths]
    return DeveloperMessage(content=format_instructions(files))
    # endregion
# --8<-- [end:message]


# --8<-- [start:developer-role]
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
# --8<-- [end:developer-role]
