"""The pytest plugin: todo reporting, the implementation header, the network guard."""

import json

import pytest

from clawbook.report import ReportReader

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
        "-p", "clawbook.pytest_plugin", "-p", "no:cacheprovider", *args
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
    assert [r.outcome for r in results.values()] == ["passed", "todo", "failed"]
    failed = results["test_demo_x.py::test_demo_c"]
    assert failed.called_from is not None and failed.called_from.line == 7
    assert failed.where is None  # the failing line is the test's own, not the package's
    assert reader.report.finished
