"""Helpers for chapter 29's tests: claw's SDK, in this process, against the loopback server.

``project`` (make it a fixture) is a fresh folder claw runs in, with its own home and a test
key; ``options`` are the SDK's options for the loopback server; ``collect`` runs ``query`` to
the end; ``wait_for_pid`` waits for a command's pid file; ``alive`` says if a pid still runs.
"""

import asyncio
from pathlib import Path
from typing import Any

import pytest

from claw.sdk import ClawAgentOptions, Message, query
from clawbook.harness.loopback import LoopbackServer


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder to run claw in, its own home, the test key (``pytest.fixture(project)``)."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    return folder


def options(server: LoopbackServer, **more: Any) -> ClawAgentOptions:
    """The SDK's options for ``server``'s scripted model, and ``more``."""
    return ClawAgentOptions(model="test/model", extra_args={"base-url": server.base_url}, **more)


async def collect(prompt: str, chosen: ClawAgentOptions) -> list[Message]:
    """Every message of ``query(prompt, chosen)``."""
    return [message async for message in query(prompt, chosen)]


async def wait_for_pid(pid_file: Path) -> int:
    """The pid a command wrote to ``pid_file``, once it has (the test's timeout bounds it)."""
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.005)
    return int(pid_file.read_text())


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


SLEEPER = 'echo $$ > pid && exec sleep 300'
"""A command that writes its pid to ``pid``, then sleeps (as that same process) for long."""

