"""Claw's tools under Claude Code's names, and the groups the permission modes treat alike.

Claude Code's permission rules and hook matchers name tools as Claude Code does (``Bash``,
``Edit``, ``WebFetch``); claw's tools have names of their own (``bash``, ``apply_patch``,
``web_fetch``). ``TOOL_NAMES`` is the one table between the two, which the permission rules
(``permissions.py``) and the hooks (``hooks.py``) both read.
"""

from __future__ import annotations

TOOL_NAMES: dict[str, frozenset[str]] = {
    "Bash": frozenset({"bash"}),
    "Read": frozenset({"read"}),
    "Edit": frozenset({"edit", "apply_patch"}),
    "Write": frozenset({"write"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"glob"}),
    "LS": frozenset({"list_dir"}),
    "WebFetch": frozenset({"web_fetch"}),
    "AskUserQuestion": frozenset({"ask_user"}),
    "TodoWrite": frozenset({"todo_write"}),
    "Task": frozenset({"task"}),
    "Agent": frozenset({"task"}),
    "Skill": frozenset({"skill"}),
    "BashOutput": frozenset({"bash_output"}),
    "KillShell": frozenset({"kill_shell"}),
}
"""The one table of tool names: each Claude Code tool name, and the claw tools that are that
tool (``apply_patch`` edits files, so it is an ``Edit``). Permission rules and hook matchers
both read it. A rule or matcher may also name a claw tool directly (``bash``, ``write``)."""

LOOKING_TOOLS = frozenset({"read", "grep", "glob", "list_dir"})
"""Tools that only look at the workspace: allowed in every mode unless a rule says otherwise.
A ``Read`` rule covers all of them, as Claude Code applies Read rules to Grep and Glob."""
EDIT_TOOLS = frozenset({"edit", "write", "apply_patch"})
"""Tools that change files: they ask in ``default``, run in ``acceptEdits``. An ``Edit`` rule
covers all of them, and a ``Read`` deny rule blocks them too."""
PATH_TOOLS = LOOKING_TOOLS | EDIT_TOOLS
"""Tools whose rule specifier is a path pattern."""

UNASKED_TOOLS = frozenset(
    {"ask_user", "todo_write", "recall", "task", "skill", "bash_output", "kill_shell"}
)
"""Chapter 20's tools that need no approval in any mode, as Claude Code's AskUserQuestion and
TodoWrite: asking the user, keeping the model's own list, reading its memory. A deny or ask
rule that names them still applies. Chapter 21's ``task`` (whose child's calls each pass the
gate) and ``skill`` (which reads only the skills' own folders) join them, and chapter 26's
``bash_output`` and ``kill_shell``, which only read or stop a job a ``bash`` call (asked about
like any other) started."""
MEMORY_TOOLS = frozenset({"remember"})
"""Chapter 20's tool that writes the memory later sessions read: the modes treat it as an
edit (it asks in ``default``, runs in ``acceptEdits``, is denied in ``plan``)."""

UNREAD_PATH_RULES = frozenset({"Write", "Glob", "NotebookEdit", "MultiEdit"})
"""Tool names Claude Code never consults a path rule for: it warns and ignores
``Write(docs/**)``; claw refuses it, so that nobody believes such a rule protects anything."""


def claude_code_name(name: str) -> str:
    """Claude Code's name for the claw tool ``name`` (``bash`` is ``Bash``); else ``name``."""
    for claude, tools in TOOL_NAMES.items():
        if name in tools:
            return claude
    return name
