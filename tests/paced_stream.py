"""An event stream the test sends piece by piece, for the loopback server.

``StreamReply`` sends its pieces on a timer, so what the client has received at a given moment
depends on the machine's speed. ``PacedReply`` sends a piece only when the test calls ``send``:
the test knows what is on the wire, nothing arrives early, and a piece sent once the client has
read the one before reaches it as a read of its own. A stream that is never ended stays open and
silent until the client gives up or the server stops::

    reply = PacedReply()
    server.add(reply)
    reply.send(sse(chunk("Hel"), done=False))   # the client can read this much, no more
    ...
    reply.send(sse(chunk(finish_reason="stop")))
    reply.end()
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque

from clawbook.harness.loopback import Reply

_END = None


class PacedReply(Reply):
    """A chunked ``text/event-stream`` body, each piece sent when the test calls ``send``.

    ``send`` and ``end`` may be called before the request arrives (the pieces wait) and from
    any thread; the server's thread writes them in order, each as one HTTP chunk.
    """

    def __init__(self) -> None:
        """A stream with nothing sent yet."""
        super().__init__()
        self._pending: deque[bytes | None] = deque()
        self._lock = threading.Lock()
        self._wake: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    def send(self, *pieces: bytes) -> None:
        """Have the server send each of ``pieces`` as an HTTP chunk, in order."""
        self._push(*pieces)

    def end(self) -> None:
        """Have the server end the body (the empty last chunk) after the pieces sent so far."""
        self._push(_END)

    def _push(self, *items: bytes | None) -> None:
        with self._lock:
            self._pending.extend(items)
            wake = self._wake
        if wake is not None:
            loop, event = wake
            loop.call_soon_threadsafe(event.set)

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send the head, then each piece as the test sends it, until ``end``."""
        event = asyncio.Event()
        with self._lock:
            self._wake = (asyncio.get_running_loop(), event)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        await writer.drain()
        while True:
            event.clear()
            with self._lock:
                items = list(self._pending)
                self._pending.clear()
            for item in items:
                if item is _END:
                    writer.write(b"0\r\n\r\n")
                    await writer.drain()
                    return True
                if item:
                    writer.write(f"{len(item):x}\r\n".encode() + item + b"\r\n")
                    await writer.drain()
            if not items:
                await event.wait()
