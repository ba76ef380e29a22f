"""Checks that run before every provider call: the seam a budget (and compaction) plugs into.

Chapter 7's ``Agent`` runs ``before_request`` at the start of each step, before the stream
opens; chapter 18's ``prepare`` (compaction) runs there. ``PreflightAgent`` adds, in that same
seam and after ``prepare``, a list of checks, each given the history as it will really be sent
(compacted, if it was): one may answer with a ``Finish`` to end the run before the call is made
(chapter 17's budget), or return ``None`` to let it go.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Sequence,
)
from contextlib import aclosing
from typing import Any

from .agent import Finish
from .events import Event
from .loop import Agent, RunState
from .types import Message

Preflight = Callable[[Sequence[Message]], Finish | None]
"""Looks at the history about to be sent: a ``Finish`` ends the run instead, ``None`` sends it."""

Notices = Callable[[], list[Message]]
"""Gives the messages to add to the history before the next provider call (chapter 26's job
notices), each exactly once; usually none."""

Starting = Callable[[str, int], Awaitable[None]]
"""Told of each prompt as its run starts, with the number of messages before it (chapter 27's
checkpoints)."""


class StopBeforeRequest(Exception):
    """A preflight check ended the run before the provider call: ``reason`` says why."""

    def __init__(self, reason: Finish) -> None:
        """The run ends with ``reason``."""
        super().__init__(reason)
        self.reason = reason


class PreflightAgent(Agent):
    """An ``Agent`` that asks each of its ``preflight`` checks before every provider call.

    One ordered seam, ``before_request``: first chapter 18's ``prepare`` (which may compact
    the history), then the ``notices`` (chapter 26: a message for each background job that
    ended), then the checks, on the history that will really be sent.
    """

    def __init__(self, *args: Any, preflight: Iterable[Preflight] = (), **options: Any) -> None:
        """``Agent``'s arguments, and the checks to ask, in order."""
        super().__init__(*args, **options)
        self.preflight: list[Preflight] = list(preflight)
        self.notices: list[Notices] = []
        """Asked after ``prepare``, before the checks: what they give joins the history."""
        self.starting: list[Starting] = []
        """Awaited as each run starts, before its prompt joins the history (chapter 27)."""

    async def loop(self, prompt: str) -> AsyncGenerator[Event, None]:
        """Chapter 7's run, once each of ``starting`` was told of the prompt."""
        for starting in self.starting:
            await starting(prompt, len(self.history))
        async with aclosing(super().loop(prompt)) as events:
            async for event in events:
                yield event

    async def before_request(self) -> AsyncIterator[Event]:
        """``prepare`` first (its event is reported), then each check; a ``Finish`` stops here."""
        async with aclosing(super().before_request()) as prepared:  # type: ignore[type-var]
            async for event in prepared:
                yield event
        for notices in self.notices:
            self.history.extend(notices())
        for check in self.preflight:
            reason = check(self.history)
            if reason is not None:
                raise StopBeforeRequest(reason)

    async def step(self, state: RunState) -> AsyncGenerator[Event, None]:
        """Chapter 7's step; a check that stopped it ends the run, with no call made."""
        try:
            # aclosing: when this step is closed early (a closed pipe, Ctrl-C), chapter 7's
            # step is closed at once too, and closes its stream, in this task.
            async with aclosing(super().step(state)) as events:  # type: ignore[type-var]
                async for event in events:
                    yield event
        except StopBeforeRequest as stop:
            state.steps -= 1  # the step never reached the provider
            state.finish = stop.reason
