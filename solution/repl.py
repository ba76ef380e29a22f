r"""The terminal app's conversation: a prompt, the streamed answer, again, until you leave.

``claw`` at a terminal (with or without a first prompt) runs a REPL. The prompt is
``prompt_toolkit``'s: history kept across sessions in ``~/.claw/history``, Alt-Enter (or a
line ending in ``\``) for a new line, Tab to complete slash commands and file paths. A line
that starts with ``/`` is a slash command (``slash.py``); anything else is sent to the model,
in the same conversation as before. The answer is shown by ``render.RunView``.

Ctrl-C while a run goes on cancels the run (chapter 7) and keeps the conversation; Ctrl-C at
the prompt clears the line, and a second one at an empty prompt leaves, as Ctrl-D does.
Approval questions go to stderr (the terminal), with the diff of an edit or a write.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from itertools import takewhile
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import create_output
from rich.console import Console

from .agent import Finish
from .approvers import ReplApprover
from .assemble import open_claw, run_prompt
from .display import error_line, terminal_text, warner
from .errors import ClawError
from .events import Event, RunFinished, StepUsage, SubagentEvent
from .options import EXIT_DONE
from .private import claw_home, private_file, private_folder
from .render import RunView
from .signals import Stopper
from .slash import (
    AppState,
    SlashCommands,
    UnknownCommand,
    default_commands,
    next_mode,
    prompt_of,
    shown_mode,
)
from .streaming import TextDelta
from .tools.ask import TerminalAsker
from .types import AssistantMessage, DeveloperMessage, Message, SystemMessage

if TYPE_CHECKING:
    from .guard import Guarded

PROMPT = "claw> "
"""What the REPL's prompt looks like."""

HISTORY_FILE = Path("history")
"""Where, in claw's own folder (``claw_home``), the prompts typed in earlier sessions are kept."""

EXIT_HINT = "(press Ctrl-C again to exit, or Ctrl-D)"
"""What a Ctrl-C at an empty prompt says."""

INTERRUPTED = "\n\n[interrupted by the user]"
"""Added to the part of an answer Ctrl-C stopped, which the conversation keeps."""


class ExitPresses:
    """Counts Ctrl-C at the prompt: the second in a row at an empty prompt means leave."""

    def __init__(self) -> None:
        """No Ctrl-C yet."""
        self.armed = False

    def press(self, line: str) -> bool:
        """A Ctrl-C with ``line`` typed: whether claw should exit now.

        With text typed, Ctrl-C only clears it. At an empty prompt the first one arms, the
        second exits.
        """
        # region ch19: text typed -> disarm, False; empty -> exit if already armed, else arm
        # more: if line.strip(): self.armed = False; return False; then leave = self.armed ...
        if line.strip():
            self.armed = False
            return False
        leave = self.armed
        self.armed = True
        return leave
        # endregion

    def reset(self) -> None:
        """Something else was typed: start counting again."""
        self.armed = False


class ReplCompleter(Completer):
    """Completes slash command names at the start of the line, file paths anywhere else."""

    def __init__(self, commands: Callable[[], Iterable[str]]) -> None:
        """Complete the names ``commands()`` gives."""
        self.commands = commands
        self.paths = PathCompleter(expanduser=True)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        """The completions of the word before the cursor."""
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name in self.commands():
                if name.startswith(before):
                    yield Completion(name, start_position=-len(before))
            return
        word = document.get_word_before_cursor(WORD=True).lstrip("@")
        if not word:
            return
        yield from self.paths.get_completions(Document(word, len(word)), complete_event)


def key_bindings(
    cleared: Callable[[str], object] | None = None, cycle: Callable[[], object] | None = None
) -> KeyBindings:
    r"""Enter sends; Alt-Enter, or Enter after a ``\``, starts a new line; Ctrl-C clears.

    Ctrl-C with text typed clears it without leaving the prompt (``cleared`` is told what was
    cleared); at an empty prompt it raises ``KeyboardInterrupt`` from the prompt, as usual.
    Shift+Tab calls ``cycle`` (the next permission mode) and redraws the prompt, which shows it.
    """
    bindings = KeyBindings()

    @bindings.add("s-tab")
    def _(event: KeyPressEvent) -> None:
        if cycle is not None:
            cycle()
            event.app.invalidate()

    @bindings.add("c-c")
    def _(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            if cleared is not None:
                cleared(buffer.text)
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @bindings.add("escape", "enter")
    def _(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return bindings


class Asker:
    """Asks the user a question on stderr with ``prompt_toolkit`` (one line, no history)."""

    def __init__(self) -> None:
        """A prompt on stderr, so that stdout holds only what claw answers."""
        self.session: PromptSession[str] | None = None
        """Made at the first question: most conversations ask none, and a session sets up
        hundreds of key bindings."""
        self.quiet: Callable[[], AbstractContextManager[object]] = nullcontext
        """Held while a question is asked: the REPL hides its still-running line then."""

    async def __call__(self, question: str) -> str:
        """The answer to ``question``; ``KeyboardInterrupt`` on Ctrl-C, ``EOFError`` on Ctrl-D."""
        if self.session is None:
            self.session = PromptSession(output=create_output(stdout=sys.stderr))
        with self.quiet():
            # handle_sigint=False: the REPL's own SIGINT handler stays in place (see Repl.run).
            return await self.session.prompt_async(question, handle_sigint=False)


class Repl:
    """The conversation loop: read a line, run a command or a prompt, show the run."""

    def __init__(
        self,
        state: AppState,
        commands: SlashCommands,
        console: Console,
        err: TextIO,
        ask: Asker,
        history: Path | None = None,
    ) -> None:
        """Talk through ``console`` (answers) and ``err`` (everything about them)."""
        self.state, self.commands, self.console, self.err, self.ask = (
            state, commands, console, err, ask,
        )
        self.presses = ExitPresses()
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)) if history is not None else None,
            completer=ReplCompleter(commands.names),
            complete_while_typing=False,
            key_bindings=key_bindings(cleared=self.presses.press, cycle=self.next_mode),
        )
        self.running = False
        self.terminated: int | None = None
        """The SIGTERM or SIGHUP that ends the REPL, once it came."""
        self._prompting: asyncio.Task[object] | None = None
        self.stopper = Stopper(self.on_signal)
        self.view: RunView | None = None
        """What shows the run in progress, if one is."""
        ask.quiet = self.quiet

    def quiet(self) -> AbstractContextManager[object]:
        """While a question is asked during a run: no line says that a tool still runs."""
        return self.view.waiting.held() if self.view is not None else nullcontext()

    def prompt(self) -> str:
        """The prompt, with the mode in it unless it is ``default``: ``claw [plan]> ``."""
        mode = shown_mode(self.state)
        return PROMPT if mode in (None, "default") else f"claw [{mode}]> "

    def next_mode(self) -> None:
        """Shift+Tab at the prompt: the next mode of ``slash.MODE_CYCLE``."""
        next_mode(self.state)

    def on_signal(self) -> None:
        """A signal arrived: Ctrl-C cancels the run, SIGTERM or SIGHUP end claw.

        At the prompt the terminal is in raw mode, where Ctrl-C is a key, not a signal; one
        that comes as a signal between a run and the next prompt is dropped.
        """
        if self.stopper.signalled == signal.SIGINT:
            if self.running:
                self.state.agent.cancel()
            return
        self.terminate()

    def terminate(self) -> None:
        """SIGTERM or SIGHUP: cancel the run in progress, or the prompt; then claw exits."""
        self.terminated = self.stopper.signalled
        if self.running:
            self.state.agent.cancel()
        elif self._prompting is not None:
            self._prompting.cancel()

    async def read(self) -> str | None:
        """The next line typed; ``None`` to leave (Ctrl-D, Ctrl-C twice, a signal)."""
        presses = self.presses
        presses.reset()
        while self.terminated is None:
            # Awaited here, not in a task of its own: a task would hand prompt_toolkit's
            # KeyboardInterrupt to the event loop, which lets it end the program.
            self._prompting = asyncio.current_task()
            try:
                # A callable: drawn again after each key, so Shift+Tab shows the new mode.
                line = await self.session.prompt_async(self.prompt, handle_sigint=False)
            except KeyboardInterrupt:
                if presses.press(self.session.default_buffer.text):
                    return None
                if presses.armed:
                    self.err.write(EXIT_HINT + "\n")
                continue
            except EOFError:
                return None
            except asyncio.CancelledError:
                if self.terminated is None:
                    raise  # cancelled from outside, not by a signal of ours
                this = asyncio.current_task()
                if this is not None:
                    this.uncancel()
                return None
            finally:
                self._prompting = None
            presses.reset()
            if line.strip():
                return line
        return None

    async def turn(self, prompt: str) -> RunFinished | None:
        """Run ``prompt`` in the conversation; show it; Ctrl-C cancels it. ``None``: blocked."""
        from .hooks import PromptBlocked

        agent, guarded = self.state.agent, self.state.guarded
        started = time.monotonic()
        self.running = True
        view = self.view = RunView(self.console)
        partial: list[str] = []  # the text of a turn not recorded yet: lost if it is cancelled

        def children(event: Event) -> None:  # chapter 21: a subagent's events come this way
            if isinstance(event, SubagentEvent):
                view.show(event)

        def show(event: Event) -> None:
            view.show(event)
            if isinstance(event, TextDelta):
                partial.append(event.text)
            elif isinstance(event, StepUsage):  # the turn is in the history
                partial.clear()

        async def plan(guarded: Guarded) -> str | None:
            nonlocal view
            if self.terminated is not None:
                return None
            try:
                answer = await guarded.ask_about_plan(self.err, lambda: self.ask(""))
            except (KeyboardInterrupt, EOFError):
                return None
            if answer:  # the approved plan, or the feedback, runs in a view of its own
                view.waiting.stop()
                view = self.view = RunView(self.console)
            return answer

        agent.sink.add(children)
        try:
            # Ctrl-C during the run arrives as SIGINT: Repl.on_signal cancels it.
            ended = await run_prompt(
                agent,
                guarded,
                prompt,
                show,
                warn=warner(self.err),
                plan=plan,
            )
        finally:
            self.running = False
            self.view = None
            view.waiting.stop()
            agent.sink.observers.remove(children)
        if isinstance(ended, PromptBlocked):
            reason = terminal_text(ended.reason)
            self.err.write(f"[the prompt was blocked by a UserPromptSubmit hook: {reason}]\n")
            return None
        if ended.reason == Finish.CANCELLED and partial:
            # Ctrl-C mid-answer: keep what was said, as Claude Code does, marked as cut short.
            agent.history.append(AssistantMessage(content="".join(partial) + INTERRUPTED))
        claw = self.state.extras.get("claw")
        if claw is not None:  # chapter 17's summary, on stderr
            line = claw.summary(ended, time.monotonic() - started)
            if line is not None:
                self.err.write(line + "\n")
        return ended

    async def run(self, first: str | None = None) -> int:
        """Converse until the user leaves; the exit status (128 + a signal that ended it)."""
        with self.stopper:
            line = first
            while self.terminated is None and not self.state.exit_requested:
                if line is None:
                    line = await self.read()
                    if line is None:
                        break
                try:
                    if not await self.commands.dispatch(line, self.state):
                        await self.turn(prompt_of(line))
                except UnknownCommand as error:
                    self.err.write(f"{error}\n")
                except ClawError as error:  # the server is down, say: tell it, keep the REPL
                    self.err.write(error_line(error) + "\n")
                line = None
        return 128 + self.terminated if self.terminated is not None else EXIT_DONE


def opening(history: Iterable[Message]) -> list[Message]:
    """What ``/clear`` goes back to: the messages before the first prompt of ``history``.

    That is the system prompt and the instructions, also when ``--continue`` or ``--resume``
    loaded a conversation: clearing it must not keep what was resumed.
    """
    return list(takewhile(lambda message: isinstance(message, SystemMessage | DeveloperMessage),
                          history))


async def run_repl(arguments: argparse.Namespace, commands: SlashCommands | None = None) -> int:
    """The REPL for ``arguments``, with ``commands`` (default: chapter 19's)."""
    err = sys.stderr
    ask = Asker()
    cancel: list[Callable[[], None]] = []
    approver = ReplApprover(err, ask, Path.cwd(), lambda: cancel[0]())
    async with open_claw(
        arguments, out=err, err=err, read_line=lambda: ask(""), approve=approver,
        ask=TerminalAsker(err, lambda: ask(""), is_interactive=lambda: True),
    ) as claw:
        cancel.append(claw.agent.cancel)
        start = opening(claw.agent.history)
        state = AppState(claw.agent, sys.stdout, claw.guarded, start=start)
        state.extras["claw"] = claw  # for /cost, /compact and the run summary
        history = claw_home() / HISTORY_FILE
        private_folder(history.parent)
        private_file(history)  # every prompt typed: the user's alone (private.py)
        repl = Repl(state, commands or default_commands(), Console(), err, ask, history)
        return await repl.run(arguments.prompt)
