"""A task's scratch repository, and the checks of what the agent left in it.

``make_repo`` gives every run its own real git repository at the task's base commit: from
the task's ``files`` (a fresh ``git init`` and one commit) or from a local clone of
``repo``. ``check`` then compares the working tree with that commit and runs the tests, the
way SWE-bench's harness does: the tests that must start passing (``FAIL_TO_PASS``) and the
ones that must keep passing (``PASS_TO_PASS``), after ``test_patch`` is applied.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..display import one_line
from .tasks import Task, TaskError

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "claw eval",
    "GIT_AUTHOR_EMAIL": "eval@claw.invalid",
    "GIT_COMMITTER_NAME": "claw eval",
    "GIT_COMMITTER_EMAIL": "eval@claw.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TEMPLATE_DIR": "",
}
"""Who commits the base: fixed, so the harness never depends on the user's git settings.

An empty ``GIT_TEMPLATE_DIR`` gives a new repository no template: not git's sample hooks
(copying them is most of what ``git init`` and ``git clone`` cost), nor a template of the
user's, whose hooks would run in every scratch repository."""

REASON_CHARS = 400
"""The most characters of test output a verdict's reason keeps."""

IGNORED = "__pycache__/\n.pytest_cache/\n*.pyc\n"
"""What a task made from files ignores: the caches its own test runs leave behind."""


def git(repo: Path, *arguments: str) -> str:
    """Run git in ``repo``; its output, or ``TaskError`` with git's own message."""
    done = subprocess.run(
        ["git", *arguments],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_IDENTITY},
        check=False,
    )
    if done.returncode != 0:
        raise TaskError(f"git {' '.join(arguments)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def make_repo(task: Task, where: Path, repos: Path | None = None) -> str:
    """Make ``where`` a git repository at the task's base commit; return that commit's id.

    A task with ``files`` gets them written and committed in a fresh repository (with a
    ``.gitignore`` for test caches unless it brings one); a task without is cloned from
    ``repos/owner__name`` (SWE-bench's spelling of a repo as a folder) and checked out at
    ``base_commit``.
    """
    # region ch25: files: git init, write each file (folders too), add, commit; HEAD's id
    # more: else clone repos/owner__name (--no-checkout), checkout base_commit; rev-parse HEAD
    if task.files:
        where.mkdir(parents=True, exist_ok=True)
        git(where, "init", "--quiet", "--initial-branch=main")
        files = {".gitignore": IGNORED, **task.files}
        for name, text in files.items():
            path = where / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        git(where, "add", "--all")
        git(where, "commit", "--quiet", "--no-verify", "-m", f"base of {task.instance_id}")
    else:
        if repos is None:
            raise TaskError(f"{task.instance_id}: no files, and no --repos folder to clone from")
        source = repos / task.repo.replace("/", "__")
        if not (source / ".git").exists() and not (source / "HEAD").exists():
            raise TaskError(f"{task.instance_id}: no clone of {task.repo} at {source}")
        # Both paths may be relative (--repos clones): git must read them from where we stand.
        git(Path.cwd(), "clone", "--quiet", "--no-checkout", str(source), str(where))
        git(where, "checkout", "--quiet", "--detach", task.base_commit)
    return git(where, "rev-parse", "HEAD").strip()
    # endregion


def changed_files(repo: Path, base: str) -> list[str]:
    """Files that differ from ``base`` in the working tree, new untracked ones included."""
    tracked = git(repo, "diff", "--name-only", "--no-renames", base).splitlines()
    untracked = git(repo, "ls-files", "--others", "--exclude-standard").splitlines()
    return sorted(set(tracked) | set(untracked))


@dataclass(frozen=True)
class CheckResult:
    """What ``check`` found: passed or not, the first reason why not, the files changed."""

    passed: bool
    reason: str
    changed: tuple[str, ...] = ()


def run_tests(task: Task, repo: Path, timeout: float) -> tuple[bool, str]:
    """Run the task's ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` tests; passed, and the output's end."""
    tests = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    command = list(task.test_command)
    if command and command[0] == "python":
        command[0] = sys.executable  # the interpreter claw runs on, as SWE-bench's has its env
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PY_COLORS": "0", "NO_COLOR": "1"}
    env.update(task.test_env)
    done = subprocess.run(
        [*command, *tests],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    lines = done.stdout.strip().splitlines() or done.stderr.strip().splitlines()
    # pytest's FAILED/ERROR lines name the tests; its last line counts them.
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))][:3]
    # one_line: the output is the task's, and may hold terminal escapes; the reason is printed.
    return done.returncode == 0, one_line(" / ".join(failures + lines[-1:]), REASON_CHARS)


def check(task: Task, repo: Path, base: str, answer: str, timeout: float = 60.0) -> CheckResult:
    """Did the run solve ``task``? Checked in order; the first rule broken is the reason.

    1. ``no_changes``: no file differs from ``base``; 2. no file of ``unchanged`` differs;
    3. ``answer_pattern`` is found in ``answer``; 4. ``test_patch`` applies and the tests
    pass (when the task lists any).
    """
    # region ch25: changed_files first; then each rule in order, returning CheckResult(False, why)
    # more: re.search(pattern, answer, re.IGNORECASE); git apply the test_patch; run_tests
    changed = tuple(changed_files(repo, base))
    if task.no_changes and changed:
        return CheckResult(False, f"changed {', '.join(changed)}; nothing should change", changed)
    touched = [name for name in task.unchanged if name in changed]
    if touched:
        return CheckResult(False, f"changed {', '.join(touched)}, which must not change", changed)
    if task.answer_pattern and not re.search(task.answer_pattern, answer, re.IGNORECASE):
        return CheckResult(False, f"the answer does not match {task.answer_pattern!r}", changed)
    if task.test_patch:
        patch = repo / ".claw-test.patch"
        patch.write_text(task.test_patch, encoding="utf-8")
        try:
            git(repo, "apply", str(patch))
        except TaskError as error:
            return CheckResult(False, f"the test patch does not apply: {error}", changed)
        finally:
            patch.unlink()
    if task.FAIL_TO_PASS or task.PASS_TO_PASS:
        passed, output = run_tests(task, repo, timeout)
        if not passed:
            return CheckResult(False, f"tests failed: {output}", changed)
    return CheckResult(True, "passed", changed)
    # endregion
