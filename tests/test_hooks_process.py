"""ch15 · A command hook's processes: none outlives the hook, and none sees claw's secrets.

Each test performs an attack a hostile project's hook could: leave a process behind after
exiting, leave bash's process group so that a group signal misses it, or print the API key
from its environment. Processes are found by a marker in their command line.
"""

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from loop_clock import LoopClock
from marked_processes import (
    CLEANUP_TRAP,
    PYTHON,
    HeldStart,
    assert_none_marked,
    job_control_escape,
    let_cleanup_finish,
    setpgid_escape,
    time_out,
    unique_marker,
    wait_until_ready,
)

from claw import hooks as hooks_module
from claw.hooks import CommandHook, Completed, HookFailed, Hooks, run_command
from claw.tools import bash as bash_module


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Look whether a stopped session is gone every 5 ms, not every 20: the tests end sooner."""
    monkeypatch.setattr(bash_module, "POLL_SECONDS", 0.005)


def leave_behind(marker: str, how: str) -> str:
    """A hook that starts a process named ``marker`` in the background, waits until it runs,
    prints ``{}`` and exits 0.

    ``plain``: a ``sleep &`` that still holds the hook's stdout; ``quiet``: one whose output goes
    to ``/dev/null``; ``job``: a ``set -m`` job, in a group of its own; ``setpgid``: a
    Python process that leaves the group itself.
    """
    sleeper = f"(exec -a {marker} sleep 300)"
    start = {
        "plain": f"{sleeper} &",
        "quiet": f"{sleeper} >/dev/null 2>&1 &",
        "job": f"set -m; {sleeper} >/dev/null 2>&1 &",
        "setpgid": f"{PYTHON} -c 'import os, time; os.setpgid(0, 0); time.sleep(300)' {marker} "
        ">/dev/null 2>&1 &",
    }[how]
    started = f"until grep -q {marker} /proc/$!/cmdline 2>/dev/null; do sleep 0.01; done"
    return f"{start} {started}; echo '{{}}'; exit 0"


@pytest.mark.parametrize("how", ["plain", "quiet", "job", "setpgid"])
async def test_hooks_background_processes_end_when_the_hook_exits(
    tmp_path: Path, marker: str, how: str
) -> None:
    hook = CommandHook(leave_behind(marker, how), timeout=5)
    completed = await run_command(hook, {}, tmp_path)
    # the hook's answer counts, even though a child of it still held its stdout
    assert completed == Completed(0, "{}\n", "")
    assert_none_marked(marker)


@pytest.mark.parametrize("escape", [job_control_escape, setpgid_escape])
async def test_hooks_timeout_kills_processes_that_left_the_group(
    tmp_path: Path, marker: str, escape: Callable[[str], str]
) -> None:
    clock = LoopClock.install()
    hook = CommandHook(escape(marker), timeout=60)
    running = asyncio.create_task(run_command(hook, {}, tmp_path))
    await wait_until_ready(tmp_path, marker, 2 if escape is job_control_escape else 1, running)
    await time_out(clock, 60, running)
    with pytest.raises(HookFailed, match="timed out after"):
        await running
    assert_none_marked(marker)


async def test_hooks_cancelling_kills_processes_that_left_the_group(
    tmp_path: Path, marker: str
) -> None:
    running = asyncio.create_task(
        run_command(CommandHook(job_control_escape(marker)), {}, tmp_path)
    )
    await wait_until_ready(tmp_path, marker, 2, running)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert_none_marked(marker)


async def test_hooks_cancelled_while_starting_leaves_nothing_running(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = HeldStart(monkeypatch)
    running = asyncio.create_task(
        run_command(CommandHook(job_control_escape(marker)), {}, tmp_path)
    )
    await wait_until_ready(tmp_path, marker, 2, running)
    running.cancel()  # while the start has forked but not yet returned its process
    start.release()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert_none_marked(marker)


async def test_hooks_a_setsid_escapee_holding_stdout_does_not_hold_the_answer(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setsid leaves the hook's session: stop_session cannot reach it, and it keeps stdout open
    # for 300 s. What is left in the pipes is read for at most DRAIN_SECONDS, then given up:
    # the pipe is never closed, so a drain of any length ends the same way (short here). A hook
    # that waited for its pipes would wait until the test's time limit.
    monkeypatch.setattr(hooks_module, "DRAIN_SECONDS", 0.01)
    escape = f"setsid bash -c 'exec -a {marker} sleep 300' &"
    started = f"until grep -q {marker} /proc/$!/cmdline 2>/dev/null; do sleep 0.01; done"
    hook = CommandHook(f"{escape} {started}; echo '{{}}'; exit 0", timeout=60)
    assert await run_command(hook, {}, tmp_path) == Completed(0, "{}\n", "")


async def test_hooks_get_no_grace_after_sigterm(tmp_path: Path, marker: str) -> None:
    # A process the hook left behind has a SIGTERM trap that cleans up once the test has seen it
    # start. A hook's session gets SIGKILL right after SIGTERM, so the trap never finishes.
    lingering = f"(: {marker}; {CLEANUP_TRAP}; touch ready; while :; do sleep 0.01; done)"
    hook = CommandHook(
        f"{lingering} >/dev/null 2>&1 & until [ -e ready ]; do sleep 0.01; done; exit 0",
        timeout=60,
    )
    cleanup = asyncio.create_task(let_cleanup_finish(tmp_path))
    assert await run_command(hook, {}, tmp_path) == Completed(0, "", "")
    cleanup.cancel()
    assert_none_marked(marker)
    assert not (tmp_path / "cleaned").exists(), "killed, not given time to clean up"


async def test_hooks_never_receive_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-hookleak1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_hookleak2")
    monkeypatch.setenv("DB_PASSWORD", "hookleak3")
    monkeypatch.setenv("CLAW_VISIBLE", "visible-value")
    # the attack of a repository's own settings: a SessionStart hook whose stdout becomes
    # context for the model
    hooks = Hooks.from_settings(
        {"SessionStart": [{"hooks": [{"type": "command", "command": "env"}]}]}, tmp_path
    )
    verdict = await hooks.session_start()
    seen = dict(line.partition("=")[::2] for line in verdict.context.splitlines())
    assert seen["CLAW_VISIBLE"] == "visible-value"
    assert seen.get("PATH"), "the rest of the environment is there"
    assert not {"OPENROUTER_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD"} & seen.keys()
    for leak in ("hookleak1", "hookleak2", "hookleak3"):
        assert leak not in verdict.context
