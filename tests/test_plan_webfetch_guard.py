"""ch16 · ``guard``, which the ``claw`` command puts in front of the tools, checks web_fetch's hops.

A project allows ``WebFetch(domain:localhost)``. The model fetches a page there that redirects
to a host nobody approved; the guarded agent must stop at the redirect. Names come from a
table (``localhost`` and ``evil.example`` are both 127.0.0.1, where the loopback server runs).
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from claw.agent import Finish
from claw.guard import guard
from claw.loop import Agent
from claw.permissions import Approval, Mode
from claw.plan import PlanState
from claw.registry import default_tools
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
