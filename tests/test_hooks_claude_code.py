"""ch15 · Hooks written as Claude Code users write them, run against claw's real tools.

Claude Code's hooks reference (code.claude.com/docs/en/hooks, "Matcher patterns") is the
specification: ``"Bash"`` and ``"Edit|Write"`` are exact names, anything with another
character is an unanchored regular expression. claw names its tools differently (``bash``,
``edit``), so both names count; a matcher that picks no tool is refused at start-up.
"""

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from claw import guard as guard_module
from claw.control import Controls
from claw.guard import BadSettings, guard
from claw.hooks import Hooks, matches
from claw.loop import Agent
from claw.permissions import Mode, Permissions
from claw.registry import default_tools
from claw.safety import SafetyChecks
from claw.settings import Settings
from claw.streaming import MockStreamProvider
from claw.types import ToolCall, ToolOutput

PY = f"{shlex.quote(sys.executable)} -S"  # no site: the hooks need only the standard library


def block_rm(tmp_path: Path) -> str:
    """A PreToolUse hook that blocks any command starting with rm (as the hooks guide's)."""
    script = tmp_path / "block_rm.py"
    script.write_text(
        "import json, sys\n"
        "command = json.load(sys.stdin)['tool_input'].get('command', '')\n"
        "if command.startswith('rm'):\n"
        "    sys.stderr.write('Blocked: rm commands are not allowed')\n"
        "    sys.exit(2)\n"
    )
    return f"{PY} {shlex.quote(str(script))}"


def settings(matcher: str, command: str) -> dict[str, Any]:
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
    return {"hooks": {"PreToolUse": [group]}}


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("Bash", "bash", True),  # "Bash matches only the Bash tool"
        ("Bash", "bash_output", False),
        ("Edit|Write", "edit", True),  # "Edit|Write ... each match either tool exactly"
        ("Edit|Write", "write", True),
        ("Edit|Write", "apply_patch", True),  # claw's other editing tool is an Edit
        ("Edit, Write", "write", True),  # "," with optional whitespace
        ("Edit|Write", "read", False),
        ("Read", "read", True),
        ("Read", "grep", False),  # exact: Grep is its own tool
        ("Grep|Glob|LS", "list_dir", True),
        ("WebFetch", "web_fetch", True),
        ("*", "anything", True),
        ("", "anything", True),
        ("^Edit$", "edit", True),  # a regex is tested against Claude Code's name too
        ("Edit.*", "apply_patch", True),  # unanchored: matches "Edit"
        ("^Notebook", "edit", False),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__.*__write.*", "mcp__fs__write_file", True),
        ("bash", "bash", True),  # claw's own names still work
        ("BASH", "bash", False),  # case-sensitive, as in Claude Code
    ],
)
def test_hooks_claude_code_matcher_patterns(matcher: str, tool: str, expected: bool) -> None:
    assert matches(matcher, tool) is expected


async def test_hooks_claude_code_bash_matcher_blocks_rm(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("x")
    hooks = Hooks.from_settings(settings("Bash", block_rm(tmp_path)), tmp_path)
    controls = Controls(default_tools(tmp_path), checks=[hooks.pre_tool_use])
    call = ToolCall(id="c1", name="bash", arguments={"command": "rm -rf build"})
    output = await controls(call)
    assert output == ToolOutput.error(
        "Blocked by a PreToolUse hook: Blocked: rm commands are not allowed"
    )
    assert (tmp_path / "build" / "out.o").exists()


async def test_hooks_claude_code_edit_write_matcher_sees_every_file_change(
    tmp_path: Path,
) -> None:
    hooks = Hooks.from_settings(settings("Edit|Write", "echo 'frozen' >&2; exit 2"), tmp_path)
    controls = Controls(default_tools(tmp_path), checks=[hooks.pre_tool_use])
    calls = [
        ToolCall(id="1", name="write", arguments={"path": "a.txt", "content": "x"}),
        ToolCall(id="2", name="edit", arguments={"path": "a.txt", "old": "x", "new": "y"}),
        ToolCall(
            id="3",
            name="apply_patch",
            arguments={"patch": "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n"},
        ),
    ]
    for call in calls:
        assert await controls(call) == ToolOutput.error("Blocked by a PreToolUse hook: frozen")
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()


@pytest.mark.parametrize("matcher", ["Bsh", "Edit|Wrte", "edit_file", "^Notebook"])
def test_hooks_claude_code_matcher_that_picks_no_tool_is_refused(
    matcher: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="matches no tool") as raised:
        Hooks.from_settings(settings(matcher, "exit 0"), tmp_path)
    assert repr(matcher) in str(raised.value)


def test_hooks_claude_code_bad_matcher_stops_claw_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / ".claw").mkdir()
    path = tmp_path / ".claw" / "settings.json"
    path.write_text(json.dumps(settings("Bahs", "exit 2")))
    agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
    with pytest.raises(BadSettings) as raised:
        guard(agent, tmp_path)
    assert str(path) in str(raised.value)
    assert "the PreToolUse matcher 'Bahs' matches no tool" in str(raised.value)


def rewrite_to(arguments: dict[str, Any]) -> Any:
    def hook(event: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": arguments}}

    return hook


async def test_hooks_claude_code_updated_input_goes_through_the_safety_checks(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("fine")
    (tmp_path.parent / "outside.txt").write_text("private")
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", rewrite_to({"path": "../outside.txt"}), "read")
    safety = SafetyChecks(tmp_path)
    controls = Controls(default_tools(tmp_path), checks=[safety.check, hooks.pre_tool_use])
    output = await controls(ToolCall(id="1", name="read", arguments={"path": "a.txt"}))
    assert output.is_error and "outside the workspace" in output.content
    assert "private" not in output.content


async def test_hooks_claude_code_updated_input_goes_through_the_permissions(
    tmp_path: Path,
) -> None:
    (tmp_path / "build").mkdir()
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", rewrite_to({"command": "rm -rf build"}), "Bash")
    permissions = Permissions(tmp_path, deny=["Bash(rm *)"], allow=["Bash(ls *)"])
    controls = Controls(
        default_tools(tmp_path),
        checks=[SafetyChecks(tmp_path).check, hooks.pre_tool_use, permissions.check],
    )
    output = await controls(ToolCall(id="1", name="bash", arguments={"command": "ls -la"}))
    assert output.is_error and "Permission denied" in output.content
    assert (tmp_path / "build").is_dir()


async def test_hooks_claude_code_updated_redirection_hits_protected_files(
    tmp_path: Path,
) -> None:
    (tmp_path / ".claw").mkdir()
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", rewrite_to({"command": "echo '{}' > .claw/settings.json"}), "bash")
    controls = Controls(
        default_tools(tmp_path), checks=[SafetyChecks(tmp_path).check, hooks.pre_tool_use]
    )
    output = await controls(ToolCall(id="1", name="bash", arguments={"command": "echo hi"}))
    assert output.is_error and "is protected" in output.content
    assert not (tmp_path / ".claw" / "settings.json").exists()


def test_hooks_claude_code_guard_stops_at_a_broken_settings_file_or_hook_saying_what_is_wrong(
    tmp_path: Path,
) -> None:
    def agent() -> Agent:
        return Agent(MockStreamProvider([]), default_tools(tmp_path))

    guard(agent(), tmp_path)  # no settings file: nothing is wrong
    (tmp_path / ".claw").mkdir()
    path = tmp_path / ".claw" / "settings.json"
    path.write_text('{"permissions": ')
    with pytest.raises(BadSettings) as raised:
        guard(agent(), tmp_path)
    assert str(path) in str(raised.value)

    # chapter 17's layered settings: the same stop, saying what is wrong
    bad = {"PreToolUse": [{"matcher": "Bahs", "hooks": [{"type": "command", "command": "exit 2"}]}]}
    with pytest.raises(BadSettings) as raised:
        guard(agent(), tmp_path, settings=Settings(hooks=bad))
    assert "the PreToolUse matcher 'Bahs' matches no tool" in str(raised.value)
    assert "claw config --explain hooks" in str(raised.value)  # where to look for it
    rules = Settings(permissions={"deny": ["Write(docs/**)"]})
    with pytest.raises(BadSettings) as raised:
        guard(agent(), tmp_path, settings=rules)
    assert "never consults" in str(raised.value)
    assert "claw config --explain permissions" in str(raised.value)


def test_hooks_claude_code_a_hook_written_wrong_stops_claw_saying_what_is_wrong(
    tmp_path: Path,
) -> None:
    # Each wrong shape is the user's mistake, told as such (it was a KeyError or a
    # TypeError before, which a bug of claw's would have been too).
    good = {"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}
    cases = [
        ([{"matcher": "Bash", "hooks": [{"type": "command"}]}], 'needs a "command" string'),
        ([{"matcher": "Bash", "hooks": [{"command": "x", "timeout": "soon"}]}], '"timeout"'),
        ([{"matcher": 7, "hooks": []}], "matcher must be a string"),
        ([{"matcher": "Bash", "hooks": "exit 0"}], "must be a list"),
        ("Bash", "must be a list"),
        (["Bash"], "must be an object"),
    ]
    (tmp_path / ".claw").mkdir()
    path = tmp_path / ".claw" / "settings.json"
    for groups, said in cases:
        # A good hook first: its matcher is checked (chapter 15's code) before the wrong one.
        path.write_text(json.dumps({"hooks": {"PostToolUse": [good], "PreToolUse": groups}}))
        with pytest.raises(BadSettings) as raised:
            guard(Agent(MockStreamProvider([]), default_tools(tmp_path)), tmp_path)
        assert str(path) in str(raised.value) and said in str(raised.value), groups


def test_hooks_claude_code_a_bug_of_claws_is_not_told_as_bad_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise AttributeError("a bug in claw, not in the settings")

    monkeypatch.setattr(guard_module, "Permissions", broken)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "exit 0"}]}]}
    with pytest.raises(AttributeError, match="a bug in claw"):  # shown as what it is
        guard(Agent(MockStreamProvider([]), default_tools(tmp_path)), tmp_path,
              settings=Settings(hooks=hooks))  # fmt: skip


# Plan mode is chapter 16's: a guard made in it enters plan mode, so it is not among these.
@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.BYPASS])
def test_hooks_claude_code_hooks_are_told_the_permission_mode(tmp_path: Path, mode: Mode) -> None:
    # issue 38: Claude Code tells every hook but SessionStart's its permission mode
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
    guarded = guard(agent, tmp_path, mode=mode, settings=Settings(hooks=hooks))
    assert guarded.hooks is not None
    assert guarded.hooks.payload("PreToolUse")["permission_mode"] == mode.value
    assert "permission_mode" not in guarded.hooks.payload("SessionStart")
