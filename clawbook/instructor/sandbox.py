"""Run a command under resource limits.

``python -m clawbook.instructor.sandbox --memory BYTES -- CMD...``

``clawbook grade`` puts this in front of each submission's test run. It sets the limits in its
own process, then replaces itself with the command (``os.execv``), so the limits hold for the
test process and everything it starts, and the grader's own process is never limited. Doing it
in a wrapper rather than in ``preexec_fn`` keeps it safe while the grader runs many submissions
from threads.

The limits are those of ``resource.setrlimit``: ``RLIMIT_AS`` (address space: an allocation
beyond it fails with ``MemoryError``), ``RLIMIT_CORE`` 0 (a crash leaves no core file behind)
and, if asked, ``RLIMIT_NPROC`` (a fork bomb stops at a few hundred processes) and
``RLIMIT_FSIZE`` (no file larger than that can be written).

Limits are not isolation: a process under them still sees the whole machine. ``bwrap_command``
builds the bubblewrap (``bwrap``) command that ``clawbook grade`` puts in front of the limits, so
each submission runs in mount, PID, network, IPC and UTS namespaces of its own, where only its
scratch folder is writable, the interpreter, the virtualenv and clawbook itself are read-only,
and nothing else of the machine exists: not the instructor's checkout, not another submission,
not the grader's process or its environment. ``isolation`` says whether bubblewrap can run here,
and if not, why.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

BWRAP_ENV = "CLAWBOOK_BWRAP"
"""The ``bwrap`` program to use (default: the one on ``PATH``); ``none`` turns it off."""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Mounted read-only (or re-created as the links they are): the programs and libraries."""
SYSTEM_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/passwd", "/etc/group",
    "/etc/nsswitch.conf", "/etc/hosts",
)  # fmt: skip
"""The few files of ``/etc`` a Python program needs; no other file of ``/etc`` is visible."""
KEPT_VARIABLES = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|VIRTUAL_ENV|PYTHONPATH)$")
"""The only variables a submission's test process inherits: nothing secret, no proxies."""
SECRET_WORDS = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PROXY|AUTH)", re.I)
"""A variable whose name holds one of these is secret: never passed on, blanked out of rows."""


def scrubbed_environment(home: Path, tmp: Path) -> dict[str, str]:
    """The environment of a submission's tests: a short allow-list, nothing secret."""
    env = {
        k: v
        for k, v in os.environ.items()
        if KEPT_VARIABLES.match(k) and not SECRET_WORDS.search(k)
    }
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONHASHSEED="0", NO_COLOR="1")
    return env


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
    words = [sys.executable, "-m", "clawbook.instructor.sandbox"]
    if memory:
        words += ["--memory", str(memory)]
    if processes:
        words += ["--processes", str(processes)]
    if file_size:
        words += ["--file-size", str(file_size)]
    return [*words, "--"]


@dataclass(frozen=True)
class Isolation:
    """How submissions are kept apart: bubblewrap, or only limits and a scrubbed environment."""

    program: str | None
    """The ``bwrap`` program, when it can run; None for the fallback."""
    problem: str | None = None
    """Why bubblewrap is not used (missing, or it cannot create namespaces here)."""

    @property
    def sandbox(self) -> str | None:
        """``bwrap`` when submissions run in bubblewrap, else None."""
        return "bwrap" if self.program else None

    def summary(self) -> str:
        """One line for the instructor: what isolates the submissions."""
        if self.program:
            return f"each submission runs in a bubblewrap sandbox ({self.program})"
        return (
            f"bubblewrap is not available ({self.problem}): submissions run without bubblewrap, "
            "with only resource limits, a scrubbed environment and the network guard, and can "
            "see this machine (see the grading appendix)"
        )


def isolation() -> Isolation:
    """Whether bubblewrap can isolate submissions here (``CLAWBOOK_BWRAP`` picks the program)."""
    wanted = os.environ.get(BWRAP_ENV, "").strip()
    if wanted.lower() == "none":
        return Isolation(None, f"{BWRAP_ENV}=none turns it off")
    program = shutil.which(wanted or "bwrap")
    if program is None:
        where = wanted or "bwrap on PATH"
        return Isolation(None, f"no program {where} (Debian/Ubuntu: apt-get install bubblewrap)")
    problem = _probe(program)
    return Isolation(None, problem) if problem else Isolation(program)


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate submissions here, or None if it can."""
    return isolation().problem


@functools.lru_cache(maxsize=8)
def _probe(program: str) -> str | None:
    """Run ``true`` in the namespaces a submission gets; the error if that fails."""
    command = [*bwrap_command(program, readonly=(), writable=(), cwd=Path("/")), "true"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{program} does not run: {error}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"{program} cannot create its namespaces here: {said}"
    return None


def bwrap_command(
    program: str, *, readonly: Iterable[Path], writable: Iterable[Path], cwd: Path,
    readonly_inside: Iterable[Path] = (),
) -> list[str]:  # fmt: skip
    """The words that run a command in a fresh bubblewrap sandbox.

    New mount, PID, network, IPC, UTS (and, where needed, user) namespaces; a new session (no
    terminal to push keystrokes into); killed with its parent; the system's programs and
    libraries, ``readonly`` and ``readonly_inside`` read-only, ``writable`` read-write, at the
    same paths as outside; a fresh ``/proc``, ``/dev`` and ``/tmp``. ``readonly_inside`` is
    mounted last, so it can make part of a ``writable`` folder read-only. bwrap's own init is
    the namespace's first process: when the command ends, bwrap ends, and the kernel kills
    every process still in the namespace. (Not ``--as-pid-1``: a PID 1 ignores every signal it
    has no handler for, so the runner's SIGTERM would not stop pytest, and it would have to
    reap the orphans the tests leave.)
    """
    words = [program, "--unshare-all", "--die-with-parent", "--new-session"]
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            words += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            words += ["--ro-bind", folder, folder]
    words += [w for f in SYSTEM_FILES if os.path.exists(f) for w in ("--ro-bind", f, f)]
    words += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for flag, paths in (("--ro-bind", readonly), ("--bind", writable),
                        ("--ro-bind", readonly_inside)):  # fmt: skip
        for path in paths:
            words += [flag, str(path), str(path)]
    return [*words, "--chdir", str(cwd), "--"]


def main(argv: Sequence[str] | None = None) -> int:
    """Set the limits, then become the command."""
    parser = argparse.ArgumentParser(prog="python -m clawbook.instructor.sandbox")
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
