"""One connection to an MCP server over stdio: start it, shake hands, list and call its tools.

The server is a child process in a session of its own (``start_new_session``), so that when
claw stops it, every process it started goes too (chapter 10's ``stop_session``). Two
background tasks read from it: one reads its standard output, a message a line, and hands each
response to the request waiting for it (by ``id``); the other keeps the last
``STDERR_LIMIT`` bytes of its standard error for the user. Whatever the server does (writes
nonsense, exits in the middle of a call, never answers), a request ends with an ``McpError``
that says what happened, in a bounded time, and claw goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ClawError
from ..tools.bash import started, stop_session
from .jsonrpc import (
    MAX_SHOWN,
    METHOD_NOT_FOUND,
    ProtocolError,
    RemoteError,
    decode,
    encode,
    notification,
    request,
)

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The MCP protocol versions claw speaks, newest first. It offers the first.

The versions the official SDK's client accepts in ``initialize``; many deployed servers still
answer ``2024-11-05``.
"""

CLIENT_INFO = {"name": "claw", "version": "0.1"}
"""How claw introduces itself in ``initialize``."""

STDERR_LIMIT = 16 * 1024
"""How many bytes of a server's standard error claw keeps: the last ones."""

LINE_LIMIT = 16 * 1024 * 1024
"""The longest line claw reads from a server (a large tool result is one line)."""

MAX_PAGES = 100
"""How many pages of ``tools/list`` claw follows before it calls the cursor a loop."""

BANNER_LINES = 100
"""How many lines that are not messages a server may write before its first message.

Some servers print a banner to their standard output when they start; claw keeps those lines
with the server's stderr (each longer than ``LINE_LIMIT`` still breaks the connection, and
``start_timeout`` bounds the time) and goes on. Past this many, the server is not speaking MCP.
"""

CALL_TIMEOUT = 120.0
"""Seconds claw waits for the answer to a tool call (Claude Code's ``MCP_TOOL_TIMEOUT``)."""

START_TIMEOUT = 30.0
"""Seconds claw waits for the answer to ``initialize`` (Claude Code's ``MCP_TIMEOUT``)."""

POLL_SECONDS = 0.02
"""How often claw looks whether a server has exited."""

STOP_GRACE = 2.0
"""Seconds a server has to exit once its input is closed, then again after ``SIGTERM``."""


async def exit_code(process: asyncio.subprocess.Process, seconds: float) -> int | None:
    """``process``'s exit code, waiting up to ``seconds`` for it to exit; ``None`` if it runs.

    Not ``process.wait()``: that also waits until every pipe is closed, and a child the
    server started may hold its stderr open long after the server itself is gone.
    """
    deadline = asyncio.get_running_loop().time() + seconds
    while process.returncode is None and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(POLL_SECONDS)
    return process.returncode


class McpError(ClawError):
    """Something went wrong with an MCP server; the message says which server and what."""


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server: ``.mcp.json``'s ``command``, ``args`` and ``env``, by name."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    """The schema its ``structuredContent`` must match, if the server gave one."""


class StderrTail:
    """The last ``limit`` bytes a server wrote to its standard error, and how many came before."""

    def __init__(self, limit: int = STDERR_LIMIT) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        """Keep ``data``; drop the oldest bytes beyond ``limit``."""
        self.kept += data
        extra = len(self.kept) - self.limit
        if extra > 0:
            del self.kept[:extra]
            self.dropped += extra

    def text(self) -> str:
        """What is kept, as text (bytes that are not UTF-8 replaced)."""
        return self.kept.decode("utf-8", "replace")

    def last_lines(self, count: int = 3) -> str:
        """The last ``count`` non-blank lines, joined with `` | ``: for an error message."""
        lines = [line.strip() for line in self.text().splitlines() if line.strip()]
        return " | ".join(lines[-count:])


class McpClient:
    """A connection to the server ``spec`` describes. ``await start()``, then use, then ``close()``.

    ``tools`` is the server's tool list as last listed; when the server says it changed
    (``notifications/tools/list_changed``), the client lists again and calls ``on_tools_changed``.
    ``warn`` receives what claw skipped of the server's answers (by default, ``warnings``
    keeps it).
    """

    def __init__(
        self,
        spec: ServerSpec,
        cwd: Path | None = None,
        *,
        call_timeout: float = CALL_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.spec = spec
        self.cwd = cwd
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        self.stderr = StderrTail()
        self.tools: list[RemoteTool] = []
        self.on_tools_changed: Callable[[McpClient], None] | None = None
        self.protocol_version: str | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = itertools.count(1)
        self.broken: str | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.warnings: list[str] = []
        self.warn = warn if warn is not None else self.warnings.append
        self.refreshing: asyncio.Task[None] | None = None
        self.relist = False

    @property
    def name(self) -> str:
        """The server's name in the configuration."""
        return self.spec.name

    def explain(self, what: str) -> str:
        """``what`` went wrong, said of this server, with the end of its stderr if it wrote any."""
        text = f"MCP server {self.name!r}: {what}"
        last = self.stderr.last_lines()
        return f"{text} (its stderr ends: {last})" if last else text

    async def start(self) -> None:
        """Start the server in a session of its own, then shake hands and list its tools.

        A command that cannot be started, or a handshake that fails, raises ``McpError``, and
        nothing of the server is left running.
        """
        self.process = await started(self.launch())
        self.spawn(self.read_messages())
        self.spawn(self.read_stderr())
        try:
            await self.initialize()
            self.tools = await self.list_tools()
        except BaseException:
            await self.close()
            raise

    async def launch(self) -> asyncio.subprocess.Process:
        """Start the server's command with three pipes, in a new session, with its ``env``.

        Its environment is claw's (secrets already hidden, chapter 10) with the server's
        ``env`` on top. A command that cannot be started raises ``McpError``.
        """
        # region ch23: create_subprocess_exec with stdin, stdout, stderr PIPE and a new session
        # more: cwd=self.cwd, env={**os.environ, **self.spec.env}, limit=LINE_LIMIT; OSError
        try:
            return await asyncio.create_subprocess_exec(
                self.spec.command,
                *self.spec.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env={**os.environ, **self.spec.env},
                start_new_session=True,
                limit=LINE_LIMIT,
            )
        except OSError as error:
            why = f"cannot start {self.spec.command!r}: {error}"
            raise McpError(f"MCP server {self.name!r}: {why}") from None
        # endregion


    def spawn(self, work: Any) -> asyncio.Task[None]:
        """Run ``work`` in the background, holding a reference until it ends; its task.

        If it fails (a bug in claw, not the server), every waiting request gets its exception.
        """
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.finished)
        return task

    def finished(self, task: asyncio.Task[None]) -> None:
        """A background task ended: hand on its exception, if it raised one."""
        self.tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is None:
            return
        self.broken = self.broken or f"claw's reader failed: {error!r}"
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()

    # --8<-- [start:read]
    async def read_messages(self) -> None:
        """Read the server's messages until its output ends; hand each to its receiver.

        A response goes to the request with its ``id``; a request from the server is answered;
        a notification is handled. A line that is not a message breaks the connection: claw
        cannot tell which request it was meant to answer. Only before the server's first
        message, up to ``BANNER_LINES`` such lines (a banner) are kept with its stderr instead.
        """
        assert self.process is not None and self.process.stdout is not None
        # region ch23: readline until b""; decode and dispatch each line; at the end, fail all
        # more: ProtocolError, or ValueError (a line too long): self.fail(why) and return
        reader = self.process.stdout
        heard, banner = False, 0
        while True:
            try:
                line = await reader.readline()
            except ValueError:
                self.fail(f"the server wrote a line longer than {LINE_LIMIT} bytes")
                while await reader.read(LINE_LIMIT):  # the rest, unread, would keep the pipe
                    pass  # (and the server, blocked writing it) open until claw exits
                return
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = decode(line)
            except ProtocolError as error:
                if not heard and banner < BANNER_LINES:
                    banner += 1
                    self.stderr.add(b"(stdout) " + line.strip() + b"\n")
                    continue
                self.fail(str(error))
                return
            heard = True
            self.dispatch(message)
        code = await exit_code(self.process, STOP_GRACE)
        gone = "closed its output" if code is None else f"exited (exit code {code})"
        self.fail(f"the server {gone}")
        # endregion

    def dispatch(self, message: dict[str, Any]) -> None:
        """Hand one message to whoever waits for it."""
        # region ch23: a response resolves its future; a request gets an answer; a notification
        # more: "method" and "id": answer ping with {}, else METHOD_NOT_FOUND; list_changed: relist
        method = message.get("method")
        if method is None:
            future = self.pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" in message:
            if method == "ping":
                answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
            else:
                error = {"code": METHOD_NOT_FOUND, "message": f"claw does not offer {method}"}
                answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            self.send(answer)
        elif method == "notifications/tools/list_changed":
            self.tools_changed()
        # endregion

    # --8<-- [end:read]

    async def read_stderr(self) -> None:
        """Keep the end of the server's standard error.

        Reading all of it also keeps a chatty server from blocking on a full pipe.
        """
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr.add(chunk)

    def fail(self, why: str) -> None:
        """The connection is broken for ``why``: every waiting request ends with ``McpError``."""
        if self.broken is None:
            self.broken = why
        for future in self.pending.values():
            if not future.done():
                future.set_exception(McpError(self.explain(self.broken)))
        self.pending.clear()

    def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` to the server's input, if it still reads it."""
        stdin = self.process.stdin if self.process is not None else None
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(encode(message))

    # --8<-- [start:request]
    async def request(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        """Send a request and return the ``result`` of its answer.

        An ``error`` answer raises ``RemoteError``; a broken connection or no answer within
        ``timeout`` seconds raises ``McpError``. When the caller is cancelled, or gives up
        waiting, the server is told with ``notifications/cancelled`` naming the request's id.
        """
        if self.broken is not None:
            raise McpError(self.explain(self.broken))
        # region ch23: a future per id in self.pending; send; wait; tell the server if claw gives up
        # more: asyncio.wait_for; TimeoutError: McpError; CancelledError: self.cancel(id, why)
        id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[id] = future
        self.send(request(id, method, params))
        try:
            answer = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self.cancel(id, "claw stopped waiting for the answer")
            raise McpError(self.explain(f"no answer to {method} within {timeout:g} s")) from None
        except asyncio.CancelledError:
            self.cancel(id, "the call was cancelled in claw")
            raise
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise RemoteError(
                int(error.get("code", 0)), str(error.get("message", "")), error.get("data")
            )
        result = answer.get("result")
        if not isinstance(result, dict):
            raise McpError(self.explain(f"the answer to {method} has no result object"))
        return result
        # endregion

    def cancel(self, id: int, reason: str) -> None:
        """Forget request ``id`` and tell the server it may stop working on it."""
        self.pending.pop(id, None)
        self.send(notification("notifications/cancelled", {"requestId": id, "reason": reason}))

    # --8<-- [end:request]

    async def initialize(self) -> None:
        """The handshake: offer claw's newest version, accept the server's if claw speaks it.

        Then ``notifications/initialized`` tells the server that claw is ready. A version
        claw does not speak raises ``McpError`` naming both sides' versions.
        """
        # region ch23: request "initialize"; check result["protocolVersion"]; notify "initialized"
        # more: protocolVersion SUPPORTED_VERSIONS[0], capabilities {}, clientInfo CLIENT_INFO
        params = {
            "protocolVersion": SUPPORTED_VERSIONS[0],
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        result = await self.request("initialize", params, self.start_timeout)
        version = result.get("protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            raise McpError(
                self.explain(
                    f"the server speaks MCP version {version!r}, which claw does not support "
                    f"(claw speaks {', '.join(SUPPORTED_VERSIONS)})"
                )
            )
        self.protocol_version = str(version)
        self.send(notification("notifications/initialized"))
        # endregion


    async def list_tools(self) -> list[RemoteTool]:
        """Every tool the server has, following ``nextCursor`` from page to page."""
        # region ch23: loop: params {"cursor": c} after the first page; stop when no nextCursor
        # more: a cursor seen twice, or more than MAX_PAGES pages, is an McpError
        tools: list[RemoteTool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = await self.request("tools/list", params, self.start_timeout)
            for tool in result.get("tools", []):
                name = tool.get("name") if isinstance(tool, dict) else None
                if not isinstance(name, str) or not name:
                    shown = json.dumps(tool, ensure_ascii=False)[:MAX_SHOWN]
                    self.warn(self.explain(f"tool skipped: a tool without a name: {shown}"))
                    continue
                schema = tool.get("inputSchema") or {"type": "object"}
                if not isinstance(schema, dict) or schema.get("type", "object") != "object":
                    shown = json.dumps(tool, ensure_ascii=False)[:MAX_SHOWN]
                    self.warn(
                        self.explain(f"tool skipped: an inputSchema not of type object: {shown}")
                    )
                    continue
                output = tool.get("outputSchema")
                tools.append(
                    RemoteTool(
                        name=name,
                        description=str(tool.get("description") or ""),
                        input_schema=dict(schema),
                        output_schema=output if isinstance(output, dict) else None,
                    )
                )
            cursor = result.get("nextCursor")
            if cursor is None:
                return tools
            if cursor in seen:
                break
            seen.add(cursor)
        raise McpError(self.explain("tools/list keeps sending cursors (a loop?)"))
        # endregion


    def tools_changed(self) -> None:
        """The server said its tools changed: list them again in the background, coalesced.

        At most one listing runs; a notification that comes meanwhile marks one more, to run
        when it ends. However many notifications come, claw lists once for all of those that
        came before a listing started.
        """
        if self.refreshing is not None:
            self.relist = True
        else:
            self.refreshing = self.spawn(self.refresh_tools())

    async def refresh_tools(self) -> None:
        """List the tools again (the server said they changed), then tell ``on_tools_changed``.

        Again, as long as another notification came while it listed.
        """
        try:
            while True:
                self.relist = False
                with contextlib.suppress(McpError, RemoteError):
                    self.tools = await self.list_tools()
                    if self.on_tools_changed is not None:
                        self.on_tools_changed(self)
                if not self.relist:
                    return
        finally:
            self.refreshing = None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call tool ``name``; the raw ``CallToolResult`` (``content``, ``isError``)."""
        params = {"name": name, "arguments": arguments}
        return await self.request("tools/call", params, self.call_timeout)

    async def close(self) -> None:
        """Stop the server and everything it started; safe to call twice.

        As the transport says: close its input, give it ``STOP_GRACE`` seconds to exit, then
        ``SIGTERM`` and ``SIGKILL`` its whole session.
        """
        process = self.process
        if process is None:
            return
        self.fail("the server was stopped")
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        await exit_code(process, STOP_GRACE)
        await stop_session(process, STOP_GRACE)
        others = [task for task in self.tasks if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

