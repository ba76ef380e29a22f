"""Run a command under resource limits: ``python -m clawbook.sandbox --memory BYTES -- CMD...``.

``clawbook grade`` puts this in front of each submission's test run. It sets the limits in its
own process, then replaces itself with the command (``os.execv``), so the limits hold for the
test process and everything it starts, and the grader's own process is never limited. Doing it
in a wrapper rather than in ``preexec_fn`` keeps it safe while the grader runs many submissions
from threads.

The limits are those of ``resource.setrlimit``: ``RLIMIT_AS`` (address space: an allocation
beyond it fails with ``MemoryError``), ``RLIMIT_CORE`` 0 (a crash leaves no core file behind)
and, if asked, ``RLIMIT_NPROC`` (a fork bomb stops at a few hundred processes) and
``RLIMIT_FSIZE`` (no file larger than that can be written).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
from collections.abc import Sequence


def _limit(which: int, value: int) -> None:
    """Lower one limit (never above the hard limit the process already has)."""
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def apply_limits(
    memory: int | None = None, processes: int | None = None, file_size: int | None = None
) -> None:
    """Set the limits in this process (and so in every process it then starts)."""
    _limit(resource.RLIMIT_CORE, 0)
    if memory:
        _limit(resource.RLIMIT_AS, memory)
    if processes:
        _limit(resource.RLIMIT_NPROC, processes)
    if file_size:
        _limit(resource.RLIMIT_FSIZE, file_size)


def command(
    memory: int | None = None, processes: int | None = None, file_size: int | None = None
) -> list[str]:
    """The words to put in front of a command to run it under these limits."""
    words = [sys.executable, "-m", "clawbook.sandbox"]
    if memory:
        words += ["--memory", str(memory)]
    if processes:
        words += ["--processes", str(processes)]
    if file_size:
        words += ["--file-size", str(file_size)]
    return [*words, "--"]


def main(argv: Sequence[str] | None = None) -> int:
    """Set the limits, then become the command."""
    parser = argparse.ArgumentParser(prog="python -m clawbook.sandbox")
    parser.add_argument("--memory", type=int, default=None, help="address space, in bytes")
    parser.add_argument("--processes", type=int, default=None, help="processes of this user")
    parser.add_argument("--file-size", type=int, default=None, help="largest file, in bytes")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    words = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not words:
        parser.error("no command to run")
    apply_limits(args.memory, args.processes, args.file_size)
    program = shutil.which(words[0]) or words[0]
    os.execv(program, words)
    return 0  # not reached: execv does not return


if __name__ == "__main__":
    sys.exit(main())
