"""ch29 · Conversations, cancelling and errors: ``ClawSDKClient``, and ``query`` left early.

The commands that must die write their pid to a file and sleep; the test waits for the file,
cancels, and asserts the process is gone, with no wall-clock margin: closing the client waits
until the tool has stopped them.
"""

import asyncio
import contextlib
import socket
from pathlib import Path

import pytest
from claw_command import calls, no_fsync, says
from sdk_run import SLEEPER, alive, collect, options, wait_for_pid
from sdk_run import project as project_folder

from claw.errors import ClawError
from claw.sdk import (
    AssistantMessage,
    BadOption,
    ClawAgentOptions,
    ClawSDKClient,
    HookMatcher,
    ResultMessage,
    SdkError,
    ToolUseBlock,
    query,
)
from clawbook.harness.loopback import JSONReply, LoopbackServer, error_body

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here
project = pytest.fixture(project_folder)

SLEEP = calls("bash", {"command": SLEEPER})


def sleeping(server: LoopbackServer) -> ClawAgentOptions:
    """Options for a run whose bash call sleeps, allowed without a question."""
    server.add(SLEEP, says("Woke up."))
    return options(server, permission_mode="bypassPermissions")


@pytest.mark.timeout(30)
async def test_sdk_leaving_the_loop_early_kills_the_running_command(
    server: LoopbackServer, project: Path
) -> None:
    async with contextlib.aclosing(query("Sleep.", sleeping(server))) as messages:
        async for message in messages:
            if isinstance(message, AssistantMessage) and isinstance(
                message.content[0], ToolUseBlock
            ):
                pid = await wait_for_pid(project / "pid")
                assert alive(pid)
                break
    assert not alive(pid)  # aclosing's aclose() returned: the command is gone already


@pytest.mark.timeout(30)
async def test_sdk_cancelling_the_task_that_reads_kills_the_running_command(
    server: LoopbackServer, project: Path
) -> None:
    reading = asyncio.ensure_future(collect("Sleep.", sleeping(server)))
    pid = await wait_for_pid(project / "pid")
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert not alive(pid)


@pytest.mark.timeout(30)
async def test_sdk_interrupt_ends_the_reply_cancelled_and_the_client_goes_on(
    server: LoopbackServer, project: Path
) -> None:
    server.add(SLEEP)
    async with ClawSDKClient(options(server, permission_mode="bypassPermissions")) as client:
        await client.query("Sleep.")
        with pytest.raises(SdkError, match="still coming"):
            await client.query("And another thing.")
        pid = await wait_for_pid(project / "pid")
        await client.interrupt()
        replies = [message async for message in client.receive_response()]
        result = replies[-1]
        assert isinstance(result, ResultMessage)
        assert (result.finish_reason, result.is_error) == ("cancelled", True)
        assert not alive(pid)
        server.add(says("Still here."))
        await client.query("Are you there?")
        again = [message async for message in client.receive_response()]
        assert isinstance(again[-1], ResultMessage) and again[-1].result == "Still here."


async def test_sdk_the_client_keeps_one_conversation_across_queries(
    server: LoopbackServer, project: Path
) -> None:
    server.add(says("Hello, Ada."), says("Your name is Ada."))
    async with ClawSDKClient(options(server)) as client:
        await client.query("My name is Ada.")
        first = [message async for message in client.receive_response()]
        await client.query("What is my name?")
        second = [message async for message in client.receive_response()]

    said = [m["content"] for m in server.requests[1].json["messages"] if m["role"] != "system"]
    assert "My name is Ada." in str(said) and "Hello, Ada." in str(said)
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)
    assert first[-1].session_id == second[-1].session_id
    assert second[-1].result == "Your name is Ada."


async def test_sdk_continue_conversation_and_resume_pick_up_a_recorded_session(
    server: LoopbackServer, project: Path
) -> None:
    server.add(says("Hello, Ada."), says("Your name is Ada."), says("Still Ada."))
    *_, first = await collect("My name is Ada.", options(server))
    *_, again = await collect("What is my name?", options(server, continue_conversation=True))
    assert isinstance(first, ResultMessage) and isinstance(again, ResultMessage)
    assert first.session_id is not None
    *_, resumed = await collect("And now?", options(server, resume=first.session_id))

    for request in server.requests[1:]:
        said = [m["content"] for m in request.json["messages"] if m["role"] == "user"]
        assert "My name is Ada." in str(said)
    assert isinstance(resumed, ResultMessage) and resumed.result == "Still Ada."


async def test_sdk_a_closed_client_refuses_a_query_and_can_connect_again(
    server: LoopbackServer, project: Path
) -> None:
    client = ClawSDKClient(options(server))
    await client.connect()
    await client.disconnect()  # no query in between: nothing to cancel
    with pytest.raises(SdkError, match="not connected"):
        await client.query("Hello?")
    server.add(says("Hello again."))
    await client.connect()
    await client.query("Hello?")
    replies = [message async for message in client.receive_response()]
    await client.disconnect()
    assert isinstance(replies[-1], ResultMessage) and replies[-1].result == "Hello again."


def test_sdk_a_bad_option_is_a_bad_option_error_at_once(tmp_path: Path) -> None:
    cases = [
        ({"max_turns": 0}, "max_turns must be a whole number of at least 1, not 0"),
        ({"max_turns": True}, "max_turns must be a whole number of at least 1, not True"),
        ({"permission_mode": "yolo"}, "permission_mode 'yolo' is not one of default, "),
        ({"cwd": tmp_path / "nowhere"}, f"cwd '{tmp_path / 'nowhere'}' is not a folder"),
        ({"hooks": {"OnFire": [HookMatcher()]}},
         "hooks: claw has no event 'OnFire'; it has PreToolUse, PostToolUse, "),
        ({"mcp_servers": {"x": {"command": "x"}}}, "mcp_servers['x'] is not a server of"),
    ]
    for given, message in cases:
        with pytest.raises(BadOption) as raised:
            ClawAgentOptions(**given)  # type: ignore[arg-type]
        assert str(raised.value).startswith(message), given
        assert isinstance(raised.value, ClawError)


async def test_sdk_a_bad_claw_option_is_a_bad_option_before_any_request(
    server: LoopbackServer, project: Path
) -> None:
    chosen = ClawAgentOptions(model="test/model", extra_args={"base-url": "ftp://example"})
    with pytest.raises(BadOption, match="--base-url"):
        await collect("Hello?", chosen)
    assert server.requests == []


async def test_sdk_a_provider_error_is_an_error_result_not_a_traceback(
    server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claw.providers.http import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda *_: None)  # retries are chapter 5b's
    server.add(*[JSONReply(error_body(401, "bad key"), status=401)] * 3)
    *_, result = await collect("Hello?", options(server))
    assert isinstance(result, ResultMessage)
    assert (result.is_error, result.subtype) == (True, "error_during_execution")
    assert "bad key" in (result.result or "")

    down = LoopbackServer()  # never started: its port is one nothing listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down.port = probe.getsockname()[1]
    *_, result = await collect("Hello?", options(down))
    assert isinstance(result, ResultMessage) and result.is_error
    assert f"cannot reach {down.base_url}" in (result.result or "")


async def test_sdk_max_turns_is_claws_max_steps(server: LoopbackServer, project: Path) -> None:
    server.add(calls("glob", {"pattern": "*"}), calls("glob", {"pattern": "*"}, "call-2"))
    *_, result = await collect("Look around.", options(server, max_turns=1))
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.num_turns, result.is_error) == ("error_max_turns", 1, True)
    assert len(server.requests) == 1


async def test_sdk_system_prompt_appends_to_claws_or_replaces_it(
    server: LoopbackServer, project: Path
) -> None:
    server.add(says("Aye."), says("Aye."))
    preset = {"type": "preset", "preset": "claude_code", "append": "Talk like a pirate."}
    await collect("Hi.", options(server, system_prompt=preset))
    await collect("Hi.", options(server, system_prompt="You are a parrot."))

    appended, replaced = (r.json["messages"][0] for r in server.requests)
    assert appended["role"] == "system" and appended["content"].endswith("\n\nTalk like a pirate.")
    assert "claw" in appended["content"]
    assert replaced == {"role": "system", "content": "You are a parrot."}
