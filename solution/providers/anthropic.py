"""``AnthropicProvider``: Claude through Anthropic's own Messages API.

The same ``StreamProvider`` as chapter 5b's ``OpenRouterProvider``, for a second wire format:
``POST {base_url}/v1/messages``. A message's content is a list of typed blocks (``text``,
``tool_use``, ``tool_result``, ``thinking``); the system prompt travels beside the messages;
tool results are blocks of a user message. A stream is Server-Sent Events with a name for
each kind of event (``message_start``, ``content_block_delta``, ...), read with chapter 5a's
``SSEDecoder``. A model that thinks signs its thinking: the block goes back verbatim, signature
and all, on the next request, kept in claw's turns as a ``ProviderBlock``.

Time limits, size caps, retries and the key's safety are chapter 5b's, shared through
``providers/http.py`` and reused as they are.
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

from ..errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    ProviderConnectionError,
    ProviderHTTPError,
    ServerError,
    StreamError,
)
from ..streaming import (
    BlockDone,
    Done,
    ReasoningDelta,
    ServerSentEvent,
    SSEDecoder,
    StreamAccumulator,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
)
from ..types import (
    AssistantMessage,
    AssistantTurn,
    CacheControl,
    Content,
    DeveloperMessage,
    Message,
    ProviderBlock,
    StopReason,
    SystemMessage,
    TokenUsage,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from .http import (
    ERRORS,
    CallLimits,
    HTTPLimits,
    HttpProvider,
    clean_api_key,
    server_shape,
)

ANTHROPIC_URL = "https://api.anthropic.com"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
ANTHROPIC_VERSION = "2026-10-21"
"""The API version claw speaks, sent as the ``anthropic-version`` header."""
DEFAULT_MAX_TOKENS = 8192
"""The Messages API requires ``max_tokens``; this many when none is configured."""
PROVIDER = "anthropic"
"""The name on the ``ProviderBlock`` s this provider keeps, and the only ones it sends."""
MAX_PAUSES = 5
"""How many times in a row claw continues a turn the server paused (``pause_turn``)."""


def message_shape(what: str) -> server_shape:
    """Chapter 5b's ``server_shape`` for this API: JSON of the wrong shape is malformed."""
    return server_shape(what, shape="a Messages API event or message")


def text_blocks(
    content: Content, cache_control: CacheControl | None = None
) -> list[dict[str, Any]]:
    """``content`` as a list of ``text`` blocks, a breakpoint on the last one if given.

    Empty text makes no block: the API refuses empty text blocks.
    """
    # region ch24: one text block per part (a string is one part); the breakpoint on the last
    # more: skip empty text; cache_control.model_dump(exclude_none=True), as in chapter 5b
    parts = [content] if isinstance(content, str) else [part.text for part in content]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in parts if text]
    if cache_control is not None and blocks:
        blocks[-1]["cache_control"] = cache_control.model_dump(exclude_none=True)
    return blocks
    # endregion


def assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """The content blocks of an assistant message: kept thinking, text, then tool calls.

    The thinking blocks this provider sent come first and verbatim, signature included; blocks
    of another provider, and reasoning kept only as text, are left out (the API checks the
    signature, and text without one would be refused).
    """
    # region ch24: Anthropic's blocks first, untouched; then the text; then one tool_use per call
    # more: block.provider == PROVIDER; dict(block.data); {"type": "tool_use", "id", "name", ...}
    blocks = [dict(block.data) for block in message.provider_blocks if block.provider == PROVIDER]
    blocks.extend(text_blocks(message.content))
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    if message.cache_control is not None and blocks:
        blocks[-1]["cache_control"] = message.cache_control.model_dump(exclude_none=True)
    return blocks
    # endregion


def tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    """A tool's result as a ``tool_result`` block, answering the call ``tool_use_id``."""
    # region ch24: the call's id and the output; is_error only for a failure; no empty content
    # more: {"type": "tool_result", "tool_use_id": ...}; add "content" only if there is some
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.content:
        block["content"] = message.content
    if message.is_error:
        block["is_error"] = True
    return block
    # endregion


def to_wire(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The conversation as the Messages API wants it: ``(system, messages)``.

    System and developer messages become the ``system`` text blocks, in order. The others
    alternate ``user`` and ``assistant``: tool results are blocks of a user message, and
    consecutive messages of one role are merged into one, tool results first.
    """
    # region ch24: system blocks apart; each other message a role and blocks; merge same roles
    # more: match on the class; ToolResultMessage is "user"; extend the last message's content
    system: list[dict[str, Any]] = []
    wire: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage() | DeveloperMessage():
                system.extend(text_blocks(message.content, message.cache_control))
                continue
            case UserMessage():
                role, blocks = "user", text_blocks(message.content)
            case ToolResultMessage():
                role, blocks = "user", [tool_result_block(message)]
            case AssistantMessage():
                role, blocks = "assistant", assistant_blocks(message)
            case _:
                raise TypeError(f"cannot send a {type(message).__name__}")
        if not blocks:
            continue  # the API refuses empty content; an empty message says nothing anyway
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return system, wire
    # endregion


def tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    """A tool definition in the Messages API's format: its schema is ``input_schema``."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def usage_from_anthropic(usage: dict[str, Any]) -> TokenUsage:
    """Read a Messages API ``usage`` object into claw's ``TokenUsage``.

    Anthropic's ``input_tokens`` counts only the input after the last cache breakpoint; the
    tokens read from the cache and written to it are counted apart. claw's ``input_tokens``
    is all three together, as in the OpenAI format.
    """
    # region ch24: add the three input counts; reads are cached_input_tokens, writes cache_write
    # more: a missing or null count is 0 (usage.get(name) or 0); no cost: Anthropic sends none
    fresh = usage.get("input_tokens") or 0
    read = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    return TokenUsage(
        input_tokens=fresh + read + written,
        output_tokens=usage.get("output_tokens") or 0,
        cached_input_tokens=read,
        cache_write_tokens=written,
    )
    # endregion


# --8<-- [start:stop-reasons]
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "refusal": StopReason.CONTENT_FILTER,
}
"""How the Messages API's ``stop_reason`` values map onto claw's ``StopReason``.

``pause_turn`` is not among them: it does not end the turn (``MessageStreamReader.paused``).
"""
# --8<-- [end:stop-reasons]


# --8<-- [start:error-types]
ERROR_TYPES: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status that goes with each error ``type`` of the Messages API."""
# --8<-- [end:error-types]


def error_from_anthropic(
    body: Any, status: int | None, *, retry_after: float | None = None
) -> ProviderHTTPError:
    """The typed error for ``{"type": "error", "error": {"type", "message"}}``.

    The message starts with the error's type (``overloaded_error: Overloaded``). Without a
    status (an error inside a stream) the type stands in for it.
    """
    # region ch24: type and message from body["error"]; the status, or the type's, picks the class
    # more: ERROR_TYPES.get(kind, 500); 5xx ServerError, else ERRORS.get(status, BadRequestError)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        kind = str(error.get("type") or "error")
        message = f"{kind}: {error.get('message') or 'no message'}"
    else:
        kind, message = "error", str(error or body or "no message")
    if status is None or status < 400:
        status = ERROR_TYPES.get(kind, 500)
    exception = ServerError if status >= 500 else ERRORS.get(status, BadRequestError)
    return exception(status, message, retry_after=retry_after)
    # endregion


# --8<-- [start:reader-state]
class MessageStreamReader:
    """Turns the named events of a Messages API stream into claw's ``StreamEvent`` s.

    It remembers what the events build up: the usage so far (``message_start`` has the input
    tokens, ``message_delta`` the output so far), the thinking block being streamed with its
    signature, and whether ``message_stop`` has arrived.
    """

    def __init__(self) -> None:
        """Nothing read yet."""
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.stopped = False
        """Whether a ``Done`` event has been produced."""
        self.finished = False
        """Whether ``message_stop`` has arrived: the stream is complete."""
        self.pinged = False
        """Whether the last event read was a ``ping``: a keep-alive, nothing for the turn."""
        self.paused = False
        """Whether the server paused the turn (``pause_turn``): it is not over, and goes on
        once this message's content is sent back."""
        self.blocks: dict[int, dict[str, Any]] = {}
        """The content blocks begun and not yet stopped, by index, as they build up."""
    # --8<-- [end:reader-state]

    def read(self, event: ServerSentEvent) -> list[StreamEvent]:
        """The claw events in one stream event; ``StreamError`` for an ``error`` event.

        ``ping`` and event types nobody knows give nothing: the API may add new ones. A
        ``ping`` sets ``pinged``, any other event clears it.
        """
        # region ch24: parse the JSON; dispatch on its "type"; error raises; unknown is ignored
        # more: not a JSON object: malformed; message_stop sets finished; pinged = kind == "ping"
        try:
            data = json.loads(event.data)
        except ValueError:
            raise MalformedResponseError(
                f"a stream event ({event.event}) is not JSON: {event.data[:200]!r}"
            ) from None
        if not isinstance(data, dict):
            raise MalformedResponseError(
                f"a stream event is not a JSON object: {event.data[:200]!r}"
            )
        kind = data.get("type") or event.event
        self.pinged = kind == "ping"
        if kind == "error":
            error = error_from_anthropic(data, None)
            raise StreamError(
                f"the server reported an error in the middle of the stream: {error.message}"
            )
        match kind:
            case "message_start":
                return self._message_start(data)
            case "message_delta":
                return self._message_delta(data)
            case "message_stop":
                self.finished = True
            case "content_block_start":
                return self._content_block_start(data)
            case "content_block_delta":
                return self._content_block_delta(data)
            case "content_block_stop":
                return self._content_block_stop(data)
        return []  # ping, and any type added after this was written
        # endregion

    # --8<-- [start:reader-message]
    def _message_start(self, data: dict[str, Any]) -> list[StreamEvent]:
        """The message begins: its model and the input's usage."""
        message = data["message"]
        self.model = message.get("model")
        self.usage = dict(message.get("usage") or {})
        return [UsageUpdate(usage_from_anthropic(self.usage))]

    def _message_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        """The stop reason, and usage so far: counts given here replace those before.

        ``pause_turn`` gives no ``Done``: the turn is paused, not over; it sets ``paused``.
        """
        # region ch24: a Done for the stop reason (pause_turn: paused, no Done); merge the usage
        # more: STOP_REASONS.get(reason, END_TURN); keep None out of the merge; set self.stopped
        events: list[StreamEvent] = []
        reason = (data.get("delta") or {}).get("stop_reason")
        if reason == "pause_turn":
            self.paused = True
        elif reason:
            events.append(Done(STOP_REASONS.get(reason, StopReason.END_TURN)))
            self.stopped = True
        usage = data.get("usage") or {}
        self.usage.update({name: count for name, count in usage.items() if count is not None})
        events.append(UsageUpdate(usage_from_anthropic(self.usage)))
        return events
        # endregion
    # --8<-- [end:reader-message]

    # --8<-- [start:reader-blocks]
    def _content_block_start(self, data: dict[str, Any]) -> list[StreamEvent]:
        """A content block begins: text, a tool call, thinking, or redacted thinking."""
        # region ch24: remember a copy of the block by index; text and tool_use are events at once
        # more: tool_use: ToolCallStart(index, id, name); its input comes in input_json_delta
        index, block = data["index"], dict(data["content_block"])
        self.blocks[index] = block
        match block.get("type"):
            case "text" if block.get("text"):
                return [TextDelta(block["text"])]
            case "tool_use":
                block["partial_json"] = []
                return [ToolCallStart(index, block["id"], block["name"])]
            case "thinking" if block.get("thinking"):
                return [ReasoningDelta(block["thinking"])]
        return []
        # endregion

    def _content_block_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        """A piece of a block: text, JSON of a tool's input, thinking, or its signature."""
        # region ch24: find the block by index (never started: malformed); one case per delta type
        # more: thinking and signature also go into the kept block; unknown delta types: nothing
        index, delta = data["index"], data["delta"]
        block = self.blocks.get(index)
        if block is None:
            raise MalformedResponseError(
                f"a content_block_delta arrived for block {index}, which never started"
            )
        match delta.get("type"):
            case "text_delta":
                return [TextDelta(delta["text"])] if delta["text"] else []
            case "input_json_delta":
                block["partial_json"].append(delta["partial_json"])
                fragment = delta["partial_json"]
                return [ToolCallDelta(index, fragment)] if fragment else []
            case "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
                return [ReasoningDelta(delta["thinking"])] if delta["thinking"] else []
            case "signature_delta":
                block["signature"] = block.get("signature", "") + delta["signature"]
        return []
        # endregion

    def _content_block_stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        """A block is complete: thinking is kept verbatim; a tool's input given whole is sent."""
        # region ch24: pop the block; (redacted) thinking is kept whole; a tool's input given whole
        # more: BlockDone(ProviderBlock(provider=PROVIDER, data=block)); json.dumps(block["input"])
        block = self.blocks.pop(data["index"], None)
        if block is None:
            raise MalformedResponseError(
                f"a content_block_stop arrived for block {data['index']}, which never started"
            )
        match block.get("type"):
            case "thinking" | "redacted_thinking":
                return [BlockDone(ProviderBlock(provider=PROVIDER, data=block))]
            case "tool_use" if not block["partial_json"] and block.get("input"):
                return [ToolCallDelta(data["index"], json.dumps(block["input"]))]
        return []
        # endregion
    # --8<-- [end:reader-blocks]


def message_events(body: Any, reader: MessageStreamReader | None = None) -> list[StreamEvent]:
    """The events a whole (non-streamed) Message amounts to, as if it had been streamed.

    An ``error`` body raises its typed error, even with status 200. ``reader`` (a new one if
    not given) reads them, and knows afterwards what a stream's reader would.
    """
    if not isinstance(body, dict):
        raise MalformedResponseError(f"expected a JSON object, got {type(body).__name__}")
    if body.get("type") == "error":
        raise error_from_anthropic(body, None)
    if body.get("type") != "message" or not isinstance(body.get("content"), list):
        raise MalformedResponseError(f"the response is not a message: {json.dumps(body)[:300]}")
    reader = reader or MessageStreamReader()
    events = reader.read(ServerSentEvent(json.dumps({"type": "message_start", "message": body})))
    for index, block in enumerate(body["content"]):
        # A whole block is a start that carries everything (text, input, thinking and its
        # signature) and a stop: the reader's rules apply to both modes.
        for data in (
            {"type": "content_block_start", "index": index, "content_block": block},
            {"type": "content_block_stop", "index": index},
        ):
            events.extend(reader.read(ServerSentEvent(json.dumps(data))))
    delta = {"type": "message_delta", "delta": {"stop_reason": body.get("stop_reason")}}
    events.extend(reader.read(ServerSentEvent(json.dumps(delta))))
    if not reader.stopped and not reader.paused:
        events.append(Done(StopReason.END_TURN))
    return events


class AnthropicProvider(HttpProvider):
    """A ``StreamProvider`` for Anthropic's Messages API.

    Sending, retrying and the errors of an HTTP status are chapter 5b's, inherited from
    ``HttpProvider``; this class says what the Messages API says differently.

    >>> provider = AnthropicProvider("claude-sonnet-4-5")  # key from ANTHROPIC_API_KEY
    >>> thinker = AnthropicProvider("claude-sonnet-4-5", thinking_budget=4000)
    """

    ENDPOINT = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = ANTHROPIC_URL,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int | None = None,
        limits: HTTPLimits | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Configure the provider, as chapter 5b's; the key from ``ANTHROPIC_API_KEY``.

        ``thinking_budget`` turns extended thinking on with that many tokens (at least 1024,
        fewer than ``max_tokens``); ``None`` leaves it off. There is no ``temperature``: the
        official SDK's request types no longer have one, and claw sends what they accept.
        """
        if api_key is None:
            api_key = os.environ.get(API_KEY_VARIABLE, "")
        api_key = clean_api_key(api_key)
        if not api_key and base_url.rstrip("/") == ANTHROPIC_URL:
            raise AuthenticationError(
                401,
                f"no API key: set {API_KEY_VARIABLE}, or pass api_key=... "
                "(get a key at https://console.anthropic.com)",
            )
        if thinking_budget is not None and not 1024 <= thinking_budget < max_tokens:
            raise ValueError(
                f"thinking_budget must be at least 1024 and below max_tokens ({max_tokens}), "
                f"not {thinking_budget}"
            )
        headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(
            model, base_url=base_url, api_key=api_key, headers=headers, limits=limits,
            client=client, sleep=sleep, rng=rng, clock=clock,
        )
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget

    def request_body(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], *, stream: bool
    ) -> dict[str, Any]:
        """The JSON body of a Messages API request."""
        # region ch24: model, max_tokens, messages always; the rest only when it applies
        # more: to_wire(messages); "thinking": {"type": "enabled", "budget_tokens": ...}
        system, wire = to_wire(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [tool_to_wire(tool) for tool in tools]
        if stream:
            body["stream"] = True
        if self.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        return body
        # endregion

    def error_from(
        self, body: Any, status: int | None, *, retry_after: float | None = None
    ) -> ProviderHTTPError:
        """``error_from_anthropic``: the Messages API's error object made a typed error."""
        return error_from_anthropic(body, status, retry_after=retry_after)

    # --8<-- [start:complete]
    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Send the conversation; return the whole turn once it is finished."""
        accumulator = StreamAccumulator()
        readers: list[MessageStreamReader] = []
        async for event in self._continued(messages, tools, self._whole_message, readers):
            accumulator.add(event)
        with message_shape("the answer"):
            return accumulator.turn(readers[-1].model)

    async def _whole_message(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        limits: CallLimits,
        reader: MessageStreamReader,
    ) -> AsyncIterator[StreamEvent]:
        """Ask for one whole Message; yield its events, read by ``reader``."""
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
        with message_shape("the answer"):
            events = message_events(body, reader)
        for event in events:
            yield event
    # --8<-- [end:complete]

    async def _continued(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        one_message: Callable[
            [Sequence[Message], Sequence[ToolDefinition], CallLimits, MessageStreamReader],
            AsyncIterator[StreamEvent],
        ],
        readers: list[MessageStreamReader] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """The events of a turn, which may take several Messages: ``one_message`` asks for one.

        A Message that ends with ``pause_turn`` is part of the turn: its content goes back as
        the assistant's message, after ``messages``, and the answer to that goes on with the
        turn, at most ``MAX_PAUSES`` times. Usage adds up over the Messages; one deadline
        bounds them all. Each Message's reader is appended to ``readers``.
        """
        limits = self._limits()
        paused: list[Message] = []  # the turn so far, one assistant message per paused Message
        spent = TokenUsage()  # what those Messages used
        while True:
            reader = MessageStreamReader()
            if readers is not None:
                readers.append(reader)
            part = StreamAccumulator()
            async for event in one_message([*messages, *paused], tools, limits, reader):
                part.add(event)
                yield UsageUpdate(spent + event.usage) if isinstance(event, UsageUpdate) else event
            if not reader.paused:
                return
            if len(paused) == MAX_PAUSES:
                raise StreamError(
                    f"the server paused the turn {MAX_PAUSES + 1} times in a row (pause_turn); "
                    "claw stopped sending it back; the turn is incomplete"
                )
            part.add(Done(StopReason.END_TURN))  # for the assembly: the turn goes on
            with message_shape("the paused answer"):
                paused.append(part.turn(reader.model).to_message())
            spent += part.usage

    # --8<-- [start:stream]
    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation; yield events as the server streams the turn.

        Raises ``StreamError`` for an ``error`` event and for a stream that ends before
        ``message_stop``. Retries happen only before the stream starts, as in chapter 5b. A
        turn the server pauses goes on in the same stream (``_continued``).
        """
        async for event in self._continued(messages, tools, self._stream_message):
            yield event

    async def _stream_message(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        limits: CallLimits,
        reader: MessageStreamReader,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one Message: yield its events as ``reader`` reads them, within ``limits``."""
        # region ch24: chapter 5b's loop: feed pieces to an SSEDecoder, read each event, yield
        # more: data_arrived per event read, but for a ping; after message_stop: stop; END_TURN
        response = await self._send(self.request_body(messages, tools, stream=True), limits)
        decoder = SSEDecoder(self.limits.max_event_chars)
        try:
            async for piece in limits.pieces(response):
                for event in decoder.feed(piece):
                    with message_shape(f"the stream event {event.data[:200]!r}"):
                        items = reader.read(
                            ServerSentEvent(self._redact(event.data), event.event, event.id)
                        )
                    if not reader.pinged:  # a ping is a keep-alive: no sign of progress
                        limits.data_arrived()
                    for item in items:
                        yield item
                    if reader.finished:
                        break
                if reader.finished:
                    break
        except httpx.TransportError as error:
            raise StreamError(
                f"the connection broke in the middle of the stream ({self._describe(error)}); "
                "the turn is incomplete"
            ) from None
        finally:
            await response.aclose()
        if not reader.finished:
            raise StreamError("the stream ended before message_stop; the turn is incomplete")
        if not reader.stopped and not reader.paused:  # no stop reason: the turn ended
            yield Done(StopReason.END_TURN)
        # endregion
    # --8<-- [end:stream]

    async def stream_turn(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Stream a turn and return it assembled."""
        accumulator = StreamAccumulator()
        async for event in self.stream(messages, tools):
            accumulator.add(event)
        with message_shape("the streamed answer"):
            return accumulator.turn(self.model)
