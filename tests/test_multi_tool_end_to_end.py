"""ch12 · End to end: claw, driven by a scripted model, fixes a bug in a real git repository.

The model is a ``MockStreamProvider`` that plays the turns a good model would; everything else
is real: the ``Agent`` with ``concurrent=True``, ``default_tools`` on a temporary git
repository, ``grep`` and ``read`` running side by side, ``edit`` changing the file on disk, and
``bash`` running the repository's own pytest suite with this Python, failing and then passing.

The run waits on processes most of its time (git, and the repository's pytest twice), so it
starts when this module is imported, in a thread of its own with its own event loop, in a
folder of its own: it overlaps the collection of the files after this one and the tests before
it, and the test checks what it did. In a pytest-xdist worker and under mutmut it starts when
the test runs (see ``EARLY``).
"""

import asyncio
import atexit
import datetime
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from claw.agent import Finish
from claw.events import Event, RunFinished, ToolCalled, ToolResult
from claw.loop import Agent
from claw.prompt import gather_environment, system_prompt
from claw.registry import default_tools
from claw.streaming import MockStreamProvider
from claw.types import (
    AssistantTurn,
    StopReason,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

STATS = '''"""Small statistics helpers."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of ``values``."""
    return sum(values) / (len(values) - 1)
'''

TEST_STATS = """from calc.stats import mean


def test_mean_of_three_numbers():
    assert mean([2, 4, 6]) == 4
"""

PYTEST = (
    f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q --color=no "
    "-p no:cacheprovider tests"
)
"""The command the model runs: this Python's pytest in the repository; no plugins, colour, cache."""

BUG = "    return sum(values) / (len(values) - 1)"
FIX = "    return sum(values) / len(values)"


def git(repo: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Learner", "-c", "user.email=learner@example.com", *arguments],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def make_repository(root: Path) -> Path:
    """A tiny package with one bug and the test that shows it, committed to git."""
    repo = root / "calc-project"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "calc" / "__init__.py").write_text("")
    (repo / "calc" / "stats.py").write_text(STATS)
    (repo / "tests" / "test_stats.py").write_text(TEST_STATS)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "calc: mean")
    return repo


def turn(*calls: tuple[str, str, dict[str, Any]], text: str = "") -> AssistantTurn:
    return AssistantTurn(
        text=text,
        tool_calls=tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls),
        stop_reason=StopReason.TOOL_USE,
    )


SCRIPT = [
    turn(
        ("grep-1", "grep", {"pattern": r"def mean"}),
        ("read-1", "read", {"path": "tests/test_stats.py"}),
        text="Let me find `mean` and its test.",
    ),
    turn(("bash-1", "bash", {"command": PYTEST})),
    turn(("read-2", "read", {"path": "calc/stats.py"})),
    turn(("edit-1", "edit", {"path": "calc/stats.py", "old_string": BUG, "new_string": FIX})),
    turn(("bash-2", "bash", {"command": PYTEST})),
    "Fixed: `mean` divided by `len(values) - 1`; it now divides by `len(values)`. "
    "The test passes.",
]


def results_seen(provider: MockStreamProvider, call: int) -> dict[str, ToolResultMessage]:
    """The tool results in the messages of the provider's call number ``call`` (1 = first)."""
    messages = provider.calls[call - 1].messages
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}


@dataclass
class Fixing:
    """The agent's run on a new repository, in a thread of its own; ``done`` waits for it."""

    folder: tempfile.TemporaryDirectory[str] = field(
        default_factory=lambda: tempfile.TemporaryDirectory(prefix="claw-end-to-end-")
    )
    provider: MockStreamProvider = field(default_factory=lambda: MockStreamProvider(SCRIPT))
    events: list[Event] = field(default_factory=list)
    repo: Path | None = None
    tool_names: tuple[str, ...] = ()
    finished: RunFinished | None = None
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self.owner = os.getpid()
        self.thread = threading.Thread(target=self.run, name="end-to-end", daemon=True)
        self.thread.start()
        atexit.register(self.close)  # the test may not run (not chosen, or only collected)

    def close(self) -> None:
        """Remove the folder once the run has ended (a run that hangs keeps it)."""
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.folder.cleanup()

    def run(self) -> None:
        """Build the repository and the agent, and ask it to fix the bug (in this thread)."""
        try:
            self.repo = make_repository(Path(self.folder.name))
            tools = default_tools(self.repo)
            self.tool_names = tuple(tools.names)
            environment = gather_environment(self.repo, today=datetime.date(2026, 12, 1))
            agent = Agent(
                self.provider,
                tools,
                system=system_prompt(environment, tools.definitions()),
                observers=[self.events.append],
                concurrent=True,
            )
            task = "test_mean_of_three_numbers fails. Find the bug and fix it."
            self.finished = asyncio.run(agent.run(task))
        except BaseException as error:  # a stub's Todo, or a bug: raised again by ``done``
            self.error = error

    def done(self) -> "Fixing":
        """This run, once it has ended; what it raised is raised here."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self


# Not in a pytest-xdist worker, which cannot know whether it will be given the test, nor under
# mutmut, which learns which test calls which function and runs a mutant's tests in forks.
EARLY = not (os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("MUTANT_UNDER_TEST"))
started = Fixing() if EARLY else None


@pytest.fixture(scope="module")
def fixing() -> Iterator[Fixing]:
    """The run this module started at import, once, in this process; else a run started now."""
    global started
    run = started if started is not None and started.owner == os.getpid() else Fixing()
    started = None
    yield run
    if not run.thread.is_alive():  # else it hangs, and the test said so
        run.folder.cleanup()


@pytest.mark.timeout(60)  # git three times and the repository's pytest twice: a busy machine
def test_multi_tool_end_to_end_claw_fixes_a_bug_in_a_git_repository(fixing: Fixing) -> None:
    run = fixing.done()
    repo, provider, events, finished = run.repo, run.provider, run.events, run.finished
    assert repo is not None and finished is not None

    # The file is fixed on disk, and only that file changed.
    assert (repo / "calc" / "stats.py").read_text() == STATS.replace(BUG, FIX)
    assert git(repo, "status", "--short") == " M calc/stats.py\n"

    # Every call the model made, in order, and how the run ended.
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert [e.name for e in called] == ["grep", "read", "bash", "read", "edit", "bash"]
    results = {e.id: e for e in events if isinstance(e, ToolResult)}
    step_one = [(type(e).__name__, e.id) for e in events if isinstance(e, ToolCalled | ToolResult)]
    assert step_one[:4] == [  # grep and read are read-only: one batch, reported around it
        ("ToolCalled", "grep-1"),
        ("ToolCalled", "read-1"),
        ("ToolResult", "grep-1"),
        ("ToolResult", "read-1"),
    ]
    assert not any(results[e.id].is_error for e in called)  # a failing command is no error
    assert finished == RunFinished(Finish.DONE, 6, SCRIPT[-1], finished.usage)
    assert events[-1] == finished

    # What the model was shown: first the system prompt (with the repository) and the task.
    first = provider.calls[0].messages
    assert isinstance(first[0], SystemMessage)
    assert str(repo.resolve()) in first[0].content
    assert "branch: main" in first[0].content
    assert first[-1] == UserMessage(
        content="test_mean_of_three_numbers fails. Find the bug and fix it."
    )
    assert [d.name for d in provider.calls[0].tools] == list(run.tool_names)

    # Step 1: grep and read ran together; the model saw the hit and the test.
    seen = results_seen(provider, 2)
    assert "calc/stats.py" in seen["grep-1"].content
    assert "def mean(values: list[float]) -> float:" in seen["grep-1"].content
    assert seen["read-1"].content.splitlines()[4] == "     5\t    assert mean([2, 4, 6]) == 4"

    # Step 2: the tests fail, and the model sees why.
    failing = results_seen(provider, 3)["bash-1"]
    assert "1 failed" in failing.content
    assert "assert 6.0 == 4" in failing.content
    assert failing.content.endswith("exit code: 1")

    # Step 3: the read window, with the buggy line numbered.
    window = results_seen(provider, 4)["read-2"].content
    assert f"     6\t{BUG}" in window.splitlines()

    # Step 4: the edit's diff.
    diff = results_seen(provider, 5)["edit-1"].content
    assert f"-{BUG}" in diff.splitlines()
    assert f"+{FIX}" in diff.splitlines()

    # Step 5: the tests pass.
    passing = results_seen(provider, 6)["bash-2"]
    assert not passing.is_error
    assert "1 passed" in passing.content
    assert passing.content.endswith("exit code: 0")

    # Every result the provider saw is the one the events reported, under the same id.
    last = results_seen(provider, 6)
    for call_id, event in results.items():
        assert last[call_id].content == event.output
