"""How the terminal app stops: Ctrl-C, SIGTERM and SIGHUP cancel the run; an exit status says why.

A signal never kills claw in the middle of a step. ``Stopper`` turns each of them into
chapter 7's ``Agent.cancel()``: the stream stops, the tool in flight is cancelled (the bash
tool kills the process group of every command it started, chapter 10), every call left
without a result gets one, and the run finishes ``cancelled`` with a valid history. Then claw
exits with ``128 + the signal's number``, as a shell reports a command a signal ended.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from types import TracebackType

from .agent import Finish
from .events import RunFinished
from .options import EXIT_DONE, EXIT_FAILED

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that cancel a run: Ctrl-C, ``kill``, and the terminal going away."""

# --8<-- [start:ended-well]
ENDED_WELL = (Finish.DONE, Finish.HOOK_STOPPED)
"""The finishes that are no failure: the model answered, or a hook ended the run on purpose
(``"continue": false``, chapter 15), as Claude Code 2.1.332 treats them."""
# --8<-- [end:ended-well]


def exit_status(finished: RunFinished | None, signalled: int | None = None) -> int:
    """Claw's exit status: 128 + the signal that stopped it, else 0 if it ended well, else 1.

    ``done`` and ``hook_stopped`` (a hook ended the run on purpose, chapter 15) ended well.
    ``finished`` is ``None`` when no run finished (a hook blocked the prompt): 1.
    """
    # region ch19: a signal wins (128 + its number); then done or hook_stopped is 0; else 1
    # more: EXIT_DONE if finished is not None and finished.reason in ENDED_WELL else EXIT_FAILED
    if signalled is not None:
        return 128 + signalled
    return EXIT_DONE if finished is not None and finished.reason in ENDED_WELL else EXIT_FAILED
    # endregion


class Stopper:
    """While in a ``with`` block, the stop signals call ``cancel`` and are remembered.

    >>> with Stopper(agent.cancel) as stopper:
    ...     finished = await agent.run(prompt)
    >>> exit_status(finished, stopper.signalled)

    ``signals`` picks which ones (the REPL leaves SIGINT to its prompt between turns).
    """

    def __init__(
        self, cancel: Callable[[], None], signals: tuple[signal.Signals, ...] = STOP_SIGNALS
    ) -> None:
        """Call ``cancel`` on each of ``signals``."""
        self.cancel = cancel
        self.signals = signals
        self.signalled: int | None = None
        """The last signal that arrived, ``None`` if none did."""
        self.terminated = False
        """SIGTERM or SIGHUP arrived: claw must exit once the run is cancelled."""
        self._loop: asyncio.AbstractEventLoop | None = None

    def _arrived(self, signum: int) -> None:
        self.signalled = signum
        if signum != signal.SIGINT:
            self.terminated = True
        self.cancel()

    def __enter__(self) -> Stopper:
        """Install the handlers on the running event loop."""
        self._loop = asyncio.get_running_loop()
        for signum in self.signals:
            self._loop.add_signal_handler(signum, self._arrived, int(signum))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Give the signals back their defaults (for SIGINT: Python's ``KeyboardInterrupt``)."""
        assert self._loop is not None
        for signum in self.signals:
            self._loop.remove_signal_handler(signum)
