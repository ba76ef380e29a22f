r"""How claw shows text and tool calls on one line of a terminal.

The ``claw`` command's event lines (``main.show``) and its approval questions
(``guard.TerminalApprover``) both use these, so a call reads the same in both places.

Everything claw prints that came from a model, a tool, a hook or a server goes through
``terminal_text`` first: a terminal obeys control characters, so a tool's output that holds
``ESC[1A ESC[2K`` would move the cursor up and erase the line that showed the call. Shown
escaped (``\x1b[1A``), it is only text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TextIO

SHOWN_CHARS = 100
"""How much of a tool call's arguments or result one line shows."""

CONTROL_CHARACTERS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
r"""What a terminal would obey rather than show: C0 controls but tab and newline (ESC, carriage
return, backspace, bell...), DEL, the C1 controls (``\x9b`` starts a sequence as ``ESC [``
does) and the bidirectional marks and overrides, which reorder what is shown."""


def terminal_text(text: str) -> str:
    r"""``text`` safe to print: each control character shown as its escape (``\x1b``, ``\r``).

    Tabs and newlines are kept; nothing else in ``text`` changes.
    """
    return CONTROL_CHARACTERS.sub(
        lambda match: match.group().encode("unicode_escape").decode("ascii"), text
    )


def error_line(error: BaseException) -> str:
    r"""The line that tells the user about ``error``, an error claw expects: ``claw: MESSAGE``.

    Every front end says an error this way (chapter 19). The message may quote a server's
    error body or a file, so it goes through ``terminal_text``: an escape sequence in it is
    shown (``\x1b]52;...``), never obeyed.
    """
    return f"claw: {terminal_text(str(error))}"


def warning_line(text: str) -> str:
    r"""The line that warns the user of ``text`` and goes on: ``claw: warning: TEXT`` and a newline.

    Every front end warns this way; ``text`` may quote a file, a hook or a server, so it goes
    through ``terminal_text``.
    """
    return f"claw: warning: {terminal_text(text)}\n"


def warner(stream: TextIO) -> Callable[[str], None]:
    """A ``warn`` callable that writes each warning to ``stream`` as ``warning_line`` does."""

    def warn(text: str) -> None:
        stream.write(warning_line(text))

    return warn


def one_line(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters.

    Newlines are shown as ``⏎`` and control characters escaped (``terminal_text``).
    """
    flat = terminal_text(text.replace("\n", " ⏎ "))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def arguments_text(arguments: Mapping[str, object]) -> str:
    """A call's arguments as they are written in Python: ``command='make test', timeout=5``."""
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())
