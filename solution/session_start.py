"""How the ``claw`` command starts a session: new, ``--continue``, ``--resume [ID]``, forked.

Given code (no chapter region): it only puts ``sessions.py`` together for the command line.
A new session is recorded on every run; if chapter 22 is not written yet, claw says so once and
runs without one, so the claw of earlier chapters keeps working.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .display import terminal_text, warning_line
from .events import SessionRulesAdded
from .loop import Agent
from .sessions import (
    Session,
    SessionInfo,
    SessionRecorder,
    TranscriptError,
    choose_session,
    find_session,
    fork_session,
    latest_session,
    list_sessions,
    load_session,
    reopen,
    session_list_text,
    sessions_folder,
    start_session,
)
from .terminal import ReadLine, interactive
from .todo import Todo, if_written
from .types import ToolCall

if TYPE_CHECKING:  # chapter 13, imported when it is used: --unguarded claw runs without it
    from .permissions import Approval, Permissions


def age(seconds: float) -> str:
    """How long ago, in words: ``just now``, ``5 minutes ago``, ``1 hour ago``, ``3 days ago``."""
    for unit, length in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        count = int(seconds // length)
        if count >= 1:
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"


def going_on(info: SessionInfo, verb: str, now: datetime | None = None) -> str:
    """The line that says which session claw goes on with: id, first prompt, last write."""
    seconds = ((now or datetime.now()) - info.modified).total_seconds()
    title = f'"{info.title}"' if info.title else "(no prompt yet)"
    return terminal_text(f"claw: {verb} session {info.id}: {title}, last written {age(seconds)}")


async def pick(
    arguments: argparse.Namespace, cwd: Path, read_line: ReadLine, err: TextIO
) -> Session | None:
    """The session the arguments ask to go on with, loaded; ``None`` for a new one.

    Which one it is, its first prompt and how old it is are said on ``err`` (``going_on``).
    """
    verb = "forking" if arguments.fork_session else "resuming"

    def loaded(info: SessionInfo) -> Session:
        session = load_session(info.path)
        err.write(going_on(info, verb) + "\n")
        return session

    if arguments.continue_session:
        latest = latest_session(cwd)
        if latest is None:
            raise TranscriptError(
                f"no session to continue: this folder has none yet ({sessions_folder(cwd)})"
            )
        return loaded(latest)
    if arguments.resume is None:
        return None
    if arguments.resume:
        return loaded(find_session(cwd, arguments.resume))
    sessions = list_sessions(cwd)
    if not sessions:
        folder = sessions_folder(cwd)
        raise TranscriptError(f"no session to resume: this folder has none yet ({folder})")
    if not interactive():
        raise TranscriptError(
            "--resume without an id asks which session, and there is no terminal to ask at; "
            "name one with --resume ID. This folder's sessions:\n"
            + session_list_text(sessions).rstrip("\n")
        )
    chosen = await choose_session(sessions, read_line, err)
    if chosen is None:
        raise TranscriptError("no session chosen")
    return loaded(chosen)




def keep_session_rules(recorder: SessionRecorder, agent: Agent, permissions: Permissions) -> None:
    """Make "always, this session" last as long as the session, across ``--continue``.

    The allow rules earlier runs of this session added (``SessionRulesAdded`` events in its
    transcript) are added to ``permissions`` again; from now on, each such answer is sent to
    the agent's observers as a ``SessionRulesAdded``, which the recorder writes down.
    """
    from .permissions import Approval, Decision, parse_rule

    recorded = load_session(recorder.writer.path).events(SessionRulesAdded)
    for event in recorded:
        if isinstance(event, SessionRulesAdded):
            permissions.rules[Decision.ALLOW] += [parse_rule(rule) for rule in event.rules]
    approve = permissions.approve
    if approve is None:
        return

    async def approve_and_record(call: ToolCall, why: str) -> Approval:
        answer = await approve(call, why)
        if answer is Approval.SESSION:  # the same rules ``Permissions.check`` is about to add
            rules = tuple(permissions.allow_rules_for(call))
            if rules:
                agent.sink.emit(SessionRulesAdded(rules))
        return answer

    permissions.approve = approve_and_record


async def open_session(
    arguments: argparse.Namespace, agent: Agent, cwd: Path, read_line: ReadLine, err: TextIO
) -> SessionRecorder | None:
    """Start recording ``agent``'s run, after loading the session it goes on with, if any.

    A loaded session's history replaces the agent's (with its system prompt, as it was sent);
    its notices (a torn last line) are printed on ``err``. Returns the recorder to add to the
    agent's observers, or ``None`` when sessions cannot be kept (chapter 22 not written yet, or
    its folder cannot be made: the run goes on unsaved, after a warning that says why).
    """
    session = await pick(arguments, cwd, read_line, err)
    if session is None:
        try:
            started = if_written("ch22", lambda: start_session(cwd))
        except OSError as error:  # a file where a folder should be, a full or read-only disk
            where = f"{error.filename}: " if error.filename else ""
            err.write(warning_line(f"this run is not saved as a session: {where}{error.strerror}"))
            return None
        if isinstance(started, Todo):
            err.write(warning_line(f"this run is not saved as a session yet ({started})"))
            return None
        _, writer = started
        return SessionRecorder(agent, writer)
    for notice in session.notices:
        err.write(warning_line(notice))
    agent.history[:] = session.history
    if arguments.fork_session:
        _, writer = fork_session(session, cwd)
    else:
        writer = reopen(session)
    return SessionRecorder(agent, writer, written=len(session.history))
