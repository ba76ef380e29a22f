"""The system prompt: who claw is, how to use its tools, and where it is working.

The prompt is assembled from named sections, each a plain function of its inputs: identity,
tool guidance and environment. Each can be tested alone, and their order is the order of
stability, most stable first: identity never changes, the tools change when the tool set does,
and the environment (date, branch, ``git status``) changes from one session to the next. A
provider that caches a prompt's prefix reuses everything up to the first byte that differs.

The facts the environment section reports are *given* to it as an ``Environment`` value, never
looked up inside it: tests pass a fixed date and made-up git facts, and ``gather_environment``
alone asks the real world (the clock, ``platform``, ``git``).
"""

from __future__ import annotations

import datetime
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .instructions import git_could_find
from .types import CacheControl, DeveloperMessage, Message, SystemMessage, ToolDefinition

# --8<-- [start:facts]
MAX_STATUS_LINES = 10
"""The most ``git status --short`` lines the prompt shows; the rest are counted."""
GIT_TIMEOUT = 2.0
"""Seconds each ``git`` command may take before claw gives up on it."""


@dataclass(frozen=True)
class GitFacts:
    """What claw tells the model about the repository it works in."""

    branch: str | None
    """The current branch; ``None`` when unknown (a detached HEAD, or git failed)."""
    status: tuple[str, ...] | None
    """The lines of ``git status --short``, as git printed them; ``None`` when unknown."""


@dataclass(frozen=True)
class Environment:
    """The facts of the session the environment section reports, gathered once at its start."""

    working_directory: Path
    """The directory claw was started in; relative paths in tool calls start here."""
    platform: str
    """The operating system, as ``platform.system()`` names it: ``Linux``, ``Darwin``..."""
    today: datetime.date
    """The date the session started: the model's training data stops earlier."""
    git: GitFacts | None
    """The repository's facts, or ``None`` when the working directory is not in one."""
# --8<-- [end:facts]


# --8<-- [start:gather]
def run_git(arguments: Sequence[str], cwd: Path, timeout: float = GIT_TIMEOUT) -> str | None:
    """The standard output of ``git *arguments`` run in ``cwd``; ``None`` if it failed.

    A missing ``git``, a non-zero exit and a command slower than ``timeout`` seconds all give
    ``None``: the prompt says "unknown" rather than the agent failing to start.
    """
    try:
        done = subprocess.run(
            ["git", *arguments],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def gather_git_facts(cwd: Path, timeout: float = GIT_TIMEOUT) -> GitFacts | None:
    """Ask git about ``cwd``: ``None`` if it is not in a work tree (or git cannot say).

    git finds a repository only through a ``.git`` in ``cwd`` or a folder above it, or the one
    ``GIT_DIR`` names: with neither, the answer is known without starting git.
    """
    if not git_could_find(cwd):
        return None
    inside = run_git(["rev-parse", "--is-inside-work-tree"], cwd, timeout)
    if inside is None or inside.strip() != "true":
        return None
    branch = run_git(["branch", "--show-current"], cwd, timeout)
    status = run_git(["status", "--short"], cwd, timeout)
    return GitFacts(
        branch=(branch or "").strip() or None,
        status=None if status is None else tuple(status.splitlines()),
    )


def gather_environment(
    cwd: Path, *, today: datetime.date | None = None, timeout: float = GIT_TIMEOUT
) -> Environment:
    """The real facts of a session started in ``cwd``: the one function that looks them up."""
    cwd = cwd.resolve()
    return Environment(
        working_directory=cwd,
        platform=platform.system() or "unknown",
        today=today or datetime.date.today(),
        git=gather_git_facts(cwd, timeout),
    )
# --8<-- [end:gather]


def section(title: str, body: str) -> str:
    """One section of the prompt: a ``## title`` heading, a blank line, then ``body``.

    Blank lines around ``body`` are dropped, so sections join with exactly one blank line.
    """
    # region ch08: a Markdown heading, a blank line, the body without blank lines around it
    # more: f"## {title}\n\n{body.strip(chr(10))}"; strip only newlines, keep indentation
    return f"## {title}\n\n{body.strip(chr(10))}"
    # endregion


# --8<-- [start:identity]
IDENTITY = """\
You are claw, a coding agent working in the user's project on their own machine.
You help with software tasks: reading code, finding bugs, changing files and running
commands, through the tools you are given. Be concise and direct. Make the smallest change
that does the job, and say what you changed. When the request is unclear, ask."""


def identity_section() -> str:
    """Who the model is and how it should work: the same text in every session."""
    return section("Identity", IDENTITY)
# --8<-- [end:identity]


# --8<-- [start:tool-texts]
TOOL_GUIDANCE = """\
- Use a tool when it can settle a question; never guess what a file you can read says.
- Read a file before you change it.
- When a tool returns an error, read it and try something different, not the same call."""

NO_TOOLS = "No tools are available in this session: answer from the conversation alone."
# --8<-- [end:tool-texts]


def tool_section(tools: Sequence[ToolDefinition]) -> str:
    """How to use the tools, naming each one the model can call, in the order given.

    The tools' own descriptions travel in the request's ``tools``; this section adds the
    habits that apply to all of them. Without tools it says so, and gives no guidance.
    """
    # region ch08: name the tools in backticks, in order, then the guidance; or say there are none
    # more: "You can call these tools: `read`, `bash`." + "\n" + TOOL_GUIDANCE; else NO_TOOLS
    if not tools:
        return section("Tools", NO_TOOLS)
    names = ", ".join(f"`{tool.name}`" for tool in tools)
    return section("Tools", f"You can call these tools: {names}.\n{TOOL_GUIDANCE}")
    # endregion


# --8<-- [start:environment]
def capped_status(lines: Sequence[str], limit: int = MAX_STATUS_LINES) -> list[str]:
    """At most ``limit`` status lines, then ``... and N more`` if some were left out."""
    # region ch08: the first `limit` lines as they are; past the limit, one line counting the rest
    # more: lines[:limit] + [f"... and {len(lines) - limit} more"] only when len(lines) > limit
    shown = list(lines[:limit])
    if len(lines) > limit:
        shown.append(f"... and {len(lines) - limit} more")
    return shown
    # endregion


def environment_section(environment: Environment, max_status_lines: int = MAX_STATUS_LINES) -> str:
    """Where and when the model is working: directory, platform, date and git facts.

    One fact a line, ``Name: value``; outside a repository the git facts are one line,
    ``Git repository: no``.
    """
    # region ch08: one "Name: value" line per fact; git's lines only inside a repository
    # more: date.isoformat(); branch None -> "unknown"; status None/() -> "unknown"/"clean"
    lines = [
        f"Working directory: {environment.working_directory}",
        f"Platform: {environment.platform}",
        f"Today's date: {environment.today.isoformat()}",
    ]
    git = environment.git
    if git is None:
        lines.append("Git repository: no")
        return section("Environment", "\n".join(lines))
    lines.append("Git repository: yes")
    lines.append(f"Current branch: {git.branch or 'unknown'}")
    if git.status is None:
        lines.append("Git status: unknown")
    elif not git.status:
        lines.append("Git status: clean")
    else:
        lines.append("Git status (short):")
        lines += capped_status(git.status, max_status_lines)
    return section("Environment", "\n".join(lines))
    # endregion
# --8<-- [end:environment]


# --8<-- [start:system-prompt]
def system_prompt(environment: Environment, tools: Sequence[ToolDefinition]) -> str:
    """The whole system prompt: identity, tools, environment, most stable first."""
    # region ch08: the three sections, most stable first, one blank line between them
    # more: "\n\n".join([identity_section(), tool_section(tools), environment_section(...)])
    return "\n\n".join(
        [identity_section(), tool_section(tools), environment_section(environment)]
    )
    # endregion


def opening_messages(
    environment: Environment,
    tools: Sequence[ToolDefinition],
    instructions: DeveloperMessage | None = None,
    *,
    cache_control: CacheControl | None = None,
) -> list[Message]:
    """The messages every conversation starts with: the system prompt, then the instructions.

    ``instructions`` (chapter 8's project instructions) follow as they are, if there are any.
    ``cache_control``, if given, marks the end of each of the two as a cache breakpoint.
    """
    # region ch08: a SystemMessage with the prompt, then the developer message if there is one
    # more: with a breakpoint: DeveloperMessage(content=instructions.content, cache_control=...)
    messages: list[Message] = [
        SystemMessage(content=system_prompt(environment, tools), cache_control=cache_control)
    ]
    if instructions is not None:
        if cache_control is not None:
            instructions = DeveloperMessage(
                content=instructions.content, cache_control=cache_control
            )
        messages.append(instructions)
    return messages
    # endregion
# --8<-- [end:system-prompt]
