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

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Send the conversation; return the whole turn once it is finished."""
        # region ch05b: a whole answer: send, read and close the body, parse it, read the turn
        # more: limits.body; TransportError says "mid-response"; not JSON says "JSON"; server_shape
        limits = self._limits()
        response = await self._send(self.request_body(messages, tools, stream=False), limits)
        try:
            raw = await limits.body(response)
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
        decoder = SSEDecoder(self.limits.max_event_chars)
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

    async def stream_turn(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Stream a turn and return it assembled: ``complete``, but over a streamed request."""
        accumulator = StreamAccumulator()
        async for event in self.stream(messages, tools):
            accumulator.add(event)
        with server_shape("the streamed answer"):
            return accumulator.turn(self.model)

