"""Run the ``claw`` command as a process of its own: in a pseudo-terminal, or through pipes.

The few tests that need a real process (a real terminal driven with ``pexpect``, real signals,
a pipe its reader closes, a kill in the middle of a step) get one here. The process is forked
from the test's, which has imported claw already, and runs ``cli()`` (the console script) with
its own standard streams, environment and folder: a real process, with its own terminal, its own
signals and its own exit status, that does not spend half a second importing claw again. When
``cli()`` returns, the child does what Python does on exit (flush stdout and stderr, say so if
that fails) and ends with the status ``cli()`` gave.

claw talks to the test's loopback server and keeps its history and memory in a home folder
of the test's. A stub of yours on the way is raised as that ``Todo``, as if claw ran in the
test.
"""

import contextlib
import fcntl
import gc
import logging
import os
import pty
import re
import signal
import struct
import sys
import termios
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import claw.main
from claw.todo import Todo
from clawbook.harness.loopback import LoopbackServer

TODO_LINE = re.compile(r"claw: this needs code you have not written yet: (ch\w+): (.*) \(see ")
TIMEOUT = 60
"""Seconds any one expectation may take: only to stop a hang, on a busy two-core machine."""
ROWS, COLUMNS = 30, 100
"""The size of the pseudo-terminal."""


def claw_environment(home: Path) -> dict[str, str]:
    """What claw's environment adds: the test key, ``home`` as its home, no colours."""
    return {
        "OPENROUTER_API_KEY": "sk-or-test",
        "HOME": str(home),
        "NO_COLOR": "1",
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "COLUMNS": str(COLUMNS),
    }


def claw_arguments(server: LoopbackServer, *arguments: str) -> list[str]:
    """claw's command line: ``arguments``, then the test model on ``server``."""
    return [*arguments, "--model", "test/model", "--base-url", server.base_url]


def raise_todo(text: str) -> None:
    """Raise the ``Todo`` claw reported in ``text``, if it did."""
    todo = TODO_LINE.search(text)
    if todo:
        raise Todo(todo[1], todo[2])


def run_cli_and_exit(argv: list[str], project: Path, environment: Mapping[str, str]) -> None:
    """In the forked child: run ``claw ARGV`` in ``project`` on fds 0-2, then end the process.

    Never returns: whatever happens, the child ends here and never goes on with the test.
    """
    # The child shares the test process's memory until it writes to it; a full garbage
    # collection walks (and so copies) every object it inherited, some 10-20 ms a child. None
    # of that is garbage the child needs collected: the collector leaves it alone.
    gc.freeze()
    status = 1
    try:
        os.chdir(project)
        os.environ.update(environment)
        sys.argv = ["claw", *argv]
        # Python's own standard streams: stdout line-buffered at a terminal, stderr always.
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", 1 if os.isatty(1) else -1, "utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", 1, "utf-8", "backslashreplace", closefd=False)  # noqa: SIM115
        # Python's own logging, too: none configured, so what asyncio reports (an error while
        # it closes a generator, say) reaches stderr. pytest's capturing handlers, inherited
        # from the test's process, would keep it from the test.
        logging.root.handlers.clear()
        logging.root.setLevel(logging.WARNING)
        try:
            claw.main.cli()
            status = 0
        except SystemExit as leaving:
            code = leaving.code
            status = code if isinstance(code, int) else int(code is not None)
        except KeyboardInterrupt:  # Python reports it and dies of the SIGINT
            traceback.print_exc()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        for stream in (sys.stdout, sys.stderr):  # what Python does at exit, and says if it fails
            try:
                stream.flush()
            except Exception as error:
                os.write(2, f"Exception ignored while flushing: {error!r}\n".encode())
                status = 120
    except BaseException:
        os.write(2, traceback.format_exc().encode())
    finally:
        os._exit(status)


def shell_status(wait_status: int) -> int:
    """The exit status in ``wait_status`` as a shell reports it: 128 + the signal, if one."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def exit_status(pid: int) -> int:
    """Wait for process ``pid``; its exit status (128 + the signal, if one ended it)."""
    return shell_status(os.waitpid(pid, 0)[1])


def end(pid: int) -> None:
    """Make sure process ``pid`` is gone (a test that failed half-way leaves it running)."""
    with contextlib.suppress(ChildProcessError, ProcessLookupError):
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


class Terminal:
    """claw in a pseudo-terminal of its own: type into it, expect what it shows, signal it."""

    def __init__(self, server: LoopbackServer, project: Path, *arguments: str) -> None:
        """Start ``claw ARGUMENTS`` in ``project``, in a terminal of ``ROWS`` x ``COLUMNS``."""
        import pexpect.fdpexpect

        import claw.repl  # noqa: F401  (imported here once, not in the child)

        argv = claw_arguments(server, *arguments)
        pid, fd = pty.fork()  # the child leads a new session, the terminal its controlling one
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            run_cli_and_exit(argv, project, claw_environment(project))
        self.pid = pid
        self.child = pexpect.fdpexpect.fdspawn(fd, encoding="utf-8", timeout=TIMEOUT)
        self.seen = ""

    def expect(self, text: str) -> None:
        """Wait until claw shows ``text`` (a plain string, not a pattern)."""
        import pexpect

        try:
            self.child.expect_exact(text)
        except (pexpect.EOF, pexpect.TIMEOUT):
            raise_todo(str(self.child.before))
            shown = self.child.before
            raise AssertionError(f"claw never showed {text!r}; it showed:\n{shown}") from None
        self.seen += str(self.child.before) + text

    def type(self, line: str) -> None:
        """Type ``line`` and Enter."""
        self.child.send(line + "\r")

    def press_ctrl_c(self) -> None:
        """Ctrl-C: a key at claw's prompt; SIGINT from the terminal while a run goes on."""
        self.child.send("\x03")

    def signal(self, signum: signal.Signals) -> None:
        """Send claw ``signum``, as the system does (SIGHUP: the terminal window was closed)."""
        os.kill(self.pid, signum)

    def exit_status(self) -> int:
        """Wait for claw to end; its exit status (128 + the signal, if one ended it)."""
        import pexpect

        self.child.expect(pexpect.EOF)
        raise_todo(str(self.child.before))
        self.seen += str(self.child.before)
        self.child.close()
        return exit_status(self.pid)


@contextlib.contextmanager
def terminal(server: LoopbackServer, project: Path, *arguments: str) -> Iterator[Terminal]:
    """``Terminal(...)``, ended when the block ends, however it ends."""
    claw_terminal = Terminal(server, project, *arguments)
    try:
        yield claw_terminal
    finally:
        end(claw_terminal.pid)


class Piped:
    """claw with standard input from ``/dev/null`` and stdout and stderr read through pipes."""

    def __init__(self, server: LoopbackServer, project: Path, *arguments: str) -> None:
        """Start ``claw ARGUMENTS`` in ``project``."""
        import claw.app  # noqa: F401  (print mode, imported here once, not in the child)

        argv = claw_arguments(server, *arguments)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                os.dup2(out_write, 1)
                os.dup2(err_write, 2)
                for fd in (out_read, out_write, err_read, err_write):
                    os.close(fd)  # the read ends above all: closing them must end the pipe
            finally:
                run_cli_and_exit(argv, project, claw_environment(project))
        os.close(out_write)
        os.close(err_write)
        self.pid = pid
        self.stdout = os.fdopen(out_read, "rb")
        self.stderr = os.fdopen(err_read, "rb")
        self.status: int | None = None
        """The exit status, once claw has ended and ``ended`` or ``wait`` saw it."""

    def ended(self) -> bool:
        """Whether claw has ended (without waiting for it)."""
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = shell_status(status)
        return self.status is not None

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        """Until ``condition()`` holds; claw ending first is its ``Todo``, or a failure."""
        deadline = time.monotonic() + TIMEOUT  # only to stop a hang
        while not condition():
            if self.ended():
                raise_todo(self.stderr.read().decode())
                raise AssertionError(f"claw ended ({self.status}) before {what}")
            assert time.monotonic() < deadline, f"{what}: not within {TIMEOUT} s"
            time.sleep(0.01)

    def signal(self, signum: signal.Signals) -> None:
        """Send claw ``signum``."""
        os.kill(self.pid, signum)

    def wait(self) -> tuple[int, str]:
        """Wait for claw to end: its exit status, and everything it wrote on stderr."""
        err = self.stderr.read().decode()
        if self.status is None:
            self.status = exit_status(self.pid)
        raise_todo(err)
        return self.status, err


@contextlib.contextmanager
def piped(server: LoopbackServer, project: Path, *arguments: str) -> Iterator[Piped]:
    """``Piped(...)``, ended (and its pipes closed) when the block ends, however it ends."""
    claw_process = Piped(server, project, *arguments)
    try:
        yield claw_process
    finally:
        end(claw_process.pid)
        claw_process.stdout.close()
        claw_process.stderr.close()
