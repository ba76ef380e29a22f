"""ch29 · The SDK's messages: typed records of a run, named as the Claude Agent SDK names them.

claw runs in this process against the loopback server; the Claude Agent SDK
(``claude_agent_sdk``, a test dependency) is the oracle for the names: only its ``types``
module is imported, its command-line transport never runs.
"""

import asyncio
import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest
from agent_sdk_oracle import claude_agent_sdk_types
from claw_command import calls, no_fsync, says
from sdk_run import collect, options
from sdk_run import project as project_folder

from claw.main import main
from claw.sdk import (
    AssistantMessage,
    ClawAgentOptions,
    ResultMessage,
    SdkError,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UsageMessage,
    UserMessage,
    message_from_record,
    record_of,
)
from clawbook.harness.loopback import LoopbackServer

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here
project = pytest.fixture(project_folder)

RECORDS: list[dict[str, Any]] = [
    {"type": "system", "subtype": "init", "model": "m", "cwd": "/p", "tools": ["read"],
     "permissionMode": "default", "session_id": "s"},
    {"type": "text", "text": "Hel"},
    {"type": "assistant", "step": 1, "text": "Hello"},
    {"type": "tool_use", "step": 1, "id": "c1", "name": "read", "input": {"path": "a"}},
    {"type": "tool_result", "step": 1, "tool_use_id": "c1", "name": "read", "content": "x",
     "is_error": False},
    {"type": "usage", "step": 1, "usage": {"input_tokens": 3, "output_tokens": 2,
                                           "cached_input_tokens": 0, "reasoning_tokens": 0}},
    {"type": "result", "subtype": "success", "is_error": False, "finish_reason": "done",
     "result": "Hello", "num_turns": 1, "duration_ms": 5, "total_cost_usd": None,
     "usage": {"input_tokens": 3}, "permission_denials": [], "session_id": "s"},
]  # fmt: skip
"""One record of each type ``claw -p --output-format stream-json`` writes."""

CLAW_ONLY = {
    ("ToolResultBlock", "name"): "the record names the tool; Claude Code's block does not",
    ("AssistantMessage", "step"): "claw numbers its steps; Claude Code does not",
    ("UserMessage", "step"): "the same",
    ("ResultMessage", "finish_reason"): "claw's Finish, finer than subtype (cancelled, ...)",
}
"""Fields claw's messages have and Claude Code's do not (the page lists them with reasons)."""

NOT_IN_CLAW = {
    ("ResultMessage", "duration_api_ms"): "claw does not time the provider's calls apart",
    ("StreamEvent", "uuid"): "claw's text records carry no ids: they are not kept",
    ("StreamEvent", "session_id"): "the init message and the result say the session",
}
"""Fields Claude Code's messages must have and claw's do not."""


def field_names(kind: type) -> dict[str, bool]:
    """A dataclass's fields, each with whether it must be given (it has no default)."""
    return {
        f.name: f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        for f in dataclasses.fields(kind)
    }


def test_sdk_messages_carry_the_claude_agent_sdk_class_and_field_names() -> None:
    theirs = claude_agent_sdk_types()

    made = [message_from_record(record, "m") for record in RECORDS]
    kinds = {type(m) for m in made} | {type(b) for m in made for b in getattr(m, "content", [])}
    assert {k.__name__ for k in kinds} >= {"SystemMessage", "StreamEvent", "AssistantMessage",
        "TextBlock", "ToolUseBlock", "UserMessage", "ToolResultBlock", "ResultMessage"}  # fmt: skip
    for kind in kinds - {UsageMessage}:  # UsageMessage is claw's own (the page says why)
        their = getattr(theirs, kind.__name__)
        ours, their_fields = field_names(kind), field_names(their)
        for name in ours:
            assert name in their_fields or (kind.__name__, name) in CLAW_ONLY, (kind, name)
        for name, required in their_fields.items():
            if required:
                assert name in ours or (kind.__name__, name) in NOT_IN_CLAW, (their, name)


def test_sdk_options_carry_the_claude_agent_sdk_option_names() -> None:
    theirs = claude_agent_sdk_types()

    ours = field_names(type(ClawAgentOptions(max_turns=3)))
    assert [name for name in ours if name not in field_names(theirs.ClaudeAgentOptions)] == []


def test_sdk_each_record_is_one_typed_message_and_back() -> None:
    system, text, said, use, result_of_tool, usage, result = (
        message_from_record(record, "test/model") for record in RECORDS
    )
    data = {key: value for key, value in RECORDS[0].items() if key not in ("type", "subtype")}
    assert system == SystemMessage("init", data)
    assert set(data) == {"model", "cwd", "tools", "permissionMode", "session_id"}
    assert text == StreamEvent({"type": "text", "text": "Hel"})
    assert said == AssistantMessage([TextBlock("Hello")], "test/model", 1)
    assert use == AssistantMessage([ToolUseBlock("c1", "read", {"path": "a"})], "test/model", 1)
    assert result_of_tool == UserMessage([ToolResultBlock("c1", "x", False, "read")], 1)
    assert isinstance(usage, UsageMessage) and usage.usage["input_tokens"] == 3
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.num_turns, result.session_id) == ("success", 1, "s")
    made = [system, text, said, use, result_of_tool, usage, result]
    assert [record_of(message) for message in made] == RECORDS
    with pytest.raises(SdkError, match="'surprise'"):
        message_from_record({"type": "surprise"}, "m")


async def test_sdk_cwd_opens_claw_there_and_never_moves_the_process(
    server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("the other folder\n")
    server.add(calls("read", {"path": "notes.txt"}), says("Done."))
    moves: list[object] = []
    monkeypatch.setattr("os.chdir", moves.append)  # a library must not move its host program

    messages = await collect("Read notes.txt", options(server, cwd=elsewhere))

    system = messages[0]
    assert isinstance(system, SystemMessage) and system.data["cwd"] == str(elsewhere)
    results = [m.content[0] for m in messages if isinstance(m, UserMessage)]
    assert isinstance(results[0], ToolResultBlock) and "the other folder" in results[0].content
    assert moves == [] and Path.cwd() == project


async def test_sdk_query_yields_init_then_each_step_then_the_result(
    server: LoopbackServer, project: Path
) -> None:
    (project / "notes.txt").write_text("remember the milk\n")
    server.add(calls("read", {"path": "notes.txt"}), says("It says: remember the milk."))

    messages = await collect("What does notes.txt say?", options(server))

    system, *steps, result = messages
    assert isinstance(system, SystemMessage) and system.subtype == "init"
    assert system.data["model"] == "test/model" and "read" in system.data["tools"]
    assert system.data["cwd"] == str(project)
    kinds = [(type(m).__name__, type(getattr(m, "content", [None])[0]).__name__) for m in steps]
    assert [k for k in kinds if k[0] != "UsageMessage"] == [
        ("AssistantMessage", "ToolUseBlock"), ("UserMessage", "ToolResultBlock"),
        ("AssistantMessage", "TextBlock"),
    ]  # fmt: skip
    tool_result = next(m for m in steps if isinstance(m, UserMessage)).content[0]
    assert isinstance(tool_result, ToolResultBlock) and "remember the milk" in tool_result.content
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.num_turns) == ("success", False, 2)
    assert result.result == "It says: remember the milk."
    assert result.session_id == system.data["session_id"]
    assert result.usage is not None and result.usage["input_tokens"] > 0
    assert not any(isinstance(m, StreamEvent) for m in messages)  # not asked for


def normal(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` without what differs between two runs of the same script: time, session."""
    changing = {"duration_ms", "session_id"}
    return {key: "?" if key in changing else value for key, value in record.items()}


def test_sdk_messages_are_the_records_of_print_mode_json_and_stream_json(
    server: LoopbackServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (project / "notes.txt").write_text("remember the milk\n")
    script = [calls("read", {"path": "notes.txt"}), calls("write", {"path": "x", "content": "y"},
              call_id="call-2"), says("It says: remember the milk.")]  # fmt: skip

    def claw_p(output_format: str) -> list[dict[str, Any]]:
        server.add(*script)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        argv = ["-p", "What does notes.txt say?", "--output-format", output_format]
        main([*argv, "--model", "test/model", "--base-url", server.base_url])
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    server.add(*script)
    chosen = options(server, include_partial_messages=True)
    messages = asyncio.run(collect("What does notes.txt say?", chosen))  # as a script would
    lines = claw_p("stream-json")
    (result,) = claw_p("json")

    assert [normal(record_of(m)) for m in messages] == [normal(line) for line in lines]
    assert normal(record_of(messages[-1])) == normal(result)
    assert result["permission_denials"][0]["tool_name"] == "write"  # nobody approved it
    assert {line["type"] for line in lines} >= {"system", "text", "tool_use", "tool_result",
                                                "assistant", "usage", "result"}  # fmt: skip
