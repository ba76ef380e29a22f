"""ch21 · The terminal app draws a subagent's progress: a line per child tool call.

The child's events reach the parent's observers as ``SubagentEvent``; chapter 19's REPL shows
each of the child's tool calls as one indented line under the parent's ``task`` line, with
the child's id, as Claude Code shows a subagent's progress.
"""

import io
from pathlib import Path

from rich.console import Console
from test_subagent import Look, Routed, task, uses

from claw.loop import Agent
from claw.repl import Repl
from claw.slash import AppState, default_commands
from claw.subagents import TaskTool
from claw.types import AssistantTurn, ToolSet

PARENT = "Find where the config is read."


async def no_answer(question: str) -> str:
    raise AssertionError(f"nothing should be asked: {question}")


async def test_subagent_progress_is_drawn_in_the_terminal_app_one_line_per_child_call(
    tmp_path: Path,
) -> None:
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(tool_calls=[task("Look for the config.", "t1")]),
                "It is read in app.py.",
            ],
            "Look for the config.": [
                uses("look", "a", what="app.py"),
                uses("look", "b", what="\x1b[31msettings.py"),
                "app.py reads it.",
            ],
        }
    )
    tool = TaskTool()
    agent = Agent(provider, ToolSet([Look(), tool]))
    tool.bind(agent)
    screen = io.StringIO()
    console = Console(file=screen, width=100, force_terminal=False, color_system=None)
    err = io.StringIO()
    state = AppState(agent, screen, start=list(agent.history))
    repl = Repl(state, default_commands(), console, err, no_answer)

    finished = await repl.turn(PARENT)

    assert finished is not None and finished.reason == "done"
    lines = screen.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("→ task("))
    assert lines[start + 1 : start + 3] == [
        "  ⎿ task-1 → look(what='app.py')",
        "  ⎿ task-1 → look(what='\\x1b[31msettings.py')",  # escaped, never sent to the terminal
    ]
    assert lines[start + 3].startswith("  ✓ task: app.py reads it.")
    assert "\x1b" not in screen.getvalue()
    assert agent.sink.observers == [tool.count], "the REPL's observer leaves with its run"
