"""Where did it happen? Finding the learner's line in tracebacks, threads and crash dumps.

A failure is only useful to a learner if it points at *their* code: the line in ``starter/``
that raised, not the test that called it or the library function it called. Every function
here looks for the innermost frame that lies inside the implementation package and turns it
into a ``Location`` relative to the repository.
"""

from __future__ import annotations

import linecache
import re
import sys
import threading
import traceback
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from clawbook.harness.report import Location

FAULTHANDLER_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def location(path: str, line: int, function: str, relative_to: Path) -> Location:
    """A ``Location`` for ``path:line``, relative to ``relative_to`` when it lies inside it."""
    resolved = Path(path).resolve()
    try:
        shown = resolved.relative_to(relative_to).as_posix()
    except ValueError:
        shown = path
    source = linecache.getline(str(resolved), line).strip()
    return Location(path=shown, line=line, source=source, function=function)


def inside(path: str, directory: Path) -> bool:
    """Whether ``path`` lies in ``directory``."""
    try:
        Path(path).resolve().relative_to(directory)
    except (ValueError, OSError):
        return False
    return True


def _frames_of(error: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(error.__traceback__, limit=None))


def innermost(
    frames: Iterable[tuple[str, int, str]], directory: Path, relative_to: Path
) -> Location | None:
    """The last of ``(path, line, function)`` frames that lies under ``directory``."""
    found = None
    for path, line, function in frames:
        if inside(path, directory):
            found = (path, line, function)
    return location(*found, relative_to=relative_to) if found else None


def in_exception(error: BaseException, directory: Path, relative_to: Path) -> Location | None:
    """The innermost frame under ``directory`` in an exception, its causes or its contexts."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = [(f.filename, f.lineno or 0, f.name) for f in _frames_of(current)]
        found = innermost(frames, directory, relative_to)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def in_own_code(
    error: BaseException,
    directory: Path,
    relative_to: Path,
    own: Mapping[str, Collection[str]],
) -> list[Location]:
    """The frames of ``error`` (or a cause or context) in code the learner wrote, outermost first.

    ``own`` maps a file, relative to ``directory``, to the qualified names of the functions
    whose bodies the learner writes (``ContextWindow.prepare``). Where a test was stopped is
    often a given helper that the learner's loop calls again and again: the lines to look at
    are in the learner's functions on the way there, the loop's among them.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found: list[Location] = []
        tb = current.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if inside(code.co_filename, directory):
                relative = Path(code.co_filename).resolve().relative_to(directory).as_posix()
                if code.co_qualname in own.get(relative, ()):
                    found.append(
                        location(code.co_filename, tb.tb_lineno, code.co_qualname, relative_to)
                    )
            tb = tb.tb_next
        if found:
            return found
        current = current.__cause__ or current.__context__
    return []


def in_test_file(error: BaseException, test_file: Path, relative_to: Path) -> Location | None:
    """The innermost frame of ``error``'s traceback that lies in the test file itself."""
    target = test_file.resolve()
    found = None
    for frame in _frames_of(error):
        if Path(frame.filename).resolve() == target:
            found = frame
    if found is None:
        return None
    return location(found.filename, found.lineno or 0, found.name, relative_to)


def in_test_function(
    error: BaseException, test_file: Path, function: str, relative_to: Path
) -> Location | None:
    """The frame of the test function itself in ``error``'s traceback (not a helper it called)."""
    target = test_file.resolve()
    for frame in _frames_of(error):
        if frame.name == function and Path(frame.filename).resolve() == target:
            return location(frame.filename, frame.lineno or 0, frame.name, relative_to)
    return None


def raised_at(error: BaseException, relative_to: Path) -> Location | None:
    """Where ``error`` was raised: the last frame of its own traceback."""
    frames = _frames_of(error)
    if not frames:
        return None
    last = frames[-1]
    return location(last.filename, last.lineno or 0, last.name, relative_to)


def in_other_threads(directory: Path, relative_to: Path) -> Location | None:
    """Where another thread is right now, if it is inside ``directory`` (a stuck worker)."""
    current = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        if ident == current:
            continue
        found = innermost(_stack(frame), directory, relative_to)
        if found is not None:
            return found
    return None


def _stack(frame: FrameType | None) -> list[tuple[str, int, str]]:
    stack: list[tuple[str, int, str]] = []
    while frame is not None:
        stack.append((frame.f_code.co_filename, frame.f_lineno or 0, frame.f_code.co_name))
        frame = frame.f_back
    stack.reverse()  # outermost first, like a traceback
    return stack


def task_chains() -> list[tuple[str, list[tuple[str, int, str]]]]:
    """Every asyncio task of this process with its await chain, outermost coroutine first.

    A coroutine that waits (for a stuck worker thread, say) is on no thread's stack; only its
    task still knows the line it waits at.
    """
    import asyncio  # here: the learner's tools import this module and rarely need asyncio

    chains = []
    for task in list(getattr(asyncio.tasks, "_all_tasks", ())):
        chain: list[tuple[str, int, str]] = []
        awaited: Any = task.get_coro()
        while awaited is not None:
            frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
            if frame is None:
                break
            chain.append((frame.f_code.co_filename, frame.f_lineno or 0, frame.f_code.co_name))
            awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
        chains.append((task.get_name(), chain))
    return chains


def in_tasks(directory: Path, relative_to: Path) -> Location | None:
    """Where a pending asyncio task waits, if that is inside ``directory``."""
    for _name, chain in task_chains():
        found = innermost(chain, directory, relative_to)
        if found is not None:
            return found
    return None


def in_faulthandler_dump(text: str, directory: Path, relative_to: Path) -> Location | None:
    """The innermost frame under ``directory`` in a ``faulthandler`` dump of every thread.

    A dump lists each thread's frames most recent first; the first matching frame of any thread
    is the innermost one.
    """
    for line in text.splitlines():
        match = FAULTHANDLER_FRAME.match(line)
        if match and inside(match["path"], directory):
            return location(match["path"], int(match["line"]), match["func"], relative_to)
    return None
