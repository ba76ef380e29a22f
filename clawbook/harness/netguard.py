"""The network guard: tests talk only to servers they start on the loopback interface.

A test that reached the internet would be slow, flaky, and could spend a learner's money, so
any attempt to reach beyond this machine raises ``NetworkBlocked`` and is remembered: the pytest
plugin fails the test even if the test (or the code under test) swallowed the error, and
whether the attempt came from the test itself or from a fixture's setup or teardown. Live tests
marked ``allow_network`` lift the guard for themselves.

**What counts as local.** A Unix socket path; a host of ``None`` or ``""``; ``localhost``; an
IP address literal in 127.0.0.0/8 or ``::1``. The *whole* string must be that address:
``127.0.0.1%x.example`` is no address at all, and a resolver would look it up as a name, so it
is refused. An IPv6 scope (``::1%lo``) must be a number or the name of one of this machine's
interfaces. Anything else, private ranges included, is refused.

**What is guarded, two ways.**

1. The socket functions are wrapped in Python, so a refused call is stopped before the C code
   runs, before any name is resolved: ``socket.socket.connect``, ``connect_ex``, ``sendto`` and
   ``sendmsg``, and ``socket.getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``,
   ``gethostbyaddr`` and ``getnameinfo``. ``socket.create_connection``, ``socket.getfqdn``,
   asyncio's ``create_connection`` and HTTP clients (httpx, urllib) all reach the network
   through these.
2. An audit hook (``sys.addaudithook``) sees the C-level events the socket module raises for
   every call, wrapped or not: ``socket.connect`` (``connect`` and ``connect_ex``),
   ``socket.sendto``, ``socket.sendmsg``, ``socket.getaddrinfo``, ``socket.gethostbyname``
   (both forms), ``socket.gethostbyaddr`` and ``socket.getnameinfo``. It catches code that
   bypasses the wrappers: ``_socket.socket`` used directly, a reference to ``getaddrinfo``
   taken before the guard was installed, C code calling the socket module's methods. Raising
   in the hook aborts the call. One gap remains there: for ``connect``, ``sendto`` and
   ``sendmsg`` CPython turns the address into a ``sockaddr`` *before* raising the event, so a
   host *name* given to a bypassed ``connect`` is resolved (a DNS query) before the hook can
   refuse it; the connection itself is still refused.

**What it cannot see.** Anything that does not go through Python's socket module: an extension
module calling the C library's ``connect()`` or ``getaddrinfo()`` itself (libcurl, gRPC's core,
a database driver), ``ctypes`` calls into libc, and subprocesses (``git``, ``curl``). Only the
operating system can stop those (a network namespace, a firewall); the project's tests use
none of them.

The guard is tested with recorders in place of the real functions, so a test of the guard
sends nothing even when the guard is wrong.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Callable
from typing import Any


class NetworkBlocked(RuntimeError):
    """A test tried to reach an address outside 127.0.0.0/8 and ::1."""


LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
"""Host names that mean this machine (resolved from the hosts file, never by DNS)."""


def _interfaces() -> set[str]:
    try:
        return {name for _, name in socket.if_nameindex()}
    except (OSError, AttributeError):  # no interfaces to list, or no if_nameindex here
        return set()


def is_local_host(host: object) -> bool:
    """Whether ``host``, as given to ``getaddrinfo`` or in an address, can only be this machine."""
    if host is None:
        return True
    if isinstance(host, bytes | bytearray):
        try:
            host = bytes(host).decode("ascii")
        except UnicodeDecodeError:
            return False
    if not isinstance(host, str):
        return False
    if host == "" or host.lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)  # the whole string, scope and all
    except ValueError:
        return False
    if not address.is_loopback:
        return False
    scope = getattr(address, "scope_id", None)
    return scope is None or scope.isdigit() or scope in _interfaces()


def is_local_address(address: object) -> bool:
    """Whether a socket address (a Unix path, or a tuple starting with a host) is local."""
    if isinstance(address, str | bytes | bytearray):  # a Unix socket path
        return True
    if isinstance(address, tuple) and address:
        return is_local_host(address[0])
    return False


# What each audited socket event's arguments say about where it goes.
_AUDITED: dict[str, Callable[[tuple[Any, ...]], tuple[bool, object]]] = {
    "socket.connect": lambda args: (is_local_address(args[1]), args[1]),
    "socket.sendto": lambda args: (is_local_address(args[1]), args[1]),
    "socket.sendmsg": lambda args: (args[1] is None or is_local_address(args[1]), args[1]),
    "socket.getaddrinfo": lambda args: (is_local_host(args[0]), f"host {args[0]!r}"),
    "socket.gethostbyname": lambda args: (is_local_host(args[0]), f"host {args[0]!r}"),
    "socket.gethostbyaddr": lambda args: (is_local_host(args[0]), f"host {args[0]!r}"),
    "socket.getnameinfo": lambda args: (is_local_address(args[0]), args[0]),
}

_installed: list[NetworkGuard] = []
"""The guards installed in this process; the audit hook asks each of them."""
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The process's audit hook: ask every installed guard about a socket event."""
    if event in _AUDITED:
        for guard in tuple(_installed):
            guard.audit(event, args)


class NetworkGuard:
    """Wraps the socket functions that reach other machines; see the module's docstring.

    ``allowed`` lifts the guard; ``attempts`` lists what was refused since it was last taken.
    """

    def __init__(self) -> None:
        self.allowed = False
        self.attempts: list[str] = []
        self._originals: dict[tuple[Any, str], Any] = {}

    def _refuse(self, what: object) -> NetworkBlocked:
        text = what if isinstance(what, str) else repr(what)
        self.attempts.append(text)
        return NetworkBlocked(
            f"a test tried to reach {text}; tests talk only to servers they start on 127.0.0.1 "
            "(live tests are marked allow_network and run only when you opt in)"
        )

    def take_attempts(self) -> list[str]:
        """The attempts refused so far, forgotten as they are handed over."""
        attempts, self.attempts = self.attempts, []
        return attempts

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """Refuse an audited socket event that leaves this machine (see ``_AUDITED``)."""
        check = _AUDITED.get(event)
        if check is None or self.allowed:
            return
        local, where = check(args)
        if not local:
            raise self._refuse(where)

    def _check_host(self, host: object) -> None:
        if not self.allowed and not is_local_host(host):
            raise self._refuse(f"host {host!r}")

    def _check_address(self, address: object) -> None:
        if not self.allowed and not is_local_address(address):
            raise self._refuse(address)

    def install(self) -> None:
        """Wrap the socket functions (once) and make sure the audit hook is in place."""
        global _hooked
        if self._originals:
            return
        real = self._originals
        for name in ("connect", "connect_ex", "sendto", "sendmsg"):
            real[socket.socket, name] = getattr(socket.socket, name)
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
            real[socket, name] = getattr(socket, name)
        real[socket, "getnameinfo"] = socket.getnameinfo
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard._check_address(address)
            real[socket.socket, "connect"](sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard._check_address(address)
            result: int = real[socket.socket, "connect_ex"](sock, address)
            return result

        def sendto(sock: socket.socket, data: Any, *args: Any) -> int:
            if args:  # sendto(data, address) or sendto(data, flags, address)
                guard._check_address(args[-1])
            sent: int = real[socket.socket, "sendto"](sock, data, *args)
            return sent

        def sendmsg(sock: socket.socket, buffers: Any, *args: Any, **kwargs: Any) -> int:
            address = args[2] if len(args) > 2 else kwargs.get("address")
            if address is not None:
                guard._check_address(address)
            sent: int = real[socket.socket, "sendmsg"](sock, buffers, *args, **kwargs)
            return sent

        def by_host(name: str) -> Callable[..., Any]:
            original = real[socket, name]

            def wrapper(host: Any, *args: Any, **kwargs: Any) -> Any:
                guard._check_host(host)
                return original(host, *args, **kwargs)

            wrapper.__name__ = wrapper.__qualname__ = name
            wrapper.__doc__ = original.__doc__
            return wrapper

        def getnameinfo(sockaddr: Any, flags: int) -> tuple[str, str]:
            guard._check_address(sockaddr)
            names: tuple[str, str] = real[socket, "getnameinfo"](sockaddr, flags)
            return names

        wrappers: dict[tuple[Any, str], Any] = {
            (socket.socket, "connect"): connect,
            (socket.socket, "connect_ex"): connect_ex,
            (socket.socket, "sendto"): sendto,
            (socket.socket, "sendmsg"): sendmsg,
            (socket, "getnameinfo"): getnameinfo,
        }
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
            wrappers[socket, name] = by_host(name)
        for (owner, name), wrapper in wrappers.items():
            setattr(owner, name, wrapper)
        _installed.append(self)
        if not _hooked:
            sys.addaudithook(_audit)  # for the life of the process: hooks cannot be removed
            _hooked = True

    def uninstall(self) -> None:
        """Put the socket functions back as they were before ``install``."""
        if not self._originals:
            return
        for (owner, name), original in self._originals.items():
            setattr(owner, name, original)
        self._originals.clear()
        if self in _installed:
            _installed.remove(self)


guard = NetworkGuard()
"""The one guard of this process."""
