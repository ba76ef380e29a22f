"""``claw acp``: claw as an agent an editor drives over the Agent Client Protocol.

The Agent Client Protocol (ACP, Zed's) is JSON-RPC 2.0 over the agent's standard input and
output, one JSON message per line. The editor starts ``claw acp`` and is the client: it says
``initialize``, opens a session for a folder (``session/new``, or ``session/load`` of one of
chapter 22's sessions), and sends each prompt as ``session/prompt``. While the prompt runs, claw
tells the editor what happens as ``session/update`` notifications (the model's text as it
streams, each tool call and how it ended, a file edit's diff, the todo list as a plan) and asks
it each permission question (``session/request_permission``); the prompt's answer says why the
turn stopped. ``session/cancel`` stops it.

The rule that shapes this module: nothing a client sends can crash claw or make it hang. A line
that is not JSON, an unknown method, a prompt for a session that does not exist, a request
before ``initialize`` or a line of many megabytes each gets a JSON-RPC error (a notification
gets nothing), and claw goes on serving; a permission question the editor never answers is a
no after ``PERMISSION_TIMEOUT`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from .assemble import Claw
    from .events import Event
    from .permissions import Approval
    from .types import Message, ToolCall

# --8<-- [start:constants]
PROTOCOL_VERSION = 1
"""The ACP version claw speaks (the protocol's major version; it has had only this one)."""

MAX_LINE = 8 * 1024 * 1024
"""The longest line claw reads (bytes). A longer one is skipped whole and answered with an error."""

PERMISSION_TIMEOUT = 300.0
"""Seconds claw waits for the editor's answer to a permission question; then the answer is no."""

PARSE_ERROR = -32700
"""JSON-RPC: the line is not JSON."""
INVALID_REQUEST = -32600
"""JSON-RPC: JSON, but not a request (or, here, a request before ``initialize``)."""
METHOD_NOT_FOUND = -32601
"""JSON-RPC: claw has no such method."""
INVALID_PARAMS = -32602
"""JSON-RPC: the method's parameters are wrong."""
INTERNAL_ERROR = -32603
"""JSON-RPC: claw failed while answering."""
RESOURCE_NOT_FOUND = -32002
"""ACP: the session (or another thing the request names) does not exist."""

STOP_REASONS = {
    "done": "end_turn",
    "max_steps": "max_turn_requests",
    "max_tokens": "max_tokens",
    "cancelled": "cancelled",
    "content_filter": "refusal",
}
"""How chapter 7's ``Finish`` values are said as ACP stop reasons. Every other finish (an error,
a budget, a stuck model, calls denied) is ``end_turn``: the turn ended and claw's last message
says why."""

TOOL_KINDS = {
    "read": "read",
    "list_dir": "read",
    "grep": "search",
    "glob": "search",
    "edit": "edit",
    "write": "edit",
    "apply_patch": "edit",
    "bash": "execute",
    "web_fetch": "fetch",
    "todo_write": "think",
}
"""The ACP ``kind`` of claw's tools (the editor picks an icon by it); any other is ``other``."""

PERMISSION_OPTIONS = (
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Allow always", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
)
"""The choices a permission question offers the editor's user."""
# --8<-- [end:constants]


class RpcError(Exception):
    """A JSON-RPC error to answer a request with: its ``code`` and ``message``."""

    def __init__(self, code: int, message: str) -> None:
        """The error ``code`` (one of the constants above) and what to tell the client."""
        super().__init__(message)
        self.code = code
        self.message = message


class LineTooLong(Exception):
    """The client sent a line longer than ``MAX_LINE``; it has been skipped."""


def error_response(request_id: object, code: int, message: str) -> dict[str, Any]:
    """The JSON-RPC error response to the request ``request_id``."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line from ``reader``; ``None`` at the end of the input.

    A line longer than the reader's limit is read to its end and thrown away, and then
    ``LineTooLong`` is raised: the next call reads the line after it.
    """
    # region ch30: one line, or None at the end; a too-long line is skipped whole, then LineTooLong
    # more: readuntil(b"\n"); IncompleteReadError.partial; LimitOverrunError: readexactly(consumed)
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as end:
        return end.partial or None
    except asyncio.LimitOverrunError as long:
        await reader.readexactly(long.consumed)
    while True:  # the rest of the long line, up to its newline
        try:
            await reader.readuntil(b"\n")
            break
        except asyncio.LimitOverrunError as long:
            await reader.readexactly(long.consumed)
        except asyncio.IncompleteReadError:
            break
    raise LineTooLong
    # endregion




def parse_message(line: bytes) -> dict[str, Any]:
    """The JSON-RPC message on ``line``, or ``RpcError`` saying what is wrong with it.

    A request has an ``id`` and a ``method``, a notification only a ``method``, a response an
    ``id`` and a ``result`` or ``error``; ``params``, when present, is an object.
    """
    # region ch30: JSON object with "jsonrpc": "2.0"; else PARSE_ERROR or INVALID_REQUEST
    # more: json.loads (UnicodeDecodeError, ValueError); a method is a str; params a dict
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as error:
        raise RpcError(PARSE_ERROR, f"not JSON: {error}") from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")')
    if "method" in message:
        if not isinstance(message["method"], str):
            raise RpcError(INVALID_REQUEST, "the method is not a string")
        if not isinstance(message.get("params", {}), dict):
            raise RpcError(INVALID_PARAMS, "params is not an object")
    elif "id" not in message or not ("result" in message or "error" in message):
        raise RpcError(INVALID_REQUEST, "neither a request nor a response")
    request: dict[str, Any] = message
    return request
    # endregion




class Wire:
    """Newline-delimited JSON-RPC on a pair of streams: messages out, requests to the client."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        """Write to ``writer``; answers to claw's own requests come through ``answered``."""
        self.writer = writer
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line (``ensure_ascii``: no line separator survives in it)."""
        if not self.writer.is_closing():
            self.writer.write(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification: no answer comes."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request to the client and wait for its result (``RpcError`` for its error)."""
        self.next_id += 1
        request_id = self.next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        try:
            self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            await self.writer.drain()
            return await future
        finally:
            self.waiting.pop(request_id, None)

    def answered(self, message: dict[str, Any]) -> None:
        """Hand a response from the client to the request waiting for it (others are dropped)."""
        future = self.waiting.get(message["id"]) if isinstance(message["id"], int) else None
        if future is None or future.done():
            return
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(
                RpcError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")))
            )
        else:
            future.set_result(message["result"])


def text_of(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, (list, tuple)) else ()
    return "".join(str(getattr(part, "text", "")) for part in parts)


def prompt_text(blocks: object) -> str:
    """The prompt in a ``session/prompt``'s content blocks: text, and embedded files' text.

    An embedded resource (a file the user attached in the editor) is given to the model as
    ``<file uri="...">...</file>``; anything else is ``RpcError`` ``INVALID_PARAMS``.
    """
    if not isinstance(blocks, list) or not blocks:
        raise RpcError(INVALID_PARAMS, "prompt must be a non-empty list of content blocks")
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            texts.append(
                f'<file uri="{resource.get("uri", "")}">\n{resource.get("text", "")}\n</file>'
            )
        elif kind == "resource_link":
            texts.append(f"(see {block.get('uri', '')})")
        else:
            raise RpcError(INVALID_PARAMS, f"claw takes text and embedded files, not {kind!r}")
    return "\n\n".join(texts)


def project_folder(params: dict[str, Any]) -> Path:
    """The session's folder, ``params["cwd"]``: an absolute path, else ``INVALID_PARAMS``."""
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not Path(cwd).is_absolute():
        raise RpcError(INVALID_PARAMS, "cwd must be an absolute path")
    return Path(cwd)


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """What the editor shows for a call: the tool and its path, command or pattern."""
    for key in ("path", "command", "pattern", "url"):
        if isinstance(arguments.get(key), str):
            return f"{name} {arguments[key]}"[:200]
    return name


def read_text(path: Path) -> str | None:
    """The file's text, or ``None`` when it does not exist or is not text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class PromptTurn:
    """What one prompt turn remembers between events: files before edits, a refusal."""

    cwd: Path
    before: dict[str, tuple[Path, str | None]] = field(default_factory=dict)
    """Each edit call's file and its text before the call, by call id."""
    refused: bool = False
    """A permission question went unanswered: the turn ends ``refusal``."""


def updates_for(event: Event, turn: PromptTurn) -> list[dict[str, Any]]:
    """The ``session/update`` payloads that tell the editor about ``event`` (often none).

    Streamed text is an ``agent_message_chunk``; a tool call is a ``tool_call`` (``pending``,
    with its ``kind``, ``title``, ``rawInput`` and the file it touches as a location); its
    result a ``tool_call_update``, ``completed`` or ``failed``, whose content is the output
    text, and for a call that changed a file also a ``diff`` (the file's whole old and new
    text); the todo list is the ``plan``.
    """
    from .events import TodosChanged, ToolCalled, ToolResult
    from .streaming import TextDelta

    # region ch30: TextDelta, ToolCalled, ToolResult (a diff if an edit changed it), TodosChanged
    # more: turn.before[call id] = (path, read_text(path)) for edit kinds; oldText None: a new file
    if isinstance(event, TextDelta):
        return [
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": event.text},
            }
        ]
    if isinstance(event, ToolCalled):
        kind = TOOL_KINDS.get(event.name, "other")
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call",
            "toolCallId": event.id,
            "title": tool_title(event.name, event.arguments),
            "kind": kind,
            "status": "pending",
            "rawInput": event.arguments,
        }
        path = event.arguments.get("path")
        if isinstance(path, str):
            where = (turn.cwd / path).resolve()
            update["locations"] = [{"path": str(where)}]
            if kind == "edit":
                turn.before[event.id] = (where, read_text(where))
        return [update]
    if isinstance(event, ToolResult):
        content: list[dict[str, Any]] = []
        if event.id in turn.before and not event.is_error:
            where, old = turn.before.pop(event.id)
            new = read_text(where)
            if new not in (None, old):
                content.append({"type": "diff", "path": str(where), "oldText": old, "newText": new})
        content.append({"type": "content", "content": {"type": "text", "text": event.output}})
        return [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": event.id,
                "status": "failed" if event.is_error else "completed",
                "content": content,
            }
        ]
    if isinstance(event, TodosChanged):
        entries = [
            {"content": item.content, "priority": "medium", "status": item.status}
            for item in event.todos
        ]
        return [{"sessionUpdate": "plan", "entries": entries}]
    return []
    # endregion




def replay(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``session/update`` payloads that show a loaded session's conversation again.

    Each prompt is a ``user_message_chunk``, each answer an ``agent_message_chunk``, each tool
    call a ``tool_call`` with its result already in (``completed`` or ``failed``). The system
    prompt and claw's own context messages are not shown.
    """
    from .types import AssistantMessage, ToolResultMessage, UserMessage

    updates: list[dict[str, Any]] = []
    results = {m.tool_call_id: m for m in history if isinstance(m, ToolResultMessage)}
    for message in history:
        if isinstance(message, UserMessage):
            text = {"type": "text", "text": text_of(message.content)}
            updates.append({"sessionUpdate": "user_message_chunk", "content": text})
        elif isinstance(message, AssistantMessage):
            if text_of(message.content):
                text = {"type": "text", "text": text_of(message.content)}
                updates.append({"sessionUpdate": "agent_message_chunk", "content": text})
            for call in message.tool_calls:
                result = results.get(call.id)
                status = "failed" if result is None or result.is_error else "completed"
                output = result.content if result is not None else ""
                updates.append(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": call.id,
                        "title": tool_title(call.name, call.arguments),
                        "kind": TOOL_KINDS.get(call.name, "other"),
                        "status": status,
                        "rawInput": call.arguments,
                        "content": [
                            {"type": "content", "content": {"type": "text", "text": output}}
                        ],
                    }
                )
    return updates


class EditorApprover:
    """Chapter 13's approver for a session: each question goes to the editor.

    ``allow_once`` is ``Approval.ONCE``, ``allow_always`` is ``Approval.SESSION`` (an allow
    rule for the rest of the session); a reject, a cancelled question, an error from the
    client and no answer within ``timeout`` seconds are ``Approval.DENY``. Without an answer,
    the turn is marked refused, so that the prompt answers ``refusal``.
    """

    def __init__(self, wire: Wire, session_id: str, timeout: float = PERMISSION_TIMEOUT) -> None:
        """Ask over ``wire`` for the session ``session_id``; give up after ``timeout``."""
        self.wire = wire
        self.session_id = session_id
        self.timeout = timeout
        self.turn: PromptTurn | None = None

    async def __call__(self, call: ToolCall, why: str) -> Approval:
        """The editor's answer about ``call`` (``why`` is shown as the call's content)."""
        from .permissions import Approval

        # region ch30: session/request_permission with the call and PERMISSION_OPTIONS, in timeout
        # more: asyncio.timeout(self.timeout); outcome "selected", optionId; else DENY; turn.refused
        tool_call = {
            "toolCallId": call.id,
            "title": tool_title(call.name, call.arguments),
            "kind": TOOL_KINDS.get(call.name, "other"),
            "status": "pending",
            "rawInput": call.arguments,
            "content": [{"type": "content", "content": {"type": "text", "text": why}}],
        }
        params = {
            "sessionId": self.session_id,
            "toolCall": tool_call,
            "options": list(PERMISSION_OPTIONS),
        }
        try:
            async with asyncio.timeout(self.timeout):
                answer = await self.wire.request("session/request_permission", params)
        except TimeoutError:
            if self.turn is not None:
                self.turn.refused = True
            return Approval.DENY
        except RpcError:
            return Approval.DENY
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return Approval.DENY  # a reject is a selected option; cancelled, or nonsense, is a no
        chosen = {"allow_once": Approval.ONCE, "allow_always": Approval.SESSION}
        return chosen.get(str(outcome.get("optionId")), Approval.DENY)
        # endregion




@dataclass
class AcpSession:
    """A session the editor opened: the assembled claw that runs its prompts, its approver."""

    id: str
    cwd: Path
    claw: Claw
    approver: EditorApprover
    warn: Callable[[str], object] | None = None
    """Where a hook's warning goes (the editor shows claw's stderr in its log)."""
    running: asyncio.Task[Any] | None = None


Opener = Callable[
    [Path, "str | None", EditorApprover], contextlib.AbstractAsyncContextManager[AcpSession]
]
"""Opens claw for a session in a folder (``None``: a new session, else the id to load), with
the editor as its approver."""


class AcpServer:
    """The agent side of ACP: reads the client's messages, answers each, runs the prompts."""

    def __init__(self, wire: Wire, opener: Opener) -> None:
        """Answer on ``wire``; open each session's claw with ``opener``."""
        self.wire = wire
        self.opener = opener
        self.initialized = False
        self.sessions: dict[str, AcpSession] = {}
        self.stack = contextlib.AsyncExitStack()
        self.tasks: set[asyncio.Task[None]] = set()
        self.missing: NotImplementedError | None = None
        """A stub a request reached: ``serve`` stops and raises it (the code is not written)."""
        self.reading: asyncio.Task[Any] | None = None

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Read and answer messages until the input ends; then close every session.

        A stub that a request reached (``NotImplementedError``) ends it: it is raised here.
        """
        self.reading = asyncio.current_task()
        async with self.stack:
            try:
                while True:
                    try:
                        line = await read_line(reader)
                    except LineTooLong:
                        self.wire.send(
                            error_response(
                                None, INVALID_REQUEST, f"line longer than {MAX_LINE} bytes"
                            )
                        )
                        continue
                    if line is None:
                        break
                    if line.strip():
                        self.received(line)
                    await self.wire.writer.drain()
            except asyncio.CancelledError:
                if self.missing is None:
                    raise
                raise self.missing from None
            finally:
                for task in list(self.tasks):
                    task.cancel()
                await asyncio.gather(*self.tasks, return_exceptions=True)

    def received(self, line: bytes) -> None:
        """Handle one line: a response goes to its request, a request is answered in a task."""
        try:
            message = parse_message(line)
        except RpcError as error:
            self.wire.send(error_response(None, error.code, error.message))
            return
        if "method" not in message:
            self.wire.answered(message)
            return
        task = asyncio.create_task(self.answer(message))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def answer(self, message: dict[str, Any]) -> None:
        """Run the method and send its result (or error); a notification is never answered."""
        is_request = "id" in message
        try:
            result = await self.dispatch(message["method"], message.get("params", {}))
        except RpcError as error:
            if is_request:
                self.wire.send(error_response(message["id"], error.code, error.message))
        except NotImplementedError as missing:  # a stub: the client is told, then claw stops
            if is_request:
                self.wire.send(error_response(message["id"], INTERNAL_ERROR, f"claw: {missing}"))
            self.missing = missing
            if self.reading is not None:
                self.reading.cancel()
        except Exception as error:  # claw's own bug: the client is told, claw keeps serving
            if is_request:
                self.wire.send(error_response(message["id"], INTERNAL_ERROR, f"claw: {error}"))
        else:
            if is_request:
                self.wire.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        await self.wire.writer.drain()

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        """The result of ``method``; ``RpcError`` for a request claw cannot answer."""
        # region ch30: initialize first; the session methods; session/cancel; else METHOD_NOT_FOUND
        # more: project_folder(params); a session claw does not know is RESOURCE_NOT_FOUND
        if method == "initialize":
            self.initialized = True
            return {
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                    "mcpCapabilities": {"http": False, "sse": False},
                },
                "authMethods": [],
                "agentInfo": {"name": "claw", "title": "claw", "version": "1.0"},
            }
        if not self.initialized:
            raise RpcError(INVALID_REQUEST, f"{method} before initialize")
        if method == "session/new":
            opened = await self.open(project_folder(params), None)
            return {"sessionId": opened.id}
        if method == "session/load":
            session_id = params.get("sessionId")
            if not isinstance(session_id, str):
                raise RpcError(INVALID_PARAMS, "sessionId must be a string")
            opened = await self.open(project_folder(params), session_id)
            for update in replay(opened.claw.agent.history):
                self.wire.notify("session/update", {"sessionId": opened.id, "update": update})
            return None
        if method in ("session/prompt", "session/cancel"):
            session = self.sessions.get(str(params.get("sessionId")))
            if session is None:
                raise RpcError(RESOURCE_NOT_FOUND, f"unknown session: {params.get('sessionId')}")
            if method == "session/cancel":
                session.claw.agent.cancel()
                return None
            return {"stopReason": await self.prompt(session, prompt_text(params.get("prompt")))}
        raise RpcError(METHOD_NOT_FOUND, f"claw has no method {method}")
        # endregion


    async def open(self, cwd: Path, session_id: str | None) -> AcpSession:
        """Open claw for a session in ``cwd`` (loading ``session_id``, if given)."""
        from .transcript import TranscriptError

        approver = EditorApprover(self.wire, "")
        try:
            session = await self.stack.enter_async_context(self.opener(cwd, session_id, approver))
        except TranscriptError as error:  # chapter 22: no such session in this folder
            raise RpcError(RESOURCE_NOT_FOUND, str(error)) from None
        approver.session_id = session.id
        self.sessions[session.id] = session
        return session

    async def prompt(self, session: AcpSession, text: str) -> str:
        """Run one prompt turn in ``session``, streaming its updates; the stop reason."""
        from .events import RunFinished, TodosChanged

        if session.running is not None and not session.running.done():
            raise RpcError(INVALID_REQUEST, "a prompt is already running in this session")
        session.running = asyncio.current_task()
        turn = PromptTurn(session.cwd)
        session.approver.turn = turn

        def observe(event: Event) -> None:  # the todo list reaches only the agent's observers
            for update in updates_for(event, turn) if isinstance(event, TodosChanged) else []:
                self.wire.notify("session/update", {"sessionId": session.id, "update": update})

        def show(event: Event) -> None:
            for update in updates_for(event, turn):
                self.wire.notify("session/update", {"sessionId": session.id, "update": update})

        agent = session.claw.agent
        agent.sink.add(observe)
        try:
            finished = await session.claw.run(text, show, warn=session.warn)
        finally:
            agent.sink.observers.remove(observe)
            session.running = None
        if not isinstance(finished, RunFinished):  # a UserPromptSubmit hook blocked the prompt
            return "refusal"
        reason = STOP_REASONS.get(str(finished.reason), "end_turn")
        return "refusal" if turn.refused and reason != "cancelled" else reason



@contextlib.asynccontextmanager
async def claw_session(
    options: Sequence[str], cwd: Path, session_id: str | None, approver: EditorApprover, err: TextIO
) -> AsyncIterator[AcpSession]:
    """Claw, assembled as ``claw OPTIONS`` would be, for a session in ``cwd``.

    The editor is the approver; nobody can be asked a question (``ask_user`` gets no answer);
    the folder's trust is what it was (claw cannot ask about it: its standard input is the
    protocol). Everything claw would print goes to ``err``.
    """
    from .assemble import open_claw
    from .display import warner
    from .options import parse_arguments
    from .tools.ask import no_one_to_ask

    arguments = parse_arguments([*options, *(["--resume", session_id] if session_id else [])])

    async def no_line() -> str:
        return ""

    async with open_claw(
        arguments, out=err, err=err, read_line=no_line, approve=approver, ask=no_one_to_ask, cwd=cwd
    ) as claw:
        if claw.recorder is None:
            raise RpcError(INTERNAL_ERROR, "claw cannot keep sessions here (see its stderr)")

        yield AcpSession(claw.recorder.writer.path.stem, cwd, claw, approver, warner(err))


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Standard input and output as asyncio streams (the input's lines up to ``MAX_LINE``)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve_stdio(options: Sequence[str]) -> None:
    """Serve one editor on standard input and output until it closes the input."""
    reader, writer = await stdio_streams()
    wire = Wire(writer)

    def opener(
        cwd: Path, session_id: str | None, approver: EditorApprover
    ) -> contextlib.AbstractAsyncContextManager[AcpSession]:
        return claw_session(options, cwd, session_id, approver, sys.stderr)

    await AcpServer(wire, opener).serve(reader)


def main(argv: Sequence[str]) -> int:
    """``claw acp [OPTIONS]``: serve an editor over ACP; ``OPTIONS`` are ``claw``'s own."""
    from .options import parse_arguments

    parse_arguments(list(argv))  # a wrong option is a usage error now, not at the first session
    asyncio.run(serve_stdio(argv))
    return 0
