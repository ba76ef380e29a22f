"""Streaming: turning a server's byte stream into events, and events into a turn.

A streamed chat completion arrives as Server-Sent Events (SSE): lines of text, grouped into
events by blank lines, each event's ``data:`` holding one JSON chunk. Three layers turn it
into something an agent can use:

1. ``SSEDecoder`` cuts the bytes into events, however the network split them;
2. ``chunk_events`` reads one OpenAI-style JSON chunk and says what happened, as
   ``StreamEvent`` values: some reasoning, some text, a tool call started, a fragment of its
   arguments, the token usage, the end;
3. ``StreamAccumulator`` adds the events up into the finished ``AssistantTurn``.

``MockStreamProvider`` streams scripted turns as events, so everything above a provider can
be tested without a server.
"""

from __future__ import annotations

import codecs
import json
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from .errors import MalformedResponseError, ResponseTooLargeError, StreamError
from .mock import MockProviderExhausted, ProviderCall, as_turn
from .types import (
    AssistantTurn,
    Message,
    ProviderBlock,
    StopReason,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)


# --8<-- [start:events]
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text, to show as soon as it arrives."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of a reasoning model's thinking: never part of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began a tool call. ``index`` tells parallel calls apart."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of the JSON arguments of the tool call at ``index``."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """The tokens used so far (usually sent once, at the end)."""

    usage: TokenUsage


@dataclass(frozen=True, slots=True)
class Done:
    """The model stopped, for this reason. More usage may still follow before the stream ends."""

    stop_reason: StopReason


@dataclass(frozen=True, slots=True)
class BlockDone:
    """A block only its provider understands is complete, to be kept verbatim (chapter 24)."""

    block: ProviderBlock


StreamEvent = (
    TextDelta | ReasoningDelta | ToolCallStart | ToolCallDelta | UsageUpdate | Done | BlockDone
)
"""Anything a streaming provider reports while a turn is being generated."""
# --8<-- [end:events]


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event of an SSE stream: its data (lines joined by newlines), its type and its id."""

    data: str
    event: str = "message"
    id: str | None = None


def parse_sse_line(line: str) -> tuple[str, str] | None:
    """Split one non-blank line of an event stream into ``(field, value)``.

    Returns ``None`` for a comment (a line starting with ``:``, such as OpenRouter's
    ``: OPENROUTER PROCESSING`` keep-alive). A line without a colon is a field with an empty
    value; one space after the colon, if present, is not part of the value.
    """
    # region ch05a: a comment gives None; any other line is a field name, a colon and a value
    # more: str.partition(":") splits at the first colon; remove one leading space, never more
    if line.startswith(":"):
        return None
    name, _, value = line.partition(":")
    if value.startswith(" "):
        value = value[1:]
    return name, value
    # endregion


# --8<-- [start:decoder]
# --8<-- [start:decoder-state]
MAX_EVENT_CHARS = 4 * 2**20
"""The most one stream event may hold: 4 Mi characters, eight times the longest answers."""


class SSEDecoder:
    r"""Turns the bytes of an event stream, in pieces of any size, into ``ServerSentEvent`` s.

    Feed it whatever the network delivers; it keeps the unfinished line and the unfinished
    event until the rest arrives. Lines may end in ``\n``, ``\r\n`` or ``\r``. It never keeps
    more than ``max_event_chars`` characters for one event: a server is a stranger.
    """

    def __init__(self, max_event_chars: int = MAX_EVENT_CHARS) -> None:
        """Start with nothing buffered."""
        self.max_event_chars = max_event_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._buffer: list[str] = []
        self._buffered = 0  # characters in _buffer
        self._data: list[str] = []
        self._data_size = 0  # characters in _data
        self._event = ""
        self._id: str | None = None
        self._started = False
        self._after_cr = False

    @property
    def pending(self) -> bool:
        """Whether part of an event has arrived but not its end (the blank line)."""
        return bool(self._buffer or self._data or self._event)

    def _check_size(self) -> None:
        """Raise ``ResponseTooLargeError`` once the event in progress is too big to keep.

        What is kept for it: the data lines so far and the unfinished line.
        """
        if self._buffered + self._data_size > self.max_event_chars:
            raise ResponseTooLargeError(
                f"a stream event grew past {self.max_event_chars:,} characters "
                f"(max_event_chars) without ending",
                setting="max_event_chars",
                limit=self.max_event_chars,
            )
    # --8<-- [end:decoder-state]

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Add bytes from the stream; return the events they complete, in order."""
        # region ch05a: decode the bytes, cut the text into complete lines, keep the unfinished rest
        # more: _decoder.decode; CR LF, lone CR become LF; split; join kept pieces; _buffered
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        if self._after_cr and text:
            # The previous piece ended in "\r", which ended its line: a "\n" now completes
            # that "\r\n" and is not a second line end.
            self._after_cr = False
            text = text.removeprefix("\n")
        if text:
            self._after_cr = text.endswith("\r")
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if len(lines) == 1:  # no line ends here: keep the piece, join it when one does
            if text:
                self._buffer.append(text)
                self._buffered += len(text)
                self._check_size()
            return []
        lines[0] = "".join(self._buffer) + lines[0]
        rest = lines.pop()
        self._buffer = [rest] if rest else []
        self._buffered = len(rest)
        events: list[ServerSentEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._check_size()  # the rest is kept for the next piece
        return events
        # endregion

    def _line(self, line: str) -> ServerSentEvent | None:
        """Process one complete line; return an event when the line is the blank that ends one."""
        # region ch05a: a blank line ends the event if it has data; any other line sets one field
        # more: parse_sse_line; data values in a list, sizes in _data_size; reset all but the id
        if not line:
            if not self._data:
                self._event = ""
                return None
            event = ServerSentEvent(
                data="\n".join(self._data), event=self._event or "message", id=self._id
            )
            self._data = []
            self._data_size = 0
            self._event = ""
            return event
        parsed = parse_sse_line(line)
        if parsed is None:
            return None
        name, value = parsed
        if name == "data":
            self._data.append(value)
            self._data_size += len(value)
            self._check_size()
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None
        # endregion

    def close(self) -> ServerSentEvent | None:
        """The stream has ended: the event it was in the middle of, if that has data.

        The SSE standard drops an event whose blank line never came; a caller that knows
        better (``data: [DONE]`` means the same with or without it) can look at it here.
        """
        if self._buffer:
            self._line("".join(self._buffer))
            self._buffer, self._buffered = [], 0
        return self._line("")
# --8<-- [end:decoder]


def usage_from_wire(usage: dict[str, Any]) -> TokenUsage:
    """Read an OpenAI-style ``usage`` object, including OpenRouter's ``cost`` in dollars."""
    # region ch05a: OpenAI names for the token counts; the cost is money and may be missing
    # more: a missing or null count is 0; cost: None stays None, anything else Decimal(str(cost))
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    cost = usage.get("cost")
    return TokenUsage(
        input_tokens=usage.get("prompt_tokens") or 0,
        output_tokens=usage.get("completion_tokens") or 0,
        cached_input_tokens=prompt.get("cached_tokens") or 0,
        reasoning_tokens=completion.get("reasoning_tokens") or 0,
        # Through str, so 0.1 stays Decimal("0.1") and not 0.1000000000000000055511151231257827
        cost=None if cost is None else Decimal(str(cost)),
    )
    # endregion


# --8<-- [start:finish-reasons]
FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.CONTENT_FILTER,
    "error": StopReason.ERROR,
}
"""How the OpenAI ``finish_reason`` values map onto claw's ``StopReason``."""


def stop_reason_from_wire(finish_reason: str) -> StopReason:
    """The ``StopReason`` for a ``finish_reason``; one nobody knows counts as the end of a turn."""
    return FINISH_REASONS.get(finish_reason, StopReason.END_TURN)
# --8<-- [end:finish-reasons]


def chunk_events(chunk: dict[str, Any]) -> list[StreamEvent]:
    """The events in one OpenAI-style ``chat.completion.chunk``, in the order they happened.

    A chunk may carry reasoning, text, fragments of tool calls, a finish reason and usage, in
    any combination; the last chunk of an OpenRouter stream often has usage and no choices at
    all. Reasoning is read from ``reasoning_content`` (DeepSeek, Qwen, vLLM) or, failing that,
    ``reasoning`` (OpenRouter). An ``error`` object in the chunk (an error in the middle of a
    stream) raises ``StreamError``.
    """
    # region ch05a: an error object raises; a choice may hold reasoning, text, calls and a finish
    # more: chunk.get(key) or () copes with null; a call without "index" uses its list position
    error = chunk.get("error")
    if error:
        message = error.get("message", error) if isinstance(error, dict) else error
        raise StreamError(f"the server reported an error in the middle of the stream: {message}")
    events: list[StreamEvent] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        # Servers that send both names send the same text twice: take one, never both.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            events.append(ReasoningDelta(reasoning))
        text = delta.get("content")
        if text:
            events.append(TextDelta(text))
        for position, call in enumerate(delta.get("tool_calls") or ()):
            index = call.get("index", position)
            function = call.get("function") or {}
            call_id, name = call.get("id") or "", function.get("name") or ""
            if call_id or name:
                events.append(ToolCallStart(index, call_id, name))
            arguments = function.get("arguments")
            if arguments:
                events.append(ToolCallDelta(index, arguments))
        finish = choice.get("finish_reason")
        if finish:
            events.append(Done(stop_reason_from_wire(finish)))
    usage = chunk.get("usage")
    if usage:
        events.append(UsageUpdate(usage_from_wire(usage)))
    return events
    # endregion


@dataclass
class PartialToolCall:
    """A tool call while its pieces are still arriving."""

    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


def parse_arguments(call: PartialToolCall) -> dict[str, Any]:
    """The finished JSON arguments of ``call`` as a dict; empty text means no arguments."""
    # region ch05a: join the fragments and parse them once; only an object (or nothing) will do
    # more: catch json.JSONDecodeError; every error names call.id and quotes the text it got
    text = "".join(call.arguments).strip()
    if not text:
        return {}
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedResponseError(
            f"the arguments of tool call {call.id!r} ({call.name}) are not valid JSON "
            f"({error.msg} at position {error.pos}): {text[:200]!r}"
        ) from None
    if not isinstance(arguments, dict):
        raise MalformedResponseError(
            f"the arguments of tool call {call.id!r} ({call.name}) must be a JSON object, "
            f"not {type(arguments).__name__}: {text[:200]!r}"
        )
    return arguments
    # endregion


# --8<-- [start:accumulator-state]
class StreamAccumulator:
    """Adds up stream events into the finished ``AssistantTurn``.

    Text deltas are joined, and so, apart from them, are reasoning deltas. Tool calls are
    assembled from fragments by their ``index``, so
    parallel calls whose fragments interleave come out whole and in order. The last usage
    reported wins (providers report running totals, not increments), as does the stop reason.
    """

    def __init__(self) -> None:
        """Start with an empty turn."""
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[PartialToolCall] = []
        self._by_index: dict[int, PartialToolCall] = {}
        self.usage = TokenUsage()
        """The usage reported so far."""
        self.stop_reason: StopReason | None = None
        self.blocks: list[ProviderBlock] = []
        """Blocks kept verbatim for the provider (chapter 24's signed thinking)."""
        """Why the model stopped, once a ``Done`` event has arrived."""

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        """The reasoning received so far."""
        return "".join(self._reasoning)
    # --8<-- [end:accumulator-state]

    def add(self, event: StreamEvent) -> None:
        """Take one event into account."""
        # --8<-- [start:add-block]
        if isinstance(event, BlockDone):  # chapter 24: a provider's block, kept whole
            self.blocks.append(event.block)
            return
        # --8<-- [end:add-block]
        # region ch05a: one case per event type; pieces of tool calls are filed by their index
        # more: a start at an unused index, or with a different id, is a new PartialToolCall
        match event:
            case TextDelta(text=text):
                self._text.append(text)
            case ReasoningDelta(text=text):
                self._reasoning.append(text)
            case ToolCallStart(index=index, id=call_id, name=name):
                current = self._by_index.get(index)
                if current is None or (call_id and current.id and call_id != current.id):
                    # Some servers number every call 0; a new id still means a new call.
                    current = PartialToolCall(id=call_id, name=name)
                    self._calls.append(current)
                    self._by_index[index] = current
                else:
                    current.id = current.id or call_id
                    current.name = current.name or name
            case ToolCallDelta(index=index, arguments=fragment):
                current = self._by_index.get(index)
                if current is None:
                    raise MalformedResponseError(
                        f"arguments arrived for tool call {index}, which never started"
                    )
                current.arguments.append(fragment)
            case UsageUpdate(usage=usage):
                self.usage = usage
            case Done(stop_reason=stop_reason):
                self.stop_reason = stop_reason
        # endregion

    def turn(self, model: str | None = None) -> AssistantTurn:
        """The finished turn. Raises ``StreamError`` if no ``Done`` event arrived.

        A turn cut off by the token limit (``MAX_TOKENS``) keeps its text but drops its tool
        calls, whose arguments are almost certainly incomplete. Blocks kept for the provider
        (chapter 24) ride along in ``provider_blocks``.
        """
        # --8<-- [start:turn-blocks]
        if self.blocks:
            # Chapter 5a's assembly below knows nothing of them: run it without, then attach.
            blocks, self.blocks = self.blocks, []
            try:
                turn = self.turn(model)
            finally:
                self.blocks = blocks
            return turn.model_copy(update={"provider_blocks": tuple(blocks)})
        # --8<-- [end:turn-blocks]
        # region ch05a: no Done is an error; a cut-off turn runs no calls; calls mean TOOL_USE
        # more: parse_arguments per call in start order; id-less is f"call_{n}"; a seen id raises
        if self.stop_reason is None:
            raise StreamError("the stream ended before the model said why it stopped")
        stop_reason = self.stop_reason
        calls: list[ToolCall] = []
        if stop_reason is not StopReason.MAX_TOKENS:
            for number, partial in enumerate(self._calls):
                if not partial.name:
                    raise MalformedResponseError(f"tool call {number} has no name")
                arguments = parse_arguments(partial)
                call_id = partial.id or f"call_{number}"
                if any(call.id == call_id for call in calls):
                    raise MalformedResponseError(
                        f"two tool calls share the id {call_id!r}; a result could not say "
                        "which one it answers"
                    )
                calls.append(ToolCall(id=call_id, name=partial.name, arguments=arguments))
        if calls:
            stop_reason = StopReason.TOOL_USE
        elif stop_reason is StopReason.TOOL_USE:
            raise MalformedResponseError("the model stopped to use tools but sent no tool call")
        return AssistantTurn(
            text=self.text,
            tool_calls=tuple(calls),
            stop_reason=stop_reason,
            usage=self.usage,
            model=model,
            reasoning=self.reasoning,
        )
        # endregion


@runtime_checkable
class StreamProvider(Protocol):
    """A provider that can also stream a turn as it is generated."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """The whole turn at once."""
        ...

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """The turn as events, ending with ``Done`` (and possibly a last ``UsageUpdate``)."""
        ...


def turn_events(turn: AssistantTurn, chunk_size: int = 4) -> list[StreamEvent]:
    """The events a server might send for ``turn``: its text and arguments in small pieces.

    Reasoning comes first, then the text, then each tool call (a start, then its JSON
    arguments in fragments of ``chunk_size`` characters), then the stop reason, then the usage.
    """
    # region ch05a: what a server might send: reasoning, text, each call, stop reason and usage
    # more: slice the strings and json.dumps(arguments) with range(0, len(s), chunk_size)
    events: list[StreamEvent] = [
        ReasoningDelta(turn.reasoning[i : i + chunk_size])
        for i in range(0, len(turn.reasoning), chunk_size)
    ]
    events.extend(
        TextDelta(turn.text[i : i + chunk_size]) for i in range(0, len(turn.text), chunk_size)
    )
    for index, call in enumerate(turn.tool_calls):
        events.append(ToolCallStart(index, call.id, call.name))
        arguments = json.dumps(call.arguments)
        events.extend(
            ToolCallDelta(index, arguments[i : i + chunk_size])
            for i in range(0, len(arguments), chunk_size)
        )
    events.append(Done(turn.stop_reason))
    events.append(UsageUpdate(turn.usage))
    return events
    # endregion


# --8<-- [start:mock-stream-head]
class MockStreamProvider:
    """A ``StreamProvider`` that streams scripted turns and records every call.

    Each script entry is a turn (or a string, for a text-only turn), streamed in small
    pieces by ``turn_events``, or a list of events streamed exactly as given.
    """

    def __init__(
        self,
        script: Iterable[AssistantTurn | str | list[StreamEvent]] = (),
        *,
        chunk_size: int = 4,
    ) -> None:
        """Script the turns; ``chunk_size`` is how many characters each text piece carries."""
        self._script: deque[AssistantTurn | list[StreamEvent]] = deque(
            item if isinstance(item, list) else as_turn(item) for item in script
        )
        self.chunk_size = chunk_size
        self.calls: list[ProviderCall] = []
        """Every call received so far, oldest first."""

    def add(self, item: AssistantTurn | str | list[StreamEvent]) -> None:
        """Append one more turn (or list of events) to the script."""
        self._script.append(item if isinstance(item, list) else as_turn(item))
    # --8<-- [end:mock-stream-head]

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """Record the call, then yield the next scripted turn's events one by one."""
        # region ch05a: record the call first, then play the next script item as events
        # more: ProviderCall(...) as in chapter 1; MockProviderExhausted; turn_events(item, ...)
        self.calls.append(ProviderCall(messages=tuple(messages), tools=tuple(tools)))
        if not self._script:
            raise MockProviderExhausted(
                f"MockStreamProvider's script is used up: call {len(self.calls)} found no turn "
                "left; script more turns"
            )
        item = self._script.popleft()
        events = item if isinstance(item, list) else turn_events(item, self.chunk_size)
        for event in events:
            yield event
        # endregion

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Stream the next turn and return it assembled."""
        return await collect(self.stream(messages, tools))


async def collect(events: AsyncIterator[StreamEvent], model: str | None = None) -> AssistantTurn:
    """Consume a stream of events and return the finished turn."""
    accumulator = StreamAccumulator()
    async for event in events:
        accumulator.add(event)
    return accumulator.turn(model)
