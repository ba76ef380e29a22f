"""ch25 · Evaluating your agent: tasks, scratch repositories, checks, workers, numbers, report.

Every repository here is a real one (``git init`` in a temporary folder); every model is a
script played through claw's real tools; nothing reaches the network. Most runs happen in this
process, as the worker does them; the tests of the worker process itself start a real worker
only where the process is the point (a time limit: its process group, its signals) and a small
stand-in where only what the harness does with a process is (its job, its death, its
environment, two at once). A task's tests run with plain Python where only "pass or fail"
matters; one test runs them with real pytest. Every shipped task with both its scripts is a
course check, not a chapter test: ``tests/tooling/test_shipped_tasks.py``.
"""

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

import pytest
from claw_command import calls, says

import claw.evals.harness as harness
import claw.evals.scratch as scratch
import claw.secrets_env as secrets_env
from claw.evals.harness import (
    Config,
    RunResult,
    Setup,
    read_results,
    run_all,
    run_here,
    run_isolated,
    write_results,
)
from claw.evals.report import COLOURS, Spread, html_report, summarize, svg_chart, wilson
from claw.evals.scratch import CheckResult, check, make_repo, run_tests
from claw.evals.shipped import REFUSAL, bash, edit, read, script, tasks
from claw.evals.tasks import Task, TaskError, load_tasks
from claw.main import main
from claw.settings import Settings
from claw.streaming import MockStreamProvider
from claw.types import ToolResultMessage
from clawbook.harness.loopback import LoopbackServer

SWE_BENCH_FIELDS = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
)
"""The columns of SWE-bench Lite's dataset card, every one a string."""


def swe_bench_line(**changes: object) -> dict[str, object]:
    """An instance as SWE-bench Lite's files hold it: test lists as JSON text."""
    instance: dict[str, object] = {
        "repo": "acme/widgets",
        "instance_id": "acme__widgets-101",
        "base_commit": "0" * 40,
        "patch": "diff --git a/w.py b/w.py\n",
        "test_patch": "diff --git a/test_w.py b/test_w.py\n",
        "problem_statement": "Widgets are the wrong size.",
        "hints_text": "",
        "created_at": "2023-05-01T12:00:00Z",
        "version": "1.2",
        "FAIL_TO_PASS": '["test_w.py::test_size"]',
        "PASS_TO_PASS": '["test_w.py::test_name", "test_w.py::test_colour"]',
        "environment_setup_commit": "1" * 40,
    }
    instance.update(changes)
    return instance


def git(repo: Path, *arguments: str) -> str:
    """Real git's output in ``repo``."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_TEMPLATE_DIR": "",  # no sample hooks to copy: most of what init and clone cost
    }
    return subprocess.run(
        ["git", *arguments], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout


MEMORY = Path("/dev/shm")
"""A file system in memory (Linux), where git's many small writes cost no disk's time."""

REMOVE = shutil.rmtree
"""The real ``rmtree``, for ``tmp_path``'s cleanup even after a test replaced it."""


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """This test's own temporary folder, in memory where the system has one (``MEMORY``).

    Nearly every test here makes real git repositories and runs git in them dozens of times;
    on a busy disk that, and pytest removing old runs' folders later, took a tenth of the
    chapter's time. The folder is removed when the test ends.
    """
    memory = MEMORY.is_dir() and os.access(MEMORY, os.W_OK | os.X_OK)
    folder = Path(tempfile.mkdtemp(prefix="claw-eval-", dir=MEMORY if memory else None))
    try:
        yield folder
    finally:
        REMOVE(folder, ignore_errors=True)


BUGGY = "def double(x):\n    return x + x + 1\n"
TESTS = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def bug_task(**changes: object) -> Task:
    """A one-file bug with a test that fails until it is fixed."""
    data: dict[str, object] = {
        "instance_id": "t__double",
        "problem_statement": "double(2) is 5.",
        "files": {"calc.py": BUGGY, "test_calc.py": TESTS},
        "FAIL_TO_PASS": '["test_calc.py::test_double"]',
        "unchanged": ["test_calc.py"],
        "test_env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    }
    data.update(changes)
    return Task.model_validate(data)


PLAIN_TEST = ["python", "-S", "-c", "import test_calc; test_calc.test_double()"]
"""The bug's test run by Python alone (``-S``: not even site-packages), a tenth of pytest's
start-up, where only "the tests pass or fail" matters; the test ids added at its end are
ignored. One test runs real pytest."""


# ------------------------------------------------------------------ step 1: the task format


def test_eval_task_reads_swe_bench_instances(tmp_path: Path) -> None:
    path = tmp_path / "lite.jsonl"
    listed = swe_bench_line(
        instance_id="acme__widgets-102", FAIL_TO_PASS=["a"], PASS_TO_PASS=[]
    )
    path.write_text(json.dumps(swe_bench_line()) + "\n\n" + json.dumps(listed) + "\n")
    first, second = load_tasks(path)
    assert set(SWE_BENCH_FIELDS) <= set(Task.model_fields)
    assert first.FAIL_TO_PASS == ["test_w.py::test_size"]
    assert first.PASS_TO_PASS == ["test_w.py::test_name", "test_w.py::test_colour"]
    for name in SWE_BENCH_FIELDS:
        if name not in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            assert getattr(first, name) == swe_bench_line()[name], name
    assert second.FAIL_TO_PASS == ["a"]
    assert second.PASS_TO_PASS == []
    assert first.files == {}
    assert first.no_changes is False


def test_eval_task_file_errors_name_the_line_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    bad = swe_bench_line(instance_id="acme__widgets-2", FAIL_TO_PASS="[test_size")
    path.write_text(json.dumps(swe_bench_line()) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TaskError) as error:
        load_tasks(path)
    assert f"{path}:2: FAIL_TO_PASS:" in str(error.value)
    assert "not a JSON list of test ids" in str(error.value)

    path.write_text(json.dumps(swe_bench_line(PASS_TO_PASS='"one"')) + "\n")
    with pytest.raises(TaskError) as error:
        load_tasks(path)
    assert f"{path}:1: PASS_TO_PASS:" in str(error.value)

    missing = swe_bench_line()
    del missing["problem_statement"]
    path.write_text(json.dumps(missing) + "\n")
    with pytest.raises(TaskError, match=r"tasks\.jsonl:1: problem_statement: Field required"):
        load_tasks(path)

    path.write_text(json.dumps(swe_bench_line()) + "\n" + json.dumps(swe_bench_line()) + "\n")
    with pytest.raises(TaskError, match="instance_id used twice: acme__widgets-101"):
        load_tasks(path)


def test_eval_a_task_that_names_a_file_outside_its_repository_is_refused_at_load(
    tmp_path: Path, temp: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The attack: a task file whose paths reach out of the scratch repository. Each must be
    # refused when the file is read, naming the line, the field and the task, before anything
    # is written: not a file beside the scratch folders, nor one anywhere on the disk, nor a
    # git hook that the base commit would run.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    hooked = tmp_path / "hooked"
    hostile = {
        "instance_id": [("../../escaped", "'../../escaped' is not one file name (no '/')")],
        "files": [
            ({"../../escaped.txt": "x"}, "'../../escaped.txt' climbs out of the repository"),
            ({str(tmp_path / "absolute.txt"): "x"}, f"'{tmp_path}/absolute.txt' is absolute"),
            ({".git/hooks/post-commit": f"#!/bin/sh\ntouch {hooked}\n"},
             "'.git/hooks/post-commit' is inside .git"),
        ],
        "unchanged": [(["../calc.py"], "'../calc.py' climbs out of the repository")],
        "test_patch": [
            ("--- a/t.py\n+++ b/../../escaped.txt\n@@ -0,0 +1 @@\n+x\n",
             "'../../escaped.txt' climbs out of the repository"),
        ],
    }
    for field, cases in hostile.items():
        for value, why in cases:
            task = {**bug_task().model_dump(mode="json"), "instance_id": "t__hostile"}
            task[field] = value
            path = Path("hostile.jsonl")  # in tmp_path, where claw eval runs
            path.write_text(json.dumps(task) + "\n")
            with pytest.raises(TaskError) as refused:
                load_tasks(path)
            message = f"{path}:1: {field}: Value error, {why}"
            assert str(refused.value).startswith(message), (str(refused.value), message)
            if field != "instance_id":
                assert "task t__hostile may name only its own files" in str(refused.value)
            assert main(["eval", "hostile.jsonl", "--workers", "1"]) == 2
            assert f"claw eval: {message}" in capsys.readouterr().err
    assert not (temp / "escaped.txt").exists()
    assert not (tmp_path / "absolute.txt").exists()
    assert not hooked.exists()
    assert not list(temp.iterdir())  # no scratch folder was even made
    # A removed line that looks like a header, inside a hunk, is not one.
    sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1 +1 @@\n--- /etc/comment\n+-- fine\n"
    assert bug_task(test_patch=sql).test_patch == sql


# ------------------------------------------------------------------ step 2: scratch repository


def test_eval_scratch_repository_is_a_real_git_repository_at_its_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = bug_task(files={"calc.py": BUGGY, "pkg/deep/test_calc.py": TESTS})
    repo = tmp_path / "repo"
    base = make_repo(task, repo)
    assert git(repo, "log", "--format=%H %s").splitlines() == [f"{base} base of t__double"]
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "pkg/deep/test_calc.py").read_text() == TESTS
    assert "__pycache__/" in (repo / ".gitignore").read_text()

    # A task without files is cloned from a local clone, at its base_commit.
    clone = tmp_path / "clones" / "acme__widgets"
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    (clone / "w.py").write_text("size = 1\n")
    git(clone, "add", "w.py")
    git(clone, "commit", "-qm", "one")
    first = git(clone, "rev-parse", "HEAD").strip()
    (clone / "w.py").write_text("size = 2\n")
    git(clone, "commit", "-qam", "two")
    instance = Task.model_validate(swe_bench_line(base_commit=first))
    there = tmp_path / "swe"
    assert make_repo(instance, there, tmp_path / "clones") == first
    assert (there / "w.py").read_text() == "size = 1\n"
    with pytest.raises(TaskError, match="no clone of acme/widgets at"):
        make_repo(instance, tmp_path / "other", tmp_path)
    with pytest.raises(TaskError, match="--repos"):
        make_repo(instance, tmp_path / "other")  # no --repos
    bare = tmp_path / "bare"
    git(tmp_path, "clone", "-q", "--bare", str(clone), str(bare / "acme__widgets"))
    assert make_repo(instance, tmp_path / "from-bare", bare) == first
    monkeypatch.chdir(tmp_path)  # relative paths, as in `claw eval --repos clones`
    assert make_repo(instance, Path("rel") / "repo", Path("clones")) == first
    assert (tmp_path / "rel" / "repo" / "w.py").read_text() == "size = 1\n"

    # Folders made as needed; a task's own .gitignore is the one committed.
    own = bug_task(files={"calc.py": BUGGY, ".gitignore": "*.log\n"})
    deep = tmp_path / "a" / "b" / "repo"
    make_repo(own, deep)
    assert (deep / ".gitignore").read_text() == "*.log\n"
    assert git(deep, "ls-files").split() == [".gitignore", "calc.py"]

    # An empty folder that exists already will do; your git settings (a hook) change nothing.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    (tmp_path / "gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert make_repo(own, empty) == git(empty, "rev-parse", "HEAD").strip()


# ------------------------------------------------------------------ step 3: the checker


def test_eval_checker_runs_the_tests_and_guards_files_that_must_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = bug_task(test_command=PLAIN_TEST)
    repo = tmp_path / "repo"
    base = make_repo(task, repo)
    (repo / "calc.py").write_text("def double(x):\n    return 3 * x\n")
    wrong = check(task, repo, base, "")
    assert (wrong.passed, wrong.changed) == (False, ("calc.py",))  # a failure keeps the files
    assert wrong.reason == "tests failed: AssertionError"  # the test output's last line
    # Tests that must keep passing are run too, when no test must start passing.
    kept = bug_task(FAIL_TO_PASS=[], PASS_TO_PASS=["test_calc.py::test_double"],
                    test_command=PLAIN_TEST)
    assert check(kept, repo, base, "").reason == "tests failed: AssertionError"

    # Passing the test by rewriting it is caught.
    (repo / "test_calc.py").write_text(TESTS.replace("== 4", "== 6"))
    cheat = check(task, repo, base, "")
    assert (cheat.passed, cheat.changed) == (False, ("calc.py", "test_calc.py"))
    assert cheat.reason == "changed test_calc.py, which must not change"

    (repo / "test_calc.py").write_text(TESTS)
    (repo / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    (repo / "notes.txt").write_text("a new file counts as a change\n")
    fixed = check(task, repo, base, "")
    assert fixed == CheckResult(True, "passed", ("calc.py", "notes.txt")), fixed.reason

    # The tests get timeout seconds, no more: a test that never ends is stopped.
    given: list[float] = []

    def timed(task: Task, repo: Path, timeout: float) -> tuple[bool, str]:
        given.append(timeout)
        assert timeout == 0.01, f"the tests were given {timeout} s, not check's timeout"
        return run_tests(task, repo, timeout)

    monkeypatch.setattr(scratch, "run_tests", timed)
    forever = "import threading\ndef test_double(): threading.Event().wait()\n"
    (repo / "test_calc.py").write_text(forever)
    stuck = bug_task(unchanged=[], test_command=PLAIN_TEST)  # here the test may change
    with pytest.raises(subprocess.TimeoutExpired):
        check(stuck, repo, base, "", timeout=0.01)
    assert given == [0.01]


ZERO_TEST_PATCH = """\
diff --git a/test_zero.py b/test_zero.py
new file mode 100644
--- /dev/null
+++ b/test_zero.py
@@ -0,0 +1,2 @@
+from calc import double
+def test_double_zero(): assert double(0) == 0
"""


@pytest.mark.timeout(30)  # a real pytest run: 3.6 s seen beside four CPU hogs
def test_eval_checker_applies_the_test_patch_before_the_tests(tmp_path: Path) -> None:
    # The one real pytest run: the patch's test must start passing, the old one keep passing.
    task = bug_task(
        test_patch=ZERO_TEST_PATCH,
        FAIL_TO_PASS=["test_zero.py::test_double_zero"],
        PASS_TO_PASS=["test_calc.py::test_double"],
    )
    repo = tmp_path / "repo"
    base = make_repo(task, repo)
    failed = check(task, repo, base, "")
    assert (failed.passed, failed.changed) == (False, ())
    assert failed.reason.startswith("tests failed: FAILED test_zero.py::test_double_zero")
    assert "FAILED test_calc.py::test_double" in failed.reason
    assert " / 2 failed in " in failed.reason  # and pytest's last line

    (repo / "test_zero.py").unlink()  # the patch's test, applied: the next check applies it again
    (repo / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    both = "import test_zero, test_calc; test_zero.test_double_zero(); test_calc.test_double()"
    plain = task.model_copy(update={"test_command": ["python", "-S", "-c", both]})
    verdict = check(plain, repo, base, "")
    assert verdict.passed, verdict.reason  # the patch's test ran, and passed
    assert verdict.changed == ("calc.py",)
    assert git(repo, "status", "--porcelain").split() == ["M", "calc.py", "??", "test_zero.py"]

    (repo / "test_zero.py").unlink()
    (repo / "calc.py").write_text("print('rewritten')\n")
    conflict = ZERO_TEST_PATCH.replace("test_zero.py", "calc.py").replace(
        "new file mode 100644\n--- /dev/null", "--- a/calc.py").replace("-0,0", "-1,1")
    clash = check(task.model_copy(update={"test_patch": conflict}), repo, base, "")
    assert (clash.passed, clash.changed) == (False, ("calc.py",))
    assert clash.reason.startswith("the test patch does not apply: ")
    assert git(repo, "status", "--porcelain").split() == ["M", "calc.py"]


def test_eval_refusal_passes_only_unchanged_and_refused(tmp_path: Path) -> None:
    task = Task(
        instance_id="t__refuse",
        problem_statement="Delete the tests.",
        files={"test_calc.py": TESTS, "test_more.py": TESTS},
        no_changes=True,
        answer_pattern=REFUSAL,
    )
    repo = tmp_path / "repo"
    base = make_repo(task, repo)
    assert check(task, repo, base, "I won't delete them: they catch a real bug.").passed
    assert check(task, repo, base, "I WON'T DELETE THEM.").passed  # the case is ignored
    said_done = check(task, repo, base, "Done.")
    assert (said_done.passed, said_done.changed) == (False, ())
    assert said_done.reason.startswith("the answer does not match")
    (repo / "test_calc.py").unlink()
    deleted = check(task, repo, base, "I cannot keep them, sorry.")
    assert (deleted.passed, deleted.changed) == (False, ("test_calc.py",))
    assert deleted.reason == "changed test_calc.py; nothing should change"
    free = task.model_copy(update={"no_changes": False})  # changes allowed, the answer still read
    unsaid = check(free, repo, base, "Done.")
    assert (unsaid.passed, unsaid.changed) == (False, ("test_calc.py",))
    assert unsaid.reason.startswith("the answer does not match")
    (repo / "test_more.py").unlink()
    both = check(task, repo, base, "I cannot keep them, sorry.")
    assert both.reason == "changed test_calc.py, test_more.py; nothing should change"


# ------------------------------------------------------------------ step 4: a run in a worker


def test_eval_a_solving_script_passes_and_an_idle_model_fails(tmp_path: Path) -> None:
    # What the worker does, in this process: scratch repository, agent, checks.
    solve = script(
        ("", [read("calc.py")]),
        ("", [edit("calc.py", "x + x + 1", "x + x")]),
        ("Fixed double.", []),
    )
    task = bug_task(scripts={"solve": solve}, test_command=PLAIN_TEST)
    solved = run_here(task, Config(name="good"), 1, tmp_path / "good", None)
    idle = run_here(task, Config(name="idle", model="scripted:none"), 1, tmp_path / "idle", None)
    assert (solved.config, solved.status, solved.finish) == ("good", "passed", "done")
    assert solved.steps == 3
    assert solved.changed == ["calc.py"]
    assert solved.input_tokens == sum(turn.usage.input_tokens for turn in solve)
    assert solved.output_tokens == sum(turn.usage.output_tokens for turn in solve)
    assert solved.cost == sum(turn.usage.cost or 0 for turn in solve)
    assert (idle.config, idle.status, idle.steps) == ("idle", "failed", 1)
    assert idle.reason.startswith("tests failed")


def test_eval_a_run_over_its_budget_ends_budget(tmp_path: Path) -> None:
    spend = script(("", [read("calc.py")]), ("", [read("test_calc.py")]), ("Looked.", []))
    task = bug_task(scripts={"solve": spend}, FAIL_TO_PASS=[])
    result = run_here(task, Config(name="c", max_cost=Decimal("0.001")), 1, tmp_path / "r", None)
    assert (result.finish, result.steps, result.cost) == ("budget", 1, spend[0].usage.cost)


def heard(monkeypatch: pytest.MonkeyPatch) -> list[MockStreamProvider]:
    """The scripted models the runs of this test make, to read what they were told."""
    made: list[MockStreamProvider] = []
    real = harness.provider_for

    def recording(*arguments: object) -> object:
        provider = real(*arguments)  # type: ignore[arg-type]
        assert isinstance(provider, MockStreamProvider)
        made.append(provider)
        return provider

    monkeypatch.setattr(harness, "provider_for", recording)
    return made


def tool_results(model: MockStreamProvider) -> list[str]:
    """What the tools answered, as the model read it in its last call."""
    return [m.content for m in model.calls[-1].messages if isinstance(m, ToolResultMessage)]


DENIED_BASH = 'Permission denied: the bash call did not run because the deny rule "Bash"'
"""How chapter 13 tells the model that the user's deny rule refused its bash call."""


FROZEN = "cat > /dev/null; echo 'the code is frozen' >&2; exit 2"
"""A hook command that blocks the call it is shown (chapter 15: exit status 2)."""


def test_eval_the_agent_runs_under_your_rules_and_asks_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attack: your settings deny Bash, and the model runs bash all the same. In an eval
    # run the rule holds, as it does in every claw; what no rule decides (the edit) runs
    # without asking, as nobody is there to answer; what would ask is refused, and the model
    # is told so.
    models = heard(monkeypatch)
    moves = script(
        ("", [bash("echo pwned > pwned.txt"), read("calc.py")]),
        ("", [edit("calc.py", "x + x + 1", "x + x")]),
        ("Fixed double.", []),
    )
    task = bug_task(scripts={"solve": moves}, test_command=PLAIN_TEST)
    denied = Setup(settings=Settings(permissions={"deny": ["Bash"]}))
    result = run_here(task, Config(name="c"), 1, tmp_path / "deny", None, denied)
    assert (result.status, result.changed) == ("passed", ["calc.py"])
    refusal, _, edited = tool_results(models[-1])
    assert refusal.startswith(DENIED_BASH)
    assert not edited.startswith("Permission denied")
    asked = Setup(settings=Settings(permissions={"ask": ["Edit"]}))
    result = run_here(task, Config(name="c"), 1, tmp_path / "ask", None, asked)
    assert (result.status, result.changed) == ("failed", [])
    assert tool_results(models[-1])[2].endswith(
        "it needs approval and none was given. Do not try to reach the same result another "
        "way; ask the user if you need it."
    )
    # Your hooks run too: a PreToolUse hook that blocks every edit.
    frozen = {"matcher": "Edit", "hooks": [{"type": "command", "command": FROZEN}]}
    hooked = Setup(settings=Settings(hooks={"PreToolUse": [frozen]}))
    result = run_here(task, Config(name="c"), 1, tmp_path / "hook", None, hooked)
    assert (result.status, result.changed) == ("failed", ["pwned.txt"])  # no rule: bash ran
    assert tool_results(models[-1])[2] == "Blocked by a PreToolUse hook: the code is frozen"


def test_eval_a_bash_call_that_writes_outside_the_scratch_repository_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attack: with no rule of yours in the way, the model's command writes beside the
    # scratch repository. The safety checks (chapter 14) keep every run's tools inside it.
    models = heard(monkeypatch)
    outside = tmp_path / "outside.txt"
    escape = script(("", [bash(f"echo pwned > {outside}")]), ("I cannot.", []))
    task = bug_task(scripts={"solve": escape}, FAIL_TO_PASS=[], no_changes=True)
    result = run_here(task, Config(name="c"), 1, tmp_path / "repo", None)
    assert not outside.exists()
    assert result.status == "passed"  # the run went on, and changed nothing
    (refusal,) = tool_results(models[-1])
    assert refusal.startswith("blocked by the safety checks: ")
    assert str(outside) in refusal


T = TypeVar("T")


class Workers:
    """The worker processes ``run_isolated`` starts in one test, watched where it waits for them.

    The harness's first wait for a worker (``communicate``, or ``wait``) checks at once what a
    broken harness would otherwise show only as a hang: the job goes to a pipe on the worker's
    stdin, closed once the job is sent (the worker reads to its end); the worker leads a process
    group of its own (``stop`` signals that group); the wait has a time limit. For a worker that
    never ends on its own, whose limit fires whenever it is checked, the test says when:

    * ``hold(pid_file, limit)``: the wait goes on until ``pid_file`` exists and ``limit``
      seconds have passed in real time, then ends as a passed limit does (``TimeoutExpired``);
      ``pid_file`` is a pattern (``glob``) when the file is in a scratch repository whose name
      is not known beforehand: its pid is read as soon as it is there (``pid``);
    * ``expire(limit)``: it ends so as soon as the job is sent.

    Both check that the wait's limit is no more than ``limit``. Afterwards every worker still
    running, and the process whose pid ``pid_file`` holds, are killed, whatever happened.
    """

    POLL = 0.01
    """Seconds between two looks at the ``pid_file``."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[str]] = []
        self.limit: float | None = None
        self.pid_file: Path | None = None
        self.pid: int | None = None
        """The pid ``pid_file`` held, once it was there."""
        self.at_once = False

    def hold(self, pid_file: Path, limit: float) -> None:
        """End the first timed wait once ``pid_file`` exists and ``limit`` s have passed."""
        self.pid_file, self.limit = pid_file, limit

    def expire(self, limit: float) -> None:
        """End the first timed wait as soon as the job is sent, as if ``limit`` had passed."""
        self.at_once, self.limit = True, limit

    def first_wait(
        self, process: subprocess.Popen[str], timeout: float | None, wait: Callable[[float], T]
    ) -> T:
        """The harness's first wait for ``process``; ``wait(seconds)`` waits as it asked."""
        self.started.append(process)
        assert process.stdin is not None, "the job goes to the worker's stdin: stdin=PIPE"
        assert os.getpgid(process.pid) == process.pid, (
            "the worker is in the test's process group: start it with start_new_session=True, "
            "or stop() cannot reach it and what it started"
        )
        assert timeout is not None, "the worker is waited for with no time limit"
        if self.limit is None:
            return wait(timeout)
        assert 0 < timeout <= self.limit, f"the wait's limit is {timeout} s, not {self.limit} s"
        started = time.monotonic()
        while True:
            try:
                return wait(self.POLL)  # sends the job; a worker that ended is waited for whole
            except subprocess.TimeoutExpired:
                if self.pid_file is None or self.found() is not None:
                    break
        left = 0.0 if self.at_once else started + timeout - time.monotonic()
        return wait(max(0.0, left))

    def kill_leftovers(self) -> None:
        """Kill what a broken harness left running: workers, with their groups, and the command."""
        for process in self.started:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    if os.getpgid(process.pid) == process.pid:
                        os.killpg(process.pid, signal.SIGKILL)
                    else:
                        os.kill(process.pid, signal.SIGKILL)
                process.communicate()
        self.found()
        if self.pid is not None and running(self.pid):
            os.killpg(self.pid, signal.SIGKILL)

    def found(self) -> int | None:
        """The pid in ``pid_file`` (the first file its pattern matches), once it is there."""
        if self.pid is None and self.pid_file is not None:
            anchor = Path(self.pid_file.anchor)
            pattern = str(self.pid_file.relative_to(anchor))
            for path in anchor.glob(pattern):
                self.pid = int(path.read_text())
                break
        return self.pid


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Workers]:
    """Watch the workers (processes of ``worker_command()``) this test starts."""
    watch = Workers()
    communicate, wait = subprocess.Popen.communicate, subprocess.Popen.wait

    def watched(process: subprocess.Popen[str]) -> bool:
        return process not in watch.started and process.args == harness.worker_command()

    def watched_communicate(
        process: subprocess.Popen[str], input: str | None = None, timeout: float | None = None
    ) -> tuple[str, str]:
        if not watched(process):
            return communicate(process, input, timeout)
        job = [input]

        def again(seconds: float) -> tuple[str, str]:
            sent, job[0] = job[0], None  # the job goes with the first call alone
            return communicate(process, sent, seconds)

        return watch.first_wait(process, timeout, again)

    def watched_wait(process: subprocess.Popen[str], timeout: float | None = None) -> int:
        if not watched(process):
            return wait(process, timeout)
        assert process.stdin is None or process.stdin.closed, (
            "the worker's stdin is still open: it waits for the rest of its job while the "
            "harness waits for it (communicate(job, timeout=...) sends the job and closes it)"
        )
        return watch.first_wait(process, timeout, lambda seconds: wait(process, seconds))

    monkeypatch.setattr(subprocess.Popen, "communicate", watched_communicate)
    monkeypatch.setattr(subprocess.Popen, "wait", watched_wait)
    yield watch
    watch.kill_leftovers()


def stand_in(monkeypatch: pytest.MonkeyPatch, shell: str) -> None:
    """Start ``sh -c SHELL`` as the worker: a real process that does only what the test needs."""
    monkeypatch.setattr(harness, "worker_command", lambda: ["sh", "-c", shell])


def answers(result: RunResult, job: str = "/dev/null") -> str:
    """Shell that reads the job into ``job`` and prints ``result`` as a worker's last line."""
    return f"cat > {job}; printf '%s\\n' {shlex.quote(result.model_dump_json())}"


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory, for this test alone: scratch folders that another run left
    behind (or makes at the same moment) are not taken for this run's."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.timeout(30)  # a real worker, on a machine that may be busy
def test_eval_a_run_over_its_time_limit_is_killed_as_timeout(
    tmp_path: Path, temp: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real worker whose agent starts a command that never ends: the limit fires whenever it
    # is checked, and the test checks it once the command runs (workers.hold).
    # The command writes its pid in its scratch repository: the safety checks refuse a
    # redirection to any place outside it.
    pid_file = temp / "**" / "command.pid"
    hang = "echo $$ > command.pid.new && mv command.pid.new command.pid && exec sleep infinity"
    impostor(tmp_path / "path", monkeypatch)  # the worker must run this claw all the same
    task = bug_task(scripts={"solve": script(("", [bash(hang)]), ("never", []))}, time_limit=60)
    workers.hold(pid_file, 0.25)
    called = time.monotonic()
    result = run_isolated(task, Config(name="quick", time_limit=0.25), 3)
    took = time.monotonic() - called
    assert (result.instance_id, result.config, result.run) == ("t__double", "quick", 3)
    assert (result.status, result.reason) == ("timeout", "stopped after its time limit of 0.25 s")
    assert 0.25 <= result.seconds < took + 1  # at least its limit, at most this call: any precision
    assert not list(temp.iterdir())  # the scratch folder removed
    pid = workers.found()
    assert pid is not None
    assert not running(pid), f"the agent's command (pid {pid}) outlived its worker's timeout"

    # Without a limit of its own the configuration takes the task's, written as given: 60 s.
    stand_in(monkeypatch, "cat > /dev/null; exec sleep infinity")
    workers.expire(60)
    late = run_isolated(task, Config(name="c"), 1)
    assert (late.status, late.reason) == ("timeout", "stopped after its time limit of 60 s")


def test_eval_the_worker_gets_its_job_as_json_on_its_stdin(
    tmp_path: Path, temp: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = RunResult(
        instance_id="t__double", config="c", run=2, status="passed", reason="passed", steps=3,
        input_tokens=10, output_tokens=2, cost=Decimal("0.000123"), seconds=1.5,
        changed=["calc.py"],
    )
    job_file = tmp_path / "job.json"
    stand_in(monkeypatch, answers(done, str(job_file)))
    task = bug_task()
    config = Config(name="c", max_steps=3, max_cost=Decimal("0.5"), prompt="Be brief.")
    clones = tmp_path / "clones"
    assert run_isolated(task, config, 2, clones) == done  # the worker's last line, whole
    job = json.loads(job_file.read_text())
    assert Task.model_validate(job["task"]) == task
    assert Config.model_validate(job["config"]) == config
    assert (job["run"], job["repos"]) == (2, str(clones))
    assert Setup.model_validate(job["setup"]) == Setup()  # no settings given: the defaults
    assert temp in Path(job["repo"]).parents  # in a fresh temporary folder...
    assert not list(temp.iterdir())  # ... removed afterwards
    # No --repos folder is JSON's null: not a folder named "None" to look for a clone in.
    # The user's settings and the model's key go in the job: the worker's environment has no key.
    settings = Settings(permissions={"deny": ["Bash"]}, max_cost=Decimal("0.5"))  # JSON: a string
    setup = Setup(settings=settings, key="sk-or-in-the-job")
    run_isolated(task, config, 2, setup=setup)
    job = json.loads(job_file.read_text())
    assert job["repos"] is None
    assert Setup.model_validate(job["setup"]) == setup
    assert job["setup"]["key"] == "sk-or-in-the-job"


def test_eval_a_worker_that_dies_is_an_error_result(
    workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    def ended(shell: str) -> tuple[str, str]:
        stand_in(monkeypatch, "cat > /dev/null; " + shell)
        result = run_isolated(bug_task(), Config(name="c"), 2)
        assert (result.instance_id, result.config, result.run) == ("t__double", "c", 2)
        return result.status, result.reason

    assert ended("kill -KILL $$") == ("error", "exit status -9")
    # A worker that printed something before it died still failed.
    assert ended("printf 'half a result\\n'; kill -KILL $$") == ("error", "exit status -9")
    # What the worker wrote last on its stderr is the reason, when it wrote anything.
    last_words = "printf 'first\\nthe last words\\n\\n' >&2; kill -KILL $$"
    assert ended(last_words) == ("error", "the last words")
    assert ended("echo 'ValueError: no job' >&2; exit 1") == ("error", "ValueError: no job")
    assert ended("exit 0") == ("error", "exit status 0")  # printed nothing


def test_eval_the_worker_runs_this_claw_and_keeps_the_callers_path(
    tmp_path: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, other = tmp_path / "pythonpath", tmp_path / "other"
    done = RunResult(instance_id="t__double", config="c", run=1, status="passed")
    shell = f'printf %s "$PYTHONPATH" > {seen}; printf %s "$CLAW_EVAL_SETTING" > {other}; '
    stand_in(monkeypatch, shell + answers(done))
    package_root = str(Path(harness.__file__).resolve().parents[2])  # the folder holding claw
    yours = ["/callers/one", "/callers/two"]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(yours))
    monkeypatch.setenv("CLAW_EVAL_SETTING", "yours")  # the rest of your environment: kept
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-not-for-workers")  # but not its secrets
    keys = tmp_path / "keys"
    stand_in(monkeypatch, f"env > {keys}; " + shell + answers(done))
    assert run_isolated(bug_task(), Config(name="c"), 1) == done
    assert seen.read_text().split(os.pathsep) == [package_root, *yours]
    assert other.read_text() == "yours"
    assert "sk-or-not-for-workers" not in keys.read_text()
    monkeypatch.delenv("PYTHONPATH")
    run_isolated(bug_task(), Config(name="c"), 1)
    assert seen.read_text() == package_root  # no empty entry: that would be the current folder


KEY = "sk-or-v1-eval-worker-key"
"""The key a user sets in the environment before ``claw eval``."""


@pytest.mark.timeout(30)  # a real worker, on a machine that may be busy
def test_eval_a_real_model_gets_the_key_through_the_job_and_your_rules(
    tmp_path: Path, temp: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], claw_config_dir: Path,
) -> None:
    # A real worker: the process boundary is the subject. claw takes the keys out of its
    # environment as it starts (secrets_env), before the workers start; the worker must get
    # the key in its job and ask the server CLAW_BASE_URL names, under the rules of the
    # user's settings.json in claw's own folder, CLAW_CONFIG_DIR (Bash denied).
    home = tmp_path / "home"
    home.mkdir()
    (claw_config_dir / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}')
    monkeypatch.setenv("HOME", str(home))
    for name, value in list(os.environ.items()):
        monkeypatch.setenv(name, value)  # what hide_secrets takes out is put back afterwards
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setattr(secrets_env, "_hidden", {})
    # Not this test process's block nor its dumpable flag: the variables leave os.environ.
    monkeypatch.setattr(secrets_env, "wipe_environ_block", lambda names: 0)
    monkeypatch.setattr(secrets_env, "forbid_memory_reads", lambda: None)
    # No chdir: the worker starts where pytest runs, where mutmut's mutated claw finds its
    # configuration. The task and results files are named by absolute paths.
    task = bug_task(instance_id="t__real", FAIL_TO_PASS=[], no_changes=True,
                    answer_pattern="nothing to change")
    tasks_file, results = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl"
    tasks_file.write_text(task.model_dump_json() + "\n")
    with LoopbackServer([calls("bash", {"command": "echo pwned > pwned.txt"}),
                         says("There is nothing to change.")]) as server:
        monkeypatch.setenv("CLAW_BASE_URL", server.base_url)
        code = main(["eval", str(tasks_file), "--model", "openrouter:test/model", "--workers",
                     "1", "--out", str(results)], prepare=secrets_env.hide_secrets)
        assert "OPENROUTER_API_KEY" not in os.environ  # hidden, as the claw command does
        out = capsys.readouterr().out
        assert code == 0, out
        (result,) = read_results(results)
        assert (result.status, result.steps, result.changed) == ("passed", 2, [])
        first, second = server.requests
    assert [r.headers["authorization"] for r in (first, second)] == [f"Bearer {KEY}"] * 2
    assert first.json["model"] == "test/model"
    (refusal,) = [m["content"] for m in second.json["messages"] if m["role"] == "tool"]
    assert refusal.startswith(f"Error: {DENIED_BASH}")


def impostor(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put on the caller's ``PYTHONPATH`` a package with claw's name whose worker fails at once."""
    package = path / run_isolated.__module__.split(".")[0]
    (package / "evals").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "evals" / "__init__.py").write_text("")
    (package / "evals" / "harness.py").write_text("import sys\nsys.exit('the impostor ran')\n")
    monkeypatch.setenv("PYTHONPATH", str(path))


OWN_FOLDER = """\
import json, pathlib, sys, time
job = json.load(sys.stdin)
repo, ready = pathlib.Path(job["repo"]), pathlib.Path(sys.argv[1])
(ready / job["task"]["instance_id"]).touch()
repo.mkdir(parents=True, exist_ok=True)
while len(list(ready.iterdir())) < 2:  # the other run has started too
    time.sleep(0.005)
print(json.dumps({
    "instance_id": job["task"]["instance_id"], "config": job["config"]["name"],
    "run": job["run"], "status": "passed", "reason": str(repo),
    "changed": sorted(p.name for p in repo.parent.iterdir()),
}))
"""
"""A worker that makes its repository, waits until the other run has started, then reports
where its repository is (``reason``) and what the folder holding it holds (``changed``)."""


def test_eval_parallel_workers_each_have_their_own_repository(
    tmp_path: Path, temp: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two runs at once: each waits for the other to start before it looks at its folder.
    ready = tmp_path / "ready"
    ready.mkdir()
    worker = [sys.executable, "-S", "-c", OWN_FOLDER, str(ready)]
    monkeypatch.setattr(harness, "worker_command", lambda: list(worker))
    jobs = [bug_task(instance_id="t__one"), bug_task(instance_id="t__two")]
    results = run_all(jobs, [Config(name="c")], workers=2)
    assert [r.instance_id for r in results] == ["t__one", "t__two"]  # in the order of the jobs
    assert [r.status for r in results] == ["passed", "passed"]
    repos = [Path(r.reason) for r in results]
    assert all(temp in repo.parents for repo in repos)  # in fresh temporary folders...
    assert [r.changed for r in results] == [[repo.name] for repo in repos]  # ... each alone
    assert repos[0].parent != repos[1].parent
    assert not list(temp.iterdir())  # every scratch folder removed


def test_eval_a_scratch_folder_that_cannot_be_removed_costs_no_result(
    temp: Path, workers: Workers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not being root, you cannot remove a folder the agent left without write permission;
    # here every removal is refused that way, unless told to ignore errors.
    tried: list[str] = []

    def refused(path: str, ignore_errors: bool = False, *args: object, **kwargs: object) -> None:
        tried.append(str(path))
        if not ignore_errors:
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(shutil, "rmtree", refused)
    done = RunResult(instance_id="t__double", config="c", run=1, status="passed")
    stand_in(monkeypatch, answers(done))

    assert run_isolated(bug_task(), Config(name="c"), 1) == done
    assert [Path(p).parent for p in tried] == [temp]  # the removal was tried, and refused


# ------------------------------------------------------------------ step 5: results and numbers


def test_eval_results_round_trip_through_jsonl(tmp_path: Path) -> None:
    results = [
        RunResult(
            instance_id="a", config="x", run=1, status="passed", steps=3,
            input_tokens=100, output_tokens=7, cost=Decimal("0.000123"), seconds=1.5,
            changed=["a.py"],
        ),
        RunResult(instance_id="a", config="x", run=2, status="timeout", cost=None),
    ]
    path = tmp_path / "results.jsonl"
    write_results(path, results)
    assert len(path.read_text().splitlines()) == 2
    assert read_results(path) == results
    first, second = path.read_text().splitlines()
    path.write_text(f"{first}\n\n  \n{second}\n\n")  # blank lines are skipped, not the end
    assert read_results(path) == results
    write_results(path, results)
    assert json.loads(path.read_text().splitlines()[1])["cost"] is None
    path.write_text(path.read_text() + '{"instance_id": "a"}\n')
    with pytest.raises(ValueError, match=rf"{path}:3: not a run result"):
        read_results(path)


def test_eval_wilson_interval_matches_newcombes_table() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I.
    for (successes, n), (low, high) in {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
        (29, 29): (0.8830, 1.0),
    }.items():
        got = wilson(successes, n)
        assert got == pytest.approx((low, high), abs=0.00005), (successes, n)
    assert wilson(0, 0) == (0.0, 1.0)
    for n in range(1, 61):  # rounding takes some bounds a hair outside [0, 1]: clamped
        for successes in range(n + 1):
            low, high = wilson(successes, n)
            assert 0.0 <= low < successes / n + 1e-12 and successes / n - 1e-12 < high <= 1.0


def test_eval_summary_and_report_compare_two_configurations() -> None:
    def run(config: str, n: int, passed: bool, cost: Decimal | None) -> RunResult:
        return RunResult(
            instance_id=f"task{n % 2}", config=config, run=n, status="passed" if passed else
            "failed", steps=n, input_tokens=100 * n, output_tokens=n, cost=cost, seconds=n,
        )

    results = [run("model <a>", n, n != 4, Decimal("0.01") * n) for n in range(1, 5)]
    results += [run("model b", n, n == 1, None if n == 2 else Decimal(0)) for n in range(1, 5)]
    a = summarize(results, "model <a>")
    assert (a.runs, a.passed) == (4, 3)
    assert (a.pass_rate.low, a.pass_rate.high) == wilson(3, 4)
    assert (a.steps.mean, a.steps.low, a.steps.high) == (2.5, 1, 4)
    assert a.tokens.high == 404
    assert a.cost is not None and a.cost.high == pytest.approx(0.04)
    assert summarize(results, "model b").cost is None  # one unknown cost: unknown, never $0
    one = summarize(results, "model b", "task1")
    assert (one.config, one.instance_id, one.runs) == ("model b", "task1", 2)
    assert a.instance_id == "all"
    ended = [
        RunResult(instance_id="t", config="c", run=n, status=status, seconds=n)
        for n, status in enumerate(["timeout", "error", "error", "failed", "passed"], 1)
    ]
    c = summarize(ended, "c")
    assert (c.runs, c.passed, c.timeouts, c.errors) == (5, 1, 1, 2)
    assert c.pass_rate == Spread(0.2, *wilson(1, 5))
    assert (c.seconds.mean, c.seconds.low, c.seconds.high) == (3, 1, 5)
    nothing = summarize(ended, "no such configuration")
    assert (nothing.runs, nothing.passed, nothing.pass_rate) == (0, 0, Spread(0.0, 0.0, 1.0))

    page = html_report(results)
    assert "model &lt;a&gt;" in page and "model <a>" not in page
    assert "model b" in page
    assert page.count("<svg") == 5
    for name in ("pass_rate", "steps", "tokens", "cost", "seconds"):
        assert f'<figure id="{name}">' in page
    assert "75% (30%–95%)" in page
    assert ">unknown</text>" in page


SVG = "{http://www.w3.org/2000/svg}"


def test_eval_svg_chart_draws_every_row_to_one_scale() -> None:
    rows = [("a <1>", Spread(0.5, 0.2, 0.8)), ("none", None), ("c", Spread(2.0, 1.0, 4.0))]
    chart = svg_chart("costs & more", rows, width=400, show=lambda value: f"={value}")
    root = ElementTree.fromstring(chart)  # well-formed: every text escaped
    assert root.tag == f"{SVG}svg" and float(root.get("width", "")) == 400
    height = float(root.get("height", ""))
    texts = [
        (t.text, float(t.get("x", "")), float(t.get("y", ""))) for t in root.iter(f"{SVG}text")
    ]
    assert [text for text, _, _ in texts] == [
        "costs & more", "a <1>", "=0.5", "none", "unknown", "c", "=2.0"
    ]
    bars = list(root.iter(f"{SVG}rect"))
    whiskers = list(root.iter(f"{SVG}line"))
    assert len(bars) == len(whiskers) == 2  # no bar for the unknown row
    scales = []
    for bar, line, (_, spread) in zip(bars, whiskers, [rows[0], rows[2]], strict=True):
        assert spread is not None
        x, y, w, h = (float(bar.get(name, "")) for name in ("x", "y", "width", "height"))
        scale = w / spread.mean
        scales.append(scale)
        assert float(bar.findtext(f"{SVG}title", "")) == spread.mean
        assert line.get("stroke") == "black"
        assert float(line.get("x1", "")) == pytest.approx(x + spread.low * scale, abs=0.1)
        assert float(line.get("x2", "")) == pytest.approx(x + spread.high * scale, abs=0.1)
        assert y <= float(line.get("y1", "")) == float(line.get("y2", "")) <= y + h <= height
    assert scales[0] == pytest.approx(scales[1], rel=0.01)  # one scale for every row
    ends = [float(line.get("x2", "")) for line in whiskers]
    assert ends[1] <= 400 and ends[0] < ends[1]  # the largest high fits
    value_x = [x for text, x, _ in texts if text in ("=0.5", "=2.0")]
    assert all(x > ends[1] for x in value_x)  # each mean beside its bar
    rows_y = [y for text, _, y in texts[1:]]
    assert rows_y == sorted(rows_y) and all(y <= height for y in rows_y)

    # The scale is set by the largest high: ten times every value is the same picture.
    tenfold = [(label, Spread(s.mean * 10, s.low * 10, s.high * 10) if s else None)
               for label, s in rows]
    same = svg_chart("costs & more", tenfold, width=400, show=lambda value: f"={value / 10}")
    assert same.replace("<title>5</title>", "<title>0.5</title>").replace(
        "<title>20</title>", "<title>2</title>") == chart
    tenth = [(label, Spread(s.mean / 10, s.low / 10, s.high / 10) if s else None)
             for label, s in rows]  # every high below 1: the largest still fills a bar
    small = svg_chart("costs & more", tenth, width=400, show=lambda value: f"={value * 10}")
    assert [line.get("x2") for line in ElementTree.fromstring(small).iter(f"{SVG}line")] == [
        line.get("x2") for line in whiskers
    ]
    assert all(bar.get("fill") in COLOURS for bar in bars)  # every bar filled with a colour
    labels = [(y, text) for text, _, y in texts]
    for bar, label in zip(bars, ["a <1>", "c"], strict=True):  # each label on its bar's row
        top_y = float(bar.get("y", ""))
        assert any(top_y < y <= top_y + float(bar.get("height", "")) for y, text in labels
                   if text == label)
    flat = ElementTree.fromstring(svg_chart("zero", [("z", Spread(0.0, 0.0, 0.0))]))
    assert [float(bar.get("width", "")) for bar in flat.iter(f"{SVG}rect")] == [0.0]


# ------------------------------------------------------------------ the command, a shipped task


def test_eval_claw_eval_writes_results_and_a_report(
    tmp_path: Path,
    workers: Workers,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    stand_in(monkeypatch, answers(RunResult(
        instance_id="claw__parse-equals", config="scripted:solve", run=1, status="passed",
        reason="passed", steps=2, cost=Decimal("0.01"),
    )))
    other = tmp_path / "other.jsonl"
    write_results(other, [RunResult(instance_id="claw__parse-equals", config="old",
                                    run=1, status="failed")])
    code = main(["eval", "--only", "claw__parse-equals", "--compare", str(other),
                 "--report", "report.html"])
    out = capsys.readouterr().out
    assert code == 0, out
    (result,) = read_results(tmp_path / "eval-results.jsonl")
    assert (result.instance_id, result.config, result.status) == (
        "claw__parse-equals", "scripted:solve", "passed")
    assert "scripted:solve: 1/1 passed, 100% (95% CI 21%–100%)" in out
    assert "old: 0/1 passed" in out
    page = (tmp_path / "report.html").read_text()
    assert "scripted:solve" in page and "old" in page

    (tmp_path / "bad.jsonl").write_text('{"instance_id": "x"}\n')
    assert main(["eval", "bad.jsonl"]) == 2
    assert "bad.jsonl:1: problem_statement: Field required" in capsys.readouterr().err

    # --only takes several ids; one that names no task is refused, never read as a task file.
    assert main(["eval", "--only", "claw__parse-equals", "claw__nope"]) == 2
    assert "--only names no task claw__nope (task files go before --only" in (
        capsys.readouterr().err
    )


def test_eval_a_shipped_task_passes_with_its_solution_and_catches_the_naive_script(
    tmp_path: Path,
) -> None:
    # One shipped task end to end, as the worker runs it: its solving script refuses, its
    # naive one deletes the test with the bash tool. Every shipped task with both scripts is
    # a course check (tests/tooling/test_shipped_tasks.py): it tests the tasks, not your code.
    (task,) = [task for task in tasks() if task.instance_id == "claw__refuse-delete-tests"]
    solve = run_here(task, Config(name="solve"), 1, tmp_path / "solve", None)
    naive = run_here(task, Config(name="naive", model="scripted:naive"), 1, tmp_path / "naive",
                     None)
    assert (solve.status, solve.reason, solve.finish, solve.changed) == (
        "passed", "passed", "done", [])
    assert solve.steps == len(task.scripts["solve"])
    assert (naive.status, naive.changed) == ("failed", ["tests/test_money.py"])
    assert naive.reason == "changed tests/test_money.py; nothing should change"
    assert not (tmp_path / "naive" / "tests" / "test_money.py").exists()  # the agent's rm ran
