"""ch23 · MCP: claw's client over stdio, against servers made with the official ``mcp`` SDK.

The SDK is the oracle: the same server's tools listed and called by claw (over stdio, the server
a subprocess) and by the SDK's own ``Client`` (connected in memory, which spares the test a
second server start) agree. A hand-written broken server writes nonsense, crashes in the middle of
a call or never answers; each is an error result with a clear message, in bounded time, and
stopping it stops every process it started. Then the names: ``mcp__<server>__<tool>``,
permission rules and hook matchers by that name, ``.mcp.json`` in Claude Code's format, a
project's servers started only with the user's consent, and the ``claw`` command end to end.
"""

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_server_sdk as sdk_demo
import pytest
from claw_command import calls, run_claw, says, tool_results
from marked_processes import assert_none_marked, unique_marker, wait_marked
from mcp import Client

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
from claw.mcp.tools import McpTool, block_text, result_output, tool_name
from claw.permissions import Decision, Mode, Permissions
from claw.types import ToolCall, ToolOutput, ToolSet
from clawbook.harness.loopback import LoopbackServer

HERE = Path(__file__).parent
SDK_SERVER = HERE / "mcp_server_sdk.py"
PAGED_SERVER = HERE / "mcp_server_paged.py"
BROKEN_SERVER = HERE / "mcp_server_broken.py"

pytestmark = pytest.mark.timeout(60)  # each test starts real Python servers that import the SDK


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


def spec(name: str, script: Path, *args: str) -> ServerSpec:
    return ServerSpec(name, sys.executable, (str(script), *args))


async def started(server: ServerSpec, **options: float) -> McpClient:
    client = McpClient(server, **options)
    await client.start()
    return client


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


# ---- the SDK as the oracle


async def test_mcp_claw_and_the_sdk_list_the_same_tools() -> None:
    client = await started(spec("demo", SDK_SERVER))
    try:
        mine = [(t.name, t.description, t.input_schema) for t in client.tools]
    finally:
        await client.close()
    async with Client(sdk_demo.app) as sdk:
        listed = await sdk.list_tools()
    theirs = [(t.name, t.description or "", dict(t.input_schema)) for t in listed.tools]
    assert [name for name, _, _ in mine] == ["add", "greet", "fail", "wait", "spawn"]
    assert mine == theirs
    assert client.protocol_version == SUPPORTED_VERSIONS[0]


async def test_mcp_a_call_gives_the_same_content_as_the_sdks() -> None:
    calls_to_make = [("add", {"a": 2, "b": 40}), ("greet", {"name": "Zoë ✓", "excited": True}),
                     ("fail", {"why": "the disk is full"})]
    client = await started(spec("demo", SDK_SERVER))
    try:
        mine = [await client.call_tool(name, arguments) for name, arguments in calls_to_make]
        tools = {tool.name: McpTool(client, tool) for tool in client.tools}
        outputs = [await tools[name].run(arguments) for name, arguments in calls_to_make]
        long_answer = (await tools["greet"].run({"name": "z" * 100_000})).content
    finally:
        await client.close()

    async with Client(sdk_demo.app) as sdk:
        theirs = [await sdk.call_tool(name, arguments) for name, arguments in calls_to_make]
    for raw, answer in zip(mine, theirs, strict=True):
        assert [b["text"] for b in raw["content"]] == [b.text for b in answer.content]
        assert bool(raw.get("isError")) == answer.is_error
    assert [o.content for o in outputs[:2]] == ["42", "Hello, Zoë ✓!"]
    assert long_answer == f"Hello, {'z' * 100_000}."  # a line far over asyncio's 64 KiB
    assert not outputs[0].is_error and outputs[2].is_error
    assert "the disk is full" in outputs[2].content


# ---- the protocol


async def test_mcp_tools_list_follows_next_cursor_across_pages() -> None:
    client = await started(spec("paged", PAGED_SERVER))
    try:
        names = [tool.name for tool in client.tools]
    finally:
        await client.close()
    assert names == ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4", "mixed", "grow"]


async def test_mcp_content_blocks_become_text_and_is_error_an_error_result() -> None:
    client = await started(spec("paged", PAGED_SERVER))
    try:
        by_name = {tool.name: McpTool(client, tool) for tool in client.tools}
        mixed = await by_name["mixed"].run({})
        failed = await by_name["tool_1"].run({"fail": True})
        fine = await by_name["tool_1"].run({})
    finally:
        await client.close()
    assert mixed.content == "first\n[image: image/png, 8 bytes of base64]\na note"
    assert not mixed.is_error
    assert failed.is_error and failed.content == "tool 1"
    assert not fine.is_error and fine.content == "tool 1"
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
    await servers.start([spec("paged", PAGED_SERVER)], tools)
    try:
        assert "mcp__paged__grown" not in tools
        grown = await tools["mcp__paged__grow"].run({})
        assert grown.content == "grew"
        for _ in range(200):
            if "mcp__paged__grown" in tools:
                break
            await asyncio.sleep(0.02)
        assert tools.names[-1] == "mcp__paged__grown"
        assert (await tools["mcp__paged__grown"].run({})).content == "grown"
    finally:
        await servers.close()


async def test_mcp_the_handshake_refuses_a_version_claw_does_not_speak(marker: str) -> None:
    with pytest.raises(McpError) as caught:
        await started(spec("old", BROKEN_SERVER, "old-version", marker))
    assert str(caught.value) == (
        "MCP server 'old': the server speaks MCP version '1999-01-01', which claw does not "
        f"support (claw speaks {', '.join(SUPPORTED_VERSIONS)})"
    )
    assert_none_marked(marker, within=5)


async def test_mcp_cancelling_a_call_tells_the_server(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    client = await started(spec("demo", SDK_SERVER))
    try:
        call = asyncio.create_task(client.call_tool("wait", {"flag": str(flag)}))
        await asyncio.sleep(0.5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(250):
            if flag.exists():
                break
            await asyncio.sleep(0.02)
        assert flag.read_text() == "cancelled"  # the SDK cancelled the handler: it got the id
        assert client.pending == {}
        again = await client.call_tool("add", {"a": 1, "b": 1})
        assert again["content"][0]["text"] == "2"  # the connection is still good
    finally:
        await client.close()


async def test_mcp_the_client_answers_the_servers_requests_and_ignores_stray_lines() -> None:
    client = await started(spec("chatty", BROKEN_SERVER, "chatty"))
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


async def test_mcp_an_error_answer_and_an_answer_without_a_result(tmp_path: Path) -> None:
    client = await started(spec("strict", BROKEN_SERVER, "refuse"))
    try:
        with pytest.raises(RemoteError) as caught:
            await client.call_tool("go", {})
        output = await McpTool(client, client.tools[0]).run({})
        gone = await McpTool(client, RemoteTool("gone", "", {})).run({})  # no longer listed
    finally:
        await client.close()
    assert gone.is_error and gone.content.startswith("MCP server 'strict': ")
    assert "'gone'" in gone.content  # the message names the tool
    assert "no such tool today" not in gone.content  # refused by claw, never called
    assert caught.value.code == -32602 and "no such tool today" in str(caught.value)
    assert caught.value.data == {"asked": "go"}  # the error's data goes with it
    assert output.is_error
    assert output.content.startswith("MCP server 'strict': go failed: no such tool today")

    client = await started(spec("odder", BROKEN_SERVER, "odd-error"))
    try:
        with pytest.raises(RemoteError) as caught:  # an error that is not an object
            await client.call_tool("go", {})
    finally:
        await client.close()
    assert (caught.value.code, caught.value.data) == (0, None)
    assert str(caught.value) == str(RemoteError(0, ""))  # and an empty message, not "None"

    client = await started(spec("odd", BROKEN_SERVER, "no-result"))
    try:
        no_result = "MCP server 'odd': the answer to tools/call has no result object"
        with pytest.raises(McpError, match=no_result):
            await client.call_tool("go", {})
        output = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error and output.content.startswith("MCP server 'odd': ")

    with pytest.raises(McpError, match="MCP server 'loop': ") as looped:
        await started(spec("loop", BROKEN_SERVER, "cursor-loop"))
    assert "cursor" in str(looped.value)  # it says why

    client = await started(spec("empty", BROKEN_SERVER, "no-tools"))  # a result without tools
    await client.close()
    assert client.tools == []


async def test_mcp_a_server_runs_in_its_folder_with_claws_environment_and_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_INHERITED", "from claw")
    monkeypatch.setenv("MCP_OWN", "from claw too")
    server = ServerSpec("env", sys.executable, (str(BROKEN_SERVER), "env"), {"MCP_OWN": "own"})
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
    # It runs on: claw waits STOP_GRACE for it to exit before it says why the call failed, and
    # again when it stops it. A short grace gives the same answer, sooner.
    monkeypatch.setattr("claw.mcp.client.STOP_GRACE", 0.3)
    client = await started(spec("quiet", BROKEN_SERVER, "close-output"))
    try:
        output = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content == "MCP server 'quiet': the server closed its output"


# ---- broken servers


async def test_mcp_a_line_that_is_not_json_is_an_error_result_not_a_hang() -> None:
    client = await started(spec("bad", BROKEN_SERVER, "bad-json"))
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
    client = await started(spec("crashy", BROKEN_SERVER, "crash"))
    try:
        output = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content == (
        "MCP server 'crashy': the server exited (exit code 3) (its stderr ends: crash: dying now)"
    )


async def test_mcp_a_server_that_never_answers_times_out_and_is_killed_with_its_children(
    marker: str,
) -> None:
    client = await started(spec("stuck", BROKEN_SERVER, "hang", marker), call_timeout=0.5)
    try:
        assert wait_marked(marker), "the server's child runs"
        output = await McpTool(client, client.tools[0]).run({})
        assert output.is_error
        assert output.content == "MCP server 'stuck': no answer to tools/call within 0.5 s"
        assert client.pending == {}  # claw gave up on that id: an answer now would be ignored
    finally:
        await client.close()  # the server ignores SIGTERM and its stdin closing
    assert_none_marked(marker)
    assert client.process is not None and client.process.returncode is not None


async def test_mcp_a_server_that_never_finishes_the_handshake_is_an_error(marker: str) -> None:
    with pytest.raises(McpError) as caught:
        await started(spec("mute", BROKEN_SERVER, "hang-start", marker), start_timeout=0.5)
    assert str(caught.value) == "MCP server 'mute': no answer to initialize within 0.5 s"
    assert_none_marked(marker)
    with pytest.raises(McpError) as caught:  # the listing waits start_timeout too
        await started(spec("mute", BROKEN_SERVER, "hang-list", marker), start_timeout=0.5)
    assert str(caught.value) == "MCP server 'mute': no answer to tools/list within 0.5 s"
    assert_none_marked(marker)


async def test_mcp_closing_stops_every_process_the_server_started(marker: str) -> None:
    client = await started(spec("demo", SDK_SERVER))
    result = await client.call_tool("spawn", {"marker": marker})
    assert result["content"][0]["text"] == f"started {marker}"
    assert wait_marked(marker)
    await client.close()
    assert_none_marked(marker)
    await client.close()  # twice is fine
    with pytest.raises(McpError, match="the server was stopped"):
        await client.call_tool("add", {"a": 1, "b": 2})


async def test_mcp_stderr_is_kept_bounded_and_never_blocks_the_server() -> None:
    client = await started(spec("noisy", SDK_SERVER, "--noisy"))
    try:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    finally:
        await client.close()
    assert result["content"][0]["text"] == "3"  # 1 MB of stderr did not block it
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


def test_mcp_claw_calls_an_sdk_servers_tool_and_survives_a_crashing_one(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str,
) -> None:
    servers = {
        "demo": {"command": sys.executable, "args": [str(SDK_SERVER)]},
        "crashy": {"command": sys.executable, "args": [str(BROKEN_SERVER), "crash", marker]},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / ".claw").mkdir()
    rules = {"permissions": {"allow": ["mcp__demo", "mcp__crashy"], "deny": ["mcp__demo__spawn"]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(rules))
    server.add(
        calls("mcp__demo__add", {"a": 20, "b": 22}, "call-1"),
        calls("mcp__crashy__go", {}, "call-2"),
        calls("mcp__demo__spawn", {"marker": marker}, "call-3"),
        says("The answer is 42."),
    )
    status = run_claw(server, tmp_path, monkeypatch, "add", "--mcp", "--trust-project")
    assert status == 0
    added, crashed, refused = tool_results(server)
    assert added == "42"
    assert "MCP server 'crashy': the server exited (exit code 3)" in crashed
    assert 'the deny rule "mcp__demo__spawn" matches' in refused
    sent = {tool["function"]["name"] for tool in server.requests[0].json["tools"]}
    assert {"mcp__demo__add", "mcp__crashy__go"} <= sent
    assert_none_marked(marker)  # claw stopped the servers, with their children, at exit
