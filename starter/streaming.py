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
from .todo import Todo
from .types import (
    AssistantTurn,
    Message,
    ProviderBlock,
    StopReason,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)


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
    raise Todo("ch05a", "a comment gives None; any other line is a field name, a colon and a value")


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

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Add bytes from the stream; return the events they complete, in order."""
        raise Todo(
            "ch05a",
            "decode the bytes, cut the text into complete lines, keep the unfinished rest",
        )

    def _line(self, line: str) -> ServerSentEvent | None:
        """Process one complete line; return an event when the line is the blank that ends one."""
        raise Todo(
            "ch05a",
            "a blank line ends the event if it has data; any other line sets one field",
        )

    def close(self) -> ServerSentEvent | None:
        """The stream has ended: the event it was in the middle of, if that has data.

        The SSE standard drops an event whose blank line never came; a caller that knows
        better (``data: [DONE]`` means the same with or without it) can look at it here.
        """
        if self._buffer:
            self._line("".join(self._buffer))
            self._buffer, self._buffered = [], 0
        return self._line("")


def usage_from_wire(usage: dict[str, Any]) -> TokenUsage:
    """Read an OpenAI-style ``usage`` object, including OpenRouter's ``cost`` in dollars."""
    raise Todo("ch05a", "OpenAI names for the token counts; the cost is money and may be missing")


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


def chunk_events(chunk: dict[str, Any]) -> list[StreamEvent]:
    """The events in one OpenAI-style ``chat.completion.chunk``, in the order they happened.

    A chunk may carry reasoning, text, fragments of tool calls, a finish reason and usage, in
    any combination; the last chunk of an OpenRouter stream often has usage and no choices at
    all. Reasoning is read from ``reasoning_content`` (DeepSeek, Qwen, vLLM) or, failing that,
    ``reasoning`` (OpenRouter). An ``error`` object in the chunk (an error in the middle of a
    stream) raises ``StreamError``.
    """
    raise Todo(
        "ch05a",
        "an error object raises; a choice may hold reasoning, text, calls and a finish",
    )


@dataclass
class PartialToolCall:
    """A tool call while its pieces are still arriving."""

    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


def parse_arguments(call: PartialToolCall) -> dict[str, Any]:
    """The finished JSON arguments of ``call`` as a dict; empty text means no arguments."""
    raise Todo(
        "ch05a",
        "join the fragments and parse them once; only an object (or nothing) will do",
    )


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

    def add(self, event: StreamEvent) -> None:
        """Take one event into account."""
        if isinstance(event, BlockDone):  # chapter 24: a provider's block, kept whole
            self.blocks.append(event.block)
            return
        raise Todo(
            "ch05a",
            "one case per event type; pieces of tool calls are filed by their index",
        )

    def turn(self, model: str | None = None) -> AssistantTurn:
        """The finished turn. Raises ``StreamError`` if no ``Done`` event arrived.

        A turn cut off by the token limit (``MAX_TOKENS``) keeps its text but drops its tool
        calls, whose arguments are almost certainly incomplete. Blocks kept for the provider
        (chapter 24) ride along in ``provider_blocks``.
        """
        if self.blocks:
            # Chapter 5a's assembly below knows nothing of them: run it without, then attach.
            blocks, self.blocks = self.blocks, []
            try:
                turn = self.turn(model)
            finally:
                self.blocks = blocks
            return turn.model_copy(update={"provider_blocks": tuple(blocks)})
        raise Todo(
            "ch05a",
            "no Done is an error; a cut-off turn runs no calls; calls mean TOOL_USE",
        )


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
    raise Todo(
        "ch05a",
        "what a server might send: reasoning, text, each call, stop reason and usage",
    )


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

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        """Record the call, then yield the next scripted turn's events one by one."""
        raise Todo("ch05a", "record the call first, then play the next script item as events")
        yield  # never reached; keeps this a generator

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
