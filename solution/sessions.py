"""Sessions: every conversation kept on disk, to continue, resume or fork later.

Each run of ``claw`` is recorded, step by step, in a transcript (``transcript.py``) at
``~/.claw/projects/<project>/<session-id>.jsonl``, where ``<project>`` is the folder claw runs in
with every character but ASCII letters and digits turned into ``-`` (and a long one cut, with a
short hash), as Claude Code names its folders under ``~/.claude/projects``. ``SessionRecorder``
is an observer (chapter 7): it sees every event, appends what the history gained once a step is
complete, and syncs it to disk, so a crash loses at most the step in flight. ``load_session``
rebuilds the history exactly as it was sent, ``fork_session`` copies it into a new session,
``list_sessions`` and ``latest_session`` find them, and ``session_usage`` totals what a whole
session cost.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TextIO

from .display import terminal_text
from .events import RunFinished, StepUsage, SubagentEvent, ToolResult
from .private import claw_home, private_folder
from .transcript import (
    STREAM_EVENTS,
    VERSION,
    Record,
    Transcript,
    TranscriptError,
    TranscriptWriter,
    decode_event,
    event_record,
    event_records,
    history_record,
    message_record,
    read_transcript,
    rebuild_history,
)
from .types import AssistantMessage, Message, TokenUsage

# --8<-- [start:path-hash]
LONGEST_NAME = 200
"""The longest folder name kept whole; a longer one is cut here and ends in ``path_hash``."""


def path_hash(path: str) -> str:
    """Claude Code's short hash of a path: 31 * hash + each UTF-16 code unit, in 32 bits.

    The signed 32-bit result's absolute value, in base 36 (digits, then a to z).
    """
    value = 0
    encoded = path.encode("utf-16-le", "surrogatepass")
    for start in range(0, len(encoded), 2):
        value = (value * 31 + int.from_bytes(encoded[start : start + 2], "little")) & 0xFFFFFFFF
    number = abs(value - (1 << 32) if value >= 1 << 31 else value)
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not number:
            return digits
# --8<-- [end:path-hash]


def project_folder_name(cwd: Path) -> str:
    """The folder name of the project at ``cwd``, as Claude Code makes it.

    Its real absolute path, every character that is not an ASCII letter or digit replaced by
    ``-`` (two for a character beyond U+FFFF: one per UTF-16 code unit):
    ``/home/ada/my_app`` is ``-home-ada-my-app``. A name longer than ``LONGEST_NAME`` is cut
    there and gets ``-`` and the path's ``path_hash``: it stays a valid file name.
    """
    # region ch22: the real path, each non [A-Za-z0-9] character "-" ("--" past U+FFFF); cut, hash
    # more: re.sub with a function; past LONGEST_NAME: name[:LONGEST_NAME] + "-" + path_hash(path)
    path = str(cwd.resolve())
    name = re.sub(r"[^A-Za-z0-9]", lambda found: "--" if ord(found[0]) > 0xFFFF else "-", path)
    if len(name) <= LONGEST_NAME:
        return name
    return f"{name[:LONGEST_NAME]}-{path_hash(path)}"
    # endregion


def sessions_folder(cwd: Path, home: Path | None = None) -> Path:
    """Where the sessions of the project at ``cwd`` are kept: ``<home>/projects/<name>``."""
    return (home or claw_home()) / "projects" / project_folder_name(cwd)


# --8<-- [start:recorder]
class HasHistory(Protocol):
    """What the recorder watches: anything with a ``history`` (an ``Agent``)."""

    history: list[Message]


def unsettled(history: Sequence[Message], start: int, answered: set[str]) -> int:
    """Where the settled part of ``history`` ends, looking from ``start`` on.

    That is the position of the first assistant message with a tool call that has no
    ``ToolResult`` event yet (its id not in ``answered``), or ``len(history)`` when every call
    so far is answered.
    """
    for position in range(start, len(history)):
        message = history[position]
        if isinstance(message, AssistantMessage) and any(
            call.id not in answered for call in message.tool_calls
        ):
            return position
    return len(history)


class SessionRecorder:
    """An observer that keeps a session's transcript up to date with the agent's history.

    On each event it appends the messages added since the last write, as far as they are
    settled: an assistant message that asked for tools is written together with its results,
    once each has its ``ToolResult`` event, and at ``RunFinished`` everything is. If the
    history no longer starts with what was written (a compaction rewrote it), the whole new
    history is written as one ``history`` record. Then the event itself (not the stream's
    deltas). Lines reach the OS at once and the disk (``fsync``) at the end of each step.
    """

    def __init__(self, agent: HasHistory, writer: TranscriptWriter, written: int = 0) -> None:
        """Record ``agent``'s history in ``writer``, whose transcript has ``written`` of them."""
        self.agent = agent
        self.writer = writer
        self.written: list[Message] = list(agent.history[:written])
        """The messages the transcript holds, in order (the same objects as in the history)."""
        self.answered: set[str] = set()

    # --8<-- [end:recorder]

    def __call__(self, event: object) -> None:
        """Record what ``event`` settled; stream deltas are only checked for a new prompt."""
        # region ch22: note answered calls; write settled new messages (or a history record); event
        # more: delta: only if len changed; keep self.written as the same objects; fsync at step end
        inner = event.event if isinstance(event, SubagentEvent) else event  # a child's (ch21)
        if isinstance(inner, STREAM_EVENTS) and len(self.agent.history) == len(self.written):
            return  # the common case, thousands of times a turn: nothing new to write
        if isinstance(event, ToolResult):
            self.answered.add(event.id)
        history = self.agent.history
        final = isinstance(event, RunFinished)
        records: list[Record] = []
        if not self._still_prefix(history):  # rewritten: start over from a history record
            end = len(history) if final else unsettled(history, 0, self.answered)
            records.append(history_record(history[:end]))
            self.written = list(history[:end])
        end = len(history) if final else unsettled(history, len(self.written), self.answered)
        records += [message_record(message) for message in history[len(self.written) : end]]
        self.written += history[len(self.written) : end]
        recorded = event_record(event)
        if recorded is not None:
            records.append(recorded)
        step_done = end == len(history) and isinstance(event, (StepUsage, ToolResult, RunFinished))
        if records or step_done:
            self.writer.append(records, sync=step_done)
        # endregion


    def _still_prefix(self, history: Sequence[Message]) -> bool:
        """Whether ``history`` still begins with exactly the messages written so far."""
        count = len(self.written)
        if len(history) < count:
            return False
        return all(a is b for a, b in zip(history[:count], self.written, strict=True))


# --8<-- [start:session]
@dataclass
class Session:
    """A session on disk, loaded: its id, its transcript's path, and the history it rebuilt."""

    id: str
    path: Path
    history: list[Message]
    event_records: list[Record] = field(default_factory=list)
    """Every recorded event, oldest first, as read (``events()`` decodes them)."""
    notices: list[str] = field(default_factory=list)
    """What the reader skipped (a torn last line): tell the person."""
    forked_from: str | None = None

    def events(self, *kinds: type) -> list[object]:
        """The recorded events, decoded; only those of ``kinds`` (by type name) if given.

        Decoding is left until asked for: a long session has thousands of events, and
        resuming needs none of them.
        """
        names = {kind.__name__ for kind in kinds}
        return [
            decode_event(record)
            for record in self.event_records
            if not names or record["event"] in names
        ]


def new_session_id() -> str:
    """A fresh session id: a random UUID, as Claude Code's are."""
    return str(uuid.uuid4())


def header(session_id: str, cwd: Path, forked_from: str | None = None) -> Record:
    """The ``session`` record that opens a transcript."""
    return {
        "type": "session",
        "version": VERSION,
        "id": session_id,
        "cwd": str(cwd.resolve()),
        "started": datetime.now(UTC).isoformat(),
        "forked_from": forked_from,
    }


def start_session(cwd: Path, home: Path | None = None) -> tuple[str, TranscriptWriter]:
    """Create a new, empty session for the project at ``cwd``: its id and its open writer."""
    session_id = new_session_id()
    writer = open_writer(sessions_folder(cwd, home) / f"{session_id}.jsonl", home)
    writer.append([header(session_id, cwd)])
    return session_id, writer


def open_writer(path: Path, home: Path | None = None) -> TranscriptWriter:
    """A ``TranscriptWriter`` on ``path``, its folders private from claw's own folder down.

    Claw's folder (``home``, default ``claw_home()``), ``projects/`` and the project's folder
    are made mode 700, or tightened if an older claw left them open to others (``private.py``
    says so on stderr); the writer makes the file mode 600.
    """
    base = home or claw_home()
    private_folder(path.parent, top=base if path.parent.is_relative_to(base) else None)
    return TranscriptWriter(path)


# --8<-- [end:session]


def load_session(path: Path) -> Session:
    """Read the transcript at ``path`` and rebuild its session."""
    # region ch22: read_transcript, rebuild_history, event_records; keep the notices
    # more: Session(header["id"], path, history, event_records, notices, header["forked_from"])
    transcript = read_transcript(path)
    return Session(
        id=str(transcript.header["id"]),
        path=path,
        history=rebuild_history(transcript),
        event_records=event_records(transcript),
        notices=transcript.notices,
        forked_from=transcript.header.get("forked_from"),
    )
    # endregion


def session_usage(session: Session) -> TokenUsage:
    """The tokens and cost of the whole session: the sum of its recorded ``StepUsage``.

    A subagent's steps (chapter 21) are the session's spending too: a ``SubagentEvent`` that
    holds a ``StepUsage`` counts.
    """
    # region ch22: add up event.usage over the StepUsage events, and those inside SubagentEvents
    # more: session.events(StepUsage, SubagentEvent) decodes only those; TokenUsage has __add__
    total = TokenUsage()
    for event in session.events(StepUsage, SubagentEvent):
        inner = event.event if isinstance(event, SubagentEvent) else event
        if isinstance(inner, StepUsage):  # an UnknownEvent if its data no longer fits
            total += inner.usage
    return total
    # endregion


# --8<-- [start:session-info]
@dataclass(frozen=True)
class SessionInfo:
    """One session in a list: what a person needs to pick it."""

    id: str
    path: Path
    modified: datetime
    """When its transcript was last written (local time)."""
    title: str
    """Its first prompt, on one line, cut to 60 characters (empty if it has none yet)."""


TITLE_LIMIT = 60
"""The most characters of a first prompt a session list shows."""


def first_prompt(path: Path, limit: int = TITLE_LIMIT) -> str:
    """The first user message of the transcript at ``path``, on one line and cut to ``limit``.

    Reads only as far as that message, so a list of long sessions stays quick.
    """
    with path.open("rb") as file:
        for line in file:
            if not line.endswith(b"\n"):
                break
            try:
                record = json.loads(line)
            except ValueError:
                break
            message = record.get("message") if isinstance(record, dict) else None
            if isinstance(message, dict) and message.get("role") == "user":
                text = " ".join(_text_of(message.get("content")).split())
                return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
# --8<-- [end:session-info]


def list_sessions(cwd: Path, home: Path | None = None) -> list[SessionInfo]:
    """The sessions of the project at ``cwd``, the most recently written first."""
    # region ch22: every *.jsonl of sessions_folder, newest modification time first
    # more: stat().st_mtime; sort by (mtime, name) in reverse; the id is path.stem
    folder = sessions_folder(cwd, home)
    found: list[tuple[float, Path]] = []
    for path in folder.glob("*.jsonl"):
        try:
            found.append((path.stat().st_mtime, path))
        except FileNotFoundError:
            continue  # removed while we looked
    found.sort(key=lambda item: (item[0], item[1].name), reverse=True)
    return [
        SessionInfo(path.stem, path, datetime.fromtimestamp(mtime), first_prompt(path))
        for mtime, path in found
    ]
    # endregion


# --8<-- [start:find-session]
def latest_session(cwd: Path, home: Path | None = None) -> SessionInfo | None:
    """The session of the project at ``cwd`` written most recently, or ``None``."""
    sessions = list_sessions(cwd, home)
    return sessions[0] if sessions else None


def find_session(cwd: Path, session_id: str, home: Path | None = None) -> SessionInfo:
    """The session ``session_id`` of the project at ``cwd`` (a unique prefix of the id will do).

    Raises ``TranscriptError`` naming the project's folder if there is no such session, or
    listing the candidates if the prefix fits several.
    """
    sessions = list_sessions(cwd, home)
    exact = [info for info in sessions if info.id == session_id]
    matches = exact or [info for info in sessions if info.id.startswith(session_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise TranscriptError(
            f"no session {session_id!r} in {sessions_folder(cwd, home)}"
            + ("" if sessions else " (this project has no sessions yet)")
        )
    ids = ", ".join(info.id for info in matches)
    raise TranscriptError(f"session {session_id!r} is ambiguous: it could be {ids}")
# --8<-- [end:find-session]


def fork_session(
    source: Session, cwd: Path, home: Path | None = None
) -> tuple[str, TranscriptWriter]:
    """A new session that starts where ``source`` is; ``source`` is not changed.

    Every line of its transcript after the ``session`` record is copied, byte for byte, under
    a new ``session`` record that names ``source`` in ``forked_from``.
    """
    # region ch22: a new id, open_writer; its session record, then the source's lines, as bytes
    # more: data = path.read_bytes(); the lines after the first, up to the last b"\n"; writer.write
    data = source.path.read_bytes()
    lines = data[data.index(b"\n") + 1 : data.rfind(b"\n") + 1]  # no session record, no torn tail
    session_id = new_session_id()
    writer = open_writer(sessions_folder(cwd, home) / f"{session_id}.jsonl", home)
    writer.append([header(session_id, cwd, forked_from=source.id)], sync=False)
    writer.write(lines)
    return session_id, writer
    # endregion


def reopen(session: Session) -> TranscriptWriter:
    """A writer that appends to ``session``'s own transcript (resuming, not forking)."""
    return open_writer(session.path)


# --8<-- [start:choose]
def session_line(number: int, info: SessionInfo) -> str:
    """One line of the numbered list: number, when, id, first prompt."""
    when = info.modified.strftime("%Y-%m-%d %H:%M")
    line = f"{number:>3}. {when}  {info.id}  {info.title or '(no prompt yet)'}"
    return terminal_text(line)  # a transcript is data: its escapes must not reach the terminal


def session_list_text(sessions: Sequence[SessionInfo]) -> str:
    """The numbered list of ``sessions``, one line each (numbered from 1)."""
    return "".join(session_line(n, info) + "\n" for n, info in enumerate(sessions, start=1))


async def choose_session(
    sessions: Sequence[SessionInfo], ask: Callable[[], Awaitable[str]], out: TextIO
) -> SessionInfo | None:
    """Show ``sessions`` numbered on ``out`` and read a number with ``ask``.

    A wrong answer is asked again; an empty answer (or the end of input) chooses none.
    """
    out.write(session_list_text(sessions))
    while True:
        out.write(f"Resume which session? (1-{len(sessions)}, Enter for none) ")
        out.flush()
        answer = (await ask()).strip()
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(sessions):
            return sessions[int(answer) - 1]
        out.write(f"{answer!r} is not a number from 1 to {len(sessions)}.\n")
# --8<-- [end:choose]


def load(info: SessionInfo) -> Session:
    """``load_session`` of a listed session (for a ``/resume`` command)."""
    return load_session(info.path)


__all__ = [
    "Session",
    "SessionInfo",
    "SessionRecorder",
    "Transcript",
    "TranscriptError",
    "choose_session",
    "claw_home",
    "find_session",
    "fork_session",
    "latest_session",
    "list_sessions",
    "load_session",
    "open_writer",
    "project_folder_name",
    "reopen",
    "session_usage",
    "sessions_folder",
    "start_session",
]
