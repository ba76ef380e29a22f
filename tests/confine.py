"""A workspace with a secret next to it, and a thread that swaps a folder for a link to it.

The file tools must never reach ``outside``: not by ``..``, not by an absolute path, not
through a symbolic link, and not when a folder is swapped for a link between a check and an
open (the race). ``Swapper`` plays the attacker: in a process of its own, it keeps renaming
``ws/d`` away, putting a link to ``outside/d`` in its place, and putting the folder back, as fast
as it can. The race tests make a bounded number of calls (``ROUNDS``); none is timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType

SECRET = "SECRET outside the workspace\n"
INSIDE = "inside the workspace\n"
ROUNDS = 400
"""How many calls each race test makes at least while the swapper runs."""

SEEN = 40
"""How many calls must start while the link is in place, for the race to count as run."""

MOST = 20_000
"""How many calls a race test makes at most, however slowly the swapper gets going."""


def tree(base: Path) -> tuple[Path, Path]:
    """``base/ws`` (``d/f.txt``, ``notes.txt``); ``base/outside`` (``d/f.txt``, ``secret.txt``)."""
    workspace, outside = base / "ws", base / "outside"
    (workspace / "d").mkdir(parents=True)
    (outside / "d").mkdir(parents=True)
    (workspace / "d" / "f.txt").write_text(INSIDE)
    (workspace / "notes.txt").write_text(INSIDE)
    (outside / "d" / "f.txt").write_text(SECRET)
    (outside / "secret.txt").write_text(SECRET)
    return workspace, outside


def outside_untouched(outside: Path) -> bool:
    """Whether ``outside`` holds exactly what ``tree`` put there."""
    found = sorted(str(path.relative_to(outside)) for path in outside.rglob("*"))
    return found == ["d", "d/f.txt", "secret.txt"] and all(
        (outside / name).read_text() == SECRET for name in ("d/f.txt", "secret.txt")
    )


SWAP = r"""
import os, shutil, sys, time
folder, away, target, stop = sys.argv[1:5]
swaps = 0
print("ready", flush=True)
while not os.path.exists(stop):
    try:
        os.rename(folder, away)
        os.symlink(target, folder)
        swaps += 1
        time.sleep(0.0001)  # hold each state a moment, so calls meet both and the changes
        os.unlink(folder)
        os.rename(away, folder)
        time.sleep(0.0001)
    except OSError:  # a tool made a new folder in the gap: put the real one back
        if os.path.islink(folder):
            os.unlink(folder)
        if os.path.exists(away):
            if os.path.exists(folder):
                shutil.rmtree(folder, ignore_errors=True)
            try:
                os.rename(away, folder)
            except OSError:
                pass
print(swaps)
"""
"""The attacker, run as a process of its own so that it races the tool on another core."""


class Swapper:
    """While in its ``with`` block, swap ``workspace/d`` for a link to ``outside/d`` and back.

    The swapping runs in a separate process (not a thread, which would mostly wait for the
    test's thread to let go of Python's lock), so it really runs alongside the tool.
    ``swaps`` says how many times the link was in place.
    """

    def __init__(self, workspace: Path, outside: Path) -> None:
        self.folder = workspace / "d"
        self.away = workspace / "d.away"
        self.stop = workspace.parent / "stop-swapping"
        arguments = [str(self.folder), str(self.away), str(outside / "d"), str(self.stop)]
        self.command = [sys.executable, "-c", SWAP, *arguments]
        self.swaps = 0

    def __enter__(self) -> Swapper:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "ready\n"  # swapping from now on
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop.touch()
        out, _ = self.process.communicate(timeout=60)
        self.swaps = int(out.strip() or 0)
        if self.folder.is_symlink():
            os.unlink(self.folder)
        if self.away.exists():
            if self.folder.exists():
                shutil.rmtree(self.folder, ignore_errors=True)
            os.rename(self.away, self.folder)


async def keep_calling(workspace: Path, call: Callable[[int], Awaitable[object]]) -> int:
    """Call ``call(0)``, ``call(1)``… while a ``Swapper`` runs; how often the link was there.

    At least ``ROUNDS`` calls, and on until ``SEEN`` of them started with the link in place
    (at most ``MOST``): a loaded machine may start the swapper late, and a race that never
    happened proves nothing. Counting calls, not seconds, keeps the test free of timing.
    """
    seen = 0
    for number in range(MOST):
        if number >= ROUNDS and seen >= SEEN:
            break
        seen += (workspace / "d").is_symlink()
        await call(number)
    return seen
