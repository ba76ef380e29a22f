"""ch23 · MCP: claw's client over stdio, against the official ``mcp`` SDK and hand-written servers.

The SDK is the oracle: one server built with it runs for the whole module, and the same tools
listed and called by claw (over stdio, the server a subprocess) and by the SDK's own
``Client`` (connected to the same server in memory, inside that process) agree; a call claw
cancels is cancelled by the SDK. The rest of claw's client (pages, content blocks,
``list_changed``, errors) is tested against servers written by hand, which need only the
standard library and start in a hundredth of a second. A broken one writes nonsense,
crashes in the middle of a call or never answers; each is an error result with a clear
message, and stopping it stops every process it started. A limit under test is passed by
moving the event loop's clock (``loop_clock``), never by waiting it out. Then the names:
``mcp__<server>__<tool>``, permission rules and hook matchers by that name, ``.mcp.json`` in
Claude Code's format, a project's servers started only with the user's consent, and the
``claw`` command end to end.
"""

import asyncio
import concurrent.futures
import json
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from claw_command import calls, run_claw, says, tool_results
from loop_clock import LoopClock
from marked_processes import assert_none_marked, unique_marker, wait_marked

from claw.hooks import matches
from claw.mcp.client import (
    STDERR_LIMIT,
    SUPPORTED_VERSIONS,
    McpClient,
    McpError,
    RemoteTool,
    ServerSpec,
)
from claw.mcp.config import ConfigError, McpServers, load_config, project_servers
from claw.mcp.jsonrpc import METHOD_NOT_FOUND, ProtocolError, RemoteError, decode, encode
from claw.mcp.tools import McpTool, block_text, result_output, schema_problem, tool_name
from claw.permissions import Decision, Mode, Permissions
from claw.types import ToolCall, ToolOutput, ToolSet
from clawbook.harness.loopback import LoopbackServer

HERE = Path(__file__).parent
SDK_SERVER = HERE / "mcp_server_sdk.py"
PAGED_SERVER = HERE / "mcp_server_paged.py"
BROKEN_SERVER = HERE / "mcp_server_broken.py"
HOSTILE_SERVER = HERE / "mcp_server_hostile.py"

T = TypeVar("T")


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.fixture(autouse=True)
def exits_seen_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """claw looks whether a server (or its session) has gone every 20 ms: here, every 1 ms.

    A server exits a moment after its input closes or a signal; each of the many these tests
    stop would otherwise cost a poll's wait, and none would behave otherwise.
    """
    monkeypatch.setattr("claw.mcp.client.POLL_SECONDS", 0.001)
    monkeypatch.setattr("claw.tools.bash.POLL_SECONDS", 0.001)  # chapter 10's stop_session


def by_hand(name: str, script: Path, *args: str) -> ServerSpec:
    """A server written by hand: ``python -I -S`` (no site-packages; it needs none)."""
    return ServerSpec(name, sys.executable, ("-I", "-S", str(script), *args))


async def started(server: ServerSpec, **options: float) -> McpClient:
    client = McpClient(server, **options)
    await client.start()
    return client


async def until(condition: Callable[[], object]) -> None:
    """Wait until ``condition()`` holds (a hang is caught by the test's time limit)."""
    while not condition():
        await asyncio.sleep(0.001)


# ---- framing


def test_mcp_a_message_is_one_line_of_json_and_a_bad_line_is_a_protocol_error() -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"text": "two\nlines, ünïcode ✓"}}
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert "ünïcode ✓".encode() in line  # UTF-8, not \u escapes
    assert decode(line) == message
    assert decode(b'  {"jsonrpc": "2.0", "id": 1, "result": {}}\r\n')["id"] == 1
    for bad, says_what in [
        (b"this is not json\n", "not JSON: 'this is not json'"),
        (b'{"id": 1, "result": {}}\n', "not a JSON-RPC 2.0 message"),
        (b"[1, 2]\n", "not a JSON-RPC 2.0 message"),
        (b'{"jsonrpc": "2.0", \xff}\n', "not JSON"),
    ]:
        with pytest.raises(ProtocolError, match="the server wrote a line that is ") as caught:
            decode(bad)
        assert says_what in str(caught.value)
    long = b"no json here " * 1000
    with pytest.raises(ProtocolError) as caught:
        decode(long)
    assert long[:60].decode() in str(caught.value)
    assert len(str(caught.value)) < 500  # the start of the line, not all 13 000 bytes


# ---- the protocol


async def test_mcp_tools_list_follows_next_cursor_across_pages() -> None:
    client = await started(by_hand("paged", PAGED_SERVER))
    try:
        names = [tool.name for tool in client.tools]
    finally:
        await client.close()
    assert names == ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4", "mixed", "grow"]
    schema = {"type": "object", "properties": {"fail": {"type": "boolean"}}}
    assert client.tools[6] == RemoteTool("grow", "The tool grow.", schema)
    assert client.protocol_version == SUPPORTED_VERSIONS[0]  # the server took claw's offer


async def test_mcp_content_blocks_become_text_and_is_error_an_error_result() -> None:
    client = await started(by_hand("paged", PAGED_SERVER))
    try:
        by_name = {tool.name: McpTool(client, tool) for tool in client.tools}
        mixed = await by_name["mixed"].run({})
        failed = await by_name["tool_1"].run({"fail": True})
        fine = await by_name["tool_1"].run({})
        long = await by_name["tool_2"].run({"say": "z" * 100_000})
    finally:
        await client.close()
    assert mixed.content == "first\n[image: image/png, 8 bytes of base64]\na note"
    assert not mixed.is_error
    assert failed.is_error and failed.content == "tool 1"
    assert not fine.is_error and fine.content == "tool 1"
    assert long.content == "z" * 100_000  # one line far over asyncio's default 64 KiB
    assert block_text({"type": "resource_link", "uri": "file:///a"}) == "[resource link: file:///a]"
    sound = {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}
    assert block_text(sound) == "[audio: audio/wav, 8 bytes of base64]"
    blob = {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}}
    assert "AAEC" not in block_text(blob) and "file:///b.bin" in block_text(blob)
    widget = {"type": "widget", "size": "größer"}
    assert json.loads(block_text(widget)) == widget and "größer" in block_text(widget)
    assert result_output({"content": [], "structuredContent": {"sum": 42}}).content == (
        json.dumps({"sum": 42})
    )
    assert "größer" in result_output({"content": [], "structuredContent": widget}).content
    both = {"content": [{"type": "text", "text": "42"}, "stray"], "structuredContent": {"s": 1}}
    assert result_output(both) == ToolOutput.ok("42")
    assert result_output({"content": [], "isError": True}).is_error


async def test_mcp_list_changed_makes_claw_list_again_and_add_the_new_tool() -> None:
    tools = ToolSet()
    servers = McpServers(Path.cwd(), warn=pytest.fail)
    await servers.start([by_hand("paged", PAGED_SERVER)], tools)
    try:
        assert "mcp__paged__grown" not in tools
        grown = await tools["mcp__paged__grow"].run({})
        assert grown.content == "grew"
        await until(lambda: "mcp__paged__grown" in tools)  # listed again in the background
        assert tools.names[-1] == "mcp__paged__grown"
        assert (await tools["mcp__paged__grown"].run({})).content == "grown"
    finally:
        await servers.close()


async def test_mcp_list_changed_notifications_coalesce_into_one_listing_at_a_time() -> None:
    # The client is not started: its dispatch gets the notifications, and list_tools, replaced,
    # counts the listings and waits for the test's word (an event) before it answers.
    client = McpClient(ServerSpec("burst", "unused"))
    listings, changed = [], []
    answer = asyncio.Event()

    async def listed() -> list[RemoteTool]:
        listings.append(len(listings) + 1)
        await answer.wait()
        answer.clear()
        return [RemoteTool(f"tool_{len(listings)}", "", {})]

    client.list_tools = listed  # type: ignore[method-assign]
    client.on_tools_changed = lambda c: changed.append([t.name for t in c.tools])
    notification = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    for _ in range(1000):
        client.dispatch(notification)
    await until(lambda: listings)
    assert listings == [1]  # one listing for the whole burst, in flight
    for _ in range(1000):  # more while it runs: one more listing, after it, for all of them
        client.dispatch(notification)
    answer.set()
    await until(lambda: len(listings) == 2)
    assert changed == [["tool_1"]]
    answer.set()
    refreshing = client.refreshing
    assert refreshing is not None
    await refreshing
    assert listings == [1, 2] and changed == [["tool_1"], ["tool_2"]]
    assert client.tools == [RemoteTool("tool_2", "", {})] and client.refreshing is None
    client.dispatch(notification)  # a later one lists again
    await until(lambda: len(listings) == 3)
    answer.set()
    await until(lambda: client.refreshing is None)
    assert changed[-1] == ["tool_3"]


async def test_mcp_a_tool_name_claw_cannot_use_is_mapped_and_called_by_its_own() -> None:
    tools = ToolSet()
    warnings: list[str] = []
    servers = McpServers(Path.cwd(), warn=warnings.append)
    await servers.start([by_hand("wild", HOSTILE_SERVER, "wild")], tools)
    try:
        client = servers.clients[0]
        # db.query and db_query are both db_query as claw names go: the valid name keeps it,
        # although listed second; the other takes the first free suffix.
        assert [n for n in tools.names if n.startswith("mcp__")] == [
            "mcp__wild__db_query_2", "mcp__wild__db_query", "mcp__wild__files_read"
        ]
        mapped = (await tools["mcp__wild__db_query_2"].run({})).content
        own = (await tools["mcp__wild__db_query"].run({})).content
        path = (await tools["mcp__wild__files_read"].run({})).content
        # A new tool listed later never takes a name already given, even a valid one.
        client.tools.append(RemoteTool("db_query_2", "", {"type": "object"}))
        servers.add_tools(client)
        assert servers.parts["wild"]["db_query_2"] == "db_query_2_2"
        assert tools["mcp__wild__db_query_2_2"].remote.name == "db_query_2"  # type: ignore[attr-defined]
    finally:
        await servers.close()
    assert mapped.endswith("called db.query")  # the server was called by its own name
    assert own.endswith("called db_query") and path.endswith("called files/read")
    (files,) = [tool for tool in client.tools if tool.name == "files/read"]
    assert files.output_schema is None  # its outputSchema, true, is not an object: none
    assert len(warnings) == 6  # the entries without a name or object schema (see the attacks)


async def test_mcp_lines_before_the_servers_first_message_are_kept_with_its_stderr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = await started(by_hand("greeter", BROKEN_SERVER, "banner"))
    try:
        result = await client.call_tool("go", {})
    finally:
        await client.close()
    assert result["content"][0]["text"] == "fine"
    kept = client.stderr.text().splitlines()
    assert kept == ["(stdout) demo 1.0 starting", "(stdout) listening on stdio", "(stdout) ready"]
    # Past BANNER_LINES, the server is not speaking MCP: the line breaks the connection.
    monkeypatch.setattr("claw.mcp.client.BANNER_LINES", 2)
    with pytest.raises(McpError) as caught:
        await started(by_hand("greeter", BROKEN_SERVER, "banner"))
    assert str(caught.value).startswith(
        "MCP server 'greeter': the server wrote a line that is not JSON: 'ready'"
    )
    # After the first message, a line that is not one still breaks it at once (the bad-json test).


async def test_mcp_structured_content_is_checked_against_the_output_schema() -> None:
    client = await started(by_hand("calc", BROKEN_SERVER, "schema"))
    try:
        go = McpTool(client, client.tools[0])
        right = await go.run({"sum": 42})
        wrong = await go.run({"sum": "forty-two"})
        missing = await go.run({"omit": True})
        failed = await go.run({"fail": True})
    finally:
        await client.close()
    assert client.tools[0].output_schema == {
        "type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]
    }
    assert not right.is_error and json.loads(right.content) == {"sum": 42}
    assert wrong.is_error and wrong.content.startswith(
        "MCP server 'calc': the tool 'go' broke its output schema: "
    )
    assert "structuredContent['sum']: 'forty-two' is not of type 'integer'" in wrong.content
    assert missing.is_error and missing.content == (
        "MCP server 'calc': the tool 'go' broke its output schema: "
        "no structuredContent, though it has an output schema"
    )
    assert failed.is_error and json.loads(failed.content) == {"fail": True}  # not checked
    assert "not a valid JSON Schema" in str(schema_problem({"type": 5}, 1))  # the server's fault
    assert "$ref" in str(schema_problem({"$ref": "#/$defs/nowhere"}, 1))


async def test_mcp_the_handshake_refuses_a_version_claw_does_not_speak(marker: str) -> None:
    with pytest.raises(McpError) as caught:
        await started(by_hand("old", BROKEN_SERVER, "old-version", marker))
    assert str(caught.value) == (
        "MCP server 'old': the server speaks MCP version '1999-01-01', which claw does not "
        f"support (claw speaks {', '.join(SUPPORTED_VERSIONS)})"
    )
    assert_none_marked(marker, within=5)


async def test_mcp_the_client_answers_the_servers_requests_and_ignores_stray_lines() -> None:
    client = await started(by_hand("chatty", BROKEN_SERVER, "chatty"))
    try:
        result = await client.call_tool("go", {})
        again = await client.call_tool("go", {})  # the stray lines broke nothing
    finally:
        await client.close()
    ping, other = json.loads(result["content"][0]["text"])
    assert ping == {"jsonrpc": "2.0", "id": "p-1", "result": {}}
    assert (other["jsonrpc"], other["id"], "result" in other) == ("2.0", "s-1", False)
    assert other["error"]["code"] == METHOD_NOT_FOUND
    assert isinstance(other["error"]["message"], str)
    assert again == result


async def test_mcp_an_error_answer_and_an_answer_without_a_result() -> None:
    client = await started(by_hand("strict", BROKEN_SERVER, "refuse"))
    try:
        with pytest.raises(RemoteError) as caught:
            await client.call_tool("go", {})
        output = await McpTool(client, client.tools[0]).run({})
        gone = await McpTool(client, RemoteTool("gone", "", {})).run({})  # no longer listed
        with pytest.raises(RemoteError) as odd:  # an error that is not an object
            await client.call_tool("go", {"as": "odd-error"})
        no_result = "MCP server 'strict': the answer to tools/call has no result object"
        with pytest.raises(McpError, match=no_result):  # a result that is a list
            await client.call_tool("go", {"as": "no-result"})
        no_result_output = await McpTool(client, client.tools[0]).run({"as": "no-result"})
    finally:
        await client.close()
    assert gone.is_error and gone.content.startswith("MCP server 'strict': ")
    assert "'gone'" in gone.content  # the message names the tool
    assert "no such tool today" not in gone.content  # refused by claw, never called
    assert caught.value.code == -32602 and "no such tool today" in str(caught.value)
    assert caught.value.data == {"asked": "go"}  # the error's data goes with it
    assert output.is_error
    assert output.content.startswith("MCP server 'strict': go failed: no such tool today")
    assert (odd.value.code, odd.value.data) == (0, None)
    assert str(odd.value) == str(RemoteError(0, ""))  # and an empty message, not "None"
    assert no_result_output.is_error
    assert no_result_output.content.startswith("MCP server 'strict': ")

    with pytest.raises(McpError, match="MCP server 'loop': ") as looped:
        await started(by_hand("loop", BROKEN_SERVER, "cursor-loop"))
    assert "cursor" in str(looped.value)  # it says why

    client = await started(by_hand("empty", BROKEN_SERVER, "no-tools"))  # a result without tools
    await client.close()
    assert client.tools == []


async def test_mcp_a_server_runs_in_its_folder_with_claws_environment_and_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_INHERITED", "from claw")
    monkeypatch.setenv("MCP_OWN", "from claw too")
    server = ServerSpec("env", sys.executable, ("-I", "-S", str(BROKEN_SERVER), "env"),
                        {"MCP_OWN": "own"})
    client = McpClient(server, tmp_path)
    await client.start()
    try:
        result = await client.call_tool("go", {})
    finally:
        await client.close()
    assert client.tools == [RemoteTool("go", "", {"type": "object"})]  # what a bare tool gets
    assert json.loads(result["content"][0]["text"]) == ["own", "from claw", str(tmp_path)]


async def test_mcp_a_command_that_cannot_start_is_an_error_naming_server_and_command(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "no-such-server")
    with pytest.raises(McpError) as caught:
        await started(ServerSpec("ghost", missing, ()))
    message = str(caught.value)
    assert message.startswith(f"MCP server 'ghost': cannot start {missing!r}: ")
    assert "No such file or directory" in message  # the reason: the OSError's own words


async def test_mcp_a_server_that_closes_its_output_but_runs_on_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # claw waits STOP_GRACE for the server to exit before it says why the call failed, and again
    # when it stops it. This one sleeps on and never exits by itself: any grace, however short,
    # ends the same way.
    monkeypatch.setattr("claw.mcp.client.STOP_GRACE", 0.01)
    client = await started(by_hand("quiet", BROKEN_SERVER, "close-output"))
    try:
        output = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content == "MCP server 'quiet': the server closed its output"


# ---- broken servers


async def test_mcp_a_line_that_is_not_json_is_an_error_result_not_a_hang() -> None:
    client = await started(by_hand("bad", BROKEN_SERVER, "bad-json"))
    try:
        output = await McpTool(client, client.tools[0]).run({})
        later = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content == (
        "MCP server 'bad': the server wrote a line that is not JSON: 'this is not json'"
    )
    assert later.is_error and later.content == output.content


async def test_mcp_a_server_that_crashes_mid_call_is_an_error_with_its_stderr() -> None:
    client = await started(by_hand("crashy", BROKEN_SERVER, "crash"))
    try:
        output = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content == (
        "MCP server 'crashy': the server exited (exit code 3) (its stderr ends: crash: dying now)"
    )


async def test_mcp_a_server_that_never_answers_times_out_and_is_killed_with_its_children(
    marker: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server never exits by itself, and ignores SIGTERM: whatever the grace claw gives it
    # (STOP_GRACE, twice), only SIGKILL ends it, so a short one proves the same, sooner.
    monkeypatch.setattr("claw.mcp.client.STOP_GRACE", 0.01)
    clock = LoopClock.install()
    client = await started(by_hand("stuck", BROKEN_SERVER, "hang", marker), call_timeout=0.5)
    try:
        assert wait_marked(marker, within=30), "the server's child runs"
        call = asyncio.create_task(McpTool(client, client.tools[0]).run({}))
        await until(lambda: client.pending or call.done())  # sent; no answer will ever come
        await clock.time_out(0.5, call)
        output = await call
        assert output.is_error
        assert output.content == "MCP server 'stuck': no answer to tools/call within 0.5 s"
        assert client.pending == {}  # claw gave up on that id: an answer now would be ignored
    finally:
        await client.close()  # the server ignores SIGTERM and no longer reads its input
    assert_none_marked(marker)
    assert client.process is not None and client.process.returncode is not None


async def test_mcp_a_server_that_never_finishes_the_handshake_is_an_error(marker: str) -> None:
    clock = LoopClock.install()
    client = McpClient(by_hand("mute", BROKEN_SERVER, "hang-start", marker), start_timeout=0.5)
    starting = asyncio.create_task(client.start())
    await until(lambda: client.pending or starting.done())  # initialize is sent, never answered
    await clock.time_out(0.5, starting)
    with pytest.raises(McpError) as caught:
        await starting
    assert str(caught.value) == "MCP server 'mute': no answer to initialize within 0.5 s"
    assert_none_marked(marker)

    client = McpClient(by_hand("mute", BROKEN_SERVER, "hang-list", marker), start_timeout=0.5)
    starting = asyncio.create_task(client.start())
    # initialize is answered; then tools/list is sent, never answered: it waits start_timeout too
    await until(lambda: (client.protocol_version and client.pending) or starting.done())
    await clock.time_out(0.5, starting)
    with pytest.raises(McpError) as caught:
        await starting
    assert str(caught.value) == "MCP server 'mute': no answer to tools/list within 0.5 s"
    assert_none_marked(marker)


async def test_mcp_closing_stops_every_process_the_server_started(marker: str) -> None:
    client = await started(by_hand("demo", BROKEN_SERVER, "fine", marker))
    result = await client.call_tool("go", {})
    assert result["content"][0]["text"] == "fine"
    assert wait_marked(marker, within=30), "the server started a child that runs for minutes"
    await client.close()
    assert_none_marked(marker)
    await client.close()  # twice is fine
    with pytest.raises(McpError, match="the server was stopped"):
        await client.call_tool("go", {})


async def test_mcp_stderr_is_kept_bounded_and_never_blocks_the_server() -> None:
    client = await started(by_hand("noisy", BROKEN_SERVER, "noisy"))
    try:
        result = await client.call_tool("go", {})
    finally:
        await client.close()
    assert result["content"][0]["text"] == "fine"  # 1 MB of stderr did not block it
    assert len(client.stderr.kept) == STDERR_LIMIT
    assert client.stderr.dropped > 1_000_000 - STDERR_LIMIT
    assert "noisy: the last line" in client.stderr.text()


# ---- names, rules, hooks, configuration


def test_mcp_a_tool_is_named_after_its_server() -> None:
    assert tool_name("fs", "write") == "mcp__fs__write"
    assert tool_name("git-hub", "list_issues") == "mcp__git-hub__list_issues"
    assert len(tool_name("fs", "x" * 55)) == 64  # the longest a name may be
    for server, tool in [("my fs", "x"), ("a__b", "x"), ("fs", "read.file"), ("", "x"),
                         ("fs", "x" * 60)]:
        with pytest.raises(ValueError):
            tool_name(server, tool)
    with pytest.raises(ValueError, match="64"):  # the message says the limit
        tool_name("fs", "x" * 56)


def test_mcp_permission_rules_apply_to_mcp_tools_by_name(tmp_path: Path) -> None:
    write, read = tool_name("fs", "write"), tool_name("fs", "read")
    other = tool_name("fsx", "write")

    def decide(name: str, **rules: list[str]) -> Decision:
        permissions = Permissions(tmp_path, mode=Mode.DEFAULT, **rules)  # type: ignore[arg-type]
        return permissions.decide(ToolCall(id="c", name=name, arguments={})).decision

    assert decide(write, deny=["mcp__fs__write"]) is Decision.DENY
    assert decide(read, deny=["mcp__fs__write"]) is Decision.ASK  # no rule: default asks
    assert decide(read, deny=["mcp__fs"]) is Decision.DENY  # the whole server
    assert decide(other, deny=["mcp__fs"]) is Decision.ASK  # not a prefix of fsx
    assert decide(read, deny=["mcp__fs__*"]) is Decision.DENY
    assert decide(other, deny=["mcp__fs__*"]) is Decision.ASK
    assert decide(read, allow=["mcp__fs"]) is Decision.ALLOW
    assert decide(write, allow=["mcp__fs"], deny=["mcp__fs__write"]) is Decision.DENY
    plan = Permissions(tmp_path, mode=Mode.PLAN)
    assert plan.decide(ToolCall(id="c", name=read, arguments={})).decision is Decision.DENY


def test_mcp_hook_matchers_pick_mcp_tools_by_name() -> None:
    write = tool_name("fs", "write")
    assert matches("mcp__fs__write", write)
    assert matches("mcp__fs__.*", write)
    assert matches("mcp__.*__write", write)
    assert not matches("mcp__git__.*", write)
    assert not matches("Write", write)


def test_mcp_mcp_json_in_claude_codes_format(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    assert load_config(config) == []
    config.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "python", "args": ["fs.py", "--root", "."], "env": {"ROOT": "/tmp"}},
        "git": {"type": "stdio", "command": "git-mcp"},
    }}))
    assert load_config(config) == [
        ServerSpec("fs", "python", ("fs.py", "--root", "."), {"ROOT": "/tmp"}),
        ServerSpec("git", "git-mcp"),
    ]
    for text, problem in [
        ("{not json", "not valid JSON"),
        ('{"servers": {}}', 'expected an object with "mcpServers"'),
        ('{"mcpServers": {"fs": {"args": []}}}', "server 'fs' needs a \"command\" string"),
        ('{"mcpServers": {"web": {"type": "http", "url": "https://x"}}}',
         "server 'web' is of type 'http'; claw speaks only stdio"),
        ('{"mcpServers": {"fs": {"command": "x", "args": "a b"}}}', '"args" must be a list'),
        ('{"mcpServers": {"fs": {"command": "x", "env": {"A": 1}}}}', '"env" must map names'),
        ('[{"mcpServers": {}}]', 'expected an object with "mcpServers"'),
        ('{"mcpServers": ["fs"]}', 'expected an object with "mcpServers"'),
        ('{"mcpServers": {"fs": "python fs.py"}}', "server 'fs' needs a \"command\" string"),
        ('{"mcpServers": {"fs": {"command": ["x"]}}}', "server 'fs' needs a \"command\" string"),
        ('{"mcpServers": {"fs": {"command": "x", "args": ["a", 1]}}}', '"args" must be a list'),
        ('{"mcpServers": {"fs": {"command": "x", "env": ["A=1"]}}}', '"env" must map names'),
    ]:
        config.write_text(text)
        with pytest.raises(ConfigError) as caught:
            load_config(config)
        assert str(caught.value).startswith(f"{config}: ") and problem in str(caught.value)


def hostile_project(project: Path) -> Path:
    """A repository whose .mcp.json would create ``pwned`` if its command ran."""
    pwned = project / "pwned"
    script = f"import pathlib; pathlib.Path({str(pwned)!r}).touch()"
    servers = {"evil": {"command": sys.executable, "args": ["-c", script]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return pwned


async def test_mcp_a_projects_servers_never_start_without_consent(tmp_path: Path) -> None:
    pwned = hostile_project(tmp_path)
    warnings: list[str] = []
    assert project_servers(tmp_path, enabled=False, warn=warnings.append) == []
    assert warnings == [
        ".mcp.json names MCP servers (evil); claw did not start them, since each runs a "
        "command from this folder: run claw with --mcp to start them"
    ]
    (tmp_path / ".mcp.json").write_text("{broken")
    assert project_servers(tmp_path, enabled=False, warn=warnings.append) == []
    assert "no MCP server was started" in warnings[-1]
    with pytest.raises(ConfigError):
        project_servers(tmp_path, enabled=True, warn=warnings.append)
    assert not pwned.exists()


# ---- the claw command


def test_mcp_claw_does_not_run_a_hostile_mcp_json_by_default(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pwned = hostile_project(tmp_path)
    # Before chapter 23 claw leaves any .mcp.json alone with another warning: wait for it.
    assert project_servers(tmp_path, enabled=False, warn=lambda note: None) == []
    server.add(says("Nothing to do."))
    assert run_claw(server, tmp_path, monkeypatch, "hello", "--trust-project") == 0
    assert not pwned.exists()
    assert "run claw with --mcp to start them" in capsys.readouterr().err
    sent = [tool["function"]["name"] for tool in server.requests[0].json["tools"]]
    assert not any(name.startswith("mcp__") for name in sent)


def test_mcp_claw_calls_a_servers_tool_and_survives_a_crashing_one(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str,
) -> None:
    servers = {
        "paged": {"command": sys.executable, "args": ["-I", "-S", str(PAGED_SERVER)]},
        "crashy": {"command": sys.executable,
                   "args": ["-I", "-S", str(BROKEN_SERVER), "crash", marker]},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / ".claw").mkdir()
    rules = {"permissions": {"allow": ["mcp__paged", "mcp__crashy"], "deny": ["mcp__paged__grow"]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(rules))
    server.add(
        calls("mcp__paged__tool_4", {}, "call-1"),
        calls("mcp__crashy__go", {}, "call-2"),
        calls("mcp__paged__grow", {}, "call-3"),
        says("tool_4 says: tool 4."),
    )
    status = run_claw(server, tmp_path, monkeypatch, "call", "--mcp", "--trust-project")
    assert status == 0
    called, crashed, refused = tool_results(server)
    assert called == "tool 4"
    assert "MCP server 'crashy': the server exited (exit code 3)" in crashed
    assert 'the deny rule "mcp__paged__grow" matches' in refused
    sent = {tool["function"]["name"] for tool in server.requests[0].json["tools"]}
    assert {"mcp__paged__tool_4", "mcp__crashy__go"} <= sent  # tool_4 is on the third page
    assert_none_marked(marker)  # claw stopped the servers, with their children, at exit


# ---- the SDK as the oracle (last: its server starts with the module's first test, and has come
# up by the time these run)

SDK_CALLS = [
    ("add", {"a": 2, "b": 40}),
    ("greet", {"name": "Zoë ✓", "excited": True}),
    ("fail", {"why": "the disk is full"}),
]


class SdkServer:
    """The SDK's demo server, started once for this module, and claw's connection to it.

    Starting it takes a second or more (the SDK's imports), so it starts before the tests that
    use it, and they share it. The connection outlives each test's event loop: it lives in a
    loop of its own, in a thread, and ``run`` does a test's work there. Meanwhile the server has
    the SDK's own ``Client`` list its tools and make the calls of ``SDK_CALLS``, in memory, and
    writes what it saw to ``view_file``: the oracle.
    """

    def __init__(self, folder: Path) -> None:
        self.view_file = folder / "sdk-view.json"
        oracle = ("--oracle", str(self.view_file), json.dumps(SDK_CALLS))
        self.client = McpClient(ServerSpec("demo", sys.executable, (str(SDK_SERVER), *oracle)))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="sdk", daemon=True)
        self.thread.start()
        self.work: set[asyncio.Task[Any]] = set()
        self.starting = self.submit(self.client.start())

    def submit(self, work: Coroutine[Any, Any, T]) -> "concurrent.futures.Future[T]":
        """Start ``work`` in the connection's loop; ``stop`` cancels it if it still runs."""

        async def tracked() -> T:
            task = asyncio.current_task()
            assert task is not None
            self.work.add(task)
            try:
                return await work
            finally:
                self.work.discard(task)

        return asyncio.run_coroutine_threadsafe(tracked(), self.loop)

    def connected(self) -> McpClient:
        """claw's client, once it has started (or the error it started with)."""
        self.starting.result()
        return self.client

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` in the connection's loop, once the client has started; its result."""
        try:
            self.connected()
        except BaseException:
            work.close()
            raise
        return self.submit(work).result()

    def view(self) -> dict[str, Any]:
        """What the SDK's own client saw of the server, once the server has written it."""
        self.connected()
        while not self.view_file.exists():
            assert self.client.broken is None, f"the SDK server broke: {self.client.broken}"
            time.sleep(0.01)
        return json.loads(self.view_file.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the server and whatever still runs in the loop, then the loop and its thread."""
        if self.client.process is not None and self.client.process.returncode is None:
            self.client.process.terminate()  # no test waits for its polite exit (a second)
        asyncio.run_coroutine_threadsafe(self.stop(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()

    async def stop(self) -> None:
        """Cancel the work left in the loop, then close the client.

        Work is left when a test was stopped by its time limit, or when the start still waits
        for a handshake that a broken client never completes (it would wait ``START_TIMEOUT``).
        Only that work is cancelled, never the client's own tasks: a start cancelled while
        asyncio connects the new process's pipes is shielded by the client (chapter 10's
        ``started``), and cancelling the shielded start too could leave it waiting forever.
        """
        left = list(self.work)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        await self.client.close()


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SdkServer]:
    server = SdkServer(tmp_path_factory.mktemp("sdk"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module", autouse=True)
def sdk_starts_first(request: pytest.FixtureRequest) -> None:
    """Start the SDK server with this module's first test, if a test chosen to run uses it.

    Not in a pytest-xdist worker, which cannot know which of the tests it will be given.
    """
    if hasattr(request.config, "workerinput"):
        return
    here = [item for item in request.session.items if item.path == request.path]
    if any("sdk" in getattr(item, "fixturenames", ()) for item in here):
        request.getfixturevalue("sdk")


@pytest.mark.timeout(30)  # it waits for the SDK server's start: seconds on a loaded machine
def test_mcp_claw_and_the_sdk_list_the_same_tools(sdk: SdkServer) -> None:
    client = sdk.connected()
    listed_again = sdk.run(client.list_tools())  # as claw does when the server says so
    assert listed_again == client.tools  # as it listed them when it started
    mine = [(t.name, t.description, t.input_schema, t.output_schema) for t in listed_again]
    listed = sdk.view()["tools"]
    theirs = [
        (t["name"], t.get("description", ""), t["inputSchema"], t.get("outputSchema"))
        for t in listed
    ]
    assert [name for name, *_ in mine] == ["add", "greet", "fail", "wait"]
    assert mine == theirs
    assert client.protocol_version == SUPPORTED_VERSIONS[0]


@pytest.mark.timeout(30)
async def test_mcp_claw_accepts_every_version_the_sdks_client_accepts(sdk: SdkServer) -> None:
    accepted = sdk.view()["versions"]  # as the installed SDK's client checks initialize's answer
    assert "2024-11-05" in accepted
    assert sorted(SUPPORTED_VERSIONS) == sorted(accepted)
    assert SUPPORTED_VERSIONS[0] == max(accepted)  # claw offers the newest
    # A server that answers the oldest (many deployed ones do) is spoken to in it.
    server = by_hand("old", BROKEN_SERVER, "fine")
    oldest = {"MCP_VERSION": min(accepted)}
    client = await started(ServerSpec("old", server.command, server.args, oldest))
    try:
        result = await client.call_tool("go", {})
    finally:
        await client.close()
    assert client.protocol_version == "2024-11-05"
    assert result["content"][0]["text"] == "fine"


@pytest.mark.timeout(30)
def test_mcp_a_call_gives_the_same_content_as_the_sdks(sdk: SdkServer) -> None:
    async def through_claw() -> tuple[list[dict[str, Any]], list[ToolOutput], str]:
        client = sdk.client
        mine = [await client.call_tool(name, arguments) for name, arguments in SDK_CALLS]
        tools = {tool.name: McpTool(client, tool) for tool in client.tools}
        outputs = [await tools[name].run(arguments) for name, arguments in SDK_CALLS]
        long_answer = (await tools["greet"].run({"name": "z" * 100_000})).content
        return mine, outputs, long_answer

    mine, outputs, long_answer = sdk.run(through_claw())
    theirs = sdk.view()["answers"]
    for raw, answer in zip(mine, theirs, strict=True):
        assert raw["content"] == answer["content"]  # every block, as the SDK's client has it
        assert raw.get("structuredContent") == answer.get("structuredContent")
        assert bool(raw.get("isError")) == answer["isError"]
    assert [o.content for o in outputs[:2]] == ["42", "Hello, Zoë ✓!"]
    assert long_answer == f"Hello, {'z' * 100_000}."  # a line far over asyncio's 64 KiB
    assert not outputs[0].is_error and outputs[2].is_error
    assert "the disk is full" in outputs[2].content


@pytest.mark.timeout(30)
def test_mcp_cancelling_a_call_tells_the_server(sdk: SdkServer, tmp_path: Path) -> None:
    flag = tmp_path / "flag"

    def said(word: str) -> bool:
        return flag.exists() and flag.read_text() == word

    async def cancel_a_call() -> dict[str, Any]:
        client = sdk.client
        call = asyncio.create_task(client.call_tool("wait", {"flag": str(flag)}))
        await until(lambda: said("started") or call.done())  # the SDK runs the tool
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert client.pending == {}
        await until(lambda: said("cancelled"))  # the SDK cancelled the tool: it got the id
        return await client.call_tool("add", {"a": 1, "b": 1})

    again = sdk.run(cancel_a_call())
    assert again["content"][0]["text"] == "2"  # the connection is still good
