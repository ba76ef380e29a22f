"""The ``remember`` and ``recall`` tools: the model's long-term memory (``memory.py``).

Both share one ``MemoryStore``. SQLite calls block, and a write may wait for another claw
process's write to finish; so each call runs in a worker thread, one at a time per store, and
the event loop (and Ctrl-C) goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import TypeVar

from pydantic import Field

from ..memory import Memory, MemoryStore, Scope
from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments

T = TypeVar("T")

REMEMBER = "remember"
"""The name of the tool that keeps a memory."""
RECALL = "recall"
"""The name of the tool that searches the memories."""

MAX_MEMORY_CHARS = 2000
"""The longest memory the model may keep: a note, not a document."""


async def off_the_loop(store: MemoryStore, work: Callable[[], T]) -> T:
    """``work()`` in a worker thread, holding ``store.lock``."""

    def locked() -> T:
        with store.lock:
            return work()

    return await asyncio.to_thread(locked)


class RememberArguments(ToolArguments):
    """What to remember, and for whom."""

    text: str = Field(
        min_length=1,
        max_length=MAX_MEMORY_CHARS,
        description="The fact to keep, in one or two self-contained sentences.",
    )
    scope: Scope = Field(
        default=Scope.PROJECT,
        description="project: only in this project (default); user: in every project of yours.",
    )


class RecallArguments(ToolArguments):
    """What to look for."""

    query: str = Field(min_length=1, description="Words to look for; any of them may match.")
    limit: int = Field(default=10, ge=1, le=50, description="At most this many memories.")


def show_memory(memory: Memory) -> str:
    """``memory`` for the model: ``#12 (project) The tests need Postgres.``, its text as kept."""
    return f"#{memory.id} ({memory.scope}) {memory.text}"


class RememberTool(ArgumentsTool[RememberArguments]):
    """Keep a fact for later sessions."""

    name = REMEMBER
    description = (
        "Keep a fact for later sessions: a preference of the user, a convention of this "
        "project, a command that works. Only what you cannot read from the code. Use recall "
        "to look it up later."
    )
    Arguments = RememberArguments
    read_only = False

    def __init__(self, store: MemoryStore) -> None:
        """Keep memories in ``store``."""
        self.store = store

    async def call(self, args: RememberArguments) -> ToolOutput:
        """Remember ``args.text``; the result names the memory's number and scope."""
        raise Todo("ch20", "store.remember off the loop; the kept memory in the result; errors too")


class RecallTool(ArgumentsTool[RecallArguments]):
    """Search the memories of this project and of the user."""

    name = RECALL
    description = (
        "Search what you remembered in earlier sessions (this project's memories and the "
        "user's). Give a few words; memories containing any of them come back, best first."
    )
    Arguments = RecallArguments
    read_only = True

    def __init__(self, store: MemoryStore) -> None:
        """Search the memories in ``store``."""
        self.store = store

    async def call(self, args: RecallArguments) -> ToolOutput:
        """The matching memories, one a line, or a line saying there are none."""
        raise Todo(
            "ch20",
            "store.recall off the loop; one show_memory line each, or say none match",
        )
