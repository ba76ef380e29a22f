"""ch26 · Background work: bash with run_in_background, bash_output, kill_shell, job notices.

The bounded unread buffer (newest bytes kept, the dropped ones counted, a character split
between two reads decoded whole), a job's new output and state, a flood that stays under the
cap, kill_shell stopping the whole session, unknown ids, the notice before the next request
(exactly once, also for a job that ends while the model is mid-turn, none for an end the model
already saw), and every job stopped when the table closes, even while it is being cancelled.
Jobs are real processes (the process is the subject); they wait on a fifo the test writes to,
never on the clock.
"""

import asyncio
import contextlib
import errno
import os
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path

import pytest
from marked_processes import assert_none_marked, marked, unique_marker

from claw.jobs import JobTable, UnreadOutput, with_background
from claw.preflight import PreflightAgent
from claw.registry import default_tools
from claw.streaming import MockStreamProvider, StreamEvent
from claw.tools.bash import session_alive
from claw.types import (
    AssistantTurn,
    Message,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)

CEILING = 30.0
"""How long a test waits for a scene it set (a job's output, its end) before it fails."""


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


def tools_in(root: Path) -> tuple[ToolSet, JobTable]:
    jobs = JobTable()
    return with_background(default_tools(root), jobs), jobs


async def run(tools: ToolSet, name: str, **arguments: object) -> ToolOutput:
    tool = tools[name]
    return await tool.run(dict(arguments))


async def until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition()`` (a callable) until it is true, for at most ``CEILING`` seconds."""
    deadline = asyncio.get_running_loop().time() + CEILING
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.005)


def sleeping(marker: str) -> int:
    """How many of the ``exec -a MARKER sleep 300`` processes run (bash's own line holds it too)."""
    count = 0
    for pid in marked(marker):
        with contextlib.suppress(OSError):  # gone meanwhile
            count += Path(f"/proc/{pid}/cmdline").read_bytes().startswith(marker.encode())
    return count


def fifo(folder: Path, name: str = "go") -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


async def release(path: Path, text: str = "go\n") -> None:
    """Write ``text`` into the fifo ``path`` once a job has opened it to read.

    Opened non-blocking, a fifo with no reader answers ENXIO: a job that never started fails
    the test within ``CEILING`` with a message, instead of leaving a thread stuck in ``open``
    that keeps the whole run from ending.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CEILING
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
        if loop.time() > deadline:
            raise AssertionError(f"no job read the fifo {path.name!r}: did it start?")
        await asyncio.sleep(0.005)  # the job's shell opens it as soon as it runs
    try:
        os.write(fd, text.encode())  # a few bytes: the pipe takes them at once
    finally:
        os.close(fd)


# ------------------------------------------------------------------ the unread buffer


async def test_background_unread_output_keeps_the_newest_bytes_and_counts_the_dropped() -> None:
    unread = UnreadOutput(limit=10)
    unread.feed(b"0123456789")
    unread.feed(b"abcd")
    unread.feed(b"ef")
    assert len(unread.unread) == 10
    assert unread.take() == (
        "[6 bytes of output dropped: only the newest 10 unread bytes are kept]\n6789abcdef"
    )
    assert unread.take() == ""  # taken once, forgotten
    unread.feed(b"xyz")
    assert unread.take() == "xyz"  # no note: nothing was dropped since the last take
    unread.feed(b"0123456789!")  # one byte too many
    assert unread.take() == (
        "[1 bytes of output dropped: only the newest 10 unread bytes are kept]\n123456789!"
    )
    assert unread.total == 30


async def test_background_a_character_split_between_two_reads_is_decoded_whole() -> None:
    unread = UnreadOutput(limit=100)
    unread.feed("café".encode()[:-1])  # "caf" and the first byte of "é"
    assert unread.take() == "caf"
    unread.feed("é!".encode()[1:])
    assert unread.take() == "é!"
    unread.feed(b"end\xc3")
    assert unread.take(final=True) == "end\ufffd"  # the job ended: nothing more will come


# ------------------------------------------------------------------ starting and reading


async def test_background_bash_answers_at_once_with_a_job_id_and_runs_on(tmp_path: Path) -> None:
    tools, jobs = tools_in(tmp_path)
    go = fifo(tmp_path)
    assert tools.names.index("bash_output") == tools.names.index("bash") + 1
    assert tools.names.index("kill_shell") == tools.names.index("bash") + 2
    schema = tools["bash"].definition.parameters["properties"]
    assert schema["run_in_background"]["type"] == "boolean"
    assert schema["run_in_background"]["default"] is False

    started = await run(
        tools, "bash", command="read line < go; echo got $line", run_in_background=True
    )

    assert not started.is_error
    assert started.content == (
        "started job-1 in the background: read line < go; echo got $line. Read its output with "
        'bash_output (job_id "job-1"); stop it with kill_shell. You will be told when it ends.'
    )
    job = jobs.jobs["job-1"]
    assert job.state() == "running" and session_alive(job.process.pid)
    foreground = await run(tools, "bash", command="echo here")  # chapter 10's bash, as before
    assert foreground.content == "here\nexit code: 0"
    await release(go, "ok\n")
    await asyncio.wait_for(job.done.wait(), CEILING)
    assert (await run(tools, "bash_output", job_id="job-1")).content == "got ok\nstate: exited 0"


async def test_background_bash_output_gives_only_the_new_output_and_the_state(
    tmp_path: Path,
) -> None:
    tools, jobs = tools_in(tmp_path)
    go = fifo(tmp_path)
    await run(
        tools, "bash", command="echo one; read x < go; echo two >&2; exit 3", run_in_background=True
    )
    job = jobs.jobs["job-1"]
    await until(lambda: job.output.total > 0, "the first line")

    assert (await run(tools, "bash_output", job_id="job-1")).content == "one\nstate: running"
    assert (await run(tools, "bash_output", job_id="job-1")).content == (
        "(no new output)\nstate: running"
    )
    await release(go)
    await asyncio.wait_for(job.done.wait(), CEILING)
    final = await run(tools, "bash_output", job_id="job-1")
    assert final.content == "two\nstate: exited 3" and not final.is_error
    assert job.reported  # the model saw the end: no notice will follow
    assert jobs.notices() == []


async def test_background_a_job_killed_from_elsewhere_reads_as_exited_by_that_signal(
    tmp_path: Path,
) -> None:
    tools, jobs = tools_in(tmp_path)
    await run(tools, "bash", command="kill -KILL $$", run_in_background=True)
    job = jobs.jobs["job-1"]
    await asyncio.wait_for(job.done.wait(), CEILING)
    assert job.state() == "exited -9 (killed by SIGKILL)"
    assert (await run(tools, "bash_output", job_id="job-1")).content == (
        "(no new output)\nstate: exited -9 (killed by SIGKILL)"
    )


@pytest.mark.timeout(30)
async def test_background_a_job_printing_a_gigabyte_stays_under_the_cap(tmp_path: Path) -> None:
    jobs = JobTable(limit=20_000)
    tools = with_background(default_tools(tmp_path), jobs)
    tracemalloc.start()
    try:
        await run(tools, "bash", command="head -c 1000000000 /dev/zero", run_in_background=True)
        job = jobs.jobs["job-1"]
        most = 0

        def flowed() -> bool:
            nonlocal most
            most = max(most, len(job.output.unread))
            return job.output.total >= 16_000_000 or job.done.is_set()

        await until(
            flowed, "16 MB of output"
        )  # enough to prove the cap; the rest is not waited for
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not job.done.is_set(), "the job is still printing"
    assert most <= 20_000
    assert peak < 4_000_000, f"{peak:,} bytes held for {job.output.total:,} bytes of output"
    killed = await run(tools, "kill_shell", job_id="job-1")
    assert killed.content == "job-1 killed: head -c 1000000000 /dev/zero"
    text = (await run(tools, "bash_output", job_id="job-1")).content
    dropped = int(text[1 : text.index(" bytes")].replace(",", ""))
    assert dropped >= 16_000_000 - 20_000
    assert text.endswith("\nstate: killed")
    assert len(text.encode()) < 20_000 + 200


async def test_background_what_a_finished_job_left_running_is_stopped(
    tmp_path: Path, marker: str
) -> None:
    tools, jobs = tools_in(tmp_path)
    await run(
        tools,
        "bash",
        command=f"(exec -a {marker} sleep 300) & echo started",
        run_in_background=True,
    )
    job = jobs.jobs["job-1"]
    await asyncio.wait_for(job.done.wait(), CEILING)  # bash exited; its sleep was stopped
    assert_none_marked(marker)
    assert (await run(tools, "bash_output", job_id="job-1")).content == "started\nstate: exited 0"


async def test_background_an_escapee_holding_the_output_does_not_keep_the_job_running(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("claw.jobs.DRAIN_SECONDS", 0.05)  # the escapee never closes the pipe
    tools, jobs = tools_in(tmp_path)
    escape = f"setsid bash -c 'touch ready; exec -a {marker} sleep 300' &"
    command = f"{escape} until [ -e ready ]; do sleep 0.01; done; echo started"
    await run(tools, "bash", command=command, run_in_background=True)
    job = jobs.jobs["job-1"]
    await asyncio.wait_for(job.done.wait(), CEILING)
    assert job.state() == "exited 0"
    assert job.output.take() == "started\n"
    await until(lambda: sleeping(marker) == 1, "the escapee")  # it left the session: it lives
    # on (the fixture ends it), holding the pipe, and the job ended all the same


# ------------------------------------------------------------------ killing


async def test_background_kill_shell_stops_every_process_of_the_job(
    tmp_path: Path, marker: str
) -> None:
    tools, jobs = tools_in(tmp_path)
    command = f"(exec -a {marker} sleep 300) & (exec -a {marker} sleep 300) & wait"
    await run(tools, "bash", command=command, run_in_background=True)
    await until(lambda: sleeping(marker) == 2, "two sleeps")
    job = jobs.jobs["job-1"]

    killed = await run(tools, "kill_shell", job_id="job-1")

    assert not killed.is_error and killed.content.startswith("job-1 killed: ")
    assert not session_alive(job.process.pid)
    assert_none_marked(marker)
    assert job.state() == "killed"
    again = await run(tools, "kill_shell", job_id="job-1")
    assert again.is_error and again.content == "job-1 is not running (killed)"
    assert jobs.notices() == []  # the model killed it: it knows


async def test_background_unknown_job_ids_are_errors_that_name_the_jobs(tmp_path: Path) -> None:
    tools, jobs = tools_in(tmp_path)
    for name in ("bash_output", "kill_shell"):
        answer = await run(tools, name, job_id="job-1")
        assert answer.is_error
        assert answer.content == "no background job 'job-1' (there are no jobs)"
    await run(tools, "bash", command="true", run_in_background=True)
    await run(tools, "bash", command="true", run_in_background=True)
    wrong = await run(tools, "bash_output", job_id="job-9")
    assert wrong.is_error and wrong.content == "no background job 'job-9' (jobs: job-1, job-2)"
    await jobs.close()


async def test_background_a_job_that_cannot_start_is_an_error_and_no_job(tmp_path: Path) -> None:
    tools, jobs = tools_in(tmp_path / "missing")
    answer = await run(tools, "bash", command="true", run_in_background=True)
    assert answer.is_error
    assert answer.content.startswith(f"could not run bash in {tmp_path / 'missing'}: ")
    assert jobs.jobs == {}
    assert jobs.listing() == "no background jobs"


async def test_background_a_model_cannot_run_more_jobs_at_once_than_the_most(
    tmp_path: Path,
) -> None:
    # A misled model that starts a job in every turn: the third of a table of two is refused.
    jobs = JobTable(most=2)
    tools = with_background(default_tools(tmp_path), jobs)
    gates = [fifo(tmp_path, name) for name in ("a", "b")]
    try:
        for gate in gates:
            answer = await run(
                tools, "bash", command=f"read x < {gate.name}", run_in_background=True
            )
            assert not answer.is_error, answer.content
        refused = await run(tools, "bash", command="touch third", run_in_background=True)
        assert refused.is_error
        assert refused.content == (
            "not started: 2 background jobs are running, the most claw runs at once; stop one "
            "with kill_shell, or wait for one to end"
        )
        assert list(jobs.jobs) == ["job-1", "job-2"] and not (tmp_path / "third").exists()
        await release(gates[0])  # one ends: there is room again
        await asyncio.wait_for(jobs.jobs["job-1"].done.wait(), CEILING)
        again = await run(tools, "bash", command="true", run_in_background=True)
        assert again.content.startswith("started job-3 in the background")
    finally:
        await jobs.close()


# ------------------------------------------------------------------ telling the model


class HeldProvider(MockStreamProvider):
    """A mock whose ``during``-th call runs ``scene`` before it streams (the model mid-turn)."""

    def __init__(
        self,
        script: Sequence[AssistantTurn | str],
        during: int,
        scene: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(script)
        self.during = during
        self.scene = scene

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        if len(self.calls) + 1 == self.during:
            await self.scene()
        async for event in super().stream(messages, tools):
            yield event


def notices_in(messages: Sequence[Message]) -> list[str]:
    return [
        m.content
        for m in messages
        if isinstance(m, UserMessage) and str(m.content).startswith("[background job")
    ]


def background(command: str, call_id: str) -> AssistantTurn:
    arguments = {"command": command, "run_in_background": True}
    return AssistantTurn(tool_calls=[ToolCall(id=call_id, name="bash", arguments=arguments)])


async def test_background_a_job_that_ends_while_the_model_is_mid_turn_is_reported_once(
    tmp_path: Path,
) -> None:
    tools, jobs = tools_in(tmp_path)
    go = fifo(tmp_path)

    async def end_the_job() -> None:  # while the model is "thinking" its second turn
        started = [m.content for m in agent.history if isinstance(m, ToolResultMessage)]
        assert "job-1" in jobs.jobs, f"no job-1 was started; the model read {started}"
        await release(go)
        await asyncio.wait_for(jobs.jobs["job-1"].done.wait(), CEILING)

    echo = ToolCall(id="c2", name="bash", arguments={"command": "echo hi"})
    provider = HeldProvider(
        [
            background("read x < go; echo built; exit 2", "c1"),
            AssistantTurn(tool_calls=[echo]),
            "Noted.",
            "Still here.",
        ],
        during=2,
        scene=end_the_job,
    )
    agent = PreflightAgent(provider, tools)
    agent.notices.append(jobs.notices)

    await agent.run("Build it in the background.")
    await agent.run("And now?")

    first, second, third, fourth = (call.messages for call in provider.calls)
    assert notices_in(first) == [] and notices_in(second) == []  # it ended during the 2nd turn
    expected = (
        "[background job job-1 ended (exited 2): read x < go; echo built; exit 2. bash_output "
        'with job_id "job-1" shows what it printed since you last read it]'
    )
    assert notices_in(third) == [expected]
    assert third[-1] == UserMessage(content=expected)  # after the result of the 2nd turn's call
    assert notices_in(fourth) == [expected]  # still in the history, never added again
    assert jobs.notices() == []


async def test_background_each_ended_job_gets_its_own_notice_once(tmp_path: Path) -> None:
    tools, jobs = tools_in(tmp_path)
    for command in ("exit 0", "echo x; exit 1"):
        await run(tools, "bash", command=command, run_in_background=True)
    for job in jobs.jobs.values():
        await asyncio.wait_for(job.done.wait(), CEILING)

    notices = jobs.notices()

    assert [m.content for m in notices] == [
        '[background job job-1 ended (exited 0): exit 0. bash_output with job_id "job-1" '
        "shows what it printed since you last read it]",
        "[background job job-2 ended (exited 1): echo x; exit 1. bash_output with job_id "
        '"job-2" shows what it printed since you last read it]',
    ]
    assert all(isinstance(m, UserMessage) for m in notices)
    assert jobs.notices() == []
    assert (await run(tools, "bash_output", job_id="job-2")).content == "x\nstate: exited 1"


async def test_background_a_running_job_gets_no_notice(tmp_path: Path) -> None:
    tools, jobs = tools_in(tmp_path)
    go = fifo(tmp_path)
    await run(tools, "bash", command="read x < go", run_in_background=True)
    assert jobs.notices() == []
    await release(go)
    await asyncio.wait_for(jobs.jobs["job-1"].done.wait(), CEILING)
    assert len(jobs.notices()) == 1


# ------------------------------------------------------------------ the end of the session


async def test_background_close_stops_every_running_job_and_keeps_the_ended(
    tmp_path: Path, marker: str
) -> None:
    tools, jobs = tools_in(tmp_path)
    await run(tools, "bash", command="echo done", run_in_background=True)
    await asyncio.wait_for(jobs.jobs["job-1"].done.wait(), CEILING)
    for _ in range(2):
        await run(
            tools, "bash", command=f"(exec -a {marker} sleep 300) & wait", run_in_background=True
        )
    await until(lambda: sleeping(marker) == 2, "two sleeps")

    await jobs.close()

    assert_none_marked(marker)
    assert jobs.listing() == (
        "job-1  exited 0  echo done\n"
        f"job-2  killed  (exec -a {marker} sleep 300) & wait\n"
        f"job-3  killed  (exec -a {marker} sleep 300) & wait"
    )
    assert len(jobs.notices()) == 1  # only the one that ended by itself


async def test_background_close_finishes_stopping_the_jobs_even_when_cancelled(
    tmp_path: Path, marker: str
) -> None:
    tools, jobs = tools_in(tmp_path)
    command = f"(exec -a {marker} sleep 300) & wait"
    await run(tools, "bash", command=command, run_in_background=True)
    await until(lambda: sleeping(marker) == 1, "the sleep")
    closing = asyncio.create_task(jobs.close())
    await asyncio.sleep(0)  # close has begun stopping the job

    closing.cancel()  # as asyncio.run does on Ctrl-C of the whole app

    with pytest.raises(asyncio.CancelledError):
        await closing
    assert jobs.jobs["job-1"].done.is_set()
    assert_none_marked(marker)
