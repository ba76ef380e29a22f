"""ch19 · Print mode: ``claw -p`` for scripts, with only the answer (or JSON) on stdout.

claw runs in this process against the loopback server, with standard input replaced by what
a script would pipe in.
"""

import io
import json
from pathlib import Path

import pytest
from claw_command import calls, no_fsync, says, tool_results

from claw.main import main
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def run_print(
    server: LoopbackServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    *arguments: str,
    stdin: str = "",
) -> int:
    """``claw ARGUMENTS...`` in ``project`` with ``stdin`` piped in; its exit status."""
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(project))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main([*arguments, "--model", "test/model", "--base-url", server.base_url])


def last_user_message(server: LoopbackServer) -> str:
    """What the user's last message to the model said, in the first request."""
    users = [m for m in server.requests[0].json["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def test_cli_print_mode_prints_only_the_answer_on_stdout(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    server.add(calls("read", {"path": "notes.txt"}), says("The note says: remember the milk."))

    code = run_print(server, tmp_path, monkeypatch, "-p", "What does notes.txt say?")

    assert code == 0
    captured = capsys.readouterr()
    assert captured.out == "The note says: remember the milk.\n"  # no tool lines, no summary
    assert "remember the milk" in tool_results(server)[0]


def test_cli_print_mode_adds_piped_stdin_as_context_and_dash_reads_the_prompt(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    server.add(says("Looks fine."))
    assert run_print(server, tmp_path, monkeypatch, "-p", "review this", stdin=diff) == 0
    sent = last_user_message(server)
    assert sent.startswith("review this\n\n<stdin>\n")
    assert sent.endswith(f"{diff.rstrip()}\n</stdin>")

    assert capsys.readouterr().out == "Looks fine.\n"
    server.requests.clear()
    server.add(says("4"))
    assert run_print(server, tmp_path, monkeypatch, "-p", "-", stdin="What is 2+2?\n") == 0
    assert last_user_message(server) == "What is 2+2?\n"
    assert capsys.readouterr().out == "4\n"


def test_cli_print_mode_without_a_prompt_is_a_one_line_usage_error(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_print(server, tmp_path, monkeypatch, "-p", "-", stdin="") == 2
    err = capsys.readouterr().err
    assert (
        err
        == "claw: error: no prompt: give one, or pipe it in with the prompt - (see claw --help)\n"
    )
    assert server.requests == []
    # Without -p and without a terminal there is no one to converse with: a usage error too.
    assert run_print(server, tmp_path, monkeypatch) == 2
    assert "no prompt and no terminal" in capsys.readouterr().err
    # A format for scripts without print mode: an error, not a format quietly ignored.
    assert run_print(server, tmp_path, monkeypatch, "hi", "--output-format", "json") == 2
    assert "--output-format needs -p" in capsys.readouterr().err


def test_cli_print_mode_json_is_one_result_object_with_the_finish_reason_and_usage(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.add(says("Done."))
    assert run_print(server, tmp_path, monkeypatch, "-p", "hi", "--output-format", "json") == 0
    (line,) = capsys.readouterr().out.splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["finish_reason"] == "done"
    assert result["result"] == "Done." and result["num_turns"] == 1
    assert result["usage"]["input_tokens"] > 0 and result["usage"]["output_tokens"] > 0
    assert "total_cost_usd" in result and isinstance(result["duration_ms"], int)

    # A run a limit ended: exit status 1, and the result says which limit.
    server.add(calls("glob", {"pattern": "*"}))
    code = run_print(
        server, tmp_path, monkeypatch, "-p", "go", "--output-format", "json", "--max-steps", "1"
    )
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["subtype"] == "error_max_turns" and result["finish_reason"] == "max_turns"
    assert result["is_error"] is True


def test_cli_print_mode_stream_json_is_one_object_per_event_then_the_result(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    server.add(calls("read", {"path": "a.txt"}), says("It says alpha."))

    code = run_print(
        server, tmp_path, monkeypatch, "-p", "read a", "--output-format", "stream-json"
    )

    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [line["type"] for line in lines]
    assert types[0] == "system" and lines[0]["subtype"] == "init" and "read" in lines[0]["tools"]
    assert types[-1] == "result" and types.count("result") == 1
    use = next(line for line in lines if line["type"] == "tool_use")
    assert use["name"] == "read" and use["input"] == {"path": "a.txt"}
    result = next(line for line in lines if line["type"] == "tool_result")
    assert result["tool_use_id"] == use["id"] and "alpha" in result["content"]
    assert types.index("tool_use") < types.index("tool_result") < types.index("assistant")
    streamed = "".join(line["text"] for line in lines if line["type"] == "text")
    assert streamed == "It says alpha." == lines[-1]["result"]
    assert types.count("usage") == 2


def test_cli_print_mode_never_takes_an_answer_from_piped_input(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The attack: the piped data says "y", as a person would answer the approval question.
    server.add(calls("write", {"path": "made.txt", "content": "x\n"}), says("I could not."))

    code = run_print(server, tmp_path, monkeypatch, "-p", "make made.txt", stdin="y\ny\ny\n")

    assert code == 0
    assert not (tmp_path / "made.txt").exists()
    captured = capsys.readouterr()
    assert captured.out == "I could not.\n"
    assert "needs approval" in captured.err and "there is no terminal to ask" in captured.err
    assert (
        "so it was not allowed (allow it with an allow rule in .claw/settings.json" in captured.err
    )
    assert "the user refused it" in tool_results(server)[0]


def test_cli_a_prompt_without_a_terminal_never_takes_an_answer_from_piped_input(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Without -p and without a terminal, claw runs the prompt once (chapter 12's run, no REPL);
    # a question is refused exactly as print mode refuses it, and the piped "y" approves nothing.
    refusals: list[str] = []
    for mode in (["-p"], []):
        server.add(calls("write", {"path": "made.txt", "content": "x\n"}), says("I could not."))
        code = run_print(server, tmp_path, monkeypatch, *mode, "make made.txt", stdin="y\ny\ny\n")
        assert code == 0
        assert not (tmp_path / "made.txt").exists()
        captured = capsys.readouterr()
        refusals += [line for line in captured.err.splitlines() if "needs approval" in line]
        assert "there is no terminal to ask" in captured.err
        assert "needs approval" not in captured.out  # no question on stdout either
        messages = server.requests[-1].json["messages"]
        (result,) = [message["content"] for message in messages if message["role"] == "tool"]
        assert "the user refused it" in result
    assert len(refusals) == 2 and refusals[0] == refusals[1]


def test_cli_a_plan_without_a_terminal_stays_pending_whatever_is_piped_in(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Plan mode presents a plan; the piped "y" must not approve it, with -p or without.
    plan = {"plan": "1. Delete every file."}
    for runs, mode in enumerate((["-p"], []), start=1):
        server.add(calls("exit_plan_mode", plan))  # one reply: an approval would find none
        arguments = [*mode, "clean up", "--permission-mode", "plan"]
        code = run_print(server, tmp_path, monkeypatch, *arguments, stdin="y\ny\n")
        assert code == 1  # the run ended plan_pending: not done
        assert len(server.requests) == runs  # no approval went back to the model
        captured = capsys.readouterr()
        assert "Approve this plan?" not in captured.out + captured.err
    assert "there is no terminal to ask" in captured.err
    assert "1. Delete every file." in captured.out  # the one-shot run shows the plan
