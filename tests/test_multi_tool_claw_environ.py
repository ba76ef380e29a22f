"""ch12 · The ``claw`` command keeps its key from the commands it runs, even through ``/proc``.

The attack: the model asks ``bash`` to print the environment block of the process that started
it (``/proc/$PPID/environ``, which is claw) and of every ancestor above it. The kernel shows the
block a process was *started* with, so taking the key out of ``os.environ`` is not enough.
claw runs as a real process here, started with the key in its environment, so that its block
holds the key as a user's would.
"""

import os
import re
import subprocess
import sys
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


def run_claw_process(
    server: LoopbackServer, project: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """The ``claw`` console script in a process of its own, started with the key set.

    A stub of yours on the way is raised here as that ``Todo``, as if claw ran in the test.
    """
    env = {**os.environ, "OPENROUTER_API_KEY": KEY, "GITHUB_TOKEN": TOKEN}
    script = "from claw.main import cli; cli()"
    command = [sys.executable, "-c", script, *arguments, "--model", "test/model"]
    command += ["--base-url", server.base_url]
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=60)
    todo = TODO_LINE.search(done.stderr)
    if todo:
        raise Todo(todo[1], todo[2])
    return done


@pytest.mark.timeout(30)  # it starts claw, a new Python process, on a machine that may be busy
def test_multi_tool_claw_commands_cannot_read_the_key_from_any_ancestor(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.add(calls("bash", {"command": WALK}), says("Nothing to see."))

    done = run_claw_process(server, tmp_path, "Print your parent's environment.", "--unguarded")

    assert done.returncode == 0, done.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}", "claw used the key"
    walked = server.requests[1].json["messages"][-1]["content"]
    assert f"== ancestor {os.getpid()} " in walked, "the walk reached the test, above claw"
    read = [line for line in walked.splitlines() if line.startswith("PATH=")]
    assert read, "the attack did read environment blocks"
    everything = done.stdout + done.stderr + "".join(r.body.decode() for r in server.requests)
    for leak in (KEY, TOKEN):
        assert leak not in everything
