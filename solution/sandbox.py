"""A sandbox for the shell: bash and hook commands run under bubblewrap, checked by the kernel.

Every guard of chapters 13 to 16 is a check in claw's own process: it reads the command before
it runs and guesses what it will do. Here the operating system holds the line while it runs.
With ``sandbox.enabled`` in the settings, each command runs as::

    bash -c 'exec unshare --pid --fork --kill-child sh -c LIMIT bwrap WORDS -- bash -c COMMAND'

``unshare`` makes a PID namespace whose ``pid_max`` is ``PROCESS_LIMIT`` (the process limit: a
fork bomb stops there); ``bwrap`` then builds the sandbox, the words of ``bwrap_words``:

* the whole system read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``;
* a private ``/tmp`` (a tmpfs), the workspace and ``sandbox.filesystem.allowWrite`` writable;
* the secrets of ``SECRET_PATHS``, the workspace's ``.env`` files and ``denyRead`` masked:
  an empty folder over a folder, ``/dev/null`` over a file;
* a new PID namespace, killed with claw (``--die-with-parent``): when the command ends,
  every process it started ends too, one that called ``setsid`` included;
* a network namespace of its own: no network at all, unless ``sandbox.network.allowedDomains``
  lists hosts. Then claw runs a ``Proxy`` on a unix socket, bound into the sandbox, and a tiny
  relay (``RELAY``) inside listens on ``127.0.0.1:PROXY_PORT`` and carries each connection to
  it; ``HTTP_PROXY`` and its three spellings point there. The proxy reads the first request of
  each connection (``CONNECT host:port``, or an absolute URL) and reaches the host only if it
  is allowed: otherwise the answer is a 403 that names the host and the setting.

Where bwrap is missing or cannot make its namespaces, claw says so once and runs commands as
before, asked about by the permission rules: never silently unsandboxed.

What this does not defend against: a command reads everything the user can read that is not
masked; an allowed host is reached with whatever the command sends it (data can leave through
it); the proxy checks the name asked for, not what a CONNECT tunnel carries; programs that
ignore ``HTTP_PROXY`` have no network; processes of the sandbox share the machine's CPU and
memory. Files claw's own tools (read, write, edit) touch are chapter 14's business, not this.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .permissions import Approval, Approver, Decision, Permissions, domain_matches
from .tools.bash import BashTool

if TYPE_CHECKING:
    from .settings import SandboxSettings
    from .types import ToolCall, ToolSet

BWRAP_ENV = "CLAW_BWRAP"
"""An environment variable naming the bwrap program to use (default: ``bwrap`` on ``PATH``)."""

PROCESS_LIMIT = 400
"""``pid_max`` of the sandbox's PID namespace: at most this many processes at once."""

LIMIT_KERNEL = (6, 14)
"""The first Linux with a ``pid_max`` per PID namespace. On older kernels writing it would
change the whole machine's, so there is no process limit there (and claw says so)."""

PROXY_PORT = 3128
"""The port the relay listens on inside the sandbox (the sandbox's own loopback)."""

PROXY_SOCKET = "/tmp/.claw-proxy.sock"
"""Where the proxy's unix socket appears inside the sandbox (in its private ``/tmp``)."""

SECRET_PATHS = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc", "~/.docker/config.json", "~/.claw")
"""Files and folders masked in every sandbox: keys, cloud credentials, claw's own folder."""

HEAD_LIMIT = 65536
"""The most bytes the proxy reads of a request's head before it gives up on it."""

UNAVAILABLE = (
    "claw: sandbox: not available ({problem}); bash and hook commands run without it, "
    "and each is asked about as without a sandbox"
)
"""What claw says, once, when the settings enable the sandbox and it cannot run."""

NO_LIMIT = (
    "claw: sandbox: no process limit on this kernel ({release}; it needs Linux 6.14 or later)"
)
"""What claw says, once, when the sandbox runs without its process limit."""


# --8<-- [start:config-type]
@dataclass(frozen=True)
class SandboxConfig:
    """What one session's sandbox allows: resolved, absolute paths and host patterns."""

    workspace: Path
    """The project: writable, and the commands' working folder."""
    writable: tuple[Path, ...] = ()
    """More folders or files the commands may write (``sandbox.filesystem.allowWrite``)."""
    masked: tuple[Path, ...] = ()
    """Files and folders the commands may not read: secrets, ``.env`` files, ``denyRead``."""
    domains: tuple[str, ...] = ()
    """Host patterns the proxy lets through (``sandbox.network.allowedDomains``); none: no
    network at all."""
    auto_allow: bool = True
    """Whether a sandboxed bash call runs without a question when no rule asks about it."""


def resolve(path: str, workspace: Path, home: Path) -> Path:
    """``path`` from a settings file, made absolute.

    ``~`` is ``home``; a relative path is in ``workspace``.
    """
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return workspace / path


# --8<-- [end:config-type]


def sandbox_config(settings: SandboxSettings, workspace: Path, home: Path) -> SandboxConfig:
    """The sandbox ``settings`` (merged across chapter 17's layers) describe for ``workspace``.

    ``writable`` is each ``allowWrite`` path; ``masked`` is each of ``SECRET_PATHS``, the
    workspace's ``.env`` and ``.env.*`` files, then each ``denyRead`` path, in that order, no
    path twice; ``domains`` is ``allowedDomains`` as given. Paths go through ``resolve``.
    """
    # region ch28: resolve allowWrite; masked = secrets, the workspace's .env files, denyRead
    # more: workspace.glob(".env*") (keep .env and names starting ".env."); dict.fromkeys dedups
    writable = tuple(resolve(path, workspace, home) for path in settings.filesystem.allow_write)
    envs = sorted(
        path for path in workspace.glob(".env*") if path.name == ".env" or
        path.name.startswith(".env.")
    )  # fmt: skip
    masked = [resolve(path, workspace, home) for path in SECRET_PATHS]
    masked += envs
    masked += [resolve(path, workspace, home) for path in settings.filesystem.deny_read]
    return SandboxConfig(
        workspace,
        writable,
        tuple(dict.fromkeys(masked)),
        tuple(settings.network.allowed_domains),
        settings.auto_allow,
    )
    # endregion




def bwrap_words(config: SandboxConfig, proxy: Path | None = None) -> list[str]:
    """Bwrap's options for ``config``, in the order bwrap must apply them (before ``--``).

    ``--ro-bind / /``, ``--dev /dev``, ``--proc /proc``, ``--tmpfs /tmp``; then ``--bind P P``
    for the workspace and each writable path that exists; then each masked path that exists:
    ``--tmpfs P`` over a folder, ``--ro-bind /dev/null P`` over a file (after the binds, so a
    ``.env`` in the workspace is hidden too); then ``--unshare-pid``, ``--unshare-net``,
    ``--unshare-ipc``, ``--unshare-uts``, ``--die-with-parent``, ``--new-session`` and
    ``--chdir`` the workspace. With a ``proxy`` socket: ``--bind proxy PROXY_SOCKET`` and
    ``--setenv`` for ``HTTP_PROXY``, ``HTTPS_PROXY``, ``http_proxy`` and ``https_proxy``, each
    ``http://127.0.0.1:PROXY_PORT``.
    """
    # region ch28: system ro, /dev /proc /tmp; binds; masks after them; namespaces; the proxy
    # more: str(path) for each word; path.is_dir() picks --tmpfs, else --ro-bind /dev/null
    words = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in (config.workspace, *config.writable):
        if path.exists():
            words += ["--bind", str(path), str(path)]
    for path in config.masked:
        if path.is_dir():
            words += ["--tmpfs", str(path)]
        elif path.exists():
            words += ["--ro-bind", "/dev/null", str(path)]
    words += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    words += ["--die-with-parent", "--new-session", "--chdir", str(config.workspace)]
    if proxy is not None:
        words += ["--bind", str(proxy), PROXY_SOCKET]
        url = f"http://127.0.0.1:{PROXY_PORT}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            words += ["--setenv", name, url]
    return words
    # endregion




# --8<-- [start:relay]
RELAY = """\
import os, socket, sys, threading
path, port = sys.argv[1], int(sys.argv[2])
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork():
    os.execvp(sys.argv[3], sys.argv[3:])
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
def pipe(source, target):
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
while True:
    client, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        continue
    for ends in ((client, upstream), (upstream, client)):
        threading.Thread(target=pipe, args=ends, daemon=True).start()
"""
"""The relay started inside the sandbox: it listens on ``127.0.0.1:PORT`` before the command
starts, then the first process becomes the command (``execvp``) while its fork carries each
connection to the proxy's unix socket. It dies with the sandbox's PID namespace."""

RELAY_PYTHON = os.path.realpath(sys.executable)
"""The Python that runs the relay: the interpreter itself, not a virtual environment's link to
it, which may live under ``/tmp`` (a clone there, say), where the sandbox's private ``/tmp``
hides it. ``-I -S`` keeps the relay from needing anything of the environment."""
# --8<-- [end:relay]


# --8<-- [start:limit]
def limit_words() -> list[str]:
    """The words that start a PID namespace with ``PROCESS_LIMIT`` as its ``pid_max``.

    ``unshare`` (as root; otherwise in a user namespace of its own, mapped to root) forks a
    ``sh`` that writes the limit and ``exec`` runs the rest of the words. On a kernel older than
    ``LIMIT_KERNEL``, no limit is written (it would be the whole machine's).
    """
    words = ["unshare", "--pid", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        words += ["--user", "--map-root-user"]
    script = 'exec "$@"'
    if has_process_limit():
        script = f"echo {PROCESS_LIMIT} > /proc/sys/kernel/pid_max && {script}"
    return [*words, "sh", "-c", script, "limit"]


def has_process_limit(release: str | None = None) -> bool:
    """Whether the kernel (``release``, default this one's) has a ``pid_max`` per namespace."""
    found = re.match(r"(\d+)\.(\d+)", release or os.uname().release)
    numbers = (int(found[1]), int(found[2])) if found else (0, 0)
    return numbers >= LIMIT_KERNEL


# --8<-- [end:limit]




def sandboxed_argv(
    program: str, config: SandboxConfig, command: Sequence[str], proxy: Path | None = None
) -> list[str]:
    """The whole command line that runs ``command`` (a list of words) in the sandbox.

    ``limit_words()``, then ``program`` (bwrap) with ``bwrap_words(config, proxy)``, ``--``,
    and the command; with a ``proxy``, the command is started through ``RELAY``
    (``RELAY_PYTHON -I -S -c RELAY PROXY_SOCKET PROXY_PORT`` and the command's words).
    """
    # region ch28: limit words, then bwrap and its words, "--", the relay (with a proxy), command
    # more: [*limit_words(), program, *bwrap_words(...), "--", ...]; str(PROXY_PORT)
    inner = list(command)
    if proxy is not None:
        inner = [RELAY_PYTHON, "-I", "-S", "-c", RELAY, PROXY_SOCKET, str(PROXY_PORT), *inner]
    return [*limit_words(), program, *bwrap_words(config, proxy), "--", *inner]
    # endregion




# --8<-- [start:request]
@dataclass(frozen=True)
class Request:
    """The first line of a request to the proxy: where it goes and what to send there first."""

    host: str
    port: int
    tunnel: bool
    """``CONNECT``: answer ``200`` and carry bytes both ways; else forward ``first``."""
    first: bytes = b""
    """The request line to send the host (an absolute URL turned into a path), with CRLF."""


class BadRequest(ValueError):
    """A request line the proxy does not understand: the answer is ``400``."""


# --8<-- [end:request]


# --8<-- [start:proxy-helpers]
def parse_request(line: bytes) -> Request:
    r"""Read a proxy's request line: ``CONNECT host:port HTTP/1.1``, or an absolute URL.

    The absolute form is ``GET http://host[:port]/path HTTP/1.1``. The host is lower-cased; a
    plain HTTP port defaults to 80; an IPv6 host comes in brackets (``[::1]:443``) and
    without them in ``host``. The absolute URL becomes its path (``/`` if none, the query
    kept): ``GET /p HTTP/1.1\r\n``. Anything else, an ``https://`` URL without CONNECT
    included, raises ``BadRequest`` saying what was wrong.
    """
    # region ch28: split in three; CONNECT takes host:port; else http://host[:port]/path
    # more: str.rpartition(":") splits the port; "http://" prefix; partition("/") for the path
    parts = line.decode("latin-1").strip().split(" ")
    if len(parts) != 3:
        raise BadRequest(f"not a request line: {line[:80]!r}")
    method, target, version = parts
    if method.upper() == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise BadRequest(f"CONNECT needs host:port, not {target!r}")
        return Request(host.strip("[]").lower(), int(port), tunnel=True)
    if not target.lower().startswith("http://"):
        raise BadRequest(f"the proxy takes CONNECT or an http:// URL, not {target!r}")
    authority, slash, path = target[len("http://") :].partition("/")
    host, port = authority, "80"
    if authority.rpartition(":")[2].isdigit():  # "[::1]" ends in "1]": no port
        host, _, port = authority.rpartition(":")
    if not host:
        raise BadRequest(f"no host in {target!r}")
    first = f"{method} {slash or '/'}{path} {version}\r\n".encode("latin-1")
    return Request(host.strip("[]").lower(), int(port), tunnel=False, first=first)
    # endregion


def host_allowed(host: str, domains: Iterable[str]) -> bool:
    """Whether ``host`` matches one of ``domains`` (chapter 13's ``domain_matches`` patterns)."""
    # region ch28: any pattern of domains that domain_matches the host
    # more: any(domain_matches(pattern, host) for pattern in domains)
    return any(domain_matches(pattern, host) for pattern in domains)
    # endregion


def refusal(host: str) -> bytes:
    """The proxy's whole answer to a request for a host that is not allowed: a ``403``.

    Its body, one line: ``claw sandbox: HOST is not in sandbox.network.allowedDomains``;
    ``Content-Type: text/plain``, its ``Content-Length``, ``Connection: close``.
    """
    # region ch28: the body line; a status line and three headers, CRLF, a blank line, the body
    # more: len(body) of the encoded body; "\r\n".join(lines) + "\r\n\r\n", then the body
    body = f"claw sandbox: {host} is not in sandbox.network.allowedDomains\n".encode()
    head = (
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body
    # endregion


# --8<-- [end:proxy-helpers]


async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until the end, then close ``writer``'s sending side."""
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()




class Proxy:
    """claw's side of the sandbox's network: a proxy on a unix socket that checks each host."""

    def __init__(self, domains: Sequence[str], socket_path: Path) -> None:
        """A proxy for ``domains`` that will listen at ``socket_path`` once ``start`` ran."""
        self.domains = tuple(domains)
        self.socket_path = socket_path
        self.server: asyncio.AbstractServer | None = None
        self.refused: list[str] = []
        """Every host refused so far, in order."""
        self.carried: list[str] = []
        """Every host reached so far, in order."""

    async def start(self) -> None:
        """Listen on the unix socket."""
        self.server = await asyncio.start_unix_server(self.handle, path=str(self.socket_path))

    async def close(self) -> None:
        """Stop listening (open connections end with their sandbox)."""
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection: read the request's first line, check the host, then carry.

        A bad line gets ``400``; a host not allowed gets ``refusal(host)`` (and is added to
        ``refused``); a host that cannot be reached gets ``502``. A ``CONNECT`` gets
        ``HTTP/1.1 200 Connection Established`` and then carries bytes both ways; a plain
        request is sent on with ``Request.first`` as its first line, the rest as it came. A
        host reached is added to ``carried``.
        """
        # region ch28: readline; parse_request; host_allowed or refusal; open_connection; carry
        # more: asyncio.gather(carry(reader, up_w), carry(up_r, writer)); close in finally
        try:
            line = await reader.readline()
            try:
                request = parse_request(line)
            except BadRequest as error:
                writer.write(f"HTTP/1.1 400 Bad Request\r\n\r\n{error}\n".encode())
                return
            if not host_allowed(request.host, self.domains):
                self.refused.append(request.host)
                writer.write(refusal(request.host))
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(request.host, request.port)
            except OSError as error:
                writer.write(f"HTTP/1.1 502 Bad Gateway\r\n\r\n{error}\n".encode())
                return
            self.carried.append(request.host)
            if request.tunnel:
                while (await reader.readline()).strip():  # the CONNECT's own headers
                    pass
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                up_writer.write(request.first)
            try:
                await asyncio.gather(carry(reader, up_writer), carry(up_reader, writer))
            finally:
                up_writer.close()
        finally:
            with contextlib.suppress(OSError):
                await writer.drain()
            writer.close()
        # endregion




# --8<-- [start:probe]
def bwrap_program() -> str:
    """The bwrap to run: ``$CLAW_BWRAP`` if set, else ``bwrap`` on the ``PATH``."""
    return os.environ.get(BWRAP_ENV) or "bwrap"


@functools.lru_cache(maxsize=8)
def probe(program: str) -> str | None:
    """Why ``program`` cannot sandbox a command here, or ``None`` if it can.

    A program that is not there is said so; otherwise ``true`` runs in the whole chain once
    (``sandboxed_argv``). The answer is kept for the life of the process, so a session pays
    for one probe.
    """
    if shutil.which(program) is None:
        return f"{program} was not found: install bubblewrap"
    config = SandboxConfig(Path("/"))
    try:
        done = subprocess.run(
            sandboxed_argv(program, config, ["true"]), capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{program} does not run: {error}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{program} cannot make its namespaces: {said[-1] if said else done.returncode}"
    return None


# --8<-- [end:probe]


class Sandbox:
    """One session's sandbox: its config, whether it can run, and its proxy while it runs."""

    def __init__(
        self, config: SandboxConfig, say: Callable[[str], None], program: str | None = None
    ) -> None:
        """The sandbox ``config`` describes; ``say`` tells the user (once) what is missing.

        The probe runs here: if bwrap cannot run, ``active`` is false and ``say`` is told
        ``UNAVAILABLE``; if the kernel has no per-namespace ``pid_max``, ``say`` is told
        ``NO_LIMIT``.
        """
        self.config = config
        self.program = program or bwrap_program()
        self.problem = probe(self.program)
        self.proxy: Proxy | None = None
        self.folder: tempfile.TemporaryDirectory[str] | None = None
        if self.problem is not None:
            say(UNAVAILABLE.format(problem=self.problem))
        elif not has_process_limit():
            say(NO_LIMIT.format(release=os.uname().release))

    @property
    def active(self) -> bool:
        """Whether commands really run in the sandbox."""
        return self.problem is None

    async def words(self, command: Sequence[str]) -> list[str]:
        """The command line that runs ``command`` sandboxed (unchanged when not ``active``).

        The first call with allowed domains starts the proxy, in a private temporary folder.
        """
        if not self.active:
            return list(command)
        socket_path = None
        if self.config.domains:
            if self.proxy is None:
                self.folder = tempfile.TemporaryDirectory(prefix="claw-proxy-")
                proxy = Proxy(self.config.domains, Path(self.folder.name) / "proxy.sock")
                await proxy.start()
                self.proxy = proxy
            socket_path = self.proxy.socket_path
        return sandboxed_argv(self.program, self.config, command, socket_path)

    async def shell_line(self, command: str) -> str:
        """A bash command line that runs ``bash -c command`` sandboxed (``exec`` of the argv)."""
        if not self.active:
            return command
        return "exec " + shlex.join(await self.words(["bash", "-c", command]))

    async def close(self) -> None:
        """Stop the proxy and remove its folder."""
        if self.proxy is not None:
            await self.proxy.close()
            self.proxy = None
        if self.folder is not None:
            self.folder.cleanup()
            self.folder = None




# --8<-- [start:wiring]
class SandboxedBashTool(BashTool):
    """Chapter 10's ``bash``, each command started in the session's sandbox."""

    def __init__(self, bash: BashTool, sandbox: Sandbox) -> None:
        """The same tool as ``bash`` (its folder, timeouts, caps), sandboxed by ``sandbox``."""
        super().__init__(
            bash.root,
            default_timeout=bash.default_timeout,
            max_timeout=bash.max_timeout,
            max_output_bytes=bash.max_output_bytes,
            grace=bash.grace,
            environ=bash.environ,
        )
        self.sandbox = sandbox

    async def start(self, command: str, output: int) -> asyncio.subprocess.Process:
        """Start ``command`` as chapter 10 does, inside the sandbox."""
        return await super().start(await self.sandbox.shell_line(command), output)


def with_sandbox(tools: ToolSet, sandbox: Sandbox) -> ToolSet:
    """``tools`` with its ``bash`` sandboxed (the same set when it has none)."""
    from .types import ToolSet

    bash = tools.get("bash")
    if not isinstance(bash, BashTool):
        return tools
    return ToolSet(SandboxedBashTool(bash, sandbox) if tool is bash else tool for tool in tools)


# --8<-- [end:wiring]


def auto_allowing(permissions: Permissions, sandbox: Sandbox) -> None:
    """Let sandboxed ``bash`` calls run without a question, as ``autoAllowBashIfSandboxed``.

    Only while the sandbox is ``active`` and its config says ``auto_allow``; only a call the
    mode asks about with no rule behind it: a ``deny`` rule still refuses, an ``ask`` rule
    still asks, plan and ``dontAsk`` modes still refuse.
    """
    if not (sandbox.active and sandbox.config.auto_allow):
        return
    asked: Approver | None = permissions.approve

    async def approve(call: ToolCall, why: str) -> Approval:
        # region ch28: a bash call whose ASK verdict has no rule: ONCE; else the real approver
        # more: permissions.decide(call).rule is None; no approver: Approval.DENY
        verdict = permissions.decide(call)
        if call.name == "bash" and verdict.decision is Decision.ASK and verdict.rule is None:
            return Approval.ONCE
        if asked is None:
            return Approval.DENY
        return await asked(call, why)
        # endregion

    permissions.approve = approve


