"""``OpenRouterProvider``: chat completions from OpenRouter or any OpenAI-compatible server.

One class speaks the OpenAI chat-completions wire format over HTTP with httpx:
``POST {base_url}/chat/completions``. It converts claw's messages and tool definitions to
that format, reads answers whole or streamed, captures token usage (and OpenRouter's
``cost``) in both modes, turns error statuses into typed exceptions that carry the server's
message, and retries what is worth retrying. Point ``base_url`` at Ollama
(``http://localhost:11434/v1``), vLLM or LM Studio and the same code talks to them.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import ipaddress
import json
import os
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
import orjson
import pydantic

from ..errors import (
    AuthenticationError,
    BadRequestError,
    InsufficientCreditsError,
    MalformedResponseError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
    RateLimitError,
    RequestTimeoutError,
    ResponseTooLargeError,
    ServerError,
    StreamError,
)
from ..instructions import keep_developer_role
from ..streaming import (
    MAX_EVENT_CHARS,
    Done,
    SSEDecoder,
    StreamAccumulator,
    StreamEvent,
    chunk_events,
)
from ..types import (
    AssistantMessage,
    AssistantTurn,
    CacheControl,
    Content,
    DeveloperMessage,
    Message,
    StopReason,
    SystemMessage,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)

OPENROUTER_URL = "https://openrouter.ai/api/v1"
API_KEY_VARIABLE = "OPENROUTER_API_KEY"

T = TypeVar("T")

# --8<-- [start:limits]
READ_TIMEOUT = 120.0
"""httpx's read timeout: the longest silence between two pieces of an answer, in seconds."""
CONNECT_TIMEOUT = 10.0
"""The longest wait for a connection to be set up."""
DEADLINE = 600.0
"""The longest a whole call may take, its retries and their waits included: ten minutes."""
IDLE_TIMEOUT = 300.0
"""The longest a stream may go without an event that carries data; comments do not count."""
MAX_BODY_BYTES = 16 * 2**20
"""The largest whole (non-streamed) answer read: 16 MiB, some thirty times the longest one."""
ERROR_BODY_BYTES = 64 * 2**10
"""How much of an error's body is read: claw quotes at most ``QUOTED_CHARS`` of its text."""
QUOTED_CHARS = 300
"""The most characters of a body that is not JSON (an error page) an error message quotes."""
PAGE_CHARS = 8_192
"""How much of an HTML page is searched for its words: parsing costs more than reading."""
# --8<-- [end:limits]


# --8<-- [start:content-to-wire]
def content_to_wire(
    content: Content, cache_control: CacheControl | None = None
) -> str | list[dict[str, Any]]:
    """A message's content in the OpenAI format: a string, or a list of text parts.

    A cache breakpoint can only ride on a part, so content that carries one always goes as
    parts, the breakpoint on the last: the provider may cache the prompt up to there.
    """
    # region ch05b: a string stays a string, unless a breakpoint needs a part to ride on
    # more: {"type": "text", "text": ...} per part; cache_control.model_dump(exclude_none=True)
    if isinstance(content, str) and cache_control is None:
        return content
    texts = [content] if isinstance(content, str) else [part.text for part in content]
    parts: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
    if cache_control is not None:
        parts[-1]["cache_control"] = cache_control.model_dump(exclude_none=True)
    return parts
    # endregion
# --8<-- [end:content-to-wire]


# --8<-- [start:message-to-wire]
def message_to_wire(message: Message) -> dict[str, Any]:
    """One claw message in the OpenAI chat format.

    Tool-call arguments travel as JSON *text*; an assistant message with only tool calls has
    ``content: null``; a failed tool result is marked with an ``Error:`` prefix, because the
    format has no error flag. Reasoning goes back under both names servers read it by. A
    developer message goes as a system message (chapter 8 revisits that).
    """
    # region ch05b: one dict per role; the wire differs from claw in a few small ways
    # more: match on the message classes; content_to_wire; json.dumps arguments; "Error: "
    match message:
        case SystemMessage(content=content, cache_control=cache) | DeveloperMessage(
            content=content, cache_control=cache
        ):
            return {"role": "system", "content": content_to_wire(content, cache)}
        case UserMessage(content=content):
            return {"role": "user", "content": content_to_wire(content)}
        case AssistantMessage(
            content=content, tool_calls=calls, reasoning_content=reasoning, cache_control=cache
        ):
            wire: dict[str, Any] = {
                "role": "assistant",
                "content": content_to_wire(content, cache) if content else None,
            }
            if reasoning:
                # OpenRouter reads "reasoning"; DeepSeek, Qwen and vLLM "reasoning_content".
                wire["reasoning"] = wire["reasoning_content"] = reasoning
            if calls:
                wire["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in calls
                ]
            return wire
        case ToolResultMessage(tool_call_id=call_id, content=content, is_error=is_error):
            return {
                "role": "tool",
                "tool_call_id": call_id,
                "content": f"Error: {content}" if is_error else content,
            }
    raise TypeError(f"not a message: {message!r}")
    # endregion
# --8<-- [end:message-to-wire]


# --8<-- [start:tool-to-wire]
def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    """One tool definition in the OpenAI format: a ``function`` with a JSON Schema."""
    # region ch05b: to the server, a tool is a "function" whose parameters are a JSON Schema
    # more: {"type": "function", "function": {name, description, parameters}}
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }
    # endregion
# --8<-- [end:tool-to-wire]


# --8<-- [start:turn-from-wire]
def turn_from_wire(body: Any) -> AssistantTurn:
    """Read a whole (non-streamed) chat completion into an ``AssistantTurn``.

    A body with an ``error`` object raises the matching ``ProviderHTTPError``, even when it
    came with status 200 (OpenRouter reports errors that happen after it accepted the request
    that way). Anything that is not a completion raises ``MalformedResponseError``.
    """
    # region ch05b: check the outside of the body, then read its message as a one-chunk stream
    # more: error_from_body(body, status=None); {"choices": [{"delta": message, ...}], "usage"}
    if not isinstance(body, dict):
        raise MalformedResponseError(f"expected a JSON object, got {type(body).__name__}")
    if body.get("error"):
        raise error_from_body(body, status=None)
    choices = body.get("choices")
    if not choices or not isinstance(choices[0], dict) or "message" not in choices[0]:
        raise MalformedResponseError(
            f"the response has no choices[0].message: {json.dumps(body)[:300]}"
        )
    choice = choices[0]
    # A whole message has the shape of one big streamed delta, so it is read as a stream that
    # arrived in one chunk: the accumulator's rules (truncated calls dropped, "stop" with
    # calls meaning tool use, arguments that must be a JSON object) apply to both modes.
    chunk = {
        "choices": [
            {"delta": choice["message"] or {}, "finish_reason": choice.get("finish_reason")}
        ],
        "usage": body.get("usage"),
    }
    accumulator = StreamAccumulator()
    for event in chunk_events(chunk):
        accumulator.add(event)
    if accumulator.stop_reason is None:
        accumulator.add(Done(StopReason.END_TURN))  # some servers leave finish_reason out
    return accumulator.turn(body.get("model"))
    # endregion
# --8<-- [end:turn-from-wire]


# --8<-- [start:error-classes]
ERRORS: dict[int, type[ProviderHTTPError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: InsufficientCreditsError,
    403: PermissionDeniedError,
    408: RequestTimeoutError,
    429: RateLimitError,
}
"""The exception for each client-error status; 5xx statuses raise ``ServerError``."""
# --8<-- [end:error-classes]


# --8<-- [start:errors]
def error_from_body(
    body: Any, status: int | None, *, retry_after: float | None = None
) -> ProviderHTTPError:
    """The typed error for a failed response, carrying the server's own message.

    OpenAI-compatible servers say what went wrong in ``{"error": {"message": ...}}``; the
    ``code`` inside it stands in for the status when the HTTP status was 200.
    """
    # region ch05b: the message and code come from body["error"]; the status picks the class
    # more: ERRORS.get(status, BadRequestError); 5xx is ServerError; under 200 the code stands in
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = str(error.get("message") or "no message")
        code = error.get("code")
    else:
        message = str(error or body or "no message")
        code = None
    if status is None or status < 400:
        status = code if isinstance(code, int) else 500
    if status >= 500:
        kind: type[ProviderHTTPError] = ServerError
    else:
        kind = ERRORS.get(status, BadRequestError)
    return kind(status, message, retry_after=retry_after)
    # endregion
# --8<-- [end:errors]


# --8<-- [start:retry-after]
def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
# --8<-- [end:retry-after]


# --8<-- [start:retry-policy]
@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before sending a failed request again."""

    max_retries: int = 2
    """Retries after the first attempt; 0 turns retrying off."""
    base_delay: float = 0.5
    """The wait before the first retry, doubled for each one after it."""
    max_delay: float = 20.0
    """The longest wait between attempts, however many retries came before."""
    max_retry_after: float = 60.0
    """The longest ``Retry-After`` honoured; a server asking for more gets its error raised."""

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds to wait before retry number ``attempt`` (0 for the first); ``None``: give up.

        A ``Retry-After`` from the server wins over the computed backoff.
        """
        # region ch05b: give up after max_retries; trust Retry-After up to a limit; else back off
        # more: min(max_delay, base_delay * 2**attempt), half of it fixed and half rng.uniform
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt)
        # "Equal jitter": half fixed, half random, so clients that failed together spread out.
        return backoff / 2 + rng.uniform(0, backoff / 2)
        # endregion
# --8<-- [end:retry-policy]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings every provider shares: loading the CA certificates once per process.

    Building a context reads the whole certificate bundle, which costs tens of milliseconds;
    a program (or a test suite) that makes many providers should pay that once, not each time.
    """
    return httpx.create_ssl_context()


# --8<-- [start:api-key]
def clean_api_key(key: str) -> str:
    """``key`` without the whitespace around it; ``AuthenticationError`` if it cannot be sent.

    A trailing newline is the usual copy-paste slip, and never part of a key. Anything else
    that is not printable ASCII (a space inside, a control character, an accented letter) could
    not travel in an HTTP header: it is refused here, before any request, with an error that
    says where it is without quoting the key.
    """
    key = key.strip()
    for position, character in enumerate(key, start=1):
        if "!" <= character <= "~":
            continue
        if character.isspace():
            kind = "white space"
        elif character.isprintable():
            kind = "a character that is not ASCII"
        else:
            kind = "a control character"
        raise AuthenticationError(
            401,
            f"the API key has {kind} (U+{ord(character):04X}) at position {position}; an API "
            "key is printable ASCII only: check it for a copy-paste slip",
        )
    return key
# --8<-- [end:api-key]


# --8<-- [start:key-transport]
class PlainHTTPError(ProviderError):
    """An API key would travel unencrypted (plain ``http``) to another machine: refused."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine: ``localhost``, or an address in 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_key_transport(base_url: str, api_key: str) -> None:
    """Raise ``PlainHTTPError`` if ``api_key`` would go over plain ``http`` off this machine.

    Anyone on the way (the café's Wi-Fi, a proxy) could read a key sent in clear. A local
    server (Ollama on ``http://localhost:11434``) is fine: the key never leaves the machine.
    """
    url = httpx.URL(base_url)
    if api_key and url.scheme == "http" and not is_loopback(url.host):
        raise PlainHTTPError(
            f"refusing to send the API key over plain http to {url.host}: use an https URL, "
            "or a server on this machine (localhost), or no key for a server that needs none"
        )
# --8<-- [end:key-transport]


def _check_header(name: str, value: str | None) -> None:
    """Raise ``ValueError`` naming ``name`` if ``value`` cannot be sent as an HTTP header."""
    if value is not None and not (value.isascii() and value.isprintable()):
        raise ValueError(f"{name} must be printable ASCII to travel in an HTTP header: {value!r}")


# --8<-- [start:server-shape]
class server_shape:  # lower case: used like a function, ``with server_shape("the answer"):``
    """Report JSON of the wrong shape as ``MalformedResponseError``, saying what was read.

    Reading a server's JSON assumes its shape: a list where an object was expected raises
    ``AttributeError``, a count that is text a pydantic ``ValidationError``. Whatever the
    server sent, the caller gets claw's error. ``sample``, the text that was read, is quoted
    after ``what`` (its first 200 characters), and only when there is an error to report: a
    stream reads tens of thousands of events, and quoting each in advance would cost more
    than reading it.
    """

    def __init__(self, what: str, sample: str | None = None) -> None:
        self.what = what
        self.sample = sample

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: object
    ) -> None:
        if error is None:
            return
        what = self.what if self.sample is None else f"{self.what} {self.sample[:200]!r}"
        if isinstance(error, pydantic.ValidationError):
            problems = "; ".join(problem["msg"] for problem in error.errors())
            raise MalformedResponseError(f"{what} is not valid: {problems}") from error
        if isinstance(error, (AttributeError, KeyError, TypeError, ValueError, ArithmeticError)):
            raise MalformedResponseError(
                f"{what} does not have the shape of a chat completion "
                f"({type(error).__name__}: {error})"
            ) from error
# --8<-- [end:server-shape]


def garbled(response: httpx.Response, error: httpx.DecodingError) -> MalformedResponseError:
    """The error for a body that does not decode the way its ``Content-Encoding`` says."""
    encoding = response.headers.get("Content-Encoding", "none")
    return MalformedResponseError(
        f"the server sent a body that is not what its Content-Encoding header ({encoding}) "
        f"says: {error}"
    )


async def read_at_most(response: httpx.Response, limit: int) -> bytes:
    """The first ``limit`` bytes of the body, or all of it if shorter; no more is read.

    For error bodies: a garbled one gives what could be decoded, since the status already
    says what went wrong.
    """
    pieces: list[bytes] = []
    size = 0
    try:
        async for piece in response.aiter_bytes():
            pieces.append(piece)
            size += len(piece)
            if size >= limit:
                break
    except httpx.DecodingError:
        pass
    return b"".join(pieces)[:limit]


# --8<-- [start:page-text]
class PageWords(HTMLParser):
    """The words of an HTML page: its title, and its text outside scripts and styles."""

    HIDDEN = frozenset({"script", "style", "head", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.words: list[str] = []
        self._open: list[str] = []  # the hidden or title elements we are inside

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Note that a hidden element, or the title, starts."""
        if tag in self.HIDDEN or tag == "title":
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        """Close the innermost element of that name that was noted."""
        if tag in self._open:
            while self._open.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        """Keep text that is shown: the title's apart, the rest unless it is hidden."""
        if self._open and self._open[-1] == "title":
            self.title.append(data)
        elif not self._open:
            self.words.append(data)


def is_html(content_type: str | None, text: str) -> bool:
    """Whether a body is an HTML page: by its ``Content-Type``, or by how it starts."""
    start = text.lstrip()[:15].lower()
    return "html" in (content_type or "").lower() or start.startswith(("<!doctype", "<html"))


def page_text(text: str, content_type: str | None = None, limit: int = QUOTED_CHARS) -> str:
    """A body that is not JSON, short enough to quote in one line of an error message.

    An HTML page (a proxy's ``502 Bad Gateway``, a login portal) becomes its title and the
    words of its body, without tags, scripts or styles. White space is collapsed, and the
    result is cut to ``limit`` characters (``…`` marks the cut). Empty if there are no words.
    """
    if is_html(content_type, text):
        page = PageWords()
        page.feed(text[:PAGE_CHARS])
        page.close()
        title = " ".join(" ".join(page.title).split())
        body = " ".join(" ".join(page.words).split())
        if title and body.startswith(title):  # the same words as a heading: once is enough
            body = body[len(title) :].lstrip()
        text = f"{title}: {body}" if title and body else title or body
    words = " ".join(text.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"
# --8<-- [end:page-text]


# --8<-- [start:call-limits]
class CallLimits:
    """The time limits of one call (``complete`` or ``stream``), and the waiting that keeps them.

    httpx's read timeout (``timeout``) is the longest silence between two pieces; any byte, a
    keep-alive comment too, starts it again. Two limits are claw's own, measured on ``clock``:
    the ``deadline`` for the whole call, retries and their waits included, and, for a stream,
    ``idle_timeout``, the longest time between two events that carry data. Every time-out
    raises ``ProviderTimeoutError`` naming the setting that ran out.
    """

    def __init__(
        self,
        *,
        where: str,
        deadline: float,
        idle_timeout: float,
        timeout: float,
        clock: Callable[[], float],
        redact: Callable[[str], str] = str,
    ) -> None:
        """Start the call now; ``where`` names the server in messages (without the key).

        ``redact`` blanks the key out of a body quoted in an error.
        """
        self.where = where
        self.redact = redact
        self.deadline = deadline
        self.idle_timeout = idle_timeout
        self.timeout = timeout
        self._clock = clock
        self._ends = clock() + deadline
        self._last_data = self._ends
        self._quiet = 0  # pieces since the last event with data

    def left(self) -> float:
        """Seconds until the deadline."""
        return self._ends - self._clock()

    def allows(self, delay: float, failure: Exception) -> bool:
        """Whether waiting ``delay`` seconds to retry still leaves time before the deadline.

        If not, a note on ``failure`` says why it was not retried.
        """
        if delay < self.left():
            return True
        failure.add_note(
            f"not retried: waiting {delay:g} s would pass the call's deadline of "
            f"{self.deadline:g} s (deadline)"
        )
        return False

    async def within(self, awaitable: Awaitable[T], waiting_for: str) -> T:
        """Await ``awaitable``, which waits for ``waiting_for``, keeping to the time limits."""
        try:
            async with asyncio.timeout(self.left()):
                return await awaitable
        except TimeoutError:
            raise self._past_deadline(waiting_for) from None
        except httpx.ReadTimeout:
            raise self._silent(waiting_for) from None

    async def not_a_page(self, response: httpx.Response, expected: str) -> None:
        """Raise ``MalformedResponseError`` if ``response`` is an HTML page, not ``expected``.

        A proxy or a captive portal in the way answers a request with a page of its own,
        even with status 200. Read as a stream, it would look like a stream cut short;
        instead, claw says what came: the status and the page's words, redacted.
        """
        if not is_html(response.headers.get("Content-Type"), ""):
            return
        raw = await self.within(read_at_most(response, ERROR_BODY_BYTES), "the page's body")
        words = page_text(self.redact(raw.decode(errors="replace")), "text/html")
        raise MalformedResponseError(
            f"{self.where} answered HTTP {response.status_code} with an HTML page, not "
            f"{expected} (is a proxy or a login page in the way?): {words or 'an empty page'}"
        )

    async def body(self, response: httpx.Response, limit: int) -> bytes:
        """The whole body of ``response``, within the limits; past ``limit`` bytes, an error.

        An HTML page is refused first (``not_a_page``), with what it says.
        """
        await self.not_a_page(response, "JSON")

        async def read() -> bytes:
            pieces: list[bytes] = []
            size = 0
            try:
                async for piece in response.aiter_bytes():
                    size += len(piece)
                    if size > limit:
                        raise ResponseTooLargeError(
                            f"the answer from {self.where} is larger than {limit:,} bytes "
                            "(max_body_bytes)",
                            setting="max_body_bytes",
                            limit=limit,
                        )
                    pieces.append(piece)
            except httpx.DecodingError as error:
                raise garbled(response, error) from None
            return b"".join(pieces)

        return await self.within(read(), "the rest of the answer")

    async def pieces(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The body of a streamed response as it arrives, within the deadline and idle limit.

        Call ``data_arrived`` for every event that carries data: nothing else (no keep-alive
        comment, no piece of an unfinished event) starts the idle limit again. An HTML page is
        refused first (``not_a_page``), with what it says.
        """
        await self.not_a_page(response, "an event stream")
        self._last_data = self._clock()
        chunks = response.aiter_bytes()
        try:
            while True:
                now = self._clock()
                to_deadline = self._ends - now
                to_idle = self._last_data + self.idle_timeout - now
                if min(to_deadline, to_idle) <= 0:
                    raise self._too_slow(to_deadline, to_idle)
                try:
                    async with asyncio.timeout(min(to_deadline, to_idle)):
                        piece = await anext(chunks)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise self._too_slow(to_deadline, to_idle) from None
                except httpx.ReadTimeout:
                    raise self._silent("the rest of the stream") from None
                except httpx.DecodingError as error:
                    raise garbled(response, error) from None
                self._quiet += 1
                yield piece
        finally:
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()

    def data_arrived(self) -> None:
        """An event that carries data has arrived: the idle limit starts again."""
        self._last_data = self._clock()
        self._quiet = 0

    def _too_slow(self, to_deadline: float, to_idle: float) -> ProviderTimeoutError:
        if to_deadline <= to_idle:
            return self._past_deadline("the rest of the stream")
        what = "only keep-alive comments or part of an event" if self._quiet else "nothing at all"
        return ProviderTimeoutError(
            f"the stream from {self.where} sent no event with data for "
            f"{self.idle_timeout:g} s (idle_timeout), {what}; the turn is incomplete",
            setting="idle_timeout",
            seconds=self.idle_timeout,
        )

    def _past_deadline(self, waiting_for: str) -> ProviderTimeoutError:
        return ProviderTimeoutError(
            f"the call's deadline of {self.deadline:g} s (deadline) passed while claw waited "
            f"for {waiting_for} from {self.where}",
            setting="deadline",
            seconds=self.deadline,
        )

    def _silent(self, waiting_for: str) -> ProviderTimeoutError:
        return ProviderTimeoutError(
            f"{self.where} sent nothing for {self.timeout:g} s (timeout) while claw waited for "
            f"{waiting_for}; not sent again, since the server has the request and may still be "
            "working on it (and billing for it)",
            setting="timeout",
            seconds=self.timeout,
        )
# --8<-- [end:call-limits]


# --8<-- [start:provider]
class OpenRouterProvider:
    """A ``StreamProvider`` for OpenRouter and any other OpenAI-compatible server.

    >>> provider = OpenRouterProvider("anthropic/claude-sonnet-4.5")  # key from the environment
    >>> local = OpenRouterProvider("qwen3:8b", base_url="http://localhost:11434/v1", api_key="")
    """

    # --8<-- [start:init]
    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = OPENROUTER_URL,
        app_url: str | None = None,
        app_title: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float = READ_TIMEOUT,
        deadline: float = DEADLINE,
        idle_timeout: float = IDLE_TIMEOUT,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_event_chars: int = MAX_EVENT_CHARS,
        retry: RetryPolicy | None = None,
        developer_role: bool = False,
        client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Configure the provider.

        ``api_key`` defaults to the ``OPENROUTER_API_KEY`` environment variable; pass ``""`` for a
        local server that needs no key. A key is never sent over plain ``http`` to another machine:
        that raises ``PlainHTTPError`` here, before any request. ``app_url`` and ``app_title`` are
        OpenRouter's optional attribution headers. ``timeout``, ``deadline`` and ``idle_timeout``
        are in seconds (see ``CallLimits``); ``max_body_bytes`` caps a whole answer and
        ``max_event_chars`` one stream event. ``developer_role`` sends developer messages with their
        own role, for models that know it; off, they go as system messages, which every server
        accepts (chapter 8). ``client``, ``sleep``, ``rng`` and ``clock`` are there for tests.
        """
        if api_key is None:
            api_key = os.environ.get(API_KEY_VARIABLE, "")
        api_key = clean_api_key(api_key)
        if not api_key and base_url.rstrip("/") == OPENROUTER_URL:
            raise AuthenticationError(
                401,
                f"no API key: set {API_KEY_VARIABLE}, or pass api_key=... "
                "(get a key at https://openrouter.ai/keys)",
            )
        check_key_transport(base_url, api_key)
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.developer_role = developer_role
        self.timeout, self.deadline, self.idle_timeout = timeout, deadline, idle_timeout
        self.max_body_bytes, self.max_event_chars = max_body_bytes, max_event_chars
        self._api_key = api_key
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        _check_header("app_url", app_url)
        _check_header("app_title", app_title)
        if app_url:
            self._headers["HTTP-Referer"] = app_url
        if app_title:
            self._headers["X-OpenRouter-Title"] = app_title
            self._headers["X-Title"] = app_title  # the older name, still read
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT), verify=tls_context()
        )
        self._owns_client = client is None
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
    # --8<-- [end:init]

    # --8<-- [start:lifecycle]
    def __repr__(self) -> str:
        # Deliberately without the key: reprs end up in logs and tracebacks.
        return f"OpenRouterProvider(model={self.model!r}, base_url={self.base_url!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections (only those of a client the provider created)."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
    # --8<-- [end:lifecycle]

    # --8<-- [start:request-body]
    def wire_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The conversation in the OpenAI format: ``message_to_wire`` for each message.

        With ``developer_role`` on, developer messages keep their own role (chapter 8).
        """
        wire = [message_to_wire(message) for message in messages]
        return keep_developer_role(messages, wire) if self.developer_role else wire

    def request_body(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], *, stream: bool
    ) -> dict[str, Any]:
        """The JSON body of a chat-completions request."""
        # region ch05b: the model and the messages always; everything else only when it applies
        # more: self.wire_messages, tool_to_wire; streaming adds two keys; test settings is not None
        body: dict[str, Any] = {"model": self.model, "messages": self.wire_messages(messages)}
        if tools:
            body["tools"] = [tool_to_wire(tool) for tool in tools]
        if stream:
            body["stream"] = True
            # OpenRouter always reports usage; OpenAI, vLLM and Ollama need to be asked.
            body["stream_options"] = {"include_usage": True}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body
        # endregion
    # --8<-- [end:request-body]

    # --8<-- [start:redact]
    def _redact(self, text: str) -> str:
        """``text`` with the API key blanked out, in case a server echoes it back."""
        if self._api_key and len(self._api_key) >= 8:
            return text.replace(self._api_key, "[redacted]")
        return text
    # --8<-- [end:redact]

    # --8<-- [start:describe]
    def _describe(self, error: httpx.TransportError) -> str:
        """What failed, redacted and never blank: httpx leaves some errors without words."""
        detail = str(error).strip()
        if not detail and isinstance(error, httpx.ConnectTimeout):
            detail = f"no connection within {CONNECT_TIMEOUT:g} s"
        elif not detail and isinstance(error, httpx.TimeoutException):
            detail = f"nothing moved for {self.timeout:g} s"
        return self._redact(f"{type(error).__name__}: {detail or 'no details given'}")

    def _connection_error(self, error: httpx.TransportError) -> ProviderConnectionError:
        """The error for a failure before any response: cannot connect, or the connection broke."""
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            what = f"cannot reach {self.base_url}"
        else:
            what = f"the connection to {self.base_url} failed before a response arrived"
        return ProviderConnectionError(self._redact(f"{what}: {self._describe(error)}"))

    def _limits(self) -> CallLimits:
        """The time limits of a call that starts now."""
        return CallLimits(
            where=self._redact(self.base_url),
            deadline=self.deadline,
            idle_timeout=self.idle_timeout,
            timeout=self.timeout,
            clock=self._clock,
            redact=self._redact,
        )
    # --8<-- [end:describe]

    # --8<-- [start:check-response]
    async def _raise_for_status(self, response: httpx.Response) -> None:
        """Raise the typed error for a response with an error status; do nothing for 2xx.

        The error's body is read and the response closed before raising.
        """
        # region ch05b: nothing below 400; else read and close the body and make it an error
        # more: read_at_most, then aclose in finally; _redact; page_text of a body that is not JSON
        if response.status_code < 400:
            return
        try:
            raw = await read_at_most(response, ERROR_BODY_BYTES)
        finally:
            await response.aclose()
        text = self._redact(raw.decode(errors="replace"))
        try:
            body: Any = json.loads(text)
        except ValueError:
            words = page_text(text, response.headers.get("Content-Type"))
            body = {"error": {"message": words or response.reason_phrase}}
        raise error_from_body(
            body,
            response.status_code,
            retry_after=parse_retry_after(response.headers.get("Retry-After")),
        )
        # endregion
    # --8<-- [end:check-response]

    # --8<-- [start:send]
    async def _send(self, body: dict[str, Any], limits: CallLimits) -> httpx.Response:
        """POST ``body`` and return the response with its headers read and a 2xx status.

        Retries 408, 429, 5xx and failed connections, following ``self.retry`` and as long as
        the wait fits before the deadline; never retries 400, 401, 402 or 403, which would fail
        the same way again, nor a time-out. The caller reads the body and must close the
        response.
        """
        # region ch05b: send; after a retryable failure ask the policy how long to wait, then again
        # more: limits.within around each await; catch TransportError, ProviderHTTPError; _sleep
        attempt = 0
        while True:
            request = self._client.build_request(
                "POST", f"{self.base_url}/chat/completions", json=body, headers=self._headers
            )
            failure: ProviderConnectionError | ProviderHTTPError
            try:
                send = self._client.send(request, stream=True)
                response = await limits.within(send, "the response headers")
                await limits.within(self._raise_for_status(response), "the error's body")
                return response
            except httpx.TransportError as error:
                # A refused connection, or one that broke before or while an error was read.
                failure, retry_after = self._connection_error(error), None
            except ProviderHTTPError as error:
                if not error.retryable:
                    raise
                failure, retry_after = error, error.retry_after
            delay = self.retry.delay(attempt, retry_after, self._rng)
            if delay is None or not limits.allows(delay, failure):
                raise failure
            attempt += 1
            await self._sleep(delay)
        # endregion
    # --8<-- [end:send]

    # --8<-- [start:complete]
    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Send the conversation; return the whole turn once it is finished."""
        # region ch05b: a whole answer: send, read and close the body, parse it, read the turn
        # more: limits.body; TransportError says "mid-response"; not JSON says "JSON"; server_shape
        limits = self._limits()
        response = await self._send(self.request_body(messages, tools, stream=False), limits)
        try:
            raw = await limits.body(response, self.max_body_bytes)
        except httpx.TransportError as error:
            raise ProviderConnectionError(
                f"the connection failed mid-response: {self._describe(error)}"
            ) from None
        finally:
            await response.aclose()
        text = self._redact(raw.decode(errors="replace"))
        try:
            body = json.loads(text)
        except ValueError:
            raise MalformedResponseError(
                f"the server did not answer with JSON: {text[:300]!r}"
            ) from None
        with server_shape("the answer"):
            return turn_from_wire(body)
        # endregion
    # --8<-- [end:complete]

    # --8<-- [start:stream]
    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation; yield events as the server streams the turn.

        Raises ``StreamError`` if the server reports an error part-way or the stream ends
        before ``data: [DONE]``. Retries happen only before the first event: once text has
        been shown, sending the request again would show it twice. A stream that ends with
        ``[DONE]`` but never gave a finish reason ended its turn, as a whole answer would.
        """
        # region ch05b: send, then feed each piece of the body to an SSEDecoder; yield as you go
        # more: limits.pieces; data_arrived per piece; orjson.loads; [DONE] ends it; decoder.close()
        limits = self._limits()
        response = await self._send(self.request_body(messages, tools, stream=True), limits)
        decoder = SSEDecoder(self.max_event_chars)
        stopped = False  # whether a Done event has been yielded
        try:
            async for piece in limits.pieces(response):
                events = decoder.feed(piece)
                if events:
                    limits.data_arrived()
                for event in events:
                    if event.data == "[DONE]":
                        if not stopped:  # no finish_reason: the turn ended, as in a whole answer
                            yield Done(StopReason.END_TURN)
                        return
                    text = self._redact(event.data)
                    try:
                        data = orjson.loads(text)
                    except ValueError:
                        raise MalformedResponseError(
                            f"a stream event is not JSON: {text[:200]!r}"
                        ) from None
                    with server_shape("the stream event", text):
                        items = chunk_events(data)
                    for item in items:
                        stopped = stopped or isinstance(item, Done)
                        yield item
            last = decoder.close()  # the body ended: was it in the middle of an event?
        except httpx.TransportError as error:
            raise StreamError(
                f"the connection broke in the middle of the stream ({self._describe(error)}); "
                "the turn is incomplete"
            ) from None
        finally:
            await response.aclose()
        if last is None:
            raise StreamError("the stream ended before data: [DONE]; the turn is incomplete")
        if last.data != "[DONE]":
            raise StreamError(
                "the stream ended in the middle of an event, without the blank line that ends "
                "one and before data: [DONE]; the turn is incomplete"
            )
        if not stopped:  # [DONE] came, only its blank line did not: the stream is complete
            yield Done(StopReason.END_TURN)
        # endregion
    # --8<-- [end:stream]

    # --8<-- [start:stream-turn]
    async def stream_turn(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Stream a turn and return it assembled: ``complete``, but over a streamed request."""
        accumulator = StreamAccumulator()
        async for event in self.stream(messages, tools):
            accumulator.add(event)
        with server_shape("the streamed answer"):
            return accumulator.turn(self.model)
    # --8<-- [end:stream-turn]
# --8<-- [end:provider]

