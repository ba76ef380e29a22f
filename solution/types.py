"""The vocabulary of claw: messages, turns, tool calls, tool definitions, usage and the protocols.

Everything here is data. A conversation is a list of ``Message`` values; a provider turns a
conversation into an ``AssistantTurn``; tools are described to the model by ``ToolDefinition`` and
called with ``ToolCall``. The models are pydantic v2 models, frozen, so a message in a history
cannot change behind your back, and validated, so an illegal state cannot be built.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    TypeAdapter,
    model_validator,
)
from pydantic_core import CoreSchema

# The tool-name rule shared by the OpenAI and Anthropic APIs.
TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"

JsonType = Literal["string", "integer", "number", "boolean", "array", "object"]


class _Frozen(BaseModel):
    """Base for claw's data: immutable, and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """The model's request to run one tool.

    ``id`` pairs the call with its result: the ``ToolResultMessage`` that answers this call
    carries the same id in ``tool_call_id``.
    """

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


def _require_unique_ids(calls: Sequence[ToolCall]) -> None:
    ids = [call.id for call in calls]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"tool call ids must be unique in a turn; repeated: {', '.join(repeated)}")


# --8<-- [start:messages]
# --8<-- [start:content]
class TextPart(_Frozen):
    """One piece of text in a message's content; never empty (providers refuse those)."""

    type: Literal["text"] = "text"
    text: str = Field(min_length=1)


ContentPart = TextPart
"""A part of a message's content. Only text so far; an image part will join it as a union
told apart by ``type``, the way the message classes are told apart by ``role``."""

Content = str | Annotated[tuple[ContentPart, ...], Field(min_length=1)]
"""What a message says: a plain string, or a non-empty list of parts."""


def content_text(content: Content) -> str:
    """The text of ``content``: the string itself, or its parts' text joined together."""
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content)
# --8<-- [end:content]


class CacheControl(_Frozen):
    """A prompt-caching breakpoint: the prompt may be cached up to the end of this content.

    A later request that starts with the same prefix reads it from the cache, at a fraction of
    the price and time. ``ttl`` asks for a longer life than the provider's default (five
    minutes at Anthropic); leave it out unless you need it.
    """

    type: Literal["ephemeral"] = "ephemeral"
    ttl: Literal["5m", "1h"] | None = None


class ProviderBlock(_Frozen):
    """A piece of a turn that only its provider understands, kept verbatim to be sent back.

    Anthropic's ``thinking`` blocks carry a ``signature`` that the API checks when the block
    comes back (chapter 24): claw keeps the whole block as ``data``, untouched, and only the
    provider named by ``provider`` ever reads it. Other providers leave it out.
    """

    provider: str = Field(min_length=1)
    """The provider that made the block and alone may receive it (``"anthropic"``)."""
    data: dict[str, Any]
    """The block exactly as the provider sent it."""


# --8<-- [start:message-base]
class Message(_Frozen):
    """Any message of a conversation: the base of the five message classes, and their union.

    As a type, ``Message`` validates to the one class its ``role`` names: ``list[Message]``
    holds ``SystemMessage``, ``UserMessage``... values, never a bare ``Message``, which cannot
    be built. The class methods build each kind: ``Message.user("hi")``.
    """

    role: str
    """Who speaks: ``"system"``, ``"developer"``, ``"user"``, ``"assistant"``, ``"tool"``."""
    content: Content

    @property
    def text(self) -> str:
        """The content as plain text, for code that does not care about parts."""
        return content_text(self.content)
    # --8<-- [end:message-base]

    # --8<-- [start:message-machinery]
    _union: ClassVar[Any] = None
    """The union of the five classes, set once they exist (see the end of this section)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Refuse ``Message(...)`` itself: a message is always one of the five kinds."""
        if cls is Message:
            raise TypeError(
                "Message stands for any of the five message classes and cannot be built itself; "
                "use Message.user(...), Message.system(...), ... or UserMessage(...)"
            )
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a sixth kind: every provider must be able to send every message."""
        super().__init_subclass__(**kwargs)
        if Message in cls.__bases__ and Message._union is not None:
            raise TypeError(f"{cls.__name__}: a conversation has exactly five kinds of message")

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        # Each class is validated as itself; Message alone stands for the union of the five,
        # told apart by role, once they all exist.
        union = cls.__dict__.get("_union")
        return handler(source if union is None else union)
    # --8<-- [end:message-machinery]

    # --8<-- [start:constructors]
    @classmethod
    def system(
        cls, content: Content, *, cache_control: CacheControl | None = None
    ) -> SystemMessage:
        """Instructions that frame the whole conversation."""
        return SystemMessage(content=content, cache_control=cache_control)

    @classmethod
    def developer(
        cls, content: Content, *, cache_control: CacheControl | None = None
    ) -> DeveloperMessage:
        """Instructions from the application: claw itself, a project's instruction file."""
        return DeveloperMessage(content=content, cache_control=cache_control)

    @classmethod
    def user(cls, content: Content) -> UserMessage:
        """What the person typed."""
        return UserMessage(content=content)

    @classmethod
    def assistant(
        cls,
        content: Content = "",
        *,
        tool_calls: Iterable[ToolCall] = (),
        reasoning_content: str = "",
        cache_control: CacheControl | None = None,
        provider_blocks: Iterable[ProviderBlock] = (),
    ) -> AssistantMessage:
        """What the model said, the tools it called, and how a reasoning model got there."""
        return AssistantMessage(
            content=content,
            tool_calls=tuple(tool_calls),
            reasoning_content=reasoning_content,
            cache_control=cache_control,
            provider_blocks=tuple(provider_blocks),
        )

    @classmethod
    def tool_result(cls, call_id: str, content: str) -> ToolResultMessage:
        """The output of the tool call ``call_id``."""
        return ToolResultMessage(tool_call_id=call_id, content=content)

    @classmethod
    def tool_error(cls, call_id: str, error: str) -> ToolResultMessage:
        """The tool call ``call_id`` failed; ``error`` tells the model why."""
        return ToolResultMessage(tool_call_id=call_id, content=error, is_error=True)
    # --8<-- [end:constructors]


def _breakpoint_needs_text(message: Message, cache_control: CacheControl | None) -> None:
    if cache_control is not None and not message.text:
        raise ValueError(
            "cache_control marks the end of the content to cache, so the content cannot be empty"
        )


# --8<-- [start:message-classes]
class SystemMessage(Message):
    """Instructions that frame the whole conversation."""

    role: Literal["system"] = "system"
    content: Content
    cache_control: CacheControl | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        _breakpoint_needs_text(self, self.cache_control)
        return self


class DeveloperMessage(Message):
    """What the application says: claw's own rules, a project's AGENTS.md."""

    role: Literal["developer"] = "developer"
    content: Content
    cache_control: CacheControl | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        _breakpoint_needs_text(self, self.cache_control)
        return self


class UserMessage(Message):
    """What the person typed."""

    role: Literal["user"] = "user"
    content: Content


class AssistantMessage(Message):
    """What the model said: text, tool calls, or both, and the reasoning that led there."""

    role: Literal["assistant"] = "assistant"
    content: Content = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning_content: str = ""
    """A reasoning model's thinking, apart from ``content``; empty if there was none."""
    cache_control: CacheControl | None = None
    provider_blocks: tuple[ProviderBlock, ...] = ()
    """Blocks kept verbatim for the provider that sent them (Anthropic's signed thinking)."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        _require_unique_ids(self.tool_calls)
        _breakpoint_needs_text(self, self.cache_control)
        return self


class ToolResultMessage(Message):
    """The result of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    tool_call_id: str = Field(min_length=1)
    content: str
    is_error: bool = False
# --8<-- [end:message-classes]


# --8<-- [start:message-union]
Message._union = Annotated[
    SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolResultMessage,
    Field(discriminator="role"),
]
Message.model_rebuild(force=True)
# --8<-- [end:message-union]
# --8<-- [end:messages]

# --8<-- [start:adapter]
MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""Validates and serialises whole conversations: ``MESSAGES.validate_json(text)``."""


def dump_messages(messages: Sequence[Message]) -> str:
    """Serialise a conversation to JSON text."""
    return MESSAGES.dump_json(list(messages)).decode()


def load_messages(text: str | bytes) -> list[Message]:
    """Parse JSON text made by ``dump_messages`` back into typed messages."""
    return MESSAGES.validate_json(text)
# --8<-- [end:adapter]


class StopReason(StrEnum):
    """Why the model stopped producing output."""

    END_TURN = "end_turn"
    """It finished its answer: the agent's turn is over."""
    TOOL_USE = "tool_use"
    """It wants one or more tools run; the loop runs them and calls the model again."""
    MAX_TOKENS = "max_tokens"
    """It hit the output-token limit; the answer is cut short."""
    CONTENT_FILTER = "content_filter"
    """A safety filter stopped it."""
    ERROR = "error"
    """The provider reported an error while generating."""


class TokenUsage(_Frozen):
    """How many tokens a call consumed and, when the provider says, what it cost.

    Usages add up with ``+``. ``cost`` is ``None`` when no provider reported a price; a sum
    with at least one reported cost adds up the reported ones.
    """

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    """Of ``input_tokens``, how many were read from the provider's prompt cache."""
    reasoning_tokens: int = Field(default=0, ge=0)
    """Of ``output_tokens``, how many the model spent reasoning before it answered."""
    cache_write_tokens: int = Field(default=0, ge=0)
    """Of ``input_tokens``, how many were written to the prompt cache (Anthropic bills them)."""
    cost: Decimal | None = Field(default=None, ge=0, description="US dollars, as reported")

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or Decimal(0)) + (other.cost or Decimal(0))
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost=cost,
        )


class AssistantTurn(_Frozen):
    """One complete answer from a provider.

    ``stop_reason`` is inferred when you leave it out: ``TOOL_USE`` if there are tool calls,
    ``END_TURN`` otherwise. A turn with tool calls always has ``TOOL_USE`` and a turn with
    ``TOOL_USE`` always has tool calls, so the loop can decide what to do from the stop
    reason alone.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = StopReason.END_TURN
    usage: TokenUsage = TokenUsage()
    model: str | None = None
    reasoning: str = ""
    """What a reasoning model thought before it answered; empty for other models."""
    provider_blocks: tuple[ProviderBlock, ...] = ()
    """Blocks the provider needs back verbatim on the next request (chapter 24)."""

    @model_validator(mode="before")
    @classmethod
    def _infer_stop_reason(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("stop_reason") is None:
            data = {**data}
            data["stop_reason"] = StopReason.TOOL_USE if data.get("tool_calls") else "end_turn"
        return data

    @model_validator(mode="after")
    def _stop_reason_matches_calls(self) -> Self:
        if self.tool_calls and self.stop_reason is not StopReason.TOOL_USE:
            raise ValueError(
                f"a turn with tool calls must stop with 'tool_use', not {self.stop_reason.value!r}"
            )
        if self.stop_reason is StopReason.TOOL_USE and not self.tool_calls:
            raise ValueError("a turn that stops with 'tool_use' needs at least one tool call")
        _require_unique_ids(self.tool_calls)
        return self

    def to_message(self) -> AssistantMessage:
        """The message that records this turn in the conversation history.

        The reasoning is kept: some providers need it back on the next request.
        """
        return Message.assistant(
            self.text,
            tool_calls=self.tool_calls,
            reasoning_content=self.reasoning,
            provider_blocks=self.provider_blocks,
        )


class ToolOutput(_Frozen):
    """What a tool returns: text for the model, and whether it describes an error.

    Tools report failures with ``ToolOutput.error(...)`` instead of raising, so the model reads
    what went wrong and can try again.
    """

    content: str
    is_error: bool = False

    @classmethod
    def ok(cls, content: str) -> ToolOutput:
        """A successful result."""
        return cls(content=content)

    @classmethod
    def error(cls, content: str) -> ToolOutput:
        """A failed result; ``content`` tells the model what went wrong."""
        return cls(content=content, is_error=True)

    def to_message(self, call: ToolCall) -> ToolResultMessage:
        """The message that answers ``call``."""
        if self.is_error:
            return Message.tool_error(call.id, self.content)
        return Message.tool_result(call.id, self.content)


def _empty_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "required": []}


def _strip_titles(schema: Any) -> Any:
    """Remove pydantic's auto-generated ``title`` keys, which only add noise for the model."""
    if isinstance(schema, dict):
        return {
            key: _strip_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    return schema


_PLAIN_SCHEMAS: dict[type[BaseModel], str] = {}


def plain_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema pydantic writes for ``model``, without its ``title`` keys; a fresh copy.

    Worked out once per model: a run asks for every tool's definition at each step. Kept as
    JSON text, which parses into a fresh copy five times faster than ``copy.deepcopy`` copies.
    """
    if model not in _PLAIN_SCHEMAS:
        _PLAIN_SCHEMAS[model] = json.dumps(_strip_titles(model.model_json_schema()))
    loaded: dict[str, Any] = json.loads(_PLAIN_SCHEMAS[model])
    return loaded


# --8<-- [start:definition-head]
class ToolDefinition(_Frozen):
    """How a tool is described to the model: a name, what it does, and its JSON Schema.

    Build one step by step; every step returns a new definition::

        ToolDefinition(name="read", description="Read a file.").param(
            "path", "string", "The file to read."
        )

    or from a pydantic model of the arguments with ``ToolDefinition.from_model``.
    """

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(min_length=1)
    parameters: dict[str, Any] = Field(default_factory=_empty_schema)
    # --8<-- [end:definition-head]

    # --8<-- [start:definition-param]
    def param(
        self, name: str, type: JsonType, description: str, *, required: bool = True
    ) -> ToolDefinition:
        """Add a parameter of a simple JSON type."""
        return self.param_raw(name, {"type": type, "description": description}, required=required)

    def param_raw(
        self, name: str, schema: dict[str, Any], *, required: bool = True
    ) -> ToolDefinition:
        """Add a parameter described by any JSON Schema (enums, arrays of objects, ...)."""
        parameters = copy.deepcopy(self.parameters)
        properties: dict[str, Any] = parameters.setdefault("properties", {})
        if name in properties:
            raise ValueError(f"tool {self.name!r} already has a parameter named {name!r}")
        properties[name] = copy.deepcopy(schema)
        if required:
            parameters.setdefault("required", []).append(name)
        return self.model_copy(update={"parameters": parameters})
    # --8<-- [end:definition-param]

    @classmethod
    def from_model(cls, name: str, description: str, arguments: type[BaseModel]) -> ToolDefinition:
        """Describe a tool whose arguments are the fields of a pydantic model."""
        schema = plain_schema(arguments)
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        return cls(name=name, description=description, parameters=schema)

    @property
    def required(self) -> tuple[str, ...]:
        """The names of the required parameters."""
        return tuple(self.parameters.get("required", ()))

    def to_json(self) -> str:
        """The definition as compact JSON, e.g. to measure how many tokens it costs."""
        return json.dumps(self.model_dump(), separators=(",", ":"))


# --8<-- [start:protocols]
@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a conversation with an ``AssistantTurn``."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Send the conversation and the available tools; return the model's next turn."""
        ...


@runtime_checkable
class Tool(Protocol):
    """Anything the model can call."""

    @property
    def definition(self) -> ToolDefinition:
        """How the tool is described to the model."""
        ...

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Run with the model's arguments. Report failures as ``ToolOutput.error``."""
        ...
# --8<-- [end:protocols]


class ToolSet:
    """The tools an agent can use, by name. Names are unique."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is an error."""
        name = tool.definition.name
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already in this tool set")
        self._tools[name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool with this name, or ``None``."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            available = ", ".join(self._tools) or "none"
            raise KeyError(f"no tool named {name!r}; available: {available}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order the tools were added."""
        return tuple(self._tools)

    def definitions(self) -> list[ToolDefinition]:
        """The definitions to send to the model, in the order the tools were added."""
        return [tool.definition for tool in self._tools.values()]
