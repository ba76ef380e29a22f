"""A real OpenAI-compatible chat-completions server on 127.0.0.1, scripted by tests.

The provider tests need a server that behaves like OpenRouter on the wire, without the
internet: real sockets, real HTTP/1.1, chunked Server-Sent Events that arrive in pieces,
keep-alive comments, error bodies, ``Retry-After``, connections that drop. ``LoopbackServer``
runs one in a background thread (so synchronous clients such as the ``openai`` SDK can use it
as well as async ones), on a free port, and answers each request with the next scripted reply::

    with LoopbackServer() as server:
        server.add(JSONReply(completion("Hello!")))
        provider = OpenRouterProvider("test/model", base_url=server.base_url, api_key="sk-test")
        ...
        assert server.requests[0].json["model"] == "test/model"

The helpers at the bottom (``completion``, ``chunk``, ``call_start``, ``call_delta``, ``sse``,
``split`` and others) build realistic wire traffic, so a test reads as what the server sends.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any, Self

MODEL = "test/model"


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class Reply:
    """Base of the scripted replies. ``delay`` is how long to wait before answering."""

    delay: float = field(default=0.0, kw_only=True)

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send the reply; return whether the connection can serve another request."""
        raise NotImplementedError


def _head(status: int, headers: dict[str, str]) -> bytes:
    reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@dataclass
class TextReply(Reply):
    """A whole body at once, with a ``Content-Length``.

    ``cut_off=True`` sends only the first half of the body and then aborts the connection,
    as a server that crashes while answering would.
    """

    body: str | bytes = ""
    status: int = 200
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    cut_off: bool = False

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send the status line, the headers and the body (or half of it, then abort)."""
        body = self.body.encode() if isinstance(self.body, str) else self.body
        headers = {
            "Content-Type": self.content_type,
            "Content-Length": str(len(body)),
            **self.headers,
        }
        sent = body[: len(body) // 2] if self.cut_off else body
        writer.write(_head(self.status, headers) + sent)
        await writer.drain()
        if self.cut_off:
            writer.transport.abort()
            return False
        return True


@dataclass
class JSONReply(TextReply):
    """A JSON body (a completion, or an error object)."""

    def __init__(
        self,
        body: Any,
        status: int = 200,
        *,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        cut_off: bool = False,
    ) -> None:
        """Serialise ``body`` and answer with ``status``."""
        super().__init__(
            delay=delay,
            body=json.dumps(body),
            status=status,
            content_type="application/json",
            headers=headers or {},
            cut_off=cut_off,
        )


@dataclass
class StreamReply(Reply):
    """A chunked ``text/event-stream`` body, written piece by piece.

    Each piece is flushed to the socket on its own, ``pause`` seconds apart, so the client
    really receives the stream in those pieces (given a pause; without one the kernel may
    merge them). ``cut_off=True`` aborts the connection after the last piece, without the
    final empty chunk, the way a crashed server or a dropped connection looks to a client.
    """

    pieces: Sequence[bytes] = ()
    pause: float = 0.0
    cut_off: bool = False
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    sent_at: list[float] = field(default_factory=list)
    """``time.perf_counter()`` just after each piece was handed to the socket."""

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send the head, then each piece as one HTTP chunk, then the end (or an abort)."""
        headers = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
            **self.headers,
        }
        writer.write(_head(self.status, headers))
        await writer.drain()
        for number, piece in enumerate(self.pieces):
            if number and self.pause:
                await asyncio.sleep(self.pause)
            if not piece:
                continue
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
            self.sent_at.append(time.perf_counter())
        if self.cut_off:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


@dataclass
class DropReply(Reply):
    """Close the connection without answering at all."""

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Abort the connection."""
        writer.transport.abort()
        return False


KEEP_ALIVE = b": OPENROUTER PROCESSING\n\n"
"""The comment OpenRouter sends to keep a stream open while the model has nothing to say."""


@dataclass
class EndlessReply(Reply):
    """A chunked body that does not end by itself: ``head``, then ``piece`` again and again.

    For hostile servers: keep-alive comments forever (the default), a stream of data that never
    stops, a body far larger than any answer. Each ``piece`` is one HTTP chunk, sent ``every``
    seconds after the last, until ``size`` bytes of body have gone (the body then ends properly)
    or the client hangs up. ``sent`` counts the bytes of body handed to the socket, and
    ``finished`` is set once the reply is over, however it ended.
    """

    piece: bytes = KEEP_ALIVE
    head: bytes = b""
    every: float = 0.0
    size: int | None = None
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    sent: int = 0
    finished: threading.Event = field(default_factory=threading.Event)

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send the head, then pieces until ``size`` or until the connection fails."""
        headers = {
            "Content-Type": self.content_type,
            "Transfer-Encoding": "chunked",
            **self.headers,
        }
        try:
            writer.write(_head(self.status, headers))
            if self.head:
                writer.write(f"{len(self.head):x}\r\n".encode() + self.head + b"\r\n")
                self.sent += len(self.head)
            while self.size is None or self.sent < self.size:
                await writer.drain()
                await asyncio.sleep(self.every)  # also lets the loop serve other connections
                writer.write(f"{len(self.piece):x}\r\n".encode() + self.piece + b"\r\n")
                self.sent += len(self.piece)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        finally:
            self.finished.set()


@dataclass
class StallReply(Reply):
    """Send ``partial`` (by default nothing) and then nothing more, until the server stops.

    A server stuck before its response headers are out: the client waits on a connection that
    is open and silent, which only a read timeout or a deadline ends.
    """

    partial: bytes = b""

    async def write(self, writer: asyncio.StreamWriter) -> bool:
        """Send ``partial``, then wait for the server to stop."""
        writer.write(self.partial)
        await writer.drain()
        await asyncio.Event().wait()
        return False


class LoopbackServer:
    """An HTTP server on 127.0.0.1 that answers each request with the next scripted reply.

    Use it as a context manager (or call ``start`` and ``stop``). When the script is used
    up, requests get a 500 error saying so, and the test fails with a clear message.
    """

    def __init__(self, replies: Iterable[Reply] = ()) -> None:
        """Script ``replies``; more can be added with ``add`` at any time."""
        self._replies: deque[Reply] = deque(replies)
        self.requests: list[RecordedRequest] = []
        """Every request received, oldest first."""
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def base_url(self) -> str:
        """The URL to give a client: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used yet."""
        return len(self._replies)

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._replies.extend(replies)

    def start(self) -> Self:
        """Start serving in a background thread; return once the port is bound."""
        ready = threading.Event()
        failure: list[BaseException] = []
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(
                    asyncio.start_server(self._handle, "127.0.0.1", 0)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as error:  # report it to the starting thread
                failure.append(error)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="loopback-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close every connection and stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await asyncio.sleep(0)  # let the handlers of aborted connections finish quietly
            current = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()

        loop.call_soon_threadsafe(lambda: loop.create_task(shutdown()))
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # Send each piece as soon as it is written: streaming tests depend on it.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                reply = self._next_reply(request)
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                if not await reply.write(writer) or request.headers.get("connection") == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # The server is stopping. Ending normally keeps asyncio from logging the
            # cancellation of a connection handler as an error.
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if self._replies:
            return self._replies.popleft()
        return JSONReply(
            {
                "error": {
                    "code": 500,
                    "message": f"loopback server: no scripted reply left for "
                    f"{request.method} {request.path} (request {len(self.requests)})",
                }
            },
            status=500,
        )


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # the client closed the connection between requests
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += data[:-2]
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return RecordedRequest(method, path, headers, body)


# Wire-traffic builders ------------------------------------------------------------------


def usage_body(
    prompt_tokens: int = 12,
    completion_tokens: int = 5,
    *,
    cached_tokens: int = 0,
    cost: float | None = None,
) -> dict[str, Any]:
    """A ``usage`` object as OpenRouter sends it (``cost`` in dollars, if given)."""
    body: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens},
    }
    if cost is not None:
        body["cost"] = cost
    return body


def tool_call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A complete tool call as it appears in a non-streamed ``message.tool_calls``."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def completion(
    content: str | None = "",
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    """A whole ``chat.completion`` body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    return {
        "id": "gen-loopback-1",
        "object": "chat.completion",
        "created": 1764460800,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage if usage is not None else usage_body(),
    }


def chunk(
    content: str | None = None,
    *,
    tool_calls: Sequence[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    role: str | None = None,
    choices: bool = True,
    model: str = MODEL,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``. ``choices=False`` gives the usage-only final chunk."""
    body: dict[str, Any] = {
        "id": "gen-loopback-1",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": model,
        "choices": [],
    }
    if choices:
        delta: dict[str, Any] = {}
        if role:
            delta["role"] = role
        if content is not None:
            delta["content"] = content
        if tool_calls is not None:
            delta["tool_calls"] = list(tool_calls)
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    if usage is not None:
        body["usage"] = usage
    if error is not None:
        body["error"] = error
    return body


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    """The first fragment of a streamed tool call: its id and name, no arguments yet."""
    return {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }


def call_delta(index: int, arguments: str) -> dict[str, Any]:
    """A later fragment of a streamed tool call: a piece of its JSON arguments."""
    return {"index": index, "function": {"arguments": arguments}}


def text_chunks(text: str, size: int = 4) -> list[dict[str, Any]]:
    """The chunks of a streamed text reply: a role chunk, then ``size``-character pieces."""
    chunks = [chunk("", role="assistant")]
    chunks += [chunk(text[i : i + size]) for i in range(0, len(text), size)]
    return chunks


def sse(*events: dict[str, Any] | str, done: bool = True) -> bytes:
    """Events as the bytes of an SSE stream, ending with ``data: [DONE]`` unless ``done=False``.

    A dict becomes ``data: <json>`` and a blank line, with non-ASCII text as raw UTF-8 the way
    OpenRouter sends it (not as escapes); a string is sent exactly as written
    (for keep-alive comments such as ``": OPENROUTER PROCESSING"`` plus a blank line).
    """
    parts = [
        event if isinstance(event, str) else f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
        for event in events
    ]
    if done:
        parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def streamed_call(
    name: str,
    arguments: dict[str, Any],
    call_id: str = "call-1",
    usage: dict[str, Any] | None = None,
) -> StreamReply:
    """A streamed turn that asks for one call of ``name`` with ``arguments``.

    ``usage`` is the usage object its last chunk reports (default: ``usage_body()``).
    """
    return StreamReply(
        pieces=[
            sse(
                chunk("", role="assistant"),
                chunk(tool_calls=[call_start(0, call_id, name)]),
                chunk(tool_calls=[call_delta(0, json.dumps(arguments))]),
                chunk(finish_reason="tool_calls"),
                chunk(choices=False, usage=usage_body() if usage is None else usage),
            )
        ]
    )


def streamed_text(text: str, usage: dict[str, Any] | None = None) -> StreamReply:
    """A streamed turn with ``text`` and no tool calls; ``usage`` as in ``streamed_call``."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks(text),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=usage_body() if usage is None else usage),
            )
        ]
    )


def split(data: bytes, size: int) -> list[bytes]:
    """``data`` in pieces of ``size`` bytes: lines, events and UTF-8 characters get cut."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def error_body(code: int, message: str, **metadata: Any) -> dict[str, Any]:
    """An OpenRouter error object: ``{"error": {"code": ..., "message": ...}}``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if metadata:
        error["metadata"] = metadata
    return {"error": error}
