"""The error a stub raises until you write the code it stands for."""

import os

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
