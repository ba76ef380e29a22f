"""Chapter 29: claw from Python, ``query()`` for one prompt and ``ClawSDKClient`` for a talk.

The client opens claw as every front door does (the composition root), with its own pieces
plugged in: the tools of ``mcp_servers`` join the agent's, the Python ``hooks`` join chapter
15's, and ``can_use_tool`` answers the permission questions. Each reply runs in a task of its
own; its records (``printmode.write_run``, the same as ``claw -p --output-format
stream-json``'s) go through a queue and come out as typed messages. Closing the client, or
leaving ``query()``'s loop early, cancels the task: the tool in flight is stopped, its
processes killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ClawError
from ..permissions import Approval, Mode
from ..printmode import PrintOutput, write_run
from ..types import SystemMessage, ToolCall, ToolOutput
from .tools import InProcessTool, McpSdkServerConfig
from .types import BadOption, Message, ResultMessage, SdkError, StreamEvent, message_from_record

if TYPE_CHECKING:
    from ..assemble import Claw
    from ..control import Check
    from ..hooks import Hooks, PythonHook

HookCallback = Callable[[dict[str, Any], str | None, dict[str, Any]], Awaitable[dict[str, Any]]]
"""A Python hook as the Claude Agent SDK's: ``(input, tool_use_id, context)``, returning
Claude Code's hook output (``{}`` goes on)."""


@dataclass
class HookMatcher:
    """The ``hooks`` of an event that run for the tools ``matcher`` picks (``None``: all)."""

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)


@dataclass
class PermissionResultAllow:
    """``can_use_tool``'s yes; ``updated_input`` replaces the call's arguments."""

    behavior: str = "allow"
    updated_input: dict[str, Any] | None = None


@dataclass
class PermissionResultDeny:
    """``can_use_tool``'s no; ``message`` tells the model why."""

    behavior: str = "deny"
    message: str = ""


@dataclass
class ToolPermissionContext:
    """What ``can_use_tool`` is told besides the call: its id and why claw asks."""

    tool_use_id: str | None = None
    decision_reason: str | None = None
    signal: Any = None


PermissionResult = PermissionResultAllow | PermissionResultDeny
CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


@dataclass
class ClawAgentOptions:
    """How to open claw: the Claude Agent SDK's options, where claw has the thing.

    ``max_turns`` is claw's ``--max-steps``; ``system_prompt`` a string replaces claw's, a
    ``{"type": "preset", "append": ...}`` adds to it; ``extra_args`` are more ``claw`` options
    (``{"base-url": url}``). A wrong value is ``BadOption`` here, before anything runs.
    """

    cwd: str | Path | None = None
    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    max_turns: int | None = None
    system_prompt: str | dict[str, str] | None = None
    continue_conversation: bool = False
    resume: str | None = None
    fork_session: bool = False
    settings: str | None = None
    mcp_servers: dict[str, McpSdkServerConfig] = field(default_factory=dict)
    can_use_tool: CanUseTool | None = None
    hooks: dict[str, list[HookMatcher]] | None = None
    include_partial_messages: bool = False
    stderr: Callable[[str], None] | None = None
    extra_args: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check every option; the first wrong one is ``BadOption`` saying what is wrong."""
        check_options(self)


def check_options(options: ClawAgentOptions) -> None:
    """Raise ``BadOption`` for the first option that cannot work, naming it.

    ``max_turns`` must be a whole number of at least 1, ``permission_mode`` one of chapter
    13's modes, ``cwd`` a folder that exists, each of ``mcp_servers`` a server made by
    ``create_sdk_mcp_server``, each key of ``hooks`` an event claw knows.
    """
    # region ch29: one check per option, each a BadOption naming the option and the value
    # more: isinstance(max_turns, int) and >= 1; Mode(value) raises ValueError; hooks.EVENTS
    from ..hooks import EVENTS

    turns = options.max_turns
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 1):
        raise BadOption(f"max_turns must be a whole number of at least 1, not {turns!r}")
    if options.permission_mode is not None:
        try:
            Mode(options.permission_mode)
        except ValueError:
            modes = ", ".join(mode.value for mode in Mode)
            raise BadOption(
                f"permission_mode {options.permission_mode!r} is not one of {modes}"
            ) from None
    if options.cwd is not None and not Path(options.cwd).is_dir():
        raise BadOption(f"cwd {str(options.cwd)!r} is not a folder")
    for name, server in options.mcp_servers.items():
        if not isinstance(server, McpSdkServerConfig):
            raise BadOption(f"mcp_servers[{name!r}] is not a server of create_sdk_mcp_server")
    for event in options.hooks or {}:
        if event not in EVENTS:
            raise BadOption(f"hooks: claw has no event {event!r}; it has {', '.join(EVENTS)}")
    # endregion


def command_line(options: ClawAgentOptions) -> list[str]:
    """The ``claw`` options that say what ``options`` say."""
    argv: list[str] = []
    if options.model is not None:
        argv += ["--model", options.model]
    if options.permission_mode is not None:
        argv += ["--permission-mode", options.permission_mode]
    if options.max_turns is not None:
        argv += ["--max-steps", str(options.max_turns)]
    if options.allowed_tools:
        argv += ["--allowed-tools", ",".join(options.allowed_tools)]
    if options.disallowed_tools:
        argv += ["--disallowed-tools", ",".join(options.disallowed_tools)]
    if options.settings is not None:
        argv += ["--settings", options.settings]
    if options.continue_conversation:
        argv.append("--continue")
    if options.resume is not None:
        argv += ["--resume", options.resume]
    if options.fork_session:
        argv.append("--fork-session")
    for name, value in options.extra_args.items():
        argv += [f"--{name}"] if value is None else [f"--{name}", value]
    return argv


def parse_options(options: ClawAgentOptions) -> argparse.Namespace:
    """``options`` as claw's parsed command line; a wrong one is ``BadOption``, as argparse says."""
    from ..options import parse_arguments

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            return parse_arguments(command_line(options))
    except SystemExit:
        raise BadOption(said.getvalue().strip().removeprefix("claw: error: ")) from None


class LineSink(io.StringIO):
    """A text stream that hands each complete line to ``stderr`` (or drops them)."""

    def __init__(self, stderr: Callable[[str], None] | None) -> None:
        """Lines go to ``stderr``; ``None`` drops them."""
        super().__init__()
        self.stderr = stderr
        self.pending = ""

    def write(self, text: str) -> int:
        """Keep ``text``; pass on each line it completes."""
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if self.stderr is not None:
                self.stderr(line)
        return len(text)


def python_hook(callback: HookCallback) -> PythonHook:
    """A Claude Agent SDK hook as a chapter 15 Python hook.

    The hook is given the event (what a shell hook reads on stdin), the call's
    ``tool_use_id`` (``None`` outside tool events) and a context ``{"signal": None}``; what it
    returns is read as a shell hook's JSON output, ``{}`` meaning go on.
    """

    # region ch29: call callback(payload, payload.get("tool_use_id"), {"signal": None})
    # more: an async def hook(payload) that awaits the callback and returns its dict
    async def hook(payload: dict[str, Any]) -> object:
        return await callback(payload, payload.get("tool_use_id"), {"signal": None})

    return hook
    # endregion


def add_hooks(claw: Claw, hooks: Mapping[str, list[HookMatcher]], cwd: Path) -> None:
    """Run ``hooks`` as chapter 15's: before the permission check, and after the tools."""
    from ..hooks import Hooks

    guarded = claw.guarded
    if guarded is None:
        raise SdkError("hooks need chapters 13 to 16: claw is running unguarded")
    if guarded.hooks is None:  # the project has none: put chapter 15's in the chain now
        made = Hooks(cwd, permission_mode=claw.settings.permissions.default_mode or "default")
        made.permissions = guarded.permissions
        if claw.recorder is not None:
            made.session_id = claw.recorder.writer.path.stem
            made.transcript_path = str(claw.recorder.writer.path)
        checks = guarded.controls.checks
        checks.insert(len(checks) - 1, made.pre_tool_use)  # the last is the permissions'
        guarded.controls.after.append(made.post_tool_use)
        guarded.hooks = made
    own: Hooks = guarded.hooks
    for event, matchers in hooks.items():
        for matcher in matchers:
            for callback in matcher.hooks:
                own.add(event, python_hook(callback), matcher.matcher)


class ToolApprover:
    """``can_use_tool`` as the approver of chapter 13's permissions, and the check around them.

    A call the permission rules ask about goes to ``can_use_tool``; every no is listed in
    ``denials`` (the result's ``permission_denials``). An allow with ``updated_input``, or a
    deny with a ``message``, is more than an ``Approval`` says: ``check`` wraps the
    permissions' check and applies it (the changed call then goes through the checks before
    it again: new arguments never skip the safety checks).
    """

    def __init__(self, can_use_tool: CanUseTool | None) -> None:
        """Ask ``can_use_tool``; without one, every question is a no."""
        self.can_use_tool = can_use_tool
        self.denials: list[dict[str, Any]] = []
        self.answers: dict[str, PermissionResult] = {}

    async def __call__(self, call: ToolCall, why: str) -> Approval:
        """Ask ``can_use_tool`` about ``call``: allow is ``ONCE``, deny ``DENY`` (and listed)."""
        # region ch29: ask (or deny without a callback); keep the answer by call.id; list a no
        # more: ToolPermissionContext(call.id, why); denials: tool_name, tool_use_id, tool_input
        answer: PermissionResult = PermissionResultDeny(message="")
        if self.can_use_tool is not None:
            context = ToolPermissionContext(tool_use_id=call.id, decision_reason=why)
            answer = await self.can_use_tool(call.name, dict(call.arguments), context)
        self.answers[call.id] = answer
        if isinstance(answer, PermissionResultAllow):
            return Approval.ONCE
        self.denials.append(
            {"tool_name": call.name, "tool_use_id": call.id, "tool_input": call.arguments}
        )
        return Approval.DENY
        # endregion

    def around(self, check: Check) -> Check:
        """``check`` (the permissions'), then what ``can_use_tool`` said beyond yes or no."""

        # --8<-- [start:around]
        async def checked(call: ToolCall) -> ToolCall | ToolOutput:
            # region ch29: run check; then apply the kept answer: a deny's message, an updated_input
            # more: answer = self.answers.pop(call.id, None); ToolOutput.error(message); model_copy
            verdict = await check(call)
            answer = self.answers.pop(call.id, None)
            if isinstance(answer, PermissionResultDeny) and answer.message:
                return ToolOutput.error(f"Permission denied: {answer.message}")
            if isinstance(verdict, ToolOutput):
                return verdict
            if isinstance(answer, PermissionResultAllow) and answer.updated_input is not None:
                return verdict.model_copy(update={"arguments": dict(answer.updated_input)})
            return verdict
            # endregion
        # --8<-- [end:around]

        return checked


class RecordQueue(PrintOutput):
    """``stream-json``'s records, put on a queue instead of written."""

    def __init__(self, queue: asyncio.Queue[dict[str, Any] | BaseException]) -> None:
        """Records go to ``queue``."""
        super().__init__("stream-json", io.StringIO())
        self.queue = queue

    def line(self, value: Mapping[str, Any]) -> None:
        """One record, on the queue."""
        self.queue.put_nowait(dict(value))


class ClawSDKClient:
    """A conversation with claw: ``connect``, then ``query`` and ``receive_response`` in turn.

    >>> async with ClawSDKClient(options) as client:
    ...     await client.query("What is in this folder?")
    ...     async for message in client.receive_response():
    ...         print(message)
    """

    def __init__(self, options: ClawAgentOptions | None = None) -> None:
        """A client for ``options`` (default: claw's defaults); nothing opens before ``connect``."""
        self.options = options or ClawAgentOptions()
        self.err = LineSink(self.options.stderr)
        self.approver = ToolApprover(self.options.can_use_tool)
        self.queue: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        self.claw: Claw | None = None
        self.cwd = Path.cwd()
        self.run: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()

    async def connect(self, prompt: str | None = None) -> None:
        """Open claw (and send ``prompt``, if given). A wrong option is ``BadOption``."""
        from ..assemble import open_claw
        from ..tools.ask import TerminalAsker

        arguments = parse_options(self.options)
        self.cwd = Path(self.options.cwd or Path.cwd()).resolve()
        nobody = no_answer
        ask = TerminalAsker(self.err, nobody, is_interactive=lambda: False)
        opening = open_claw(
            arguments, out=self.err, err=self.err, read_line=nobody,
            approve=self.approver, ask=ask, cwd=self.cwd,
        )  # fmt: skip
        self.claw = await self._stack.enter_async_context(opening)
        self.plug_in(self.claw)
        if prompt is not None:
            await self.query(prompt)

    def plug_in(self, claw: Claw) -> None:
        """The options' tools, hooks, system prompt and permission answers, into ``claw``."""
        for name, server in self.options.mcp_servers.items():
            for sdk_tool in server.tools:
                claw.agent.tools.add(InProcessTool(name, sdk_tool))
        if claw.guarded is not None:
            checks = claw.guarded.controls.checks
            checks[-1] = self.approver.around(checks[-1])
        if self.options.hooks:
            add_hooks(claw, self.options.hooks, self.cwd)
        prompt, history = self.options.system_prompt, claw.agent.history
        if prompt is not None and history and isinstance(history[0], SystemMessage):
            said = history[0].content
            text = prompt if isinstance(prompt, str) else f"{said}\n\n{prompt.get('append', '')}"
            history[0] = SystemMessage(content=text.rstrip())

    async def query(self, prompt: str) -> None:
        """Send ``prompt``; its reply comes from ``receive_response``."""
        if self.claw is None:
            raise SdkError("the client is not connected: call connect() first")
        if self.run is not None and not self.run.done():
            raise SdkError("a reply is still coming: receive it (or interrupt) first")
        self.run = asyncio.ensure_future(self.reply(self.claw, prompt))

    async def reply(self, claw: Claw, prompt: str) -> None:
        """Run ``prompt``, its records onto the queue; an error claw expects is a result.

        The denials of this reply only are its result's ``permission_denials``. An error
        that is not claw's (a bug) goes on the queue as it is, for the reader to raise.
        """
        output = RecordQueue(self.queue)
        self.approver.denials = []
        output.extra["permission_denials"] = self.approver.denials
        # region ch29: write_run to the queue; a ClawError is output.fail; another error queued
        # more: try: await write_run(...) except ClawError as e: output.fail(str(e)) ...
        try:
            await write_run(claw, prompt, output, self.err, self.cwd)
        except ClawError as error:
            output.fail(str(error))
        except Exception as error:
            self.queue.put_nowait(error)
        # endregion

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message, as it comes, for as long as the client is open."""
        model = self.claw.settings.model if self.claw is not None else ""
        while True:
            item = await self.queue.get()
            if isinstance(item, BaseException):
                raise item
            message = message_from_record(item, model)
            if isinstance(message, StreamEvent) and not self.options.include_partial_messages:
                continue
            yield message

    async def receive_response(self) -> AsyncIterator[Message]:
        """The messages of the reply to the last query, its ``ResultMessage`` last."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    async def interrupt(self) -> None:
        """Stop the reply in progress: it ends ``cancelled``, with its result message."""
        if self.claw is not None:
            self.claw.agent.cancel()

    async def disconnect(self) -> None:
        """Close claw: a reply still running is cancelled and waited for, its tools stopped."""
        # region ch29: cancel the run task and wait for it, then close the stack (claw itself)
        # more: run.cancel(); with contextlib.suppress(asyncio.CancelledError): await run
        if self.run is not None and not self.run.done():
            self.run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.run
        self.run = None
        self.claw = None
        await self._stack.aclose()
        # endregion

    async def __aenter__(self) -> ClawSDKClient:
        """``connect()``."""
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """``disconnect()``."""
        await self.disconnect()


async def no_answer() -> str:
    """Nobody types an answer: the end of input at once."""
    return ""


async def query(
    prompt: str, options: ClawAgentOptions | None = None
) -> AsyncIterator[Message]:
    """Run ``prompt`` once and yield its messages, the ``ResultMessage`` last.

    Leaving the loop early (``break``, ``aclose()``, a cancelled task) closes the client,
    which cancels the run and stops its tools.
    """
    # region ch29: a client in an async with; query; yield what receive_response yields
    # more: async with ClawSDKClient(options) as client: await client.query(prompt) ...
    async with ClawSDKClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            yield message
    # endregion
