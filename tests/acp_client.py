"""The official ACP client, connected to claw's ACP agent in this process (chapter 30's tests).

``editor`` opens the ``agent-client-protocol`` package's client-side connection (what an editor
written in Python would use) to ``claw.acp``'s server over two ``os.pipe`` pairs on the test's
own event loop: no process per test. The package's pydantic schema types parse every message
claw sends; an update they reject never reaches ``Editor.updates``, an answer they reject
raises in the test. ``raw`` gives the pipes themselves, for the tests that play a broken client.
Every line on the pipes, both ways, is kept in ``Pipes.lines`` (the page's transcript).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from claw import acp as claw_acp
from clawbook.harness.loopback import LoopbackServer


async def pipe() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An ``os.pipe`` as asyncio streams: what is written to the writer, the reader reads."""
    loop = asyncio.get_running_loop()
    read_end, write_end = os.pipe()
    reader = asyncio.StreamReader(limit=claw_acp.MAX_LINE)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_end, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(write_end, "wb", 0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


class Tap(asyncio.StreamWriter):
    """A stream writer that also keeps each line written, with who wrote it."""

    def __init__(self, inner: asyncio.StreamWriter, who: str, lines: list[tuple[str, str]]) -> None:
        super().__init__(inner.transport, inner._protocol, None, inner._loop)  # type: ignore[attr-defined]
        self.who, self.lines, self.partial = who, lines, b""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.partial += bytes(data)
        *whole, self.partial = self.partial.split(b"\n")
        for line in whole:
            self.lines.append((self.who, line.decode("utf-8", "replace")))
        super().write(data)


@dataclass
class Editor:
    """What the editor side saw, and how it answers permission questions."""

    answer: str | None = "allow_once"
    """The option chosen for every question; ``None``: never answer (the question hangs)."""
    updates: list[tuple[str, Any]] = field(default_factory=list)
    """Each ``session/update``: the session id and the update, as the package parsed it."""
    questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    """Each permission question: the call and the options."""
    asked: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        """Record the question; answer ``self.answer`` (or never)."""
        self.questions.append((tool_call, options))
        self.asked.set()
        if self.answer is None:
            await asyncio.Event().wait()
        if self.answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Record the update."""
        self.updates.append((session_id, update))

    def kinds(self) -> list[str]:
        """The ``sessionUpdate`` of each update, in order."""
        return [update.session_update for _, update in self.updates]

    def text(self) -> str:
        """The agent's streamed text, joined."""
        return "".join(
            update.content.text
            for _, update in self.updates
            if update.session_update == "agent_message_chunk"
        )


@dataclass
class Pipes:
    """The two directions of a connection, as raw streams, and every line sent."""

    to_agent: asyncio.StreamWriter
    from_agent: asyncio.StreamReader
    lines: list[tuple[str, str]]

    async def send(self, data: bytes) -> None:
        """Write ``data`` as the client."""
        self.to_agent.write(data)
        await self.to_agent.drain()

    async def receive(self) -> dict[str, Any]:
        """The agent's next message."""
        line = await asyncio.wait_for(self.from_agent.readline(), 30)
        assert line, "the agent closed its output"
        message: dict[str, Any] = json.loads(line)
        return message


def opener(
    server: LoopbackServer, *options: str
) -> Callable[[Path, str | None, claw_acp.EditorApprover], Any]:
    """Open each session's claw as ``claw acp --model test/model --base-url SERVER OPTIONS``."""
    import io

    def open_session(cwd: Path, session_id: str | None, approver: claw_acp.EditorApprover) -> Any:
        arguments = ["--model", "test/model", "--base-url", server.base_url, *options]
        return claw_acp.claw_session(arguments, cwd, session_id, approver, io.StringIO())

    return open_session


@contextlib.asynccontextmanager
async def raw(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, *options: str
) -> AsyncIterator[Pipes]:
    """claw's ACP agent serving in this loop; the test writes and reads the raw lines."""
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.chdir(os.getcwd())  # claw_session changes folder; the test's is put back
    agent_in, client_out = await pipe()
    client_in, agent_out = await pipe()
    lines: list[tuple[str, str]] = []
    wire = claw_acp.Wire(Tap(agent_out, "agent", lines))
    serving = asyncio.create_task(
        claw_acp.AcpServer(wire, opener(server, *options)).serve(agent_in)
    )
    test = asyncio.current_task()

    def stop_the_test(task: asyncio.Task[None]) -> None:  # claw stopped early: at a stub, say
        if not task.cancelled() and task.exception() is not None and test is not None:
            test.cancel()  # the finally below raises what stopped claw

    serving.add_done_callback(stop_the_test)
    try:
        yield Pipes(Tap(client_out, "client", lines), client_in, lines)
    finally:
        client_out.close()  # the end of the agent's input: it closes its sessions and returns
        await asyncio.wait_for(serving, 30)
        agent_out.close()


@contextlib.asynccontextmanager
async def editor(
    server: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    *options: str,
    answer: str | None = "allow_once",
) -> AsyncIterator[tuple[acp.core.ClientSideConnection, Editor, Pipes]]:
    """The official client, initialized, connected to claw's agent."""
    async with raw(server, monkeypatch, *options) as pipes:
        seen = Editor(answer)
        connection = acp.connect_to_agent(seen, pipes.to_agent, pipes.from_agent)
        await connection.initialize(protocol_version=acp.PROTOCOL_VERSION)
        try:
            yield connection, seen, pipes
        finally:
            await connection.close()
