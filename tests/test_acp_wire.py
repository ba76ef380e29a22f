"""ch30 · The ACP wire: initialize, and a broken client's messages answered, never fatal.

The official ``agent-client-protocol`` client checks the answers to good requests; the broken
client is the test itself, writing raw bytes into claw's input (``acp_client.raw``). After each
bad message the official client still gets served on the same connection.
"""

import json
from pathlib import Path

import acp
import pytest
from acp_client import editor, raw
from claw_command import no_fsync, says

from claw.acp import MAX_LINE
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here

INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n'
)


async def test_acp_initialize_states_version_capabilities_and_no_auth(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with editor(server, monkeypatch) as (client, _, _):
        answer = await client.initialize(protocol_version=acp.PROTOCOL_VERSION)
    assert answer.protocol_version == acp.PROTOCOL_VERSION == 1
    capabilities = answer.agent_capabilities
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.prompt_capabilities.image is False
    assert answer.auth_methods == []


async def test_acp_initialize_answers_a_newer_client_with_claws_version(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with raw(server, monkeypatch) as pipes:
        await pipes.send(INITIALIZE.replace(b'"protocolVersion": 1', b'"protocolVersion": 7'))
        answer = await pipes.receive()
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1


async def test_acp_malformed_json_is_a_parse_error_and_claw_keeps_serving(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with raw(server, monkeypatch) as pipes:
        await pipes.send(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
        broken = await pipes.receive()
        await pipes.send(b"[1, 2, 3]\n\xff\xfe\n")
        not_a_request = await pipes.receive()
        not_utf8 = await pipes.receive()
        await pipes.send(INITIALIZE)
        answer = await pipes.receive()
    assert broken["id"] is None and broken["error"]["code"] == -32700
    assert not_a_request["error"]["code"] == -32600
    assert not_utf8["error"]["code"] == -32700
    assert answer["id"] == 1 and "result" in answer


async def test_acp_unknown_method_is_method_not_found_and_an_unknown_notification_is_ignored(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with raw(server, monkeypatch) as pipes:
        await pipes.send(INITIALIZE)
        await pipes.receive()
        await pipes.send(b'{"jsonrpc": "2.0", "method": "no/such/notification", "params": {}}\n')
        await pipes.send(b'{"jsonrpc": "2.0", "id": "x", "method": "no/such/method"}\n')
        answer = await pipes.receive()
    assert answer["id"] == "x", "the notification got no answer: this is the next message"
    assert answer["error"] == {"code": -32601, "message": "claw has no method no/such/method"}


async def test_acp_request_before_initialize_is_refused(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = {"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": str(tmp_path)}}
    async with raw(server, monkeypatch) as pipes:
        await pipes.send(json.dumps(new).encode() + b"\n")
        refused = await pipes.receive()
        await pipes.send(INITIALIZE)
        await pipes.receive()
        await pipes.send(json.dumps(new).encode() + b"\n")
        opened = await pipes.receive()
    assert refused["id"] == 5
    assert refused["error"] == {"code": -32600, "message": "session/new before initialize"}
    assert opened["id"] == 5 and isinstance(opened["result"]["sessionId"], str)


async def test_acp_prompt_for_an_unknown_session_is_an_error(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with editor(server, monkeypatch) as (client, _, _):
        with pytest.raises(acp.RequestError) as refused:
            await client.prompt(session_id="no-such-session", prompt=[acp.text_block("hi")])
        answer = await client.initialize(protocol_version=1)
    assert refused.value.code == -32002
    assert str(refused.value) == "unknown session: no-such-session"
    assert answer.protocol_version == 1
    assert server.requests == [], "nothing reached the model"


async def test_acp_huge_line_is_skipped_with_an_error_and_the_next_line_served(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Still fine."))
    async with editor(server, monkeypatch) as (client, seen, pipes):
        huge = b'{"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {"x": "'
        await pipes.send(huge + b"a" * (MAX_LINE + 10) + b'"}}\n')
        session = await client.new_session(cwd=str(tmp_path))
        answer = await client.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert answer.stop_reason == "end_turn" and seen.text() == "Still fine."
    errors = [json.loads(line) for who, line in pipes.lines if who == "agent" and '"error"' in line]
    assert errors == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": f"line longer than {MAX_LINE} bytes"},
        }
    ]
