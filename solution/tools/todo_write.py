"""The ``todo_write`` tool: the model keeps its plan of work as a list, and you watch it.

It follows Claude Code's ``TodoWrite``: each call sends the **whole** list, which replaces the
one before (there is no "add item" or "tick item"); each item has its text (``content``), a
``status`` (``pending``, ``in_progress`` or ``completed``) and an ``activeForm``, the same task
said as it is being done ("Running the tests"), which a terminal shows while it is in progress.
At most one item is in progress at a time: a list with two is refused, and nothing changes.

The list lives in a ``TodoList``, part of the agent's state (the tool holds it; ``todos(tools)``
finds it). Every change is announced to its subscribers as a ``TodosChanged`` event, which the
``claw`` command passes to the agent's observers, so a terminal can redraw the list as it
changes and a session can record it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from ..events import Observer, TodosChanged
from ..todo_item import TodoItem
from ..types import ToolOutput, ToolSet
from .base import ArgumentsTool, ToolArguments

TODO_WRITE = "todo_write"
"""The tool's name, as the model calls it."""


class TodoWriteArguments(ToolArguments):
    """The whole new list."""

    todos: list[TodoItem] = Field(description="The complete list; it replaces the old one.")


def list_problem(items: Sequence[TodoItem]) -> str | None:
    """What is wrong with ``items`` as a todo list, or ``None``: at most one in progress.

    The message counts the items in progress and names them:
    ``2 items are in_progress ('Write the parser', 'Run the tests'); at most one may be``.
    """
    # region ch20: collect the in_progress items; two or more: say how many and name them
    # more: ", ".join(repr(item.content) for item in busy)
    busy = [item for item in items if item.status == "in_progress"]
    if len(busy) < 2:
        return None
    names = ", ".join(repr(item.content) for item in busy)
    return f"{len(busy)} items are in_progress ({names}); at most one may be"
    # endregion


# --8<-- [start:marks]
MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
"""How each status is shown."""
# --8<-- [end:marks]


def render(items: Sequence[TodoItem]) -> str:
    """The list as text, one item a line: ``[x] done``, ``[>] Doing it now``, ``[ ] to do``.

    The item in progress is shown by its ``activeForm``; the others by their ``content``.
    An empty list is ``(no todos)``.
    """
    # region ch20: one line per item: MARKS[status], then activeForm if in progress, else content
    # more: item.activeForm if item.status == "in_progress" else item.content
    if not items:
        return "(no todos)"
    return "\n".join(
        f"{MARKS[item.status]} {item.activeForm if item.status == 'in_progress' else item.content}"
        for item in items
    )
    # endregion


def summary(items: Sequence[TodoItem]) -> str:
    """``3 items: 1 completed, 1 in progress, 1 pending`` (only the statuses there are)."""
    counts = Counter(item.status for item in items)
    parts = [
        f"{counts[status]} {status.replace('_', ' ')}"
        for status in ("completed", "in_progress", "pending")
        if counts[status]
    ]
    noun = "item" if len(items) == 1 else "items"
    return f"{len(items)} {noun}" + (f": {', '.join(parts)}" if parts else "")


class TodoList:
    """The model's current todo list, and who is told when it changes."""

    def __init__(self) -> None:
        """An empty list, with no subscribers."""
        self.items: tuple[TodoItem, ...] = ()
        self.subscribers: list[Observer] = []

    def subscribe(self, observer: Observer) -> None:
        """Give ``observer`` a ``TodosChanged`` event after every change."""
        self.subscribers.append(observer)

    @property
    def current(self) -> TodoItem | None:
        """The item in progress, if there is one."""
        return next((item for item in self.items if item.status == "in_progress"), None)

    def replace(self, items: Sequence[TodoItem]) -> bool:
        """Make ``items`` the list; whether it changed. ``ValueError`` if ``list_problem``.

        A refused list changes nothing. A list equal to the current one is no change, and
        nobody is told; otherwise every subscriber gets ``TodosChanged`` with the new list.
        """
        # region ch20: list_problem: ValueError; same list: False; else set, tell, True
        # more: new = tuple(items); for observer in self.subscribers: observer(TodosChanged(new))
        problem = list_problem(items)
        if problem is not None:
            raise ValueError(problem)
        new = tuple(items)
        if new == self.items:
            return False
        self.items = new
        for observer in self.subscribers:
            observer(TodosChanged(new))
        return True
        # endregion


class TodoWriteTool(ArgumentsTool[TodoWriteArguments]):
    """Replace the model's todo list with the one it sends."""

    name = TODO_WRITE
    description = (
        "Keep your plan for a task of three or more steps as a todo list the user can watch. "
        "Send the whole list every time; it replaces the old one. Each item has content "
        "('Run the tests'), activeForm ('Running the tests') and status: pending, "
        "in_progress or completed. Mark an item in_progress before you start it and "
        "completed as soon as it is done; at most one item is in_progress at a time."
    )
    Arguments = TodoWriteArguments
    read_only = False
    """It changes the list, which a second call in the same step would see."""

    def __init__(self, todos: TodoList | None = None) -> None:
        """Keep the list in ``todos`` (a new, empty ``TodoList`` if not given)."""
        self.todos = todos if todos is not None else TodoList()

    async def call(self, args: TodoWriteArguments) -> ToolOutput:
        """Replace the list; the result is the new list, or why it was refused."""
        try:
            self.todos.replace(args.todos)
        except ValueError as problem:
            return ToolOutput.error(
                f"todo_write refused the list: {problem}. Nothing was changed; send the "
                "whole list again with one item in_progress."
            )
        return ToolOutput.ok(f"Todo list updated ({summary(args.todos)}):\n{render(args.todos)}")


def todos(tools: ToolSet) -> TodoList | None:
    """The todo list of the agent whose tools are ``tools``, if it has ``todo_write``."""
    tool = tools.get(TODO_WRITE)
    return tool.todos if isinstance(tool, TodoWriteTool) else None
