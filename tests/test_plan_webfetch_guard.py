"""ch16 · ``guard``, which the ``claw`` command puts in front of the tools, checks web_fetch's hops.

A project allows ``WebFetch(domain:localhost)``. The model fetches a page there that redirects
to a host nobody approved; the guarded agent must stop at the redirect. Names come from a
table (``localhost`` and ``evil.example`` are both 127.0.0.1, where the loopback server runs).
"""

import asyncio
import io
import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from claw.agent import Finish
from claw.approvers import TerminalApprover
from claw.guard import guard
from claw.loop import Agent
from claw.permissions import Approval, Mode
from claw.plan import PlanState, plan_mode_message
from claw.registry import default_tools
from claw.settings import PermissionSettings, Settings
from claw.streaming import MockStreamProvider
from claw.tools.web_fetch import WebFetchTool
from claw.types import AssistantTurn, StopReason, ToolCall, ToolOutput, ToolResultMessage
from clawbook.harness.loopback import LoopbackServer, TextReply


async def table(host: str, port: int) -> Sequence[str]:
    return {"localhost": ["127.0.0.1"], "evil.example": ["127.0.0.1"]}[host]


async def test_plan_webfetch_guard_checks_every_redirect_hop_against_the_rules(
    tmp_path: Path, server: LoopbackServer
) -> None:
    (tmp_path / ".claw").mkdir()
    settings = {"permissions": {"allow": ["WebFetch(domain:localhost)"]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(settings))
    start = f"http://localhost:{server.port}/start"
    steal = f"http://evil.example:{server.port}/steal"
    server.add(TextReply(status=302, headers={"Location": steal}), TextReply(body="secret"))
    fetch = ToolCall(id="f1", name="web_fetch", arguments={"url": start})
    provider = MockStreamProvider(
        [
            AssistantTurn(tool_calls=[fetch], stop_reason=StopReason.TOOL_USE),
            AssistantTurn(text="It redirected elsewhere.", stop_reason=StopReason.END_TURN),
        ]
    )
    tool = WebFetchTool(allow_private_hosts=True, resolve=table)
    agent = Agent(provider, [tool])

    guarded = guard(agent, tmp_path)
    await agent.run("Read the page at localhost.")

    (result,) = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.content.startswith(f"refused: {start} redirects to {steal}; its host needs")
    assert [request.path for request in server.requests] == ["/start"]
    assert tool.check_redirect == guarded.permissions.check_redirect


async def test_plan_guard_keeps_an_untrusted_folders_allow_rules_and_hooks_out_and_maps_plan_mode(
    tmp_path: Path,
) -> None:
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo x >> hooked.txt"}]}
    settings = {"permissions": {"allow": ["Bash(touch *)"]}, "hooks": {"PreToolUse": [hook]}}
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(settings))
    touch = ToolCall(id="t1", name="bash", arguments={"command": "touch made.txt"})
    other = ToolCall(id="o1", name="bash", arguments={"command": "mkdir built"})
    asked: list[str] = []

    async def approve(call: ToolCall, why: str) -> Approval:
        asked.append(call.arguments["command"])
        return Approval.DENY

    async def ran(guarded: Any, call: ToolCall) -> bool:
        output = await guarded.controls(call)
        assert isinstance(output, ToolOutput)
        return not output.is_error

    def guarded(**options: Any) -> Any:
        return guard(Agent(MockStreamProvider([]), default_tools(tmp_path)), tmp_path, **options)

    # Untrusted: its allow rule and its hook are left out, so touch is asked about, unhooked.
    assert not await ran(guarded(trusted=False, approve=approve), touch)
    assert asked == ["touch made.txt"] and not (tmp_path / "hooked.txt").exists()

    # Trusted: the allow rule lets touch run unasked, and the hook runs in the project.
    assert await ran(guarded(approve=approve), touch)
    assert asked == ["touch made.txt"] and (tmp_path / "hooked.txt").read_text() == "x\n"

    # Plan mode plans first; once the plan is approved, the rules work as in default mode.
    planning = guarded(mode=Mode.PLAN, approve=approve)
    assert planning.plan.state is PlanState.PLANNING
    assert not await ran(planning, touch)  # refused while planning
    planning.plan.submit("Make the folder.")
    planning.plan.approve()
    assert await ran(planning, touch)
    assert not await ran(planning, other)
    assert asked == ["touch made.txt", "mkdir built"]  # asked, as in default mode

    # Any other mode goes to the permissions as it is.
    assert await ran(guarded(mode=Mode.BYPASS, approve=approve), other)
    assert (tmp_path / "built").is_dir()


async def test_plan_guard_ends_the_run_after_three_refused_calls(tmp_path: Path) -> None:
    made = [
        ToolCall(id=f"m{n}", name="bash", arguments={"command": f"mkdir d{n}"}) for n in (1, 2, 3)
    ]
    provider = MockStreamProvider(
        [
            AssistantTurn(tool_calls=made, stop_reason=StopReason.TOOL_USE),
            AssistantTurn(text="Then I try again.", stop_reason=StopReason.END_TURN),
        ]
    )
    agent = Agent(provider, default_tools(tmp_path))

    async def refuse(call: ToolCall, why: str) -> Approval:
        return Approval.DENY

    guard(agent, tmp_path, approve=refuse)
    finished = await agent.run("Make three folders.")

    assert finished.reason is Finish.PERMISSION_DENIALS and finished.steps == 1
    assert not any((tmp_path / f"d{n}").exists() for n in (1, 2, 3))


def test_plan_guard_tells_the_model_it_is_planning_only_when_the_run_starts_planning(
    tmp_path: Path,
) -> None:
    def added(mode: Mode) -> list[Any]:
        agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
        before = len(agent.history)
        guard(agent, tmp_path, mode=mode)
        return agent.history[before:]

    assert added(Mode.PLAN) == [plan_mode_message()]
    assert added(Mode.DEFAULT) == []
    assert added(Mode.BYPASS) == []


async def test_plan_guard_runs_the_projects_post_tool_use_hooks_after_a_call(
    tmp_path: Path,
) -> None:
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo x >> after.txt"}]}
    (tmp_path / ".claw").mkdir()
    settings = {"hooks": {"PostToolUse": [hook]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(settings))
    agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
    guarded = guard(agent, tmp_path, mode=Mode.BYPASS)

    output = await guarded.controls(
        ToolCall(id="t1", name="bash", arguments={"command": "touch made.txt"})
    )

    assert isinstance(output, ToolOutput) and not output.is_error, output
    assert (tmp_path / "made.txt").exists()
    assert (tmp_path / "after.txt").read_text() == "x\n"  # the hook ran once, after the call


async def test_plan_guard_with_layered_settings_uses_the_projects_rules_and_ends_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "secret.txt").write_text("sk-secret\n")
    monkeypatch.chdir(elsewhere)  # the rules are the project's, wherever claw was started
    secret = str(project / "secret.txt")
    reads = [ToolCall(id=f"r{n}", name="read", arguments={"path": secret}) for n in (1, 2, 3)]
    provider = MockStreamProvider(
        [
            AssistantTurn(tool_calls=reads, stop_reason=StopReason.TOOL_USE),
            AssistantTurn(text="Then I try again.", stop_reason=StopReason.END_TURN),
        ]
    )
    agent = Agent(provider, default_tools(project))
    asked: list[str] = []

    async def yes(call: ToolCall, why: str) -> Approval:
        asked.append(why)
        return Approval.ONCE

    settings = Settings(permissions=PermissionSettings(deny=["Read(secret.txt)"]))
    guard(agent, project, approve=yes, settings=settings)
    finished = await agent.run("Show me the secret.")

    results = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    assert len(results) == 3 and not any("sk-secret" in m.content for m in results)
    assert asked == []  # denied by the rule, not asked about
    assert finished.reason is Finish.PERMISSION_DENIALS and finished.steps == 1


async def test_plan_guard_ctrl_c_at_the_approval_question_ends_its_line(tmp_path: Path) -> None:
    out = io.StringIO()

    async def ctrl_c() -> str:
        raise asyncio.CancelledError  # Ctrl-C while the question waits

    agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
    guarded = guard(agent, tmp_path, approve=TerminalApprover(out, ctrl_c))
    with pytest.raises(asyncio.CancelledError):
        await guarded.controls(
            ToolCall(id="b1", name="bash", arguments={"command": "touch made.txt"})
        )
    assert not (tmp_path / "made.txt").exists()
    shown = out.getvalue()
    assert "needs approval" in shown and "allow?" in shown.splitlines()[-1]
    assert shown.endswith("\n")  # the next output starts on a line of its own


async def test_plan_guard_asks_when_a_hook_says_ask_though_an_allow_rule_matches(
    tmp_path: Path,
) -> None:
    # Chapter 15's hooks in the whole chain (it runs chapter 16's plan check first): Claude
    # Code 2.1.332 asks about a call a PreToolUse hook answers "ask" for, even where an allow
    # rule matches; guard hands its hooks the permissions to ask through.
    ask = json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}})
    command = f"cat >/dev/null; echo {shlex.quote(ask)}"
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
    }
    asked: list[str] = []

    async def approve(call: ToolCall, reason: str) -> Approval:
        asked.append(reason)
        return Approval.DENY

    agent = Agent(MockStreamProvider([]), default_tools(tmp_path))
    settings = Settings(hooks=hooks, permissions={"allow": ["Bash(touch *)"]})
    guarded = guard(agent, tmp_path, approve=approve, settings=settings)
    touch = ToolCall(id="t1", name="bash", arguments={"command": "touch made.txt"})
    output = await guarded.controls(touch)
    assert output.is_error and "the user refused it" in output.content
    assert asked == ["a PreToolUse hook asks for approval"]
    assert not (tmp_path / "made.txt").exists()
