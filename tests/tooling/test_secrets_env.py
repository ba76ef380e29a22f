"""``solution/secrets_env.py``, given code: claw's secrets leave the block ``/proc`` shows.

Each test runs a fresh Python started with secrets in its environment, as a user starts claw,
because only a process's own start-up environment block can show the attack.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from solution.secrets_env import hide_secrets, secret

LINUX_PROC = Path("/proc/self/environ").exists()

CHILD = """
import ctypes, os, sys
from solution.secrets_env import hide_secrets, secret
print("hidden:", hide_secrets())
print("kept:", secret("FOO_API_KEY"), os.environ.get("FOO_API_KEY"))
print("dumpable:", ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))
sys.stdout.flush()
sys.stdin.read()  # until the test has looked at /proc/<this>/environ
"""


@pytest.mark.skipif(not LINUX_PROC, reason="the environment block is shown by Linux's /proc")
def test_hide_secrets_wipes_them_from_the_block_other_processes_read() -> None:
    env = {**os.environ, "FOO_API_KEY": "marker-key-1", "MY_TOKEN": "marker-token-2", "KEEP": "me"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        lines = [child.stdout.readline() for _ in range(3)]
        assert lines == [
            "hidden: ['FOO_API_KEY', 'MY_TOKEN']\n",
            "kept: marker-key-1 None\n",
            "dumpable: 0\n",
        ]
        try:
            block = Path(f"/proc/{child.pid}/environ").read_bytes()
        except PermissionError:
            block = b""  # not dumpable: closed to us, unless we are root
        assert b"marker-key-1" not in block and b"marker-token-2" not in block
        if block:
            assert b"KEEP=me" in block.split(b"\0"), "only the secrets are wiped"
    finally:
        child.kill()
        child.wait()


def test_hide_secrets_of_a_mapping_leaves_the_process_alone() -> None:
    environ = {"OPENROUTER_API_KEY": "k", "PATH": "/bin"}
    assert hide_secrets(environ) == ["OPENROUTER_API_KEY"]
    assert environ == {"PATH": "/bin"}
    assert secret("OPENROUTER_API_KEY") == os.environ.get("OPENROUTER_API_KEY"), "nothing kept"
