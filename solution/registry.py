"""The tool registry: which tools claw has, which of them only look, and running those together.

A ``ToolSet`` (chapter 4) is the agent's inventory: the tools by name, in a fixed order, with
the definitions the model is shown. This module adds what the loop needs to know about each
tool beyond its schema: whether it is *read-only*. A read-only tool (``read``, ``glob``,
``grep``, ``list_dir``, ``web_fetch``) changes nothing, so two of them can run at the same time
without one seeing the other's effects. A tool says so with a class attribute,
``read_only = True``; a tool without the attribute counts as one that changes things, the safe
default.

With ``Agent(..., concurrent=True)``, the loop hands each step's calls to ``run_in_batches``:
consecutive read-only calls form one batch and run side by side in an ``asyncio.TaskGroup``;
every other call is a batch of its own, so effects happen in the order the model asked for.
The results go back in call order, whatever order the calls finished in.

``default_tools`` builds claw's standard set, the tools ``claw`` starts with;
``assistant_tools`` the tools of chapter 20 that the ``claw`` command adds to them.
"""

from __future__ import annotations

import time
from asyncio import TaskGroup
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .events import Event, ToolCalled, ToolResult
from .memory import MemoryStore
from .tools.ask import AskHandler, AskUserTool
from .tools.bash import BashTool
from .tools.edit import EditTool
from .tools.glob import GlobTool
from .tools.grep import GrepTool
from .tools.ls import ListDirTool
from .tools.memory_tools import RecallTool, RememberTool
from .tools.patch import ApplyPatchTool
from .tools.read import ReadTool
from .tools.todo_write import TodoList, TodoWriteTool
from .tools.tracker import FileTracker
from .tools.web_fetch import WebFetchTool
from .tools.write import WriteTool
from .types import Message, Tool, ToolCall, ToolOutput, ToolSet

T = TypeVar("T")


class BatchRunner(Protocol):
    """What ``run_in_batches`` needs of the loop running it (chapter 7's ``Agent``).

    A protocol, not an import of ``Agent``: the loop imports this module, so this module must
    not import the loop.
    """

    tools: ToolSet
    history: list[Message]

    async def execute(self, call: ToolCall) -> ToolOutput:
        """Run one call through the gate and the tool."""
        ...

    async def race(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` unless the run is cancelled first."""
        ...


def is_read_only(tool: object) -> bool:
    """Whether ``tool`` declares that it changes nothing (``read_only = True``).

    A tool without the attribute, or with anything but ``True`` in it, is not read-only, and
    neither is ``None`` (no such tool): when in doubt, a call runs alone.
    """
    # region ch12: read the tool's read_only attribute; missing or not exactly True means False
    # more: getattr(tool, "read_only", False) is True
    return getattr(tool, "read_only", False) is True
    # endregion


def batches(calls: Sequence[ToolCall], tools: ToolSet) -> list[list[ToolCall]]:
    """Split ``calls`` into the groups that may run together, keeping their order.

    Consecutive calls of read-only tools form one group; any other call (a tool that changes
    things, or a name no tool has) is a group of its own. Joined together, the groups are
    ``calls`` again, in the same order.
    """
    # region ch12: runs of consecutive read-only calls together; every other call alone
    # more: extend the last group if it and this call are both read-only, else start a new one
    groups: list[list[ToolCall]] = []
    previous_read_only = False
    for call in calls:
        read_only = is_read_only(tools.get(call.name))
        if groups and read_only and previous_read_only:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous_read_only = read_only
    return groups
    # endregion


async def run_batch(
    work: Callable[[ToolCall], Coroutine[Any, Any, T]], calls: Sequence[ToolCall]
) -> list[T]:
    """Await ``work(call)`` for every call at the same time; the results in call order.

    If one of them raises (a bug: ``run_tool`` turns every tool failure into a result), the
    others are cancelled and waited for, and that exception propagates as itself, not wrapped
    in an ``ExceptionGroup``. If the task awaiting this is cancelled, every call is cancelled
    and waited for.
    """
    # region ch12: one task per call in an asyncio.TaskGroup; unwrap the group's first error
    # more: keep the tasks in a list to read results in order; except ExceptionGroup: raise [0]
    try:
        async with TaskGroup() as group:
            tasks = [group.create_task(work(call)) for call in calls]
    except ExceptionGroup as errors:
        raise errors.exceptions[0] from None
    return [task.result() for task in tasks]
    # endregion


def timed(
    work: Callable[[ToolCall], Awaitable[T]],
) -> Callable[[ToolCall], Coroutine[Any, Any, tuple[T, float]]]:
    """``work``, changed to return its result with how long it took, in seconds."""

    async def run(call: ToolCall) -> tuple[T, float]:
        started = time.monotonic()
        result = await work(call)
        return result, time.monotonic() - started

    return run


async def run_in_batches(
    agent: BatchRunner, step: int, calls: Sequence[ToolCall], first: int
) -> AsyncIterator[Event]:
    """``Agent.run_calls`` for ``concurrent=True``: each batch at once, batches in order.

    For each batch: a ``ToolCalled`` per call, in call order, before any of them starts; then
    the batch runs, raced against ``agent.cancel()``; then each result goes into
    ``agent.history`` (from position ``first`` on, where ``CANCELLED`` stands until then) and
    is reported as a ``ToolResult``, in call order.
    """
    # region ch12: per batch: every ToolCalled, race run_batch(timed(execute)), results in order
    # more: index = first; outputs = await agent.race(run_batch(timed(agent.execute), batch))
    index = first
    for batch in batches(calls, agent.tools):
        for call in batch:
            yield ToolCalled(step, call.id, call.name, call.arguments)
        results = await agent.race(run_batch(timed(agent.execute), batch))
        for call, (output, duration) in zip(batch, results, strict=True):
            agent.history[index] = output.to_message(call)
            index += 1
            yield ToolResult(step, call.id, call.name, output.content, output.is_error, duration)
    # endregion


def default_tools(root: Path | str = ".", *, web: bool = False) -> ToolSet:
    """Claw's standard tools, working in ``root``; ``web_fetch`` too if ``web`` is true.

    The looking tools first (``read``, ``glob``, ``grep``, ``list_dir``), then the changing
    ones (``write``, ``edit``, ``apply_patch``, ``bash``). ``read``, ``write``, ``edit`` and
    ``apply_patch`` share one ``FileTracker``, so an edit knows which files the model has
    read, whichever tool read or wrote them.
    """
    # region ch12: one FileTracker for the four file tools; web_fetch only when asked for
    # more: files = FileTracker(); ReadTool(root, files=files), ...; ToolSet(tools)
    files = FileTracker()
    tools: list[Tool] = [
        ReadTool(root, files=files),
        GlobTool(root),
        GrepTool(root),
        ListDirTool(root),
        WriteTool(root, files=files),
        EditTool(root, files=files),
        ApplyPatchTool(root, files=files),
        BashTool(root),
    ]
    if web:
        tools.append(WebFetchTool())
    return ToolSet(tools)
    # endregion



def assistant_tools(ask: AskHandler, memory: MemoryStore, todos: TodoList) -> list[Tool]:
    """Chapter 20's tools, which the ``claw`` command adds to ``default_tools``.

    ``ask_user`` asks through ``ask``, ``remember`` and ``recall`` use ``memory``, and
    ``todo_write`` keeps its list in ``todos``. Building them touches nothing: the memory's
    database opens on the first call.
    """
    return [AskUserTool(ask), RememberTool(memory), RecallTool(memory), TodoWriteTool(todos)]
