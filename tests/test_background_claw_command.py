"""ch26 · Background work in the ``claw`` command: the same gate as bash, ``/jobs``, no survivors.

claw runs in this process against the loopback server (``claw_command``); the jobs are real
processes, found afterwards by a marker in their command line.
"""

import asyncio
import contextlib
import io
import json
import os
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from claw_command import calls, converse, no_fsync, run_claw, says, tool_results
from marked_processes import assert_none_marked, marked, unique_marker, wait_marked

from claw.assemble import open_claw
from claw.options import parse_arguments
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.fixture
def seconds() -> Iterator[str]:
    """``300.`` and nine random digits: a ``sleep`` argument unique to this test, found by it."""
    word = f"300.{secrets.randbelow(10**9):09d}"
    yield word
    for pid in marked(word):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def background(command: str, call_id: str = "call-1") -> object:
    return calls("bash", {"command": command, "run_in_background": True}, call_id)


def test_background_claw_command_asks_the_bash_rules_and_print_mode_kills_its_jobs(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / ".claw").mkdir(parents=True)
    rules = {"permissions": {"allow": ["Bash(sleep *)"], "deny": ["Bash(touch *)"]}}
    (project / ".claw" / "settings.json").write_text(json.dumps(rules))
    server.add(
        background("touch planted"),
        background(f"sleep {seconds}", "call-2"),
        calls("bash_output", {"job_id": "job-1"}, "call-3"),
        says("The server runs."),
    )

    status = run_claw(server, project, monkeypatch, "-p", "Start it.", "--trust-project")

    assert status == 0
    denied, started, read = tool_results(server)
    assert not (project / "planted").exists()  # the deny rule for Bash held in the background
    assert "Bash(touch *)" in denied
    assert started.startswith(f"started job-1 in the background: sleep {seconds}. ")
    assert read == "(no new output)\nstate: running"
    offered = [tool["function"]["name"] for tool in server.requests[0].json["tools"]]
    assert offered[offered.index("bash") :][:3] == ["bash", "bash_output", "kill_shell"]
    assert_none_marked(seconds)  # print mode ended: the job, which was running, ended with it


def test_background_claw_repl_lists_the_jobs_and_stops_them_at_exit(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    server.add(background(f"exec -a {marker} sleep 300"), says("Started."))

    done = converse(
        server,
        tmp_path,
        monkeypatch,
        "--unguarded",
        keys="/jobs\rStart the server.\r/jobs\r",
    )

    assert done.status == 0
    assert done.out.count("no background jobs") == 1  # the first /jobs, before any job
    assert f"job-1  running  exec -a {marker} sleep 300" in done.out
    assert_none_marked(marker)  # Ctrl-D (the end of the keys) left claw: the job went too


async def test_background_claw_stops_its_jobs_when_the_whole_app_is_cancelled(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    arguments = parse_arguments(
        ["--unguarded", "--model", "test/model", "--base-url", server.base_url]
    )
    running = asyncio.Event()

    async def claw() -> None:
        async with open_claw(arguments, out=io.StringIO(), err=io.StringIO()) as opened:
            bash = opened.agent.tools["bash"]
            await bash.run({"command": f"exec -a {marker} sleep 300", "run_in_background": True})
            running.set()
            await asyncio.Event().wait()  # claw at work, until Ctrl-C

    app = asyncio.create_task(claw())
    waiting = asyncio.ensure_future(running.wait())
    await asyncio.wait((app, waiting), timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if app.done():
        app.result()  # claw ended before the job ran: its error (a stub not written yet) says why
    assert wait_marked(marker)

    app.cancel()  # what asyncio.run does to the app's task when Ctrl-C ends the whole app

    with pytest.raises(asyncio.CancelledError):
        await app
    assert_none_marked(marker)
