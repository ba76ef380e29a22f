"""Hooks: the project's own rules, run by claw at fixed points of the loop (chapter 15).

A hook is a small program (a shell command) or a Python callable that claw runs at an event:

* ``PreToolUse``: before a tool call; it may block the call or change its arguments;
* ``PostToolUse``: after a tool call; it may add feedback to what the model sees;
* ``UserPromptSubmit``: before a prompt is sent; it may block it or add context;
* ``Stop``: when the model has finished; it may ask it to go on;
* ``SessionStart``: once, before the first prompt; it may add context.

The protocol is Claude Code's: the event as JSON on the hook's stdin; exit code 0 goes on
(stdout may hold a JSON decision), 2 blocks (stderr says why), anything else is a
non-blocking error, reported to the user. A hook that hangs, crashes or talks nonsense never
hangs or crashes the agent: it is timed out, caught, and reported as a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Finish
from .events import Event, RunFinished
from .loop import Agent
from .permissions import Approval, Decision, Permissions
from .tool_names import TOOL_NAMES, claude_code_name
from .tools.bash import DRAIN_SECONDS, OutputPipe, drain, scrubbed_env, started, stop_session
from .types import DeveloperMessage, Message, ToolCall, ToolOutput

if TYPE_CHECKING:
    from .sandbox import Sandbox

logger = logging.getLogger("claw.hooks")
"""Where hook failures (non-blocking errors) are reported."""

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart")
"""The hook events claw supports, named as in Claude Code."""

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
"""The events whose matcher is a tool name; the others ignore their matcher."""

CLAW_TOOLS = frozenset().union(*TOOL_NAMES.values(), {"exit_plan_mode"})
"""The tools claw has: a matcher in the settings file must pick at least one of them
(``exit_plan_mode`` is chapter 16's, named here so that hooks import without plan mode)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a command hook may run when its settings give no ``timeout`` (Claude Code's too)."""

MAX_OUTPUT = 10_000
"""The most characters of a hook's stdout, and of its stderr, that claw keeps."""

MAX_STOP_CONTINUATIONS = 3
"""How many times in a row Stop hooks may send the model back to work in one prompt."""


# --8<-- [start:types]
@dataclass(frozen=True)
class CommandHook:
    """A shell hook: ``command`` runs with ``bash -c`` in the project directory."""

    command: str
    timeout: float = DEFAULT_TIMEOUT
    """Seconds before the command and every process of its session are killed."""


PythonHook = Callable[[dict[str, Any]], object]
"""A Python hook: called with the event (a dict, as a shell hook reads it from stdin); returns
``None`` to go on, or a dict shaped like a shell hook's JSON output; may be ``async``."""

Hook = CommandHook | PythonHook


@dataclass(frozen=True)
class Verdict:
    """What the hooks of one event decided, put together."""

    block: bool = False
    """Exit code 2, ``"decision": "block"`` or ``"permissionDecision": "deny"``."""
    reason: str = ""
    """Why it was blocked (stderr, ``reason`` or ``permissionDecisionReason``)."""
    permission: str | None = None
    """A PreToolUse hook's ``permissionDecision``: ``"allow"``, ``"deny"`` or ``"ask"``."""
    updated_input: dict[str, Any] | None = None
    """A PreToolUse hook's ``updatedInput``: the tool's new arguments, all of them."""
    context: str = ""
    """``additionalContext`` (or plain stdout, for UserPromptSubmit and SessionStart)."""
    warnings: tuple[str, ...] = ()
    """Non-blocking errors: for the user, never for the model."""
    stop: str | None = None
    """``"continue": false``: why the session stops (``stopReason``); ``None`` goes on."""


@dataclass(frozen=True)
class Completed:
    """A command hook that ran to its end: its exit code and (capped) output."""

    exit_code: int
    stdout: str
    stderr: str


class HookFailed(Exception):
    """A command hook could not give an answer: it timed out, or could not be started."""


@dataclass(frozen=True)
class PromptBlocked:
    """``run_with_hooks``'s only event when a UserPromptSubmit hook blocks the prompt."""

    reason: str
# --8<-- [end:types]


# --8<-- [start:exact-matcher]
EXACT_MATCHER = re.compile(r"[A-Za-z0-9_\- ,|]*")
"""A matcher made only of these characters is a list of exact tool names (Claude Code's rule);
any other character makes it a regular expression."""
# --8<-- [end:exact-matcher]


def matches(matcher: str | None, tool_name: str) -> bool:
    """Whether ``matcher`` picks the claw tool ``tool_name``, as Claude Code's matchers pick.

    ``None``, ``""`` and ``"*"`` pick every tool. A matcher of letters, digits, ``_``, ``-``,
    spaces, ``,`` and ``|`` is a list of exact names separated by ``|`` or ``,``: ``"Bash"``
    picks ``bash`` (Claude Code's name, from ``TOOL_NAMES``), ``"Edit|Write"`` picks ``edit``,
    ``apply_patch`` and ``write``, ``"bash"`` picks ``bash`` and not ``bash_output``. Anything
    else is a regular expression that may match anywhere in either name of the tool:
    ``"mcp__.*"``, ``"^Notebook"``. Case counts, as in Claude Code.
    """
    # region ch15: empty, None and "*" match all; an exact list; else re.search on both names
    # more: re.split(r"[|,]"); TOOL_NAMES.get(name, ()); claude_code_name(tool_name)
    if matcher in (None, "", "*"):
        return True
    if EXACT_MATCHER.fullmatch(matcher):
        names = {part.strip() for part in re.split(r"[|,]", matcher)} - {""}
        return any(name == tool_name or tool_name in TOOL_NAMES.get(name, ()) for name in names)
    return any(re.search(matcher, name) for name in (tool_name, claude_code_name(tool_name)))
    # endregion


def decide(event: str, data: Mapping[str, Any]) -> Verdict:
    """Read a hook's JSON output (or a Python hook's dict) for ``event``.

    ``"decision": "block"`` with ``"reason"`` blocks any event. In ``hookSpecificOutput``,
    ``permissionDecision`` ``"deny"`` blocks with ``permissionDecisionReason``, ``"allow"``
    and ``"ask"`` are kept in ``permission``; ``updatedInput`` (a JSON object) and
    ``additionalContext`` (a string) are kept. ``"continue": false`` stops the session, with
    ``"stopReason"`` as its reason. Anything malformed is a warning.
    """
    # region ch15: decision/reason; hookSpecificOutput: permissionDecision, updatedInput, context
    # more: deny -> block; allow/ask -> permission; a wrong type is a warning, never an exception
    warnings: list[str] = []
    block = data.get("decision") == "block"
    reason = str(data.get("reason") or "")
    permission: str | None = None
    updated: dict[str, Any] | None = None
    context = ""
    specific = data.get("hookSpecificOutput") or {}
    if not isinstance(specific, Mapping):
        specific = {}
        warnings.append("hookSpecificOutput is not a JSON object; ignored")
    decision = specific.get("permissionDecision")
    if decision == "deny":
        block = True
        reason = str(specific.get("permissionDecisionReason") or reason)
    elif decision in ("allow", "ask"):
        permission = decision
    elif decision is not None:
        warnings.append(f"unknown permissionDecision {decision!r}; ignored")
    if "updatedInput" in specific:
        if isinstance(specific["updatedInput"], dict):
            updated = dict(specific["updatedInput"])
        else:
            warnings.append("updatedInput is not a JSON object; ignored")
    if isinstance(specific.get("additionalContext"), str):
        context = specific["additionalContext"]
    if block and not reason:
        reason = f"blocked by a {event} hook (no reason given)"
    stop = None
    if data.get("continue") is False:
        stop = str(data.get("stopReason") or f"stopped by a {event} hook (no reason given)")
    return Verdict(
        block, reason, "deny" if block else permission, updated, context, tuple(warnings), stop
    )
    # endregion


def interpret(event: str, completed: Completed) -> Verdict:
    """What a command hook's exit code and output mean for ``event``.

    Exit 2 blocks, with stderr as the reason, unless stdout holds a JSON object that blocks:
    then its reason. Any other code but 0 is a warning:
    ``exited with code N: <stderr>``. Exit 0 with a JSON object on stdout is read by
    ``decide``; stdout that starts with ``{`` but is not valid JSON is a warning
    (``invalid JSON on stdout``); other text on stdout is context for UserPromptSubmit and
    SessionStart, and ignored for the other events.
    """
    # region ch15: 2 blocks with stderr; not 0 warns; 0: JSON object -> decide; plain text
    # more: json.loads in try; a non-object is a warning too; strip() stdout and stderr first
    stderr, stdout = completed.stderr.strip(), completed.stdout.strip()
    if completed.exit_code == 2:
        reason = stderr or f"blocked by a {event} hook (exit code 2)"
        with contextlib.suppress(ValueError):  # JSON that blocks outranks stderr
            data = json.loads(stdout)
            decided = decide(event, data) if isinstance(data, dict) else Verdict()
            if decided.block:
                reason = decided.reason
        return Verdict(block=True, reason=reason, permission="deny")
    if completed.exit_code != 0:
        return Verdict(warnings=(f"exited with code {completed.exit_code}: {stderr}",))
    if not stdout.startswith("{"):
        plain = event in ("UserPromptSubmit", "SessionStart")
        return Verdict(context=stdout if plain else "")
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError as error:
        return Verdict(warnings=(f"invalid JSON on stdout ({error.msg}); ignored",))
    if not isinstance(data, dict):
        return Verdict(warnings=("stdout is not a JSON object; ignored",))
    return decide(event, data)
    # endregion


# --8<-- [start:read-capped]
async def read_capped(stream: asyncio.StreamReader, kept: bytearray, limit: int) -> None:
    """Read ``stream`` to its end into ``kept``, keeping only its first ``limit`` bytes.

    The rest is read and thrown away, so that a chatty hook never blocks on a full pipe.
    ``kept`` holds what came so far even if the reading is cancelled.
    """
    while chunk := await stream.read(65_536):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]


async def feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write ``data`` to ``process``'s stdin, then close it; a hook that does not read is fine."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    process.stdin.close()


def hook_environment() -> dict[str, str]:
    """The environment a hook runs with: claw's, without any variable that looks like a secret.

    The bash tool's rule (chapter 10's ``scrubbed_env``): a hook is a program from the
    project's settings, and a project can come from anywhere.
    """
    return scrubbed_env(os.environ)
# --8<-- [end:read-capped]


async def run_command(
    hook: CommandHook, payload: Mapping[str, Any], cwd: Path, limit: int = MAX_OUTPUT
) -> Completed:
    """Run ``hook.command`` with ``bash -c`` in ``cwd``, ``payload`` as JSON on its stdin.

    The command leads its own session (``start_new_session=True``), is started through
    chapter 10's ``started`` (a cancel during the start stops the session too), and runs with
    ``hook_environment()``. Its stdout and stderr go to pipes of its own (chapter 10's
    ``OutputPipe``), so the run ends when bash exits, even if a background child still holds
    them. When bash exits, when ``hook.timeout`` seconds pass, or if the task awaiting it is
    cancelled, every process of the session is killed (chapter 10's ``stop_session``, with no
    grace), then the output left in the pipes is read. A timeout raises
    ``HookFailed("timed out after N s")``, as does a command that cannot be started. Stdout
    and stderr are each cut to ``limit`` bytes.
    """
    # region ch15: bash -c in its own session, scrubbed env, OutputPipes; wait; stop_session
    # more: started(create_subprocess_exec(...)); 3 tasks; wait_for(wait()); finally: stop, drain
    async with OutputPipe() as out, OutputPipe() as err:
        try:
            process = await started(asyncio.create_subprocess_exec(
                "bash", "-c", hook.command, cwd=cwd, env=hook_environment(),
                start_new_session=True, stdin=asyncio.subprocess.PIPE,
                stdout=out.write_fd, stderr=err.write_fd,
            ))
        except OSError as error:
            raise HookFailed(f"could not be started: {error}") from error
        finally:
            out.close_write_end()
            err.close_write_end()
        stdout, stderr = bytearray(), bytearray()
        tasks = [
            asyncio.create_task(feed(process, json.dumps(payload).encode())),
            asyncio.create_task(read_capped(out.reader, stdout, limit)),
            asyncio.create_task(read_capped(err.reader, stderr, limit)),
        ]
        try:
            exit_code = await asyncio.wait_for(process.wait(), hook.timeout)
        except TimeoutError:
            raise HookFailed(f"timed out after {hook.timeout:g} s") from None
        finally:  # exited, timed out or cancelled: nothing of the hook may go on running
            await stop_session(process, grace=0)
            for task in tasks:
                await drain(task, DRAIN_SECONDS)
    out_text, err_text = (kept.decode("utf-8", "replace") for kept in (stdout, stderr))
    return Completed(exit_code, out_text, err_text)
    # endregion


async def call_python(hook: PythonHook, event: str, payload: dict[str, Any]) -> Verdict:
    """Call a Python hook (sync or async) and read what it returned.

    ``None`` goes on; a dict is read by ``decide``; anything else is a warning. An exception
    raised by the hook is a warning too (``raised ValueError: ...``), never the agent's.
    """
    # region ch15: call it; await the result if inspect.isawaitable; None, dict or a warning
    # more: wrap the call and the await in one try/except Exception; decide(event, result)
    try:
        result = hook(payload)
        if inspect.isawaitable(result):
            result = await result
    except Exception as error:
        return Verdict(warnings=(f"raised {type(error).__name__}: {error}",))
    if result is None:
        return Verdict()
    if not isinstance(result, Mapping):
        return Verdict(warnings=(f"returned {type(result).__name__} (expected None or a dict)",))
    return decide(event, result)
    # endregion


def hook_name(hook: Hook) -> str:
    """How a hook is named in warnings: its command, or the Python function's name."""
    if isinstance(hook, CommandHook):
        return hook.command
    return getattr(hook, "__qualname__", type(hook).__qualname__)


def check_matcher(event: str, matcher: str | None, tools: Sequence[str]) -> None:
    """Raise ``ValueError`` if ``matcher`` (or one name of an exact list) picks none of ``tools``.

    A regular expression naming MCP tools (``mcp__``) is accepted: their names are known only
    once the servers run.
    """
    if matcher in (None, "", "*") or "mcp__" in matcher:
        return
    if EXACT_MATCHER.fullmatch(matcher):
        parts = [part.strip() for part in re.split(r"[|,]", matcher) if part.strip()]
    else:
        try:
            re.compile(matcher)
        except re.error as error:
            raise ValueError(f"invalid matcher {matcher!r}: {error}") from error
        parts = [matcher]
    for part in parts:
        if not any(matches(part, tool) for tool in tools):
            names = ", ".join(sorted(set(TOOL_NAMES) | set(tools)))
            raise ValueError(
                f"the {event} matcher {matcher!r} matches no tool ({part!r} is none of: "
                f"{names}); tool names are case-sensitive"
            )


ASKED = "a PreToolUse hook asks for approval"
"""Why the user is asked about a call a hook answered ``ask`` for."""


async def confirm(permissions: Permissions, call: ToolCall) -> ToolCall | ToolOutput:
    """A PreToolUse hook's ``ask``: ask the user about ``call`` though the rules allow it.

    A call the rules deny or ask about is left to them (the permission check comes next), so
    a deny rule still refuses and nobody is asked twice. Without an approver, or when the user
    says no, the call is refused as chapter 13 refuses (``Permission denied: ...``).
    """
    if permissions.decide(call).decision is not Decision.ALLOW:
        return call
    if permissions.approve is None:
        return permissions.refuse(call, f"{ASKED}; it needs approval and none was given")
    if await permissions.approve(call, ASKED) is Approval.DENY:
        return permissions.refuse(call, f"{ASKED}; the user refused it")
    return call


def _items(value: object, what: str) -> Iterable[tuple[str, object]]:
    """The items of ``value``, a JSON object of settings; ``ValueError`` if it is not one."""
    return _mapping(value, what).items()


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    """``value``, which must be a JSON object; else ``ValueError`` saying ``what`` it is."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object, not {type(value).__name__}")
    return value


def _list(value: object, what: str) -> list[Any]:
    """``value``, which must be a JSON list; else ``ValueError`` saying ``what`` it is."""
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, not {type(value).__name__}")
    return value


def command_hook(entry: Mapping[str, Any]) -> CommandHook:
    """The ``CommandHook`` a settings entry describes; ``ValueError`` names what is wrong."""
    if entry.get("type", "command") != "command":
        raise ValueError(f"unsupported hook type {entry.get('type')!r}")
    command, timeout = entry.get("command"), entry.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"a command hook needs a \"command\" string, not {command!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError(f"a hook's \"timeout\" must be a number of seconds over 0: {timeout!r}")
    return CommandHook(command, float(timeout))


@dataclass(frozen=True)
class Registered:
    """One hook, the event it runs at and its matcher."""

    event: str
    matcher: str | None
    hook: Hook


# --8<-- [start:hooks-head]
class Hooks:
    """The hooks of one session, and the checks and helpers that run them.

    ``pre_tool_use`` is a chapter 13-16 ``Check`` and ``post_tool_use`` an ``After``:

    >>> agent.gate = Controls(agent.tools, checks=[hooks.pre_tool_use], after=[hooks.post_tool_use])
    """

    def __init__(
        self,
        cwd: Path,
        *,
        session_id: str | None = None,
        transcript_path: str = "",
        permission_mode: str = "default",
        max_output: int = MAX_OUTPUT,
    ) -> None:
        """Hooks that run in the project directory ``cwd``, for session ``session_id``.

        Without a ``session_id`` the session gets a fresh UUID, as Claude Code's do. The
        session's transcript file and the permission mode are told to every hook too (``claw``
        sets them once its session and mode are known).
        """
        self.cwd = Path(cwd)
        self.session_id = session_id or str(uuid.uuid4())
        self.transcript_path = transcript_path
        self.permission_mode = permission_mode
        self.max_output = max_output
        self.registered: list[Registered] = []
        self.warnings: list[str] = []
        """Every non-blocking error so far, for the terminal app to show the user."""
        self.session_started = False
        self.prompt_id = str(uuid.uuid4())
        """The prompt being worked on: ``run_with_hooks`` gives each prompt a fresh UUID."""
        self.stopped: str | None = None
        """Set when a hook answers ``"continue": false``: why the session stops."""
        self.context: list[str] = []
        """PreToolUse contexts not yet told: the model reads them after the tool results."""
        self.permissions: Permissions | None = None
        """Chapter 13's permissions, which a PreToolUse ``ask`` asks through (``guard`` sets
        them); without them, ``ask`` is left to the permission check."""
        self.sandbox: Sandbox | None = None
        """Chapter 28's sandbox, which command hooks then run in (``claw`` sets it)."""

    def add(self, event: str, hook: Hook, matcher: str | None = None) -> None:
        """Run ``hook`` at ``event`` (for PreToolUse/PostToolUse, on tools ``matcher`` picks).

        Raises ``ValueError`` for an unknown event or a matcher that is not a valid regex.
        """
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r}; claw knows {', '.join(EVENTS)}")
        if matcher not in (None, "", "*"):
            try:
                re.compile(matcher)
            except re.error as error:
                raise ValueError(f"invalid matcher {matcher!r}: {error}") from error
        self.registered.append(Registered(event, matcher, hook))

    @classmethod
    def from_settings(
        cls,
        settings: Mapping[str, Any],
        cwd: Path,
        tools: Iterable[str] = CLAW_TOOLS,
        **options: Any,
    ) -> Hooks:
        """Hooks from Claude Code's settings shape: ``"hooks"``'s value, or a dict holding it.

        ``{"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command",
        "command": "...", "timeout": 5}]}]}``. A tool event's matcher must pick one of
        ``tools`` (each name of an exact list must): otherwise ``ValueError`` names the
        matcher, so that a hook meant to guard something never silently guards nothing.
        """
        hooks = cls(cwd, **options)
        known = sorted(tools)
        table = settings.get("hooks", settings)
        for event, groups in _items(table, "hooks"):
            for group in _list(groups, event):
                matcher = _mapping(group, f"a group of {event}").get("matcher")
                if matcher is not None and not isinstance(matcher, str):
                    raise ValueError(f"the {event} matcher must be a string, not {matcher!r}")
                if event in TOOL_EVENTS:
                    check_matcher(event, matcher, known)
                for entry in _list(group.get("hooks", []), f"the hooks of a {event} group"):
                    hooks.add(event, command_hook(_mapping(entry, f"a {event} hook")), matcher)
        return hooks

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        """The JSON a hook of ``event`` reads: Claude Code's common fields, then ``fields``.

        ``permission_mode`` and ``prompt_id`` are left out of SessionStart's, as Claude Code
        leaves them out: no prompt has been given yet.
        """
        common = {
            "hook_event_name": event,
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
        }
        if event != "SessionStart":
            common["permission_mode"] = self.permission_mode
            common["prompt_id"] = self.prompt_id
        return {**common, **fields}

    def warn(self, event: str, hook: Hook, problem: str) -> None:
        """Report a non-blocking error: logged on ``claw.hooks`` and kept in ``warnings``."""
        message = f"{event} hook {hook_name(hook)!r} {problem}"
        logger.warning("%s", message)
        self.warnings.append(message)
# --8<-- [end:hooks-head]

    # --8<-- [start:run]
    async def run_one(self, event: str, hook: Hook, payload: dict[str, Any]) -> Verdict:
        """Run one hook of any kind; a command that fails to answer is a warning."""
        if not isinstance(hook, CommandHook):
            return await call_python(hook, event, payload)
        if self.sandbox is not None:  # chapter 28: the command runs in the session's sandbox
            hook = CommandHook(await self.sandbox.shell_line(hook.command), hook.timeout)
        try:
            completed = await run_command(hook, payload, self.cwd, self.max_output)
        except HookFailed as error:
            return Verdict(warnings=(str(error),))
        return interpret(event, completed)

    async def run(self, event: str, payload: dict[str, Any], tool_name: str = "") -> Verdict:
        """Run the hooks of ``event`` that pick ``tool_name``, in the order they were added.

        The first that blocks ends the run: later hooks do not run. An ``updatedInput`` is
        the ``tool_input`` the next hook sees. Warnings are reported with ``warn``; the
        contexts are joined with a newline; ``"ask"`` outranks ``"allow"``. A hook's
        ``"continue": false`` sets ``stopped``.
        """
        # region ch15: for each matching hook: run_one, warn, note a stop, end at a block, merge
        # more: match only for TOOL_EVENTS; self.stopped = verdict.stop; payload = {**payload, ...}
        permission: str | None = None
        updated: dict[str, Any] | None = None
        contexts: list[str] = []
        for registered in self.registered:
            if registered.event != event:
                continue
            if event in TOOL_EVENTS and not matches(registered.matcher, tool_name):
                continue
            verdict = await self.run_one(event, registered.hook, payload)
            for warning in verdict.warnings:
                self.warn(event, registered.hook, warning)
            if verdict.stop is not None:
                self.stopped = verdict.stop
            if verdict.block:
                return Verdict(block=True, reason=verdict.reason, permission="deny")
            if verdict.permission == "ask" or permission is None:
                permission = verdict.permission or permission
            if verdict.updated_input is not None:
                updated = verdict.updated_input
                payload = {**payload, "tool_input": updated}
            if verdict.context:
                contexts.append(verdict.context)
        return Verdict(permission=permission, updated_input=updated, context="\n".join(contexts))
        # endregion
    # --8<-- [end:run]

    async def pre_tool_use(self, call: ToolCall) -> ToolCall | ToolOutput:
        """The PreToolUse ``Check``: block the call, change its arguments, or let it go on.

        A block answers the call with the error ``Blocked by a PreToolUse hook: <reason>``;
        an ``additionalContext`` waits in ``context``; an ``updatedInput`` replaces its
        arguments; ``ask`` asks the user even where an allow rule would not (``confirm``);
        ``allow`` goes on to the next check (permissions decide).
        """
        # region ch15: payload with the call; run; block, keep context, update, ask (confirm)
        # more: ToolOutput.error(f"Blocked by ...: {reason}"); call.model_copy; confirm(permissions)
        payload = self.payload(
            "PreToolUse", tool_name=call.name, tool_input=call.arguments, tool_use_id=call.id
        )
        verdict = await self.run("PreToolUse", payload, call.name)
        if verdict.block:
            return ToolOutput.error(f"Blocked by a PreToolUse hook: {verdict.reason}")
        if verdict.context:
            self.context.append(verdict.context)
        if verdict.updated_input is not None:
            call = call.model_copy(update={"arguments": verdict.updated_input})
        if verdict.permission == "ask" and self.permissions is not None:
            return await confirm(self.permissions, call)
        return call
        # endregion

    async def post_tool_use(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        """The PostToolUse ``After``: the tool has run; hooks may add to what the model sees.

        Only after a call that succeeded: an error output goes back as it is, and no hook
        runs (as in Claude Code). A block (exit 2) adds a paragraph ``PostToolUse hook:
        <reason>`` to the output, and an ``additionalContext`` a paragraph of its own.
        """
        # region ch15: an error: no hook; payload with tool_response; run; append feedback
        # more: notes = [f"PostToolUse hook: {reason}"] if block; + context; "\n\n".join
        if output.is_error:
            return output
        payload = self.payload(
            "PostToolUse",
            tool_name=call.name,
            tool_input=call.arguments,
            tool_use_id=call.id,
            tool_response={"content": output.content, "is_error": output.is_error},
        )
        verdict = await self.run("PostToolUse", payload, call.name)
        notes = [f"PostToolUse hook: {verdict.reason}"] if verdict.block else []
        if verdict.context:
            notes.append(verdict.context)
        if not notes:
            return output
        return ToolOutput.ok("\n\n".join([output.content, *notes]))
        # endregion

    # --8<-- [start:session]
    async def session_start(self) -> Verdict:
        """Run the SessionStart hooks, once per ``Hooks``; later calls do nothing."""
        if self.session_started:
            return Verdict()
        self.session_started = True
        return await self.run("SessionStart", self.payload("SessionStart", source="startup"))

    async def user_prompt_submit(self, prompt: str) -> Verdict:
        """Run the UserPromptSubmit hooks on ``prompt``."""
        return await self.run("UserPromptSubmit", self.payload("UserPromptSubmit", prompt=prompt))

    async def stop(self, active: bool, last_message: str = "") -> Verdict:
        """Run the Stop hooks.

        ``active`` tells them a Stop hook already sent the model back; ``last_message`` is the
        model's last answer.
        """
        payload = self.payload("Stop", stop_hook_active=active, last_assistant_message=last_message)
        return await self.run("Stop", payload)
    # --8<-- [end:session]


async def run_with_hooks(
    agent: Agent, hooks: Hooks, prompt: str
) -> AsyncIterator[Event | PromptBlocked]:
    """``agent.events(prompt)`` with the hooks that are not about tool calls around it.

    SessionStart runs before the first prompt of the session. UserPromptSubmit runs next: a
    block yields ``PromptBlocked(reason)`` and nothing is sent to the model. A context from
    either is added to the history as a ``DeveloperMessage`` before the prompt; a PreToolUse
    context, after the step's tool results, before the model is asked again. Once the run
    finishes ``DONE``, Stop hooks run: a block sends the model back to work, with the prompt
    ``A Stop hook asks you to go on: <reason>``, at most ``MAX_STOP_CONTINUATIONS`` times. A
    hook's ``"continue": false`` stops it all: before the prompt is sent, it is blocked with
    the hook's ``stopReason``; during a step, the run ends ``HOOK_STOPPED`` after it.
    """
    hooks.prompt_id, hooks.stopped = str(uuid.uuid4()), None
    hooks.context.clear()
    on_start = await hooks.session_start()  # a SessionStart hook cannot block: nothing to stop
    submitted = await hooks.user_prompt_submit(prompt)
    if hooks.stopped is not None or submitted.block:
        yield PromptBlocked(hooks.stopped or submitted.reason)
        return
    for context in (on_start.context, submitted.context):
        if context:
            agent.history.append(DeveloperMessage(content=context))
    prepare = agent.prepare

    async def tell_context(history: list[Message]) -> Event | None:
        """Before each model request: the PreToolUse contexts, then the agent's own prepare."""
        history.extend(DeveloperMessage(content=context) for context in hooks.context)
        hooks.context.clear()
        return None if prepare is None else await prepare(history)

    agent.prepare = tell_context
    try:
        for continuation in range(MAX_STOP_CONTINUATIONS + 1):
            finished: RunFinished | None = None
            async for event in agent.events(prompt):
                if hooks.stopped is not None:
                    agent.request_finish(Finish.HOOK_STOPPED)
                if isinstance(event, RunFinished):
                    finished = event
                yield event
            if finished is None or finished.reason is not Finish.DONE:
                return
            if continuation == MAX_STOP_CONTINUATIONS:
                return
            verdict = await hooks.stop(continuation > 0, finished.text)
            if not verdict.block or hooks.stopped is not None:
                return
            prompt = f"A Stop hook asks you to go on: {verdict.reason}"
    finally:
        agent.prepare = prepare
