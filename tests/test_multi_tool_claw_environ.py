"""ch12 · The ``claw`` command keeps its key from the commands it runs, even through ``/proc``.

The attack: the model asks ``bash`` to print the environment block of the process that started
it (``/proc/$PPID/environ``, which is claw) and of every ancestor above it. The kernel shows the
block a process was *started* with, so taking the key out of ``os.environ`` is not enough.
claw runs as a real process here, started with the key in its environment, so that its block
holds the key as a user's would.

That process starts when this module is imported, against a server and in a folder of its own:
its Python start and imports (most of its half second) overlap the collection of the files after
this one and the tests before it, and the test waits for what it did. In a pytest-xdist worker
and under mutmut it starts when the test runs (see ``EARLY``).
"""

import atexit
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from claw_command import calls, says

from claw.todo import Todo
from clawbook.harness.loopback import LoopbackServer

KEY = "sk-or-v1-h5procs-environ-attack"
TOKEN = "ghp_h5procs_environ_attack"

# Every ancestor of this bash, from its parent (claw) up: its pid, whether its block could be
# read, and the block itself, one variable a line.
WALK = r"""
pid=$PPID
while [ "$pid" -gt 1 ]; do
    if block=$(tr '\0' '\n' < /proc/$pid/environ 2>&1); then state=read; else state=refused; fi
    echo "== ancestor $pid $state"
    echo "$block"
    read -r stat < /proc/$pid/stat
    set -- ${stat##*) }
    pid=$2
done
"""

TODO_LINE = re.compile(r"claw: this needs code you have not written yet: (ch\w+): (.*) \(see ")


class ClawProcess:
    """The ``claw`` console script in a process of its own, started with the key set.

    It runs in a folder of its own (with its own ``CLAW_CONFIG_DIR``, as every test's claw)
    against a server of its own, scripted with the attack: a ``bash`` call that walks the
    ancestors, then a closing answer.
    """

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="claw-environ-")
        project, config = Path(self.folder.name) / "project", Path(self.folder.name) / "config"
        project.mkdir()
        config.mkdir()
        self.server = LoopbackServer().start()
        self.server.add(calls("bash", {"command": WALK}), says("Nothing to see."))
        env = {**os.environ, "OPENROUTER_API_KEY": KEY, "GITHUB_TOKEN": TOKEN,
               "CLAW_CONFIG_DIR": str(config)}  # fmt: skip
        prompt = "Print your parent's environment."
        command = [sys.executable, "-c", "from claw.main import cli; cli()", prompt]
        command += ["--unguarded", "--model", "test/model", "--base-url", self.server.base_url]
        self.owner = os.getpid()
        self.process = subprocess.Popen(
            command, cwd=project, env=env, text=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        atexit.register(self.close)  # the test may not run (not chosen, or only collected)

    def close(self) -> None:
        """Stop claw if it still runs, then the server; remove the folder (once)."""
        if self.server.port == 0:
            return
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()
        self.server.stop()
        self.server.port = 0
        self.folder.cleanup()


def run_claw_process(claw: ClawProcess) -> subprocess.CompletedProcess[str]:
    """What ``claw`` printed and its exit status, once it has ended.

    A stub of yours on the way is raised here as that ``Todo``, as if claw ran in the test.
    """
    stdout, stderr = claw.process.communicate()
    todo = TODO_LINE.search(stderr)
    if todo:
        raise Todo(todo[1], todo[2])
    return subprocess.CompletedProcess(claw.process.args, claw.process.returncode, stdout, stderr)


# Not in a pytest-xdist worker, which cannot know whether it will be given the test, nor under
# mutmut, which learns which test calls which function and runs a mutant's tests in forks.
EARLY = not (os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("MUTANT_UNDER_TEST"))
started = ClawProcess() if EARLY else None


@pytest.fixture(scope="module")
def claw_process() -> Iterator[ClawProcess]:
    """The claw process this module started at import, once, in this process; else a new one."""
    global started
    process = started if started is not None and started.owner == os.getpid() else ClawProcess()
    started = None
    try:
        yield process
    finally:
        process.close()


@pytest.mark.timeout(30)  # it waits for claw, a new Python process, on a machine that may be busy
def test_multi_tool_claw_commands_cannot_read_the_key_from_any_ancestor(
    claw_process: ClawProcess,
) -> None:
    server = claw_process.server

    done = run_claw_process(claw_process)

    assert done.returncode == 0, done.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}", "claw used the key"
    walked = server.requests[1].json["messages"][-1]["content"]
    assert f"== ancestor {os.getpid()} " in walked, "the walk reached the test, above claw"
    read = [line for line in walked.splitlines() if line.startswith("PATH=")]
    assert read, "the attack did read environment blocks"
    everything = done.stdout + done.stderr + "".join(r.body.decode() for r in server.requests)
    for leak in (KEY, TOKEN):
        assert leak not in everything
