"""The ``ask_user`` tool: the model asks the person a question, and waits for the answer.

The tool does not know how a person is asked. It is handed an ``AskHandler``, an async
function that gets a ``Question`` and returns the answer as text, or raises ``NoAnswer`` when
no answer can be had. The ``claw`` command gives it a ``TerminalAsker`` (the question goes to
stderr, the answer comes from the keyboard); a test gives it ``ScriptedAnswers``; a script or
CI run, where nobody is there, gives it ``no_one_to_ask``. The rule that shapes this module:
an answer is only ever taken from a person. Piped input is data, not a person, and a question
nobody can answer is an error result the model can act on, never a hang and never a guess.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from pydantic import Field, field_validator

from ..display import terminal_text
from ..errors import ToolError
from ..terminal import ReadLine, interactive, read_stdin_line
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments

ASK_USER = "ask_user"
"""The tool's name, as the model calls it."""

MAX_CHOICES = 6
"""How many choices one question may offer."""

NOT_INTERACTIVE = (
    "no one can answer: claw is not running at a terminal (its input is a pipe, a file or "
    "nothing), so there is no person to ask"
)
"""Why ``no_one_to_ask`` and a ``TerminalAsker`` without a terminal give no answer."""

NO_REPLY = "the user gave no answer"
"""Why a ``TerminalAsker`` gives no answer when the person just pressed Enter (or Ctrl-D)."""


class AskArguments(ToolArguments):
    """A question for the user, and optionally the answers to choose from."""

    question: str = Field(
        min_length=1, description="The question, complete and self-contained, in one or two lines."
    )
    choices: list[str] = Field(
        default_factory=list,
        max_length=MAX_CHOICES,
        description=(
            "Two or more short answers the user may pick from (they may still answer in their "
            "own words). Leave empty for an open question."
        ),
    )

    @field_validator("choices")
    @classmethod
    def two_or_more_distinct(cls, choices: list[str]) -> list[str]:
        """No choices, or at least two distinct, non-blank ones."""
        if len(choices) == 1:
            raise ValueError("give at least two choices, or none for an open question")
        if any(not choice.strip() for choice in choices):
            raise ValueError("a choice may not be blank")
        if len({choice.strip().casefold() for choice in choices}) != len(choices):
            raise ValueError("the choices must differ from each other")
        return choices


# --8<-- [start:question]
@dataclass(frozen=True)
class Question:
    """What the model asks: the text, and the choices offered (none for an open question)."""

    text: str
    choices: tuple[str, ...] = ()


class NoAnswer(ToolError):
    """No answer can be had; the message says why (no terminal, no reply, no script left)."""


AskHandler = Callable[[Question], Awaitable[str]]
"""Asks a person ``question`` and returns their answer as they gave it; raises ``NoAnswer``."""
# --8<-- [end:question]


def interpret(question: Question, reply: str) -> str:
    """The tool's result for ``reply`` to ``question``: what the user chose or said.

    With choices, a reply that is a choice's number (``2``) or the choice itself (case and
    surrounding spaces ignored) picks it: ``The user chose: Postgres``. Any other reply is the
    user's own words: ``The user answered in their own words: ...``. An open question's reply
    is ``The user answered: ...``. A reply that is blank raises ``NoAnswer(NO_REPLY)``.
    """
    # region ch20: blank: NoAnswer; a number or a choice's text picks it; else the own words
    # more: reply.strip(); 1 <= int(text) <= len(choices); compare choices with casefold()
    text = reply.strip()
    if not text:
        raise NoAnswer(NO_REPLY)
    if not question.choices:
        return f"The user answered: {text}"
    if text.isdigit() and 1 <= int(text) <= len(question.choices):
        return f"The user chose: {question.choices[int(text) - 1]}"
    for choice in question.choices:
        if choice.strip().casefold() == text.casefold():
            return f"The user chose: {choice}"
    return f"The user answered in their own words: {text}"
    # endregion


class AskUserTool(ArgumentsTool[AskArguments]):
    """Ask the user a question, with optional choices, through a pluggable ``AskHandler``."""

    name = ASK_USER
    description = (
        "Ask the user a question when you cannot go on without their decision or a fact only "
        "they know (which of two designs, a name, a missing requirement). Offer `choices` when "
        "there are a few clear options. Do not ask what you can find out with the other tools. "
        "If no one can answer, you get an error: then decide yourself and say what you assumed."
    )
    Arguments = AskArguments
    read_only = True
    """Asking changes nothing in the workspace, so it may run while planning (chapter 16)."""

    def __init__(self, handler: AskHandler) -> None:
        """Ask through ``handler`` (a ``TerminalAsker``, ``ScriptedAnswers``, ``no_one_to_ask``)."""
        self.handler = handler

    async def call(self, args: AskArguments) -> ToolOutput:
        """Ask; the answer as ``interpret`` words it, or an error result when there is none."""
        # region ch20: build the Question, await the handler, interpret; NoAnswer: error result
        # more: except NoAnswer as why: ToolOutput.error(f"{why}. Do not ask again: decide ...")
        question = Question(args.question, tuple(args.choices))
        try:
            return ToolOutput.ok(interpret(question, await self.handler(question)))
        except NoAnswer as why:
            return ToolOutput.error(
                f"{why}. Do not ask again: decide yourself, say in your answer what you "
                "assumed, and go on."
            )
        # endregion


# --8<-- [start:handlers]
async def no_one_to_ask(question: Question) -> str:
    """The handler for a run with nobody there (a script, CI): never an answer."""
    raise NoAnswer(NOT_INTERACTIVE)


class ScriptedAnswers:
    """A handler for tests and notebooks: gives ``answers`` in order, and keeps the questions."""

    def __init__(self, answers: Iterable[str]) -> None:
        """Answer with ``answers``, one per question; after the last, raise ``NoAnswer``."""
        self.answers = list(answers)
        self.asked: list[Question] = []

    async def __call__(self, question: Question) -> str:
        """The next scripted answer to ``question``."""
        self.asked.append(question)
        if len(self.asked) > len(self.answers):
            raise NoAnswer("the script has no answer left")
        return self.answers[len(self.asked) - 1]


def show_question(question: Question) -> str:
    """``question`` as the terminal shows it: the text, the numbered choices, then a prompt.

    Every line of it is made safe for a terminal first (``display.terminal_text``): the text
    comes from the model.
    """
    lines = [f"? claw asks: {terminal_text(question.text)}"]
    lines += [f"  {number}. {terminal_text(choice)}" for number, choice in
              enumerate(question.choices, 1)]
    hint = "a number, or your own words" if question.choices else "your answer"
    return "\n".join(lines) + f"\n  ({hint}; Enter alone: no answer) > "


class TerminalAsker:
    """The ``claw`` command's handler: asks the person at the terminal.

    The question goes to ``err`` (standard error by default), never to standard output, which
    belongs to the answer a script may be reading. The reply is read with ``read_line`` only
    when ``is_interactive()`` says a person is there (standard input is a terminal); otherwise
    nothing is read, so a line piped into claw is never taken for an answer, and the handler
    raises ``NoAnswer(NOT_INTERACTIVE)``. One question at a time, even from calls that run
    together.
    """

    def __init__(
        self,
        err: TextIO | None = None,
        read_line: ReadLine | None = None,
        is_interactive: Callable[[], bool] = interactive,
    ) -> None:
        """Ask on ``err``, read with ``read_line``; ``is_interactive`` tells if anyone is there."""
        self.err = err
        self.read_line = read_line or read_stdin_line
        self.is_interactive = is_interactive
        self._one_at_a_time = asyncio.Lock()

    async def __call__(self, question: Question) -> str:
        """Show ``question`` and read the reply; ``NoAnswer`` without a terminal."""
        if not self.is_interactive():
            raise NoAnswer(NOT_INTERACTIVE)
        err = self.err or sys.stderr
        async with self._one_at_a_time:
            err.write(show_question(question))
            err.flush()
            try:
                reply = await self.read_line()
            except asyncio.CancelledError:  # Ctrl-C at the question: end its line
                err.write("\n")
                raise
            if not reply.strip():
                err.write("\n  (no answer)\n")
            return reply
# --8<-- [end:handlers]
