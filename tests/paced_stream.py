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

``ReadWatch`` is the other end: an httpx client that tells the test when the provider is done
with a piece (a keep-alive, say), so the test moves the clock only once it has been read.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx

from claw.providers.http import tls_context
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


class ReadWatch:
    """An httpx client that counts the pieces of a body its reader is done with.

    A piece counts once the reader asks for the next one: by then the provider has dealt with
    it (a keep-alive comment, say) and waits on the connection again.
    """

    def __init__(self, timeout: float) -> None:
        """A client with httpx's read timeout set to ``timeout`` seconds."""
        self.done = 0
        self._moved = asyncio.Event()
        watch = self

        class Counted(httpx.AsyncByteStream):
            def __init__(self, body: httpx.AsyncByteStream) -> None:
                self.body = body

            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for piece in self.body:
                    yield piece
                    watch.done += 1
                    watch._moved.set()

            async def aclose(self) -> None:
                await self.body.aclose()

        class Transport(httpx.AsyncHTTPTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                response = await super().handle_async_request(request)
                assert isinstance(response.stream, httpx.AsyncByteStream)
                response.stream = Counted(response.stream)
                return response

        self.client = httpx.AsyncClient(transport=Transport(verify=tls_context()), timeout=timeout)

    async def read(self, count: int, reader: asyncio.Future[Any]) -> None:
        """Return once the reader is done with ``count`` pieces and waits for the next.

        If ``reader`` (the task reading the body) ends first, what ended it is raised here.
        """
        while self.done < count:
            if reader.done():
                reader.result()
                raise AssertionError(f"the stream ended before its piece {count} was read")
            self._moved.clear()
            moved = asyncio.ensure_future(self._moved.wait())
            await asyncio.wait({moved, reader}, return_when=asyncio.FIRST_COMPLETED)
            moved.cancel()
