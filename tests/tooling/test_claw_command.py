"""The ``claw`` command's given code (``solution/main.py``, ``solution/guard.py``, ``display.py``).

What these check is not a learner's to get wrong, so they live with the tooling tests: the
command line knows chapter 13's modes without importing chapter 13, a broken chapter 13-16
module does not stop chapter 12's claw, and a bad settings file stops claw before it runs.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    sse,
    text_chunks,
)
from solution.main import main
from solution.options import PERMISSION_MODES
from solution.permissions import Mode

ROOT = Path(__file__).resolve().parents[2]


def test_the_command_line_offers_exactly_chapter_13s_modes():
    assert tuple(mode.value for mode in Mode) == PERMISSION_MODES


def test_claw_unguarded_runs_while_a_chapter_16_module_does_not_import(
    server: LoopbackServer, tmp_path: Path
):
    copy = tmp_path / "impl" / "solution"
    shutil.copytree(ROOT / "solution", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "plan.py").write_text("def broken(:\n")
    server.add(StreamReply(pieces=[sse(*text_chunks("Hello."), chunk(finish_reason="stop"))]))
    env = {
        **os.environ,
        "CLAW_IMPL": "solution",
        "CLAW_IMPL_PATH": str(tmp_path / "impl"),
        "OPENROUTER_API_KEY": "sk-or-test",
    }
    script = "import sys; from claw.main import main; sys.exit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", script, "hi", "--unguarded", "--base-url", server.base_url]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello.\n[done after 1 step(s)]\n"


def test_a_bad_settings_file_stops_claw_before_anything_runs(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "settings.json").write_text('{"permissions": {"allow": ["Bash("]}}')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")

    assert main(["hi", "--model", "test/model", "--base-url", server.base_url]) == 1

    assert server.requests == []
    error = capsys.readouterr().err
    assert error.startswith("claw: ") and "settings.json" in error and "Bash(" in error


def test_claw_prints_control_characters_from_tools_and_the_model_escaped(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    # The tool's output moves the cursor up a line and erases it: the line that showed the call.
    erase = r"printf 'ok\033[1A\033[2K\rall good\n'"
    arguments = json.dumps({"command": erase})
    server.add(
        StreamReply(
            pieces=[
                sse(
                    chunk(tool_calls=[call_start(0, "call-1", "bash")]),
                    chunk(tool_calls=[call_delta(0, arguments)]),
                    chunk(finish_reason="tool_calls"),
                )
            ]
        ),
        StreamReply(
            pieces=[sse(*text_chunks("Done.\x1b]0;pwned\x07\u202e"), chunk(finish_reason="stop"))]
        ),
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")

    assert main(["hi", "--unguarded", "--model", "test/model", "--base-url", server.base_url]) == 0

    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out and "\u202e" not in out
    assert r"  ✓ bash: ok\x1b[1A\x1b[2K\rall good" in out
    assert r"Done.\x1b]0;pwned\x07\u202e" in out


def test_claw_sends_the_key_over_plain_http_only_to_this_machine(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    # No connection is tried: the test plugin would fail the test if one were.
    remote = "http://models.example.com/v1"
    assert main(["hi", "--unguarded", "--model", "test/model", "--base-url", remote]) == 1
    error = capsys.readouterr().err
    assert error == (
        "claw: refusing to send the API key over plain http to models.example.com: use an "
        "https URL, or a server on this machine (localhost), or no key for a server that "
        "needs none\n"
    )

    server.add(StreamReply(pieces=[sse(*text_chunks("Hello."), chunk(finish_reason="stop"))]))
    assert main(["hi", "--unguarded", "--model", "test/model", "--base-url", server.base_url]) == 0
    assert server.requests[0].headers["authorization"] == "Bearer sk-or-test"


def test_a_broken_list_of_trusted_folders_stops_claw_and_is_kept(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    claw_config_dir: Path,
):
    home = tmp_path / "home"
    home.mkdir()
    store = claw_config_dir / "trusted-folders.json"  # in claw's own folder
    store.write_text('{"trusted": ["/src/a",')
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "AGENTS.md").write_text("Be brief.\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")

    assert main(["hi", "--unguarded", "--model", "test/model", "--base-url", server.base_url]) == 1

    assert server.requests == []
    error = capsys.readouterr().err
    assert error.startswith(f"claw: {store} cannot be read (")
    assert error.endswith("): fix or delete it\n")
    assert store.read_text() == '{"trusted": ["/src/a",'
