"""A session's transcript folded into what the page shows: turns, steps, calls, subagents.

``read_records`` reads a transcript (chapter 22) more forgivingly than resuming does: a damaged
line is a notice on the page, not the end of it. ``build_view`` folds the records, in order,
into a ``SessionView``: a user message opens a ``Turn``, each recorded event goes into the
turn's steps (``add_event``), a subagent's events into a ``Subagent`` inside the step that
started it, and chapter 27's rewind records sit between the turns. The history records a
compaction or a rewind wrote are not replayed: the events already tell what happened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events import (
    AssistantText,
    Compacted,
    RunFinished,
    StepUsage,
    SubagentEvent,
    ToolCalled,
    ToolResult,
)
from ..todo import Todo
from ..transcript import Record, TranscriptError, decode_event, parse_line, torn_notice
from ..types import TokenUsage


@dataclass
class Call:
    """One tool call and, once it came, its result."""

    id: str
    name: str
    arguments: dict[str, Any]
    output: str | None = None
    is_error: bool = False
    duration: float = 0.0
    subagents: list[Subagent] = field(default_factory=list)
    """The child agents this call started (chapter 21's ``task``), in the order they did."""


@dataclass
class Subagent:
    """A child agent's run (chapter 21), shown inside the step of its parent that started it."""

    agent_id: str
    entries: list[Entry] = field(default_factory=list)


@dataclass
class StepEntry:
    """One provider call: what the model said, the calls it made, and what the step cost."""

    number: int
    parts: list[str | Call] = field(default_factory=list)
    """In order: the model's text (a ``str``) and its tool calls."""
    usage: TokenUsage | None = None


@dataclass(frozen=True)
class CompactionEntry:
    """The history was made smaller here (chapter 18's ``Compacted``)."""

    removed: int
    kept: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class Rewind:
    """The code, the conversation or both went back to before a prompt (chapter 27)."""

    prompt: int
    what: str


Entry = StepEntry | CompactionEntry
"""What a turn (or a subagent) holds, in order."""


@dataclass
class Turn:
    """One prompt of the person and everything the agent did for it."""

    prompt: str | None
    """The prompt's text (``None`` for what came before the first prompt)."""
    entries: list[Entry] = field(default_factory=list)
    finish: str | None = None
    """Why its run ended (``RunFinished.reason``), once it did."""


@dataclass
class SessionView:
    """A whole session, ready to render."""

    id: str
    cwd: str
    started: str
    items: list[Turn | Rewind] = field(default_factory=list)
    total: TokenUsage = field(default_factory=TokenUsage)
    """Every step's usage added up, subagents' steps included."""
    unpriced: int = 0
    """Steps whose usage came without a cost."""
    notices: list[str] = field(default_factory=list)
    """Lines of the transcript that could not be shown (torn, damaged)."""


def read_records(path: Path) -> tuple[Record, list[Record], list[str]]:
    """The ``session`` record, the records after it, and notices of the lines skipped.

    Unlike chapter 22's reader, this one does not stop at a damaged line: a page of what can
    be read is worth more than none. Bytes that are not UTF-8 are read as U+FFFD; a line that
    is still not a record is skipped with a notice naming it. No ``session`` record first is
    a ``TranscriptError``.
    """
    records: list[Record] = []
    notices: list[str] = []
    try:
        file = path.open("rb")
    except FileNotFoundError:
        raise TranscriptError(f"{path}: no such session transcript") from None
    with file:
        for number, line in enumerate(file, start=1):
            if not line.endswith(b"\n"):
                notices.append(torn_notice(path, number))
                break
            readable = line.decode("utf-8", "replace").encode()
            try:
                record = parse_line(readable, f"{path}:{number}")
            except TranscriptError as error:
                notices.append(f"{error} (skipped)")
                continue
            if record["type"] == "history" and b'"rewind"' in line:  # chapter 27's, dropped above
                record["rewind"] = json.loads(readable).get("rewind")
            records.append(record)
    if not records or records[0]["type"] != "session":
        raise TranscriptError(f"{path}:1: not a claw session transcript (no session record)")
    return records[0], records[1:], notices


def prompt_text(content: object) -> str:
    """The text of a user message's content: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [getattr(part, "text", None) for part in content]
        return "\n".join(text if isinstance(text, str) else "[image]" for text in texts)
    return str(content)


def step_of(entries: list[Entry], number: int) -> StepEntry:
    """The step ``number``: the last entry if it is that step, else a new one added at the end."""
    last = entries[-1] if entries else None
    if isinstance(last, StepEntry) and last.number == number:
        return last
    step = StepEntry(number)
    entries.append(step)
    return step


def subagent_of(entries: list[Entry], agent_id: str) -> Subagent:
    """The subagent ``agent_id`` in the call that started it, added there on its first event.

    That call is the last one of the latest step still waiting for its result: a child's
    events come while its ``task`` call runs. If no call is waiting (its record was lost), a
    ``task`` call with no arguments is added to hold the child.
    """
    step = next((entry for entry in reversed(entries) if isinstance(entry, StepEntry)), None)
    if step is None:
        step = step_of(entries, 0)
    running = [part for part in step.parts if isinstance(part, Call) and part.output is None]
    if not running:
        running.append(Call(agent_id, "task", {}))
        step.parts.append(running[-1])
    children = running[-1].subagents
    found = [child for child in children if child.agent_id == agent_id]
    if not found:
        found.append(Subagent(agent_id))
        children.append(found[0])
    return found[0]


def rewind_of(record: Record) -> Rewind | None:
    """The ``Rewind`` a record holds (chapter 27 adds a ``rewind`` object to it), or ``None``."""
    rewind = record.get("rewind")
    if not isinstance(rewind, dict):
        return None
    prompt = rewind.get("prompt")
    return Rewind(prompt if isinstance(prompt, int) else 0, str(rewind.get("what", "")))


def new_view(header: Record, notices: Sequence[str] = ()) -> SessionView:
    """An empty ``SessionView`` of the session whose ``session`` record is ``header``."""
    return SessionView(
        str(header.get("id", "")),
        str(header.get("cwd", "")),
        str(header.get("started", "")),
        notices=list(notices),
    )


def add_event(view: SessionView, entries: list[Entry], event: object) -> None:
    """Fold one decoded event into ``entries`` (a turn's or a subagent's), and the totals."""
    raise Todo(
        "ch31",
        "usage (to the step and the totals), text, calls, results, compactions, children",
    )


def build_view(
    header: Record, records: Sequence[Record], notices: Sequence[str] = ()
) -> SessionView:
    """The view model of a transcript: its ``session`` record and the records after it.

    A record that carries a ``rewind`` (chapter 27) is a ``Rewind`` between turns; a user
    ``message`` starts a turn; an ``event`` is decoded and folded into the current one
    (``add_event``; a ``Turn(None)`` first if no prompt came yet). Other messages and
    ``history`` records are not shown: the events tell the story.
    """
    raise Todo(
        "ch31",
        "a user message opens a Turn; events fold in; a \"rewind\" record is a Rewind",
    )
