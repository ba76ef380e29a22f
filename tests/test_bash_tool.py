"""ch10 · BashTool: a command in its own process group, a timeout, capped output, no secrets."""

import asyncio
import contextlib
import ctypes
import logging
import os
import pickle
import shutil
import signal
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from budget import examples
from history import assert_valid_history
from hypothesis import given, settings
from hypothesis import strategies as st
from loop_clock import LoopClock
from marked_processes import (
    CLEANUP_TRAP,
    HeldStart,
    assert_none_marked,
    job_control_escape,
    let_cleanup_finish,
    marked,
    setpgid_escape,
    time_out,
    unique_marker,
    wait_for_file,
    wait_until_armed,
    wait_until_ready,
)

from claw.agent import CANCELLED, Finish
from claw.loop import Agent
from claw.streaming import MockStreamProvider
from claw.tools import bash as bash_module
from claw.tools.bash import BashTool, OutputKeeper, is_secret, read_stream, scrubbed_env
from claw.types import (
    AssistantTurn,
    TokenUsage,
    ToolCall,
    ToolOutput,
    ToolResultMessage,
)

# ------------------------------------------------------------------ helpers


async def bash(tool: BashTool, command: str, **arguments: Any) -> ToolOutput:
    return await tool.run({"command": command, **arguments})


def living(pid: int) -> bool:
    """Whether process ``pid`` runs; a zombie (dead, not yet collected by its parent) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel instead
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


def in_groups(pgids: Sequence[int]) -> list[int]:
    """The pids of the processes of groups ``pgids`` that still run (zombies do not count)."""
    wanted = {str(pgid) for pgid in pgids}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb", buffering=0) as file:
                stat = file.read().decode()
        except OSError:
            continue
        state, _, pgrp = stat[stat.rfind(")") + 2 :].split()[:3]
        if pgrp in wanted and state not in "ZX":
            found.append(int(name))
    return found


def assert_all_gone(pids: Sequence[int], within: float = 5.0) -> None:
    """Every pid and every group they led stops running, at the latest ``within`` seconds from now.

    After a call has returned, nothing of its session runs; the bound is for a broken one.
    """
    deadline = time.monotonic() + within
    while True:
        left = [pid for pid in pids if living(pid)]
        left += in_groups(pids) if Path("/proc").is_dir() else []
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"still running: {left}"


async def wait_for_lines(
    path: Path, count: int, running: "asyncio.Task[Any] | None" = None, within: float = 30.0
) -> list[int]:
    """The first ``count`` pids written to ``path``, once they are there.

    If ``running`` (the task that should write them) ends first, its result or error is raised.
    """
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if running is not None and running.done():
            raise AssertionError(f"the command ended before writing its pids: {running.result()}")
        if path.exists():
            lines = path.read_text().split()
            if len(lines) >= count:
                return [int(line) for line in lines[:count]]
        await asyncio.sleep(0.005)
    raise AssertionError(f"{path} did not get {count} pids")


# A command that starts a background grandchild in a subshell, one in bash itself, then waits.
# Each writes its pid (bash's own pid is also its group's id) to the file `pids`.
SPAWNER = "echo $$ >> pids; (sleep 300 & echo $! >> pids); sleep 300 & echo $! >> pids; sleep 300"


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Look whether a stopped session is gone every 5 ms, not every 20: the tests end sooner."""
    monkeypatch.setattr(bash_module, "POLL_SECONDS", 0.005)


# ------------------------------------------------------------------ running a command


async def test_bash_returns_stdout_stderr_in_order_and_the_exit_code(tmp_path):
    output = await bash(BashTool(tmp_path), "echo out; echo err >&2; echo again; exit 3")
    assert output == ToolOutput.ok("out\nerr\nagain\nexit code: 3")


async def test_bash_success_and_no_output(tmp_path):
    tool = BashTool(tmp_path)
    assert await bash(tool, "echo hello") == ToolOutput.ok("hello\nexit code: 0")
    assert await bash(tool, "true") == ToolOutput.ok("(no output)\nexit code: 0")


async def test_bash_runs_in_the_workspace_directory(tmp_path):
    output = await bash(BashTool(tmp_path), "pwd -P; echo made > made.txt")
    assert output.content.splitlines()[0] == str(tmp_path.resolve())
    assert (tmp_path / "made.txt").read_text() == "made\n"


async def test_bash_a_command_killed_by_a_signal_says_which(tmp_path):
    output = await bash(BashTool(tmp_path), "echo before; kill -9 $$")
    assert output == ToolOutput.ok("before\nexit code: -9 (killed by SIGKILL)")


async def test_bash_stdin_is_empty_so_reading_does_not_hang(tmp_path):
    # A command waiting for input would be stopped by the timeout: an error result, not this.
    output = await bash(BashTool(tmp_path, default_timeout=5), 'cat; read line; echo "read:$?"')
    assert output == ToolOutput.ok("read:1\nexit code: 0")


async def test_bash_a_workspace_that_does_not_exist_is_an_error_result(tmp_path):
    output = await bash(BashTool(tmp_path / "missing"), "echo hi")
    assert output.is_error
    assert "could not run bash" in output.content


# ------------------------------------------------------------------ timeouts and process groups


async def test_bash_timeout_kills_the_command_and_its_grandchildren(tmp_path):
    clock = LoopClock.install()
    call = asyncio.create_task(bash(BashTool(tmp_path), "echo started; " + SPAWNER, timeout=60))
    pids = await wait_for_lines(tmp_path / "pids", 3, call)
    await time_out(clock, 60, call)
    output = await call
    assert output.is_error
    assert output.content.startswith("started\n")
    assert "timed out after 60 s" in output.content
    assert_all_gone(pids)


async def test_bash_default_timeout_applies_without_a_timeout_argument(tmp_path):
    clock = LoopClock.install()
    call = asyncio.create_task(bash(BashTool(tmp_path, default_timeout=60), "sleep 300"))
    await time_out(clock, 60, call)
    assert await call == ToolOutput.error(
        "(no output)\ntimed out after 60 s: the command and every process it started were stopped"
    )


async def test_bash_a_timeout_above_the_maximum_is_cut_to_it_and_said(tmp_path):
    clock = LoopClock.install()
    tool = BashTool(tmp_path, default_timeout=10, max_timeout=60)
    assert "maximum 60 s" in tool.definition.description
    # The command would end well, at the test's word ("go"), but only after 61 s.
    until_go = "touch ready; until [ -e go ]; do sleep 0.005; done; echo done"
    call = asyncio.create_task(bash(tool, until_go, timeout=100))
    await wait_for_file(tmp_path / "ready", call)
    await time_out(clock, 60, call)
    (tmp_path / "go").touch()
    output = await call
    assert output.is_error
    lines = output.content.splitlines()
    assert lines[0] == "timeout 100 s is above the maximum of 60 s, so 60 s was used"
    assert "timed out after 60 s" in lines[-1]
    # Asking for less than the maximum (and more than the default) is honoured, and says
    # nothing about it: 20 s on, past the default, the command is still let finish.
    for name in ("ready", "go"):
        (tmp_path / name).unlink()
    call = asyncio.create_task(bash(tool, until_go, timeout=30))
    await wait_for_file(tmp_path / "ready", call)
    await wait_until_armed(5, call)
    await clock.advance(20)
    (tmp_path / "go").touch()
    assert await call == ToolOutput.ok("done\nexit code: 0")


async def test_bash_sigterm_comes_first_and_a_quick_exit_ends_the_grace(tmp_path):
    # The command catches SIGTERM and says so: it must get the chance, and the grace period
    # (60 s here: waited out, the test would hang) must end as soon as the group has exited.
    clock = LoopClock.install()
    command = (
        "trap 'echo got TERM; exit 0' TERM; echo waiting; touch ready; while :; do sleep 0.05; done"
    )
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=60), command, timeout=60))
    await wait_for_file(tmp_path / "ready", call)
    await time_out(clock, 60, call)
    output = await call
    assert output.is_error
    assert output.content.startswith("waiting\n")
    assert "got TERM" in output.content.splitlines()


async def test_bash_sigkill_follows_when_sigterm_is_ignored(tmp_path):
    # Ignored signals stay ignored across exec: every process here shrugs off SIGTERM, so the
    # session never ends by itself and a short grace period is always waited out.
    clock = LoopClock.install()
    command = "trap '' TERM; " + SPAWNER
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=0.02), command, timeout=60))
    pids = await wait_for_lines(tmp_path / "pids", 3, call)
    await time_out(clock, 60, call)
    output = await call
    assert output.is_error
    assert_all_gone(pids)


async def test_bash_background_processes_end_with_the_command(tmp_path):
    # The sleep holds the output pipe: a call that waited for the pipe to close would hang.
    output = await bash(BashTool(tmp_path, grace=0.5), "sleep 300 & echo $! > pid; echo ok")
    assert output == ToolOutput.ok("ok\nexit code: 0")
    assert_all_gone([int((tmp_path / "pid").read_text())])


async def test_bash_cancelling_the_call_kills_the_group_then_reraises(tmp_path):
    tool = BashTool(tmp_path, grace=0.5)
    task = asyncio.create_task(bash(tool, SPAWNER))
    pids = await wait_for_lines(tmp_path / "pids", 3, task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_all_gone(pids)


async def test_bash_agent_cancel_stops_a_running_command_and_its_grandchildren(tmp_path):
    command = ToolCall(id="c1", name="bash", arguments={"command": SPAWNER})
    provider = MockStreamProvider(
        [AssistantTurn(text="Running it.", tool_calls=(command,)), "unused"]
    )
    agent = Agent(provider, [BashTool(tmp_path, grace=0.5)])

    async def cancel_once_running() -> list[int]:
        pids = await wait_for_lines(tmp_path / "pids", 3)
        agent.cancel()
        return pids

    canceller = asyncio.create_task(cancel_once_running())
    try:
        finished = await agent.run("Run the slow thing.")
    finally:
        if not canceller.done():
            canceller.cancel()
    pids = await canceller
    assert finished.reason is Finish.CANCELLED
    assert finished.usage == TokenUsage()
    assert_valid_history(agent.history)
    results = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.content, r.is_error) for r in results] == [
        ("c1", CANCELLED.content, True)
    ]
    assert_all_gone(pids)


# ------------------------------------------------------------------ escapes from the group


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.mark.parametrize("escape", [job_control_escape, setpgid_escape])
async def test_bash_timeout_kills_processes_that_left_the_group(tmp_path, marker, escape):
    clock = LoopClock.install()
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=0.3), escape(marker), timeout=60))
    await wait_until_ready(tmp_path, marker, 2 if escape is job_control_escape else 1, call)
    await time_out(clock, 60, call)
    output = await call
    assert output.is_error
    assert "timed out after" in output.content
    assert_none_marked(marker)


@pytest.mark.parametrize("escape", [job_control_escape, setpgid_escape])
async def test_bash_cancel_kills_processes_that_left_the_group(tmp_path, marker, escape):
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=0.3), escape(marker)))
    await wait_until_ready(tmp_path, marker, 2 if escape is job_control_escape else 1, call)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert_none_marked(marker)


async def test_bash_cancelled_while_starting_leaves_nothing_running(tmp_path, marker, monkeypatch):
    start = HeldStart(monkeypatch)
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=0.3), job_control_escape(marker)))
    await wait_until_ready(tmp_path, marker, 2, call)
    call.cancel()  # while the start has forked but not yet returned its process
    start.release()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert_none_marked(marker)


async def test_bash_jobs_in_their_own_groups_end_with_the_command(tmp_path, marker):
    started = f"grep -q {marker} /proc/$!/cmdline"
    wait = f"until {started}; do sleep 0.01; done"
    command = f"set -m; (exec -a {marker} sleep 300) & {wait}; echo ok"
    output = await bash(BashTool(tmp_path, grace=0.3), command)
    assert output == ToolOutput.ok("ok\nexit code: 0")
    assert_none_marked(marker)


# ------------------------------------------------------------------ output


def test_bash_keeper_keeps_whole_lines_at_both_ends_and_counts_the_cut():
    keeper = OutputKeeper(10, 10)
    for line in ("line1\n", "line2\n", "line3\n", "line4\n", "line5\n"):
        keeper.feed(line.encode())
    assert keeper.total_bytes == 30
    assert keeper.text() == (
        "line1\n[18 bytes (3 lines) cut from the middle of the output]\nline5\n"
    )
    small = OutputKeeper(10, 10)
    small.feed(b"a\nb\n")
    assert small.text() == "a\nb\n"


@settings(max_examples=examples(200), deadline=None)
@given(
    chunks=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"\n")), max_size=12),
    head=st.integers(0, 30),
    tail=st.integers(0, 30),
)
def test_bash_keeper_holds_the_first_and_last_bytes_whatever_the_chunks(chunks, head, tail):
    keeper = OutputKeeper(head, tail)
    for chunk in chunks:
        keeper.feed(chunk)
        assert len(keeper.head) <= head and len(keeper.tail) <= tail
    data = b"".join(chunks)
    kept_tail = data[max(head, len(data) - tail) :]
    assert bytes(keeper.head) == data[:head]
    assert bytes(keeper.tail) == kept_tail
    assert keeper.total_bytes == len(data)
    assert keeper.cut_bytes == len(data) - len(keeper.head) - len(kept_tail)
    assert keeper.cut_lines == data[head : len(data) - len(kept_tail)].count(b"\n")
    if keeper.cut_bytes == 0:
        assert keeper.text() == data.decode("utf-8", errors="replace")


async def test_bash_long_output_keeps_its_start_and_its_end(tmp_path):
    output = await bash(BashTool(tmp_path, max_output_bytes=2000), "seq 1 100000; echo Error: boom")
    lines = output.content.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-3:] == ["100000", "Error: boom", "exit code: 0"]
    assert "cut from the middle of the output" in output.content
    assert len(output.content.encode()) < 2200


def flood(folder: Path) -> tuple[str, int]:
    """What the tool answers to 10 MB of output, and the most memory it held meanwhile."""
    tool = BashTool(folder, max_output_bytes=20_000)
    tracemalloc.start()
    try:
        output = asyncio.run(bash(tool, "yes | head -c 10000000"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return output.content, peak


def alone(work: Callable[[], Any]) -> Any:
    """``work()`` in a forked copy of this process, where no other thread runs; its result.

    tracemalloc counts the allocations of every thread, and a module of another chapter may keep
    work going in a thread of its own (chapter 12's end-to-end run): in the copy only this
    thread runs. If ``work`` raised there, it runs again here, so its error (or ``Todo``) is
    reported as it would be.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: never returns into pytest
        os.close(read)
        try:
            answer = pickle.dumps(work())
        except BaseException:  # run again in the parent, to be reported there
            answer = b""
        with os.fdopen(write, "wb") as pipe:
            pipe.write(answer)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    if not answer:
        work()
        pytest.fail("the work raised in the forked copy but not here")
    return pickle.loads(answer)


def test_bash_a_flood_of_output_costs_little_memory(tmp_path):
    content, peak = alone(lambda: flood(tmp_path))
    note = "[9,980,002 bytes (4,990,001 lines) cut from the middle of the output]"
    assert note in content.splitlines()
    assert content.endswith("y\nexit code: 0")
    # Keeping the output would hold over 10 MB; chunked reading holds a few hundred KB, up to
    # about 2 MB seen when the machine is busy and the pipe fills between two reads.
    assert peak < 4_000_000, f"reading 10 MB held {peak:,} bytes at its peak"


async def test_bash_bytes_that_are_not_utf8_are_replaced(tmp_path):
    output = await bash(BashTool(tmp_path), r"printf 'caf\xe9 \xff\xfe ok\n'")
    assert output == ToolOutput.ok("caf\ufffd \ufffd\ufffd ok\nexit code: 0")


async def test_bash_read_stream_reads_in_chunks_as_the_output_comes():
    stream = asyncio.StreamReader()
    keeper = OutputKeeper(1000, 1000)
    reader = asyncio.create_task(read_stream(stream, keeper, chunk_bytes=3))
    stream.feed_data("é".encode() * 50)  # 100 bytes, chunks of 3 split every other character
    for _ in range(100):  # turns of the loop, not time: the bytes wait in the stream already
        if keeper.total_bytes == 100 or reader.done():
            break
        await asyncio.sleep(0)
    if reader.done():  # it ended, or failed, before the end of the stream
        await reader
    assert keeper.total_bytes == 100, "the output is kept as it comes, before the end"
    assert not reader.done()
    stream.feed_data(b"\nend\n")
    stream.feed_eof()
    await reader
    assert keeper.text() == "é" * 50 + "\nend\n"


# ------------------------------------------------------------------ secrets


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENROUTER_API_KEY", True),
        ("openai_api_key", True),
        ("GITHUB_TOKEN", True),
        ("Slack_Bot_Token", True),
        ("DB_PASSWORD", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("CLIENT_SECRET", True),
        ("SECRET", True),
        ("TOKENIZERS_PARALLELISM", False),
        ("KEYBOARD_LAYOUT", False),
        ("PATH", False),
        ("HOME", False),
        ("SECRETARY_NAME", False),
    ],
)
def test_bash_is_secret_names(name, secret):
    assert is_secret(name) is secret


def test_bash_scrubbed_env_keeps_everything_else():
    environ = {"PATH": "/usr/bin", "GITHUB_TOKEN": "ghp_x", "LANG": "C.UTF-8", "my_secret": "s"}
    assert scrubbed_env(environ) == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}
    assert environ["GITHUB_TOKEN"] == "ghp_x", "the original is left alone"


async def test_bash_the_command_does_not_see_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-leak1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_leak2")
    monkeypatch.setenv("my_secret", "leak3")
    monkeypatch.setenv("DB_PASSWORD", "leak4")
    monkeypatch.setenv("CLAW_VISIBLE", "visible-value")
    tool = BashTool(tmp_path)
    assert "API_KEY" in tool.definition.description
    command = 'env; printenv OPENROUTER_API_KEY; echo "visible=$CLAW_VISIBLE ${GITHUB_TOKEN:-none}"'
    output = await bash(tool, command)
    assert output.content.splitlines()[-2:] == ["visible=visible-value none", "exit code: 0"]
    assert "PATH=" in output.content
    for leak in ("leak1", "leak2", "leak3", "leak4"):
        assert leak not in output.content


def test_bash_keeper_note_says_1_line_and_bad_bytes_at_both_ends_are_replaced():
    one = OutputKeeper(3, 2)
    for chunk in (b"\xffa\n", b"mid\n", b"\xfeb"):
        one.feed(chunk)
    assert one.text() == (
        "\ufffda\n[4 bytes (1 line) cut from the middle of the output]\n\ufffdb"
    )
    two = OutputKeeper(3, 2)
    two.feed(b"\xffa\nm\nn\n\xfeb")
    assert two.text() == (
        "\ufffda\n[4 bytes (2 lines) cut from the middle of the output]\n\ufffdb"
    )


async def test_bash_sigterm_gives_a_trap_the_grace_period_to_clean_up(tmp_path):
    # The trap cleans up once the test has seen it start: SIGKILL must wait for it (up to the
    # grace period), not follow SIGTERM at once.
    clock = LoopClock.install()
    command = f"{CLEANUP_TRAP}; touch ready; while :; do sleep 0.05; done"
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=60), command, timeout=60))
    cleanup = asyncio.create_task(let_cleanup_finish(tmp_path))
    await wait_for_file(tmp_path / "ready", call)
    await time_out(clock, 60, call)
    output = await call
    cleanup.cancel()
    assert output.is_error
    assert (tmp_path / "cleaned").read_text() == "done\n"


async def test_bash_a_timeout_of_exactly_the_maximum_is_used_without_a_note(tmp_path):
    tool = BashTool(tmp_path, default_timeout=10, max_timeout=60)
    output = await bash(tool, "echo done", timeout=60)
    assert output == ToolOutput.ok("done\nexit code: 0")


async def test_bash_the_environment_given_to_the_tool_is_the_one_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAW_FROM_OS", "os-value")
    environ = {"PATH": os.environ["PATH"], "CLAW_GIVEN": "given-value", "GITHUB_TOKEN": "ghp_x"}
    output = await bash(
        BashTool(tmp_path, environ=environ),
        'echo "${CLAW_GIVEN:-unset} ${CLAW_FROM_OS:-unset} ${GITHUB_TOKEN:-unset}"',
    )
    assert output == ToolOutput.ok("given-value unset unset\nexit code: 0")


async def test_bash_stdin_is_empty_even_when_claws_own_stdin_has_input(tmp_path):
    # claw's own stdin (here a pipe holding a line) must not reach the command.
    read_end, write_end = os.pipe()
    os.write(write_end, b"typed by someone else\n")
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        output = await bash(BashTool(tmp_path), 'cat; echo "cat:$?"')
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)
    assert output == ToolOutput.ok("cat:0\nexit code: 0")


async def test_bash_a_process_that_left_the_session_does_not_hold_the_call(
    tmp_path, marker, monkeypatch
):
    # `setsid` leaves claw's reach and keeps the output pipe open: the call must not wait for it
    # longer than the drain allows. The escapee never closes the pipe, so a drain of any length
    # ends the same way: shortened here to a hundredth of a second. (A call that waited for the
    # pipe would wait until the test's time limit.)
    monkeypatch.setattr(bash_module, "DRAIN_SECONDS", 0.01)
    escape = f"setsid bash -c 'exec -a {marker} sleep 300' &"
    output = await bash(BashTool(tmp_path), f"{escape} echo started")
    assert output == ToolOutput.ok("started\nexit code: 0")


# ------------------------------------------------------------------ the given helpers' edge cases


def bash_warnings(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """What the bash tool logged (level and message), as ``claw.tools.bash`` records it."""
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "claw.tools.bash"]


@pytest.mark.skipif(not hasattr(signal, "SIGRTMIN"), reason="real-time signals are Linux's")
async def test_bash_a_signal_without_a_name_is_given_by_its_number(tmp_path):
    number = signal.SIGRTMIN + 6  # 40: real-time signals have no name, and kill by default
    assert number not in {member.value for member in signal.Signals}
    output = await bash(BashTool(tmp_path), f"echo before; kill -{number} $$")
    assert output == ToolOutput.ok(f"before\nexit code: -{number} (killed by signal {number})")


async def test_bash_a_tool_built_without_arguments_runs_here_with_its_stated_limits(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    tool = BashTool()
    assert tool.definition.description.endswith("Default timeout 120 s, maximum 600 s.")
    output = await bash(tool, "pwd -P", timeout=900)
    assert output == ToolOutput.ok(
        "timeout 900 s is above the maximum of 600 s, so 600 s was used\n"
        f"{tmp_path.resolve()}\nexit code: 0"
    )


async def test_bash_the_default_timeout_may_equal_the_maximum_and_must_be_above_zero(tmp_path):
    tool = BashTool(tmp_path, default_timeout=60, max_timeout=60)
    assert await bash(tool, "echo ok") == ToolOutput.ok("ok\nexit code: 0")
    for wrong in (0, -1, 60.5):
        with pytest.raises(ValueError, match=r"^default_timeout \("):
            BashTool(tmp_path, default_timeout=wrong, max_timeout=60)


async def test_bash_without_proc_the_group_gets_sigterm_and_nothing_else(
    tmp_path, marker, monkeypatch, caplog
):
    # macOS and the BSDs have no /proc, so no list of a session's processes: claw signals the
    # group whose id is the session's. Here the fallback runs on Linux: session_members says
    # there is no /proc. The job records the signals it gets; bash ignores them and collects
    # the job when it ends (so no zombie is left in the group), then exits.
    monkeypatch.setattr(bash_module, "session_members", lambda sid: None)
    monkeypatch.setattr(bash_module, "KILL_SECONDS", 0.5)
    job = (
        "(trap 'echo HUP >> got; exit' HUP; trap 'echo TERM >> got; exit' TERM; "
        "echo $BASHPID > job; for i in $(seq 100); do sleep 0.05; done) &"
    )
    command = f": {marker}; {job} trap '' TERM HUP; wait"
    with caplog.at_level(logging.WARNING, logger="claw.tools.bash"):
        call = asyncio.create_task(bash(BashTool(tmp_path, grace=2), command))
        [pid] = await wait_for_lines(tmp_path / "job", 1, call)
        await wait_until_armed(60, call)  # running (a cancel while starting gives no grace)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    assert (tmp_path / "got").read_text() == "TERM\n", "one SIGTERM, no other signal"
    assert not living(pid)
    assert_none_marked(marker)
    assert bash_warnings(caplog) == []


async def test_bash_without_pidfds_every_process_of_the_session_gets_sigterm(
    tmp_path, marker, monkeypatch
):
    # Without os.pidfd_open (Python on another system), each process is signalled by pid.
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    job = (
        "(trap 'echo TERM >> got; exit' TERM; echo $BASHPID >> jobs; "
        "for i in $(seq 100); do sleep 0.05; done) &"
    )
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=2), f": {marker}; {job} {job} wait"))
    pids = await wait_for_lines(tmp_path / "jobs", 2, call)
    await wait_until_armed(60, call)  # running (a cancel while starting gives no grace)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (tmp_path / "got").read_text() == "TERM\nTERM\n", "each job got SIGTERM"
    assert_all_gone(pids)
    assert_none_marked(marker)


async def test_bash_a_process_sigkill_cannot_remove_is_logged_and_not_waited_for(
    tmp_path, marker, monkeypatch, caplog
):
    # A process stuck in the kernel (a dead network disk) outlives SIGKILL. Simulated here:
    # SIGKILL is not sent, and the sleep ignores SIGTERM. After KILL_SECONDS claw gives up.
    real_signal_session = bash_module.signal_session

    def no_sigkill(sid: int, signum: int) -> None:
        if signum != signal.SIGKILL:
            real_signal_session(sid, signum)

    # The process never goes, so any grace period and any KILL_SECONDS pass: both are short.
    monkeypatch.setattr(bash_module, "signal_session", no_sigkill)
    monkeypatch.setattr(bash_module, "KILL_SECONDS", 0.01)
    command = f"trap '' TERM; (exec -a {marker} sleep 300 &> /dev/null) & echo $$ $!"
    with caplog.at_level(logging.WARNING, logger="claw.tools.bash"):
        output = await bash(BashTool(tmp_path, grace=0.01), command)
    sid, pid = output.content.split()[:2]
    assert output == ToolOutput.ok(f"{sid} {pid}\nexit code: 0")
    assert bash_warnings(caplog) == [
        ("WARNING", f"session {sid}: processes [{pid}] survived SIGKILL")
    ]
    assert marked(marker) == [int(pid)], "still there: claw gave up on it (the fixture kills it)"


async def test_bash_a_process_named_like_a_zombie_is_stopped_too(tmp_path, marker):
    # A process picks its own name (the file it runs): this one's stat line reads
    # "PID (s) Z 1 1 1) S ...". Read from the first ")", it would look like a zombie.
    sleep = shutil.which("sleep")
    assert sleep is not None
    (tmp_path / "s) Z 1 1 1").symlink_to(sleep)
    disguised = "grep -qxF 's) Z 1 1 1' /proc/$!/comm"  # once it runs the file
    command = (
        f'(exec -a {marker} "./s) Z 1 1 1" 300) & '
        f"until {disguised}; do sleep 0.01; done; cat /proc/$!/comm"
    )
    output = await bash(BashTool(tmp_path, grace=0.5), command, timeout=5)
    assert output == ToolOutput.ok("s) Z 1 1 1\nexit code: 0")
    assert_none_marked(marker)


async def test_bash_a_call_after_one_whose_output_was_held_open_reads_its_own(
    tmp_path, marker, monkeypatch
):
    # A process that left the session holds the first call's pipe open past the drain (short
    # here: the pipe is held for good). The pipe must still be closed when that call returns,
    # or the next pipe (which may get the same file descriptor) is never read.
    monkeypatch.setattr(bash_module, "DRAIN_SECONDS", 0.01)
    sleep = shutil.which("sleep")
    assert sleep is not None
    (tmp_path / marker).symlink_to(sleep)  # a sleep named by the marker
    left = f"grep -qxF {marker[:15]} /proc/$!/comm"  # it runs: setsid has done its work
    tool = BashTool(tmp_path)
    escape = f"setsid ./{marker} 300 & until {left}; do sleep 0.01; done"
    first = await bash(tool, f"{escape}; echo first", timeout=5)
    assert first == ToolOutput.ok("first\nexit code: 0")
    assert marked(marker), "the escapee still runs (the fixture kills it)"
    for word in ("second", "third"):
        assert await bash(tool, f"echo {word}") == ToolOutput.ok(f"{word}\nexit code: 0")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
async def test_bash_a_zombie_left_in_the_session_does_not_count(tmp_path, monkeypatch, caplog):
    # The background job exits at once; its parent (bash, replaced by `exec sleep 300`) never
    # collects it: a zombie. When the timeout kills the parent, the zombie goes to the nearest
    # "subreaper" (this test process, for the length of the test), which collects it only at
    # the end: so it stays in the session, dead, while claw stops the session. Counted as
    # running, it would cost the grace period and KILL_SECONDS (both short), then a warning.
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_child_subreaper = 36
    if libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) != 0:
        pytest.skip("this system does not let a process become a subreaper")
    monkeypatch.setattr(bash_module, "KILL_SECONDS", 0.1)
    clock = LoopClock.install()
    # The background job exits once bash has become the sleep (so bash cannot collect it).
    job = "bash -c 'until grep -qx sleep /proc/$PPID/comm; do sleep 0.01; done' &"
    command = f"{job} echo $! $$; echo $! > zombie; exec sleep 300"
    zombie = None
    try:
        with caplog.at_level(logging.WARNING, logger="claw.tools.bash"):
            call = asyncio.create_task(bash(BashTool(tmp_path, grace=0.1), command, timeout=60))
            [zombie] = await wait_for_lines(tmp_path / "zombie", 1, call)
            while Path(f"/proc/{zombie}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                await asyncio.sleep(0.01)  # the sleep exits, and nobody collects it
            await time_out(clock, 60, call)
            output = await call
        sid = int(output.content.split()[1])
        assert output == ToolOutput.error(
            f"{zombie} {sid}\ntimed out after 60 s: the command and every process it started "
            "were stopped"
        )
        stat = Path(f"/proc/{zombie}/stat").read_text()
        state, _, _, session = stat[stat.rfind(")") + 2 :].split()[:4]
        assert (state, int(session)) == ("Z", sid), "a zombie of the command's session"
        assert bash_warnings(caplog) == []
    finally:
        libc.prctl(pr_set_child_subreaper, 0, 0, 0, 0)
        if zombie is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(zombie, 0)


async def test_bash_cancelled_while_a_start_that_fails_is_under_way_raises_cancelled(
    tmp_path, monkeypatch
):
    # The start is held until after the cancel; then it fails (the workspace does not exist).
    holding, released = asyncio.Event(), asyncio.Event()
    real = asyncio.create_subprocess_exec

    async def held(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        holding.set()
        await released.wait()
        return await real(*args, **kwargs)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", held)
    call = asyncio.create_task(bash(BashTool(tmp_path / "missing"), "echo hi"))
    waiting = asyncio.create_task(holding.wait())
    await asyncio.wait((call, waiting), return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if call.done():  # it ended before its start was held
        await call
    call.cancel()
    released.set()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_bash_a_call_warns_nothing(tmp_path):
    # Python's warnings would land on claw's screen.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        output = await bash(BashTool(tmp_path), "echo hi")
    assert output == ToolOutput.ok("hi\nexit code: 0")
    assert [str(warning.message) for warning in caught] == []


async def test_bash_cancelled_while_starting_gives_the_command_no_grace_period(
    tmp_path, marker, monkeypatch
):
    # The command's SIGTERM trap cleans up once the test has seen it start; a cancel during the
    # start stops the session with no grace period, so SIGKILL ends the trap before it is done.
    start = HeldStart(monkeypatch)
    command = f": {marker}; {CLEANUP_TRAP}; touch ready; while :; do sleep 0.05; done"
    call = asyncio.create_task(bash(BashTool(tmp_path, grace=60), command))
    cleanup = asyncio.create_task(let_cleanup_finish(tmp_path))
    await wait_for_file(tmp_path / "ready", call)
    call.cancel()
    start.release()
    with pytest.raises(asyncio.CancelledError):
        await call
    cleanup.cancel()
    assert_none_marked(marker)
    assert not (tmp_path / "cleaned").exists(), "killed, not given time to clean up"
