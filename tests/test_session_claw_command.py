"""ch22 · Sessions in the ``claw`` command: each run recorded; --continue, --resume, --fork-session.

The oracle for "resuming rebuilds exactly the history that was sent" is the wire: the messages
the loopback server received in the first run, plus the answer it gave, must be what the
resumed run sends, byte for byte as JSON, before the new prompt.
"""

import json
from decimal import Decimal
from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, run_claw, says

from claw.sessions import (
    fork_session,
    list_sessions,
    load_session,
    session_usage,
    sessions_folder,
)
from claw.types import TokenUsage
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    chunk,
    sse,
    text_chunks,
    usage_body,
)

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def costs(text: str, cost: float) -> StreamReply:
    """A streamed text answer whose usage chunk reports ``cost`` dollars."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks(text),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=usage_body(100, 20, cost=cost)),
            )
        ]
    )


def first_run(server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run that reads a file, then answers: the session it left."""
    (project / "notes.txt").write_text("buy milk — и хлеб\n")
    server.add(calls("read", {"path": "notes.txt"}), says("It says: buy milk — и хлеб."))
    code = run_claw(server, project, monkeypatch, "What does notes.txt say?", "--unguarded")
    assert code == 0
    [session] = list_sessions(project)
    return session.path


def test_session_every_run_is_recorded_in_the_projects_folder(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    claw_config_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = sessions_folder(tmp_path)
    path = first_run(server, tmp_path, monkeypatch)
    assert path.parent == folder == claw_config_dir / "projects" / folder.name
    assert path.suffix == ".jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["type"] == "session" and records[0]["id"] == path.stem
    assert records[0]["cwd"] == str(tmp_path.resolve())
    kinds = {record.get("event") for record in records if record["type"] == "event"}
    assert {"StepUsage", "ToolCalled", "ToolResult", "RunFinished"} <= kinds
    assert capsys.readouterr().out.endswith("[done after 2 step(s)]\n")  # nothing else on stdout


def test_session_a_folder_that_cannot_be_made_is_one_warning_and_the_run_goes_on(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    claw_config_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A file where the sessions' folder should be: each front end says so in one line, runs
    # unsaved, and shows no traceback.
    (claw_config_dir / "projects").write_text("not a folder\n")
    folder = sessions_folder(tmp_path)
    for mode in ([], ["-p"], ["-p", "--output-format", "json"]):
        server.add(says("Still here."))
        assert run_claw(server, tmp_path, monkeypatch, "Hello?", *mode) == 0, mode
        out, err = capsys.readouterr()
        assert "Still here." in out, mode
        warning = f"claw: warning: this run is not saved as a session: {folder}: Not a directory"
        assert err.splitlines()[0] == warning, mode  # then only the run's own lines
        assert err.count("claw: warning") == 1 and "Traceback" not in err, (mode, err)
    server.add(says("Still here."))
    talk = converse(server, tmp_path, monkeypatch, keys="Hello?\r")  # and the REPL
    assert talk.status == 0 and "Still here." in talk.out
    assert talk.err.count(warning) == 1 and "Traceback" not in talk.err, talk.err
    assert (claw_config_dir / "projects").read_text() == "not a folder\n"  # left as it was


def test_session_continue_sends_exactly_the_history_of_the_last_run(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions_folder(tmp_path)
    path = first_run(server, tmp_path, monkeypatch)
    sent = server.requests[-1].json["messages"]
    answer = {"role": "assistant", "content": "It says: buy milk — и хлеб."}
    server.add(says("Milk and bread."))

    assert (
        run_claw(server, tmp_path, monkeypatch, "And in English?", "--continue", "--unguarded") == 0
    )

    resumed = server.requests[-1].json["messages"]
    assert resumed == [*sent, answer, {"role": "user", "content": "And in English?"}]
    assert list_sessions(tmp_path)[0].path == path  # the same session, appended to
    assert load_session(path).history[-1].text == "Milk and bread."


def test_session_resume_by_id_or_a_unique_start_of_it(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions_folder(tmp_path)
    older = first_run(server, tmp_path, monkeypatch)
    server.add(says("Hello."))
    assert run_claw(server, tmp_path, monkeypatch, "Just say hello.", "--unguarded") == 0
    newer = list_sessions(tmp_path)[0].path
    assert newer != older  # a run without a flag is a new session

    server.add(says("Hello again."))  # --continue takes the newest
    assert run_claw(server, tmp_path, monkeypatch, "Again.", "-c", "--unguarded") == 0
    continued = json.dumps(server.requests[-1].json["messages"], ensure_ascii=False)
    assert "Just say hello." in continued and "notes.txt" not in continued
    assert load_session(newer).history[-1].text == "Hello again."

    server.add(says("Still milk."))
    code = run_claw(server, tmp_path, monkeypatch, "Again?", "-r", older.stem[:8], "--unguarded")
    assert code == 0
    roles = [message["role"] for message in server.requests[-1].json["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert load_session(older).history[-1].text == "Still milk."


def test_session_resume_without_an_id_lists_them_to_choose_from(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sessions_folder(tmp_path)
    older = first_run(server, tmp_path, monkeypatch)
    server.add(says("Hello."))
    assert run_claw(server, tmp_path, monkeypatch, "Just say hello.", "--unguarded") == 0
    newer = list_sessions(tmp_path)[0].path
    capsys.readouterr()

    # No terminal: nobody to ask, so an error that lists the sessions and says what to do.
    assert run_claw(server, tmp_path, monkeypatch, "Hi.", "--resume", "--unguarded") == 1
    error = capsys.readouterr().err
    assert "there is no terminal to ask at" in error
    assert "name one with --resume ID" in error
    assert error.index(newer.stem) < error.index(older.stem)  # newest first
    assert "What does notes.txt say?" in error

    # At a terminal: a numbered list; a wrong answer is asked again.
    monkeypatch.setattr("claw.session_start.interactive", lambda: True)
    server.add(says("Milk."))
    code = run_claw(
        server, tmp_path, monkeypatch, "Hi.", "--resume", "--unguarded", answers="7\n2\n"
    )
    assert code == 0
    error = capsys.readouterr().err
    assert "  2. " in error and "Resume which session?" in error
    assert "(1-2, Enter for none)" in error
    assert "'7' is not a number from 1 to 2." in error
    assert load_session(older).history[-1].text == "Milk."


def test_session_fork_goes_on_in_a_new_session_and_leaves_the_old_one(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions_folder(tmp_path)
    original = first_run(server, tmp_path, monkeypatch)
    before = original.read_bytes()
    sent = server.requests[-1].json["messages"]
    server.add(says("Forked."))

    code = run_claw(
        server, tmp_path, monkeypatch, "Try another way.", "-c", "--fork-session", "--unguarded"
    )

    assert code == 0
    assert original.read_bytes() == before  # untouched
    [fork] = [info for info in list_sessions(tmp_path) if info.path != original]
    forked = load_session(fork.path)
    assert forked.forked_from == original.stem and forked.id == fork.path.stem
    assert server.requests[-1].json["messages"][: len(sent)] == sent
    assert forked.history[: len(load_session(original).history)] == load_session(original).history
    assert forked.history[-1].text == "Forked."

    # a torn last line is not copied: the fork holds the source's whole lines, nothing after
    original.write_bytes(before + b'{"type":"message","mess')
    source = load_session(original)
    _, writer = fork_session(source, tmp_path, home=tmp_path / "elsewhere")
    writer.close()
    assert writer.path.parent == sessions_folder(tmp_path, tmp_path / "elsewhere")
    copied = writer.path.read_bytes()
    assert copied.split(b"\n", 1)[1] == before.split(b"\n", 1)[1]
    again = load_session(writer.path)
    assert again.notices == [] and again.history == source.history


def test_session_cost_after_a_resume_is_the_whole_sessions(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions_folder(tmp_path)
    server.add(costs("One.", 0.0125))
    assert run_claw(server, tmp_path, monkeypatch, "First.", "--unguarded") == 0
    server.add(costs("Two.", 0.0075))
    assert run_claw(server, tmp_path, monkeypatch, "Second.", "--continue", "--unguarded") == 0
    [info] = list_sessions(tmp_path)
    assert session_usage(load_session(info.path)) == TokenUsage(
        input_tokens=200, output_tokens=40, cost=Decimal("0.02")
    )


def test_session_flags_that_cannot_work_are_clear_errors(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = sessions_folder(tmp_path)
    assert run_claw(server, tmp_path, monkeypatch, "Hi.", "--continue", "--unguarded") == 1
    error = capsys.readouterr().err
    assert error.startswith("claw: no session to continue: this folder has none yet")
    assert str(folder) in error
    assert run_claw(server, tmp_path, monkeypatch, "Hi.", "--resume", "nope", "--unguarded") == 1
    assert "no session 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run_claw(server, tmp_path, monkeypatch, "Hi.", "--fork-session", "--unguarded")
    assert exit_.value.code == 2
    assert "--fork-session needs --continue or --resume" in capsys.readouterr().err
    assert server.requests == []  # nothing was sent anywhere


def test_session_resume_command_lists_and_continues_a_session_in_the_repl(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import io

    from claw.loop import Agent
    from claw.slash import AppState, default_commands
    from claw.streaming import MockStreamProvider

    project = tmp_path / "project"
    project.mkdir()
    first_run(server, project, monkeypatch)
    (info,) = list_sessions(project)
    agent = Agent(MockStreamProvider([]), system="You are claw.")
    out = io.StringIO()
    state = AppState(agent, out, start=list(agent.history))
    commands = default_commands()

    def dispatch(line: str) -> None:
        asyncio.run(commands.dispatch(line, state))

    dispatch("/resume")
    assert info.id in out.getvalue() and "/resume ID continues one here" in out.getvalue()
    out.seek(0), out.truncate()
    dispatch(f"/resume {info.id[:8]}")  # a prefix of the id will do
    assert agent.history == load_session(info.path).history
    assert out.getvalue() == f"(resumed {info.id}: {len(agent.history)} messages)\n"
    out.seek(0), out.truncate()
    dispatch("/resume nope")
    assert "no session 'nope'" in out.getvalue()
    assert agent.history == load_session(info.path).history  # unchanged by a failed resume


def test_session_clear_after_continue_starts_a_new_conversation(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claw_command import converse

    first_run(server, tmp_path, monkeypatch)
    server.add(says("Fresh."))
    keys = "/clear\rHello.\r"
    done = converse(server, tmp_path, monkeypatch, "--continue", "--unguarded", keys=keys)
    assert done.status == 0 and "(conversation cleared)" in done.out
    sent = server.requests[-1].json["messages"]
    # The resumed history is gone: the system prompt, then the new prompt alone.
    assert [message["role"] for message in sent] == ["system", "user"]
    assert sent[-1]["content"] == "Hello." and "notes.txt" not in json.dumps(sent)


def test_session_continue_and_resume_say_which_session_its_first_prompt_and_age(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os
    import time

    path = first_run(server, tmp_path, monkeypatch)
    three_hours_ago = time.time() - 3 * 3600 - 1800
    os.utime(path, (three_hours_ago, three_hours_ago))
    capsys.readouterr()
    server.add(says("Milk."), says("Bread."))
    assert run_claw(server, tmp_path, monkeypatch, "Again.", "-c", "--unguarded") == 0
    said = (
        f'claw: resuming session {path.stem}: "What does notes.txt say?", '
        "last written 3 hours ago\n"
    )
    assert said in capsys.readouterr().err
    assert run_claw(server, tmp_path, monkeypatch, "More.", "-r", path.stem[:8], "--unguarded") == 0
    assert "last written just now" in capsys.readouterr().err  # the run before wrote to it


def test_session_flags_that_cannot_work_are_one_line_in_print_mode_json_and_the_repl(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from claw_command import converse

    from claw.main import main
    from claw.sessions import start_session

    def claw(*arguments: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        for name, value in (("stdin", io.StringIO("")), ("stdout", out), ("stderr", err)):
            monkeypatch.setattr(f"sys.{name}", value)
        status = main([*arguments, "--model", "test/model", "--base-url", server.base_url])
        return status, out.getvalue(), err.getvalue()

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    folder = sessions_folder(tmp_path)
    no_terminal = "claw: --resume without an id asks which session, and there is no terminal"
    cases = [
        (["-c"], f"claw: no session to continue: this folder has none yet ({folder})"),
        (["-r", "nope"], f"claw: no session 'nope' in {folder}"),
        (["--resume"], no_terminal),  # a session to choose from, and nobody to ask
    ]
    formats = (["-p"], ["-p", "--output-format", "json"], ["-p", "--output-format", "stream-json"])
    for flags, said in cases:
        if flags == ["--resume"]:
            _, writer = start_session(tmp_path)
            writer.close()
        for mode in formats:
            status, out, err = claw(*mode, "Hi.", *flags, "--unguarded")
            assert (status, err.startswith(said)) == (1, True), (mode, flags, err)
            assert "Traceback" not in err
            if mode[1:]:  # JSON: the result object says it is an error, and which
                result = json.loads(out.splitlines()[-1])
                assert result["is_error"] is True and result["subtype"] == "error_during_execution"
                assert said.removeprefix("claw: ") in result["result"]
            else:
                assert out == ""
        # The REPL ends before its first prompt, with the same line: nothing to converse in.
        done = converse(server, tmp_path, monkeypatch, *flags, "--unguarded", keys="\r")
        told = [line for line in done.err.splitlines() if line.startswith("claw: ")]
        if flags == ["--resume"]:  # at a terminal it asks; Enter chooses none
            assert "(1-1, Enter for none)" in done.err
            said = "claw: no session chosen"
        assert done.status == 1 and len(told) == 1 and told[0].startswith(said), told
    assert server.requests == []  # nothing was sent anywhere


def test_session_always_this_session_holds_after_continue_of_the_same_session(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claw_command import converse

    touch = {"command": "touch made.txt"}
    server.add(calls("bash", touch, call_id="b1"), says("Made."))
    first = converse(server, tmp_path, monkeypatch, keys="Make the file.\ra\r")
    assert "needs approval" in first.err and (tmp_path / "made.txt").exists()
    (tmp_path / "made.txt").unlink()

    server.add(calls("bash", touch, call_id="b2"), says("Made again."))
    again = converse(server, tmp_path, monkeypatch, "--continue", keys="Once more.\r")
    assert "needs approval" not in again.err  # "a" was for this session, and this is it
    assert (tmp_path / "made.txt").exists()
    (tmp_path / "made.txt").unlink()

    server.add(calls("bash", touch, call_id="b3"), says("Not made."))
    new = converse(server, tmp_path, monkeypatch, keys="And in a new session.\r")
    assert "needs approval" in new.err  # a new session starts without it
    assert not (tmp_path / "made.txt").exists()  # the question met the end of the input: no


def test_session_resume_followed_by_a_prompt_takes_it_as_the_prompt_not_an_id(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first_run(server, tmp_path, monkeypatch)
    monkeypatch.setattr("claw.session_start.interactive", lambda: True)
    server.add(says("Still milk."))
    # An id has no spaces: "-r 'And now?'" is -r without an id (choose), then the prompt.
    code = run_claw(
        server, tmp_path, monkeypatch, "-r", "And what now?", "--unguarded", answers="1\n"
    )
    assert code == 0
    sent = server.requests[-1].json["messages"]
    assert sent[-1] == {"role": "user", "content": "And what now?"}
    assert "notes.txt" in json.dumps(sent)  # the session chosen from the list goes on
    assert "Resume which session?" in capsys.readouterr().err
