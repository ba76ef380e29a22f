"""The network guard: tests talk only to servers they start on the loopback interface.

The guard wraps the socket functions that open connections or resolve names. A call aimed
anywhere outside 127.0.0.0/8 and ::1 raises ``NetworkBlocked`` and is remembered, so the pytest
plugin can fail the test even if the test (or the code under test) swallowed the error. Live
tests marked ``allow_network`` lift the guard for themselves.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any


class NetworkBlocked(RuntimeError):
    """A test tried to reach an address outside 127.0.0.0/8 and ::1."""


def _is_local_host(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    if host.lower() in ("localhost", "localhost.localdomain", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _is_local_address(address: object) -> bool:
    if isinstance(address, str | bytes):  # a Unix socket path
        return True
    if isinstance(address, tuple) and address:
        return _is_local_host(address[0])
    return False


class NetworkGuard:
    """Wraps the socket functions that open connections; see ``NetworkBlocked``.

    ``allowed`` lifts the guard; ``attempts`` lists what was refused since it was last cleared.
    """

    def __init__(self) -> None:
        self.allowed = False
        self.attempts: list[str] = []
        self._originals: dict[str, Callable[..., Any]] = {}

    def _refuse(self, what: str) -> NetworkBlocked:
        self.attempts.append(what)
        return NetworkBlocked(
            f"a test tried to reach {what}; tests talk only to servers they start on 127.0.0.1 "
            "(live tests are marked allow_network and run only when you opt in)"
        )

    def install(self) -> None:
        """Wrap the socket functions (once)."""
        if self._originals:
            return
        guard = self
        originals = self._originals
        originals["connect"] = socket.socket.connect
        originals["connect_ex"] = socket.socket.connect_ex
        originals["sendto"] = socket.socket.sendto
        originals["getaddrinfo"] = socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            if not guard.allowed and not _is_local_address(address):
                raise guard._refuse(repr(address))
            originals["connect"](sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if not guard.allowed and not _is_local_address(address):
                raise guard._refuse(repr(address))
            result: int = originals["connect_ex"](sock, address)
            return result

        def sendto(sock: socket.socket, data: Any, *args: Any) -> int:
            address = args[-1]
            if not guard.allowed and not _is_local_address(address):
                raise guard._refuse(repr(address))
            sent: int = originals["sendto"](sock, data, *args)
            return sent

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not guard.allowed and not _is_local_host(host):
                raise guard._refuse(f"host {host!r}")
            return originals["getaddrinfo"](host, *args, **kwargs)

        socket.socket.connect = connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
        socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
        socket.getaddrinfo = getaddrinfo

    def uninstall(self) -> None:
        """Put the real socket functions back."""
        if not self._originals:
            return
        socket.socket.connect = self._originals["connect"]  # type: ignore[method-assign]
        socket.socket.connect_ex = self._originals["connect_ex"]  # type: ignore[method-assign]
        socket.socket.sendto = self._originals["sendto"]  # type: ignore[method-assign]
        socket.getaddrinfo = self._originals["getaddrinfo"]
        self._originals.clear()


guard = NetworkGuard()
"""The one guard of this process."""
