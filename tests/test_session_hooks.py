"""ch22 · The session a hook is told about is the session claw records (issue 38).

Claude Code tells every hook its session's id and the path of its transcript (recorded from
Claude Code 2.1.332 itself: tests/data/claude-code-2.1.332-hooks.json, chapter 15). claw's
hooks are told the session chapter 22 records: the id is the transcript's name, and the path is
the transcript file. The hook is a real process (a one-line ``cat``): what it reads on stdin is
the subject.
"""

import json
import shlex
from pathlib import Path

import pytest
from claw_command import no_fsync, run_claw, says

from claw.sessions import list_sessions
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here


def test_session_hooks_are_told_the_session_id_and_its_transcript(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, seen = tmp_path / "project", tmp_path / "payload.json"
    project.mkdir()
    hook = {"hooks": [{"type": "command", "command": f"cat > {shlex.quote(str(seen))}"}]}
    (project / ".claw").mkdir()
    (project / ".claw" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [hook]}})
    )
    server.add(says("Hello."))

    assert run_claw(server, project, monkeypatch, "Hi.", "--trust-project") == 0

    [session] = list_sessions(project)
    payload = json.loads(seen.read_text())
    assert payload["session_id"] == session.path.stem == session.id
    assert payload["transcript_path"] == str(session.path)
    assert payload["permission_mode"] == "default"
