"""Find the processes a test started by a marker in their command line, and clean them up.

A test that starts processes meant to escape (``set -m``, ``setpgid``, ``sleep 300 &`` in a
hook) puts a unique marker in each one's command line, asks ``marked`` which still run, and
gets the marker from ``unique_marker``, whose cleanup kills whatever is left when the test
ends, pass or fail (each test module makes it a fixture).

The bash tool's and the hooks' time limits are tested with ``loop_clock.LoopClock``: the test
waits until the command has set its scene and the limit's timer is armed (``time_out``), then
moves the loop's clock past it. A ``SIGTERM`` trap whose cleanup lasts until the test lets it
finish (``CLEANUP_TRAP``, ``let_cleanup_finish``) tells a grace period from none without timing
either.
"""

import asyncio
import contextlib
import os
import shlex
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_clock import LoopClock, armed

PYTHON = f"{shlex.quote(sys.executable)} -S"
"""The command that runs this Python without ``site``: it starts in a hundredth of a second,
where ``python3`` may be a version manager's shim script that takes ten times as long."""


def marked(marker: str) -> list[int]:
    """The pids of running processes (zombies do not count) whose command line holds ``marker``.

    Tests call it often (it is how they wait), so it reads only what it must: each process's
    command line, and the state of those that hold the marker.
    """
    needle = marker.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb", buffering=0) as file:
                if needle not in file.read():
                    continue
            with open(f"/proc/{name}/stat", "rb", buffering=0) as file:
                stat = file.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :][:1]
        if state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def wait_marked(marker: str, within: float = 5.0) -> list[int]:
    """The pids of processes with ``marker``, waiting up to ``within`` seconds for the first.

    A process that has just been started can be missed at first: the kernel lets its parent go
    on (``Popen`` returns) a moment before the new command line is in place, so for that moment
    ``/proc/PID/cmdline`` is empty.
    """
    deadline = time.monotonic() + within
    while not (found := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def assert_none_marked(marker: str, within: float = 3.0) -> None:
    """No process with ``marker`` runs, at the latest ``within`` seconds from now.

    A process that was killed is gone in milliseconds on an idle machine; on a loaded one (CI
    runs on two cores) it can take a second before the kernel has torn it down, so the bound is
    generous. A process nobody killed is still there when it passes, and the test fails.
    """
    deadline = time.monotonic() + within
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"still running: {left}"


def unique_marker() -> Iterator[str]:
    """A unique word to put in command lines; its processes are killed when the test ends."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("finding processes by their command line needs Linux's /proc")
    word = f"claw-escape-{uuid.uuid4().hex[:12]}"
    try:
        yield word
    finally:
        for pid in marked(word):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def job_control_escape(marker: str) -> str:
    """Two background jobs that ``set -m`` puts in groups of their own, then a long wait.

    Each ``sleep`` is named ``marker`` (``exec -a``); ``ready`` is written once both run.
    """
    job = f"(exec -a {marker} sleep 300) &"
    return f"set -m; {job} {job} echo started; touch ready; sleep 300"


def setpgid_escape(marker: str) -> str:
    """A Python process that leaves bash's group with ``os.setpgid(0, 0)``, then a long wait."""
    script = (
        "import os, pathlib, time; os.setpgid(0, 0); pathlib.Path('ready').touch(); time.sleep(300)"
    )
    return f'{PYTHON} -c "{script}" {marker} & echo started; sleep 300'


async def wait_until_ready(
    folder: Path, marker: str, count: int, running: "asyncio.Task[Any]"
) -> None:
    """Until ``ready`` exists and ``count`` processes named ``marker`` run, in their own groups.

    If ``running`` (the task that starts them) ends first, its result or error is raised.
    """
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if running.done():
            raise AssertionError(f"the command ended before its escapes ran: {running.result()}")
        pids = marked(marker)
        if (folder / "ready").exists() and len(pids) >= count:
            try:
                groups = [os.getpgid(pid) for pid in pids]
            except ProcessLookupError:  # stopped meanwhile (a timeout): the task says why
                await asyncio.sleep(0.005)
                continue
            assert groups == pids, "each left bash's group"
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the escapes did not start: {marked(marker)}")


class HeldStart:
    """Holds every ``asyncio.create_subprocess_exec`` between its fork and its return.

    A real start has a moment between the two (asyncio connects the pipes), too short to hit
    on purpose; held, the moment lasts until ``release()``. A test cancels its task inside it,
    then releases: code that lost the process in that moment leaves the command's jobs running.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.released = asyncio.Event()
        real = asyncio.create_subprocess_exec

        async def held(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
            process = await real(*args, **kwargs)
            await self.released.wait()
            return process

        monkeypatch.setattr(asyncio, "create_subprocess_exec", held)

    def release(self) -> None:
        """Let every held start return."""
        self.released.set()


async def wait_for_file(path: Path, running: "asyncio.Task[Any]") -> None:
    """Until ``path`` exists; if ``running`` (the task that makes it) ends first, it is awaited."""
    while not path.exists():
        if running.done():
            raise AssertionError(f"the command ended before it made {path}: {running.result()}")
        await asyncio.sleep(0.005)


wait_until_armed = armed
"""Until the running loop holds a timer due ``seconds`` or more from now (``loop_clock.armed``)."""


async def time_out(clock: LoopClock, limit: float, running: "asyncio.Task[Any]") -> None:
    """Move the loop's clock past the time limit of ``limit`` seconds ``running`` has armed."""
    await clock.time_out(limit, running)


CLEANUP_TRAP = (
    "trap 'touch termed; until [ -e go ]; do sleep 0.005; done; echo done > cleaned; exit 0' TERM"
)
"""A bash ``SIGTERM`` trap whose cleanup lasts until the test lets it finish.

It writes ``termed``, waits for ``go``, then writes ``cleaned`` and exits. A test runs
``let_cleanup_finish`` beside the command: given a grace period, the trap gets ``go`` and
cleans up; sent ``SIGKILL`` in the same turn of the loop as ``SIGTERM`` (no grace), it cannot,
since the test's loop makes ``go`` only on a later turn.
"""


async def let_cleanup_finish(folder: Path) -> None:
    """Once a ``CLEANUP_TRAP`` in ``folder`` has started (``termed``), let it finish (``go``).

    Cancelled (a failed test's end), it lets the trap finish too, so the command ends quickly.
    """
    try:
        while not (folder / "termed").exists():
            await asyncio.sleep(0.005)
    finally:
        (folder / "go").touch()
