"""How claw shows text and tool calls on one line of a terminal.

The ``claw`` command's event lines (``main.show``) and its approval questions
(``guard.TerminalApprover``) both use these, so a call reads the same in both places.
"""

from __future__ import annotations

from collections.abc import Mapping

SHOWN_CHARS = 100
"""How much of a tool call's arguments or result one line shows."""


def one_line(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` on one line (newlines shown as ``⏎``), cut to ``limit`` characters."""
    flat = text.replace("\n", " ⏎ ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def arguments_text(arguments: Mapping[str, object]) -> str:
    """A call's arguments as they are written in Python: ``command='make test', timeout=5``."""
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())
