"""The learner's loop as a learner meets it: `clawbook` run in a scratch copy of the repository.

Each test makes a mistake a learner makes sooner or later (a crash, a syntax error, an endless
loop, a segfault, Ctrl-C, a reset they regret) and checks that the answer is fast, points at the
right file and line, never reports success that did not happen, and loses no code.
"""

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawbook.course import stubgen
from clawbook.course.chapters import load
from clawbook.harness.report import Location, Outcome, TestResult
from clawbook.harness.runner import Progress, Run
from clawbook.instructor.reference import copy_repository
from clawbook.learner import check, console

REPO = Path(__file__).resolve().parents[2]
COPIED = ("claw", "clawbook", "solution", "starter", "tests", "pyproject.toml")
OWN_VARIABLES = ("CLAW_IMPL", "CLAW_IMPL_PATH", "CLAWBOOK_REPORT", "CLAWBOOK_CHAPTERS")
INIT_DOCSTRING = (
    '        """Start with the turns of ``script``; strings become text-only turns."""\n'
)
"""The first line of MockProvider.__init__'s body, where these tests plant their mistakes."""


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """One scratch copy of the repository's code and tests, made once per module."""
    return copy_repository(tmp_path_factory.mktemp("template") / "repo", COPIED, REPO)


@pytest.fixture
def repo(template, tmp_path):
    """A scratch repository of this test's own, with an untouched starter."""
    root = tmp_path / "repo"
    shutil.copytree(template, root)
    return root


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in OWN_VARIABLES}


def clawbook(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `clawbook` as a learner would, in the scratch repository, with no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "clawbook", *args],
        cwd=repo,
        env=environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def fill(repo: Path, *chapters: str) -> None:
    """Write the solution's code for ``chapters`` into the scratch starter."""
    files = stubgen.render_tree(repo / "solution", keep=set(chapters))
    for relative, text in files.items():
        if isinstance(text, str):
            (repo / "starter" / relative).write_text(text)


def trim(repo: Path, last: str) -> None:
    """Make the scratch course end at chapter ``last``: its later chapters' tests are not run.

    For tests about how a learner tool behaves, not about the whole course: every status run
    of theirs then runs a few chapters' tests instead of every chapter's.
    """
    chapters = repo / "clawbook" / "chapters.toml"
    head, *blocks = chapters.read_text().split("\n[[chapter]]\n")
    ids = [block.split('id = "', 1)[1].split('"', 1)[0] for block in blocks]
    kept = blocks[: ids.index(last) + 1]
    chapters.write_text("\n[[chapter]]\n".join([head, *kept]))


def edit(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (which must occur once) by ``new``; return the 1-based line of the edit."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def line_of(path: Path, needle: str) -> int:
    """The first line of ``path`` that contains ``needle``."""
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def line_in_function(path: Path, function: str, needle: str) -> int:
    """The last line of ``function`` in ``path`` that contains ``needle``."""
    tree = ast.parse(path.read_text())
    node = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function
    )
    lines = path.read_text().splitlines()
    numbers = range(node.lineno, (node.end_lineno or node.lineno) + 1)
    found = [number for number in numbers if needle in lines[number - 1]]
    assert found, f"{needle!r} not in {function}"
    return found[-1]


def processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is inside ``folder`` (left-over test runs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            found.append(int(entry.name))
    return found


def wait_for_processes_to_end(folder: Path, seconds: float = 5) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# ---------------------------------------------------------------- where it went wrong


def test_a_crash_points_at_the_learners_line_and_the_tests_line(repo):
    fill(repo, "ch01")
    mock = repo / "starter" / "mock.py"
    text = mock.read_text()
    # A classic slip: forgetting the empty-script check, so popleft() raises IndexError.
    start = text.index("        if not self._script:")
    end = text.index("        return self._script.popleft()")
    mock.write_text(text[:start] + text[end:])
    crash_line = line_of(mock, "return self._script.popleft()")
    test_file = repo / "tests" / "test_mock_provider.py"
    test_line = line_in_function(
        test_file, "test_mock_raises_a_provider_error_when_the_script_is_used_up", "complete("
    )

    result = clawbook(repo, "check", "ch01")

    assert result.returncode == 1, result.stdout
    out = result.stdout
    assert "IndexError: pop from an empty deque" in out
    assert f"at   starter/mock.py:{crash_line}   return self._script.popleft()" in out
    assert f"from tests/test_mock_provider.py:{test_line}" in out
    assert f"tests/test_mock_provider.py:{crash_line} " not in out  # never the mixed-up pair


def test_a_deleted_todo_import_is_shown_at_the_stub_that_needs_it(repo):
    read = repo / "starter" / "tools" / "read.py"
    edit(read, "from ..todo import Todo\n", "")
    stub_line = line_of(read, "raise Todo")

    result = clawbook(repo, "check", "ch02")

    assert result.returncode == 1, result.stdout
    assert "NameError: name 'Todo' is not defined" in result.stdout
    assert f"at   starter/tools/read.py:{stub_line}" in result.stdout


def test_a_syntax_error_is_named_once_before_anything_else_and_status_says_cannot_import(repo):
    mock = repo / "starter" / "mock.py"
    line = edit(mock, "    def remaining(self) -> int:", "    def remaining(self) -> int")

    check = clawbook(repo, "check", "ch01")
    status = clawbook(repo, "status")

    assert check.returncode == 1
    first = check.stdout.splitlines()[0]
    assert first == f"✗ cannot import starter/mock.py (line {line}): SyntaxError: expected ':'"
    assert check.stdout.count("✗ cannot import starter/mock.py") == 1
    assert status.returncode == 1
    first_line = status.stdout.splitlines()[0]
    assert first_line.startswith(f"✗ cannot import starter/mock.py (line {line})")
    assert "cannot import" in next(row for row in status.stdout.splitlines() if " ch01 " in row)
    assert "0/1" not in status.stdout  # no fake counts for a module that never imported
    assert "Every written chapter passes" not in status.stdout


@pytest.mark.parametrize(
    ("appended", "message"),
    [("x = (\n", "SyntaxError"), ("import no_such_module\n", "ModuleNotFoundError")],
)
def test_a_broken_package_never_reads_as_done(repo, appended, message):
    init = repo / "starter" / "__init__.py"
    line = len(init.read_text().splitlines()) + 1
    init.write_text(init.read_text() + appended)

    check = clawbook(repo, "check", "ch04")  # a reading chapter: its tests pass from the start
    status = clawbook(repo, "status")

    assert check.returncode == 1
    assert f"cannot import starter/__init__.py (line {line}): {message}" in check.stdout
    assert "is done" not in check.stdout
    assert status.returncode == 1
    assert "Every written chapter passes" not in status.stdout


def test_a_segfault_is_a_crash_with_the_learners_line_never_a_success(repo):
    mock = repo / "starter" / "mock.py"
    docstring = INIT_DOCSTRING
    line = edit(mock, docstring, docstring + "        import ctypes\n        ctypes.string_at(0)\n")

    result = clawbook(repo, "check", "ch01")

    assert result.returncode == 1
    assert "crashed: Segmentation fault" in result.stdout
    assert f"starter/mock.py:{line + 2}" in result.stdout
    assert "did not run" in result.stdout


# ---------------------------------------------------------------- never hang silently


def test_an_endless_loop_is_stopped_within_the_limit_and_shown_where_it_loops(repo):
    mock = repo / "starter" / "mock.py"
    docstring = INIT_DOCSTRING
    line = edit(mock, docstring, docstring + "        while True:\n            pass\n")

    started = time.monotonic()
    result = clawbook(repo, "check", "ch01", "--timeout", "1")
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    assert "seems to loop forever" in result.stdout
    assert f"starter/mock.py:{line + 1}" in result.stdout or f"starter/mock.py:{line + 2}" in (
        result.stdout
    )
    assert elapsed < 30  # 18 tests × the limit would be far longer: the run stops at the first
    assert not wait_for_processes_to_end(repo)



def test_an_endless_loop_is_shown_in_the_learners_own_function_not_the_helper_it_calls(repo):
    # The learner's loop calls a given helper that takes all the time: the test is stopped
    # inside the helper, yet the line to look at is the learner's, in the chapter's function.
    mock = repo / "starter" / "mock.py"
    edit(
        mock,
        INIT_DOCSTRING,
        INIT_DOCSTRING + "        from types import SimpleNamespace\n\n"
        "        from .types import content_text\n\n"
        '        parts = (SimpleNamespace(text="x"),) * 200_000\n'
        "        while True:\n"
        "            content_text(parts)  # type: ignore[arg-type]\n",
    )
    line = line_of(mock, "content_text(parts)")

    result = clawbook(repo, "check", "ch01", "--timeout", "1")

    assert result.returncode == 1
    assert "seems to loop forever" in result.stdout
    assert re.search(rf"at +starter/mock\.py:({line - 1}|{line}) ", result.stdout), result.stdout
    assert "starter/types.py" not in result.stdout  # the given helper is not the learner's line

def test_a_worker_thread_that_never_returns_is_stopped_with_its_line_and_no_process_left(repo):
    read = repo / "starter" / "tools" / "read.py"
    text = read.read_text()
    marker = "    async def read(self, args: ReadArguments) -> ToolOutput:\n"
    assert marker in text
    # A stub that waits in a worker thread for something that never happens: pytest-timeout
    # cannot interrupt it, and the test's clean-up waits for the thread forever.
    read.write_text(
        text.replace(
            marker,
            marker.replace("async def read", "async def read_never")
            + "        pass\n\n"
            + marker
            + "        import asyncio, threading\n"
            + "        await asyncio.to_thread(threading.Event().wait)\n",
        )
    )
    line = line_of(read, "await asyncio.to_thread(threading.Event().wait)")

    started = time.monotonic()
    result = clawbook(repo, "check", "ch02", "--timeout", "1")
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    assert "The test run stopped early" in result.stdout
    assert "seems to loop forever" in result.stdout
    assert f"starter/tools/read.py:{line}" in result.stdout
    assert "did not run" in result.stdout
    assert elapsed < 30
    assert not wait_for_processes_to_end(repo)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("command", [("check", "ch01"), ("watch", "ch01")])
def test_ctrl_c_or_sigterm_ends_clawbook_and_its_test_run_cleanly(repo, signum, command):
    mock = repo / "starter" / "mock.py"
    docstring = INIT_DOCSTRING
    edit(mock, docstring, docstring + "        while True:\n            pass\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "clawbook", *command, "--timeout", "60"],
        cwd=repo,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(processes_in(repo)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # wait until pytest runs beside clawbook
        assert len(processes_in(repo)) >= 2
        time.sleep(0.5)
        process.send_signal(signum)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    if command[0] == "check":
        assert process.returncode in (130, 128 + signum)
    else:  # Ctrl-C is how one leaves watch: it ends with the state of the last run
        assert process.returncode is not None
    assert "Traceback" not in out + err
    assert not wait_for_processes_to_end(repo)


# ---------------------------------------------------------------- what the learner reads


def test_test_ids_are_printed_verbatim_without_markup_or_emoji():
    chapter = load().get("ch05a")
    name = "test_streaming_x[id: a:b: c-[bold]x[/bold]-:smile:]"
    result = TestResult(
        f"tests/test_streaming_sse.py::{name}", "tests/x.py", "ch05a", Outcome.PASSED
    )
    failed = TestResult(
        "tests/test_streaming_sse.py::test_y[:b:]",
        "tests/x.py",
        "ch05a",
        Outcome.FAILED,
        message="AssertionError: assert ':b:' == '[red]'",
        where=Location("starter/streaming.py", 7, "x = '[dim]'"),
    )
    run = Run(results=(result, failed), returncode=1, output="")
    with console.console.capture() as captured:
        check.print_results(Progress(chapter, run.results), run, "starter")
    out = captured.get()
    assert name in out
    assert "test_y[:b:]" in out
    assert "assert ':b:' == '[red]'" in out
    assert "x = '[dim]'" in out
    assert "🅱" not in out and "😄" not in out


def test_status_names_the_first_failing_tests_of_a_chapter_and_how_to_see_the_rest():
    from clawbook.learner import status

    chapter = load().get("ch21")
    failed = [
        TestResult(f"tests/test_subagent.py::test_subagent_{n}", "x", "ch21", Outcome.FAILED)
        for n in range(5)
    ]
    hung = TestResult("tests/test_skills.py::test_skills_z", "x", "ch21", Outcome.HUNG)
    passed = TestResult("tests/test_skills.py::test_skills_ok", "x", "ch21", Outcome.PASSED)
    p = Progress(chapter, (passed, hung, *failed))
    with console.console.capture() as captured:
        status._print_failures([p])
    lines = captured.get().splitlines()
    assert lines[2:] == [
        "   ch21  ✗ test_skills_z  (hung)",
        "   ch21  ✗ test_subagent_0",
        "   ch21  ✗ test_subagent_1",
        "         `clawbook check ch21` shows the other 3 and where each fails",
    ]


def test_the_next_stub_is_the_first_unfinished_one_in_book_order(repo):
    fill(repo, "ch01", "ch02")
    agent = repo / "starter" / "agent.py"
    stub = line_in_function(agent, "check_arguments", "raise Todo")

    result = clawbook(repo, "check", "ch03")

    assert result.returncode == 3, result.stdout
    assert f"Next stub: starter/agent.py:{stub} check_arguments" in result.stdout


def test_tests_waiting_for_an_earlier_chapter_say_which(repo):
    result = clawbook(repo, "check", "ch03")
    assert result.returncode == 3
    assert "wait for stubs of ch01" in result.stdout


def test_hint_more_gives_a_second_hint_for_every_stub(repo):
    result = clawbook(repo, "hint", "ch01", "--more")
    assert result.returncode == 3
    hints = result.stdout.count("hint:")
    assert hints >= 4
    assert result.stdout.count("more:") == hints
    assert "no second hint" not in result.stdout


# ---------------------------------------------------------------- never lose the learner's code


def test_reset_then_restore_puts_the_learners_code_back(repo):
    fill(repo, "ch01")
    mock = repo / "starter" / "mock.py"
    written = mock.read_text() + "\n# a note the learner kept\n"
    mock.write_text(written)

    reset = clawbook(repo, "reset", "ch01", "--yes")
    assert reset.returncode == 0, reset.stdout
    assert "raise Todo(" in mock.read_text()
    assert "# a note the learner kept" in mock.read_text()  # only the functions went back
    assert "clawbook restore ch01" in reset.stdout

    restore = clawbook(repo, "restore", "ch01", "--yes")
    assert restore.returncode == 0, restore.stdout
    assert mock.read_text() == written

    undo = restore.stdout.split("clawbook restore ch01 ")[1].split("`")[0]
    again = clawbook(repo, "restore", "ch01", undo, "--yes")
    assert again.returncode == 0, again.stdout
    assert "raise Todo(" in mock.read_text()


def test_reset_and_restore_ask_first_and_say_how_to_confirm_without_a_terminal(repo):
    fill(repo, "ch01")
    before = (repo / "starter" / "mock.py").read_text()
    reset = clawbook(repo, "reset", "ch01")
    assert reset.returncode == 2
    assert "clawbook reset ch01 --yes" in reset.stdout
    assert (repo / "starter" / "mock.py").read_text() == before


def test_reset_of_a_file_that_does_not_parse_says_the_whole_file_goes_back(repo):
    fill(repo, "ch01", "ch02")
    mock = repo / "starter" / "mock.py"
    edit(mock, "    def remaining(self) -> int:", "    def remaining(self) -> int")
    result = clawbook(repo, "reset", "ch01", "--yes")
    assert result.returncode == 0
    assert "does not parse" in result.stdout
    assert "the whole file" in result.stdout
    assert "go back to their stubs" not in result.stdout.split("mock.py")[1].splitlines()[0]


def test_stubs_refuses_to_overwrite_a_learners_code_and_force_backs_it_up(repo):
    fill(repo, "ch01")
    mine = (repo / "starter" / "mock.py").read_text()

    refused = clawbook(repo, "stubs")
    assert refused.returncode == 1
    assert "mock.py" in refused.stdout
    assert (repo / "starter" / "mock.py").read_text() == mine

    forced = clawbook(repo, "stubs", "--force")
    assert forced.returncode == 0, forced.stdout
    backups = list((repo / ".clawbook" / "backups").rglob("mock.py"))
    assert [b.read_text() for b in backups] == [mine]


def test_check_and_verify_never_advise_a_learner_to_regenerate_the_starter(repo):
    fill(repo, "ch01")
    check = clawbook(repo, "check", "ch01")
    assert check.returncode == 0, check.stdout
    assert "clawbook stubs" not in check.stdout


# ---------------------------------------------------------------- broken course files


def test_a_broken_chapters_file_is_one_clear_line(repo):
    (repo / "clawbook" / "chapters.toml").write_text("[[chapter]\nid = ")
    status = clawbook(repo, "status")
    assert status.returncode == 2
    assert "chapters.toml: not valid TOML" in status.stdout
    assert "Traceback" not in status.stdout + status.stderr

    pytest_run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert pytest_run.returncode == 4  # a usage error, not an internal error
    assert "INTERNALERROR" not in pytest_run.stdout + pytest_run.stderr
    assert "chapters.toml: not valid TOML" in pytest_run.stderr


def test_a_region_that_breaks_the_starter_is_reported_at_its_solution_line(repo):
    mock = repo / "solution" / "mock.py"
    line = edit(
        mock,
        '    """Every call received so far, oldest first."""\n',
        '    """Every call received so far, oldest first."""\n\n'
        "    def half(self, flag: bool) -> int:\n"
        '        """Half an if in a region."""\n'
        "        # region ch01: broken\n"
        "        if flag:\n"
        "            return 1\n"
        "        # endregion\n"
        "        else:\n"
        "            return 2\n",
    )
    result = clawbook(repo, "stubs", "--check")
    assert result.returncode == 1
    assert f"mock.py:{line + 8}: with its regions stubbed" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_clawbook_works_on_the_checkout_it_is_run_in(repo):
    chapters = repo / "clawbook" / "chapters.toml"
    chapters.write_text(chapters.read_text().replace("Your first LLM call", "A scratch title"))
    installed = Path(sys.executable).with_name("clawbook")
    result = subprocess.run(
        [str(installed), "hint", "ch01"],
        cwd=repo / "starter",
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "A scratch title" in result.stdout, result.stdout + result.stderr


def test_every_learner_command_works_without_solution(template, tmp_path):
    """A class handed only starter/, tests/ and the book: no learner command may need solution/."""
    root = tmp_path / "repo"
    shutil.copytree(template, root)
    shutil.rmtree(root / "solution")
    hint = clawbook(root, "hint", "ch01", "--more")
    assert hint.returncode == 3, hint.stdout + hint.stderr
    assert "more:" in hint.stdout and "(this stub has no second hint)" not in hint.stdout
    assert "Traceback" not in hint.stdout + hint.stderr
    check = clawbook(root, "check", "ch01")
    assert check.returncode == 3 and "Traceback" not in check.stdout + check.stderr
    status = clawbook(root, "status")
    assert status.returncode == 3 and "Traceback" not in status.stdout + status.stderr
    mock = root / "starter" / "mock.py"
    edit(mock, INIT_DOCSTRING, INIT_DOCSTRING + "        self.mine = 1\n")
    reset = clawbook(root, "reset", "ch01", "--yes")
    assert reset.returncode == 0, reset.stdout + reset.stderr
    assert "self.mine = 1" not in mock.read_text()
    restore = clawbook(root, "restore", "ch01", "--yes")
    assert restore.returncode == 0, restore.stdout + restore.stderr
    assert "self.mine = 1" in mock.read_text()
    assert not (root / "solution").exists()


def test_a_todo_test_names_the_stub_it_waits_for(repo):
    fill(repo, "ch01", "ch02")
    result = clawbook(repo, "check", "ch03")
    assert result.returncode == 3, result.stdout
    waiting = [line for line in result.stdout.splitlines() if "○ test_" in line]
    assert waiting and all(" · waits for " in line for line in waiting)
    assert all("(ch03, starter/agent.py:" in line for line in waiting), waiting
    stubs_named = {line.split(" · waits for ")[1].split(" (")[0] for line in waiting}
    assert "MockProvider.__init__" not in stubs_named  # ch01 is filled: never blamed


HELPER_TEST = """
def check_greeting(text):
    # The greeting is one line, and it ends with a full stop.
    # (This comment is the rule the learner reads.)
    assert text == "hello there.\\nsecond"


def test_mock_greeting_through_a_helper():
    check_greeting("hello there\\nsecond")
"""


def test_a_failure_in_a_helper_shows_the_rule_the_test_line_and_labels_the_diff(repo):
    fill(repo, "ch01")
    (repo / "tests" / "test_mock_zz_helper.py").write_text(HELPER_TEST)
    result = clawbook(repo, "check", "ch01", "-k", "greeting")
    assert result.returncode == 1, result.stdout
    out = result.stdout
    assert "lines with - are expected, lines with + are yours" in out
    assert "│ # The greeting is one line, and it ends with a full stop." in out
    assert "from tests/test_mock_zz_helper.py:5" in out  # the helper's assert
    assert "test tests/test_mock_zz_helper.py:9" in out  # and the test's own line
    assert out.index("│ # The greeting") < out.index("from tests/test_mock_zz_helper.py:5")


def test_status_reuses_results_until_code_they_depend_on_changes(repo):
    trim(repo, "ch03")
    first = clawbook(repo, "status")
    assert first.returncode == 3 and "Nothing changed" not in first.stdout
    second = clawbook(repo, "status")
    assert "Nothing changed since the last run" in second.stdout
    table = lambda out: out[out.index("Clawbook · your progress") :]  # noqa: E731
    assert table(second.stdout) == table(first.stdout)
    fill(repo, "ch01")
    edit(repo / "starter" / "mock.py", "self._script.popleft()", "self._script.pop()")
    third = clawbook(repo, "status")
    assert "Ran again the" in third.stdout and "results of the others" in third.stdout
    assert "✗ failing" in third.stdout  # ch01's tests really ran on the new code
    named = [line.split("✗ ")[1] for line in third.stdout.splitlines() if " ch01  ✗ " in line]
    assert named and all(name.startswith("test_mock_") for name in named)  # which ones fail
    assert "`clawbook check ch01` shows" in third.stdout  # and how to see why
    fourth = clawbook(repo, "status", "--fresh")
    assert "Nothing changed" not in fourth.stdout and "Ran again" not in fourth.stdout
    assert table(fourth.stdout) == table(third.stdout)


def test_a_test_file_depends_on_the_modules_it_imports_and_what_they_import():
    from clawbook.learner.cache import Dependencies

    deps = Dependencies(REPO, REPO / "starter")
    read = {p.relative_to(REPO).as_posix() for p in deps.of(REPO / "tests" / "test_read_tool.py")}
    assert {"tests/test_read_tool.py", "starter/tools/read.py", "starter/types.py"} <= read
    assert "starter/permissions.py" not in read and "starter/main.py" not in read
    command = deps.of(REPO / "tests" / "test_plan_claw_command.py")
    assert REPO / "starter" / "permissions.py" in command  # it runs the claw command


def test_a_syntax_error_in_a_later_tool_breaks_no_finished_chapter(repo):
    """chapter 9b's patch.py does not parse: chapters 7 and 10, done already, stay done."""
    trim(repo, "ch10")
    fill(repo, "ch01", "ch02", "ch03", "ch05a", "ch05b", "ch06", "ch07", "ch08", "ch09a", "ch10")
    patch = repo / "starter" / "tools" / "patch.py"
    patch.write_text(patch.read_text() + "\ndef broken(:\n")
    result = clawbook(repo, "status")
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if "│" in line}
    assert "cannot import" in rows["ch09b"]
    assert "cannot import" not in rows["ch07"] and "cannot import" not in rows["ch10"]
    assert "Next: ch09b" in result.stdout


def test_a_forgotten_await_in_a_later_chapter_shows_the_learners_line(repo):
    """Chapter 21's subagent tool without the `await` on the child's run: the coroutine fails
    far away (its error even becomes the tool's result), yet the failure is shown at the line
    that made it, never in a file the learner did not edit."""
    curriculum = load()
    fill(repo, *[c.id for c in curriculum.chapters[: curriculum.index("ch21") + 1]])
    subagents = repo / "starter" / "subagents.py"
    line = edit(subagents, "finished = await child.run(", "finished = child.run(")
    result = clawbook(repo, "check", "ch21", "-k", "answer_is_the_tool_result")
    assert result.returncode == 1, result.stdout
    out = result.stdout
    assert f"at   starter/subagents.py:{line}   finished = child.run(args.prompt)" in out
    assert f"coroutine 'Agent.run' was made at starter/subagents.py:{line}" in out
    assert "at   starter/streaming.py" not in out


LEAVING_TEST = """
import subprocess


def test_mock_zz_leaves_a_process_behind():
    subprocess.run("setsid bash -c 'exec -a MARKER sleep 300' &", shell=True, check=True)
"""


def test_check_kills_what_the_tests_left_running_and_says_so(repo):
    from marked_processes import marked, unique_marker

    markers = unique_marker()
    marker = next(markers)
    try:
        test = LEAVING_TEST.replace("MARKER", marker)
        (repo / "tests" / "test_mock_zz_leaves.py").write_text(test)
        result = clawbook(repo, "check", "ch01", "-k", "leaves")
        assert marked(marker) == []
        line = f"! The tests left 1 process running; the run killed it: {marker} 300"
        assert line in result.stdout.splitlines(), result.stdout
    finally:
        next(markers, None)
