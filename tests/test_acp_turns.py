"""ch30 · Prompt turns over ACP: streamed text, tool calls, diffs, the plan, permissions, cancel.

The oracle is the official ``agent-client-protocol`` package: its client-side connection talks
to claw's agent (``acp_client.editor``, in this process), and its pydantic schema types parse
every update and answer claw sends. The model is the loopback server.
"""

import asyncio
import json
from pathlib import Path

import acp
import pytest
from acp_client import editor, raw
from claw_command import calls, no_fsync, says, tool_results
from loop_clock import LoopClock

from claw.acp import PERMISSION_TIMEOUT
from clawbook.harness.loopback import LoopbackServer, StreamReply

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def updates(seen: object, kind: str, call_id: str | None = None) -> list[object]:
    """The updates of one ``sessionUpdate`` kind (about the tool call ``call_id``, if given)."""
    return [
        update
        for _, update in seen.updates  # type: ignore[attr-defined]
        if update.session_update == kind
        and call_id in (None, getattr(update, "tool_call_id", None))
    ]


def edits(path: str, old: str, new: str, call_id: str = "edit-1") -> list[StreamReply]:
    """The model reads ``path`` (claw edits only a file it has read), then edits it."""
    edit = {"path": path, "old_string": old, "new_string": new}
    return [calls("read", {"path": path}, f"read-{call_id}"), calls("edit", edit, call_id)]


async def test_acp_prompt_streams_the_answer_as_message_chunks(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Hello from claw, chunk by chunk."))
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path), mcp_servers=[])
        answer = await client.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert answer.stop_reason == "end_turn"
    assert seen.kinds().count("agent_message_chunk") > 1, "streamed, not sent whole at the end"
    assert seen.text() == "Hello from claw, chunk by chunk."
    assert {sid for sid, _ in seen.updates} == {session.session_id}
    [request] = server.requests
    assert request.json["messages"][-1] == {"role": "user", "content": "hi"}


async def test_acp_embedded_file_in_the_prompt_reaches_the_model(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Seen."))
    attached = acp.embedded_text_resource("file:///p/app.py", "print('attached')\n")
    async with editor(server, monkeypatch) as (client, _, _):
        session = await client.new_session(cwd=str(tmp_path))
        blocks = [acp.text_block("explain"), acp.resource_block(attached)]
        await client.prompt(session_id=session.session_id, prompt=blocks)
    sent = server.requests[0].json["messages"][-1]["content"]
    assert sent == "explain\n\n<file uri=\"file:///p/app.py\">\nprint('attached')\n\n</file>"


async def test_acp_tool_call_is_reported_with_kind_title_status_and_result(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    server.add(calls("read", {"path": "notes.txt"}), says("It says buy milk."))
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("read it")])
    assert seen.kinds()[:2] == ["tool_call", "tool_call_update"]
    [started] = updates(seen, "tool_call")
    assert (started.tool_call_id, started.kind, started.title) == (
        "call-1",
        "read",
        "read notes.txt",
    )
    assert started.status == "pending" and started.raw_input == {"path": "notes.txt"}
    assert [place.path for place in started.locations] == [str(tmp_path / "notes.txt")]
    [ended] = updates(seen, "tool_call_update")
    assert (ended.tool_call_id, ended.status) == ("call-1", "completed")
    assert "buy milk" in ended.content[0].content.text


async def test_acp_failed_tool_call_is_failed_and_an_unknown_kind_is_other(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(
        calls("read", {"path": "missing.txt"}),
        calls("no_such_tool", {"x": 1}, "call-2"),
        calls("remember", {"text": "the user likes tabs"}, "call-3"),
        says("No such file, no such tool; remembered."),
    )
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("read it")])
    [read_ended] = updates(seen, "tool_call_update", "call-1")
    assert read_ended.status == "failed"
    [unknown] = updates(seen, "tool_call", "call-2")
    assert (unknown.kind, unknown.title) == ("other", "no_such_tool")
    [unknown_ended] = updates(seen, "tool_call_update", "call-2")
    assert unknown_ended.status == "failed"
    [(asked, _)] = seen.questions  # remember writes the memory: it asks, as an edit does
    assert (asked.tool_call_id, asked.kind, asked.title) == ("call-3", "other", "remember")


async def test_acp_edit_sends_the_files_old_and_new_text_as_a_diff(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("x = 1\ny = 2\n")
    server.add(*edits("app.py", "y = 2", "y = 3"), says("Done."))
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("fix y")])
    [started] = updates(seen, "tool_call", "edit-1")
    assert started.kind == "edit"
    [ended] = updates(seen, "tool_call_update", "edit-1")
    [diff] = [block for block in ended.content if block.type == "diff"]
    assert diff.path == str(tmp_path / "app.py")
    assert (diff.old_text, diff.new_text) == ("x = 1\ny = 2\n", "x = 1\ny = 3\n")


async def test_acp_new_file_diff_has_no_old_text(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(calls("write", {"path": "new.txt", "content": "fresh\n"}), says("Written."))
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("write")])
    [ended] = updates(seen, "tool_call_update")
    [diff] = [block for block in ended.content if block.type == "diff"]
    assert (diff.old_text, diff.new_text) == (None, "fresh\n")


async def test_acp_todo_list_is_sent_as_the_plan(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    ]
    server.add(calls("todo_write", {"todos": todos}), says("Planned."))
    async with editor(server, monkeypatch) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("plan")])
    [plan] = updates(seen, "plan")
    assert {e.priority for e in plan.entries} == {"medium"}
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
    ]
    assert seen.kinds().index("plan") < seen.kinds().index("tool_call_update")


async def test_acp_last_allowed_step_answers_max_turn_requests(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    server.add(calls("read", {"path": "a.txt"}))
    async with editor(server, monkeypatch, "--max-steps", "1") as (client, _, _):
        session = await client.new_session(cwd=str(tmp_path))
        answer = await client.prompt(session_id=session.session_id, prompt=[acp.text_block("go")])
    assert answer.stop_reason == "max_turn_requests"


async def test_acp_permission_question_offers_allow_once_always_and_reject(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("y = 2\n")
    server.add(*edits("app.py", "y = 2", "y = 3"), says("It was refused."))
    async with editor(server, monkeypatch, answer="reject_once") as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        answer = await client.prompt(session_id=session.session_id, prompt=[acp.text_block("fix")])
    [(call, options)] = seen.questions
    assert (call.tool_call_id, call.kind, call.title) == ("edit-1", "edit", "edit app.py")
    assert [option.kind for option in options] == ["allow_once", "allow_always", "reject_once"]
    assert (tmp_path / "app.py").read_text() == "y = 2\n", "rejected: the file is untouched"
    [ended] = updates(seen, "tool_call_update", "edit-1")
    assert ended.status == "failed"
    assert answer.stop_reason == "end_turn"


async def test_acp_allow_always_is_not_asked_again_in_the_session(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("y = 2\n")
    second = {"path": "app.py", "old_string": "y = 3", "new_string": "y = 4"}
    server.add(*edits("app.py", "y = 2", "y = 3"), calls("edit", second, "edit-2"), says("Done."))
    async with editor(server, monkeypatch, answer="allow_always") as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        await client.prompt(session_id=session.session_id, prompt=[acp.text_block("twice")])
    assert len(seen.questions) == 1
    assert (tmp_path / "app.py").read_text() == "y = 4\n"


async def test_acp_unanswered_permission_question_times_out_into_a_refusal(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("y = 2\n")
    server.add(*edits("app.py", "y = 2", "y = 3"), says("Nobody answered."))
    clock = LoopClock.install()
    async with editor(server, monkeypatch, answer=None) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        prompt = client.prompt(session_id=session.session_id, prompt=[acp.text_block("fix")])
        running = asyncio.ensure_future(prompt)
        await asyncio.wait_for(seen.asked.wait(), 30)
        await clock.time_out(PERMISSION_TIMEOUT, running)
        answer = await asyncio.wait_for(running, 30)
    assert answer.stop_reason == "refusal"
    assert (tmp_path / "app.py").read_text() == "y = 2\n"


async def test_acp_cancel_ends_the_prompt_cancelled(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("y = 2\n")
    server.add(*edits("app.py", "y = 2", "y = 3"))
    async with editor(server, monkeypatch, answer=None) as (client, seen, _):
        session = await client.new_session(cwd=str(tmp_path))
        prompt = client.prompt(session_id=session.session_id, prompt=[acp.text_block("fix")])
        running = asyncio.ensure_future(prompt)
        await asyncio.wait_for(seen.asked.wait(), 30)
        await client.cancel(session_id=session.session_id)
        answer = await asyncio.wait_for(running, 30)
        assert answer.stop_reason == "cancelled"
        assert (tmp_path / "app.py").read_text() == "y = 2\n"
        server.add(says("Still here."))  # the session serves the next prompt
        again = await client.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert again.stop_reason == "end_turn"


@pytest.mark.parametrize(
    "answer",
    [
        b'"result": {"outcome": {"outcome": "cancelled"}}',
        b'"result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}}',
        b'"result": {"outcome": {"outcome": "selected", "optionId": "allow_everything"}}',
        b'"result": {"outcome": "selected"}',
        b'"result": null',
        b'"error": {"code": -32603, "message": "the dialog crashed"}',
    ],
    ids=["cancelled", "reject", "unknown-option", "outcome-not-an-object", "null", "error"],
)
async def test_acp_any_answer_but_allow_is_a_no_said_to_the_model_as_a_refusal(
    answer: bytes, server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("y = 2\n")
    server.add(*edits("app.py", "y = 2", "y = 3"), says("Not allowed, then."))
    messages: list[dict[str, object]] = []

    def line(message: dict[str, object]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"

    async with raw(server, monkeypatch) as pipes:
        await pipes.send(line({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        await pipes.receive()
        await pipes.send(line({"id": 2, "method": "session/new", "params": {"cwd": str(tmp_path)}}))
        session = (await pipes.receive())["result"]["sessionId"]
        prompt = [{"type": "text", "text": "fix"}]
        params = {"sessionId": session, "prompt": prompt}
        await pipes.send(line({"id": 3, "method": "session/prompt", "params": params}))
        while not messages or messages[-1].get("id") != 3:
            message = await pipes.receive()
            messages.append(message)
            if message.get("method") == "session/request_permission":
                reply = b'{"jsonrpc": "2.0", "id": %d, ' % message["id"] + answer + b"}\n"
                await pipes.send(reply)
    assert messages[-1] == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    assert (tmp_path / "app.py").read_text() == "y = 2\n"
    [ended] = [
        m["params"]["update"]  # type: ignore[index]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == "edit-1"  # type: ignore[index]
        and m["params"]["update"]["sessionUpdate"] == "tool_call_update"  # type: ignore[index]
    ]
    assert ended["status"] == "failed"
    assert "the user refused it" in tool_results(server)[-1]
