"""The agent loop: ask the model, run the tools it asks for, hand back the results, repeat.

``single_turn`` is one step: one provider call (the model's turn) and, if the model asked for
tools, the calls it asked for. ``SimpleAgent`` repeats steps until the model answers without
asking for a tool, or its limit of steps is reached. ``StreamingAgent`` runs the same loop over
a streaming provider and yields every event as it happens, so a terminal can show text as it
is typed.

Nothing a tool does can end the loop: an unknown tool, arguments that do not fit the tool's
schema and a tool that raises all become error results the model reads and can react to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .streaming import StreamAccumulator, StreamEvent, StreamProvider
from .types import (
    AssistantTurn,
    Message,
    Provider,
    StopReason,
    SystemMessage,
    TokenUsage,
    Tool,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)

DEFAULT_MAX_STEPS = 25

# --8<-- [start:json-types]
# Python types that satisfy each JSON Schema type. bool is a subclass of int, so it is
# excluded from "integer" and "number" explicitly in ``check_arguments``.
JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}
# --8<-- [end:json-types]


def check_arguments(definition: ToolDefinition, arguments: dict[str, Any]) -> str | None:
    """Check ``arguments`` against the tool's schema; say what is wrong, or return ``None``.

    Required arguments must be present, and arguments of a simple JSON type must have it.
    The message is written for the model, so it can correct the call.
    """
    # region ch03: name the missing required arguments, else the first argument of a wrong type
    # more: definition.required, the "type" of each property, JSON_TYPES; a bool is no number
    missing = [name for name in definition.required if name not in arguments]
    if missing:
        return f"missing required argument(s) for {definition.name}: {', '.join(missing)}"
    properties: dict[str, Any] = definition.parameters.get("properties", {})
    for name, value in arguments.items():
        expected = properties.get(name, {}).get("type")
        if not isinstance(expected, str) or expected not in JSON_TYPES:
            continue
        wrong = not isinstance(value, JSON_TYPES[expected]) or (
            isinstance(value, bool) and expected in ("integer", "number")
        )
        if wrong:
            return (
                f"argument {name!r} of {definition.name} must be a JSON {expected}, "
                f"not {type(value).__name__} {value!r}"
            )
    return None
    # endregion


async def run_tool(tools: ToolSet, call: ToolCall) -> ToolOutput:
    """Run the tool ``call`` names, and always come back with a result for the model.

    An unknown tool, arguments that do not fit, and an exception from the tool all become
    error results. ``NotImplementedError`` is the one exception let through: it means code is
    missing (a stub), which is a bug to fix, not something the model can work around.
    """
    # region ch03: find the tool, check the arguments, run it: every failure becomes a result
    # more: tools.get, tools.names; in try/except, re-raise NotImplementedError before Exception
    tool = tools.get(call.name)
    if tool is None:
        available = ", ".join(tools.names) or "none"
        return ToolOutput.error(f"unknown tool {call.name!r}; the tools are: {available}")
    problem = check_arguments(tool.definition, call.arguments)
    if problem is not None:
        return ToolOutput.error(problem)
    try:
        output = await tool.run(call.arguments)
    except NotImplementedError:
        raise
    except Exception as error:
        return ToolOutput.error(f"{call.name} failed: {type(error).__name__}: {error}")
    if not isinstance(output, ToolOutput):
        return ToolOutput.error(
            f"{call.name} returned {type(output).__name__}, not a ToolOutput (a bug in the tool)"
        )
    return output
    # endregion


@dataclass(frozen=True)
class Step:
    """One step of the loop: the model's turn and the results of the tools it called."""

    turn: AssistantTurn
    results: tuple[ToolResultMessage, ...] = ()

    @property
    def messages(self) -> list[Message]:
        """What this step adds to the history: the assistant message, then one result per call."""
        return [self.turn.to_message(), *self.results]


async def run_tools(tools: ToolSet, calls: Sequence[ToolCall]) -> tuple[ToolResultMessage, ...]:
    """Run ``calls`` one after another, in the order the model made them; one result each."""
    # region ch03: one result message per call, in the order the model made the calls
    # more: await run_tool inside a comprehension; ToolOutput.to_message(call) copies the id
    return tuple([(await run_tool(tools, call)).to_message(call) for call in calls])
    # endregion


async def single_turn(provider: Provider, messages: Sequence[Message], tools: ToolSet) -> Step:
    """Ask the model once; if it asks for tools, run them.

    ``messages`` is not changed: ``step.messages`` is what to append to the history.
    """
    # region ch03: ask the model once, showing it the tools; run the tools it asks for
    # more: give complete a copy of the list and tools.definitions(); no calls, no results
    turn = await provider.complete(list(messages), tools.definitions())
    if not turn.tool_calls:
        return Step(turn)
    return Step(turn, await run_tools(tools, turn.tool_calls))
    # endregion


# --8<-- [start:finish]
class Finish(StrEnum):
    """Why an agent run ended."""

    DONE = "done"
    """The model answered without asking for a tool."""
    MAX_STEPS = "max_steps"
    """The run made its last allowed step while the model still wanted tools."""
    MAX_TOKENS = "max_tokens"
    """The model's answer was cut off by the output-token limit."""
    CONTENT_FILTER = "content_filter"
    """A safety filter stopped the model."""
    ERROR = "error"
    """The provider reported an error instead of an answer."""
    STUCK = "stuck"
    """The model made the same failing tool call (same name, same arguments) too often in a row."""
    HISTORY_LIMIT = "history_limit"
    """The history grew past its size limit; going on would overflow the model's context."""
    CANCELLED = "cancelled"
    """Someone stopped the run from outside (Ctrl-C, ``Agent.cancel()``, a cancelled task)."""
    PERMISSION_DENIALS = "permission_denials"
    """Calls were refused by the permission rules and the run was ended (chapter 13)."""
    PLAN_PENDING = "plan_pending"
    """The model finished a plan that waits for the user's approval (chapter 16)."""
    HOOK_STOPPED = "hook_stopped"
    """A hook answered ``"continue": false`` (chapter 15): the run ends after the step."""
    BUDGET = "budget"
    """The next call would take the session past its cost budget (chapter 17)."""

    @classmethod
    def _missing_(cls, value: object) -> Finish | None:
        """The spellings before the glossary (December 2026): transcripts written then load."""
        return {"max_turns": cls.MAX_STEPS, "transcript_limit": cls.HISTORY_LIMIT}.get(str(value))

    @classmethod
    def after(cls, stop_reason: StopReason) -> Finish:
        """How a run ends when the model stops for ``stop_reason`` without calling tools."""
        return {
            StopReason.MAX_TOKENS: cls.MAX_TOKENS,
            StopReason.CONTENT_FILTER: cls.CONTENT_FILTER,
            StopReason.ERROR: cls.ERROR,
        }.get(stop_reason, cls.DONE)


@dataclass(frozen=True)
class AgentResult:
    """What one ``run`` produced."""

    text: str
    """The model's last text: its answer."""
    finish: Finish
    steps: int
    """How many steps ran: how many times the provider was called."""
    usage: TokenUsage
    """The tokens (and cost, when known) of all of this run's steps together."""
# --8<-- [end:finish]


class AgentBase:
    """What every agent keeps: its tools, its history and its budget of steps."""

    def __init__(
        self,
        tools: ToolSet | Iterable[Tool] = (),
        *,
        system: str | None = None,
        context: Sequence[Message] = (),
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        """Hold ``tools``; ``system``, if given, starts the history, and ``context`` follows it.

        ``context`` is for messages every run should see, such as chapter 8's project
        instructions.
        """
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {max_steps}")
        self.tools = tools if isinstance(tools, ToolSet) else ToolSet(tools)
        self.max_steps = max_steps
        self.history: list[Message] = [SystemMessage(content=system)] if system else []
        """Every message so far, oldest first."""
        self.history += context


# --8<-- [start:simple-agent-init]
class SimpleAgent(AgentBase):
    """An agent that loops until the model stops asking for tools.

    The history lives on the agent, so a second ``run`` continues the same conversation.
    """

    def __init__(
        self,
        provider: Provider,
        tools: ToolSet | Iterable[Tool] = (),
        *,
        system: str | None = None,
        context: Sequence[Message] = (),
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        """An agent that asks ``provider`` and can use ``tools``."""
        super().__init__(tools, system=system, context=context, max_steps=max_steps)
        self.provider = provider
    # --8<-- [end:simple-agent-init]

    async def run(self, prompt: str) -> AgentResult:
        """Add ``prompt`` to the conversation and loop until the model is done."""
        # region ch03: add the prompt, then run steps until no tool is asked for or steps run out
        # more: history.extend(step.messages); usage + usage; count steps from 1; Finish.after
        self.history.append(UserMessage(content=prompt))
        usage = TokenUsage()
        turn = AssistantTurn()
        for steps in range(1, self.max_steps + 1):
            step = await single_turn(self.provider, self.history, self.tools)
            self.history.extend(step.messages)
            turn, usage = step.turn, usage + step.turn.usage
            if not turn.tool_calls:
                return AgentResult(turn.text, Finish.after(turn.stop_reason), steps, usage)
        return AgentResult(turn.text, Finish.MAX_STEPS, self.max_steps, usage)
        # endregion


# --8<-- [start:agent-events]
@dataclass(frozen=True)
class ToolStarted:
    """The agent is about to run this tool call."""

    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    """A tool call finished with this output."""

    call: ToolCall
    output: ToolOutput


@dataclass(frozen=True)
class TurnFinished:
    """The model's turn is complete (its tools have not run yet)."""

    turn: AssistantTurn


@dataclass(frozen=True)
class AgentFinished:
    """The run is over."""

    result: AgentResult


AgentEvent = StreamEvent | TurnFinished | ToolStarted | ToolFinished | AgentFinished
"""Everything a ``StreamingAgent`` reports while it runs, in the order it happens."""
# --8<-- [end:agent-events]


# --8<-- [start:cancelled]
CANCELLED = ToolOutput.error(
    "cancelled: the run was interrupted before this tool call finished; it may not have run, "
    "or run only in part"
)
"""The result a tool call has in the history until its tool has run.

Every provider rejects a history in which an assistant's tool call has no result, so a run
that is interrupted (the consumer stops iterating, a tool or a stub raises, the task is
cancelled) must not leave one behind.
"""
# --8<-- [end:cancelled]


# --8<-- [start:streaming-agent-head]
class StreamingAgent(AgentBase):
    """The same loop over a streaming provider, reporting each event as it happens.

    ``run`` is an async generator: the model's text arrives piece by piece as the server
    sends it, then the finished turn, then each tool's start and result, then the next turn,
    and last an ``AgentFinished`` with the result. The consumer may stop at any event, and
    the history stays one every provider accepts: each tool call in it has a result.
    """

    def __init__(
        self,
        provider: StreamProvider,
        tools: ToolSet | Iterable[Tool] = (),
        *,
        system: str | None = None,
        context: Sequence[Message] = (),
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        """An agent that streams from ``provider`` and can use ``tools``."""
        super().__init__(tools, system=system, context=context, max_steps=max_steps)
        self.provider = provider
    # --8<-- [end:streaming-agent-head]

    async def run(self, prompt: str) -> AsyncIterator[AgentEvent]:
        """Add ``prompt`` to the conversation; yield events until the model is done."""
        # region ch05b: chapter 3's loop, but each stream event is passed on the moment it arrives
        # more: a fresh StreamAccumulator per turn; yield inside the async for; CANCELLED first
        self.history.append(UserMessage(content=prompt))
        usage = TokenUsage()
        turn = AssistantTurn()
        for steps in range(1, self.max_steps + 1):
            accumulator = StreamAccumulator()
            async for event in self.provider.stream(list(self.history), self.tools.definitions()):
                accumulator.add(event)
                yield event
            turn = accumulator.turn()
            usage += turn.usage
            # The turn and a result for each of its calls enter the history together, each
            # result CANCELLED until its tool has run: wherever the run stops, none is missing.
            first = len(self.history) + 1
            self.history += [turn.to_message(), *(CANCELLED.to_message(c) for c in turn.tool_calls)]
            yield TurnFinished(turn)
            if not turn.tool_calls:
                yield AgentFinished(
                    AgentResult(turn.text, Finish.after(turn.stop_reason), steps, usage)
                )
                return
            for index, call in enumerate(turn.tool_calls, start=first):
                yield ToolStarted(call)
                output = await run_tool(self.tools, call)
                self.history[index] = output.to_message(call)
                yield ToolFinished(call, output)
        yield AgentFinished(AgentResult(turn.text, Finish.MAX_STEPS, self.max_steps, usage))
        # endregion
