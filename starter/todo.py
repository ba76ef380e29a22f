"""The error a stub raises until you write the code it stands for."""


class Todo(NotImplementedError):
    """Raised by a stub in ``starter/``: this piece of a chapter is still yours to write.

    The test suite reports a test that ends in ``Todo`` as *todo*, not as a failure, and shows
    the chapter and the hint.
    """

    def __init__(self, chapter: str, hint: str) -> None:
        super().__init__(f"{chapter}: {hint} (see `clawbook hint {chapter}`)")
        self.chapter = chapter
        self.hint = hint
