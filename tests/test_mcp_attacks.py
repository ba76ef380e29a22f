"""ch23 · Attacks by a hostile MCP server: names made to confuse, escapes, a line without end.

A server chooses its tools' names and descriptions, its results and its stderr. None of it may
make one tool pass for another under ``mcp__<server>__<tool>`` (so a permission rule for one
never matches another), reach the terminal as escape sequences, or take claw down: not a tool
without a name, not a string no UTF-8 can hold, not a flood of notifications.
"""

import json
import sys
from pathlib import Path

import pytest
from brought import Row, attack, rows
from claw_command import calls, run_claw, says, tool_results

from claw.mcp.client import McpClient, ServerSpec
from claw.mcp.tools import McpTool, tool_name
from claw.permissions import Decision, Mode, Permissions
from claw.types import ToolCall
from clawbook.harness.loopback import LoopbackServer

HOSTILE = Path(__file__).parent / "mcp_server_hostile.py"
BROKEN = Path(__file__).parent / "mcp_server_broken.py"
LIMIT = 1024 * 1024
"""``LINE_LIMIT`` in the test of a line over it (claw's own is 16 MiB)."""



def decide(root: Path, name: str, **rules: list[str]) -> Decision:
    permissions = Permissions(root, mode=Mode.DEFAULT, **rules)  # type: ignore[arg-type]
    return permissions.decide(ToolCall(id="c", name=name, arguments={})).decision


def test_mcp_attack_names_that_could_split_two_ways_or_hide_are_refused(tmp_path: Path) -> None:
    # Server "fs_" with tool "x" and server "fs" with tool "_x" would both be mcp__fs___x: a
    # rule for the whole server fs would then cover the other server's tool. Only one may exist.
    assert tool_name("fs", "_x") == "mcp__fs___x"
    with pytest.raises(ValueError, match="may not contain '__' nor end with '_'"):
        tool_name("fs_", "x")
    assert decide(tmp_path, "mcp__fs___x", deny=["mcp__fs"]) is Decision.DENY
    # A tool with "__" in its own name stays the server's: no rule for another tool covers it.
    both = tool_name("fs", "a__b")
    assert both == "mcp__fs__a__b"
    assert decide(tmp_path, both, deny=["mcp__fs__a"]) is Decision.ASK
    assert decide(tmp_path, both, deny=["mcp__fs"]) is Decision.DENY
    # A newline at the end, a space, a non-ASCII letter, 200 characters: no name at all.
    for tool in ("read\n", "my tool", "wr\u00efte", "x" * 200, "read\u200b"):
        with pytest.raises(ValueError):
            tool_name("fs", tool)
    with pytest.raises(ValueError, match="'read\\\\n' cannot be part of a tool name"):
        tool_name("fs", "read\n")


def test_mcp_attack_a_hostile_servers_names_and_escapes_never_reach_the_terminal(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    servers = {"hostile": {"command": sys.executable, "args": ["-I", "-S", str(HOSTILE), "names"]}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / ".claw").mkdir()
    rules = {"permissions": {"allow": ["mcp__hostile"], "deny": ["mcp__hostile__read"]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(rules))
    server.add(
        calls("mcp__hostile__a__b", {}, "call-1"),
        calls("mcp__hostile__read", {}, "call-2"),
        calls("mcp__hostile__read_", {}, "call-3"),
        says("Done."),
    )

    status = run_claw(server, tmp_path, monkeypatch, "go", "--mcp", "--trust-project")

    out, err = capsys.readouterr()
    assert status == 0
    offered = {t["function"]["name"] for t in server.requests[0].json["tools"]}
    assert {name for name in offered if name.startswith("mcp__")} == {
        "mcp__hostile__read",
        "mcp__hostile__read_",  # "read\n": each character a name cannot hold becomes "_"
        "mcp__hostile__a__b",
        "mcp__hostile__my_tool",
        "mcp__hostile__wr_te",
        "mcp__hostile___evil",
    }
    skipped = [line for line in err.splitlines() if "tool skipped" in line]
    assert len(skipped) == 1, err  # the 200 characters: no name part makes that short
    assert "longer than 64 characters" in skipped[0]
    called, refused, mapped = tool_results(server)
    assert called.endswith("called a__b")  # the server's own text goes to the model as it is
    assert 'the deny rule "mcp__hostile__read" matches' in refused
    assert mapped.endswith("called read\n")  # another tool: the server's "read\n", by that name
    assert "\x1b" not in out and "\x1b" not in err and "\x07" not in out + err
    assert "\\x1b" in out  # shown, escaped


async def test_mcp_attack_a_server_that_writes_a_line_over_the_limit_is_an_error_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A megabyte over the limit takes the same way as a gigabyte: claw stops at LINE_LIMIT.
    # The limit is lowered to 1 MiB (claw reads it when it starts a server): the same way,
    # without sending 17 MiB through a pipe.
    monkeypatch.setattr("claw.mcp.client.LINE_LIMIT", LIMIT)
    size = str(LIMIT + 1024 * 1024)
    server = ServerSpec("huge", sys.executable, ("-I", "-S", str(HOSTILE), "huge-line", size))
    client = McpClient(server)
    await client.start()
    try:
        output = await McpTool(client, client.tools[0]).run({})
        again = await McpTool(client, client.tools[0]).run({})
    finally:
        await client.close()
    assert output.is_error
    assert output.content.startswith(
        f"MCP server 'huge': the server wrote a line longer than {LIMIT} bytes"
    )
    assert again.is_error and again.content == output.content
    assert client.process is not None and client.process.returncode is not None
    assert client.process.stdout is not None and client.process.stdout.at_eof(), (
        "the rest of the line was read to the end: no pipe left open behind the error"
    )


@pytest.mark.parametrize("row", rows("ch23"))
def test_mcp_attack_an_untrusted_folders_server_does_not_start_even_with_the_flag(
    row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A .mcp.json alone makes the folder one to trust: untrusted, without a terminal, even
    # "claw --mcp" starts none of its servers; with --trust-project it does.
    attack(row, tmp_path, monkeypatch)


def mcp_project(root: Path, name: str, script: Path, *args: str) -> None:
    """``root`` with a ``.mcp.json`` naming one server, and settings that allow its tools."""
    servers = {name: {"command": sys.executable, "args": ["-I", "-S", str(script), *args]}}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / ".claw").mkdir()
    rules = {"permissions": {"allow": [f"mcp__{name}"]}}
    (root / ".claw" / "settings.json").write_text(json.dumps(rules))


def test_mcp_attack_tool_entries_without_a_name_or_schema_are_skipped_and_the_rest_kept(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    mcp_project(tmp_path, "wild", HOSTILE, "wild")
    server.add(calls("mcp__wild__files_read", {}, "call-1"), says("Done."))

    status = run_claw(server, tmp_path, monkeypatch, "go", "--mcp", "--trust-project")

    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Traceback" not in out + err
    offered = {t["function"]["name"] for t in server.requests[0].json["tools"]}
    assert {name for name in offered if name.startswith("mcp__")} == {
        "mcp__wild__db_query", "mcp__wild__db_query_2", "mcp__wild__files_read"
    }
    skipped = [line for line in err.splitlines() if "tool without a name" in line]
    assert len(skipped) == 4, err  # no name, a number, an empty name, a string
    assert all("MCP server 'wild': tool skipped: " in line for line in skipped)
    assert any('{"name": 42}' in line for line in skipped)  # each shows the entry
    assert any("no name, déjà" in line for line in skipped)  # as the server wrote it
    # A schema no model could be offered would make the provider refuse every request: the
    # tool is skipped, named, and the run goes on.
    unfit = [line for line in err.splitlines() if "an inputSchema not of type object" in line]
    assert len(unfit) == 2, err
    assert all("MCP server 'wild': tool skipped: " in line for line in unfit)
    assert any('"inputSchema": ["path"]' in line for line in unfit)
    assert any('"type": "string"' in line for line in unfit)
    (called,) = tool_results(server)
    assert called.endswith("called files/read")


def test_mcp_attack_a_lone_surrogate_neither_crashes_claw_nor_is_lost(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # "\ud800" is half of a UTF-16 pair: JSON can say it, no UTF-8 can hold it, and Python's
    # json gives a str that raises UnicodeEncodeError wherever it is written.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    mcp_project(tmp_path, "half", HOSTILE, "surrogate")
    server.add(calls("mcp__half__go", {}, "call-1"), says("Done."))

    status = run_claw(server, tmp_path, monkeypatch, "go", "--mcp", "--trust-project")

    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Traceback" not in out + err
    (result,) = tool_results(server)
    assert result == "a lone \\ud800 and a pair \U0001f600"  # escaped, as six characters
    offered = {t["function"]["name"]: t["function"] for t in server.requests[0].json["tools"]}
    assert offered["mcp__half__go"]["description"] == "half \\ud800 here"
    (out + err).encode("utf-8")  # all of it can be written


async def test_mcp_attack_a_flood_of_list_changed_notifications_lists_at_most_twice() -> None:
    # 1,000 notifications in one burst: each once started a listing of its own. Now one runs,
    # and one more waits for all that came meanwhile.
    client = McpClient(ServerSpec("flood", sys.executable, ("-I", "-S", str(BROKEN), "flood")))
    await client.start()
    changes: list[int] = []
    client.on_tools_changed = lambda c: changes.append(1)
    try:
        before = json.loads((await client.call_tool("go", {"flood": 1000}))["content"][0]["text"])
        while (refreshing := client.refreshing) is not None:  # the burst's listings, to the end
            await refreshing
        after = json.loads((await client.call_tool("go", {}))["content"][0]["text"])
    finally:
        await client.close()
    assert before == 1  # the listing at the start
    assert 1 <= after - before <= 2 and len(changes) == after - before
    assert [tool.name for tool in client.tools] == ["go"]
