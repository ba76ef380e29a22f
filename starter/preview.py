"""What an edit or a write would change, shown before the user approves it.

The approval question of the terminal app shows the diff a call would make, not its
arguments: a ``write`` of 300 lines is unreadable as ``content='...'`` on one line, and a
diff is what a person checks. A long diff is cut to a screenful, with the rest counted, so
the question itself never scrolls off the screen.
"""

from __future__ import annotations

from pathlib import Path

from .todo import Todo
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
    raise Todo("ch19", "before and after text for write and edit; show_diff; cut to rows lines")
