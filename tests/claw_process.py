"""Run the ``claw`` console script as a process of its own: through pipes, or in a terminal.

Chapter 19's tests need a real process: a real terminal (a pseudo-terminal driven with
``pexpect``), real pipes, real signals. claw talks to the test's loopback server and keeps its
history and trust files in a home folder of the test's. A stub of yours on the way is raised
as that ``Todo``, as if claw ran in the test.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect

from claw.todo import Todo
from clawbook.harness.loopback import LoopbackServer

TODO_LINE = re.compile(r"claw: this needs code you have not written yet: (ch\w+): (.*) \(see ")
SCRIPT = "from claw.main import cli; cli()"
TIMEOUT = 60
"""Seconds any one expectation may take: generous, for a busy two-core machine."""


def claw_environment(home: Path) -> dict[str, str]:
    """claw's environment: the test key, ``home`` as its home, no colours to match around."""
    env = {**os.environ, "OPENROUTER_API_KEY": "sk-or-test", "HOME": str(home)}
    env.update(NO_COLOR="1", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100")
    return env


def claw_command(server: LoopbackServer, *arguments: str) -> list[str]:
    """The command line that runs claw with ``arguments`` against ``server``."""
    return [
        sys.executable,
        "-c",
        SCRIPT,
        *arguments,
        "--model",
        "test/model",
        "--base-url",
        server.base_url,
    ]


def raise_todo(text: str) -> None:
    """Raise the ``Todo`` claw reported in ``text``, if it did."""
    todo = TODO_LINE.search(text)
    if todo:
        raise Todo(todo[1], todo[2])


def run_piped(
    server: LoopbackServer, project: Path, *arguments: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """claw with ``arguments``, ``stdin`` piped in, stdout and stderr captured."""
    done = subprocess.run(
        claw_command(server, *arguments),
        cwd=project,
        env=claw_environment(project),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    raise_todo(done.stderr)
    return done


class Terminal:
    """claw in a pseudo-terminal: type into it, expect what it shows."""

    def __init__(self, server: LoopbackServer, project: Path, *arguments: str) -> None:
        """Start claw with ``arguments`` in ``project``, in a terminal of 30 rows, 100 columns."""
        command = claw_command(server, *arguments)
        self.child = pexpect.spawn(
            command[0],
            command[1:],
            cwd=str(project),
            env=claw_environment(project),
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(30, 100),
        )
        self.seen = ""

    def expect(self, text: str) -> None:
        """Wait until claw shows ``text`` (a plain string, not a pattern)."""
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

    def exit_status(self) -> int:
        """Wait for claw to end; its exit status (128 + the signal, if one ended it)."""
        self.child.expect(pexpect.EOF)
        raise_todo(str(self.child.before))
        self.seen += str(self.child.before)
        self.child.close()
        if self.child.signalstatus is not None:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus)
