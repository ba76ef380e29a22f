"""ch26 · Background work in the ``claw`` command: the same gate as bash, ``/jobs``, no survivors.

claw runs in this process against the loopback server (``claw_command``); the jobs are real
processes, found afterwards by a marker in their command line.
"""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, run_claw, says, tool_results
from marked_processes import assert_none_marked, unique_marker, wait_marked

from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


def background(command: str, call_id: str = "call-1") -> object:
    return calls("bash", {"command": command, "run_in_background": True}, call_id)


def test_background_claw_command_asks_the_bash_rules_and_print_mode_kills_its_jobs(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / ".claw").mkdir(parents=True)
    rules = {"permissions": {"allow": ["Bash(sleep *)"], "deny": ["Bash(touch *)"]}}
    (project / ".claw" / "settings.json").write_text(json.dumps(rules))
    server.add(
        background("touch planted"),
        background(f"sleep 300 # {marker}", "call-2"),
        calls("bash_output", {"job_id": "job-1"}, "call-3"),
        says("The server runs."),
    )

    status = run_claw(server, project, monkeypatch, "-p", "Start it.", "--trust-project")

    assert status == 0
    denied, started, read = tool_results(server)
    assert not (project / "planted").exists()  # the deny rule for Bash held in the background
    assert "Bash(touch *)" in denied
    assert started.startswith("started job-1 in the background: sleep 300 # ")
    assert read == "(no new output)\nstate: running"
    offered = [tool["function"]["name"] for tool in server.requests[0].json["tools"]]
    assert offered[offered.index("bash") :][:3] == ["bash", "bash_output", "kill_shell"]
    assert_none_marked(marker)  # print mode ended: the job ended with it


def test_background_claw_repl_lists_the_jobs_and_stops_them_at_exit(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    server.add(background(f"sleep 300 # {marker}"), says("Started."))

    done = converse(
        server,
        tmp_path,
        monkeypatch,
        "--unguarded",
        keys="/jobs\rStart the server.\r/jobs\r",
    )

    assert done.status == 0
    assert done.out.count("no background jobs") == 1  # the first /jobs, before any job
    assert f"job-1  running  sleep 300 # {marker}" in done.out
    assert_none_marked(marker)  # Ctrl-D (the end of the keys) left claw: the job went too
    assert not wait_marked(marker, within=0)
