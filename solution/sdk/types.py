"""Chapter 29: the SDK's typed messages, and how each comes from a record of a run.

The messages are shaped like those of Anthropic's Claude Agent SDK (``claude_agent_sdk``):
the same class names and field names where they mean the same. Each is one record of
``claw -p --output-format stream-json`` (``printmode.write_run`` makes them for both), typed:
``message_from_record`` reads a record, ``record_of`` writes it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ClawError


class SdkError(ClawError):
    """A misuse of the SDK: a query while a reply is still coming, say."""


class BadOption(SdkError, ValueError):
    """An option that cannot work: raised when the options are made, before anything runs."""


# --8<-- [start:blocks]
@dataclass
class TextBlock:
    """Text the model wrote in one step."""

    text: str


@dataclass
class ToolUseBlock:
    """A tool call the model asked for: its id, the tool's name and the arguments."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    """What a tool call gave back, as the model sees it."""

    tool_use_id: str
    content: str
    is_error: bool
    name: str = ""
    """The tool's name (claw's: the record has it, and a caller need not look it up)."""


ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock
# --8<-- [end:blocks]


# --8<-- [start:messages]
@dataclass
class SystemMessage:
    """``subtype`` ``"init"``: the run begins; ``data``: model, cwd, tools, mode, session."""

    subtype: str
    data: dict[str, Any]


@dataclass
class AssistantMessage:
    """One step's text, or one tool call the model asked for, in ``content``."""

    content: list[ContentBlock]
    model: str
    step: int = 0
    """The step (model call) it belongs to, counted from 1."""


@dataclass
class UserMessage:
    """A tool's result going back to the model, in ``content``."""

    content: list[ContentBlock]
    step: int = 0


@dataclass
class UsageMessage:
    """The tokens one step used (claw's: Claude Code puts them on each assistant message)."""

    step: int
    usage: dict[str, int]


@dataclass
class StreamEvent:
    """A piece of text as it streams (only with ``include_partial_messages``)."""

    event: dict[str, Any]


@dataclass
class ResultMessage:
    """The last message of a reply: how the run ended, what it said, cost and usage."""

    subtype: str
    duration_ms: int
    is_error: bool
    num_turns: int
    session_id: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    permission_denials: list[Any] = field(default_factory=list)
    finish_reason: str = ""
    """claw's ``Finish``: ``done``, ``max_steps``, ``cancelled``, ``error``..."""


Message = (
    SystemMessage | AssistantMessage | UserMessage | UsageMessage | StreamEvent | ResultMessage
)
# --8<-- [end:messages]


def message_from_record(record: dict[str, Any], model: str) -> Message:
    """The typed message for one ``stream-json`` record of a run by ``model``.

    ``system`` is a ``SystemMessage`` (the rest of the record is its ``data``); ``text`` a
    ``StreamEvent``; ``assistant`` and ``tool_use`` an ``AssistantMessage`` with one
    ``TextBlock`` or ``ToolUseBlock``; ``tool_result`` a ``UserMessage`` with one
    ``ToolResultBlock``; ``usage`` a ``UsageMessage``; ``result`` a ``ResultMessage`` of
    the record's fields. Any other type is ``SdkError`` naming it.
    """
    # region ch29: one typed message per record type; anything else is an SdkError
    # more: fields = {k: v for k, v in record.items() if k != "type"}; match record["type"]
    fields = {key: value for key, value in record.items() if key != "type"}
    match record.get("type"):
        case "system":
            return SystemMessage(fields.pop("subtype"), fields)
        case "text":
            return StreamEvent(record)
        case "assistant":
            return AssistantMessage([TextBlock(record["text"])], model, record["step"])
        case "tool_use":
            block = ToolUseBlock(record["id"], record["name"], record["input"])
            return AssistantMessage([block], model, record["step"])
        case "tool_result":
            result = ToolResultBlock(
                record["tool_use_id"], record["content"], record["is_error"], record["name"]
            )
            return UserMessage([result], record["step"])
        case "usage":
            return UsageMessage(record["step"], record["usage"])
        case "result":
            return ResultMessage(**fields)
    raise SdkError(f"a record of an unknown type: {record.get('type')!r}")
    # endregion


def record_of(message: Message) -> dict[str, Any]:
    """The ``stream-json`` record ``message`` was made from (``message_from_record`` undone)."""
    match message:
        case SystemMessage(subtype=subtype, data=data):
            return {"type": "system", "subtype": subtype, **data}
        case StreamEvent(event=event):
            return dict(event)
        case AssistantMessage(content=[TextBlock(text=text)], step=step):
            return {"type": "assistant", "step": step, "text": text}
        case AssistantMessage(content=[ToolUseBlock(id=id, name=name, input=arguments)]):
            return {"type": "tool_use", "step": message.step, "id": id, "name": name,
                    "input": arguments}  # fmt: skip
        case UserMessage(content=[ToolResultBlock() as block], step=step):
            return {
                "type": "tool_result",
                "step": step,
                "tool_use_id": block.tool_use_id,
                "name": block.name,
                "content": block.content,
                "is_error": block.is_error,
            }
        case UsageMessage(step=step, usage=usage):
            return {"type": "usage", "step": step, "usage": usage}
        case ResultMessage():
            return {"type": "result", **asdict(message)}
    raise SdkError(f"no record for {message!r}")
