"""A session's transcript on disk: one JSON object a line, appended, never rewritten.

A transcript is a JSONL file. Its first line is the ``session`` record (the id, the folder,
when it started, the session it was forked from); every later line is one of three records:
``message`` (one message added to the history), ``history`` (the whole history, when something
rewrote it, such as a compaction) and ``event`` (any event the agent reported, under its type
name: step usage, tool calls, the run's end, and whatever later chapters add). The rule that
shapes this module: a line is written whole or not at all, as far as a reader can tell. Every
record ends with a newline, so a last line without one was cut off by a crash mid-write; the
reader reports it, with the file and the line, and skips it. Anything else that does not parse
is damage, and is an error, never silently dropped.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from . import events as events_module
from .errors import ClawError
from .streaming import StreamEvent
from .todo import Todo
from .types import MESSAGES, Message

VERSION = 1
"""The transcript format this module writes (the ``version`` of the ``session`` record)."""

Record = dict[str, Any]
"""One line of a transcript, parsed: a JSON object with a ``type``."""

MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
"""Validates and serialises one message of any role."""

STREAM_EVENTS: tuple[type, ...] = StreamEvent.__args__
"""The stream's pieces (text deltas and the like): the turn they build is recorded instead."""


class TranscriptError(ClawError):
    """A transcript cannot be read: a damaged line (not the torn last one) or a missing file."""


def message_record(message: Message) -> Record:
    """The ``message`` record of one message added to the history."""
    return {"type": "message", "message": MESSAGE.dump_python(message, mode="json")}


def history_record(messages: Sequence[Message]) -> Record:
    """The ``history`` record: the whole history, which replaces everything before it."""
    return {"type": "history", "messages": MESSAGES.dump_python(list(messages), mode="json")}


@cache
def _adapter(kind: type) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def event_record(event: object) -> Record | None:
    """The ``event`` record of ``event``, or ``None`` for one that is not recorded.

    Any dataclass or pydantic model is recorded under its type name, so an event a later
    chapter adds is kept without a change here; stream events are not (the turn they make is
    recorded as a message).
    """
    raise Todo("ch22", "the type name and the event's fields as JSON data; skip stream events")


@dataclass(frozen=True)
class UnknownEvent:
    """An event record whose type this claw does not know (a newer claw wrote it): kept as data."""

    name: str
    data: dict[str, Any]


def decode_event(record: Record) -> object:
    """The event an ``event`` record holds: an instance of the class of that name in ``events``.

    A name ``events`` does not define (or data that no longer fits it) gives an
    ``UnknownEvent``: an old transcript stays readable after the event classes change.
    """
    kind = getattr(events_module, record["event"], None)
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or issubclass(kind, BaseModel)):
        try:
            return _adapter(kind).validate_python(record["data"])
        except ValidationError:
            pass
    return UnknownEvent(record["event"], record["data"])


def encode(record: Record) -> bytes:
    """``record`` as one line of UTF-8 JSON, ending in a newline (and holding no other).

    Text is written as itself (readable), except in a record holding a lone surrogate (which
    a model's JSON escapes can produce, and UTF-8 cannot hold): that one is all ``\\u`` escapes.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        text = json.dumps(record, separators=(",", ":")).encode()
    return text + b"\n"


class TranscriptWriter:
    """Appends records to a transcript: each batch in one write, flushed, then ``fsync``'ed.

    Opening a transcript whose last line is torn cuts that fragment off first (the reader has
    already reported and skipped it); otherwise the next record would be glued to it.
    """

    def __init__(self, path: Path) -> None:
        """Open ``path`` for appending, creating it (and its folders) if needed."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.file = path.open("ab")
        cut_torn_tail(self.file)

    def append(self, records: Iterable[Record], *, sync: bool = True) -> None:
        """Write ``records`` at the end of the file; with ``sync``, wait until they are on disk."""
        raise Todo("ch22", "one write of all the lines, flush, and os.fsync when sync is asked for")

    def close(self) -> None:
        """Close the file (what was appended is already on disk)."""
        self.file.close()


def cut_torn_tail(file: Any) -> None:
    """Truncate ``file`` (open for appending) after its last newline, if it does not end in one."""
    size = file.seek(0, os.SEEK_END)
    if size == 0:
        return
    with open(file.name, "rb") as reader:
        reader.seek(max(0, size - 1))
        if reader.read(1) == b"\n":
            return
        end = _last_newline_end(reader, size)
    file.truncate(end)


def _last_newline_end(reader: Any, size: int, block: int = 65536) -> int:
    """The offset just after the last newline before ``size`` (0 if there is none)."""
    position = size
    while position > 0:
        start = max(0, position - block)
        reader.seek(start)
        chunk = reader.read(position - start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
    return 0


@dataclass
class Transcript:
    """A transcript as read: its ``session`` record, the records after it, and what was wrong."""

    path: Path
    header: Record
    records: list[Record] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """Things the reader skipped and the person should know (a torn last line)."""


def torn_notice(path: Path, line: int) -> str:
    """The notice for a torn last line: which file, which line, and what was done about it."""
    return (
        f"{path}:{line}: the last line is incomplete (claw was stopped while writing it); "
        "it was skipped, and what it held is lost"
    )


def read_transcript(path: Path) -> Transcript:
    """Read every record of the transcript at ``path``.

    A last line without its newline is torn: it is skipped, with ``torn_notice`` in
    ``notices``. Any other line that is not a JSON object with a ``type`` raises
    ``TranscriptError`` naming the file and the line; so does a first line that is not the
    ``session`` record.
    """
    raise Todo("ch22", "split into lines; a last line without newline is torn; parse each as JSON")


def rebuild_history(transcript: Transcript) -> list[Message]:
    """The history the records describe: each ``message`` appended, each ``history`` a restart.

    All messages are validated in one call (fast for long sessions); a record that does not
    hold a valid message raises ``TranscriptError`` naming the file.
    """
    raise Todo(
        "ch22",
        "collect message dicts; a history record replaces them; validate all at once",
    )


def recorded_events(transcript: Transcript) -> list[object]:
    """Every event of the transcript, decoded (``UnknownEvent`` for a type this claw lacks)."""
    return [decode_event(r) for r in transcript.records if r["type"] == "event"]
