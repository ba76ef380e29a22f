"""ch29 · Who decides: ``can_use_tool`` answers claw's permission questions, Python hooks run
as chapter 15's, and neither gets past chapter 14's safety checks."""

from pathlib import Path
from typing import Any

import pytest
from claw_command import calls, no_fsync, says, tool_results
from sdk_run import collect, options
from sdk_run import project as project_folder

from claw.sdk import (
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here
project = pytest.fixture(project_folder)

WRITE = {"path": "a.txt", "content": "hello\n"}


async def test_sdk_can_use_tool_is_asked_what_the_rules_ask_and_its_yes_runs_the_call(
    server: LoopbackServer, project: Path
) -> None:
    asked: list[tuple[str, dict[str, Any], str | None]] = []
    why: list[str | None] = []

    async def can_use_tool(
        name: str, arguments: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append((name, arguments, context.tool_use_id))
        why.append(context.decision_reason)
        return PermissionResultAllow()

    server.add(calls("read", {"path": "a.txt"}, "call-0"), calls("write", WRITE), says("Done."))
    (project / "a.txt").write_text("old\n")
    messages = await collect("Write it.", options(server, can_use_tool=can_use_tool))

    assert asked == [("write", WRITE, "call-1")]  # reading needs no question
    assert why[0] and "ask" in why[0]  # the permission rules' reason: default mode says ask
    assert (project / "a.txt").read_text() == "hello\n"
    assert isinstance(messages[-1], ResultMessage) and messages[-1].permission_denials == []


async def test_sdk_an_allow_with_updated_input_runs_the_changed_call(
    server: LoopbackServer, project: Path
) -> None:
    async def elsewhere(name: str, arguments: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow(updated_input={**arguments, "path": "b.txt"})

    server.add(calls("write", WRITE), says("Done."))
    await collect("Write it.", options(server, can_use_tool=elsewhere))

    assert not (project / "a.txt").exists()
    assert (project / "b.txt").read_text() == "hello\n"


async def test_sdk_a_deny_tells_the_model_its_message_and_is_a_permission_denial(
    server: LoopbackServer, project: Path
) -> None:
    async def no(name: str, arguments: dict[str, Any], context: Any) -> PermissionResultDeny:
        return PermissionResultDeny(message="not on a Friday")

    server.add(calls("write", WRITE), says("I may not."))
    messages = await collect("Write it.", options(server, can_use_tool=no))

    assert not (project / "a.txt").exists()
    assert tool_results(server) == ["Error: Permission denied: not on a Friday"]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.permission_denials == [
        {"tool_name": "write", "tool_use_id": "call-1", "tool_input": WRITE}
    ]


async def test_sdk_without_can_use_tool_a_question_is_a_no(
    server: LoopbackServer, project: Path
) -> None:
    server.add(calls("write", WRITE), says("I may not."))
    messages = await collect("Write it.", options(server))

    assert not (project / "a.txt").exists()
    assert "Permission denied" in tool_results(server)[0]
    assert isinstance(messages[-1], ResultMessage)
    assert [d["tool_name"] for d in messages[-1].permission_denials] == ["write"]


async def test_sdk_changed_input_still_meets_the_safety_checks(
    server: LoopbackServer, project: Path
) -> None:
    # The attack: the callback (or whoever wrote it) moves an allowed write out of the project.
    async def outside(name: str, arguments: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow(updated_input={**arguments, "path": "../escaped.txt"})

    server.add(calls("write", WRITE), says("Done."))
    await collect("Write it.", options(server, can_use_tool=outside))

    assert not (project.parent / "escaped.txt").exists()
    assert not (project / "a.txt").exists()
    assert tool_results(server)[0].startswith("Error: blocked by the safety checks: ../escaped")


async def test_sdk_a_pre_tool_use_hook_sees_the_call_and_can_deny_it(
    server: LoopbackServer, project: Path
) -> None:
    seen: list[tuple[str, Any, str | None]] = []

    contexts: list[Any] = []

    async def no_rm(payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        seen.append((payload["tool_name"], payload["tool_input"], tool_use_id))
        contexts.append(context)
        if "rm " not in payload["tool_input"]["command"]:
            return {}
        decision = {"permissionDecision": "deny", "permissionDecisionReason": "no rm here"}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}

    (project / "keep.txt").write_text("precious\n")
    server.add(calls("bash", {"command": "rm keep.txt"}), says("Blocked."))
    hooks = {"PreToolUse": [HookMatcher("Bash", [no_rm])]}
    await collect("Clean up.", options(server, hooks=hooks, permission_mode="bypassPermissions"))

    assert (project / "keep.txt").exists()
    assert seen == [("bash", {"command": "rm keep.txt"}, "call-1")]
    assert contexts == [{"signal": None}]
    assert tool_results(server) == ["Error: Blocked by a PreToolUse hook: no rm here"]


async def test_sdk_a_post_tool_use_hook_sees_the_result_and_adds_to_it(
    server: LoopbackServer, project: Path
) -> None:
    results: list[Any] = []

    async def review(payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        results.append(payload["tool_response"])
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                       "additionalContext": "Reviewed by the hook."}}  # fmt: skip

    (project / "a.txt").write_text("alpha\n")
    server.add(calls("read", {"path": "a.txt"}), says("Read."))
    hooks = {"PostToolUse": [HookMatcher("Read", [review]), HookMatcher("Bash", [review])]}
    await collect("Read a.txt.", options(server, hooks=hooks))

    assert len(results) == 1 and "alpha" in results[0]["content"]  # Bash's matcher: not run
    assert tool_results(server)[0].endswith("alpha\n\nReviewed by the hook.")


async def test_sdk_a_blocked_prompt_is_a_result_and_a_line_on_stderr(
    server: LoopbackServer, project: Path
) -> None:
    async def not_today(payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        return {"decision": "block", "reason": "not today"}

    lines: list[str] = []
    hooks = {"UserPromptSubmit": [HookMatcher(None, [not_today])]}
    messages = await collect("Hello?", options(server, hooks=hooks, stderr=lines.append))

    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert result.result == "The prompt was blocked by a UserPromptSubmit hook: not today"
    assert "claw: a UserPromptSubmit hook blocked the prompt: not today" in lines
    assert server.requests == []


async def test_sdk_an_exception_in_can_use_tool_is_raised_in_the_program(
    server: LoopbackServer, project: Path
) -> None:
    async def broken(name: str, arguments: dict[str, Any], context: Any) -> Any:
        raise LookupError("my callback broke")

    server.add(calls("write", WRITE), says("Done."))
    with pytest.raises(LookupError, match="my callback broke"):
        await collect("Write it.", options(server, can_use_tool=broken))
    assert not (project / "a.txt").exists()
