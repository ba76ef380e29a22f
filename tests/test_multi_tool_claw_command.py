"""ch12 · The ``claw`` command: a prompt, a model and a server; events printed as they come."""

from pathlib import Path

import pytest
from claw_command import calls, run_claw, says

from claw.main import main
from claw.options import parse_arguments
from clawbook.harness.loopback import LoopbackServer


def test_multi_tool_claw_runs_a_prompt_and_prints_each_step(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    (tmp_path / "AGENTS.md").write_text("Answer in one sentence.\n")
    server.add(calls("read", {"path": "notes.txt"}), says("The note says to buy milk."))

    # --unguarded: chapter 12's claw, without chapters 13-16 in front of the tools;
    # --trust-project: the AGENTS.md came with the project, so it is used only when trusted
    prompt = "What does notes.txt say?"
    code = run_claw(server, tmp_path, monkeypatch, prompt, "--unguarded", "--trust-project")

    assert code == 0
    assert capsys.readouterr().out == (
        "→ read(path='notes.txt')\n"
        "  ✓ read:      1\tbuy milk\n"
        "The note says to buy milk.\n"
        "[done after 2 step(s)]\n"
    )
    first, second = (request.json for request in server.requests)
    assert first["model"] == "test/model"
    assert server.requests[0].headers["authorization"] == "Bearer sk-or-test"
    roles = [message["role"] for message in first["messages"]]
    assert roles == ["system", "system", "user"]  # the prompt, the instructions, the task
    assert "Answer in one sentence." in first["messages"][1]["content"]
    assert str(tmp_path.resolve()) in first["messages"][0]["content"]
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert {"read", "write", "edit", "apply_patch"} <= set(names)
    assert "web_fetch" not in names
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call-1",
        "content": "     1\tbuy milk",
    }


def test_multi_tool_claw_options_from_flags_and_environment(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAW_BASE_URL", raising=False)
    arguments = parse_arguments(["fix the bug"])
    # not given: None, and the settings decide (CLAW_BASE_URL, else OpenRouter; chapter 17)
    assert (arguments.prompt, arguments.base_url) == ("fix the bug", None)
    assert not arguments.web and not arguments.unguarded
    monkeypatch.setenv("CLAW_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    server.add(calls("read", {"path": "notes.txt"}))
    # it still wanted a tool after its one step: max_steps, exit status 1
    assert main(["hello", "--unguarded", "--web", "--max-steps", "1"]) == 1
    assert capsys.readouterr().out.endswith("[max_steps after 1 step(s)]\n")
    request = server.requests[0].json
    assert "web_fetch" in [tool["function"]["name"] for tool in request["tools"]]
    monkeypatch.setenv("CLAW_BASE_URL", "https://openrouter.ai/api/v1")
    monkeypatch.delenv("OPENROUTER_API_KEY")
    assert main(["hello", "--unguarded"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("claw: ")
    assert "no API key: set OPENROUTER_API_KEY" in error
    assert len(server.requests) == 1
