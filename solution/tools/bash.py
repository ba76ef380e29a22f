"""The ``bash`` tool: run a shell command in the workspace and show the model what it printed.

Each call starts ``bash -c COMMAND`` in the workspace directory, in a session of its own, so
that the command and everything it starts (children, grandchildren, a ``sleep &`` in a
subshell, a job that ``set -m`` put in a group of its own) share one session id. stdin is
``/dev/null``; stdout and stderr go to one pipe, so the model reads them interleaved as a
terminal shows them.

The call ends when bash exits, when its timeout passes, or when the task running it is
cancelled. In every case the session is then stopped: ``SIGTERM`` to each of its processes
first, a grace period to exit cleanly, then ``SIGKILL`` until none is left. No process of a
call outlives the call, except one that left the session on purpose (``setsid``). Finding a
session's processes needs Linux's ``/proc``; elsewhere only the first process group is
signalled.

The output is read in chunks as it comes and only its start and its end are kept, so a
command that prints gigabytes costs a few kilobytes. Bytes that are not UTF-8 become U+FFFD.
Environment variables whose names look like secrets are not passed to the command.

A non-zero exit code is information, not a failure of the tool: the result says
``exit code: 1`` and is not an error. A timeout, or a command that could not be started, is an
error result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Mapping
from pathlib import Path

from pydantic import Field

from ..types import ToolDefinition, ToolOutput
from .base import ArgumentsTool, ToolArguments, schema_of

CHUNK_BYTES = 65536
"""How much of the output one read takes at most."""

DRAIN_SECONDS = 1.0
"""How long the output may stay open after the session is stopped (a ``setsid`` escapee)."""

POLL_SECONDS = 0.02
"""How often the grace period looks whether the session has exited."""

KILL_SECONDS = 5.0
"""How long ``kill_session`` goes on sending ``SIGKILL`` before it gives up."""

logger = logging.getLogger("claw.tools.bash")
"""Where processes that could not be killed are reported."""

SECRET_WORDS = frozenset({"SECRET", "TOKEN", "PASSWORD", "PASSWD"})
"""A variable whose name has one of these as an ``_``-separated word is a secret."""

SECRET_ENDINGS = ("API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY")
"""A variable whose name ends with one of these is a secret."""


class BashArguments(ToolArguments):
    """The command to run and, if it should stop sooner than usual, its timeout."""

    command: str = Field(min_length=1, description="The bash command to run.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds after which the command is stopped (default: the tool's default; "
        "more than the maximum is cut to the maximum).",
    )


# --8<-- [start:secrets]
def is_secret(name: str) -> bool:
    """Whether an environment variable named ``name`` probably holds a secret.

    Case does not matter. The name is split at ``_`` into words: it is a secret if a word is
    ``SECRET``, ``TOKEN``, ``PASSWORD`` or ``PASSWD`` (``GITHUB_TOKEN``, ``db_password``,
    ``AWS_SECRET_ACCESS_KEY``), or if the name ends with ``API_KEY``, ``APIKEY``,
    ``ACCESS_KEY`` or ``PRIVATE_KEY`` (``OPENROUTER_API_KEY``). ``TOKENIZERS_PARALLELISM`` and
    ``KEYBOARD`` are not: ``TOKENIZERS`` is not the word ``TOKEN``.
    """
    # region ch10: upper-case the name; a secret word among its "_" parts, or a secret ending
    # more: name.upper().split("_"); set.isdisjoint or any(...); str.endswith takes a tuple
    upper = name.upper()
    return not SECRET_WORDS.isdisjoint(upper.split("_")) or upper.endswith(SECRET_ENDINGS)
    # endregion


def scrubbed_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``environ`` without the variables ``is_secret`` names."""
    # region ch10: a dict comprehension that keeps every variable that is not a secret
    # more: {name: value for name, value in environ.items() if ...}
    return {name: value for name, value in environ.items() if not is_secret(name)}
    # endregion
# --8<-- [end:secrets]


class OutputKeeper:
    """The start and the end of a stream of bytes, whatever its length, and counts of the rest.

    ``feed`` takes the bytes in the order they come. The first ``head_bytes`` are kept in
    ``head``; after that, the last ``tail_bytes`` seen so far are kept in ``tail``, and what
    falls out of the tail's front is only counted: ``cut_bytes`` bytes holding ``cut_lines``
    newlines. So the memory held never exceeds ``head_bytes + tail_bytes`` plus one chunk.
    """

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        """Keep at most ``head_bytes`` from the start and ``tail_bytes`` from the end."""
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total_bytes = 0
        """Every byte fed, kept or not."""
        self.cut_bytes = 0
        """Bytes between the head and the tail, dropped."""
        self.cut_lines = 0
        """Newlines among the dropped bytes."""

    def feed(self, data: bytes) -> None:
        """Take the next ``data`` of the stream: fill the head, then the tail; count the rest."""
        # region ch10: top the head up to head_bytes; append the rest to the tail; trim its front
        # more: room = head_bytes - len(head); excess = len(tail) - tail_bytes; count b"\n" in it
        self.total_bytes += len(data)
        room = self.head_bytes - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self.tail_bytes
        if excess > 0:
            self.cut_bytes += excess
            self.cut_lines += self.tail.count(b"\n", 0, excess)
            del self.tail[:excess]
        # endregion

    def text(self) -> str:
        """What was kept, decoded; if anything was cut, a note in its place says how much.

        When bytes were cut, the head is shortened to its last whole line and the tail starts
        at its first whole line (if they hold a newline), so the note replaces whole lines;
        what this trims is added to the counts. Bytes that are not UTF-8 become U+FFFD
        (``errors="replace"``). The note reads
        ``[588,699 bytes (99,948 lines) cut from the middle of the output]``, on a
        line of its own between the head and the tail.
        """
        # region ch10: no cut: decode it all; else trim to whole lines, count, note in between
        # more: bytes.rfind(b"\n") + 1, bytes.find(b"\n") + 1; f"{n:,}" writes 1,000
        if not self.cut_bytes:
            return (self.head + self.tail).decode("utf-8", errors="replace")
        head_end = self.head.rfind(b"\n") + 1 or len(self.head)
        tail_start = self.tail.find(b"\n") + 1
        trimmed = self.head[head_end:] + self.tail[:tail_start]
        cut_bytes = self.cut_bytes + len(trimmed)
        cut_lines = self.cut_lines + trimmed.count(b"\n")
        lines = "line" if cut_lines == 1 else "lines"
        note = f"[{cut_bytes:,} bytes ({cut_lines:,} {lines}) cut from the middle of the output]"
        head = self.head[:head_end].decode("utf-8", errors="replace")
        tail = self.tail[tail_start:].decode("utf-8", errors="replace")
        return f"{head.removesuffix(chr(10))}\n{note}\n{tail}"
        # endregion


async def read_stream(
    stream: asyncio.StreamReader, keeper: OutputKeeper, chunk_bytes: int = CHUNK_BYTES
) -> None:
    """Feed ``keeper`` everything ``stream`` gives until its end, ``chunk_bytes`` at a time.

    Never ``stream.read()`` without a size: that waits for the end and holds it all.
    """
    # region ch10: read a chunk at a time until read returns b"" (the end); feed each chunk
    # more: while chunk := await stream.read(chunk_bytes): ...
    while chunk := await stream.read(chunk_bytes):
        keeper.feed(chunk)
    # endregion


# --8<-- [start:session-helpers]
def session_members(sid: int) -> list[int] | None:
    """The pids of the processes of session ``sid`` that still run; ``None`` without ``/proc``.

    Linux only: field 6 of ``/proc/PID/stat`` is the session id. Zombies (dead, waiting to be
    collected) do not count.
    """
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    members = []
    for entry in proc.iterdir():
        if entry.name.isdigit() and session_of(int(entry.name)) == sid:
            members.append(int(entry.name))
    return members


def session_of(pid: int) -> int | None:
    """The session id of process ``pid`` (``None`` if it is gone or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None  # gone while we looked
    fields = stat[stat.rfind(")") + 2 :].split()  # state, ppid, pgrp, session, ...
    if len(fields) < 4 or fields[0] in ("Z", "X"):
        return None
    return int(fields[3])


def session_alive(sid: int) -> bool:
    """Whether a process of session ``sid`` still runs.

    Without ``/proc`` (macOS, BSD), the best there is: whether group ``sid`` still exists.
    """
    members = session_members(sid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(sid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_session(sid: int, signum: int) -> None:
    """Send ``signum`` to every process of session ``sid``, whatever its group.

    A process that left the group (``set -m``, ``setpgid``) is still in the session, so this
    reaches it; one that called ``setsid`` is not. Without ``/proc``, only group ``sid`` is
    signalled. Each process is opened as a pidfd and its session checked again before the
    signal, so a pid reused meanwhile by another process is never hit.
    """
    members = session_members(sid)
    if members is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(sid, signum)
        return
    for pid in members:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if not hasattr(os, "pidfd_open"):
                os.kill(pid, signum)
                continue
            handle = os.pidfd_open(pid)
            try:
                if session_of(pid) == sid:
                    signal.pidfd_send_signal(handle, signum)
            finally:
                os.close(handle)


async def kill_session(sid: int) -> None:
    """``SIGKILL`` session ``sid`` again and again until no process of it runs.

    A process may fork while its siblings die, so one round is not enough. After
    ``KILL_SECONDS`` (read at each call) it gives up (a process stuck in the kernel cannot be
    killed) and logs what is left.
    """
    deadline = asyncio.get_running_loop().time() + KILL_SECONDS
    while session_alive(sid):
        if asyncio.get_running_loop().time() > deadline:
            logger.warning("session %d: processes %s survived SIGKILL", sid, session_members(sid))
            return
        signal_session(sid, signal.SIGKILL)
        await asyncio.sleep(POLL_SECONDS)
# --8<-- [end:session-helpers]


async def stop_session(process: asyncio.subprocess.Process, grace: float) -> None:
    """Stop every process of ``process``'s session: ``SIGTERM``, up to ``grace`` s, ``SIGKILL``.

    ``process`` leads its own session, so the session's id is its pid. Nothing is sent to a
    session already gone. The process itself is waited for (collected) before this returns.
    """
    # region ch10: SIGTERM the session if alive; poll until it is gone or grace passes; kill
    # more: loop.time() for the deadline; await asyncio.sleep(POLL_SECONDS); then kill_session
    sid = process.pid
    if session_alive(sid):
        signal_session(sid, signal.SIGTERM)
        deadline = asyncio.get_running_loop().time() + grace
        while session_alive(sid) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(POLL_SECONDS)
        await kill_session(sid)
    await process.wait()
    # endregion


async def started(
    starting: Awaitable[asyncio.subprocess.Process],
) -> asyncio.subprocess.Process:
    """Await the start of a process that leads its own session, even through a cancellation.

    asyncio starts a child in two halves: it forks, then it connects the pipes. A task
    cancelled between the two never gets its ``Process``, and asyncio kills only the leader,
    so whatever the command started in that moment runs on. Here the start is shielded from
    the cancellation: it is let finish, the whole session is stopped (``stop_session``, no
    grace), and only then does ``CancelledError`` go on.
    """
    task = asyncio.ensure_future(starting)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        process = None
        with contextlib.suppress(Exception):  # a start that failed left nothing running
            process = await task
        if process is not None:
            await stop_session(process, grace=0)
        raise


# --8<-- [start:pipe]
class OutputPipe:
    """A pipe for a command's output: the command writes to ``write_fd``; claw reads ``reader``.

    Why not ``stdout=asyncio.subprocess.PIPE``? Because then ``process.wait()`` returns only
    once the process has exited *and* its pipes are closed, and a background grandchild that
    still holds the pipe would keep it waiting. With a pipe of our own, ``wait()`` returns as
    soon as bash exits. Use it as ``async with OutputPipe() as pipe:``; close the write end
    once the command has started, so that the end of the output comes when the last process
    holding it exits.
    """

    def __init__(self) -> None:
        """A new pipe; its read end is connected to the event loop by ``async with``."""
        read_fd, self.write_fd = os.pipe()
        self._read_file = os.fdopen(read_fd, "rb", buffering=0)
        self.reader = asyncio.StreamReader(limit=CHUNK_BYTES)
        self._transport: asyncio.ReadTransport | None = None

    async def __aenter__(self) -> OutputPipe:
        """Connect the read end to ``reader``."""
        loop = asyncio.get_running_loop()
        protocol = asyncio.StreamReaderProtocol(self.reader)
        self._transport, _ = await loop.connect_read_pipe(lambda: protocol, self._read_file)
        return self

    def close_write_end(self) -> None:
        """Close claw's copy of the write end (the command's processes keep theirs)."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    async def __aexit__(self, *exc_info: object) -> None:
        """Close both ends."""
        self.close_write_end()
        if self._transport is not None:
            self._transport.close()
        else:
            self._read_file.close()


async def drain(reader: asyncio.Task[None], seconds: float) -> None:
    """Let ``reader`` finish reading what is left, for at most ``seconds``; then cancel it.

    The output ends when the last process holding the pipe exits. A process that left the
    session (``setsid``) and kept the pipe would make that never: it is not waited for.
    """
    await asyncio.wait((reader,), timeout=seconds)
    if not reader.done():
        reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
# --8<-- [end:pipe]


def exit_line(returncode: int) -> str:
    """The last line of a result: ``exit code: 0``; a process killed by a signal is named.

    asyncio gives ``-9`` for a process killed by ``SIGKILL``; the line then reads
    ``exit code: -9 (killed by SIGKILL)``.
    """
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"exit code: {returncode} (killed by {name})"
    return f"exit code: {returncode}"


class BashTool(ArgumentsTool[BashArguments]):
    """Run a bash command in the workspace, with a timeout, bounded output and no secrets."""

    name = "bash"
    description = (
        "Run a shell command with bash in the workspace directory. The result is the output "
        "(stdout and stderr together, in the order printed) and a last line `exit code: N`; a "
        "non-zero exit code is reported, not treated as a failure. stdin is empty "
        "(/dev/null): a command must not wait for input. Long output keeps its start and its "
        "end. The command is stopped after `timeout` seconds; when it ends or is stopped, "
        "every process it started is stopped too, background ones included. Environment "
        "variables that look like secrets (names with API_KEY, TOKEN, SECRET or PASSWORD) "
        "are removed."
    )
    Arguments = BashArguments
    read_only = False
    """Running a command can change anything: never run it alongside other tools."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        default_timeout: float = 120.0,
        max_timeout: float = 600.0,
        max_output_bytes: int = 20_000,
        grace: float = 2.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """Run commands in ``root``.

        A call without ``timeout`` stops after ``default_timeout`` seconds; a longer one than
        ``max_timeout`` is cut to it. At most ``max_output_bytes`` of output are kept, half
        from the start and half from the end (below the loop's own 30,000-byte cut, which keeps
        only a start). ``grace`` is how long the session has to exit after ``SIGTERM``.
        ``environ`` is the environment to scrub and pass on (default: ``os.environ`` at the
        time of each call).
        """
        if not 0 < default_timeout <= max_timeout:
            raise ValueError(
                f"default_timeout ({default_timeout:g} s) must be above 0 and at most "
                f"max_timeout ({max_timeout:g} s)"
            )
        self.root = Path(root)
        self.default_timeout = default_timeout
        self.max_timeout = max_timeout
        self.max_output_bytes = max_output_bytes
        self.grace = grace
        self.environ = environ

    @property
    def definition(self) -> ToolDefinition:
        """How ``bash`` is described to the model, with this tool's timeouts in seconds."""
        return ToolDefinition(
            name=self.name,
            description=f"{self.description} Default timeout {self.default_timeout:g} s, "
            f"maximum {self.max_timeout:g} s.",
            parameters=schema_of(BashArguments),
        )

    def pick_timeout(self, asked: float | None) -> tuple[float, str]:
        """The timeout to use for a call that asked for ``asked`` seconds, and a note.

        ``None`` gives the default, with no note. Up to the maximum, the model gets what it
        asked for. Above it, the maximum, and the note says so:
        ``timeout 900 s is above the maximum of 600 s, so 600 s was used``.
        """
        # region ch10: the default for None; the maximum, with a note, for more than the maximum
        # more: f"{seconds:g}" writes 600.0 as 600 and 0.5 as 0.5
        if asked is None:
            return self.default_timeout, ""
        if asked > self.max_timeout:
            note = (
                f"timeout {asked:g} s is above the maximum of {self.max_timeout:g} s, "
                f"so {self.max_timeout:g} s was used"
            )
            return self.max_timeout, note
        return asked, ""
        # endregion

    async def start(self, command: str, output: int) -> asyncio.subprocess.Process:
        """Start ``bash -c command`` in the workspace, writing stdout and stderr to ``output``.

        Its own session (``setsid``: its pid is the session's id), stdin from ``/dev/null``, and the
        environment without secrets. An ``OSError`` (a workspace that does not exist, no
        ``bash``) goes to the caller.
        """
        # region ch10: create_subprocess_exec with cwd, env, stdin, stdout, stderr, a new session
        # more: stdin=asyncio.subprocess.DEVNULL; stdout=stderr=output; start_new_session=True
        environ = os.environ if self.environ is None else self.environ
        return await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=self.root,
            env=scrubbed_env(environ),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        # endregion

    async def call(self, args: BashArguments) -> ToolOutput:
        """Run ``args.command``; answer with its output and exit code, or why it was stopped.

        The result is the clamping note (if any), the output (``(no output)`` if there was
        none), then ``exit code: N``; or, after a timeout, the output so far and
        ``timed out after 0.5 s: the command and every process it started were stopped``,
        as an error result. If the task is cancelled, the session is stopped before
        ``CancelledError`` goes on.
        """
        timeout, note = self.pick_timeout(args.timeout)
        keeper = OutputKeeper(self.max_output_bytes // 2, self.max_output_bytes // 2)
        async with OutputPipe() as pipe:
            try:
                process = await started(self.start(args.command, pipe.write_fd))
            except OSError as error:
                return ToolOutput.error(f"could not run bash in {self.root}: {error}")
            finally:
                pipe.close_write_end()  # only the command's processes hold it now
            returncode = await self.supervise(process, pipe.reader, keeper, timeout)
        parts = [note] if note else []
        parts.append(keeper.text().removesuffix("\n") or "(no output)")
        if returncode is None:
            parts.append(
                f"timed out after {timeout:g} s: the command and every process it started "
                "were stopped"
            )
            return ToolOutput.error("\n".join(parts))
        parts.append(exit_line(returncode))
        return ToolOutput.ok("\n".join(parts))

    async def supervise(
        self,
        process: asyncio.subprocess.Process,
        output: asyncio.StreamReader,
        keeper: OutputKeeper,
        timeout: float,
    ) -> int | None:
        """Read ``output`` into ``keeper`` while ``process`` runs; its exit code, or ``None``.

        ``None`` means the timeout passed. However it ends (exit, timeout, or the task
        cancelled), the session is stopped with ``stop_session``, and what the pipe still
        holds is read (for at most ``DRAIN_SECONDS``), before this returns or
        ``CancelledError`` goes on.
        """
        # region ch10: a reader task; wait_for the exit; in finally stop the session, then drain
        # more: asyncio.create_task(read_stream(...)); except TimeoutError; drain(reader, ...)
        reader = asyncio.create_task(read_stream(output, keeper))
        try:
            return await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            return None
        finally:  # ended, timed out or cancelled: stop whatever is left of the session
            await stop_session(process, self.grace)
            await drain(reader, DRAIN_SECONDS)
        # endregion
