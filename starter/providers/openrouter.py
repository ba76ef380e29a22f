"""``OpenRouterProvider``: chat completions from OpenRouter or any OpenAI-compatible server.

One class speaks the OpenAI chat-completions wire format over HTTP with httpx:
``POST {base_url}/chat/completions``. It converts claw's messages and tool definitions to
that format, reads answers whole or streamed, captures token usage (and OpenRouter's
``cost``) in both modes, turns error statuses into typed exceptions that carry the server's
message, and retries what is worth retrying. Point ``base_url`` at Ollama
(``http://localhost:11434/v1``), vLLM or LM Studio and the same code talks to them. The HTTP
defences it shares with chapter 24's ``AnthropicProvider`` (limits, retries, the key's safety,
garbled answers) are in ``providers/http.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import httpx
import orjson

from ..errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderHTTPError,
    ServerError,
    StreamError,
)
from ..instructions import keep_developer_role
from ..streaming import (
    Done,
    SSEDecoder,
    StreamAccumulator,
    StreamEvent,
    chunk_events,
)
from ..todo import Todo
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
from .http import (
    ERRORS,
    HTTPLimits,
    HttpProvider,
    check_header,
    clean_api_key,
    server_shape,
)

OPENROUTER_URL = "https://openrouter.ai/api/v1"
API_KEY_VARIABLE = "OPENROUTER_API_KEY"


def content_to_wire(
    content: Content, cache_control: CacheControl | None = None
) -> str | list[dict[str, Any]]:
    """A message's content in the OpenAI format: a string, or a list of text parts.

    A cache breakpoint can only ride on a part, so content that carries one always goes as
    parts, the breakpoint on the last: the provider may cache the prompt up to there.
    """
    raise Todo("ch05b", "a string stays a string, unless a breakpoint needs a part to ride on")


def message_to_wire(message: Message) -> dict[str, Any]:
    """One claw message in the OpenAI chat format.

    Tool-call arguments travel as JSON *text*; an assistant message with only tool calls has
    ``content: null``; a failed tool result is marked with an ``Error:`` prefix, because the
    format has no error flag. Reasoning goes back under both names servers read it by. A
    developer message goes as a system message (chapter 8 revisits that).
    """
    raise Todo("ch05b", "one dict per role; the wire differs from claw in a few small ways")


def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    """One tool definition in the OpenAI format: a ``function`` with a JSON Schema."""
    raise Todo(
        "ch05b",
        "to the server, a tool is a \"function\" whose parameters are a JSON Schema",
    )


def turn_from_wire(body: Any) -> AssistantTurn:
    """Read a whole (non-streamed) chat completion into an ``AssistantTurn``.

    A body with an ``error`` object raises the matching ``ProviderHTTPError``, even when it
    came with status 200 (OpenRouter reports errors that happen after it accepted the request
    that way). Anything that is not a completion raises ``MalformedResponseError``.
    """
    raise Todo(
        "ch05b",
        "check the outside of the body, then read its message as a one-chunk stream",
    )




def error_from_body(
    body: Any, status: int | None, *, retry_after: float | None = None
) -> ProviderHTTPError:
    """The typed error for a failed response, carrying the server's own message.

    OpenAI-compatible servers say what went wrong in ``{"error": {"message": ...}}``; the
    ``code`` inside it stands in for the status when the HTTP status was 200.
    """
    raise Todo(
        "ch05b",
        "the message and code come from body[\"error\"]; the status picks the class",
    )


class OpenRouterProvider(HttpProvider):
    """A ``StreamProvider`` for OpenRouter and any other OpenAI-compatible server.

    What talking HTTP takes (the client, the key, the limits, sending with retries, an error
    status made a typed error) it inherits from ``HttpProvider``, which chapter 24's
    ``AnthropicProvider`` shares.

    >>> provider = OpenRouterProvider("anthropic/claude-sonnet-4.5")  # key from the environment
    >>> local = OpenRouterProvider("qwen3:8b", base_url="http://localhost:11434/v1", api_key="")
    """

    ENDPOINT = "/chat/completions"

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
        developer_role: bool = False,
        limits: HTTPLimits | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Configure the provider.

        ``api_key`` defaults to the ``OPENROUTER_API_KEY`` environment variable; pass ``""`` for a
        local server that needs no key. A key is never sent over plain ``http`` to another machine:
        that raises ``PlainHTTPError`` here, before any request. ``app_url`` and ``app_title`` are
        OpenRouter's optional attribution headers. ``developer_role`` sends developer messages
        with their own role, for models that know it; off, they go as system messages, which
        every server accepts (chapter 8). ``limits`` holds the time limits, size caps and retry
        policy (``HTTPLimits``). ``client``, ``sleep``, ``rng`` and ``clock`` are for tests.
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
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        check_header("app_url", app_url)
        check_header("app_title", app_title)
        if app_url:
            headers["HTTP-Referer"] = app_url
        if app_title:
            headers["X-OpenRouter-Title"] = app_title
            headers["X-Title"] = app_title  # the older name, still read
        super().__init__(
            model, base_url=base_url, api_key=api_key, headers=headers, limits=limits,
            client=client, sleep=sleep, rng=rng, clock=clock,
        )
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.developer_role = developer_role

    def error_from(
        self, body: Any, status: int | None, *, retry_after: float | None = None
    ) -> ProviderHTTPError:
        """``error_from_body``: the OpenAI format's error object made a typed error."""
        return error_from_body(body, status, retry_after=retry_after)

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
        raise Todo(
            "ch05b",
            "the model and the messages always; everything else only when it applies",
        )

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Send the conversation; return the whole turn once it is finished."""
        raise Todo(
            "ch05b",
            "a whole answer: send, read and close the body, parse it, read the turn",
        )

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation; yield events as the server streams the turn.

        Raises ``StreamError`` if the server reports an error part-way or the stream ends
        before ``data: [DONE]``. Retries happen only before the first event: once text has
        been shown, sending the request again would show it twice. A stream that ends with
        ``[DONE]`` but never gave a finish reason ended its turn, as a whole answer would.
        """
        raise Todo(
            "ch05b",
            "send, then feed each piece of the body to an SSEDecoder; yield as you go",
        )
        yield  # never reached; keeps this a generator

    async def stream_turn(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Stream a turn and return it assembled: ``complete``, but over a streamed request."""
        accumulator = StreamAccumulator()
        async for event in self.stream(messages, tools):
            accumulator.add(event)
        with server_shape("the streamed answer"):
            return accumulator.turn(self.model)

