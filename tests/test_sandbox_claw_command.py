"""ch28 · The sandbox in the ``claw`` command: settings turn it on, and it never fails silently.

claw runs in this process against the loopback server (``claw_command``); its bash commands are
real processes in a real sandbox. In print mode, with standard input a pipe, nobody can answer
a permission question: a call that asks is refused, so a call that ran was not asked about.
"""

import json
from pathlib import Path

import pytest
from claw_command import calls, no_fsync, run_claw, says, tool_results
from test_sandbox_attacks import needs_bwrap

from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)


def project_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: object) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAW_BWRAP", raising=False)
    project = tmp_path / "project"
    (project / ".claw").mkdir(parents=True)
    (project / ".claw" / "settings.json").write_text(json.dumps(settings))
    return project


@needs_bwrap
def test_sandbox_claw_runs_bash_sandboxed_unasked_and_the_deny_rules_still_hold(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {"sandbox": {"enabled": True}, "permissions": {"deny": ["Bash(rm *)"]}}
    project = project_with(tmp_path, monkeypatch, settings)
    outside = tmp_path / "outside.txt"  # ../outside.txt, written where no check looks
    write = "import pathlib; pathlib.Path('..', 'outside.txt').write_text('out')"
    server.add(
        calls("bash", {"command": f'echo in > in.txt; python3 -c "{write}"; echo ran'}),
        calls("bash", {"command": "rm in.txt"}, "call-2"),
        says("Done."),
    )

    status = run_claw(server, project, monkeypatch, "-p", "Go.", "--trust-project")

    assert status == 0
    ran, denied = tool_results(server)
    assert ran.endswith("ran\nexit code: 0")  # no question: the sandbox holds the line
    assert (project / "in.txt").read_text() == "in\n"
    assert not outside.exists()  # the kernel refused the write outside
    assert "Bash(rm *)" in denied  # a deny rule still refuses, sandbox or not
    assert (project / "in.txt").exists()


def test_sandbox_claw_without_bwrap_says_so_once_and_keeps_asking(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = project_with(tmp_path, monkeypatch, {"sandbox": {"enabled": True}})
    monkeypatch.setenv("CLAW_BWRAP", str(tmp_path / "no-bwrap"))
    server.add(
        calls("bash", {"command": "touch first"}),
        calls("bash", {"command": "touch second"}, "call-2"),
        says("Done."),
    )

    status = run_claw(server, project, monkeypatch, "-p", "Go.", "--trust-project")

    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("claw: sandbox:")]
    assert len(said) == 1  # once, not once a command
    assert said[0].startswith(f"claw: sandbox: not available ({tmp_path / 'no-bwrap'} ")
    assert said[0].endswith(
        "bash and hook commands run without it, and each is asked about as without a sandbox"
    )
    assert status == 0
    first, second = tool_results(server)
    for result in (first, second):
        assert "Permission denied" in result and "default mode says ask" in result
    assert not (project / "first").exists() and not (project / "second").exists()
