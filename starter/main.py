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

Chapter 17 layers the settings (``settings.py``: defaults, ``~/.claw/settings.json``, the
project's two files, ``CLAW_*`` variables, these options), counts what each run costs
(``cost.py``), keeps to ``--max-cost``, and prints a summary after each run; ``claw config``
shows the settings in force and, with ``--explain KEY``, where each value came from.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from .display import arguments_text, error_line, one_line, terminal_text
from .errors import ClawError
from .options import (
    EXIT_CODES,
    OneLineParser,
    add_app_arguments,
    add_session_arguments,
    add_settings_arguments,
    check_session_arguments,
    http_url,
    model_id,
    positive_int,
)
from .todo import Todo, if_written

# ``claw --help`` and a wrong option answer before the agent's modules load: the tools, the
# providers, the pydantic models, rich and prompt_toolkit cost most of claw's start-up (bench:
# terminal_app). So everything that runs a prompt is imported by the function that needs it.
if TYPE_CHECKING:
    from .checkpoints import Checkpoints
    from .configure import Costs
    from .context import ContextWindow
    from .events import Event, RunFinished
    from .guard import Guarded
    from .hooks import Hooks
    from .jobs import JobTable
    from .loop import Agent, Limits
    from .mcp.config import McpServers
    from .permissions import Approver
    from .providers.anthropic import AnthropicProvider
    from .providers.openrouter import OpenRouterProvider
    from .sandbox import Sandbox
    from .sessions import SessionRecorder
    from .settings import Settings
    from .terminal import ReadLine
    from .tools.ask import AskHandler

DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
"""The model ``claw`` uses when ``--model`` is not given."""

BASE_URL_VARIABLE = "CLAW_BASE_URL"
"""The environment variable that sets the server, like ``--base-url``."""

PROVIDERS = ("openrouter", "anthropic")
"""The APIs ``--provider`` chooses from: chapter 5b's OpenAI format, chapter 24's Messages API."""
PROVIDER_VARIABLE = "CLAW_PROVIDER"
"""The environment variable that sets the provider, like ``--provider``."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")
"""Chapter 13's ``Mode`` values. Named here, not imported, so that the command line of
chapter 12's claw works while chapters 13 to 16 are still being written (or do not import)."""


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line: a prompt, and optionally the model, the server and web access."""
    parser = OneLineParser(
        prog="claw",
        description="Run claw, a coding agent, on the current directory.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        help="what you want done (none: start a conversation; claw config: see the settings)",
    )
    parser.add_argument(
        "--model", type=model_id, help=f"an OpenRouter model id (default: {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--base-url",
        type=http_url,
        help=f"an OpenAI-compatible server (default: ${BASE_URL_VARIABLE} or OpenRouter)",
    )
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=os.environ.get(PROVIDER_VARIABLE, "openrouter"),
        help=f"whose API to speak (chapter 24; default: ${PROVIDER_VARIABLE} or openrouter)",
    )
    parser.add_argument(
        "--web", action="store_true", default=None, help="also give claw the web_fetch tool"
    )
    parser.add_argument(
        "--max-cost", type=Decimal, help="end the run before the session spends more (US dollars)"
    )
    parser.add_argument(
        "--summary",
        choices=("line", "json", "off"),
        help="the summary after each run: one line (default), one JSON object, or none",
    )
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        help="end the run after this many model calls",
    )
    parser.add_argument(
        "--unguarded",
        action="store_true",
        help="no permission rules, safety checks, hooks or plan mode (chapter 12's claw)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
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
    add_app_arguments(parser)  # chapter 19: -p, --output-format
    add_session_arguments(parser)  # chapter 22: --continue, --resume, --fork-session
    add_settings_arguments(parser)  # chapter 17: --allowed-tools, --disallowed-tools, --settings
    arguments = parser.parse_args(argv)
    check_session_arguments(parser, arguments)
    return arguments


def anthropic_provider(model: str, base_url: str) -> AnthropicProvider:
    """Chapter 24's provider for ``--provider anthropic``: Anthropic's model ids and URL.

    The key comes from ``ANTHROPIC_API_KEY``; an OpenRouter model id (``anthropic/claude-...``)
    loses its vendor prefix, and OpenRouter's URL, the default, becomes Anthropic's.
    """
    from .providers.anthropic import ANTHROPIC_URL, AnthropicProvider
    from .providers.anthropic import API_KEY_VARIABLE as ANTHROPIC_KEY_VARIABLE
    from .providers.openrouter import OPENROUTER_URL
    from .secrets_env import secret

    if base_url.rstrip("/") == OPENROUTER_URL:
        base_url = ANTHROPIC_URL
    model = model.removeprefix("anthropic/")
    if model == DEFAULT_MODEL.removeprefix("anthropic/"):
        model = "claude-sonnet-4-5"  # OpenRouter's claude-sonnet-4.5, in Anthropic's spelling
    return AnthropicProvider(model, base_url=base_url, api_key=secret(ANTHROPIC_KEY_VARIABLE))


def show(event: Event, out: TextIO) -> None:
    """Print ``event`` for a person at a terminal: text as it streams, a line per tool step."""
    from .events import AssistantText, Compacted, RunFinished, ToolCalled, ToolResult
    from .streaming import TextDelta

    if isinstance(event, TextDelta):
        out.write(terminal_text(event.text))
    elif isinstance(event, AssistantText):
        out.write("\n")
    elif isinstance(event, ToolCalled):
        out.write(f"→ {event.name}({one_line(arguments_text(event.arguments))})\n")
    elif isinstance(event, ToolResult):
        mark = "✗" if event.is_error else "✓"
        out.write(f"  {mark} {event.name}: {one_line(event.output)}\n")
    elif isinstance(event, Compacted):
        out.write(
            f"[context compacted: {event.tokens_before:,} → {event.tokens_after:,} tokens"
            + (f", {event.removed} messages summarised" if event.removed else "")
            + (f", {event.trimmed} tool results trimmed" if event.trimmed else "")
            + "]\n"
        )
    elif isinstance(event, RunFinished):
        out.write(f"[{event.reason} after {event.steps} step(s)]\n")
    out.flush()


def build_agent(
    provider: OpenRouterProvider | AnthropicProvider,
    cwd: Path,
    *,
    web: bool = False,
    limits: Limits | None = None,
    instructions: bool = True,
    warn: Callable[[str], None] | None = None,
    ask: AskHandler | None = None,
    user_file: Path | None = None,
    jobs: JobTable | None = None,
    sandbox: Sandbox | None = None,
) -> Agent:
    """The agent ``claw`` runs: claw's tools in ``cwd``, chapter 8's prompt and instructions.

    ``user_file`` is the user's own instruction file (``~/.claw/AGENTS.md``), read first;
    ``instructions=False`` leaves the project's instruction files out (an untrusted folder),
    but not the user's; ``warn`` is told about an instruction file cut or left out. Chapter
    20's tools come too: ``ask_user`` asks through ``ask`` (default: a ``TerminalAsker`` on
    stderr), the memory is ``~/.claw/memory.db`` seen from ``cwd``, and the todo list's
    changes go to the observers. With ``jobs`` (chapter 26), ``bash`` can run a command in the
    background as a job of that table, ``bash_output`` and ``kill_shell`` come too, and the
    agent tells the model of each job that ended before its next request. With ``sandbox``
    (chapter 28), ``bash`` runs each command in it, background jobs included.
    """
    from .instructions import format_instructions, load_instructions, read_instruction_file
    from .loop import Limits
    from .memory import MEMORY_FILE, MemoryStore
    from .preflight import PreflightAgent
    from .private import claw_home
    from .prompt import gather_environment, system_prompt
    from .registry import assistant_tools, default_tools
    from .skills import SkillTool, discover_skills, skill_roots, skills_section
    from .subagents import TaskTool
    from .tools.ask import TerminalAsker
    from .tools.todo_write import TodoList
    from .types import DeveloperMessage

    tools = default_tools(cwd, web=web)
    if sandbox is not None:  # chapter 28: before the jobs, so that they are sandboxed too
        from .sandbox import with_sandbox

        tools = with_sandbox(tools, sandbox)
    if jobs is not None:  # chapter 26: bash with run_in_background, bash_output, kill_shell
        from .jobs import with_background

        tools = with_background(tools, jobs)
    todos = TodoList()
    memory = MemoryStore(claw_home() / MEMORY_FILE, project=cwd)
    for tool in assistant_tools(ask or TerminalAsker(), memory, todos):
        tools.add(tool)
    # Chapter 21: the task tool, and the skills (the project's only in a trusted folder).
    task = TaskTool()
    tools.add(task)
    roots = [root for root in skill_roots(cwd, project=instructions) if root.is_dir()]
    skills = discover_skills(roots, warn=warn) if roots else []
    if skills:
        tools.add(SkillTool(skills))
    found = load_instructions(cwd, user_file, warn=warn) if instructions else None
    if not instructions and user_file is not None and user_file.is_file():
        own = read_instruction_file(user_file)
        if own.note is not None and warn is not None:
            warn(own.note)
        found = DeveloperMessage(content=format_instructions([own]))
    system = system_prompt(gather_environment(cwd), tools.definitions())
    agent = PreflightAgent(
        provider,
        tools,
        system="\n\n".join([system, skills_section(skills)]) if skills else system,
        context=[found] if found is not None else [],
        limits=limits or Limits(),
        concurrent=True,
    )
    todos.subscribe(agent.sink.emit)
    task.bind(agent)
    if jobs is not None:
        agent.notices.append(jobs.notices)
    return agent


NO_TERMINAL_FOR_THE_PLAN = (
    "the plan waits for your approval, but there is no terminal to ask; run claw at a terminal "
    "to approve it"
)
"""Said on stderr when plan mode presents a plan to a one-shot run without a terminal."""

GUARD_CHAPTERS = frozenset({"ch13", "ch14", "ch15", "ch16"})
"""The chapters ``guard`` uses, which ``--unguarded`` leaves out."""


@dataclass
class Claw:
    """What ``open_claw`` sets up: the agent, chapters 13-16 around it, settings and costs."""

    agent: Agent
    guarded: Guarded | None
    """Chapters 13-16 (permissions, safety, hooks, plan mode); ``None`` with ``--unguarded``."""
    settings: Settings
    costs: Costs | None
    """Chapter 17's tracker and budget; ``None`` while chapter 17 is not written."""
    context: ContextWindow | None = None
    """Chapter 18's window keeper; ``None`` when no window is known (or 18 is not written)."""
    recorder: SessionRecorder | None = None
    """Chapter 22's transcript writer; ``None`` while chapter 22 is not written."""
    jobs: JobTable | None = None
    """Chapter 26's background jobs, every one stopped when the block ends."""
    checkpoints: Checkpoints | None = None
    """Chapter 27's checkpoints, beside the session's transcript; ``None`` without a session."""


@contextlib.asynccontextmanager
async def open_claw(
    arguments: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    read_line: ReadLine | None = None,
    approve: Approver | None = None,
    ask: AskHandler | None = None,
) -> AsyncIterator[Claw]:
    """The agent ``claw`` runs for ``arguments``, open for as long as the block lasts.

    First, if the folder brings settings or instructions of its own, claw makes sure it is
    trusted (``trust.decide_trust``); then it reads the settings (chapter 17: a wrong layer
    stops claw here, before any request), opens the provider, builds the agent, counts its
    costs, keeps it inside its window (chapter 18) and guards it (chapters 13-16).
    ``approve`` answers the permission questions (default: at the terminal, on ``out``), and
    ``ask`` the model's questions (default: at the terminal, on ``err``).
    """
    from .configure import USER_INSTRUCTIONS, configure, rule_checker, start_context, start_costs
    from .jobs import JobTable
    from .loop import Limits
    from .private import claw_home
    from .providers.openrouter import API_KEY_VARIABLE, OpenRouterProvider
    from .secrets_env import secret
    from .terminal import read_stdin_line
    from .tools.ask import TerminalAsker
    from .trust import decide_trust

    cwd = Path.cwd()
    key = secret(API_KEY_VARIABLE)  # hidden by ``cli``, or still in the environment
    trusted = await decide_trust(
        cwd,
        flag=arguments.trust_project,
        read_line=read_line or read_stdin_line,
        out=out,
        err=err,
    )
    checker = None if arguments.unguarded else rule_checker()  # chapter 13's rule syntax
    configured = configure(arguments, cwd, trusted=trusted, err=err, check_rule=checker)
    settings = configured.settings
    provider: OpenRouterProvider | AnthropicProvider
    if arguments.provider == "anthropic":
        provider = anthropic_provider(settings.model, settings.base_url)
    else:
        provider = OpenRouterProvider(settings.model, base_url=settings.base_url, api_key=key)
    jobs = JobTable()  # chapter 26: stopped in the finally below, however claw exits
    sandbox = None
    if settings.sandbox.enabled:  # chapter 28: probed once; says here if it cannot run
        from .sandbox import Sandbox, sandbox_config

        config = sandbox_config(settings.sandbox, cwd, Path.home())
        sandbox = Sandbox(config, lambda line: print(terminal_text(line), file=err))
    async with provider:
        limits = Limits() if settings.max_steps is None else Limits(settings.max_steps)
        agent = build_agent(
            provider,
            cwd,
            web=settings.web,
            limits=limits,
            instructions=trusted,
            warn=lambda note: print(f"claw: warning: {terminal_text(note)}", file=err),
            ask=ask or TerminalAsker(err, read_line),
            user_file=claw_home() / USER_INSTRUCTIONS,
            jobs=jobs,
            sandbox=sandbox,
        )
        costs, context = None, None
        if configured.loaded is not None:
            costs = await start_costs(agent, settings, err=err)
            context = start_context(agent, settings, provider, costs)
        from .session_start import open_session  # chapter 22

        recorder = await open_session(arguments, agent, cwd, read_line or read_stdin_line, err)
        checkpoints = None
        if recorder is not None:
            agent.sink.add(recorder)
            from .checkpoints import start_checkpoints  # chapter 27

            checkpoints = start_checkpoints(agent, recorder, cwd, err)
        guarded: Guarded | None = None
        if not arguments.unguarded:
            # Chapters 13-16 are imported only here: with --unguarded, claw runs (and chapter
            # 12's tests pass) even while one of those modules does not import yet.
            from .approvers import TerminalApprover
            from .guard import guard
            from .permissions import Mode

            mode = Mode(settings.permissions.default_mode or "default")
            layered = settings if configured.loaded is not None else None
            guarded = guard(
                agent,
                cwd,
                mode=mode,
                approve=approve or TerminalApprover(out, read_line),
                trusted=trusted,
                settings=layered,
            )
            if sandbox is not None:  # chapter 28: hooks run in it; bash may need no question
                from .sandbox import auto_allowing

                auto_allowing(guarded.permissions, sandbox)
                if guarded.hooks is not None:
                    guarded.hooks.sandbox = sandbox
            if recorder is not None:  # chapter 22: "always, this session" lasts the session
                from .session_start import keep_session_rules

                keep_session_rules(recorder, agent, guarded.permissions)
                if guarded.hooks is not None:  # a hook is told the session and its transcript
                    transcript = recorder.writer.path
                    guarded.hooks.session_id = transcript.stem
                    guarded.hooks.transcript_path = str(transcript)
        servers: McpServers | None = None
        try:
            if trusted:  # an untrusted folder's .mcp.json starts nothing, even with --mcp
                servers = await start_mcp_servers(cwd, agent, arguments.mcp, err)  # chapter 23
            yield Claw(
                agent, guarded, settings, costs, context, recorder, jobs, checkpoints
            )
        finally:
            await jobs.close()
            if sandbox is not None:
                await sandbox.close()
            if servers is not None:
                await servers.close()
            if recorder is not None:
                recorder.writer.close()


def print_summary(claw: Claw, finished: RunFinished, seconds: float, err: TextIO) -> None:
    """Chapter 17's summary of one run on ``err``: a line, JSON, or nothing, as set."""
    from .cost import RunSummary

    settings, costs = claw.settings, claw.costs
    if costs is None or settings.summary == "off":
        return
    summary = RunSummary(finished, costs.tracker.last_run, settings.model, seconds)
    print(summary.json() if settings.summary == "json" else summary.line(), file=err)


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
    the user's words. ``read_line`` reads the user's answers (default: standard input, and
    only while it is a terminal: without one, each approval question is a no, told on ``err``).
    """
    import asyncio

    from .agent import Finish

    err = err or sys.stderr
    from .terminal import interactive

    # Nobody is at a terminal to answer (stdin is a pipe or a file): each question is a no, told
    # on ``err`` with how to allow the call; an answer is never read from piped data (ch19).
    approve: Approver | None = None
    if read_line is None and not interactive():
        from .approvers import NoTerminalApprover

        approve = NoTerminalApprover(err)
    async with open_claw(
        arguments, out=out, err=err, read_line=read_line, approve=approve
    ) as claw:
        agent, guarded = claw.agent, claw.guarded
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, agent.cancel)
        hooks = guarded.hooks if guarded is not None else None
        try:
            prompt: str | None = arguments.prompt
            while prompt is not None:
                started = time.monotonic()
                finished = await run_once(agent, hooks, prompt, out, err)
                if finished is not None:
                    print_summary(claw, finished, time.monotonic() - started, err)
                if finished is None or finished.reason != Finish.PLAN_PENDING:
                    return finished
                assert guarded is not None, "only plan mode ends a run plan_pending"
                if approve is not None:  # no terminal: the plan is shown and stays pending
                    out.write(f"\nThe plan:\n{terminal_text(str(guarded.plan.plan))}\n")
                    err.write(f"claw: {NO_TERMINAL_FOR_THE_PLAN}\n")
                    return finished
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

    specs = if_written("ch23", lambda: project_servers(cwd, enabled=enabled, warn=warn))
    if isinstance(specs, Todo):
        if enabled:
            raise specs
        warn(".mcp.json left alone: claw's MCP client (chapter 23) is not written yet")
        return None
    servers = McpServers(cwd, warn)
    await servers.start(specs, agent.tools)
    return servers


async def run_once(
    agent: Agent, hooks: Hooks | None, prompt: str, out: TextIO, err: TextIO
) -> RunFinished | None:
    """One run of ``prompt``, with ``hooks`` around it; their warnings go to ``err``."""
    from .events import RunFinished
    from .hooks import PromptBlocked, run_with_hooks  # chapter 15, as in ``run``

    events = cast(  # both are async generators: they have aclose()
        "AsyncGenerator[Event | PromptBlocked, None]",
        run_with_hooks(agent, hooks, prompt) if hooks is not None else agent.events(prompt),
    )
    warned = 0
    finished: RunFinished | None = None
    # aclosing: a write that fails (`claw "..." | head -1`) closes the run's generators here,
    # in this task, and not later while asyncio shuts down (which prints their tracebacks).
    async with contextlib.aclosing(events):
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


def main(
    argv: Sequence[str] | None = None, *, prepare: Callable[[], object] | None = None
) -> int:
    """The ``claw`` command: 0 when the run ended ``done``, 1 otherwise, 2 for a usage error.

    130 when Ctrl-C stopped claw before a run began (at the trust question, say). A stub of
    yours that claw needs raises ``Todo`` out of here (``cli`` says it politely). ``prepare``
    runs once the command line is known to be good, before anything else (``cli`` hides the
    secrets there).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    # chapter 17's claw config and chapter 25's claw eval read their own options
    subcommand = argv[0] if argv[:1] in (["config"], ["eval"]) else None
    arguments = None if subcommand else parse_arguments(argv)
    if prepare is not None:
        prepare()
    import asyncio

    from .configure import config_main
    from .terminal import at_terminal, piped_now

    if subcommand == "config":  # chapter 17: claw config [--explain KEY]
        return config_main(argv[1:])
    if subcommand == "eval":  # chapter 25: claw eval [TASKS...] [--model ...] [--report ...]
        from .evals.command import main as eval_main

        return eval_main(argv[1:])
    assert arguments is not None
    app = arguments.print or arguments.prompt is None or arguments.output_format != "text"
    if app or at_terminal():
        from .app import run_app  # chapter 19: print mode, or the REPL at a terminal

        return run_app(arguments)
    if piped_now(sys.stdin):  # chapter 19: what was piped in is context, as with -p
        from .printmode import UsageError, read_prompt

        try:
            prompt = if_written("ch19", lambda: read_prompt(arguments.prompt, sys.stdin))
            if not isinstance(prompt, Todo):  # else the prompt alone, as in chapter 12
                arguments.prompt = prompt
        except UsageError as error:  # a blank prompt
            print(f"claw: error: {error} (see claw --help)", file=sys.stderr)
            return 2
    try:
        finished = asyncio.run(run(arguments, sys.stdout))
    except ClawError as error:
        print(error_line(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before a run began: at the trust question, say
        print(file=sys.stderr)
        return 130
    return 0 if finished is not None and finished.reason == "done" else 1


def cli() -> None:
    """The console script: ``main``, with a stub you have not written yet told in one line.

    First the secrets leave the environment (``secrets_env``): no command claw runs can read
    them, from its own environment or from claw's. That happens once the command line is
    parsed: ``claw --help`` and a wrong option end before the tools' modules load.
    """

    def hide() -> None:
        from .secrets_env import hide_secrets

        hide_secrets()

    try:
        sys.exit(main(prepare=hide))
    except BrokenPipeError:  # chapter 19: `claw ... | head -1` closed stdout early
        quiet_broken_pipe()
    except Todo as todo:
        print(f"claw: this needs code you have not written yet: {todo}", file=sys.stderr)
        if todo.chapter in GUARD_CHAPTERS:
            print("claw: --unguarded runs claw without chapters 13 to 16", file=sys.stderr)
        sys.exit(1)


def quiet_broken_pipe() -> None:
    """End quietly after stdout's reader went away: no traceback, no second error at exit.

    Python flushes stdout once more when it exits, which would fail again; pointing stdout at
    ``/dev/null`` first makes that flush harmless. The status is 141 (128 + SIGPIPE), what a
    shell reports for a command the closed pipe ended.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


if __name__ == "__main__":
    cli()
