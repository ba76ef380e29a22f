"""ch22 · Session folders against Claude Code 2.1.332 itself.

``tests/data/claude-code-2.1.332-sessions.json`` holds, per recorded scenario of
``oracle/sessions.py`` (``make oracle``), a folder Claude Code ran in and the name of the folder
it kept that session in under ``~/.claude/projects``: punctuation, Cyrillic, CJK, an emoji,
accents, paths of 199 to 300 characters, long non-Latin paths. No Claude Code runs here: claw's
``project_folder_name`` names each recorded path (none of them exists on this machine, and
none needs to: no part of them is a symbolic link) and must name it as Claude Code did, unless
the scenario is a deliberate difference (``DIFFERENCES``, listed with its reason on the chapter
22 page; tests/tooling/test_book_lists.py checks that).

Then the folder is used: a session is recorded in a project whose path is over 255 characters,
where the plain name would be longer than a file name may be. And print mode's result names
the session, as Claude Code's always did (``tests/data/claude-code-2.1.332-print.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_code_recording import recording
from claw_command import run_claw, says

from claw.sessions import latest_session, project_folder_name, sessions_folder, start_session
from clawbook.harness.loopback import LoopbackServer

DIFFERENCES: dict[str, str] = {}
"""Scenarios where claw deliberately names the folder otherwise, and the words the chapter 22
page's table of differences uses for each."""


def test_session_oracle_folders_are_named_as_claude_code_named_them() -> None:
    """Every recorded folder: claw's name is Claude Code's (one dash per UTF-16 code unit of a
    character that is not an ASCII letter or digit; past 200, the first 200 and a short hash)."""
    scenarios = recording("sessions")
    assert len(scenarios) >= 10
    assert any(len(s["cwd"]) > 255 for s in scenarios.values()), "no path past a file name's limit"
    wrong = []
    for name, scenario in scenarios.items():
        mine = project_folder_name(Path(scenario["cwd"]))
        same = mine == scenario["folder"]
        if name in DIFFERENCES and same:
            wrong.append(f"{name}: claw now names it as Claude Code: not a difference any more")
        elif name not in DIFFERENCES and not same:
            wrong.append(f"{name}: claw {mine!r}, Claude Code {scenario['folder']!r}")
    assert not wrong, "\n".join(wrong)
    # The edge of the rule, as UTF-16 counts: U+FFFF is one code unit, U+10000 two.
    assert project_folder_name(Path("/a\uffff\U00010000b")) == "-a---b"


def test_session_oracle_a_project_path_past_255_characters_keeps_its_sessions(
    tmp_path: Path, claw_config_dir: Path
) -> None:
    """A project whose path is longer than a file name may be: the session is kept, in a folder
    named as Claude Code names it, and found again."""
    project = tmp_path
    while len(str(project)) <= 300:
        project /= "a_long_folder_name_" * 4
    project.mkdir(parents=True)
    session_id, writer = start_session(project)
    writer.close()
    folder = sessions_folder(project)
    assert len(folder.name) <= 207 and folder.name.startswith(project_folder_name(tmp_path))
    assert (folder / f"{session_id}.jsonl").is_file()
    assert latest_session(project).id == session_id


def test_session_oracle_print_mode_results_name_the_session(
    server: LoopbackServer,
    tmp_path: Path,
    claw_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As in every print-mode run Claude Code 2.1.332 made: the result object (and stream-json's
    first line) carries ``session_id``, the id of the session the run was recorded in."""
    recorded = recording("print")
    named = [s["outcome"]["result"] for s in recorded.values() if s["outcome"]["result"]]
    assert len(named) >= 14
    assert all(r["session_id_is_uuid"] and r["session_id_names_transcript"] for r in named)
    folder = sessions_folder(tmp_path)
    for form in ("json", "stream-json"):
        server.add(says("done"))
        code = run_claw(server, tmp_path, monkeypatch, "-p", "hi", "--output-format", form)
        assert code == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        newest = max(folder.glob("*.jsonl"), key=lambda path: path.stat().st_mtime_ns)
        assert lines[-1]["session_id"] == newest.stem
        assert lines[0]["session_id"] == newest.stem  # the same object in json, init in stream
