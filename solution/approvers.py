"""Who answers when a tool call needs the user's yes: a terminal, the REPL, or nobody.

Chapter 13's ``Permissions`` hands each call that needs approval to an ``Approver``: an async
callable that gets the call and why it needs approval, and returns an ``Approval``. Each of
claw's front ends has its own, and they differ only in where they ask:

- ``TerminalApprover`` (the one-shot ``claw "..."``): asks on a stream, reads a line;
- ``ReplApprover`` (the terminal app, chapter 19): shows the change as a diff and asks with
  ``prompt_toolkit``; Ctrl-C at the question cancels the run;
- ``NoTerminalApprover`` (print mode, chapter 19): nobody can answer, so every call that needs
  approval is refused, with a line that says how to allow it.

The question, the answers a person may type and what an empty answer means are written here
once, so that every front end asks the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO

from .display import arguments_text, one_line, terminal_text
from .permissions import Approval
from .preview import change_preview
from .terminal import ReadLine, echo_answer, read_stdin_line
from .types import ToolCall

ANSWERS = {
    "y": Approval.ONCE,
    "yes": Approval.ONCE,
    "a": Approval.SESSION,
    "always": Approval.SESSION,
    "p": Approval.PROJECT,
    "project": Approval.PROJECT,
    "n": Approval.DENY,
    "no": Approval.DENY,
}
"""What the user may type at an approval question, and what it means."""

QUESTION = "  allow? [y] once, [a] always this session, [p] always in this project, [n] no: "
"""The question after the call that needs approval."""

NO_ANSWER = "  (no answer: not allowed)"
"""What an empty answer, or the end of the input, is told as: a no."""

HOW_TO_ALLOW = (
    "allow it with an allow rule in .claw/settings.json, a --permission-mode such as "
    "acceptEdits or bypassPermissions, or run claw at a terminal to be asked"
)
"""What the refusal of a question nobody can answer tells the user to do."""


def read_answer(line: str) -> Approval | None:
    """What a typed ``line`` answers (any case, spaces around it ignored); ``None`` if nothing."""
    return ANSWERS.get(line.strip().lower())


class TerminalApprover:
    """Chapter 13's ``Approver`` for the ``claw`` command: asks at the terminal.

    It writes the call and why it needs approval to ``out`` and reads the answer with
    ``read_line``. Only ``ANSWERS`` count and anything else is asked again, but an empty
    answer, or the end of input (stdin closed, or ``/dev/null``), is a no.
    """

    def __init__(self, out: TextIO, read_line: ReadLine | None = None) -> None:
        """Ask on ``out``; read the answers with ``read_line`` (default: standard input)."""
        self.out = out
        self.read_line = read_line or read_stdin_line
        self._one_at_a_time = asyncio.Lock()  # calls running together must not ask together

    async def __call__(self, call: ToolCall, why: str) -> Approval:
        """Ask about ``call``, which needs approval because of ``why``."""
        async with self._one_at_a_time:
            shown = f"{call.name}({arguments_text(call.arguments)})"
            self.out.write(f"? {shown} needs approval: {why}\n")
            while True:
                self.out.write(QUESTION)
                self.out.flush()
                try:
                    line = await self.read_line()
                except asyncio.CancelledError:  # Ctrl-C at the question: end its line
                    self.out.write("\n")
                    raise
                if not line:
                    self.out.write(f"\n{NO_ANSWER}\n")
                    return Approval.DENY
                echo_answer(self.out, line)
                answer = read_answer(line)
                if answer is not None:
                    return answer




class ReplApprover:
    """Chapter 13's ``Approver`` for the REPL: the call, its diff, the question, on ``err``.

    Ctrl-C at the question cancels the run (and refuses the call); Ctrl-D is a no.
    """

    def __init__(
        self,
        err: TextIO,
        ask: Callable[[str], Awaitable[str]],
        root: Path,
        cancel: Callable[[], None],
    ) -> None:
        """Ask on ``err`` with ``ask``; ``root`` is the project; ``cancel`` stops the run.

        ``ask(question)`` returns the line typed, raising ``KeyboardInterrupt`` on Ctrl-C and
        ``EOFError`` on Ctrl-D (the REPL's ``Asker``).
        """
        self.err, self.ask, self.root, self.cancel = err, ask, root, cancel
        self._one_at_a_time = asyncio.Lock()

    async def __call__(self, call: ToolCall, why: str) -> Approval:
        """Show ``call`` (as a diff when it changes a file), then ask until a valid answer."""
        async with self._one_at_a_time:
            preview = change_preview(call, self.root)
            arguments = "" if preview is not None else arguments_text(call.arguments)
            shown = f"{call.name}({one_line(arguments)})" if arguments else call.name
            path = call.arguments.get("path") if preview is not None else None
            where = f" {path}" if path is not None else ""
            shown = terminal_text(shown + where)
            self.err.write(f"? {shown} needs approval: {why}\n")
            if preview:
                self.err.write(terminal_text(preview) + "\n")
            self.err.flush()
            while True:
                try:
                    line = await self.ask(QUESTION)
                except KeyboardInterrupt:
                    self.err.write("  (Ctrl-C: the run is cancelled)\n")
                    self.cancel()
                    return Approval.DENY
                except EOFError:
                    self.err.write(f"{NO_ANSWER}\n")
                    return Approval.DENY
                if not line.strip():
                    self.err.write(f"{NO_ANSWER}\n")
                    return Approval.DENY
                answer = read_answer(line)
                if answer is not None:
                    return answer


class NoTerminalApprover:
    """Chapter 13's ``Approver`` where nobody can answer: each question is a no, told on ``err``."""

    def __init__(self, err: TextIO) -> None:
        """Tell the refusals on ``err``."""
        self.err = err

    async def __call__(self, call: ToolCall, why: str) -> Approval:
        """Refuse ``call`` and say on ``err`` why, and how to allow it next time."""
        shown = one_line(f"{call.name}({arguments_text(call.arguments)})")
        self.err.write(
            f"claw: {shown} needs approval ({one_line(why)}), but there is no terminal to ask, "
            f"so it was not allowed ({HOW_TO_ALLOW})\n"
        )
        self.err.flush()
        return Approval.DENY
