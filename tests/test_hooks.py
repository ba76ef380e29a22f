"""ch15 · Hooks: shell and Python hooks at the five events claw supports.

The shell hooks are real scripts written into ``tmp_path`` and run with ``bash -c``; the
ones that read JSON use this Python (``sys.executable``). The end-to-end test drives the real
``Agent`` with a scripted model, the real ``edit`` tool and ``Controls``.
"""

import asyncio
import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_tools import Echo
from loop_clock import LoopClock
from marked_processes import time_out, wait_for_file

from claw.agent import Finish
from claw.control import Controls
from claw.events import RunFinished
from claw.hooks import (
    CommandHook,
    Completed,
    HookFailed,
    Hooks,
    PromptBlocked,
    Verdict,
    decide,
    interpret,
    matches,
    run_command,
    run_with_hooks,
)
from claw.loop import Agent
from claw.permissions import Approval, Permissions
from claw.registry import default_tools
from claw.streaming import MockStreamProvider
from claw.types import (
    AssistantTurn,
    DeveloperMessage,
    StopReason,
    ToolCall,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)

PY = f"{shlex.quote(sys.executable)} -S"  # no site: the hooks need only the standard library


def python_hook(tmp_path: Path, name: str, body: str) -> str:
    """Write ``body`` as a Python script; return the command that runs it with this Python."""
    script = tmp_path / name
    script.write_text("import json, sys\n" + body)
    return f"{PY} {shlex.quote(str(script))}"


def call(name: str = "echo", **arguments: Any) -> ToolCall:
    return ToolCall(id="call-1", name=name, arguments=arguments or {"text": "hello"})


def turn(*calls: tuple[str, str, dict[str, Any]], text: str = "") -> AssistantTurn:
    return AssistantTurn(
        text=text,
        tool_calls=tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls),
        stop_reason=StopReason.TOOL_USE,
    )


# --- matchers ---------------------------------------------------------------------------


@pytest.mark.parametrize("matcher", [None, "", "*"])
def test_hooks_empty_and_star_matchers_pick_every_tool(matcher: str | None) -> None:
    assert all(matches(matcher, name) for name in ("bash", "edit", "mcp__git__status"))


def test_hooks_matcher_is_an_exact_list_or_a_regex_as_in_claude_code() -> None:
    assert matches("bash|edit", "bash") and matches("bash|edit", "edit")
    assert matches("bash, edit", "edit")  # "," separates too, spaces around are ignored
    assert not matches("bash|edit", "bash_output")  # an exact name, not a part of it
    assert not matches("edit", "apply_edit")
    assert not matches("bash|", "") and not matches("bash, ,edit", "")  # "" names nothing
    assert matches("mcp__.*", "mcp__git__status")  # "." makes it a regex
    assert matches("^mcp__git", "mcp__git__status")  # a regex matches anywhere: anchor it
    assert not matches("EDIT", "edit")  # case-sensitive, like Claude Code


# --- reading what a command hook said -----------------------------------------------------


def test_hooks_exit_codes_mean_go_on_block_or_warn() -> None:
    assert interpret("PreToolUse", Completed(0, "", "")) == Verdict()
    blocked = interpret("PreToolUse", Completed(2, "", "no edits to lock files\n"))
    assert blocked == Verdict(block=True, reason="no edits to lock files", permission="deny")
    failed = interpret("PreToolUse", Completed(1, "", "jq: not found\n"))
    assert not failed.block
    assert failed.warnings == ("exited with code 1: jq: not found",)


def test_hooks_json_permission_decisions() -> None:
    def out(decision: str, **more: Any) -> Completed:
        specific = {"hookEventName": "PreToolUse", "permissionDecision": decision, **more}
        return Completed(0, json.dumps({"hookSpecificOutput": specific}), "")

    denied = interpret("PreToolUse", out("deny", permissionDecisionReason="tests are frozen"))
    assert denied == Verdict(block=True, reason="tests are frozen", permission="deny")
    assert interpret("PreToolUse", out("allow")) == Verdict(permission="allow")
    assert interpret("PreToolUse", out("ask")) == Verdict(permission="ask")
    updated = interpret("PreToolUse", out("allow", updatedInput={"text": "HELLO"}))
    assert updated.updated_input == {"text": "HELLO"} and not updated.block
    legacy = interpret("PostToolUse", Completed(0, '{"decision": "block", "reason": "lint"}', ""))
    assert legacy == Verdict(block=True, reason="lint", permission="deny")
    for event in ("PreToolUse", "PostToolUse"):  # a block without a reason names its event
        silent = interpret(event, Completed(0, '{"decision": "block"}', ""))
        assert silent.block and silent.permission == "deny"
        assert f"{event} hook" in silent.reason and "no reason given" in silent.reason
    mute = interpret("PreToolUse", out("deny"))
    assert mute.block and "PreToolUse hook (no reason given)" in mute.reason
    context = {"hookSpecificOutput": {"additionalContext": "Sprint ends Friday."}}
    only = interpret("UserPromptSubmit", Completed(0, json.dumps(context), ""))
    assert only == Verdict(context="Sprint ends Friday.")  # no decision: permission stays None


def test_hooks_malformed_fields_are_warnings_that_name_the_field() -> None:
    def read(data: dict[str, Any]) -> Verdict:
        return interpret("PreToolUse", Completed(0, json.dumps(data), ""))

    not_an_object = read({"decision": "block", "reason": "lint", "hookSpecificOutput": "deny"})
    assert not_an_object.block and not_an_object.reason == "lint"  # the rest still counts
    assert len(not_an_object.warnings) == 1
    assert "hookSpecificOutput" in not_an_object.warnings[0]
    maybe = {"permissionDecision": "maybe", "additionalContext": "x"}
    unknown = read({"hookSpecificOutput": maybe})
    assert (unknown.block, unknown.permission, unknown.context) == (False, None, "x")
    assert len(unknown.warnings) == 1 and "permissionDecision" in unknown.warnings[0]
    listed = read({"hookSpecificOutput": {"permissionDecision": "ask", "updatedInput": ["ls"]}})
    assert (listed.permission, listed.updated_input) == ("ask", None)
    assert len(listed.warnings) == 1 and "updatedInput" in listed.warnings[0]


def test_hooks_invalid_json_on_stdout_is_a_warning_not_a_decision() -> None:
    verdict = interpret("PreToolUse", Completed(0, '{"hookSpecificOutput": {"permiss', ""))
    assert not verdict.block
    assert len(verdict.warnings) == 1 and "invalid JSON on stdout" in verdict.warnings[0]
    plain = interpret("UserPromptSubmit", Completed(0, "Branch: main\n", ""))
    assert plain == Verdict(context="Branch: main")
    assert interpret("PreToolUse", Completed(0, "checked\n", "")) == Verdict()


# --- running command hooks ----------------------------------------------------------------


def test_hooks_continue_false_is_a_stop_with_the_stop_reason() -> None:
    stop = {"continue": False, "stopReason": "the build is broken"}
    assert decide("PreToolUse", stop) == Verdict(stop="the build is broken")
    assert decide("Stop", {"continue": False}).stop == "stopped by a Stop hook (no reason given)"
    assert decide("Stop", {"continue": True, "stopReason": "x"}).stop is None
    assert decide("Stop", {"stopReason": "x"}).stop is None
    both = decide("PreToolUse", {**stop, "decision": "block", "reason": "no"})
    assert (both.block, both.reason, both.stop) == (True, "no", "the build is broken")


def test_hooks_exit_2_with_a_json_decision_takes_its_reason() -> None:
    deny = {"hookSpecificOutput": {"permissionDecision": "deny",
                                   "permissionDecisionReason": "not on main"}}  # fmt: skip
    blocked = Verdict(block=True, reason="not on main", permission="deny")
    assert interpret("PreToolUse", Completed(2, json.dumps(deny), "stderr says")) == blocked
    block = json.dumps({"decision": "block", "reason": "lint first"})
    assert interpret("Stop", Completed(2, block, "stderr says")).reason == "lint first"
    unexplained = Completed(2, json.dumps({"decision": "block"}), "")
    assert interpret("Stop", unexplained).reason == "blocked by a Stop hook (no reason given)"
    # JSON that does not block, or is no object, or no JSON: stderr is the reason
    context = json.dumps({"hookSpecificOutput": {"additionalContext": "fyi"}})
    for stdout in (context, "[1, 2]", "{not json", "plain words", ""):
        verdict = interpret("PreToolUse", Completed(2, stdout, "stderr says"))
        assert verdict == Verdict(block=True, reason="stderr says", permission="deny"), stdout


async def test_hooks_shell_hook_reads_the_event_as_json_on_stdin_in_the_project(
    tmp_path: Path,
) -> None:
    seen = tmp_path / "seen.json"
    hooks = Hooks(tmp_path, session_id="s-42")
    hooks.add("PreToolUse", CommandHook("cat > seen.json; pwd > where.txt"), "echo")
    result = await hooks.pre_tool_use(call(text="hi"))
    assert result == call(text="hi")
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "echo" and payload["tool_input"] == {"text": "hi"}
    assert payload["tool_use_id"] == "call-1" and payload["session_id"] == "s-42"
    assert payload["cwd"] == str(tmp_path)
    assert Path((tmp_path / "where.txt").read_text().strip()).resolve() == tmp_path.resolve()


async def test_hooks_exit_2_refuses_the_call_with_stderr_as_the_error(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook("cat >/dev/null; echo 'no shouting' >&2; exit 2"))
    result = await hooks.pre_tool_use(call())
    assert result == ToolOutput.error("Blocked by a PreToolUse hook: no shouting")


async def test_hooks_other_exit_codes_let_the_call_go_on_and_warn_the_user(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook("echo 'formatter missing' >&2; exit 3"))
    with caplog.at_level(logging.WARNING, logger="claw.hooks"):
        assert await hooks.pre_tool_use(call()) == call()
    assert len(hooks.warnings) == 1
    assert "exited with code 3: formatter missing" in hooks.warnings[0]
    # the warning says which hook of which event: the user has to find and fix it
    assert "PreToolUse" in hooks.warnings[0]
    assert "echo 'formatter missing' >&2; exit 3" in hooks.warnings[0]
    assert any("formatter missing" in r.getMessage() for r in caplog.records)


async def test_hooks_matcher_decides_which_tools_a_hook_sees(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook("echo 'bash is off' >&2; exit 2"), "bash|edit")
    assert await hooks.pre_tool_use(call("echo")) == call("echo")
    assert await hooks.pre_tool_use(call("bash", command="ls")) == ToolOutput.error(
        "Blocked by a PreToolUse hook: bash is off"
    )


async def test_hooks_json_deny_from_a_python_script(tmp_path: Path) -> None:
    command = python_hook(
        tmp_path,
        "deny.py",
        "event = json.load(sys.stdin)\n"
        "if 'password' in event['tool_input'].get('text', ''):\n"
        "    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',\n"
        "        'permissionDecision': 'deny',\n"
        "        'permissionDecisionReason': 'never echo secrets'}}))\n",
    )
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook(command))
    assert await hooks.pre_tool_use(call(text="hello")) == call(text="hello")
    assert await hooks.pre_tool_use(call(text="my password")) == ToolOutput.error(
        "Blocked by a PreToolUse hook: never echo secrets"
    )


async def test_hooks_updated_input_changes_what_the_tool_receives(tmp_path: Path) -> None:
    command = python_hook(
        tmp_path,
        "upper.py",
        "event = json.load(sys.stdin)\n"
        "text = event['tool_input']['text']\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',\n"
        "    'permissionDecision': 'allow', 'updatedInput': {'text': text.upper()}}}))\n",
    )
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook(command), "echo")
    echo = Echo()
    controls = Controls(ToolSet([echo]), checks=[hooks.pre_tool_use])
    output = await controls(call(text="quiet please"))
    assert echo.seen == ["QUIET PLEASE"]
    assert output == ToolOutput.ok("QUIET PLEASE")


def running(pid: int) -> bool:
    """Whether process ``pid`` runs; a zombie (dead, waiting to be collected) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


async def test_hooks_a_hanging_hook_is_killed_with_its_group_and_the_call_goes_on(
    tmp_path: Path,
) -> None:
    clock = LoopClock.install()
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook("sleep 300 & echo $! > child.pid; sleep 300", 60))
    checking = asyncio.create_task(hooks.pre_tool_use(call()))
    await wait_for_file(tmp_path / "child.pid", checking)
    await time_out(clock, 60, checking)
    assert await checking == call()
    assert len(hooks.warnings) == 1 and "timed out after 60 s" in hooks.warnings[0]
    child = int((tmp_path / "child.pid").read_text())
    assert not running(child), "the background sleep was in the group: it is killed too"


async def test_hooks_huge_output_is_capped(tmp_path: Path) -> None:
    hook = CommandHook(f"{PY} -c \"import sys; sys.stderr.write('x' * 5_000_000)\"; exit 2")
    completed = await run_command(hook, {}, tmp_path, limit=1_000)
    assert completed.exit_code == 2 and completed.stderr == "x" * 1_000


async def test_hooks_output_that_is_not_utf8_is_replaced_not_an_error(tmp_path: Path) -> None:
    hook = CommandHook("printf 'caf\\303\\251 \\377'; printf '\\303\\251\\303\\251' >&2; exit 2")
    completed = await run_command(hook, {}, tmp_path, limit=3)  # cuts the second "é" in two
    assert completed == Completed(2, "caf", "\u00e9\ufffd")
    whole = await run_command(hook, {}, tmp_path)
    assert whole.stdout == "caf\u00e9 \ufffd"  # a byte that is no UTF-8 at all


async def test_hooks_a_hook_that_cannot_start_is_a_warning(tmp_path: Path) -> None:
    gone = tmp_path / "gone"  # the project folder was removed: bash cannot start in it
    with pytest.raises(HookFailed, match="could not be started"):
        await run_command(CommandHook("exit 2"), {}, gone)
    hooks = Hooks(gone)
    hooks.add("PreToolUse", CommandHook("exit 2"))
    assert await hooks.pre_tool_use(call()) == call()
    assert len(hooks.warnings) == 1 and "could not be started" in hooks.warnings[0]


async def test_hooks_python_hooks_sync_and_async(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def record(event: dict[str, Any]) -> None:
        seen.append(event)

    async def no_rm(event: dict[str, Any]) -> dict[str, Any] | None:
        if "rm " in event["tool_input"].get("command", ""):
            return {"decision": "block", "reason": "use git rm"}
        return None

    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", record)
    hooks.add("PreToolUse", no_rm, "bash")
    assert await hooks.pre_tool_use(call("bash", command="ls")) == call("bash", command="ls")
    refused = await hooks.pre_tool_use(call("bash", command="rm -rf build"))
    assert refused == ToolOutput.error("Blocked by a PreToolUse hook: use git rm")
    assert [e["tool_input"]["command"] for e in seen] == ["ls", "rm -rf build"]
    assert hooks.warnings == []


async def test_hooks_a_crashing_python_hook_is_a_warning(tmp_path: Path) -> None:
    def broken(event: dict[str, Any]) -> None:
        raise KeyError("tool_name")

    async def confused(event: dict[str, Any]) -> object:
        return "yes"

    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", broken)
    hooks.add("PreToolUse", confused)
    assert await hooks.pre_tool_use(call()) == call()
    assert len(hooks.warnings) == 2
    assert "raised KeyError" in hooks.warnings[0]
    assert "returned str (expected None or a dict)" in hooks.warnings[1]


async def test_hooks_run_in_order_and_the_first_block_stops_the_rest(tmp_path: Path) -> None:
    order: list[str] = []

    def first(event: dict[str, Any]) -> dict[str, Any]:
        order.append("first")
        specific = {"permissionDecision": "allow", "updatedInput": {"text": "changed"}}
        return {"hookSpecificOutput": specific}

    def second(event: dict[str, Any]) -> dict[str, Any]:
        order.append(f"second saw {event['tool_input']['text']}")
        return {"decision": "block", "reason": "second says no"}

    def third(event: dict[str, Any]) -> None:
        order.append("third")

    hooks = Hooks(tmp_path)
    for hook in (first, second, third):
        hooks.add("PreToolUse", hook)
    result = await hooks.pre_tool_use(call(text="original"))
    assert result == ToolOutput.error("Blocked by a PreToolUse hook: second says no")
    assert order == ["first", "second saw changed"]


def says(**specific: Any) -> Any:
    """A Python hook that always answers ``{"hookSpecificOutput": specific}``."""

    def hook(event: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": specific}

    return hook


async def test_hooks_run_puts_the_answers_of_an_event_together(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", says(permissionDecision="allow"))
    payload = hooks.payload("PreToolUse", tool_name="echo", tool_input={}, tool_use_id="c1")
    assert await hooks.run("PreToolUse", payload, "echo") == Verdict(permission="allow")
    hooks.add("PreToolUse", says(permissionDecision="ask"))
    hooks.add("PreToolUse", says(permissionDecision="allow"))
    asked = await hooks.run("PreToolUse", payload, "echo")
    assert asked == Verdict(permission="ask")  # "ask" outranks "allow", before it or after it

    prompts = Hooks(tmp_path)
    prompts.add("UserPromptSubmit", says(additionalContext="Branch: main"))
    prompts.add("UserPromptSubmit", lambda event: None)
    prompts.add("UserPromptSubmit", says(additionalContext="Sprint ends Friday."))
    prompted = await prompts.run("UserPromptSubmit", prompts.payload("UserPromptSubmit"))
    assert prompted == Verdict(context="Branch: main\nSprint ends Friday.")

    stops = Hooks(tmp_path)
    stops.add("Stop", lambda event: {"decision": "block"})
    stopped = await stops.run("Stop", stops.payload("Stop", stop_hook_active=False))
    assert stopped.block and stopped.permission == "deny"
    assert "Stop hook" in stopped.reason and "no reason given" in stopped.reason


async def test_hooks_post_tool_use_adds_stderr_to_what_the_model_sees(tmp_path: Path) -> None:
    command = python_hook(
        tmp_path,
        "lint.py",
        "event = json.load(sys.stdin)\n"
        "if 'TODO' in event['tool_response']['content']:\n"
        "    sys.stderr.write('remove the TODO before you go on')\n"
        "    sys.exit(2)\n",
    )
    hooks = Hooks(tmp_path)
    hooks.add("PostToolUse", CommandHook(command), "echo")
    controls = Controls(ToolSet([Echo()]), after=[hooks.post_tool_use])
    clean = await controls(call(text="done"))
    assert clean == ToolOutput.ok("done")
    flagged = await controls(call(text="TODO: tests"))
    assert flagged == ToolOutput.ok(
        "TODO: tests\n\nPostToolUse hook: remove the TODO before you go on"
    )


async def test_hooks_from_claude_code_settings(tmp_path: Path) -> None:
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "bash|edit",
                    "hooks": [{"type": "command", "command": "echo 'no bash' >&2; exit 2"}],
                },
                {"hooks": [{"type": "command", "command": "cat > seen.json", "timeout": 5}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "exit 0"}]}],
        }
    }
    hooks = Hooks.from_settings(settings, tmp_path)
    assert [(r.event, r.matcher, r.hook) for r in hooks.registered] == [
        ("PreToolUse", "bash|edit", CommandHook("echo 'no bash' >&2; exit 2", 60.0)),
        ("PreToolUse", None, CommandHook("cat > seen.json", 5.0)),
        ("Stop", None, CommandHook("exit 0", 60.0)),
    ]
    with pytest.raises(ValueError, match="unknown hook event 'PreToolUsed'"):
        Hooks.from_settings({"PreToolUsed": settings["hooks"]["PreToolUse"]}, tmp_path)
    with pytest.raises(ValueError, match="invalid matcher"):
        Hooks(tmp_path).add("PreToolUse", CommandHook("exit 0"), "bash(")
    refused = await hooks.pre_tool_use(call("bash", command="ls"))
    assert refused == ToolOutput.error("Blocked by a PreToolUse hook: no bash")
    assert not (tmp_path / "seen.json").exists()  # the first block stops the rest
    assert await hooks.pre_tool_use(call("read", path="a.py")) == call("read", path="a.py")
    assert json.loads((tmp_path / "seen.json").read_text())["tool_name"] == "read"


async def test_hooks_cancelling_the_caller_kills_the_hook(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", CommandHook("echo $$ > hook.pid; sleep 30", timeout=30))
    task = asyncio.ensure_future(hooks.pre_tool_use(call()))
    pid_file = tmp_path / "hook.pid"
    while not (pid_file.exists() and pid_file.read_text().strip()):
        if task.done():  # it failed before starting the hook: await says why
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and collected, not left running
        os.kill(pid, 0)


async def test_hooks_post_tool_use_sees_the_call_and_its_result(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def formatter(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"hookSpecificOutput": {"additionalContext": "ruff fixed 1 error"}}

    hooks = Hooks(tmp_path, session_id="s-7")
    hooks.add("PostToolUse", formatter, "echo")
    assert await hooks.post_tool_use(call(text="hi"), ToolOutput.ok("hi")) == ToolOutput.ok(
        "hi\n\nruff fixed 1 error"
    )
    assert seen == [
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s-7",
            "transcript_path": "",
            "cwd": str(tmp_path),
            "permission_mode": "default",
            "prompt_id": hooks.prompt_id,
            "tool_name": "echo",
            "tool_input": {"text": "hi"},
            "tool_use_id": "call-1",
            "tool_response": {"content": "hi", "is_error": False},
        }
    ]
    strict = Hooks(tmp_path)
    strict.add("PostToolUse", lambda event: {"decision": "block", "reason": "lint failed"})
    assert await strict.post_tool_use(call(), ToolOutput.ok("done")) == ToolOutput.ok(
        "done\n\nPostToolUse hook: lint failed"
    )
    # a call that failed runs no PostToolUse hook (Claude Code 2.1.332 runs none either)
    failed = ToolOutput.error("no such file")
    assert await hooks.post_tool_use(call(text="x"), failed) == failed
    assert await strict.post_tool_use(call(), failed) == failed
    assert len(seen) == 1


# --- around the agent: UserPromptSubmit, SessionStart, Stop -------------------------------


async def test_hooks_user_prompt_submit_can_block_the_prompt(tmp_path: Path) -> None:
    command = python_hook(
        tmp_path,
        "secrets.py",
        "event = json.load(sys.stdin)\n"
        "if 'sk-' in event['prompt']:\n"
        "    sys.stderr.write('the prompt holds an API key')\n"
        "    sys.exit(2)\n",
    )
    hooks = Hooks(tmp_path)
    hooks.add("UserPromptSubmit", CommandHook(command))
    provider = MockStreamProvider(["Hello!"])
    agent = Agent(provider)
    events = [e async for e in run_with_hooks(agent, hooks, "use key sk-123 to deploy")]
    assert events == [PromptBlocked("the prompt holds an API key")]
    assert provider.calls == [] and agent.history == []
    events = [e async for e in run_with_hooks(agent, hooks, "hi")]
    assert isinstance(events[-1], RunFinished) and events[-1].text == "Hello!"


async def test_hooks_context_from_session_start_and_prompt_hooks_reaches_the_model(
    tmp_path: Path,
) -> None:
    hooks = Hooks(tmp_path)
    hooks.add("SessionStart", CommandHook("cat >/dev/null; echo 'Branch: main'"))
    hooks.add(
        "UserPromptSubmit",
        lambda event: {"hookSpecificOutput": {"additionalContext": "Sprint ends Friday."}},
    )
    provider = MockStreamProvider(["One.", "Two."])
    agent = Agent(provider)
    _ = [e async for e in run_with_hooks(agent, hooks, "first")]
    _ = [e async for e in run_with_hooks(agent, hooks, "second")]
    first, second = list(provider.calls[0].messages), list(provider.calls[1].messages)
    assert first == [
        DeveloperMessage(content="Branch: main"),
        DeveloperMessage(content="Sprint ends Friday."),
        UserMessage(content="first"),
    ]
    # SessionStart ran once; the prompt hook runs before every prompt
    developer = [m.text for m in second if isinstance(m, DeveloperMessage)]
    assert developer == ["Branch: main", "Sprint ends Friday.", "Sprint ends Friday."]
    assert second[-1] == UserMessage(content="second")


async def test_hooks_a_stop_hook_can_send_the_model_back_to_work(tmp_path: Path) -> None:
    seen: list[bool] = []

    def tests_first(event: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(event["stop_hook_active"])
        if event["stop_hook_active"]:
            return None
        return {"decision": "block", "reason": "run the tests before you stop"}

    hooks = Hooks(tmp_path)
    hooks.add("Stop", tests_first)
    provider = MockStreamProvider(["Done.", "Tests pass. Done."])
    agent = Agent(provider)
    events = [e async for e in run_with_hooks(agent, hooks, "fix it")]
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert [f.text for f in finished] == ["Done.", "Tests pass. Done."]
    assert seen == [False, True]
    assert provider.calls[1].messages[-1] == UserMessage(
        content="A Stop hook asks you to go on: run the tests before you stop"
    )


async def test_hooks_continue_false_stops_the_session(tmp_path: Path) -> None:
    stops = [{"continue": False, "stopReason": "quota reached"}]

    def once(event: dict[str, Any]) -> dict[str, Any] | None:
        return stops.pop() if stops else None

    stopped_after: list[str] = []
    hooks = Hooks(tmp_path)
    hooks.add("PostToolUse", once)
    hooks.add("Stop", lambda event: stopped_after.append(event["prompt_id"]))
    echo = ("e1", "echo", {"text": "hi"})
    provider = MockStreamProvider([turn(echo), "Hi.", "Hi again.", "Once more."])
    agent = Agent(provider, [Echo()])
    agent.gate = Controls(agent.tools, after=[hooks.post_tool_use])
    events = [e async for e in run_with_hooks(agent, hooks, "first")]
    # the call ran and is answered; then the run ends, the model is not asked again
    assert isinstance(events[-1], RunFinished) and events[-1].reason is Finish.HOOK_STOPPED
    assert len(provider.calls) == 1 and stopped_after == []
    assert isinstance(agent.history[-1], ToolResultMessage) and agent.history[-1].text == "hi"
    # the next prompt starts afresh
    events = [e async for e in run_with_hooks(agent, hooks, "second")]
    assert isinstance(events[-1], RunFinished) and events[-1].reason is Finish.DONE
    assert len(stopped_after) == 1
    # a prompt hook's stop blocks the prompt with its reason; a Stop hook's ends the run
    prompt = Hooks(tmp_path)
    prompt.add("UserPromptSubmit", lambda event: {"continue": False, "stopReason": "closed"})
    assert [e async for e in run_with_hooks(agent, prompt, "third")] == [PromptBlocked("closed")]
    late = Hooks(tmp_path)
    late.add("Stop", lambda event: {"decision": "block", "reason": "go on", "continue": False})
    events = [e async for e in run_with_hooks(agent, late, "fourth")]
    assert [e.text for e in events if isinstance(e, RunFinished)] == ["Hi again."]


async def test_hooks_pre_tool_use_context_reaches_the_model_after_the_results(
    tmp_path: Path,
) -> None:
    said: list[str] = []

    def note(event: dict[str, Any]) -> dict[str, Any] | None:
        text = event["tool_input"]["text"]
        return {"hookSpecificOutput": {"additionalContext": f"about {text}"}} if text else None

    async def prepare(history: list[Any]) -> None:
        said.append(history[-1].text)

    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", note)
    calls = [("a", "echo", {"text": "a"}), ("b", "echo", {"text": "b"})]
    provider = MockStreamProvider([turn(*calls), turn(("c", "echo", {"text": ""})), "Done."])
    agent = Agent(provider, [Echo()], prepare=prepare)
    agent.gate = Controls(agent.tools, checks=[hooks.pre_tool_use])
    _ = [e async for e in run_with_hooks(agent, hooks, "go")]
    second = list(provider.calls[1].messages)
    # after both results, before the model is asked again: one message per call's hook
    assert [(type(m), m.text) for m in second[-4:]] == [
        (ToolResultMessage, "a"),
        (ToolResultMessage, "b"),
        (DeveloperMessage, "about a"),
        (DeveloperMessage, "about b"),
    ]
    third = list(provider.calls[2].messages)
    assert [m.text for m in third if isinstance(m, DeveloperMessage)] == [
        m.text for m in second if isinstance(m, DeveloperMessage)
    ], "told once"
    assert said == ["go", "about b", ""] and agent.prepare is prepare


async def test_hooks_pre_tool_use_ask_asks_even_where_a_rule_allows(tmp_path: Path) -> None:
    asked: list[tuple[dict[str, Any], str]] = []
    answers = [Approval.DENY, Approval.ONCE]

    async def approve(call: ToolCall, reason: str) -> Approval:
        asked.append((call.arguments, reason))
        return answers.pop()

    def ask(event: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"permissionDecision": "ask",
                                       "updatedInput": {"command": "touch b"}}}  # fmt: skip

    hooks = Hooks(tmp_path)
    hooks.add("PreToolUse", ask)
    touch = call("bash", command="touch a")
    # no permissions: the ask is left to the permission check, as before
    assert await hooks.pre_tool_use(touch) == call("bash", command="touch b")
    hooks.permissions = Permissions(tmp_path, allow=["Bash(touch *)"], approve=approve)
    assert await hooks.pre_tool_use(touch) == call("bash", command="touch b")
    refused = await hooks.pre_tool_use(touch)
    assert isinstance(refused, ToolOutput) and refused.is_error
    assert "a PreToolUse hook asks for approval" in refused.content
    assert "the user refused it" in refused.content
    assert asked == [({"command": "touch b"}, "a PreToolUse hook asks for approval")] * 2
    # a call the rules deny or ask about is theirs: nobody is asked twice
    for rules in ({"deny": ["Bash(touch *)"]}, {"ask": ["Bash(touch *)"]}, {}):
        hooks.permissions = Permissions(tmp_path, approve=approve, **rules)
        assert await hooks.pre_tool_use(touch) == call("bash", command="touch b")
    assert len(asked) == 2
    hooks.permissions = Permissions(tmp_path, allow=["Bash(touch *)"])
    unasked = await hooks.pre_tool_use(touch)
    assert isinstance(unasked, ToolOutput) and "none was given" in unasked.content


# --- end to end ---------------------------------------------------------------------------

LOCK = '[[package]]\nname = "serde"\nversion = "1.0.200"\n'


async def test_hooks_end_to_end_a_pre_tool_use_hook_blocks_editing_a_lock_file(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "Cargo.lock").write_text(LOCK)
    command = python_hook(
        tmp_path,
        "no_lock_edits.py",
        "event = json.load(sys.stdin)\n"
        "if event['tool_input'].get('path', '').endswith('.lock'):\n"
        "    sys.stderr.write('Cargo.lock is generated: run `cargo update -p serde` instead')\n"
        "    sys.exit(2)\n",
    )
    hooks = Hooks.from_settings(
        {"PreToolUse": [{"matcher": "edit|write", "hooks": [{"command": command, "timeout": 5}]}]},
        project,
    )
    edit = {"path": "Cargo.lock", "old_string": "1.0.200", "new_string": "1.0.201"}
    provider = MockStreamProvider(
        [
            turn(("read-1", "read", {"path": "Cargo.lock"})),
            turn(("edit-1", "edit", edit)),
            "I will run `cargo update -p serde` instead.",
        ]
    )
    tools = default_tools(project)
    agent = Agent(provider, tools)
    agent.gate = Controls(tools, checks=[hooks.pre_tool_use])
    finished = await agent.run("Bump serde to 1.0.201.")

    assert (project / "Cargo.lock").read_text() == LOCK
    assert finished.reason is Finish.DONE
    results = {
        m.tool_call_id: m for m in provider.calls[-1].messages if isinstance(m, ToolResultMessage)
    }
    assert results["edit-1"] == ToolOutput.error(
        "Blocked by a PreToolUse hook: Cargo.lock is generated: run `cargo update -p serde` instead"
    ).to_message(ToolCall(id="edit-1", name="edit", arguments=edit))
    assert "serde" in results["read-1"].text and hooks.warnings == []
