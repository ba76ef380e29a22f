"""Background jobs: commands that run on while the conversation goes on.

``bash`` with ``run_in_background`` starts a command as a *job* and answers at once with the
job's id. The command runs exactly as chapter 10 runs one (``BashTool.start``: its own session,
stdin from ``/dev/null``, no secrets), but nobody waits for it: a task per job reads its output
as it comes into an ``UnreadOutput``, which keeps at most ``limit`` bytes of what the model has
not read yet (the newest; older bytes are dropped and counted), so a job that prints a gigabyte
costs kilobytes. ``bash_output`` gives the model what is new since its last read, with the job's
state; ``kill_shell`` stops a job's whole session.

Three promises hold whatever the model does:

1. the model hears that a job ended exactly once: in a notice before its next request
   (``JobTable.notices``, which ``PreflightAgent`` asks before each provider call), unless it
   already saw the end itself (``bash_output`` showed the final state, or it killed the job);
2. no job outlives claw: ``JobTable.close`` stops every session still running, and the
   ``claw`` command calls it when it exits, however it exits (the end of print mode, ``/exit``,
   Ctrl-D, Ctrl-C of the whole app, an error);
3. a background command is a ``bash`` call like any other: the same permission rules, safety
   checks and hooks decide it before it starts.

What this does not defend against: a process that left the job's session on purpose
(``setsid``) survives, as in chapter 10; and claw killed with ``SIGKILL`` runs no cleanup at all.
"""

from __future__ import annotations

import asyncio
import codecs
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from pydantic import Field

from .display import one_line
from .tools.base import ArgumentsTool, ToolArguments, schema_of
from .tools.bash import (
    DRAIN_SECONDS,
    BashArguments,
    BashTool,
    OutputPipe,
    drain,
    exit_line,
    started,
    stop_session,
)
from .types import Message, ToolDefinition, ToolOutput, ToolSet, UserMessage

UNREAD_BYTES = 20_000
"""The most output of one job kept for the model between two reads (the newest bytes)."""

MOST_RUNNING = 16
"""How many jobs may run at once: a model that starts one in every turn must not fill the
machine (claw's own number)."""

CHUNK_BYTES = 65_536
"""How much of a job's output one read of its pipe takes at most."""


class UnreadOutput:
    """The output of a job that the model has not read yet: at most ``limit`` bytes, the newest.

    ``feed`` takes the bytes in the order they come; when more than ``limit`` are waiting, the
    oldest are dropped and counted in ``dropped``. ``take`` hands over what waits, as text, and
    forgets it. So the memory held never exceeds ``limit`` plus one chunk, however long the job
    runs and however little the model reads.
    """

    def __init__(self, limit: int = UNREAD_BYTES) -> None:
        """Keep at most ``limit`` unread bytes."""
        self.limit = limit
        self.unread = bytearray()
        """The bytes not read yet, oldest first."""
        self.dropped = 0
        """Bytes dropped since the last ``take`` because more than ``limit`` were waiting."""
        self.total = 0
        """Every byte fed, kept or not."""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes) -> None:
        """Take the next ``data``: add it to the unread bytes; drop (and count) the oldest."""
        # region ch26: append to unread; if it holds more than limit, count and drop the front
        # more: excess = len(self.unread) - self.limit; del self.unread[:excess]
        self.total += len(data)
        self.unread += data
        excess = len(self.unread) - self.limit
        if excess > 0:
            self.dropped += excess
            del self.unread[:excess]
        # endregion

    def take(self, final: bool = False) -> str:
        """What waits, decoded, with a first line about what was dropped; then forget it.

        A character whose bytes are split between two takes is decoded whole by the later one
        (the incremental decoder keeps its first bytes); with ``final`` (the job has ended)
        nothing is kept back, and an unfinished character becomes U+FFFD. If bytes were dropped
        since the last take, the text begins with the line
        ``[1,234 bytes of output dropped: only the newest 20,000 unread bytes are kept]``
        (and the decoder starts afresh: the bytes it kept back belonged to the dropped part).
        """
        # region ch26: decode unread with the incremental decoder; the dropped note first; reset
        # more: self._decoder.reset() after a drop; decode(bytes(...), final); clear(); dropped = 0
        note = ""
        if self.dropped:
            self._decoder.reset()
            note = (
                f"[{self.dropped:,} bytes of output dropped: only the newest {self.limit:,} "
                "unread bytes are kept]\n"
            )
        text = self._decoder.decode(bytes(self.unread), final)
        self.unread.clear()
        self.dropped = 0
        return note + text
        # endregion




@dataclass(eq=False)
class Job:
    """One background command: its id, the process leading its session, its unread output."""

    id: str
    """``job-1``, ``job-2``, ...: what the model passes to ``bash_output`` and ``kill_shell``."""
    command: str
    process: asyncio.subprocess.Process
    output: UnreadOutput
    returncode: int | None = None
    """Set once the job has ended *and* all its output is in ``output``."""
    killed: bool = False
    """Set when claw stopped it (``kill_shell``, or claw exiting)."""
    reported: bool = False
    """Whether the model knows the job ended (a notice, a final ``bash_output``, a kill)."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once ``returncode`` is."""
    watcher: asyncio.Task[None] | None = None
    """The task reading its output and waiting for its end."""

    def state(self) -> str:
        """``running``, ``killed`` (claw stopped it), or ``exited 0``.

        A process that a signal from elsewhere ended reads ``exited -9 (killed by SIGKILL)``.
        """
        # region ch26: killed first; then running while returncode is None; else "exited ..."
        # more: exit_line(code) writes "exit code: -9 (killed by SIGKILL)": keep what follows ": "
        if self.killed:
            return "killed"
        if self.returncode is None:
            return "running"
        return "exited " + exit_line(self.returncode).removeprefix("exit code: ")
        # endregion




def notice_text(job: Job) -> str:
    """The message that tells the model ``job`` ended.

    For example ``[background job job-1 ended (exited 0): make test. bash_output with job_id "job-1"
    shows what it printed since you last read it]``.
    """
    return (
        f"[background job {job.id} ended ({job.state()}): {one_line(job.command)}. bash_output "
        f'with job_id "{job.id}" shows what it printed since you last read it]'
    )


class JobTable:
    """The background jobs of one claw session, by id, in the order they started."""

    def __init__(
        self, limit: int = UNREAD_BYTES, grace: float = 2.0, most: int = MOST_RUNNING
    ) -> None:
        """An empty table; each job keeps at most ``limit`` unread bytes.

        A job that is killed has ``grace`` seconds to exit after ``SIGTERM`` (chapter 10's
        ``stop_session``). At most ``most`` jobs run at once (``BackgroundBashTool`` refuses
        another).
        """
        self.limit = limit
        self.grace = grace
        self.most = most
        self.jobs: dict[str, Job] = {}
        self.started = 0
        """How many jobs this table has started: the next id is ``job-{started + 1}``."""

    async def start(self, bash: BashTool, command: str) -> Job:
        """Start ``command`` as chapter 10's ``bash`` would, and a task that watches it.

        The output goes to an ``OutputPipe`` that stays open as long as the job runs; the
        watcher (``watch``) closes it. An ``OSError`` (no such workspace, no ``bash``) goes to
        the caller, with the pipe closed and no job in the table.
        """
        # region ch26: OutputPipe in an AsyncExitStack; started(bash.start(...)); a Job; watch it
        # more: close the write end in finally; aclose the stack if the start fails; create_task
        pipe_open = AsyncExitStack()
        pipe = await pipe_open.enter_async_context(OutputPipe())
        try:
            process = await started(bash.start(command, pipe.write_fd))
        except BaseException:
            await pipe_open.aclose()
            raise
        finally:
            pipe.close_write_end()  # only the job's processes hold it now
        self.started += 1
        job = Job(f"job-{self.started}", command, process, UnreadOutput(self.limit))
        self.jobs[job.id] = job
        job.watcher = asyncio.create_task(self.watch(job, pipe.reader, pipe_open))
        return job
        # endregion


    async def watch(
        self, job: Job, output: asyncio.StreamReader, pipe_open: AsyncExitStack
    ) -> None:
        """Read ``output`` into ``job.output`` until the job ends or this task is cancelled.

        Either way the job's session is stopped (``stop_session`` with ``self.grace``), what the
        pipe still holds is read (``drain``), the pipe is closed, and only then are
        ``job.returncode`` and ``job.done`` set: a job that reads as ended has all its output
        in ``job.output``.
        """

        # region ch26: a reader task feeding job.output chunk by chunk; wait; in finally stop, drain
        # more: while chunk := await output.read(CHUNK_BYTES); then returncode, done.set() last
        async def read() -> None:
            while chunk := await output.read(CHUNK_BYTES):
                job.output.feed(chunk)

        reader = asyncio.create_task(read())
        try:
            await job.process.wait()
        finally:
            await stop_session(job.process, self.grace)
            await drain(reader, DRAIN_SECONDS)
            await pipe_open.aclose()
            job.returncode = job.process.returncode
            job.done.set()
        # endregion


    def find(self, job_id: str) -> Job | ToolOutput:
        """The job ``job_id``, or an error result that names the jobs there are."""
        job = self.jobs.get(job_id)
        if job is not None:
            return job
        there = f"jobs: {', '.join(self.jobs)}" if self.jobs else "there are no jobs"
        return ToolOutput.error(f"no background job {job_id!r} ({there})")

    def read(self, job_id: str) -> ToolOutput:
        """``bash_output``: what ``job_id`` printed since the last read, and its state.

        The last line is ``state: running`` (or ``state: exited 0``, ``state: killed``);
        ``(no new output)`` stands in for an empty read. A read that shows the final state
        tells the model the job ended: no notice follows (``reported``).
        """
        # region ch26: find the job; the state before the text; take (final once done); reported
        # more: ended = job.done.is_set(); output.take(final=ended); "(no new output)"
        job = self.find(job_id)
        if isinstance(job, ToolOutput):
            return job
        ended = job.done.is_set()
        state = job.state()
        text = job.output.take(final=ended).removesuffix("\n") or "(no new output)"
        if ended:
            job.reported = True
        return ToolOutput.ok(f"{text}\nstate: {state}")
        # endregion


    async def kill(self, job_id: str) -> ToolOutput:
        """``kill_shell``: stop every process of the job's session; ``job-1 killed: CMD``.

        A job that has already ended is an error result that says how it ended
        (``job-1 is not running (exited 0)``). The model knows the job is over: no notice.
        """
        # region ch26: find; already done: error; else killed and reported; stop it; wait for done
        # more: await stop_session(job.process, self.grace); await job.done.wait()
        job = self.find(job_id)
        if isinstance(job, ToolOutput):
            return job
        if job.done.is_set():
            return ToolOutput.error(f"{job.id} is not running ({job.state()})")
        job.killed = job.reported = True
        await stop_session(job.process, self.grace)
        await job.done.wait()  # the watcher has read the rest of the output
        return ToolOutput.ok(f"{job.id} killed: {one_line(job.command)}")
        # endregion


    # --8<-- [start:notices]
    def notices(self) -> list[Message]:
        """One ``UserMessage`` (``notice_text``) per job that ended and was not reported yet.

        Each job is reported once: it is marked ``reported`` as its notice is made. Asked
        before every provider call (``PreflightAgent.notices``); with no jobs, nothing to do.
        """
        if not self.jobs:
            return []
        return self.ended()

    def ended(self) -> list[Message]:
        """``notices`` for a table that has jobs."""
        # region ch26: every job done and not reported: mark it reported, make its notice
        # more: a for loop over self.jobs.values(); UserMessage(content=notice_text(job))
        messages: list[Message] = []
        for job in self.jobs.values():
            if job.done.is_set() and not job.reported:
                job.reported = True
                messages.append(UserMessage(content=notice_text(job)))
        return messages
        # endregion

    # --8<-- [end:notices]

    def listing(self) -> str:
        """``/jobs``: a line per job, ``job-1  running  npm run dev``; or ``no background jobs``."""
        # region ch26: "no background jobs" when empty; else id, state and one_line(command)
        # more: f"{job.id}  {job.state()}  {one_line(job.command)}", joined by "\n"
        if not self.jobs:
            return "no background jobs"
        return "\n".join(
            f"{job.id}  {job.state()}  {one_line(job.command)}" for job in self.jobs.values()
        )
        # endregion


    # --8<-- [start:close]
    async def close(self) -> None:
        """Stop every job still running (claw is exiting) and wait until each has ended.

        Runs to the end even while the task running it is being cancelled (Ctrl-C of the whole
        app): the stopping is shielded from that cancellation.
        """
        if not self.jobs:
            return
        await self.stop_all()

    async def stop_all(self) -> None:
        """``close`` for a table that has jobs."""
        # region ch26: every running job killed and reported; stop them all at once, shielded
        # more: gather(stop_session(...) and job.done.wait() per job); shield; on cancel await it
        running = [job for job in self.jobs.values() if not job.done.is_set()]
        for job in running:
            job.killed = job.reported = True

        async def stop(job: Job) -> None:
            await stop_session(job.process, self.grace)
            await job.done.wait()

        stopping = asyncio.gather(*(stop(job) for job in running))
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError:
            await stopping  # finish stopping the jobs, then let the cancellation go on
            raise
        # endregion

    # --8<-- [end:close]


class BackgroundBashArguments(BashArguments):
    """Chapter 10's arguments and ``run_in_background``."""

    run_in_background: bool = Field(
        default=False,
        description="Start the command as a background job and answer at once with its job "
        "id, instead of waiting for it (for servers, watchers and long builds). Read its "
        "output later with bash_output; stop it with kill_shell. You are told when it ends.",
    )




class BackgroundBashTool(ArgumentsTool[BackgroundBashArguments]):
    """``bash``, with ``run_in_background``: chapter 10's tool, or a job in ``jobs``."""

    name = "bash"
    description = BashTool.description
    Arguments = BackgroundBashArguments
    read_only = False
    """Running a command can change anything."""

    def __init__(self, bash: BashTool, jobs: JobTable) -> None:
        """Run in the foreground with ``bash``; in the background, as a job of ``jobs``."""
        self.bash = bash
        self.jobs = jobs

    @property
    def definition(self) -> ToolDefinition:
        """Chapter 10's definition, with the ``run_in_background`` parameter."""
        return ToolDefinition(
            name=self.name,
            description=self.bash.definition.description,
            parameters=schema_of(BackgroundBashArguments),
        )

    async def call(self, args: BackgroundBashArguments) -> ToolOutput:
        """In the foreground, chapter 10's call; in the background, ``background``."""
        if not args.run_in_background:
            return await self.bash.call(BashArguments(command=args.command, timeout=args.timeout))
        running = sum(not job.done.is_set() for job in self.jobs.jobs.values())
        if running >= self.jobs.most:
            return ToolOutput.error(
                f"not started: {running} background jobs are running, the most claw runs at "
                "once; stop one with kill_shell, or wait for one to end"
            )
        return await self.background(args.command)

    async def background(self, command: str) -> ToolOutput:
        """Start ``command`` as a job of ``jobs`` and say so (``started_text``).

        A command that cannot start is an error result, as in chapter 10:
        ``could not run bash in WORKSPACE: ...``.
        """
        # region ch26: await jobs.start with this tool's BashTool; OSError is an error result
        # more: except OSError as error: ToolOutput.error(f"could not run bash in {root}: {error}")
        try:
            job = await self.jobs.start(self.bash, command)
        except OSError as error:
            return ToolOutput.error(f"could not run bash in {self.bash.root}: {error}")
        return ToolOutput.ok(started_text(job))
        # endregion




# --8<-- [start:job-tools]
def started_text(job: Job) -> str:
    """What ``bash`` answers for a job it started in the background."""
    return (
        f"started {job.id} in the background: {one_line(job.command)}. Read its output with "
        f'bash_output (job_id "{job.id}"); stop it with kill_shell. You will be told when it ends.'
    )


class JobArguments(ToolArguments):
    """Which job."""

    job_id: str = Field(min_length=1, description='The job\'s id, as bash gave it ("job-1").')


class BashOutputTool(ArgumentsTool[JobArguments]):
    """``bash_output``: a background job's new output and its state."""

    name = "bash_output"
    description = (
        "Read what a background job (bash with run_in_background) printed since you last "
        "read it, and its state: running, exited N, or killed. Only the newest output is kept "
        "between two reads."
    )
    Arguments = JobArguments
    read_only = True
    """It changes nothing in the workspace."""

    def __init__(self, jobs: JobTable) -> None:
        """Read the jobs of ``jobs``."""
        self.jobs = jobs

    async def call(self, args: JobArguments) -> ToolOutput:
        """``JobTable.read``."""
        return self.jobs.read(args.job_id)


class KillShellTool(ArgumentsTool[JobArguments]):
    """``kill_shell``: stop a background job and every process it started."""

    name = "kill_shell"
    description = (
        "Stop a background job (bash with run_in_background) and every process it started."
    )
    Arguments = JobArguments
    read_only = False
    """It stops processes."""

    def __init__(self, jobs: JobTable) -> None:
        """Kill the jobs of ``jobs``."""
        self.jobs = jobs

    async def call(self, args: JobArguments) -> ToolOutput:
        """``JobTable.kill``."""
        return await self.jobs.kill(args.job_id)


def with_background(tools: ToolSet, jobs: JobTable) -> ToolSet:
    """``tools`` with its ``bash`` able to run in the background, and the two job tools after it.

    The other tools stay as they are, in their order; without a ``bash``, ``tools`` is
    returned unchanged.
    """
    bash = tools.get("bash")
    if not isinstance(bash, BashTool):
        return tools
    changed = ToolSet()
    for tool in tools:
        if tool is bash:
            changed.add(BackgroundBashTool(bash, jobs))
            changed.add(BashOutputTool(jobs))
            changed.add(KillShellTool(jobs))
        else:
            changed.add(tool)
    return changed


# --8<-- [end:job-tools]
