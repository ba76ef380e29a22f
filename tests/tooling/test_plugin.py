"""The pytest plugin: todo reporting, the implementation header, the network guard."""

import json

import pytest

from clawbook.harness.report import Outcome, ReportReader
from clawbook.learner import console

TODO_MODULE = """
class Todo(NotImplementedError):
    def __init__(self, chapter, hint):
        super().__init__(f"{chapter}: {hint}")
        self.chapter = chapter
        self.hint = hint
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    # When this suite itself runs under clawbook, its settings must not reach the inner runs.
    for variable in ("CLAW_IMPL_PATH", "CLAWBOOK_REPORT", "CLAWBOOK_CHAPTERS"):
        monkeypatch.delenv(variable, raising=False)
    pytester.makepyfile(
        conftest="",
        **{
            "starter/__init__": "",
            "starter/todo": TODO_MODULE,
            "starter/thing": (
                "from .todo import Todo\n"
                "def stub():\n    raise Todo('ch01', 'write stub()')\n"
                "def real():\n    return 2\n"
            ),
        },
    )
    pytester.syspathinsert()
    return pytester


def run(pytester, *args):
    return pytester.runpytest_subprocess(
        "-p", "clawbook.harness.pytest_plugin", "-p", "no:cacheprovider", *args
    )


def test_a_test_ending_in_todo_is_reported_as_todo_and_the_run_exits_0(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_thing="""
from claw.thing import real, stub
def test_demo_stub():
    assert stub() == 1
def test_demo_real():
    assert real() == 2
"""
    )
    result = run(suite)
    result.stdout.fnmatch_lines(
        ["*ch01: 1 test waiting; first hint: write stub()*", "*1 passed, 1 todo*"]
    )
    assert result.ret == 0


def test_a_real_failure_stays_a_failure(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_thing="""
from claw.thing import real
def test_demo_wrong():
    assert real() == 3
"""
    )
    result = run(suite)
    result.stdout.fnmatch_lines(["*1 failed*"])
    assert result.ret == 1


def test_a_todo_in_a_fixture_or_behind_another_error_is_still_todo(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_thing="""
import pytest
from claw.thing import stub

@pytest.fixture
def made():
    return stub()

def test_demo_fixture(made):
    pass

def test_demo_wrapped():
    try:
        stub()
    except NotImplementedError as error:
        raise RuntimeError("wrapped") from error
"""
    )
    result = run(suite)
    result.stdout.fnmatch_lines(["*2 todo*"])
    assert result.ret == 0


def test_the_header_names_the_package_and_its_path(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(test_demo_x="def test_demo_x():\n    pass\n")
    result = run(suite)
    result.stdout.fnmatch_lines([f"claw implementation: starter ({suite.path / 'starter'})*"])


def test_an_unknown_implementation_is_a_usage_error(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "finished")
    suite.makepyfile(test_demo_x="def test_demo_x():\n    pass\n")
    result = run(suite)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*CLAW_IMPL='finished' is not an implementation*"])


def test_claw_is_the_same_module_object_as_the_chosen_package(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_alias="""
import claw.thing
import starter.thing
def test_demo_alias():
    assert claw.thing is starter.thing
"""
    )
    run(suite).assert_outcomes(passed=1)


def test_a_connection_outside_loopback_fails_the_test_even_if_swallowed(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_net="""
import socket
def test_demo_outside():
    try:
        socket.create_connection(("203.0.113.7", 443), timeout=1)
    except Exception:
        pass  # swallowed: the guard must still fail the test

def test_demo_dns():
    socket.getaddrinfo("openrouter.ai", 443)
"""
    )
    result = run(suite)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*NetworkBlocked*203.0.113.7*"])
    result.stdout.fnmatch_lines(["*NetworkBlocked*openrouter.ai*"])


def test_loopback_connections_are_allowed(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_local="""
import socket
def test_demo_loopback():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port), timeout=1)
    client.close()
    server.close()
"""
    )
    run(suite).assert_outcomes(passed=1)


def test_a_todo_is_one_line_naming_the_stub_file_and_line(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_todo="from claw.thing import stub\ndef test_demo_stub():\n    stub()\n"
    )
    result = run(suite)
    result.stdout.fnmatch_lines(
        ["ch01: 1 test waiting; first hint: write stub()  (starter/thing.py:3)"]
    )
    assert "Traceback" not in result.stdout.str()
    assert "def test_demo_stub" not in result.stdout.str()  # no source listing for a todo


def test_a_property_test_that_reaches_a_stub_stops_at_once(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    calls = tmp_path / "calls"
    suite.makepyfile(
        test_demo_prop=f"""
from hypothesis import given, strategies as st
from claw.thing import stub

@given(st.integers())
def test_demo_property(n):
    with open({str(calls)!r}, "a") as f:
        f.write("x")
    stub()
"""
    )
    result = run(suite)
    result.stdout.fnmatch_lines(["*1 todo*"])
    assert calls.read_text() == "x"  # one example: no search for more, no shrinking


def test_a_property_test_with_a_real_bug_still_shrinks_to_a_small_example(suite, monkeypatch):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_prop="""
from hypothesis import given, strategies as st

@given(st.integers())
def test_demo_property(n):
    assert n < 1000
"""
    )
    result = run(suite)
    result.stdout.fnmatch_lines(["*n=1000*"])
    result.assert_outcomes(failed=1)


def test_the_results_file_is_written_as_the_run_goes_and_says_when_it_finished(
    suite, monkeypatch, tmp_path
):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv("CLAWBOOK_REPORT", str(report))
    suite.makepyfile(
        test_demo_x=(
            "from claw.thing import real, stub\n"
            "def test_demo_a():\n    assert real() == 2\n"
            "def test_demo_b():\n    stub()\n"
            "def test_demo_c():\n    assert real() == 3\n"
        )
    )
    run(suite)
    events = [json.loads(line)["event"] for line in report.read_text().splitlines()]
    assert events[0] == "configured"
    assert events[-1] == "finished"
    assert events.count("start") == 3
    assert events.count("result") == 4  # test_demo_c says its failure early, then finally
    reader = ReportReader(report)
    reader.poll()
    results = reader.report.results
    assert [r.outcome for r in results.values()] == [Outcome.PASSED, Outcome.TODO, Outcome.FAILED]
    failed = results["test_demo_x.py::test_demo_c"]
    assert failed.called_from is not None and failed.called_from.line == 7
    assert failed.where is None  # the failing line is the test's own, not the package's
    assert reader.report.finished


def test_a_skipped_or_expected_failure_keeps_its_reason(suite, monkeypatch, tmp_path):
    # `clawbook check` shows why a test did not pass: "(expected to fail: issue 38: ...)".
    monkeypatch.setenv("CLAW_IMPL", "starter")
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv("CLAWBOOK_REPORT", str(report))
    suite.makepyfile(
        test_demo_y=(
            "import pytest\n"
            "@pytest.mark.xfail(strict=True, reason='issue 38: not settled')\n"
            "def test_demo_x():\n    assert False\n"
            "@pytest.mark.skip(reason='no browser here')\n"
            "def test_demo_s():\n    pass\n"
        )
    )
    run(suite)
    reader = ReportReader(report)
    reader.poll()
    results = reader.report.results
    assert [(r.outcome, r.message) for r in results.values()] == [
        (Outcome.SKIPPED, "expected to fail: issue 38: not settled"),
        (Outcome.SKIPPED, "skipped: no browser here"),
    ]


# ---------------------------------------------------------------- the guard, phase by phase

PHASES = """
import socket, sys, _socket
import pytest

def reach_out(host):
    # The event the socket module raises before it connects; sys.audit itself sends nothing.
    try:
        sys.audit("socket.connect", None, (host, 443))
    except Exception:
        pass  # swallowed: the guard must still fail the test

@pytest.fixture
def in_setup():
    reach_out("203.0.113.1")
    yield

@pytest.fixture
def in_teardown():
    yield
    reach_out("203.0.113.2")

def test_demo_setup(in_setup):
    pass

def test_demo_teardown(in_teardown):
    pass

def test_demo_bypass():
    sock = _socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # not socket.socket: unwrapped
    try:
        sock.connect(("203.0.113.3", 9))  # a UDP connect sends no packet, guarded or not
    except Exception:
        pass
    finally:
        sock.close()

def test_demo_clean():
    pass

@pytest.mark.allow_network
def test_demo_allowed(in_setup, in_teardown):
    reach_out("203.0.113.4")
"""


def test_the_guard_fails_a_test_for_attempts_in_setup_teardown_or_below_the_wrappers(
    suite, monkeypatch
):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(test_demo_phases=PHASES)
    result = run(suite, "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=3, failed=1, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_demo_setup*"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_demo_teardown*"])
    result.stdout.fnmatch_lines(["*NetworkBlocked*during setup*203.0.113.1*"])
    result.stdout.fnmatch_lines(["*NetworkBlocked*during teardown*203.0.113.2*"])
    result.stdout.fnmatch_lines(["*NetworkBlocked: this test tried to reach the network: *.3*"])
    result.stdout.fnmatch_lines(["FAILED*test_demo_bypass*"])


# ---------------------------------------------------------------- the guard, with recorders

import socket  # noqa: E402  (kept with the tests that use it)

from clawbook.harness.netguard import NetworkBlocked, NetworkGuard, is_local_host  # noqa: E402

TEST_NET = "203.0.113.7"  # TEST-NET-3: documentation only, never routed


class Recorder:
    """Stands in for a socket function: remembers each call and sends nothing."""

    def __init__(self, result: object = None) -> None:
        self.result = result
        self.calls: list[tuple[object, ...]] = []

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls.append(args + tuple(kwargs.values()))
        return self.result


@pytest.fixture
def recorded(monkeypatch):
    """A fresh guard over recorders: nothing a test of the guard does can leave the machine."""
    loopback = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 8080))]
    recorders = {
        (socket.socket, "connect"): Recorder(),
        (socket.socket, "connect_ex"): Recorder(0),
        (socket.socket, "sendto"): Recorder(1),
        (socket.socket, "sendmsg"): Recorder(1),
        (socket, "getaddrinfo"): Recorder(loopback),
        (socket, "gethostbyname"): Recorder("127.0.0.1"),
        (socket, "gethostbyname_ex"): Recorder(("localhost", [], ["127.0.0.1"])),
        (socket, "gethostbyaddr"): Recorder(("localhost", [], ["127.0.0.1"])),
        (socket, "getnameinfo"): Recorder(("localhost", "8080")),
    }
    for (owner, name), recorder in recorders.items():
        monkeypatch.setattr(owner, name, recorder)
    fresh = NetworkGuard()
    fresh.install()
    try:
        yield fresh, {name: recorder for (_, name), recorder in recorders.items()}
    finally:
        fresh.uninstall()


def test_the_guard_takes_only_a_whole_loopback_address_as_local():
    interface = socket.if_nameindex()[0][1] if hasattr(socket, "if_nameindex") else "1"
    local = [None, "", "localhost", "LOCALHOST", "127.0.0.1", "127.9.8.7", "::1", b"127.0.0.1"]
    local += ["::1%1", f"::1%{interface}"]
    outside = [TEST_NET, "10.0.0.1", "192.168.1.1", "2001:db8::1", "example.com"]
    outside += ["127.0.0.1%x.example", "::1%x.example", "::1%", "127.0.0.1.example"]
    outside += ["localhost.example", "127.1", "2130706433", "0x7f.0.0.1", "fe80::1%1"]
    outside += [b"\xff", 2130706433, ("127.0.0.1",)]
    assert [host for host in local if not is_local_host(host)] == []
    assert [host for host in outside if is_local_host(host)] == []


def test_the_guard_refuses_every_way_out_and_the_real_functions_hear_nothing(recorded):
    guard, recorders = recorded
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    attempts = {
        "connect": lambda: tcp.connect((TEST_NET, 443)),
        "connect, scoped IPv4": lambda: tcp.connect(("127.0.0.1%x.example", 443)),
        "connect, scoped IPv6": lambda: udp6.connect(("::1%x.example", 443, 0, 0)),
        "connect_ex": lambda: tcp.connect_ex((TEST_NET, 443)),
        "sendto": lambda: udp.sendto(b"x", (TEST_NET, 53)),
        "sendto with flags": lambda: udp.sendto(b"x", 0, (TEST_NET, 53)),
        "sendmsg": lambda: udp.sendmsg([b"x"], [], 0, (TEST_NET, 53)),
        "sendmsg by keyword": lambda: udp.sendmsg([b"x"], address=(TEST_NET, 53)),
        "getaddrinfo": lambda: socket.getaddrinfo("example.com", 443),
        "getaddrinfo, scoped": lambda: socket.getaddrinfo("127.0.0.1%x.example", 443),
        "getaddrinfo by keyword": lambda: socket.getaddrinfo(host="example.com", port=443),
        "gethostbyname": lambda: socket.gethostbyname("example.com"),
        "gethostbyname_ex": lambda: socket.gethostbyname_ex("example.com"),
        "gethostbyaddr": lambda: socket.gethostbyaddr(TEST_NET),
        "getnameinfo": lambda: socket.getnameinfo((TEST_NET, 443), 0),
        "getfqdn": lambda: socket.getfqdn(TEST_NET),
        "create_connection": lambda: socket.create_connection((TEST_NET, 443)),
        "create_connection, scoped": lambda: socket.create_connection(("::1%x.example", 443)),
    }
    refused = []
    try:
        for name, attempt in attempts.items():
            try:
                attempt()
            except NetworkBlocked:
                refused.append(name)
    finally:
        for sock in (tcp, udp, udp6):
            sock.close()
    assert [name for name in attempts if name not in refused] == []
    assert {name: r.calls for name, r in recorders.items() if r.calls} == {}
    assert len(guard.take_attempts()) == len(attempts)


def test_the_guard_passes_loopback_calls_to_the_real_functions_unchanged(recorded):
    guard, recorders = recorded
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        tcp.connect(("127.0.0.1", 8080))
        tcp.connect_ex(("::1", 8080, 0, 0))
        udp.sendto(b"x", ("localhost", 53))
        udp.sendmsg([b"x"])
        udp.sendmsg([b"x"], [], 0, ("127.0.0.1", 53))
        socket.getaddrinfo("localhost", 8080)
        socket.getaddrinfo(None, 8080)
        socket.gethostbyname("localhost")
        socket.gethostbyaddr("127.0.0.1")
        socket.getnameinfo(("127.0.0.1", 8080), 0)
        socket.create_connection(("127.0.0.1", 8080)).close()
    finally:
        tcp.close()
        udp.close()
    assert guard.take_attempts() == []
    assert [call[1:] for call in recorders["connect"].calls] == [(("127.0.0.1", 8080),)] * 2
    assert recorders["connect_ex"].calls[0][1:] == (("::1", 8080, 0, 0),)
    assert recorders["sendto"].calls[0][1:] == (b"x", ("localhost", 53))
    assert len(recorders["sendmsg"].calls) == 2
    assert [call[0] for call in recorders["getaddrinfo"].calls] == ["localhost", None, "127.0.0.1"]
    assert recorders["gethostbyname"].calls == [("localhost",)]
    assert recorders["gethostbyaddr"].calls == [("127.0.0.1",)]
    assert recorders["getnameinfo"].calls == [(("127.0.0.1", 8080), 0)]


def test_the_guard_is_lifted_while_allowed(recorded):
    guard, recorders = recorded
    guard.allowed = True
    socket.getaddrinfo("example.com", 443)
    assert recorders["getaddrinfo"].calls == [("example.com", 443)]
    assert guard.take_attempts() == []


def test_the_guards_audit_hook_judges_each_socket_event_by_its_target():
    guard = NetworkGuard()  # not installed: audit() is called directly, nothing is sent
    outside = {
        "socket.connect": (None, (TEST_NET, 443)),
        "socket.sendto": (None, ("127.0.0.1%x.example", 53)),
        "socket.sendmsg": (None, (TEST_NET, 53)),
        "socket.getaddrinfo": ("example.com", 443, 0, 0, 0),
        "socket.gethostbyname": ("example.com",),
        "socket.gethostbyaddr": (TEST_NET,),
        "socket.getnameinfo": ((TEST_NET, 443),),
    }
    for event, args in outside.items():
        with pytest.raises(NetworkBlocked):
            guard.audit(event, args)
    assert len(guard.take_attempts()) == len(outside)
    guard.audit("socket.connect", (None, ("127.0.0.1", 443)))
    guard.audit("socket.connect", (None, "/tmp/a-unix-socket"))
    guard.audit("socket.sendmsg", (None, None))  # a connected socket: checked at connect
    guard.audit("socket.getaddrinfo", ("localhost", 443, 0, 0, 0))
    guard.audit("open", ("example.com", "r", 0))  # not a socket event
    guard.allowed = True
    guard.audit("socket.connect", (None, (TEST_NET, 443)))
    assert guard.take_attempts() == []


def test_python_dash_m_runs_a_module_of_the_chosen_package_as_main():
    import os
    import subprocess
    import sys

    env = {**os.environ, "CLAW_IMPL": "solution"}
    done = subprocess.run(
        [sys.executable, "-m", "claw.main", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: claw")


def test_a_loop_inside_a_task_group_is_reported_as_a_loop_at_its_line(suite, monkeypatch, tmp_path):
    # asyncio.TaskGroup wraps pytest-timeout's interruption in a BaseExceptionGroup.
    monkeypatch.setenv("CLAW_IMPL", "starter")
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv("CLAWBOOK_REPORT", str(report))
    suite.makepyfile(
        **{
            "starter/looper": (
                "import asyncio\n"
                "async def spin():\n"
                "    while True:\n"
                "        pass\n"
                "async def in_a_group():\n"
                "    async with asyncio.TaskGroup() as group:\n"
                "        group.create_task(spin())\n"
            ),
            "test_demo_loop": (
                "import asyncio\n"
                "from claw.looper import in_a_group\n"
                "def test_demo_loop():\n"
                "    asyncio.run(in_a_group())\n"
            ),
        }
    )
    run(suite, "-p", "timeout", "--timeout", "1")
    reader = ReportReader(report)
    reader.poll()
    (result,) = reader.report.results.values()
    assert result.outcome == Outcome.HUNG
    assert result.message.startswith("seems to loop forever")
    assert result.where is not None
    assert (result.where.path, result.where.line) == ("starter/looper.py", 3)


# ---------------------------------------------------------------- with pytest-xdist's workers

MIXED_SUITE = {
    "starter/deep": (
        "from .todo import Todo\n"
        "def inner(x):\n"
        "    if x > 4:\n"
        "        raise OverflowError(f'{x} is too big')\n"
        "    return x * 3\n"
        "def outer(x):\n"
        "    return inner(x) + 1\n"
        "def later():\n"
        "    raise Todo('ch02', 'write later()')\n"
    ),
    "test_demo_mixed": (
        "import pytest\n"
        "from claw.deep import later, outer\n"
        "from claw.thing import real, stub\n"
        "def check(value):\n"
        "    # the rule: three times, plus one\n"
        "    assert outer(value) == 3 * value\n"
        "def test_demo_pass():\n"
        "    assert real() == 2\n"
        "def test_demo_todo():\n"
        "    stub()\n"
        "def test_demo_later():\n"
        "    later()\n"
        "def test_demo_helper_fails():\n"
        "    check(2)\n"
        "@pytest.mark.parametrize('n', [1, 2, 3])\n"
        "def test_demo_raises(n):\n"
        "    raise ValueError(f'bad {n}')\n"
        "def test_demo_skip():\n"
        "    pytest.skip('not here')\n"
        "def test_demo_raises_inside():\n"
        "    outer(5)\n"
    ),
}


def _results(report_path):
    reader = ReportReader(report_path)
    reader.poll()
    report = reader.report
    assert report.finished
    return report


def test_with_workers_the_results_file_says_what_one_process_says(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(**MIXED_SUITE)
    reports = {}
    for workers in ("0", "2"):
        path = tmp_path / f"report-{workers}.jsonl"
        monkeypatch.setenv("CLAWBOOK_REPORT", str(path))
        run(suite, "-n", workers)
        reports[workers] = _results(path)
    alone, spread = reports["0"], reports["2"]
    assert spread.workers == 2 and alone.workers == 0
    assert sorted(spread.collected or ()) == sorted(alone.collected or ()) != []
    assert spread.results.keys() == alone.results.keys()
    assert spread.results == alone.results  # outcome, message, the learner's line, the test's
    failed = alone.results["test_demo_mixed.py::test_demo_helper_fails"]
    assert failed.outcome == Outcome.FAILED and "assert 7 == (3 * 2)" in (failed.message or "")
    assert failed.called_from is not None and failed.called_from.line == 6
    assert failed.test_line is not None and failed.test_line.line == 14
    raised = alone.results["test_demo_mixed.py::test_demo_raises_inside"]
    assert raised.where is not None
    assert (raised.where.path, raised.where.line) == ("starter/deep.py", 4)
    assert spread.results["test_demo_mixed.py::test_demo_later"].todo_chapter == "ch02"
    assert spread.started == []  # every test that started has its final result


def test_with_workers_the_tests_with_the_longest_limits_start_first(suite, monkeypatch, tmp_path):
    # A long test started last keeps one worker busy while the others wait.
    monkeypatch.setenv("CLAW_IMPL", "starter")
    suite.makepyfile(
        test_demo_order=(
            "import pytest\n"
            "def test_demo_a(): pass\n"
            "@pytest.mark.timeout(30)\n"
            "def test_demo_b(): pass\n"
            "def test_demo_c(): pass\n"
            "@pytest.mark.timeout(90)\n"
            "def test_demo_d(): pass\n"
        )
    )
    collected = {}
    for workers in ("0", "2"):
        path = tmp_path / f"report-{workers}.jsonl"
        monkeypatch.setenv("CLAWBOOK_REPORT", str(path))
        run(suite, "-p", "timeout", "-n", workers).assert_outcomes(passed=4)
        collected[workers] = [n.partition("::")[2] for n in _results(path).collected or ()]
    assert collected["2"] == ["test_demo_d", "test_demo_b", "test_demo_a", "test_demo_c"]
    assert collected["0"] == ["test_demo_a", "test_demo_b", "test_demo_c", "test_demo_d"]


def test_with_workers_a_hang_is_found_in_the_worker_that_loops(suite, monkeypatch):
    from clawbook.harness.runner import run_pytest

    for variable in ("CLAW_IMPL", "CLAWBOOK_REPORT"):
        monkeypatch.delenv(variable, raising=False)
    suite.makepyfile(
        **{
            "starter/stuck": (
                "def forever():\n"
                "    while True:\n"
                "        try:\n"
                "            while True:\n"
                "                pass\n"
                "        except BaseException:  # swallows pytest-timeout's interruption\n"
                "            pass\n"
            ),
            "test_demo_stuck": (
                "from claw.stuck import forever\n"
                "def test_demo_fine():\n"
                "    pass\n"
                "def test_demo_stuck():\n"
                "    forever()\n"
            ),
        }
    )
    run_ = run_pytest(
        ["-p", "clawbook.harness.pytest_plugin", "test_demo_stuck.py"],
        implementation="starter",
        root=suite.path,
        timeout=1,
        workers=2,
    )
    assert run_.stopped is not None and run_.stopped.reason == Outcome.HUNG
    assert run_.stopped.test == "test_demo_stuck.py::test_demo_stuck"
    assert run_.stopped.where is not None
    assert run_.stopped.where.path == "starter/stuck.py"
    assert run_.stopped.where.line in (4, 5)  # the inner loop: its test or its body


@pytest.mark.parametrize("workers", [0, 2])
def test_a_test_marked_with_a_longer_timeout_is_given_as_long(suite, monkeypatch, workers):
    from clawbook.harness.runner import run_pytest

    for variable in ("CLAW_IMPL", "CLAWBOOK_REPORT"):
        monkeypatch.delenv(variable, raising=False)
    suite.makepyfile(
        test_demo_slow=(
            "import time\n"
            "import pytest\n"
            "@pytest.mark.timeout(8)\n"
            "def test_demo_slow_but_fine():\n"
            "    time.sleep(4)  # silent for longer than the run's limit and its grace (1 + 2 s)\n"
        )
    )
    run_ = run_pytest(
        ["-p", "clawbook.harness.pytest_plugin", "test_demo_slow.py"],
        implementation="starter",
        root=suite.path,
        timeout=1,
        workers=workers,
    )
    assert run_.stopped is None
    assert [r.outcome for r in run_.results] == [Outcome.PASSED]


def test_a_forgotten_await_is_named_in_the_failure(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("CLAW_IMPL", "starter")
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv("CLAWBOOK_REPORT", str(report))
    suite.makepyfile(
        **{
            "starter/waits": (
                "async def fetch():\n"
                "    return {'a': 1}\n"
                "async def use():\n"
                "    data = fetch()  # the await is missing\n"
                "    return data.get('a')\n"
            ),
            "test_demo_waits": (
                "import asyncio\n"
                "from claw.waits import use\n"
                "def test_demo_waits():\n"
                "    assert asyncio.run(use()) == 1\n"
            ),
        }
    )
    run(suite, "-W", "ignore::RuntimeWarning")
    reader = ReportReader(report)
    reader.poll()
    (result,) = reader.report.results.values()
    assert result.outcome == Outcome.FAILED
    assert "'coroutine' object has no attribute 'get'" in (result.message or "")
    assert "the `await` is missing there" in (result.message or "")


GIVEN_HELPER = (
    "def describe(result):  # given code, a file the learner never edits\n"
    "    return result.reason\n"
)


def forgotten_await_result(suite, monkeypatch, tmp_path, caught: bool, check: str):
    """Run a suite whose learner's ``use()`` calls ``work()`` without ``await`` and hands it to
    given code (caught in the learner's code when ``caught``); ``check`` is the test's line
    about ``asyncio.run(use())``. The one result, as ``clawbook`` reads it."""
    monkeypatch.setenv("CLAW_IMPL", "starter")
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv("CLAWBOOK_REPORT", str(report))
    use = (
        "    try:\n        return describe(work())\n"
        "    except AttributeError as error:\n        return f'failed: {error}'\n"
        if caught
        else "    return describe(work())\n"
    )
    suite.makepyfile(
        **{
            "starter/given": GIVEN_HELPER,
            "starter/waits": (
                "from .given import describe\n"
                "async def work():\n"
                "    return 'done'\n"
                "async def use():\n" + use
            ),
            "test_demo_waits": (
                "import asyncio\n"
                "from claw.waits import use\n"
                "def test_demo_waits():\n" + check
            ),
        }
    )
    run(suite, "-W", "ignore::RuntimeWarning")
    reader = ReportReader(report)
    reader.poll()
    (result,) = reader.report.results.values()
    return result


@pytest.mark.parametrize("caught", [False, True])
def test_a_forgotten_await_points_at_the_learners_line_that_made_the_coroutine(
    suite, monkeypatch, tmp_path, caught
):
    """The learner's `work()` lacks its `await`; the coroutine fails later, in given code
    (``caught=False``: the traceback ends in given.py) or in a message the learner's code
    caught (``caught=True``: the traceback never enters the package). Either way the failure
    is shown at the line that made the coroutine, and the note names that line."""
    check = "    assert asyncio.run(use()) == 'done'\n"
    result = forgotten_await_result(suite, monkeypatch, tmp_path, caught, check)
    assert result.outcome == Outcome.FAILED
    line = 6 if caught else 5
    assert result.where is not None
    assert (result.where.path, result.where.line) == ("starter/waits.py", line)
    assert "describe(work())" in result.where.source
    assert f"coroutine 'work' was made at starter/waits.py:{line} and never awaited" in (
        result.message or ""
    )


def test_the_forgotten_await_note_stands_under_the_first_line_above_a_long_diff(
    suite, monkeypatch, tmp_path
):
    """A comparison of long lists makes pytest print many diff lines (all of them when the
    ``CI`` variable is set), and ``clawbook check`` shows only a failure's first lines: the
    note naming the learner's line comes right after the first line, never after the diff."""
    monkeypatch.setenv("CI", "true")  # pytest then prints the whole diff
    check = (
        "    got = [asyncio.run(use()), *range(30)]\n"
        "    assert got == ['done', *range(1, 31)]\n"
    )
    result = forgotten_await_result(suite, monkeypatch, tmp_path, True, check)
    lines = (result.message or "").splitlines()
    assert len(lines) > 10, lines  # the diff is long
    assert lines[0].startswith("AssertionError")
    assert lines[1].startswith("(coroutine 'work' was made at starter/waits.py:6"), lines[:3]


def test_processes_the_tests_leave_running_are_killed_and_named(suite, monkeypatch):
    """Whatever the tests start and leave behind is killed when the run ends, and named: one
    in pytest's own process group (a plain ``&``), one that left the session (``setsid``,
    then its parent exited, so it belongs to no process of the run any more)."""
    from marked_processes import marked, unique_marker

    from clawbook.harness.runner import run_pytest

    for variable in ("CLAW_IMPL", "CLAWBOOK_REPORT"):
        monkeypatch.delenv(variable, raising=False)
    markers = unique_marker()
    marker = next(markers)
    suite.makepyfile(
        test_demo_leaves=(
            "import subprocess\n"
            "def test_demo_leaves():\n"
            "    subprocess.run(\n"
            f'        "(exec -a {marker}-group sleep 300) & "\n'
            f"        \"setsid bash -c 'exec -a {marker}-session sleep 300' &\",\n"
            '        shell=True, executable="/bin/bash", check=True)\n'
        )
    )
    try:
        run_ = run_pytest(
            ["-p", "clawbook.harness.pytest_plugin", "test_demo_leaves.py"],
            implementation="starter",
            root=suite.path,
        )
        assert marked(marker) == []  # none left at the moment the run returns
        assert [r.outcome for r in run_.results] == [Outcome.PASSED]
        assert sorted(run_.leftovers) == [f"{marker}-group 300", f"{marker}-session 300"]
    finally:
        next(markers, None)  # the marker's cleanup: kills any left, if the run did not


def test_a_run_that_left_processes_says_how_many_and_which_in_one_line():
    from clawbook.harness.runner import Run

    run_ = Run(results=(), returncode=0, output="", leftovers=("sleep 300", "sleep 300"))
    with console.console.capture() as captured:
        console.print_problems(run_)
    lines = captured.get().splitlines()
    assert lines == [
        "! The tests left 2 processes running; the run killed them: sleep 300, sleep 300"
    ]


def test_tests_that_did_not_run_after_a_hang_are_listed_with_why(suite, monkeypatch):
    """pytest ends the run itself after a test that seems to loop forever (the plugin asks it
    to): the run finished, yet the tests after it never ran. check lists each of them and says
    why, and the run is not mistaken for a whole one."""
    from clawbook.course.chapters import load
    from clawbook.harness.runner import Progress, run_pytest
    from clawbook.learner import check

    for variable in ("CLAW_IMPL", "CLAWBOOK_REPORT"):
        monkeypatch.delenv(variable, raising=False)
    suite.makepyfile(
        test_demo_order=(
            "def test_demo_first():\n    pass\n"
            "def test_demo_loops():\n    while True:\n        pass\n"
            "def test_demo_after():\n    pass\n"
        )
    )
    run_ = run_pytest(
        ["-p", "clawbook.harness.pytest_plugin", "test_demo_order.py"],
        implementation="starter",
        root=suite.path,
        timeout=1,
    )
    assert run_.stopped is None  # pytest ended the run itself, and said it finished
    why = "the run stopped after test_demo_loops, which seemed to loop forever"
    assert run_.cut_short == why
    chapter = load().get("ch01")
    p = Progress(chapter, run_.results, run_.collected)
    with console.console.capture() as captured:
        console.print_problems(run_)
        check.print_results(p, run_, "starter")
    out = captured.get()
    assert f"✗ The test run stopped early: {why}" in out
    assert f"? test_demo_after  did not run: {why}" in out
