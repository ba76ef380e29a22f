"""Talking HTTP to a model server safely: what both providers share.

A model server is a stranger: it may be slow, silent, huge, garbled, an HTML page from a proxy
in the way, or plain ``http`` to another machine. This module holds the defences both
``OpenRouterProvider`` (chapter 5b) and ``AnthropicProvider`` (chapter 24) use, so each is
written once:

- ``HTTPLimits``: every limit of a provider in one frozen object (time-outs, deadline, idle
  limit, size caps, ``RetryPolicy``); ``CallLimits`` keeps them for one call;
- ``RetryPolicy`` and ``parse_retry_after``: when to send a failed request again;
- ``ERRORS``: the typed error for each client-error status;
- ``clean_api_key`` and ``check_key_transport``: a key that cannot be sent, or would be sent
  in clear, is refused before any request; ``tls_context``, loaded once;
- ``server_shape``, ``garbled``, ``read_at_most`` and ``page_text``: what a server sent that is
  not what it should be becomes a ``MalformedResponseError`` saying what came.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import ipaddress
import json
import random
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from types import TracebackType
from typing import Any, ClassVar, Self, TypeVar

import httpx
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
)
from ..streaming import MAX_EVENT_CHARS

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

T = TypeVar("T")


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


@dataclass(frozen=True)
class HTTPLimits:
    """Every limit of a provider, in one object both providers take as ``limits=``.

    The defaults are generous: a reasoning model may think for minutes. Change one field and
    keep the rest: ``HTTPLimits(deadline=60.0)``. ``CallLimits`` keeps the time limits for one
    call.
    """

    timeout: float = READ_TIMEOUT
    """httpx's read timeout: the longest silence between two pieces, headers included."""
    deadline: float = DEADLINE
    """The longest a whole call may take, its retries and their waits included."""
    idle_timeout: float = IDLE_TIMEOUT
    """The longest a stream may go without an event that carries data."""
    max_body_bytes: int = MAX_BODY_BYTES
    """The largest whole (non-streamed) answer read."""
    max_event_chars: int = MAX_EVENT_CHARS
    """The largest single stream event, in characters (chapter 5a's ``SSEDecoder``)."""
    retry: RetryPolicy = RetryPolicy()
    """When, and how long to wait before, a failed request is sent again."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings every provider shares: loading the CA certificates once per process.

    Building a context reads the whole certificate bundle, which costs tens of milliseconds;
    a program (or a test suite) that makes many providers should pay that once, not each time.
    """
    return httpx.create_ssl_context()


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


def check_header(name: str, value: str | None) -> None:
    """Raise ``ValueError`` naming ``name`` if ``value`` cannot be sent as an HTTP header."""
    if value is not None and not (value.isascii() and value.isprintable()):
        raise ValueError(f"{name} must be printable ASCII to travel in an HTTP header: {value!r}")


class server_shape:  # lower case: used like a function, ``with server_shape("the answer"):``
    """Report JSON of the wrong shape as ``MalformedResponseError``, saying what was read.

    Reading a server's JSON assumes its shape: a list where an object was expected raises
    ``AttributeError``, a count that is text a pydantic ``ValidationError``. Whatever the
    server sent, the caller gets claw's error. ``sample``, the text that was read, is quoted
    after ``what`` (its first 200 characters), and only when there is an error to report: a
    stream reads tens of thousands of events, and quoting each in advance would cost more
    than reading it. ``shape`` is what the JSON should have been, for the message.
    """

    def __init__(
        self, what: str, sample: str | None = None, *, shape: str = "a chat completion"
    ) -> None:
        self.what = what
        self.sample = sample
        self.shape = shape

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
                f"{what} does not have the shape of {self.shape} "
                f"({type(error).__name__}: {error})"
            ) from error


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
        limits: HTTPLimits,
        *,
        where: str,
        clock: Callable[[], float],
        redact: Callable[[str], str] = str,
    ) -> None:
        """Start the call now, within ``limits``; ``where`` names the server in messages.

        ``where`` is said without the key; ``redact`` blanks the key out of a body quoted in
        an error.
        """
        self.where = where
        self.redact = redact
        self.deadline = limits.deadline
        self.idle_timeout = limits.idle_timeout
        self.timeout = limits.timeout
        self.max_body_bytes = limits.max_body_bytes
        self._clock = clock
        self._ends = clock() + limits.deadline
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

    async def body(self, response: httpx.Response) -> bytes:
        """The whole body of ``response``, within the limits; past ``max_body_bytes``, an error.

        An HTML page is refused first (``not_a_page``), with what it says.
        """
        await self.not_a_page(response, "JSON")
        limit = self.max_body_bytes

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


class HttpProvider:
    """A provider that talks HTTP to a model server, whichever API it speaks.

    It holds what every such provider needs, written once: the HTTP client and its limits, the
    key kept out of every message (``_redact``), a call's time limits (``_limits``), an error
    status made a typed error (``_raise_for_status``) and a request sent with its retries
    (``_send``). A subclass says where requests go (``ENDPOINT``), how an error body becomes
    a typed error (``error_from``) and everything the API says differently.
    ``OpenRouterProvider`` (chapter 5b) and ``AnthropicProvider`` (chapter 24) are the two.
    """

    ENDPOINT: ClassVar[str]
    """The path every request is sent to, after ``base_url``: ``/chat/completions``, say."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str,
        headers: dict[str, str],
        limits: HTTPLimits | None,
        client: httpx.AsyncClient | None,
        sleep: Callable[[float], Awaitable[None]],
        rng: random.Random | None,
        clock: Callable[[], float],
    ) -> None:
        """Talk to ``base_url`` with ``headers`` (the key among them) within ``limits``.

        A key is never sent over plain ``http`` to another machine: ``PlainHTTPError`` here,
        before any request. ``client``, ``sleep``, ``rng`` and ``clock`` are for tests.
        """
        check_key_transport(base_url, api_key)
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.limits = limits or HTTPLimits()
        self._api_key = api_key
        self._headers = headers
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(self.limits.timeout, connect=CONNECT_TIMEOUT),
            verify=tls_context(),
        )
        self._owns_client = client is None
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock

    def error_from(
        self, body: Any, status: int | None, *, retry_after: float | None = None
    ) -> ProviderHTTPError:
        """The typed error for an error ``body`` of this API, sent with ``status``."""
        raise NotImplementedError(f"{type(self).__name__} must define error_from()")

    # --8<-- [start:lifecycle]
    def __repr__(self) -> str:
        # Deliberately without the key: reprs end up in logs and tracebacks.
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

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

    def _redact(self, text: str) -> str:
        """``text`` with the API key blanked out, in case a server echoes it back."""
        if self._api_key and len(self._api_key) >= 8:
            return text.replace(self._api_key, "[redacted]")
        return text

    # --8<-- [start:describe]
    def _describe(self, error: httpx.TransportError) -> str:
        """What failed, redacted and never blank: httpx leaves some errors without words."""
        detail = str(error).strip()
        if not detail and isinstance(error, httpx.ConnectTimeout):
            detail = f"no connection within {CONNECT_TIMEOUT:g} s"
        elif not detail and isinstance(error, httpx.TimeoutException):
            detail = f"nothing moved for {self.limits.timeout:g} s"
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
            self.limits, where=self._redact(self.base_url), clock=self._clock, redact=self._redact
        )
    # --8<-- [end:describe]

    async def _raise_for_status(self, response: httpx.Response) -> None:
        """Raise the typed error for a response with an error status; do nothing for 2xx.

        The error's body is read and the response closed before raising.
        """
        # region ch05b: nothing below 400; else read and close the body and make it an error
        # more: read_at_most, aclose in finally; _redact; page_text if not JSON; self.error_from
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
        raise self.error_from(
            body,
            response.status_code,
            retry_after=parse_retry_after(response.headers.get("Retry-After")),
        )
        # endregion

    async def _send(self, body: dict[str, Any], limits: CallLimits) -> httpx.Response:
        """POST ``body`` and return the response with its headers read and a 2xx status.

        Retries 408, 429, 5xx and failed connections, following ``self.limits.retry`` and as long as
        the wait fits before the deadline; never retries 400, 401, 402 or 403, which would fail
        the same way again, nor a time-out. The caller reads the body and must close the
        response.
        """
        # region ch05b: send; after a retryable failure ask the policy how long to wait, then again
        # more: limits.within around each await; catch TransportError, ProviderHTTPError; _sleep
        attempt = 0
        while True:
            request = self._client.build_request(
                "POST", self.base_url + self.ENDPOINT, json=body, headers=self._headers
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
            delay = self.limits.retry.delay(attempt, retry_after, self._rng)
            if delay is None or not limits.allows(delay, failure):
                raise failure
            attempt += 1
            await self._sleep(delay)
        # endregion
