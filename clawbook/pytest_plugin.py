"""The pytest plugin behind Clawbook's one shared test suite.

It does four things:

* imports the implementation chosen by ``CLAW_IMPL`` as ``claw`` and names it in the header;
* reports a test that ends in a stub's ``Todo`` as *todo*, with the chapter and the hint, so a
  run with only passing and todo tests exits 0 while a real failure stays a failure;
* refuses, loudly, any connection to an address outside the loopback range;
* writes every result to a JSON file when ``CLAWBOOK_REPORT`` names one, for ``clawbook``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from . import impl
from .chapters import load as load_curriculum

REPORT_ENV = "CLAWBOOK_REPORT"
TODO_KEY = "clawbook_todo"


class NetworkBlocked(RuntimeError):
    """A test tried to reach an address outside 127.0.0.0/8 and ::1."""


# ---------------------------------------------------------------- the implementation under test


def pytest_configure(config: pytest.Config) -> None:
    """Select the implementation before any test module imports ``claw``."""
    try:
        package = impl.use()
    except impl.ImplementationError as error:
        raise pytest.UsageError(str(error)) from error
    config.stash[_PACKAGE] = impl.describe(package)
    _guard.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put the real socket functions back."""
    _guard.uninstall()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say which package the tests import as ``claw``."""
    return [f"claw implementation: {config.stash[_PACKAGE]}  (set CLAW_IMPL to change)"]


_PACKAGE = pytest.StashKey[str]()


# ---------------------------------------------------------------- todo reporting


def find_todo(error: BaseException | None) -> BaseException | None:
    """The ``Todo`` behind an exception: itself, a cause or context, or a member of a group."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, NotImplementedError) and type(current).__name__ == "Todo":
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend([current.__cause__, current.__context__])
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Turn a failure caused by a stub into a todo report."""
    report = yield
    if report.failed and call.excinfo is not None:
        todo = find_todo(call.excinfo.value)
        if todo is not None:
            chapter = str(getattr(todo, "chapter", "?"))
            hint = str(getattr(todo, "hint", ""))
            path, line, _ = item.location
            report.outcome = "skipped"
            report.longrepr = (path, (line or 0) + 1, f"todo {chapter}: {hint}")
            report.user_properties.append((TODO_KEY, {"chapter": chapter, "hint": hint}))
    return report


def _todo_of(report: pytest.CollectReport | pytest.TestReport) -> dict[str, str] | None:
    for key, value in getattr(report, "user_properties", ()):
        if key == TODO_KEY:
            return dict(value)
    return None


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """Show todo tests as ``T`` / ``TODO`` and count them as ``todo`` in the summary line."""
    if _todo_of(report) is not None:
        return "todo", "T", ("TODO", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """After the run: one line per chapter with todo tests, with the hint of its first stub."""
    reports = terminalreporter.stats.get("todo", [])
    if not reports:
        return
    by_chapter: dict[str, tuple[int, str]] = {}
    for report in reports:
        todo = _todo_of(report) or {}
        chapter = todo.get("chapter", "?")
        count, hint = by_chapter.get(chapter, (0, todo.get("hint", "")))
        by_chapter[chapter] = (count + 1, hint)
    terminalreporter.section("todo: stubs still to write", sep="-", yellow=True)
    for chapter, (count, hint) in sorted(by_chapter.items()):
        plural = "s" if count != 1 else ""
        terminalreporter.line(f"{chapter}: {count} test{plural} waiting; first hint: {hint}")
    terminalreporter.line("see `clawbook status` for your progress, `clawbook hint <id>` for help")


# ---------------------------------------------------------------- results for clawbook


@dataclass
class TestResult:
    """The outcome of one test: what the plugin writes and ``clawbook`` reads back."""

    __test__ = False  # not a test class, despite its name

    nodeid: str
    file: str
    chapter: str | None
    outcome: str
    """``passed``, ``failed``, ``todo``, ``skipped`` or ``error`` (the module did not import)."""
    todo_chapter: str | None = None
    hint: str | None = None
    message: str | None = None
    line: int | None = None

    @property
    def name(self) -> str:
        """The test function's name (with parameters), or the file for a collection error."""
        return self.nodeid.split("::")[-1]


def _chapter_of(path: str) -> str | None:
    chapter = load_curriculum().chapter_for_test_file(path)
    return chapter.id if chapter else None


def _crash(report: pytest.CollectReport | pytest.TestReport) -> tuple[str | None, int | None]:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message), int(crash.lineno)
    if report.longrepr is not None:
        return str(report.longrepr).strip().splitlines()[-1], None
    return None, None


_results: dict[str, TestResult] = {}
"""This session's results by test id; written out at the end of the session."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start with no results."""
    _results.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Fold the setup, call and teardown reports of each test into one result."""
    path = report.location[0]
    result = _results.get(report.nodeid) or TestResult(
        nodeid=report.nodeid, file=path, chapter=_chapter_of(path), outcome="passed"
    )
    _results[report.nodeid] = result
    if result.outcome in ("failed", "todo"):
        return
    todo = _todo_of(report)
    if todo is not None:
        result.outcome = "todo"
        result.todo_chapter, result.hint = todo["chapter"], todo["hint"]
    elif report.failed:
        result.outcome = "failed"
        result.message, result.line = _crash(report)
    elif report.skipped and report.when in ("setup", "call"):
        result.outcome = "skipped"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Record a test module that cannot even be imported."""
    if not report.failed:
        return
    path = report.nodeid.split("::")[0]
    message, line = _crash(report)
    _results[report.nodeid] = TestResult(
        nodeid=report.nodeid,
        file=path,
        chapter=_chapter_of(path),
        outcome="error",
        message=message,
        line=line,
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the results file for ``clawbook``, if one was asked for."""
    target = os.environ.get(REPORT_ENV)
    if target:
        results = [asdict(r) for r in _results.values()]
        Path(target).write_text(json.dumps(results, indent=1), encoding="utf-8")


# ---------------------------------------------------------------- the network guard


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


class _NetworkGuard:
    """Wraps the socket functions that open connections; see ``NetworkBlocked``."""

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
        if not self._originals:
            return
        socket.socket.connect = self._originals["connect"]  # type: ignore[method-assign]
        socket.socket.connect_ex = self._originals["connect_ex"]  # type: ignore[method-assign]
        socket.socket.sendto = self._originals["sendto"]  # type: ignore[method-assign]
        socket.getaddrinfo = self._originals["getaddrinfo"]
        self._originals.clear()


_guard = _NetworkGuard()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a test that tried to reach the network, even if it swallowed the error."""
    _guard.allowed = item.get_closest_marker("allow_network") is not None
    _guard.attempts.clear()
    try:
        result = yield
    finally:
        _guard.allowed = False
    if _guard.attempts:
        raise NetworkBlocked(f"this test tried to reach the network: {', '.join(_guard.attempts)}")
    return result
