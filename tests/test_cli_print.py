"""ch19 · Print mode: ``claw -p`` for scripts, with only the answer (or JSON) on stdout.

claw runs in this process against the loopback server, with standard input replaced by what
a script would pipe in.
"""

import io
import json
import socket
from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, says, tool_results

from claw.main import main
from clawbook.harness.loopback import JSONReply, LoopbackServer, error_body

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
    assert result["subtype"] == "error_max_turns" and result["finish_reason"] == "max_steps"
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


HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"
"""What a hostile server puts in its error text: an OSC 52 clipboard write ("pwned"), then a
clear-screen. Printed raw, a terminal would obey both."""


def without_warnings(err: str) -> str:
    """``err`` without claw's warning lines (a learner's claw before chapter 22 warns that the
    run is not saved as a session): what is left is what the run said of its error."""
    lines = err.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("claw: warning: "))


def test_cli_an_error_is_one_harmless_line_in_every_front_end_and_a_result_in_json(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, claw_config_dir: Path
) -> None:
    from claw.providers.http import RetryPolicy

    # A refused connection is not retried here: the retries are chapter 5b's subject.
    monkeypatch.setattr(RetryPolicy, "delay", lambda *_: None)
    down = LoopbackServer()  # never started: its port is one nothing listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down.port = probe.getsockname()[1]
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    settings = claw_config_dir / "settings.json"  # in claw's own folder, not in home

    def unknown_model() -> LoopbackServer:
        message = f"test/model is not a valid model ID{HOSTILE}"
        server.add(*[JSONReply(error_body(400, message), status=400)] * 2)
        return server

    def bad_settings() -> LoopbackServer:
        settings.write_text('{"model": ')
        return server

    def claw(to: LoopbackServer, *mode: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        for name, value in (("stdin", io.StringIO("")), ("stdout", out), ("stderr", err)):
            monkeypatch.setattr(f"sys.{name}", value)
        status = main([*mode, "Hello?", "--model", "test/model", "--base-url", to.base_url])
        return status, out.getvalue(), err.getvalue()

    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    cases = [
        (lambda: down, f"claw: cannot reach {down.base_url}"),
        (unknown_model, r"claw: HTTP 400: test/model is not a valid model ID\x1b]52;c;cHduZWQ="),
        (bad_settings, f"claw: {settings}: not valid JSON"),
    ]
    formats = (["-p"], ["-p", "--output-format", "json"], ["-p", "--output-format", "stream-json"])
    errors = ""
    for prepare, said in cases:
        for mode in (*formats, []):  # [] is chapter 12's one-shot run (no terminal)
            status, out, err = claw(prepare(), *mode)
            errors += err
            err = without_warnings(err)  # before chapter 22: "not saved as a session yet"
            assert status == 1, (mode, said)
            assert err.startswith(said) and err.count("\n") == 1, (mode, err)
            if mode[1:]:  # JSON: the last line is a result object that says it is an error
                result = json.loads(out.splitlines()[-1])
                assert result["type"] == "result" and result["is_error"] is True
                assert result["subtype"] == "error_during_execution"
                assert result["result"] == err.removeprefix("claw: ").rstrip("\n")
            elif mode:
                assert out == ""  # nothing but the answer goes to stdout, and there is none
        # The REPL: the error is told and the conversation goes on to the next prompt; an
        # error before the conversation starts (the settings) ends claw with status 1.
        done = converse(prepare(), project, monkeypatch, keys="Hello?\rAgain?\r", home=home)
        errors += done.err
        said_lines = without_warnings(done.err).splitlines()
        told = [line for line in said_lines if line.startswith("claw: ")]
        assert all(line.startswith(said) for line in told), told
        if prepare is bad_settings:
            assert (done.status, len(told)) == (1, 1)
        else:
            assert (done.status, len(told)) == (0, 2)
        settings.unlink(missing_ok=True)
    assert "Traceback" not in errors and HOSTILE[:5] not in errors and "\x1b[2J" not in errors
