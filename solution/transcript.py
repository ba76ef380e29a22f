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
import gc
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, PydanticUserError, TypeAdapter, ValidationError
from pydantic_core import from_json, to_jsonable_python
from typing_extensions import TypedDict

from . import events as events_module
from .errors import ClawError
from .private import private_file, private_folder
from .streaming import StreamEvent
from .types import MESSAGES, Message

VERSION = 1
"""The transcript format this module writes (the ``version`` of the ``session`` record)."""

Record = dict[str, Any]
"""One line of a transcript, parsed: a JSON object with a ``type``."""

MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
"""Validates and serialises one message of any role."""

STREAM_EVENTS: tuple[type, ...] = StreamEvent.__args__
"""The stream's pieces (text deltas and the like): the turn they build is recorded instead."""


class MessageRecord(TypedDict):
    """A ``message`` record as read: the message itself, validated."""

    type: Literal["message"]
    message: Message


class HistoryRecord(TypedDict):
    """A ``history`` record as read: the whole new history, validated."""

    type: Literal["history"]
    messages: list[Message]


HISTORY_RECORDS: TypeAdapter[MessageRecord | HistoryRecord] = TypeAdapter(
    MessageRecord | HistoryRecord
)
"""Parses and validates a ``message`` or ``history`` line in one pass (no dicts in between)."""

FAST_PREFIXES = (b'{"type":"message"', b'{"type":"history"')
"""How ``encode`` starts those lines; others (hand-made ones too) take the general path."""


class TranscriptError(ClawError):
    """A transcript cannot be read: a damaged line (not the torn last one) or a missing file."""


# --8<-- [start:records]
def message_record(message: Message) -> Record:
    """The ``message`` record of one message added to the history."""
    return {"type": "message", "message": MESSAGE.dump_python(message)}


def history_record(messages: Sequence[Message]) -> Record:
    """The ``history`` record: the whole history, which replaces everything before it."""
    return {"type": "history", "messages": MESSAGES.dump_python(list(messages))}


@cache
def _adapter(kind: type) -> TypeAdapter[Any]:
    return TypeAdapter(kind)
# --8<-- [end:records]


def event_record(event: object) -> Record | None:
    """The ``event`` record of ``event``, or ``None`` for one that is not recorded.

    Any dataclass or pydantic model is recorded under its type name, so an event a later
    chapter adds is kept without a change here; stream events are not (the turn they make is
    recorded as a message). A subagent's event (chapter 21) is recorded as its ``agent_id`` and
    the record of the event it wraps, so a child's stream events are not recorded either.
    """
    # region ch22: the type name and the event's fields as JSON data; skip stream events
    # more: dataclasses.is_dataclass or BaseModel; TypeAdapter(type(event)).dump_python(event)
    if isinstance(event, STREAM_EVENTS):
        return None
    if isinstance(event, events_module.SubagentEvent):
        inner = event_record(event.event)
        if inner is None:
            return None
        data = {"agent_id": event.agent_id, "event": inner}
        return {"type": "event", "event": "SubagentEvent", "data": data}
    if not (dataclasses.is_dataclass(event) or isinstance(event, BaseModel)):
        return None
    kind: type = type(event)
    try:
        data = _adapter(kind).dump_python(event)
    except PydanticUserError:  # a field's type cannot be resolved here (a TYPE_CHECKING import)
        data = to_jsonable_python(event)
    return {"type": "event", "event": type(event).__name__, "data": data}
    # endregion


# --8<-- [start:decode-event]
@dataclass(frozen=True)
class UnknownEvent:
    """An event record whose type this claw does not know (a newer claw wrote it): kept as data."""

    name: str
    data: dict[str, Any]


def decode_event(record: Record) -> object:
    """The event an ``event`` record holds: an instance of the class of that name in ``events``.

    A name ``events`` does not define, data that no longer fits it, or a class whose field
    types pydantic cannot resolve at run time (one imported only for type checkers) gives an
    ``UnknownEvent``: an old transcript stays readable after the event classes change.
    """
    kind = getattr(events_module, record["event"], None)
    if kind is events_module.SubagentEvent:
        return decode_subagent_event(record)
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or issubclass(kind, BaseModel)):
        try:
            return _adapter(kind).validate_python(record["data"])
        except (ValidationError, PydanticUserError):  # data that no longer fits; a type unresolved
            pass
    return UnknownEvent(record["event"], record["data"])


def decode_subagent_event(record: Record) -> object:
    """A ``SubagentEvent`` record: the child's id, and the event record it holds, decoded."""
    data = record["data"]
    inner = data.get("event")
    well_formed = (
        isinstance(data.get("agent_id"), str)
        and isinstance(inner, dict)
        and isinstance(inner.get("event"), str)
        and isinstance(inner.get("data"), dict)
    )
    event = decode_event(inner) if well_formed else None
    if event is None or isinstance(event, UnknownEvent):
        return UnknownEvent(record["event"], data)
    return events_module.SubagentEvent(data["agent_id"], event)  # type: ignore[arg-type]
# --8<-- [end:decode-event]


# --8<-- [start:line]
def encode(record: Record) -> bytes:
    r"""``record`` as one line of UTF-8 JSON, ending in a newline (and holding no other).

    Text is written as itself (readable), except in a record holding a lone surrogate (which
    a model's JSON escapes can produce, and UTF-8 cannot hold): that one is all ``\u`` escapes.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, separators=SEPARATORS, default=_plain)
        data = text.encode()
    except UnicodeEncodeError:
        data = json.dumps(record, separators=SEPARATORS, default=_plain).encode()
    return data + b"\n"


SEPARATORS = (",", ":")
"""No spaces: a transcript is read by programs, and ``jq`` shows it to people."""


def _plain(value: object) -> object:
    """What ``json`` cannot write itself: a ``Decimal`` (money, exact) as its string."""
    if isinstance(value, Decimal):
        return str(value)
    return to_jsonable_python(value)
# --8<-- [end:line]


class TranscriptWriter:
    """Appends records to a transcript: each batch in one write, flushed, then ``fsync``'ed.

    Opening a transcript whose last line is torn cuts that fragment off first (the reader has
    already reported and skipped it); otherwise the next record would be glued to it.
    """

    def __init__(self, path: Path) -> None:
        """Open ``path`` for appending, creating it (and its folders) if needed.

        A transcript keeps every tool result, so its folder is mode 700 and it is mode 600
        (``private.py``), also when they were made looser before.
        """
        private_folder(path.parent)
        private_file(path)
        self.path = path
        self.file = path.open("ab")
        cut_torn_tail(self.file)

    def append(self, records: Iterable[Record], *, sync: bool = True) -> None:
        """Write ``records`` at the end of the file; with ``sync``, wait until they are on disk."""
        self.write(b"".join(encode(record) for record in records), sync=sync)

    def write(self, data: bytes, *, sync: bool = True) -> None:
        """Append ``data`` (whole lines) in one write and flush it; with ``sync``, ``fsync`` too."""
        # region ch22: one write of all the bytes, flush, and os.fsync when sync is asked for
        # more: file.write(data); file.flush() (out of Python); os.fsync(file.fileno()) (to disk)
        if data:
            self.file.write(data)
            self.file.flush()  # out of Python's buffer: a kill -9 can no longer lose it
        if sync:
            os.fsync(self.file.fileno())  # out of the OS's cache: a power cut cannot either
        # endregion

    def close(self) -> None:
        """Close the file (what was appended is already on disk)."""
        self.file.close()


# --8<-- [start:torn-tail]
def cut_torn_tail(file: BinaryIO) -> None:
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


def _last_newline_end(reader: BinaryIO, size: int, block: int = 65536) -> int:
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
# --8<-- [end:torn-tail]


# --8<-- [start:transcript]
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


def parse_line(line: bytes, where: str) -> Record:
    r"""One line as a record; messages in it validated. ``where`` (``file:line``) starts errors.

    The fast path parses and validates in one pass in pydantic's Rust code. It refuses a lone
    surrogate (``"\ud800"``), which Python's ``json`` reads, so anything it refuses takes
    the careful path, which either reads the line or says exactly what is wrong with it.
    """
    if line.startswith(FAST_PREFIXES):
        try:
            return dict(HISTORY_RECORDS.validate_json(line))
        except ValueError:
            pass
    try:
        record = from_json(line)
    except ValueError:
        try:
            record = json.loads(line)
        except ValueError as error:
            raise TranscriptError(f"{where}: not a JSON record ({error})") from None
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise TranscriptError(f"{where}: not a record (an object with a type)")
    if record["type"] == "event" and not (
        isinstance(record.get("event"), str) and isinstance(record.get("data"), dict)
    ):
        raise TranscriptError(f"{where}: not a valid event record (an event name and its data)")
    if record["type"] == "session" and not isinstance(record.get("id"), str):
        raise TranscriptError(f"{where}: not a valid session record (no id)")
    if record["type"] in ("message", "history"):
        try:
            return dict(HISTORY_RECORDS.validate_python(record))
        except ValidationError as error:
            kind = record["type"]
            raise TranscriptError(f"{where}: not a valid {kind} record: {error}") from None
    return record


# --8<-- [end:transcript]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside, and what was built is kept out of its sight after.

    Every collection would walk all the records built so far, only to find that none is
    garbage; a long session would then take more than ten times as long as one a tenth its
    size. Reference counting still frees what is dropped. On the way out, ``gc.freeze`` moves
    every object the collector tracks into its permanent generation: the records live as long
    as the session, and the first collection after the pause would otherwise walk all of them
    at once (12 of the 137 ms of reading 10,000 messages), and every full one after it again.
    The price: a reference cycle that is already garbage when a session is loaded is never
    collected (claw loads a session when it starts, or on ``/resume``, with little such garbage).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def read_transcript(path: Path) -> Transcript:
    """Read every record of the transcript at ``path``.

    A last line without its newline is torn: it is skipped, with ``torn_notice`` in
    ``notices``. Any other line that is not a JSON object with a ``type`` raises
    ``TranscriptError`` naming the file and the line; so does a first line that is not the
    ``session`` record.
    """
    # region ch22: read line by line; a last line without its newline is torn; parse each one
    # more: for number, line in enumerate(file, 1); line.endswith(b"\n"); parse_line(line, where)
    records: list[Record] = []
    notices: list[str] = []
    try:
        file = path.open("rb")
    except FileNotFoundError:
        raise TranscriptError(f"{path}: no such session transcript") from None
    with file, paused_gc():
        for number, line in enumerate(file, start=1):
            if not line.endswith(b"\n"):  # only the last line can lack it: torn by a crash
                notices.append(torn_notice(path, number))
                break
            records.append(parse_line(line, f"{path}:{number}"))
    if not records or records[0]["type"] != "session":
        raise TranscriptError(f"{path}:1: not a claw session transcript (no session record)")
    return Transcript(path, records[0], records[1:], notices)
    # endregion


def rebuild_history(transcript: Transcript) -> list[Message]:
    """The history the records describe: each ``message`` appended, each ``history`` a restart.

    The reader has already validated every message (``parse_line``).
    """
    # region ch22: each message record appends, each history record starts over
    # more: if type == "message": append record["message"]; elif "history": list(record["messages"])
    history: list[Message] = []
    for record in transcript.records:
        if record["type"] == "message":
            history.append(record["message"])
        elif record["type"] == "history":
            history = list(record["messages"])
    return history
    # endregion


def event_records(transcript: Transcript) -> list[Record]:
    """The transcript's ``event`` records, not yet decoded (``decode_event`` does that)."""
    return [record for record in transcript.records if record["type"] == "event"]
