"""Checks that run before every provider call: the seam a budget (and compaction) plugs into.

Chapter 7's ``Agent`` decides between steps, in ``why_stop``, whether to take another step.
``PreflightAgent`` adds to that decision a list of checks, each given the history about to be
sent: one may answer with a ``Finish`` to end the run before the call is made (chapter 17's
budget), or return ``None`` to let it go, after changing the history if it must.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .agent import Finish
from .loop import Agent, RunState
from .types import Message

Preflight = Callable[[Sequence[Message]], Finish | None]
"""Looks at the history about to be sent: a ``Finish`` ends the run instead, ``None`` sends it."""


class PreflightAgent(Agent):
    """An ``Agent`` that asks each of its ``preflight`` checks before every provider call."""

    def __init__(self, *args: Any, preflight: Iterable[Preflight] = (), **options: Any) -> None:
        """``Agent``'s arguments, and the checks to ask, in order."""
        super().__init__(*args, **options)
        self.preflight: list[Preflight] = list(preflight)

    def why_stop(self, state: RunState) -> Finish | None:
        """Chapter 7's reasons first; then, before a call would be made, each check."""
        reason = super().why_stop(state)
        for check in self.preflight if reason is None else ():
            reason = check(self.history)
            if reason is not None:
                break
        return reason
