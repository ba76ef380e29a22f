"""What happens while the agent runs, as data: events, and the sink that hands them out.

The agent (``loop.py``) reports every step as an event: the stream events of chapter 5a as
they arrive, then what the step amounted to: the assistant's text, each tool call, each
tool result, the step's token usage, and last why the run finished. A terminal, a log, a
cost meter and a test all watch the same run, and none of them needs a hook into the loop:
each is an observer, a callable that receives every event. The rule that shapes this module:
an observer can never break the run it watches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .agent import Finish
from .streaming import StreamEvent
from .types import TokenUsage

if TYPE_CHECKING:
    from .todo_item import TodoItem

logger = logging.getLogger("claw.events")
"""Where a failing observer is reported (once per observer)."""


# --8<-- [start:events]
@dataclass(frozen=True, slots=True)
class AssistantText:
    """The model's whole text for one step (sent only when the step has text)."""

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class StepUsage:
    """The tokens (and cost, when known) of one step's provider call."""

    step: int
    usage: TokenUsage


@dataclass(frozen=True, slots=True)
class ToolCalled:
    """The model asked for this tool call; it is about to run."""

    step: int
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's result, as the model will read it (truncated if it was too long)."""

    step: int
    id: str
    name: str
    output: str
    is_error: bool
    duration: float
    """Seconds from the call's start to its result, measured with ``time.monotonic``."""


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run is over: why, after how many steps, the last text and the total usage."""

    reason: Finish
    steps: int
    """How many times the provider was called."""
    text: str
    """The model's last complete text in this run (empty if it had none)."""
    usage: TokenUsage


@dataclass(frozen=True, slots=True)
class Compacted:
    """The history was made smaller before a request (chapter 18), or on demand."""

    removed: int
    """Messages replaced by the one summary message (0 when only tool results were trimmed)."""
    kept: int
    """Messages in the history afterwards, the summary included."""
    tokens_before: int
    """The estimated prompt tokens of the history before."""
    tokens_after: int
    """The estimated prompt tokens of the history after."""
    trimmed: int = 0
    """Tool results whose middle was cut out, before any summary was asked for."""


LoopEvent = AssistantText | StepUsage | ToolCalled | ToolResult | RunFinished | Compacted
"""What the loop itself reports about a step."""


@dataclass(frozen=True, slots=True)
class TodosChanged:
    """The model replaced its todo list (chapter 20's ``todo_write``): the whole new list.

    Sent to the agent's observers while the ``todo_write`` call runs, so before its
    ``ToolResult``; never yielded by ``Agent.events`` itself.
    """

    todos: tuple[TodoItem, ...]


@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """An event of a child agent (chapter 21's ``task`` tool), passed on to its parent.

    ``agent_id`` names the child (``task-1``, ``task-2``, ... in the order they started);
    ``event`` is what the child reported, unchanged. Sent to the parent's observers while the
    ``task`` call runs; never yielded by ``Agent.events`` itself.
    """

    agent_id: str
    event: Event


ToolEvent = TodosChanged | SubagentEvent
"""What a tool reports about the agent's state while it runs."""


@dataclass(frozen=True, slots=True)
class SessionRulesAdded:
    """The user answered "always, this session" (chapter 13's ``Approval.SESSION``).

    ``rules`` are the allow rules that answer added, in chapter 13's syntax. Sent to the
    agent's observers, so that chapter 22's transcript keeps them and ``--continue`` of the
    same session restores them; never yielded by ``Agent.events`` itself.
    """

    rules: tuple[str, ...]


Event = StreamEvent | LoopEvent | ToolEvent | SessionRulesAdded
"""Everything an ``Agent`` reports, in the order it happens."""

Observer = Callable[[Event], object]
"""Anything that can be called with an event. Keep it quick: the loop waits for it."""
# --8<-- [end:events]


class EventSink:
    """Hands each event to every observer, in the order they were added.

    An observer that raises is reported once, with its traceback, as a warning on the
    ``claw.events`` logger, and keeps being called: a broken progress bar must not end a
    run that is editing your files.
    """

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        """Start with ``observers``."""
        self.observers: list[Observer] = list(observers)
        self._reported: set[int] = set()  # positions in observers of those already reported

    def add(self, observer: Observer) -> None:
        """Call ``observer`` with every later event too."""
        self.observers.append(observer)

    def emit(self, event: Event) -> None:
        """Give ``event`` to each observer; one that raises never stops the others."""
        # region ch07: call every observer; a failure is logged once per observer, never raised
        # more: enumerate; except Exception; logger.warning(..., exc_info=True) once per position
        for position, observer in enumerate(self.observers):
            try:
                observer(event)
            except Exception:
                if position not in self._reported:
                    self._reported.add(position)
                    logger.warning(
                        "observer %s raised on %s; it stays subscribed, and its later "
                        "failures are not reported",
                        getattr(observer, "__qualname__", type(observer).__qualname__),
                        type(event).__name__,
                        exc_info=True,
                    )
        # endregion
