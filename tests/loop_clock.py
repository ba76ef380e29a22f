"""A clock for the running asyncio loop that a test moves forward by hand.

A limit under test (a command's timeout, a server's time to answer, a grace period) is tested by
what happens when it passes, never by racing it. The test sets the scene first (a process has
started, a file exists, an event is set), then moves the loop's clock past the limit; the timer
fires on the loop's next turn, whatever the machine's speed. Waiting for the scene uses events or
polling with a generous ceiling, so a machine twice as slow changes nothing.

Only the loop's own clock moves (``loop.time()``: ``asyncio.sleep``, ``wait_for``,
``asyncio.timeout``, ``call_later``); ``time.monotonic()`` and child processes are untouched.
Call ``advance`` from the loop's thread (an ``async`` test), where the loop is not asleep.

A limit is a timer the code under test arms a few turns of the loop after the scene is set (a
command has started, a request was sent): a move of the clock before that is lost, and the
test then waits out the whole limit. ``time_out`` waits for the timer first, then moves past it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any


class LoopClock:
    """The running loop's clock, moved forward by ``advance``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.offset = 0.0

    @classmethod
    def install(cls) -> LoopClock:
        """Take over the running loop's clock (the loop is the test's own, gone after it)."""
        loop = asyncio.get_running_loop()
        clock = cls(loop)
        loop.time = clock.time  # type: ignore[method-assign]
        return clock

    def time(self) -> float:
        """The loop's time: the monotonic clock plus every ``advance`` so far."""
        return time.monotonic() + self.offset

    async def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, then let the loop run the timers now due."""
        self.offset += seconds
        await asyncio.sleep(0)

    async def time_out(self, limit: float, running: asyncio.Future[Any] | None = None) -> None:
        """Move the clock past a limit of ``limit`` seconds, once ``running`` has armed it."""
        await armed(limit / 2, running)
        await self.advance(limit + 1)


async def armed(seconds: float, running: asyncio.Future[Any] | None = None) -> None:
    """Until the running loop holds a timer due ``seconds`` or more from now (a limit is armed).

    Works with or without a ``LoopClock``. If ``running`` (the task under test) ends first,
    the test fails with its result. asyncio keeps its timers in ``loop._scheduled``.
    """
    loop = asyncio.get_running_loop()
    while not any(
        not timer.cancelled() and timer.when() - loop.time() >= seconds
        for timer in loop._scheduled  # type: ignore[attr-defined]
    ):
        if running is not None and running.done():
            raise AssertionError(f"ended before its time limit was armed: {running.result()}")
        await asyncio.sleep(0.005)
