"""ch22 · Sessions: the transcript on disk, written, read back, torn and damaged.

The property at the heart of the chapter: any history, recorded by ``SessionRecorder`` step by
step (with a compaction now and then) and read back by ``load_session``, is equal to the history
the agent held, message for message: tool calls, reasoning, content parts, any Unicode, even a
lone surrogate.
"""

import asyncio
import json
import os
import warnings
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from claw import events as events_module
from claw.agent import Finish
from claw.events import RunFinished, StepUsage, TodosChanged, ToolCalled, ToolResult
from claw.loop import Agent
from claw.sessions import (
    SessionRecorder,
    list_sessions,
    load_session,
    project_folder_name,
    session_usage,
    sessions_folder,
    start_session,
)
from claw.streaming import MockStreamProvider, TextDelta
from claw.tools.todo_write import TodoItem
from claw.transcript import (
    TranscriptError,
    TranscriptWriter,
    UnknownEvent,
    decode_event,
    encode,
    event_record,
    read_transcript,
)
from claw.types import (
    AssistantMessage,
    AssistantTurn,
    CacheControl,
    DeveloperMessage,
    Message,
    SystemMessage,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    UserMessage,
)


class RaiseInstead:
    """Stands in for ``claw.events``' logger: an observer's error is raised, not logged."""

    def _raise(self, *args: object, **kwargs: object) -> None:
        raise  # the observer's exception, which chapter 7's EventSink is handling

    warning = error = exception = _raise


@pytest.fixture(autouse=True)
def recorder_errors_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chapter 7's ``EventSink`` only logs an observer that raises, so a mistake in your
    ``SessionRecorder`` would show as an empty transcript; here it is raised where it happened."""
    monkeypatch.setattr(events_module, "logger", RaiseInstead())


# --- the project folder ------------------------------------------------------------------------

# Claude Code's own folder names under ~/.claude/projects, as reported in anthropics/claude-code
# issues #9221 (spaces), #24067 (underscores) and #45718 (Cyrillic), and for dots.
CLAUDE_CODE_FOLDERS = [
    ("/Users/foo/Projects/Open Source/checkmate", "-Users-foo-Projects-Open-Source-checkmate"),
    (
        "/home/chris/2_project-files/projects/m2-clients/101-cal",
        "-home-chris-2-project-files-projects-m2-clients-101-cal",
    ),
    ("/Users/username/Documents/Проект", "-Users-username-Documents-------"),
    ("/home/ada/.local/app.v2", "-home-ada--local-app-v2"),
]


@pytest.mark.parametrize(("path", "folder"), CLAUDE_CODE_FOLDERS)
def test_session_project_folder_is_named_as_claude_code_names_it(path: str, folder: str) -> None:
    assert project_folder_name(Path(path)) == folder


def test_session_project_folder_is_under_the_config_dir_and_of_the_real_path(
    tmp_path: Path, claw_config_dir: Path
) -> None:
    (tmp_path / "real_repo").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real_repo")
    folder = sessions_folder(tmp_path / "link")
    assert folder.parent == claw_config_dir / "projects"
    assert folder.name == project_folder_name(tmp_path / "real_repo")
    assert folder.name.endswith("-real-repo")


# --- events, generically -----------------------------------------------------------------------


@dataclass(frozen=True)
class Compacted:
    """An event a later chapter might add: the recorder must keep it without a change."""

    before: int
    after: int
    summary: str


class Noted(BaseModel):
    """An event that is a pydantic model, not a dataclass: recorded all the same."""

    text: str


def test_session_any_event_is_recorded_under_its_type_name() -> None:
    usage = TokenUsage(input_tokens=3, output_tokens=2, cost=Decimal("0.000125"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pydantic's adapter is of the event's own type: no
        record = event_record(StepUsage(2, usage))  # "serialized value may not be" warning
    assert record is not None
    line = json.loads(encode(record))
    assert line == {
        "type": "event",
        "event": "StepUsage",
        "data": {"step": 2, "usage": json.loads(usage.model_dump_json())},  # cost as "0.000125"
    }
    assert decode_event(line) == StepUsage(2, usage)
    new = event_record(Compacted(40, 3, "we fixed the parser ✓"))
    assert new is not None and new["event"] == "Compacted"
    assert json.loads(encode(new))["data"] == {
        "before": 40,
        "after": 3,
        "summary": "we fixed the parser ✓",
    }
    assert decode_event(new) == UnknownEvent("Compacted", new["data"])  # not in claw's events
    assert event_record(TextDelta("hel")) is None  # the assembled turn is recorded instead
    assert event_record(Noted(text="a pydantic model")) == {
        "type": "event",
        "event": "Noted",
        "data": {"text": "a pydantic model"},
    }
    assert event_record(object()) is None  # neither a dataclass nor a pydantic model
    finished = event_record(RunFinished(Finish.DONE, 1, "ok", usage))
    assert finished is not None and finished["data"]["reason"] == "done"


def test_session_finish_reasons_spelt_before_the_glossary_still_load() -> None:
    # The glossary renamed two finish reasons (max_turns is max_steps, transcript_limit is
    # history_limit); a transcript written before says them the old way, and still resumes.
    renamed = (("max_turns", Finish.MAX_STEPS), ("transcript_limit", Finish.HISTORY_LIMIT))
    for old, reason in renamed:
        record = event_record(RunFinished(reason, 2, "last words", TokenUsage()))
        assert record is not None and record["data"]["reason"] == reason.value  # the new word
        record["data"]["reason"] = old
        assert decode_event(record) == RunFinished(reason, 2, "last words", TokenUsage())


def test_session_a_todo_list_change_is_recorded_with_its_items(tmp_path: Path) -> None:
    # Chapter 20's event holds pydantic models its module imports only for type checkers.
    items = (
        TodoItem(content="Run the tests", status="completed", activeForm="Running the tests"),
        TodoItem(content="Fix the parser", status="in_progress", activeForm="Fixing the parser"),
    )
    _, writer = start_session(tmp_path)
    record = event_record(TodosChanged(items))
    assert record is not None and record["event"] == "TodosChanged"
    writer.append([record])
    writer.close()
    [read] = load_session(writer.path).event_records
    assert read["data"] == {"todos": [item.model_dump() for item in items]}
    [event] = load_session(writer.path).events(TodosChanged)
    assert event in (TodosChanged(items), UnknownEvent("TodosChanged", read["data"]))


# --- writing ---------------------------------------------------------------------------------


def test_session_writer_appends_whole_lines_and_syncs_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    path = tmp_path / "deep" / "er" / "s.jsonl"
    writer = TranscriptWriter(path)
    writer.append([{"type": "session", "id": "x"}, {"type": "event", "event": "E", "data": {}}])
    assert len(synced) == 1
    writer.append(
        [{"type": "message", "message": {"role": "user", "content": "a\nb\u2028c"}}], sync=False
    )
    assert len(synced) == 1
    writer.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4  # three records, each ending in its newline
    assert json.loads(lines[2])["message"]["content"] == "a\nb\u2028c"
    assert "é" in written_text(tmp_path)  # readable UTF-8, not \u escapes


def written_text(tmp_path: Path) -> str:
    path = tmp_path / "text.jsonl"
    writer = TranscriptWriter(path)
    writer.append([{"type": "session", "id": "é"}])
    writer.close()
    return path.read_text(encoding="utf-8")


class Blocking:
    """A tool that, while it runs, reads what the transcript holds so far."""

    def __init__(self, path: list[Path]) -> None:
        self.path = path
        self.seen: list[str] = []

    definition = ToolDefinition(name="peek", description="Looks at the transcript.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.seen.append(self.path[0].read_text())
        return ToolOutput.ok("peeked")


def test_session_a_step_is_written_once_its_tool_results_are_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = ToolCall(id="call-1", name="peek", arguments={})
    provider = MockStreamProvider([AssistantTurn(tool_calls=(call,)), "Done."])
    where: list[Path] = []
    tool = Blocking(where)
    agent = Agent(provider, [tool], system="You are claw.")
    _, writer = start_session(tmp_path)
    where.append(writer.path)
    agent.sink.add(SessionRecorder(agent, writer))
    synced: list[str] = []  # the last record on disk at each fsync

    def fsync(fd: int) -> None:
        last = json.loads(writer.path.read_bytes().splitlines()[-1])
        synced.append(last.get("event", last["type"]))

    monkeypatch.setattr(os, "fsync", fsync)

    asyncio.run(agent.run("Peek."))

    during = [json.loads(line) for line in tool.seen[0].splitlines()]
    roles = [r["message"]["role"] for r in during if r["type"] == "message"]
    assert roles == ["system", "user"]  # the step in flight is not written yet
    assert load_session(writer.path).history == agent.history  # all of it, once it is done
    # synced once a step is complete: at the tool's result (not at step 1's usage, which comes
    # while its call is unanswered), at step 2's usage, at the run's end; never in between
    assert synced == ["ToolResult", "StepUsage", "RunFinished"]


class Hang:
    """A tool that never returns: the run is cancelled while it waits."""

    definition = ToolDefinition(name="hang", description="Never returns.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        await asyncio.Event().wait()
        return ToolOutput.ok("impossible")


def test_session_the_prompt_is_on_disk_while_the_answer_streams_and_a_cancelled_step_at_the_end(
    tmp_path: Path,
) -> None:
    call = ToolCall(id="call-1", name="hang", arguments={})
    provider = MockStreamProvider([AssistantTurn(text="Waiting.", tool_calls=(call,))])
    agent = Agent(provider, [Hang()], system="You are claw.")
    _, writer = start_session(tmp_path)
    agent.sink.add(SessionRecorder(agent, writer))
    streaming: list[list[str]] = []

    def watch(event: object) -> None:
        if isinstance(event, TextDelta) and not streaming:  # after the recorder saw it
            lines = [json.loads(line) for line in writer.path.read_text().splitlines()]
            streaming.append([r["message"]["role"] for r in lines if r["type"] == "message"])
        if isinstance(event, ToolCalled):
            agent.cancel()

    agent.sink.add(watch)

    finished = asyncio.run(agent.run("Wait."))

    assert streaming == [["system", "user"]]  # a crash while the answer streams keeps the prompt
    assert finished.reason == Finish.CANCELLED
    # the cancelled call has no ToolResult event, only chapter 7's note: written at the end all
    # the same, so the transcript is the history, a valid one
    assert load_session(writer.path).history == agent.history
    assert [m.role for m in agent.history] == ["system", "user", "assistant", "tool"]


def test_session_a_rewritten_history_is_written_as_far_as_it_is_settled(tmp_path: Path) -> None:
    holder = Holder()
    _, writer = start_session(tmp_path)
    recorder = SessionRecorder(holder, writer)
    holder.history += [UserMessage(content="Fix it."), AssistantMessage(content="On it.")]
    recorder(StepUsage(1, TokenUsage()))
    assert load_session(writer.path).history == holder.history

    # rewritten (as a compaction would): only the turn in flight is kept, its call unanswered
    call = ToolCall(id="call-1", name="peek", arguments={})
    turn = AssistantMessage(content="Looking.", tool_calls=(call,))
    holder.history = [turn, ToolResultMessage(tool_call_id="call-1", content="(cancelled)")]
    recorder(ToolCalled(2, "call-1", "peek", {}))
    assert load_session(writer.path).history == []  # a history record with nothing settled yet
    holder.history[1] = ToolResultMessage(tool_call_id="call-1", content="peeked")
    recorder(ToolResult(2, "call-1", "peek", "peeked", False, 0.0))
    assert load_session(writer.path).history == holder.history
    writer.close()


# --- reading: torn and damaged lines -----------------------------------------------------------


def recorded_session(tmp_path: Path) -> tuple[Path, list[Message]]:
    """A real session of two steps (a tool call, then an answer), and the agent's history."""
    call = ToolCall(id="call-1", name="peek", arguments={"why": "to see"})
    usage = TokenUsage(input_tokens=10, output_tokens=4, cost=Decimal("0.002"))
    provider = MockStreamProvider(
        [AssistantTurn(tool_calls=(call,), usage=usage), AssistantTurn(text="Seen ✓", usage=usage)]
    )
    where: list[Path] = []
    agent = Agent(provider, [Blocking(where)], system="You are claw.")
    _, writer = start_session(tmp_path)
    where.append(writer.path)
    agent.sink.add(SessionRecorder(agent, writer))
    asyncio.run(agent.run("Peek, please."))
    writer.close()
    return writer.path, agent.history


def test_session_a_torn_last_line_is_reported_and_skipped_wherever_it_was_cut(
    tmp_path: Path,
) -> None:
    path, history = recorded_session(tmp_path)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    # cut the last message record (the answer) anywhere: the history loses exactly that message
    last_message = max(i for i, line in enumerate(lines) if b'"type":"message"' in line)
    kept = b"".join(lines[:last_message])
    path.write_bytes(kept + lines[last_message])
    for cut in reversed(range(1, len(lines[last_message]))):
        # Shortened in place, as a crash leaves it (rewriting a file from empty, a hundred times,
        # waits for the disk: ext4 writes out a file truncated to nothing when it is closed).
        os.truncate(path, len(kept) + cut)
        session = load_session(path)
        assert session.history == history[:-1]
        assert session.notices == [
            f"{path}:{last_message + 1}: the last line is incomplete (claw was stopped while "
            "writing it); it was skipped, and what it held is lost"
        ]
    path.write_bytes(kept + lines[last_message])
    assert load_session(path).notices == []


def test_session_a_damaged_line_before_the_end_is_an_error_naming_file_and_line(
    tmp_path: Path,
) -> None:
    path, _ = recorded_session(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:10] + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(TranscriptError, match=f"{path}:3: not a JSON record"):
        load_session(path)
    path.write_bytes(b'{"type":"message","message":{"role":"user","content":"hi"}}\n')
    with pytest.raises(TranscriptError, match=f"{path}:1: not a claw session transcript"):
        load_session(path)
    with pytest.raises(TranscriptError, match="no such session transcript"):
        load_session(tmp_path / "missing.jsonl")
    path.write_bytes(b"")  # killed between creating the file and writing its first line
    with pytest.raises(TranscriptError, match=f"{path}:1: not a claw session transcript"):
        load_session(path)


def test_session_appending_after_a_torn_line_cuts_it_off_first(tmp_path: Path) -> None:
    path, history = recorded_session(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data + b'{"type":"message","mess')
    assert load_session(path).notices  # reported
    writer = TranscriptWriter(path)
    writer.append([{"type": "message", "message": {"role": "user", "content": "Again."}}])
    writer.close()
    session = load_session(path)
    assert session.notices == []
    assert session.history == [*history, UserMessage(content="Again.")]
    assert path.read_bytes().startswith(data)  # nothing complete was lost


def test_session_usage_totals_every_step_and_sessions_list_newest_first(
    tmp_path: Path, claw_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the newer one has the name that sorts first: the order is by time, not by name
    second, first = sorted(recorded_session(tmp_path)[0] for _ in range(2))
    os.utime(first, (1_000_000_000, 1_000_000_000))
    usage = session_usage(load_session(second))
    assert usage == TokenUsage(input_tokens=20, output_tokens=8, cost=Decimal("0.004"))
    listed = list_sessions(tmp_path)
    assert [info.path for info in listed] == [second, first]
    assert list_sessions(tmp_path, home=tmp_path / "another-home") == []
    assert [info.id for info in listed] == [second.stem, first.stem]
    assert listed[0].title == "Peek, please."
    assert read_transcript(second).header["id"] == second.stem
    assert read_transcript(second).path == second

    # a transcript removed while the list is made is left out; the others are still listed
    real_stat = Path.stat
    gone: list[Path] = []

    def stat(self: Path, **kwargs: Any) -> os.stat_result:
        if self.suffix == ".jsonl" and not gone:
            gone.append(self)
            raise FileNotFoundError(self)
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert [info.path for info in list_sessions(tmp_path)] == [
        path for path in (second, first) if path not in gone
    ]
    assert len(gone) == 1


# --- the property: what is written is what is read -----------------------------------------------

# Every character, lone surrogates too (a model's JSON "\ud800" escape decodes to one).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
NONEMPTY = st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=20)
# A content part cannot hold a lone surrogate (pydantic refuses it there); plain content can.
PART_TEXT = st.text(min_size=1, max_size=20)
contents = ANY_TEXT | st.lists(st.builds(TextPart, text=PART_TEXT), min_size=1, max_size=3).map(
    tuple
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=6,
)
tool_calls = st.builds(
    ToolCall,
    id=st.uuids().map(str),
    name=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12),
    arguments=st.dictionaries(NONEMPTY, json_values, max_size=3),
)
breakpoints = st.none() | st.builds(CacheControl, ttl=st.sampled_from([None, "5m", "1h"]))


@st.composite
def messages(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    content = draw(contents)
    has_text = bool(content if isinstance(content, str) else "".join(p.text for p in content))
    marked = draw(breakpoints) if has_text else None
    if kind == "system":
        return SystemMessage(content=content, cache_control=marked)
    if kind == "developer":
        return DeveloperMessage(content=content, cache_control=marked)
    if kind == "user":
        return UserMessage(content=content)
    if kind == "assistant":
        calls = draw(st.lists(tool_calls, max_size=3, unique_by=lambda c: c.id))
        reasoning = draw(ANY_TEXT)
        return AssistantMessage(
            content=content,
            tool_calls=tuple(calls),
            reasoning_content=reasoning,
            cache_control=marked,
        )
    # An id has a minimum length, which pydantic checks on valid Unicode only: no lone surrogate.
    return ToolResultMessage(
        tool_call_id=draw(PART_TEXT), content=draw(ANY_TEXT), is_error=draw(st.booleans())
    )


class Holder:
    """Stands in for an agent: all the recorder looks at is ``history``."""

    def __init__(self) -> None:
        self.history: list[Message] = []


@pytest.mark.timeout(60)  # a hundred histories drawn, written and read: seconds on a busy machine
@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(st.lists(messages(), max_size=4), st.booleans()), min_size=1, max_size=6
    )
)
def test_session_any_history_written_and_read_back_is_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[list[Message], bool]]
) -> None:
    # What is read back does not depend on fsync (the writer's test checks that it is called);
    # hundreds of real ones would only measure how busy the disk is.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    holder = Holder()
    _, writer = start_session(tmp_path)
    recorder = SessionRecorder(holder, writer)
    for number, (added, compact) in enumerate(steps, start=1):
        if compact:  # a compaction: the history is rewritten, not appended to
            holder.history = [UserMessage(content=f"summary of {len(holder.history)} messages")]
        holder.history += added
        for message in added:  # answer the calls, as the loop's ToolResult events do
            for call in getattr(message, "tool_calls", ()):
                recorder(ToolCalled(number, call.id, call.name, call.arguments))
                recorder(ToolResult(number, call.id, call.name, "ok", False, 0.0))
        recorder(RunFinished(Finish.DONE, number, "", TokenUsage()))
        assert load_session(writer.path).history == holder.history
    writer.close()
