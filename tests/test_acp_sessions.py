"""ch30 · Sessions over ACP: chapter 22's sessions loaded and replayed, the page's transcript,
and ``claw acp`` as a real process on its standard input and output.
"""

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import acp
import pytest
from acp_client import Editor, editor
from acp_transcript import TRANSCRIPT, exchange
from claw_command import calls, no_fsync, says
from claw_process import (
    TIMEOUT,
    claw_arguments,
    claw_environment,
    end,
    raise_todo,
    run_cli_and_exit,
)

from claw.sessions import list_sessions
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here
T = TypeVar("T")


async def test_acp_load_session_replays_the_conversation_and_goes_on_with_it(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    server.add(calls("read", {"path": "notes.txt"}), says("It says buy milk."))
    async with editor(server, monkeypatch) as (client, _, _):
        first = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=first.session_id, prompt=[acp.text_block("read notes")])
    server.add(says("You asked about the notes."))
    async with editor(server, monkeypatch) as (client, seen, _):
        await client.load_session(cwd=str(tmp_path), session_id=first.session_id, mcp_servers=[])
        replayed = list(seen.updates)
        answer = await client.prompt(
            session_id=first.session_id, prompt=[acp.text_block("what did I ask?")]
        )
    assert [update.session_update for _, update in replayed] == [
        "user_message_chunk",
        "tool_call",
        "agent_message_chunk",
    ]
    user, call, text = (update for _, update in replayed)
    assert user.content.text == "read notes"
    assert (call.tool_call_id, call.status, call.kind) == ("call-1", "completed", "read")
    assert "buy milk" in call.content[0].content.text
    assert text.content.text == "It says buy milk."
    assert {sid for sid, _ in replayed} == {first.session_id}
    assert answer.stop_reason == "end_turn"
    sent = server.requests[-1].json["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "user"]


async def test_acp_each_session_works_in_the_folder_it_was_opened_for(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "notes.txt").write_text(f"the notes of {folder.name}\n")
    monkeypatch.chdir(tmp_path)  # claw acp was started somewhere else
    server.add(
        calls("read", {"path": "notes.txt"}, "call-a"),
        says("First."),
        calls("read", {"path": "notes.txt"}, "call-b"),
        says("Second."),
    )
    async with editor(server, monkeypatch) as (client, seen, _):
        one = await client.new_session(cwd=str(first))
        two = await client.new_session(cwd=str(second))
        await client.prompt(session_id=one.session_id, prompt=[acp.text_block("read")])
        await client.prompt(session_id=two.session_id, prompt=[acp.text_block("read")])
    results = {
        update.tool_call_id: update.content[0].content.text
        for _, update in seen.updates
        if update.session_update == "tool_call_update"
    }
    assert "the notes of first" in results["call-a"]
    assert "the notes of second" in results["call-b"]
    assert [info.id for info in list_sessions(first)] == [one.session_id]
    assert [info.id for info in list_sessions(second)] == [two.session_id]


async def test_acp_load_of_an_unknown_session_is_resource_not_found(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with editor(server, monkeypatch) as (client, _, _):
        with pytest.raises(acp.RequestError) as refused:
            await client.load_session(cwd=str(tmp_path), session_id="nope")
        session = await client.new_session(cwd=str(tmp_path))
    assert refused.value.code == -32002 and "no session 'nope'" in str(refused.value)
    assert session.session_id != "nope"


async def test_acp_new_session_needs_an_absolute_folder(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with editor(server, monkeypatch) as (client, _, _):
        with pytest.raises(acp.RequestError) as refused:
            await client.new_session(cwd="relative/folder")
    assert refused.value.code == -32602
    assert str(refused.value) == "cwd must be an absolute path"


async def test_acp_page_transcript_is_what_claw_sends_now(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = await exchange(server, tmp_path, monkeypatch)
    shown = TRANSCRIPT.read_text().splitlines()
    assert lines == shown, "run `python -m tests.acp_transcript` and look at the difference"


def test_acp_command_serves_the_official_client_on_its_stdio(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """The one test with a real ``claw acp`` process: its standard streams are the subject.

    The process is forked (``claw_process``); the official client talks to it through the
    pipes that are its standard input and output, as an editor does.
    """
    to_claw_read, to_claw_write = os.pipe()
    from_claw_read, from_claw_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(to_claw_read, 0)
            os.dup2(from_claw_write, 1)
            os.dup2(os.open(tmp_path / "stderr.txt", os.O_WRONLY | os.O_CREAT), 2)
            for fd in (to_claw_read, to_claw_write, from_claw_read, from_claw_write):
                os.close(fd)
        finally:
            argv = claw_arguments(server, "acp")
            run_cli_and_exit(["acp", *argv[1:]], tmp_path, claw_environment(tmp_path))
    os.close(to_claw_read)
    os.close(from_claw_write)
    server.add(says("Hello over stdio."))

    async def answered(request: Awaitable[T]) -> T:
        """``request``'s answer; claw ending first is its ``Todo``, or a failure."""
        waiting = asyncio.ensure_future(request)
        deadline = time.monotonic() + TIMEOUT  # only to stop a hang
        while not waiting.done() and os.waitpid(pid, os.WNOHANG) == (0, 0):
            await asyncio.wait([waiting], timeout=0.02)
            assert time.monotonic() < deadline, f"no answer within {TIMEOUT} s"
        if waiting.done() and waiting.exception() is None:
            return waiting.result()
        waiting.cancel()  # claw ended, or closed its output: at a stub of yours?
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise_todo((tmp_path / "stderr.txt").read_text())
        raise AssertionError("claw acp ended before it answered")

    async def talk() -> tuple[str, str]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(from_claw_read, "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(to_claw_write, "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        seen = Editor()
        client = acp.connect_to_agent(seen, writer, reader)
        await answered(client.initialize(protocol_version=1))
        session = await answered(client.new_session(cwd=str(tmp_path)))
        answer = await answered(
            client.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
        )
        await client.close()
        writer.close()  # the end of claw's input, as when the editor closes the pipe
        return answer.stop_reason, seen.text()

    try:
        assert asyncio.run(talk()) == ("end_turn", "Hello over stdio.")
        _, status = os.waitpid(pid, 0)  # the input ended: claw closes its sessions and exits 0
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        end(pid)
