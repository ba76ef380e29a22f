"""The composition root: one place that builds claw, for every front door.

``open_claw`` reads the layered settings (chapter 17) for the command line it is given and
builds, in one pass, what a run needs: the provider (chapter 7, or chapter 24's with
``--provider anthropic``), the agent with claw's tools and chapter 8's prompt
(``build_agent``), chapters 13 to 16 in front of the tools (``guard``; ``--unguarded`` leaves them
out), the costs and the context window (17, 18), the session recorder (22), the MCP servers
(23), skills and subagents (21), background jobs (26), checkpoints (27) and the sandbox (28).
The caller supplies what differs between front doors: who answers permission questions
(``approve``), who answers the model's questions (``ask``) and where the words go (``out``,
``err``). ``Claw.run`` is the one loop that runs a prompt with the hooks around it and hands each
event to the front door's ``show``.

The one-shot command and print mode (``main.py``, ``app.py``), the REPL (``repl.py``), the SDK,
the editor's agent and ``claw eval`` all open claw here; nothing here imports them.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from .display import terminal_text, warner
from .options import DEFAULT_MODEL
from .todo import Todo, if_written

if TYPE_CHECKING:
    from .checkpoints import Checkpoints
    from .configure import Costs
    from .context import ContextWindow
    from .events import Event, RunFinished
    from .guard import Guarded
    from .hooks import PromptBlocked
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

PlanAnswer = Callable[["Guarded"], Awaitable[str | None]]
"""A front door's way to ask about a presented plan: the next prompt, or ``None`` to stop."""


def anthropic_provider(model: str, base_url: str) -> AnthropicProvider:
    """The provider for ``--provider anthropic`` (chapter 24), with Anthropic's model ids and URL.

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

    async def run(
        self,
        prompt: str,
        show: Callable[[Event], None],
        *,
        warn: Callable[[str], object] | None = None,
        plan: PlanAnswer | None = None,
        finished_run: Callable[[RunFinished, float], None] | None = None,
    ) -> RunFinished | PromptBlocked:
        """``run_prompt`` for this claw's agent and its chapters 13-16."""
        return await run_prompt(
            self.agent, self.guarded, prompt, show, warn=warn, plan=plan, finished_run=finished_run
        )

    def summary(self, finished: RunFinished, seconds: float) -> str | None:
        """The summary of one run (chapter 17): a line, JSON, or ``None`` (off, or no costs)."""
        from .cost import RunSummary

        settings, costs = self.settings, self.costs
        if costs is None or settings.summary == "off":
            return None
        summary = RunSummary(finished, costs.tracker.last_run, settings.model, seconds)
        return summary.json() if settings.summary == "json" else summary.line()


async def run_prompt(
    agent: Agent,
    guarded: Guarded | None,
    prompt: str,
    show: Callable[[Event], None],
    *,
    warn: Callable[[str], object] | None = None,
    plan: PlanAnswer | None = None,
    finished_run: Callable[[RunFinished, float], None] | None = None,
) -> RunFinished | PromptBlocked:
    """Run ``prompt`` with ``guarded``'s hooks around it: each event to ``show``; how it ended.

    A ``PromptBlocked`` when a UserPromptSubmit hook refused the prompt (the front door says
    so in its own words). Each hook warning goes to ``warn``, and each run's end, with its
    seconds, to ``finished_run``. In plan mode, a run that ends ``plan_pending`` asks
    ``plan`` for the next prompt (the approved plan, or the user's feedback) and runs it;
    without ``plan``, or when it answers ``None``, the pending run is the result.
    """
    from .agent import Finish
    from .events import RunFinished
    from .hooks import PromptBlocked, run_with_hooks  # chapter 15

    hooks = guarded.hooks if guarded is not None else None
    while True:
        started = time.monotonic()
        events = cast(  # both are async generators: they have aclose()
            "AsyncGenerator[Event | PromptBlocked, None]",
            run_with_hooks(agent, hooks, prompt) if hooks is not None else agent.events(prompt),
        )
        warned = 0
        finished: RunFinished | None = None
        # aclosing: a write that fails (`claw "..." | head -1`) closes the run's generators
        # here, in this task, and not later while asyncio shuts down (which prints their
        # tracebacks).
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, PromptBlocked):
                    return event
                show(event)
                for warning in hooks.warnings[warned:] if hooks is not None else []:
                    if warn is not None:
                        warn(warning)
                    warned += 1
                if isinstance(event, RunFinished):
                    finished = event
        assert finished is not None, "events() always ends with RunFinished"
        if finished_run is not None:
            finished_run(finished, time.monotonic() - started)
        next_prompt = None
        if finished.reason == Finish.PLAN_PENDING and guarded is not None and plan is not None:
            next_prompt = await plan(guarded)
        if not next_prompt:
            return finished
        prompt = next_prompt


@contextlib.asynccontextmanager
async def open_claw(
    arguments: argparse.Namespace,
    *,
    out: TextIO,
    err: TextIO,
    read_line: ReadLine | None = None,
    approve: Approver | None = None,
    ask: AskHandler | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[Claw]:
    """The agent ``claw`` runs for ``arguments``, open for as long as the block lasts.

    First, if the folder brings settings or instructions of its own, claw makes sure it is
    trusted (``trust.decide_trust``); then it reads the settings (chapter 17: a wrong layer
    stops claw here, before any request), opens the provider, builds the agent, counts its
    costs, keeps it inside its window (chapter 18) and guards it (chapters 13-16).
    ``approve`` answers the permission questions (default: at the terminal, on ``out``), and
    ``ask`` the model's questions (default: at the terminal, on ``err``). ``cwd`` is the folder
    claw works in (default: the current one); the process's own folder is never changed, so a
    program may open several claws in different folders.
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

    cwd = cwd or Path.cwd()
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
            warn=warner(err),
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


async def start_mcp_servers(
    cwd: Path, agent: Agent, enabled: bool, err: TextIO
) -> McpServers | None:
    """Start the MCP servers of ``cwd/.mcp.json`` if the user enabled them (chapter 23, ``--mcp``).

    Their tools join the agent's. Without a ``.mcp.json`` and ``--mcp``, chapter 23's code is
    not even imported; with a ``.mcp.json`` but no ``--mcp``, an unwritten chapter 23 is a
    warning: claw runs while that chapter is unwritten.
    """
    if not enabled and not (cwd / ".mcp.json").exists():
        return None
    from .mcp.config import McpServers, project_servers

    warn = warner(err)
    specs = if_written("ch23", lambda: project_servers(cwd, enabled=enabled, warn=warn))
    if isinstance(specs, Todo):
        if enabled:
            raise specs
        warn(".mcp.json left alone: claw's MCP client (chapter 23) is not written yet")
        return None
    servers = McpServers(cwd, warn)
    await servers.start(specs, agent.tools)
    return servers
