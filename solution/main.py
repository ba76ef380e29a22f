"""``claw``: run your agent from a terminal, on the repository you are in.

    claw "why does test_parse fail? fix it" --model anthropic/claude-sonnet-4.5

It builds the agent of chapters 7, 8 and 12: an ``OpenRouterProvider`` for ``--model``,
``default_tools`` rooted in the current directory, chapter 8's system prompt and project
instructions. In front of the tools it puts chapters 13 to 16 (``guard``): the permission
rules, which ask at the terminal, the safety checks, the project's hooks, and, with
``--permission-mode plan``, plan mode; ``--unguarded`` leaves them out, as chapter 12's claw
did. Then it runs the prompt and prints what happens as it
happens: the model's text as it streams, and one line for each tool call and each result.
Ctrl-C cancels the run (the tool in flight is stopped, the history stays valid) instead of
killing the process.

The key comes from ``OPENROUTER_API_KEY``. ``--base-url`` (or ``CLAW_BASE_URL``) points claw at
another OpenAI-compatible server, such as a local Ollama, or the loopback server of the tests;
the key never goes over plain ``http`` except to this machine (``OpenRouterProvider``).

The settings and instruction files a repository brings are used only once you trust the
folder (``trust.py``): the first time, claw asks; ``--trust-project`` trusts it for one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .agent import Finish
from .display import arguments_text, one_line, terminal_text
from .errors import ClawError
from .events import AssistantText, Event, RunFinished, ToolCalled, ToolResult
from .instructions import load_instructions
from .loop import Agent, Limits
from .memory import MEMORY_FILE, MemoryStore
from .prompt import gather_environment, system_prompt
from .providers.openrouter import API_KEY_VARIABLE, OPENROUTER_URL, OpenRouterProvider
from .registry import assistant_tools, default_tools
from .secrets_env import hide_secrets, secret
from .streaming import TextDelta
from .terminal import read_stdin_line
from .todo import Todo
from .tools.ask import AskHandler, TerminalAsker
from .tools.todo_write import TodoList
from .trust import decide_trust

if TYPE_CHECKING:
    from .guard import Guarded
    from .hooks import Hooks
    from .mcp.config import McpServers
    from .terminal import ReadLine

DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
"""The model ``claw`` uses when ``--model`` is not given."""

BASE_URL_VARIABLE = "CLAW_BASE_URL"
"""The environment variable that sets the server, like ``--base-url``."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")
"""Chapter 13's ``Mode`` values. Named here, not imported, so that the command line of
chapter 12's claw works while chapters 13 to 16 are still being written (or do not import)."""


# --8<-- [start:arguments]
def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line: a prompt, and optionally the model, the server and web access."""
    parser = argparse.ArgumentParser(
        prog="claw", description="Run claw, a coding agent, on the current directory."
    )
    parser.add_argument("prompt", help="what you want done")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="an OpenRouter model id")
    parser.add_argument(
        "--base-url",
        default=os.environ.get(BASE_URL_VARIABLE, OPENROUTER_URL),
        help=f"an OpenAI-compatible server (default: ${BASE_URL_VARIABLE} or OpenRouter)",
    )
    parser.add_argument("--web", action="store_true", help="also give claw the web_fetch tool")
    parser.add_argument(
        "--max-steps", type=int, default=None, help="end the run after this many model calls"
    )
    parser.add_argument(
        "--unguarded",
        action="store_true",
        help="no permission rules, safety checks, hooks or plan mode (chapter 12's claw)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default="default",
        help="what runs without asking (chapter 13); plan: plan first, change nothing (chapter 16)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="use this folder's settings, hooks and instructions in this run, without asking",
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="start the MCP servers of this folder's .mcp.json in this run (chapter 23)",
    )
    return parser.parse_args(argv)
# --8<-- [end:arguments]


# --8<-- [start:show]
def show(event: Event, out: TextIO) -> None:
    """Print ``event`` for a person at a terminal: text as it streams, a line per tool step."""
    if isinstance(event, TextDelta):
        out.write(terminal_text(event.text))
    elif isinstance(event, AssistantText):
        out.write("\n")
    elif isinstance(event, ToolCalled):
        out.write(f"→ {event.name}({one_line(arguments_text(event.arguments))})\n")
    elif isinstance(event, ToolResult):
        mark = "✗" if event.is_error else "✓"
        out.write(f"  {mark} {event.name}: {one_line(event.output)}\n")
    elif isinstance(event, RunFinished):
        out.write(f"[{event.reason} after {event.steps} step(s)]\n")
    out.flush()
# --8<-- [end:show]


# --8<-- [start:build]
def build_agent(
    provider: OpenRouterProvider,
    cwd: Path,
    *,
    web: bool = False,
    limits: Limits | None = None,
    instructions: bool = True,
    warn: Callable[[str], None] | None = None,
    ask: AskHandler | None = None,
) -> Agent:
    """The agent ``claw`` runs: claw's tools in ``cwd``, chapter 8's prompt and instructions.

    ``instructions=False`` leaves the project's instruction files out (an untrusted folder);
    ``warn`` is told about an instruction file cut or left out. Chapter 20's tools come too:
    ``ask_user`` asks through ``ask`` (default: a ``TerminalAsker`` on stderr), the memory is
    ``~/.claw/memory.db`` seen from ``cwd``, and the todo list's changes go to the observers.
    """
    tools = default_tools(cwd, web=web)
    todos = TodoList()
    memory = MemoryStore(Path.home() / MEMORY_FILE, project=cwd)
    for tool in assistant_tools(ask or TerminalAsker(), memory, todos):
        tools.add(tool)
    found = load_instructions(cwd, warn=warn) if instructions else None
    agent = Agent(
        provider,
        tools,
        system=system_prompt(gather_environment(cwd), tools.definitions()),
        context=[found] if found is not None else [],
        limits=limits or Limits(),
        concurrent=True,
    )
    todos.subscribe(agent.sink.emit)
    return agent
# --8<-- [end:build]


# --8<-- [start:run]
GUARD_CHAPTERS = frozenset({"ch13", "ch14", "ch15", "ch16"})
"""The chapters ``guard`` uses, which ``--unguarded`` leaves out."""


async def run(
    arguments: argparse.Namespace,
    out: TextIO,
    err: TextIO | None = None,
    read_line: ReadLine | None = None,
) -> RunFinished | None:
    """Run the prompt to the end, printing every event; Ctrl-C cancels the run.

    Returns how the last run finished, or ``None`` when a hook blocked the prompt. First,
    if the folder brings settings or instructions of its own, claw makes sure it is trusted
    (``trust.decide_trust``). In plan mode, a presented plan is shown and the user is asked to
    approve it; an approved plan is carried out, a rejected one goes back to the model with
    the user's words. ``read_line`` reads the user's answers (default: standard input).
    """
    cwd = Path.cwd()
    err = err or sys.stderr
    key = secret(API_KEY_VARIABLE)  # hidden by ``cli``, or still in the environment
    async with OpenRouterProvider(
        arguments.model, base_url=arguments.base_url, api_key=key
    ) as provider:
        trusted = await decide_trust(
            cwd,
            flag=arguments.trust_project,
            read_line=read_line or read_stdin_line,
            out=out,
            err=err,
        )
        limits = Limits() if arguments.max_steps is None else Limits(arguments.max_steps)
        agent = build_agent(
            provider,
            cwd,
            web=arguments.web,
            limits=limits,
            instructions=trusted,
            warn=lambda note: print(f"claw: warning: {terminal_text(note)}", file=err),
            ask=TerminalAsker(err, read_line),
        )
        servers: McpServers | None = None
        guarded: Guarded | None = None
        if not arguments.unguarded:
            # Chapters 13-16 are imported only here: with --unguarded, claw runs (and chapter
            # 12's tests pass) even while one of those modules does not import yet.
            from .guard import TerminalApprover, guard
            from .permissions import Mode

            mode = Mode(arguments.permission_mode)
            approve = TerminalApprover(out, read_line)
            guarded = guard(agent, cwd, mode=mode, approve=approve, trusted=trusted)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, agent.cancel)
        hooks = guarded.hooks if guarded is not None else None
        try:
            servers = await start_mcp_servers(cwd, agent, arguments.mcp, err)
            prompt: str | None = arguments.prompt
            while prompt is not None:
                finished = await run_once(agent, hooks, prompt, out, err)
                if finished is None or finished.reason != Finish.PLAN_PENDING:
                    return finished
                assert guarded is not None, "only plan mode ends a run plan_pending"
                # No run to cancel while the user reads the plan: Ctrl-C stops the question.
                asking = asyncio.ensure_future(guarded.ask_about_plan(out, read_line))
                loop.add_signal_handler(signal.SIGINT, asking.cancel)
                try:
                    prompt = await asking
                except asyncio.CancelledError:
                    this = asyncio.current_task()
                    if this is not None and this.cancelling():
                        raise  # this run was cancelled from outside, not the question by Ctrl-C
                    out.write("\n")
                    prompt = None
                finally:
                    loop.add_signal_handler(signal.SIGINT, agent.cancel)
            return finished
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if servers is not None:
                await servers.close()


async def start_mcp_servers(
    cwd: Path, agent: Agent, enabled: bool, err: TextIO
) -> McpServers | None:
    """Chapter 23: start the servers of ``cwd/.mcp.json`` if the user enabled them (``--mcp``).

    Their tools join the agent's. Without a ``.mcp.json`` and ``--mcp``, chapter 23's code is
    not even imported; with a ``.mcp.json`` but no ``--mcp``, an unwritten chapter 23 is a
    warning: claw runs while that chapter is unwritten.
    """
    if not enabled and not (cwd / ".mcp.json").exists():
        return None
    from .mcp.config import McpServers, project_servers

    def warn(note: str) -> None:
        print(f"claw: warning: {terminal_text(note)}", file=err)

    try:
        specs = project_servers(cwd, enabled=enabled, warn=warn)
    except Todo:
        if enabled:
            raise
        warn(".mcp.json left alone: claw's MCP client (chapter 23) is not written yet")
        return None
    servers = McpServers(cwd, warn)
    await servers.start(specs, agent.tools)
    return servers


async def run_once(
    agent: Agent, hooks: Hooks | None, prompt: str, out: TextIO, err: TextIO
) -> RunFinished | None:
    """One run of ``prompt``, with ``hooks`` around it; their warnings go to ``err``."""
    from .hooks import PromptBlocked, run_with_hooks  # chapter 15, as in ``run``

    events = run_with_hooks(agent, hooks, prompt) if hooks is not None else agent.events(prompt)
    warned = 0
    finished: RunFinished | None = None
    async for event in events:
        if isinstance(event, PromptBlocked):
            reason = terminal_text(event.reason)
            out.write(f"[the prompt was blocked by a UserPromptSubmit hook: {reason}]\n")
            return None
        show(event, out)
        for warning in hooks.warnings[warned:] if hooks is not None else []:
            err.write(f"claw: warning: {terminal_text(warning)}\n")
            warned += 1
        if isinstance(event, RunFinished):
            finished = event
    assert finished is not None, "events() always ends with RunFinished"
    return finished


def main(argv: Sequence[str] | None = None) -> int:
    """The ``claw`` command: 0 when the run ended ``done``, 1 otherwise, 2 for a usage error.

    130 when Ctrl-C stopped claw before a run began (at the trust question, say). A stub of
    yours that claw needs raises ``Todo`` out of here (``cli`` says it politely).
    """
    arguments = parse_arguments(argv)
    try:
        finished = asyncio.run(run(arguments, sys.stdout))
    except ClawError as error:
        print(f"claw: {terminal_text(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before a run began: at the trust question, say
        print(file=sys.stderr)
        return 130
    return 0 if finished is not None and finished.reason == "done" else 1


def cli() -> None:
    """The console script: ``main``, with a stub you have not written yet told in one line.

    First the secrets leave the environment (``secrets_env``): no command claw runs can read
    them, from its own environment or from claw's.
    """
    try:
        hide_secrets()
        sys.exit(main())
    except Todo as todo:
        print(f"claw: this needs code you have not written yet: {todo}", file=sys.stderr)
        if todo.chapter in GUARD_CHAPTERS:
            print("claw: --unguarded runs claw without chapters 13 to 16", file=sys.stderr)
        sys.exit(1)
# --8<-- [end:run]


if __name__ == "__main__":
    cli()
