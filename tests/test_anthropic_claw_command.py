"""ch24 · ``claw --provider anthropic``: the command speaks the Messages API when asked."""

import io
from pathlib import Path

import pytest
from anthropic_wire import stream, text, thinking, tool_use

from claw.main import main
from clawbook.harness.loopback import LoopbackServer, StreamReply, split


def run(server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-command-test")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    base = server.base_url.removesuffix("/v1")
    return main([*args, "--model", "claude-test-1", "--base-url", base, "--unguarded"])


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_anthropic_claw_command_uses_the_messages_api(
    server, tmp_path, monkeypatch, capsys, how
):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    server.add(
        StreamReply(
            split(
                stream(
                    [thinking("Read it."), tool_use("toolu_1", "read", {"path": "notes.txt"})],
                    "tool_use",
                ),
                13,
            )
        ),
        StreamReply([stream([text("The note says to buy milk.")])]),
    )
    if how == "flag":
        arguments = ("What does notes.txt say?", "--provider", "anthropic", "--trust-project")
    else:
        monkeypatch.setenv("CLAW_PROVIDER", "anthropic")
        arguments = ("What does notes.txt say?", "--trust-project")
    code = run(server, tmp_path, monkeypatch, *arguments)

    assert code == 0
    out = capsys.readouterr().out
    assert "→ read(path='notes.txt')" in out
    assert out.endswith("The note says to buy milk.\n[done after 2 step(s)]\n")
    assert [request.path for request in server.requests] == ["/v1/messages"] * 2
    assert server.requests[0].headers["x-api-key"] == "sk-ant-command-test"
    assert server.requests[1].json["messages"][1]["content"][0] == thinking("Read it.")
