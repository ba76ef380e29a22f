"""Slash commands: what the user types at the terminal app's prompt to talk to claw itself.

A line that starts with ``/`` is not sent to the model: ``/help``, ``/clear``, ``/model``,
``/permissions``, ``/plan`` and ``/exit`` act on the app. Each command is an entry in a
``SlashCommands`` table: a name, a one-line help and an async handler that receives the
``AppState`` and the rest of the line. Later chapters add theirs with ``register`` (the cost
so far, compaction, resuming a session) without touching the REPL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .display import terminal_text
from .errors import ClawError
from .loop import Agent
from .types import Message

if TYPE_CHECKING:
    from .guard import Guarded


@dataclass
class AppState:
    """What a slash command may look at and change: the agent and the app around it."""

    agent: Agent
    out: TextIO
    """Where a command writes what it has to say."""
    guarded: Guarded | None = None
    """Chapters 13-16 around the agent; ``None`` with ``--unguarded``."""
    start: list[Message] = field(default_factory=list)
    """The history a new conversation starts with (system prompt, instructions)."""
    exit_requested: bool = False
    """Set by ``/exit``: the REPL ends after this command."""
    extras: dict[str, Any] = field(default_factory=dict)
    """What later chapters keep for their commands (a cost tracker, a session)."""


# --8<-- [start:modes]
MODE_CYCLE = ("default", "acceptEdits", "plan")
"""The modes Shift+Tab steps through at the prompt, in Claude Code's order."""


def shown_mode(state: AppState) -> str | None:
    """The mode claw is in: ``plan`` while plan mode plans or waits, else chapter 13's mode.

    ``None`` with ``--unguarded``, where there is none.
    """
    if state.guarded is None:
        return None
    from .plan import PlanState

    if state.guarded.plan.state is not PlanState.EXECUTING:
        return "plan"
    return str(state.guarded.permissions.mode)


def set_mode(state: AppState, mode: str) -> None:
    """Switch to ``mode`` (a ``permissions.Mode`` value); ``ValueError`` for an unknown one.

    ``plan`` starts chapter 16's plan mode (which keeps the permission mode for afterwards);
    any other mode leaves plan mode first, and the model is told either way.
    """
    from .permissions import Mode
    from .plan import PlanState, plan_mode_message, plan_over_message

    guarded = state.guarded
    if guarded is None:
        raise ValueError("there are no modes with --unguarded")
    wanted = Mode(mode)
    planning = guarded.plan.state is not PlanState.EXECUTING
    if wanted is Mode.PLAN:
        if not planning:
            guarded.plan.enter()
            state.agent.history.append(plan_mode_message())
        return
    if planning:
        guarded.plan.leave()
        state.agent.history.append(plan_over_message())
    guarded.permissions.mode = wanted


def next_mode(state: AppState) -> str | None:
    """Shift+Tab: switch to the mode after the current one in ``MODE_CYCLE``; the new mode."""
    current = shown_mode(state)
    if current is None:
        return None
    at = MODE_CYCLE.index(current) if current in MODE_CYCLE else -1
    set_mode(state, MODE_CYCLE[(at + 1) % len(MODE_CYCLE)])
    return shown_mode(state)
# --8<-- [end:modes]


Handler = Callable[[AppState, str], Awaitable[None]]
"""A command's handler: the app's state and the text after the command's name."""


@dataclass(frozen=True)
class SlashCommand:
    """One command: its name with the slash, a line of help, and its handler."""

    name: str
    help: str
    handler: Handler


class UnknownCommand(ClawError):
    """A line names a command that is not in the table."""


class SlashCommands:
    """The table of commands, in the order they were registered."""

    def __init__(self) -> None:
        """An empty table."""
        self.commands: dict[str, SlashCommand] = {}

    def register(self, name: str, help: str) -> Callable[[Handler], Handler]:
        """A decorator that adds its function as the handler of ``/name``.

        >>> @commands.register("/cost", "show what this session has cost so far")
        ... async def cost(state: AppState, rest: str) -> None: ...
        """
        if not name.startswith("/") or " " in name:
            raise ValueError(f"a command's name starts with / and has no spaces, not {name!r}")

        def add(handler: Handler) -> Handler:
            self.commands[name] = SlashCommand(name, help, handler)
            return handler

        return add

    def names(self) -> list[str]:
        """Every command's name, for completion and ``/help``."""
        return list(self.commands)

    async def dispatch(self, line: str, state: AppState) -> bool:
        """Run the command ``line`` names, if it is one: whether it was (else it is a prompt).

        ``//text`` is the prompt ``/text``, for a prompt that starts with a slash. A name not
        in the table raises ``UnknownCommand`` with the names there are.
        """
        # region ch19: not "/..." or "//..." -> False; split off the name; look it up; await handler
        # more: name, _, rest = line.strip().partition(" "); await handler(state, rest.strip())
        if not line.startswith("/") or line.startswith("//"):
            return False
        name, _, rest = line.strip().partition(" ")
        command = self.commands.get(name)
        if command is None:
            raise UnknownCommand(
                f"unknown command {name}: the commands are {', '.join(self.names())}"
            )
        await command.handler(state, rest.strip())
        return True
        # endregion


def prompt_of(line: str) -> str:
    """The prompt a line that is not a command sends: ``//x`` sends ``/x``."""
    return line[1:] if line.startswith("//") else line


def default_commands() -> SlashCommands:
    """The commands of chapter 19: ``/help /clear /model /permissions /plan /exit``."""
    commands = SlashCommands()

    @commands.register("/help", "list the commands")
    async def help_(state: AppState, rest: str) -> None:
        width = max(len(name) for name in commands.names())
        for command in commands.commands.values():
            state.out.write(f"  {command.name.ljust(width)}  {command.help}\n")
        state.out.write("  Enter sends; Alt-Enter or a line ending in \\ adds a line; "
                        "Shift+Tab changes the mode; Ctrl-C stops a run; Ctrl-D exits.\n")

    @commands.register("/clear", "start a new conversation (forget everything said so far)")
    async def clear(state: AppState, rest: str) -> None:
        state.agent.history[:] = list(state.start)
        state.out.write("(conversation cleared)\n")

    @commands.register("/model", "show the model, or switch to another: /model NAME")
    async def model(state: AppState, rest: str) -> None:
        provider = state.agent.provider
        if rest:
            if any(character.isspace() for character in rest):
                state.out.write(f"not a model id: {terminal_text(rest)!r}\n")
                return
            provider.model = rest  # type: ignore[attr-defined]
        state.out.write(f"model: {terminal_text(str(getattr(provider, 'model', '?')))}\n")

    @commands.register(
        "/permissions", "show the permission mode and rules, or set one: /permissions MODE"
    )
    async def permissions(state: AppState, rest: str) -> None:
        if state.guarded is None:
            state.out.write("no permissions: claw runs --unguarded\n")
            return
        from .permissions import Mode

        rules = state.guarded.permissions
        if rest:
            try:
                set_mode(state, rest)
            except ValueError:
                names = ", ".join(mode.value for mode in Mode)
                state.out.write(f"unknown mode {terminal_text(rest)!r}; the modes are {names}\n")
                return
        state.out.write(f"mode: {shown_mode(state)}\n")
        for decision, listed in rules.rules.items():
            for rule in listed:
                state.out.write(f"  {decision}: {terminal_text(str(rule))}\n")

    @commands.register("/plan", "plan first: only read-only tools run until you approve a plan")
    async def plan(state: AppState, rest: str) -> None:
        if state.guarded is None:
            state.out.write("plan mode needs the guard: claw runs --unguarded\n")
            return
        from .plan import PlanModeError, plan_mode_message

        try:
            state.guarded.plan.enter()
        except PlanModeError as error:
            state.out.write(f"{error}\n")
            return
        state.agent.history.append(plan_mode_message())
        state.out.write("plan mode: claw explores and presents a plan; nothing changes yet\n")

    @commands.register("/exit", "leave claw (Ctrl-D does too)")
    async def exit_(state: AppState, rest: str) -> None:
        state.exit_requested = True

    session_commands(commands)
    return commands


def session_commands(commands: SlashCommands) -> None:
    """``/cost`` (17), ``/compact`` (18), ``/resume`` (22), ``/jobs`` (26) and ``/rewind`` (27).

    ``state.extras["claw"]`` is the ``main.Claw`` the REPL runs; without it (a test that
    builds an ``AppState`` by hand), or before those chapters are written, each says so.
    """

    @commands.register("/cost", "tokens and cost of this session so far")
    async def cost(state: AppState, rest: str) -> None:
        from .cost import describe_cost

        claw = state.extras.get("claw")
        costs = getattr(claw, "costs", None)
        if costs is None:
            state.out.write("no costs are counted (chapter 17 is not written yet)\n")
            return
        t, model = costs.tracker.session, costs.tracker.model
        cached = f" ({t.cached_tokens:,} cached)" if t.cached_tokens else ""
        state.out.write(
            f"since claw started: {t.calls} call(s), {t.input_tokens:,} tokens in{cached}, "
            f"{t.output_tokens:,} out · cost {describe_cost(t, model)}\n"
        )
        recorder = getattr(claw, "recorder", None)
        if recorder is not None:  # chapter 22: the whole session, the runs before a resume too
            from .cost import format_cost
            from .sessions import load_session, session_usage

            whole = session_usage(load_session(recorder.writer.path))
            money = "unknown" if whole.cost is None else format_cost(whole.cost) + " (reported)"
            state.out.write(
                f"whole session: {whole.input_tokens:,} tokens in, {whole.output_tokens:,} out"
                f" · cost {money}\n"
            )

    @commands.register("/compact", "summarise the conversation so far: /compact [focus]")
    async def compact(state: AppState, rest: str) -> None:
        window = getattr(state.extras.get("claw"), "context", None)
        if window is None:
            state.out.write(
                "no context window is known for this model (set context.window in the "
                "settings), so there is nothing to compact to\n"
            )
            return
        event = await window.compact_now(state.agent, focus=rest)
        if event is None:
            state.out.write("(nothing to compact yet)\n")
        else:
            state.out.write(
                f"(compacted: {event.tokens_before:,} → {event.tokens_after:,} tokens)\n"
            )

    @commands.register("/jobs", "list the background jobs and their states")
    async def jobs(state: AppState, rest: str) -> None:
        table = getattr(state.extras.get("claw"), "jobs", None)  # chapter 26
        if table is None:
            state.out.write("no background jobs (this claw runs none)\n")
            return
        state.out.write(terminal_text(table.listing()) + "\n")

    @commands.register(
        "/rewind", "list the prompts, or go back: /rewind N [code|conversation|both]"
    )
    async def rewind(state: AppState, rest: str) -> None:
        from .checkpoints import rewind_command  # chapter 27

        claw = state.extras.get("claw")
        checkpoints = getattr(claw, "checkpoints", None)
        recorder = getattr(claw, "recorder", None)
        if checkpoints is None and claw is not None:
            from .sessions import project_folder_name

            project_folder_name(Path.cwd())  # no session kept: chapter 22's Todo, if that is why
        said = await rewind_command(checkpoints, rest, state.agent.history, recorder)
        state.out.write(terminal_text(said) + "\n")

    @commands.register("/resume", "list this project's sessions, or continue one: /resume ID")
    async def resume(state: AppState, rest: str) -> None:
        from .sessions import find_session, list_sessions, load, session_list_text

        cwd = Path.cwd()
        if not rest:
            sessions = list_sessions(cwd)
            state.out.write(
                session_list_text(sessions) + "  (/resume ID continues one here)\n"
                if sessions
                else "this project has no sessions yet\n"
            )
            return
        try:
            old = load(find_session(cwd, rest.strip()))
        except ClawError as error:
            state.out.write(f"{terminal_text(str(error))}\n")
            return
        # The running session goes on with the old history: its transcript records the change.
        state.agent.history[:] = old.history
        state.out.write(f"(resumed {old.id}: {len(old.history)} messages)\n")
