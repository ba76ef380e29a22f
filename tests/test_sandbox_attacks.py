"""ch28 · A sandbox for the shell, tested by attack: each test performs one and asserts it failed.

The commands are real processes in a real bubblewrap sandbox (the processes and the kernel's
namespaces are the subject). Each attack succeeds against chapter 10's plain ``BashTool``:
run this file with ``CLAW_SANDBOX_OFF=1`` to see every attack test fail. The tests that need
bubblewrap skip, saying why, where it cannot run (CI installs it: ``.ci/run``).

The network tests run in a network namespace the test makes (``loopback_only``: a thread that
``unshare``\\ s its own, with only ``lo``), so nothing can leave the machine even if the proxy
were wrong; the test's servers listen on its ``127.0.0.1``.
"""

import asyncio
import ctypes
import functools
import os
import shutil
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from marked_processes import marked, unique_marker

from claw.hooks import CommandHook, Hooks
from claw.sandbox import PROCESS_LIMIT, Sandbox, SandboxConfig, SandboxedBashTool
from claw.tools.bash import BashArguments, BashTool

SANDBOX_OFF = os.environ.get("CLAW_SANDBOX_OFF") == "1"
"""Run the attacks without the sandbox, to see them succeed (each test then fails)."""

CLONE_NEWNET = 0x40000000


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why the sandbox's chain (unshare, then bwrap) cannot run here, or None."""
    if shutil.which("bwrap") is None or shutil.which("unshare") is None:
        return "bwrap or unshare is not installed"
    chain = ["unshare", "--pid", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        chain += ["--user", "--map-root-user"]
    chain += ["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"]
    done = subprocess.run(chain, capture_output=True, text=True, check=False)
    return done.stderr.strip() or f"exit status {done.returncode}" if done.returncode else None


needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None,
    reason=f"bubblewrap cannot run here ({bwrap_problem()}): the sandbox is not tested "
    "(CI installs it: .ci/run)",
)
pytestmark = needs_bwrap


def sandbox_for(config: SandboxConfig) -> Sandbox:
    said: list[str] = []
    sandbox = Sandbox(config, said.append)
    assert sandbox.active, said
    return sandbox


async def run(config: SandboxConfig, command: str, carried: list[str] | None = None) -> str:
    """Run ``command`` with bash in the sandbox ``config`` describes; what the model reads.

    The hosts its proxy reached are added to ``carried``.
    """
    bash = BashTool(config.workspace)
    sandbox = sandbox_for(config)
    tool = bash if SANDBOX_OFF else SandboxedBashTool(bash, sandbox)
    try:
        output = await tool.call(BashArguments(command=command))
    finally:
        if carried is not None and sandbox.proxy is not None:
            carried += sandbox.proxy.carried
        await sandbox.close()
    return output.content


def loopback_only(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``scenario`` in a thread that has a network namespace of its own, with ``lo`` up.

    The thread's sockets, and the processes it starts, live in that namespace: only loopback.
    """
    result: dict[str, Any] = {}

    def in_namespace() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
            subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
            result["value"] = asyncio.run(scenario())
        except BaseException as error:  # the test's own thread re-raises it
            result["error"] = error

    thread = threading.Thread(target=in_namespace)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


async def web_server() -> tuple[asyncio.AbstractServer, int]:
    """A loopback server answering every request with ``the secret page``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\nConnection: close\r\n\r\n")
        writer.write(b"the secret page\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.fixture
def marker() -> Iterator[str]:
    yield from unique_marker()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


async def test_sandbox_attack_a_write_outside_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    private = f"claw-sandbox-{os.getpid()}-{id(workspace)}"

    said = await run(
        SandboxConfig(workspace),
        f"echo in > inside.txt; echo out > {outside}; "
        f"echo tmp > /tmp/{private}; cat /tmp/{private}",
    )

    assert not outside.exists()
    assert (workspace / "inside.txt").read_text() == "in\n"  # the workspace stays writable
    assert said.splitlines()[-2] == "tmp"  # /tmp is writable: its own, gone with the command
    assert not Path("/tmp", private).exists()


async def test_sandbox_allow_write_opens_one_more_path(workspace: Path, tmp_path: Path) -> None:
    cache, other = tmp_path / "cache", tmp_path / "other"
    cache.mkdir()
    other.mkdir()

    said = await run(
        SandboxConfig(workspace, writable=(cache,)), f"touch {cache}/ok; touch {other}/no"
    )

    assert (cache / "ok").exists()
    assert not (other / "no").exists()
    assert "exit code: 1" in said  # touch said it could not


async def test_sandbox_attack_reading_a_masked_file_gets_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n")
    (workspace / ".env").write_text("API_TOKEN=sk-live\n")
    keys = tmp_path / "keys.txt"
    keys.write_text("DENIED\n")
    config = SandboxConfig(workspace, masked=(ssh, workspace / ".env", keys))

    said = await run(
        config, f"cat {ssh}/id_ed25519; echo listed: $(ls -A {ssh}); cat .env; cat {keys}; echo end"
    )

    for secret in ("PRIVATE KEY", "listed: id_ed25519", "sk-live", "DENIED"):
        assert secret not in said
    assert said.endswith("end\nexit code: 0")
    assert (workspace / ".env").read_text() == "API_TOKEN=sk-live\n"  # masked, not harmed


async def test_sandbox_attack_a_setsid_survivor_ends_with_the_command(
    workspace: Path, marker: str
) -> None:
    # The survivor leaves the command's session and waits for a file "go" that nobody writes
    # until the test is done; the marker in its command line is how the test finds it.
    survivor = f"setsid bash -c 'until [ -e go ]; do sleep 0.01; done' {marker}"

    said = await run(SandboxConfig(workspace), f"{survivor} </dev/null >/dev/null 2>&1 & echo ok")

    left = marked(marker)
    (workspace / "go").write_text("")  # an escaped survivor leaves by itself now
    assert said == "ok\nexit code: 0"
    assert left == []  # nothing of the command is left once the call has returned


@pytest.mark.skipif(
    not __import__("claw.sandbox", fromlist=["x"]).has_process_limit(),
    reason="this kernel has no pid_max per PID namespace (Linux 6.14 or later): no limit",
)
async def test_sandbox_attack_a_fork_bomb_is_bounded(workspace: Path) -> None:
    # Each round forks one more process that stays (blocked opening a fifo nobody writes:
    # a fork without an exec, cheap); dash stops at the first fork that fails ("Cannot
    # fork"). The count goes to the workspace, which outlives the command.
    bomb = (
        "mkfifo wait; i=0; "
        "while [ $i -lt 1000 ]; do read x < wait & i=$((i+1)); echo $i > started; done"
    )

    said = await run(SandboxConfig(workspace), f"sh -c '{bomb}'")

    started = int((workspace / "started").read_text())
    assert 100 < started < PROCESS_LIMIT  # it ran, and hit the limit long before 1000
    assert "Cannot fork" in said


def test_sandbox_attack_a_loopback_server_is_out_of_reach_without_domains(
    workspace: Path,
) -> None:
    async def scenario() -> str:
        server, port = await web_server()
        try:
            return await run(SandboxConfig(workspace), f"curl -sS http://127.0.0.1:{port}/")
        finally:
            server.close()

    said = loopback_only(scenario)

    assert "the secret page" not in said
    assert "exit code: 7" in said  # curl: could not connect


def test_sandbox_attack_a_host_not_allowed_is_refused_by_the_proxy(workspace: Path) -> None:
    async def scenario() -> list[str]:
        server, port = await web_server()
        config = SandboxConfig(workspace, domains=("localhost",))
        url = f"127.0.0.1:{port}/"
        command = (
            f"curl -sS http://{url}; echo ---; curl -sS --noproxy '*' http://{url}; "
            f"echo exit code: $?; echo ---; curl -sS -p https://{url}"
        )
        try:
            return (await run(config, command)).split("---\n")
        finally:
            server.close()

    plain, direct, tunnel = loopback_only(scenario)

    assert plain.startswith("claw sandbox: 127.0.0.1 is not in sandbox.network.allowedDomains")
    assert "the secret page" not in direct and "exit code: 7" in direct  # no way around it
    assert "403" in tunnel and "the secret page" not in tunnel


def test_sandbox_an_allowed_host_is_reached_through_the_proxy(workspace: Path) -> None:
    carried: list[str] = []

    async def scenario() -> str:
        server, port = await web_server()
        config = SandboxConfig(workspace, domains=("localhost",))
        url = f"http://localhost:{port}/"
        try:
            return await run(config, f"curl -sS {url} && curl -sS -p {url}", carried)
        finally:
            server.close()

    said = loopback_only(scenario)

    assert carried == ["localhost", "localhost"]  # through claw's proxy, the only way out
    assert said == "the secret page\nthe secret page\nexit code: 0"  # plain, then tunnelled


async def test_sandbox_hook_commands_run_in_the_sandbox(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "hooked.txt"
    sandbox = sandbox_for(SandboxConfig(workspace))
    hooks = Hooks(workspace)
    if not SANDBOX_OFF:
        hooks.sandbox = sandbox
    hooks.add("SessionStart", CommandHook(f"echo in > hook-in.txt; echo out > {outside}"))

    try:
        await hooks.session_start()
    finally:
        await sandbox.close()

    assert (workspace / "hook-in.txt").read_text() == "in\n"
    assert not outside.exists()
