"""The error a stub raises until you write the code it stands for."""

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

REACHED_ENV = "CLAWBOOK_STUBS_REACHED"
"""Names a file where each ``Todo`` notes its chapter, when the course's tools ask for it."""


class Todo(NotImplementedError):
    """Raised by a stub in ``starter/``: this piece of a chapter is still yours to write.

    The test suite reports a test that ends in ``Todo`` as *todo*, not as a failure, and shows
    the chapter and the hint.
    """

    def __init__(self, chapter: str, hint: str) -> None:
        super().__init__(f"{chapter}: {hint} (see `clawbook hint {chapter}`)")
        self.chapter = chapter
        self.hint = hint
        note_reached(chapter)


def note_reached(chapter: str) -> None:
    """Add ``chapter`` to the file ``CLAWBOOK_STUBS_REACHED`` names, if it is set.

    ``clawbook verify`` runs each test again only once a chapter whose stub it reached is
    filled in, caught or not and in whatever process (a ``claw`` command a test starts
    inherits the variable): a test that reached none of a chapter's stubs cannot change when
    that chapter is written.
    """
    path = os.environ.get(REACHED_ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as log:
            log.write(chapter + "\n")
    except OSError:
        pass  # a read-only or vanished folder: the test run itself goes on


def if_written(chapter: str, call: Callable[[], T]) -> T | Todo:
    """``call()``, or the ``Todo`` of ``chapter`` it reached: that chapter is not written yet.

    The one way claw asks whether a chapter is written. Until it is, claw does what the
    chapters before it did (no settings file before chapter 17, no session before 22, ...), so
    each chapter's claw runs while the later ones are stubs. A ``Todo`` of any other chapter is
    raised on: that code is needed either way, and ``clawbook check`` names it.
    """
    try:
        return call()
    except Todo as todo:
        if todo.chapter != chapter:
            raise
        return todo


async def if_written_async(chapter: str, call: Callable[[], Awaitable[T]]) -> T | Todo:
    """``if_written`` for a coroutine: ``await call()``, or the ``Todo`` of ``chapter``."""
    try:
        return await call()
    except Todo as todo:
        if todo.chapter != chapter:
            raise
        return todo
