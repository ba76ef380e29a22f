"""An item of the model's todo list: what ``todo_write`` takes and its event carries.

The tool's arguments (``tools/todo_write.py``) are a list of them, and ``events.TodosChanged``
carries the new list. The item lives apart from both, so that ``events.py`` can name it
without importing the tool, which imports ``events.py``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["pending", "in_progress", "completed"]
"""Where an item stands."""


class TodoItem(BaseModel):
    """One task of the list, as Claude Code's ``TodoWrite`` has it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str = Field(min_length=1, description="The task, said as an order: 'Run the tests'.")
    status: Status = Field(description="pending, in_progress (at most one) or completed.")
    activeForm: str = Field(
        min_length=1, description="The task as it is being done: 'Running the tests'."
    )
