"""ch14 · The safety checks see the files a shell command writes through its redirections.

``echo hi > .claw/settings.json`` changes a protected file as surely as the ``write`` tool
does, and ``git status > ../x`` writes outside the workspace: both are refused whatever the
permission rules say (chapter 13's ``Bash(echo *)`` allows the command, not the target).
"""

from pathlib import Path

import pytest

from claw.safety import SafetyChecks, touched_paths
from claw.types import ToolCall


def bash(command: str) -> ToolCall:
    return ToolCall(id="c1", name="bash", arguments={"command": command})


def test_safety_redirections_are_touched_paths() -> None:
    assert touched_paths(bash("make 2>&1 >> log.txt")) == ["log.txt"]
    assert touched_paths(bash("echo a > x && echo b &> y | tee z")) == ["x", "y"]
    assert touched_paths(bash("grep -r x . 2>/dev/null")) == []
    assert touched_paths(bash("echo $(date) > stamp.txt")) == ["stamp.txt"]


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo '{}' > .claw/settings.json", "is protected"),
        ("echo hi >> .env", "is protected"),
        ("git status > ../x", "outside the workspace"),
        ("echo x > ~/.bashrc", "outside the workspace"),
        ("echo x > $HOME/.bashrc", "outside the workspace"),
        ("echo 'x' >.git/hooks/pre-commit", "is protected"),
    ],
)
def test_safety_redirection_target_is_checked_like_a_write(
    command: str, why: str, tmp_path: Path
) -> None:
    reason = SafetyChecks(tmp_path).refusal(bash(command))
    assert reason is not None and why in reason


def test_safety_redirection_inside_the_workspace_runs(tmp_path: Path) -> None:
    assert SafetyChecks(tmp_path).refusal(bash("echo hi > notes.txt")) is None
