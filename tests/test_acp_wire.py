"""ch30 · The ACP wire: initialize, and a broken client's messages answered, never fatal.

The official ``agent-client-protocol`` client checks the answers to good requests; the broken
client is the test itself, writing raw bytes into claw's input (``acp_client.raw``). After each
bad message the official client still gets served on the same connection.
"""

import asyncio
import json
from pathlib import Path

import acp
import pytest
from acp_client import editor, raw
from claw_command import no_fsync, says

from claw.acp import MAX_LINE, LineTooLong, read_line
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
    assert capabilities.prompt_capabilities.audio is False
    assert capabilities.mcp_capabilities.http is False
    assert capabilities.mcp_capabilities.sse is False
    assert answer.agent_info is not None and answer.agent_info.name == "claw"
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
    broken = [
        b'{"jsonrpc": "2.0", "id": 1, "method": \n',  # cut in the middle
        b"[1, 2, 3]\n",  # JSON, not an object
        b"\xff\xfe\n",  # not UTF-8
        b'{"jsonrpc": "1.0", "id": 2, "method": "initialize"}\n',  # not JSON-RPC 2.0
        b'{"jsonrpc": "2.0", "id": 3, "method": 5}\n',  # a method that is no string
        b'{"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": [1]}\n',
        b'{"jsonrpc": "2.0", "id": 5}\n',  # neither a request nor a response
    ]
    async with raw(server, monkeypatch) as pipes:
        answers = []
        for line in broken:
            await pipes.send(line)
            answers.append(await pipes.receive())
        # A response to nothing claw asked is dropped: the next message answers the initialize.
        await pipes.send(b'{"jsonrpc": "2.0", "id": 77, "error": {"code": 1, "message": "?"}}\n')
        await pipes.send(b'{"jsonrpc": "2.0", "id": 78, "result": {}}\n')
        await pipes.send(INITIALIZE)
        answer = await pipes.receive()
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, -32700),
        (None, -32600),
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (None, -32602),
        (None, -32600),
    ]
    assert answers[0]["error"]["message"].startswith("not JSON: ")
    assert [a["error"]["message"] for a in answers[3:]] == [
        'not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")',
        "the method is not a string",
        "params is not an object",
        "neither a request nor a response",
    ]
    assert answer["id"] == 1 and "result" in answer


async def test_acp_read_line_skips_long_lines_whole_however_they_arrive() -> None:
    reader = asyncio.StreamReader(limit=16)

    async def read() -> bytes | str | None:
        try:
            return await read_line(reader)
        except LineTooLong:
            return "too long"

    async def arriving(*pieces: bytes) -> list[bytes | str | None]:
        """What read_line makes of ``pieces``, each given to the reader once it waits."""
        reading = asyncio.ensure_future(read())
        for piece in pieces:
            for _ in range(5):
                await asyncio.sleep(0)  # read_line waits for more before the next piece
            reader.feed_data(piece)
        return [await reading]

    # The newline comes long after the limit, in three pieces: one line, skipped whole.
    assert await arriving(b"a" * 20, b"b" * 20, b"c\n") == ["too long"]
    # At once, with the next line behind it: skipped, then the next line as it is.
    reader.feed_data(b"d" * 40 + b"\nshort\n")
    assert [await read(), await read()] == ["too long", b"short\n"]
    # The end of the input: a last line without a newline, then None; in a long line, too.
    reader.feed_data(b"e" * 30 + b"\nlast")
    reader.feed_eof()
    assert [await read(), await read(), await read()] == ["too long", b"last", None]
    cut = asyncio.StreamReader(limit=16)
    cut.feed_data(b"f" * 40)
    cut.feed_eof()
    with pytest.raises(LineTooLong):
        await read_line(cut)
    assert await read_line(cut) is None


async def test_acp_wrong_params_are_invalid_params(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def request(number: int, method: str, params: dict[str, object]) -> bytes:
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        return json.dumps(message).encode() + b"\n"

    async with raw(server, monkeypatch) as pipes:
        await pipes.send(INITIALIZE)
        await pipes.receive()
        await pipes.send(request(2, "session/load", {"cwd": str(tmp_path), "sessionId": 5}))
        load = await pipes.receive()
        await pipes.send(request(3, "session/new", {"cwd": str(tmp_path), "sessionId": "old"}))
        session = (await pipes.receive())["result"]["sessionId"]
        await pipes.send(request(4, "session/prompt", {"sessionId": session, "prompt": "hi"}))
        not_a_list = await pipes.receive()
        image = {"type": "image", "data": "", "mimeType": "image/png"}
        await pipes.send(request(5, "session/prompt", {"sessionId": session, "prompt": [image]}))
        an_image = await pipes.receive()
    assert load["error"] == {"code": -32602, "message": "sessionId must be a string"}
    assert session != "old", "session/new opens a new session, whatever else it is sent"
    assert not_a_list["error"] == {
        "code": -32602,
        "message": "prompt must be a non-empty list of content blocks",
    }
    assert an_image["error"] == {
        "code": -32602,
        "message": "claw takes text and embedded files, not 'image'",
    }
    assert server.requests == [], "nothing reached the model"


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
