"""ch22 · Attacks by a hostile transcript handed to ``--resume``.

A transcript is a file on disk: anything may have written it, or cut it short. A torn last
line, a line that is JSON but not a record of the right shape, an id that climbs out of the
sessions folder, a line of tens of megabytes, escapes in a first prompt: each is a clear
warning or error naming the file and the line, nothing is sent, and nothing is lost (the file
is left as it was).

And the transcript holds every tool result, a password that ``read`` returned included: its
file is mode 600 and its folders, up to claw's own, mode 700, whatever the umask; folders an
older claw left open to others are tightened, and claw says so once.
"""

import json
import os
import stat
from pathlib import Path

import pytest
from claw_command import calls, no_fsync, run_claw, says

from claw.sessions import (
    fork_session,
    list_sessions,
    load_session,
    sessions_folder,
    start_session,
)
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


def modes(*paths: Path) -> list[str]:
    """The permission bits of ``paths``, in octal: ``["700", "600"]``."""
    return [f"{stat.S_IMODE(path.stat().st_mode):03o}" for path in paths]


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_session_attack_transcripts_and_their_folders_are_private_whatever_the_umask(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    # A transcript keeps every tool result: here the password that read returned.
    config = tmp_path / "state" / "claw"  # neither folder exists yet: claw makes both
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(config))
    project = tmp_path / "shop"
    project.mkdir()
    (project / "secret.txt").write_text("password: hunter2\n")
    server.add(calls("read", {"path": "secret.txt"}), says("Read it."), says("Forked."))
    previous = os.umask(umask)
    try:
        assert run_claw(server, project, monkeypatch, "Read secret.txt.", "--unguarded") == 0
        fork = ("Go on elsewhere.", "-c", "--fork-session", "--unguarded")
        assert run_claw(server, project, monkeypatch, *fork) == 0
    finally:
        os.umask(previous)

    folder = sessions_folder(project)
    kept = [info.path for info in list_sessions(project)]
    assert len(kept) == 2 and "hunter2" in kept[0].read_text()
    assert modes(config.parent, config, config / "projects", folder) == ["700"] * 4
    assert modes(*kept) == ["600", "600"]


def test_session_attack_loose_folders_an_older_claw_left_are_made_private_saying_so_once(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    claw_config_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = transcript(tmp_path)
    folders = [claw_config_dir, claw_config_dir / "projects", path.parent]
    for folder in folders:  # as an older claw left them: anyone may look in, and read
        folder.chmod(0o755)
    path.chmod(0o644)
    server.add(says("Milk."), says("Bread."))

    assert run_claw(server, tmp_path, monkeypatch, "And?", "-c", "--unguarded") == 0

    said = [line for line in capsys.readouterr().err.splitlines() if "open to other" in line]
    made = "claw: {} was open to other users (mode {}); claw made it private (mode {})"
    assert said == [made.format(folder, "755", "700") for folder in folders] + [
        made.format(path, "644", "600")
    ]
    assert modes(*folders, path) == ["700", "700", "700", "600"]
    sent = [m["content"] for m in server.requests[0].json["messages"] if m["role"] == "user"]
    assert sent == ["What is in notes.txt?", "And?"]  # the session went on: nothing lost
    assert run_claw(server, tmp_path, monkeypatch, "More?", "-c", "--unguarded") == 0
    assert "open to other" not in capsys.readouterr().err  # said once


def test_session_attack_a_fork_in_a_loose_home_makes_its_folders_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"  # claw's folder given as home, not CLAW_CONFIG_DIR
    _, writer = start_session(tmp_path, home)
    writer.append([message_record(UserMessage(content="The token is abc123."))])
    writer.close()
    folders = [home, home / "projects", writer.path.parent]
    for folder in folders:
        folder.chmod(0o755)
    capsys.readouterr()

    _, fork = fork_session(load_session(writer.path), tmp_path, home)
    fork.close()

    assert modes(*folders, fork.path) == ["700", "700", "700", "600"]
    said = capsys.readouterr().err.splitlines()
    assert said == [f"claw: {folder} was open to other users (mode 755); claw made it private "
                    "(mode 700)" for folder in folders]
    assert [m.text for m in load_session(fork.path).history] == ["The token is abc123."]
