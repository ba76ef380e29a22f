"""ch22 · Attacks by a hostile transcript handed to ``--resume``.

A transcript is a file on disk: anything may have written it, or cut it short. A torn last
line, a line that is JSON but not a record of the right shape, an id that climbs out of the
sessions folder, a line of tens of megabytes, escapes in a first prompt: each is a clear
warning or error naming the file and the line, nothing is sent, and nothing is lost (the file
is left as it was).
"""

import json
from pathlib import Path

import pytest
from claw_command import no_fsync, run_claw, says

from claw.sessions import list_sessions, load_session, sessions_folder, start_session
from claw.transcript import TranscriptError, message_record
from claw.types import UserMessage
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def transcript(project: Path, *lines: str) -> Path:
    """A session of ``project`` holding a first prompt, then ``lines`` as written."""
    _, writer = start_session(project)
    writer.append([message_record(UserMessage(content="What is in notes.txt?"))])
    writer.close()
    with writer.path.open("a", encoding="utf-8") as file:
        file.write("".join(lines))
    return writer.path


def test_session_attack_a_torn_last_line_is_a_warning_and_the_rest_resumes(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = transcript(tmp_path, '{"type":"message","message":{"role":"assist')
    server.add(says("Milk."))

    status = run_claw(server, tmp_path, monkeypatch, "And?", "-r", path.stem, "--unguarded")

    assert status == 0
    err = capsys.readouterr().err
    assert f"claw: warning: {path}:3: " in err
    sent = [m["content"] for m in server.requests[0].json["messages"] if m["role"] == "user"]
    assert sent == ["What is in notes.txt?", "And?"]
    resumed = load_session(path)
    assert resumed.notices == []  # the torn piece was cut off before claw appended
    assert [m.text for m in resumed.history][-3:] == ["What is in notes.txt?", "And?", "Milk."]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[1, 2]", "not a record (an object with a type)"),
        ('{"type": 7}', "not a record (an object with a type)"),
        ('{"type": "message", "message": {"role": "wizard"}}', "not a valid message record"),
        ('{"type": "history", "messages": "all"}', "not a valid history record"),
        ('{"type": "event"}', "not a valid event record (an event name and its data)"),
        ('{"type": "event", "event": "StepUsage", "data": "x"}', "not a valid event record"),
    ],
)
def test_session_attack_json_of_the_wrong_shape_is_an_error_naming_the_line(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    line: str,
    problem: str,
) -> None:
    path = transcript(tmp_path, line + "\n")
    before = path.read_bytes()
    with pytest.raises(TranscriptError) as caught:
        load_session(path)
    assert str(caught.value).startswith(f"{path}:3: {problem}")

    status = run_claw(server, tmp_path, monkeypatch, "And?", "-r", path.stem, "--unguarded")

    assert status == 1
    assert f"claw: {path}:3: {problem}" in capsys.readouterr().err
    assert server.requests == []  # nothing sent
    assert path.read_bytes() == before  # nothing lost, nothing added


def test_session_attack_a_session_record_without_an_id_is_an_error(tmp_path: Path) -> None:
    path = transcript(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["id"]
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    with pytest.raises(TranscriptError) as caught:
        load_session(path)
    assert str(caught.value) == f"{path}:1: not a valid session record (no id)"


def test_session_attack_an_id_that_climbs_out_of_the_folder_finds_nothing(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = sessions_folder(tmp_path)
    mine = transcript(tmp_path)
    victim = folder.parent / "victim.jsonl"
    victim.write_bytes(mine.read_bytes())
    for given in ("../victim", f"../{folder.name}/../victim", str(victim.with_suffix(""))):
        status = run_claw(server, tmp_path, monkeypatch, "Hi.", "-r", given, "--unguarded")
        assert status == 1
        assert f"no session {given!r} in {folder}" in capsys.readouterr().err
    assert server.requests == []
    assert victim.read_bytes() == mine.read_bytes()
    assert [info.path for info in list_sessions(tmp_path)] == [mine]


def test_session_attack_a_huge_line_is_read_whole_or_refused_in_a_short_message(
    tmp_path: Path,
) -> None:
    size, megabyte = 30_000_000, b"x" * 1_000_000
    before, after = json.dumps(message_record(UserMessage(content="BIG"))).encode().split(b"BIG")
    fine = transcript(tmp_path)
    with fine.open("ab") as file:  # a message of 30 MB, written a megabyte at a time
        file.write(before)
        for _ in range(size // len(megabyte)):
            file.write(megabyte)
        file.write(after + b"\n")
    assert load_session(fine).history[-1].text == "x" * size  # a long message is kept, whole
    bad = transcript(tmp_path, "{" + megabyte.decode() + "\n")  # the message must not quote it
    with pytest.raises(TranscriptError) as caught:
        load_session(bad)
    message = str(caught.value)
    assert message.startswith(f"{bad}:3: not a JSON record (")
    assert len(message) < 500, "the line itself is not quoted"


def test_session_attack_escapes_in_a_first_prompt_never_reach_the_terminal(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, writer = start_session(tmp_path)
    hostile = "\x1b]0;pwned\x07\x1b[2Jfix the build"
    writer.append([message_record(UserMessage(content=hostile))])
    writer.close()
    monkeypatch.setattr("claw.session_start.interactive", lambda: True)
    server.add(says("Hello."))

    status = run_claw(
        server, tmp_path, monkeypatch, "Hi.", "--resume", "--unguarded", answers="1\n"
    )

    err = capsys.readouterr().err
    assert "\\x1b]0;pwned\\x07\\x1b[2Jfix the build" in err  # shown, escaped
    assert "\x1b" not in err and "\x07" not in err
    assert status == 0
