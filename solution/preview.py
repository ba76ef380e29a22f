"""What an edit or a write would change, shown before the user approves it.

The approval question of the terminal app shows the diff a call would make, not its
arguments: a ``write`` of 300 lines is unreadable as ``content='...'`` on one line, and a
diff is what a person checks. A long diff is cut to a screenful, with the rest counted, so
the question itself never scrolls off the screen.
"""

from __future__ import annotations

from pathlib import Path

from .tools.edit import show_diff
from .types import ToolCall

SCREENFUL = 40
"""How many lines of diff an approval question shows at most."""


def cut_lines(text: str, rows: int) -> str:
    """``text`` cut to its first ``rows`` lines, with a last line counting those left out."""
    lines = text.splitlines()
    if len(lines) <= rows:
        return text
    return "\n".join([*lines[:rows], f"… ({len(lines) - rows} more lines)"])


def change_preview(call: ToolCall, root: Path, rows: int = SCREENFUL) -> str | None:
    """The diff ``call`` would make to a file under ``root``, at most ``rows`` lines.

    ``write``: the file as it is (or nothing) against the new content; ``edit``: the file
    against it with ``old_string`` replaced (once, or everywhere with ``replace_all``);
    ``apply_patch``: the patch itself. ``None`` for any other call, or when the file cannot
    be read (the tool will report that itself).
    """
    # region ch19: before and after text for write and edit; show_diff; cut to rows lines
    # more: read the file (missing: ""); show_diff(before, after, path, max_lines=10**9); cut_lines
    arguments = call.arguments
    path = arguments.get("path")
    if call.name == "apply_patch":
        patch = arguments.get("patch", arguments.get("input"))
        return cut_lines(str(patch), rows) if isinstance(patch, str) else None
    if call.name not in ("write", "edit") or not isinstance(path, str):
        return None
    try:
        before = (root / path).read_text(encoding="utf-8") if (root / path).exists() else ""
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if call.name == "write":
        after = str(arguments.get("content", ""))
    else:
        old, new = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
        if not old or old not in before:
            return None
        count = -1 if arguments.get("replace_all") else 1
        after = before.replace(old, new, count)
    return cut_lines(show_diff(before, after, path, max_lines=10**9), rows)
    # endregion
