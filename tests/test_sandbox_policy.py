"""ch28 · A sandbox for the shell: what the sandbox allows, and the proxy that checks each host.

Everything here runs in this process, without bubblewrap: the settings layers, the resolved
config, bwrap's words, the proxy's parsing and its answers (the proxy listens on a unix socket
in the test's folder and reaches a loopback server the test starts).
"""

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest

from claw.permissions import Approval, Permissions
from claw.sandbox import (
    PROXY_PORT,
    PROXY_SOCKET,
    RELAY,
    RELAY_PYTHON,
    BadRequest,
    Proxy,
    Request,
    SandboxConfig,
    auto_allowing,
    bwrap_words,
    host_allowed,
    limit_words,
    parse_request,
    refusal,
    sandbox_config,
    sandboxed_argv,
)
from claw.settings import load_settings
from claw.types import ToolCall, ToolOutput


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_sandbox_settings_merge_across_the_layers(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write_json(
        home / ".claw" / "settings.json",
        {"sandbox": {"enabled": True, "network": {"allowedDomains": ["pypi.org"]}}},
    )
    write_json(
        project / ".claw" / "settings.json",
        {
            "sandbox": {
                "network": {"allowedDomains": ["*.github.com"]},
                "filesystem": {"allowWrite": ["~/.cache/pip", "../shared"]},
            }
        },
    )
    write_json(
        project / ".claw" / "settings.local.json",
        {"sandbox": {"autoAllowBashIfSandboxed": False, "filesystem": {"denyRead": ["keys"]}}},
    )

    loaded = load_settings(project, home=home, environ={})
    config = sandbox_config(loaded.settings.sandbox, project, home)

    assert loaded.settings.sandbox.enabled  # the user's layer, not overridden
    assert config.domains == ("pypi.org", "*.github.com")  # lists join across layers
    assert config.writable == (home / ".cache/pip", project / "../shared")
    assert config.auto_allow is False  # the local layer wins
    assert config.masked[-1] == project / "keys"
    assert config.workspace == project


def test_sandbox_a_projects_file_cannot_turn_off_the_users_sandbox(tmp_path: Path) -> None:
    # A repository the user trusted (for its hooks, say) must not take away the sandbox those
    # very hooks run in: its "enabled": false is refused, with a warning naming the file.
    home, project = tmp_path / "home", tmp_path / "project"
    write_json(home / ".claw" / "settings.json", {"sandbox": {"enabled": True}})
    for name in ("settings.json", "settings.local.json"):
        write_json(project / ".claw" / name, {"sandbox": {"enabled": False}})

    loaded = load_settings(project, home=home, environ={})
    config = sandbox_config(loaded.settings.sandbox, project, home)

    assert config.workspace == project and loaded.settings.sandbox.enabled
    said = [w for w in loaded.warnings if "sandbox.enabled false" in w]
    assert [w.split(":")[0] for w in said] == [".claw/settings.json", ".claw/settings.local.json"]
    off = load_settings(project, home=home, environ={}, options={"sandbox.enabled": False})
    assert not off.settings.sandbox.enabled  # the command line is the user's own: it may


def test_sandbox_config_masks_the_secrets_the_env_files_and_deny_read(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    for name in (".env", ".env.local", ".envrc", "env", ".environment"):
        (project / name).write_text("TOKEN=x\n")
    loaded = load_settings(project, home=home, environ={})
    settings = loaded.settings.sandbox.model_copy(
        update={"filesystem": loaded.settings.sandbox.filesystem.model_copy(
            update={"deny_read": ["~/.ssh", "/srv/keys"]})}
    )  # fmt: skip

    config = sandbox_config(settings, project, home)

    assert config.masked == (
        home / ".ssh",
        home / ".aws",
        home / ".gnupg",
        home / ".netrc",
        home / ".docker/config.json",
        home / ".claw",
        project / ".env",
        project / ".env.local",
        Path("/srv/keys"),
    )  # the secrets, then the workspace's .env files, then denyRead; ~/.ssh only once
    assert config.domains == () and config.writable == () and config.auto_allow


def test_sandbox_bwrap_words_bind_then_mask_then_cut_off(tmp_path: Path) -> None:
    work, extra, ssh = tmp_path / "work", tmp_path / "extra", tmp_path / "ssh"
    for folder in (work, extra, ssh):
        folder.mkdir()
    (work / ".env").write_text("TOKEN=x\n")
    config = SandboxConfig(
        work,
        writable=(extra, tmp_path / "gone"),
        masked=(ssh, work / ".env", tmp_path / "nothing"),
    )

    words = bwrap_words(config)

    assert words == [
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(work), str(work), "--bind", str(extra), str(extra),
        "--tmpfs", str(ssh), "--ro-bind", "/dev/null", str(work / ".env"),
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--die-with-parent", "--new-session", "--chdir", str(work),
    ]  # fmt: skip


def test_sandbox_bwrap_words_bridge_the_proxy_in(tmp_path: Path) -> None:
    socket = tmp_path / "proxy.sock"

    words = bwrap_words(SandboxConfig(tmp_path, domains=("pypi.org",)), socket)

    url = f"http://127.0.0.1:{PROXY_PORT}"
    assert words[-15:] == [
        "--bind", str(socket), PROXY_SOCKET,
        "--setenv", "HTTP_PROXY", url, "--setenv", "HTTPS_PROXY", url,
        "--setenv", "http_proxy", url, "--setenv", "https_proxy", url,
    ]  # fmt: skip
    assert "--unshare-net" in words  # the proxy is the only way out


def test_sandbox_argv_puts_the_relay_with_the_interpreter_itself_before_the_command(
    tmp_path: Path,
) -> None:
    config, socket = SandboxConfig(tmp_path, domains=("pypi.org",)), tmp_path / "proxy.sock"
    command = ["git", "fetch"]

    plain = sandboxed_argv("bwrap", config, command)
    bridged = sandboxed_argv("bwrap", config, command, socket)

    start = len(limit_words())
    assert plain[:start] == limit_words() and plain[start] == "bwrap"
    assert plain[start + 1 :] == [*bwrap_words(config), "--", *command]
    relay = [RELAY_PYTHON, "-I", "-S", "-c", RELAY, PROXY_SOCKET, str(PROXY_PORT)]
    assert bridged[start + 1 :] == [*bwrap_words(config, socket), "--", *relay, *command]
    # Not sys.executable: a virtual environment's link may live under /tmp, which the
    # sandbox's own /tmp hides (CI clones under /tmp did).
    assert os.path.realpath(RELAY_PYTHON) == RELAY_PYTHON


@pytest.mark.parametrize(
    ("line", "request_"),
    [
        (b"CONNECT pypi.org:443 HTTP/1.1\r\n", Request("pypi.org", 443, tunnel=True)),
        (b"CONNECT [::1]:8443 HTTP/1.1\r\n", Request("::1", 8443, tunnel=True)),
        (
            b"CONNECT XN--BCHER-KVA.example:443 HTTP/1.1\r\n",
            Request("xn--bcher-kva.example", 443, tunnel=True),
        ),
        (
            b"GET http://X.Example.COM/simple/?q=1 HTTP/1.1\r\n",
            Request("x.example.com", 80, False, b"GET /simple/?q=1 HTTP/1.1\r\n"),
        ),
        (
            b"POST http://localhost:8080 HTTP/1.0\r\n",
            Request("localhost", 8080, False, b"POST / HTTP/1.0\r\n"),
        ),
        (
            b"GET http://[::1]:8080/x HTTP/1.1\r\n",
            Request("::1", 8080, False, b"GET /x HTTP/1.1\r\n"),
        ),
        (b"GET http://[::1]/ HTTP/1.1\r\n", Request("::1", 80, False, b"GET / HTTP/1.1\r\n")),
    ],
    ids=[
        "connect",
        "connect-ipv6",
        "connect-idna",
        "absolute-url",
        "default-path",
        "ipv6-port",
        "ipv6",
    ],
)
def test_sandbox_parse_request_reads_connect_and_absolute_urls(
    line: bytes, request_: Request
) -> None:
    assert parse_request(line) == request_


@pytest.mark.parametrize(
    "line",
    [
        b"GET /index.html HTTP/1.1\r\n",  # a path: not a proxy request
        b"GET https://pypi.org/ HTTP/1.1\r\n",  # https goes through CONNECT
        b"CONNECT pypi.org HTTP/1.1\r\n",  # no port
        b"\r\n",
        b"GET http:///x HTTP/1.1\r\n",  # no host
        b"CONNECT :443 HTTP/1.1\r\n",  # no host either
    ],
    ids=["a-path", "https-url", "no-port", "empty", "no-host", "connect-no-host"],
)
def test_sandbox_parse_request_refuses_what_it_cannot_read(line: bytes) -> None:
    with pytest.raises(BadRequest) as raised:
        parse_request(line)

    assert str(raised.value)  # the 400 answer says what was wrong


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("pypi.org", True),
        ("PyPI.org", True),
        ("files.pythonhosted.org", True),
        ("pythonhosted.org", False),  # *. is for subdomains only
        ("pypi.org.evil.com", False),
        ("evilpypi.org", False),
        ("127.0.0.1", False),
    ],
)
def test_sandbox_host_allowed_matches_the_patterns_and_nothing_else(
    host: str, allowed: bool
) -> None:
    assert host_allowed(host, ["pypi.org", "*.pythonhosted.org"]) is allowed


def test_sandbox_refusal_is_a_403_naming_the_host_and_the_setting() -> None:
    answer = refusal("evil.example")

    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 403 Forbidden"
    assert body == b"claw sandbox: evil.example is not in sandbox.network.allowedDomains\n"
    assert set(lines[1:]) == {
        "Content-Type: text/plain",
        f"Content-Length: {len(body)}",
        "Connection: close",
    }


async def origin(seen: list[bytes], address: str) -> tuple[asyncio.AbstractServer, int]:
    """A loopback server on ``address`` that records what it is sent and answers ``hello``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, address, 0)
    return server, server.sockets[0].getsockname()[1]


async def ask(proxy: Proxy, *lines: bytes) -> bytes:
    """Send ``lines`` to ``proxy.handle`` over a socket pair, then the end; its whole answer."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=theirs)
    answers, asking = await asyncio.open_connection(sock=ours)
    for line in lines:
        asking.write(line)
    asking.write_eof()
    await proxy.handle(reader, writer)
    answer = await answers.read()
    asking.close()
    return answer


async def test_sandbox_proxy_carries_allowed_requests_and_refuses_the_rest(
    tmp_path: Path,
) -> None:
    seen: list[bytes] = []
    server, port = await origin(seen, "127.0.0.2")
    closed, closed_port = await origin([], "127.0.0.2")
    closed.close()
    await closed.wait_closed()
    proxy = Proxy(["127.0.0.2"], tmp_path / "proxy.sock")
    try:
        plain = await ask(
            proxy, f"GET http://127.0.0.2:{port}/a?b HTTP/1.1\r\n".encode(),
            b"Host: localhost\r\n\r\n",
        )  # fmt: skip
        tunnel = await ask(
            proxy, f"CONNECT 127.0.0.2:{port} HTTP/1.1\r\n".encode(),
            b"Host: localhost\r\n\r\n", b"GET /t HTTP/1.1\r\nHost: x\r\n\r\n",
        )  # fmt: skip
        refused = await ask(proxy, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n".encode())
        bad = await ask(proxy, b"GET / HTTP/1.1\r\n\r\n")
        unreachable = await ask(proxy, f"CONNECT 127.0.0.2:{closed_port} HTTP/1.1\r\n\r\n".encode())
    finally:
        server.close()

    assert plain.startswith(b"HTTP/1.1 200 OK") and plain.endswith(b"hello\n")
    assert tunnel.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK")
    assert seen == [
        b"GET /a?b HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /t HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    assert refused == refusal("127.0.0.1")  # and the origin never heard of it
    assert proxy.refused == ["127.0.0.1"]
    assert bad.startswith(b"HTTP/1.1 400 Bad Request")
    assert unreachable.startswith(b"HTTP/1.1 502 Bad Gateway")
    assert proxy.carried == ["127.0.0.2", "127.0.0.2"]  # the unreachable one was not carried


class Active:
    """Just what ``auto_allowing`` looks at of a ``Sandbox``: one that runs, with auto-allow."""

    active = True
    config = SandboxConfig(Path("."))


async def test_sandbox_auto_allow_skips_only_the_modes_question(tmp_path: Path) -> None:
    asked: list[str] = []

    async def approver(call: ToolCall, why: str) -> Approval:
        asked.append(call.arguments.get("command") or call.name)
        return Approval.ONCE if "push" in why else Approval.DENY

    permissions = Permissions(
        tmp_path, ask=["Bash(git push *)"], deny=["Bash(rm *)"], approve=approver
    )
    auto_allowing(permissions, Active())  # type: ignore[arg-type]
    commands = ["make test", "git push origin", "rm -r build"]
    bash = [
        ToolCall(id=f"c{n}", name="bash", arguments={"command": command})
        for n, command in enumerate(commands)
    ]
    write = ToolCall(id="w", name="write", arguments={"path": "a.txt", "content": "x"})

    ran, pushed, removed = [await permissions.check(call) for call in bash]
    wrote = await permissions.check(write)

    assert ran == bash[0]  # the mode would have asked: the sandbox answers
    assert pushed == bash[1]  # an ask rule asks, and the user said yes
    assert isinstance(removed, ToolOutput) and removed.is_error  # a deny rule refuses
    assert isinstance(wrote, ToolOutput) and "the user refused it" in wrote.content
    assert asked == ["git push origin", "write"]  # nobody was asked about the others


async def test_sandbox_auto_allow_without_an_approver_still_refuses_the_rest(
    tmp_path: Path,
) -> None:
    permissions = Permissions(tmp_path, ask=["Bash(git push *)"])
    auto_allowing(permissions, Active())  # type: ignore[arg-type]

    ran = await permissions.check(ToolCall(id="a", name="bash", arguments={"command": "ls -l"}))
    pushed = await permissions.check(
        ToolCall(id="b", name="bash", arguments={"command": "git push"})
    )

    assert isinstance(ran, ToolCall)
    assert isinstance(pushed, ToolOutput) and pushed.is_error
