"""A provider that replays a script: the model you can test against without a network.

``MockProvider`` hands out scripted ``AssistantTurn`` values one at a time, first in, first
out, and writes down every call it receives, so a test can check exactly what the agent sent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .errors import ProviderError
from .types import AssistantTurn, Message, ToolDefinition


class MockProviderExhausted(ProviderError):
    """The mock was called more often than its script has turns."""


@dataclass(frozen=True)
class ProviderCall:
    """One call received by a ``MockProvider``: what the agent sent, as it was at that moment."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the tools offered in this call."""
        return tuple(tool.name for tool in self.tools)


def as_turn(turn: AssistantTurn | str) -> AssistantTurn:
    """Accept a plain string as shorthand for a text-only turn that ends the conversation."""
    if isinstance(turn, str):
        return AssistantTurn(text=turn)
    return turn


class MockProvider:
    """A ``Provider`` that returns scripted turns in order and records every call.

    >>> provider = MockProvider(["Hello!"])
    """

    # --8<-- [start:mock-init]
    calls: list[ProviderCall]
    """Every call received so far, oldest first."""

    def __init__(self, script: Iterable[AssistantTurn | str] = ()) -> None:
        """Start with the turns of ``script``; strings become text-only turns."""
        # region ch01: keep your own first-in, first-out copy of the script, and an empty call log
        # more: deque() takes any iterable, a generator over as_turn(...) too; calls: a fresh list
        self._script: deque[AssistantTurn] = deque(as_turn(turn) for turn in script)
        self.calls = []
        # endregion
    # --8<-- [end:mock-init]

    def add(self, turn: AssistantTurn | str) -> None:
        """Append one more turn to the end of the script."""
        # region ch01: the new turn waits behind every turn already scripted; a string is allowed
        # more: as_turn turns a string into an AssistantTurn; deque.append adds at the back
        self._script.append(as_turn(turn))
        # endregion

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been handed out yet."""
        # region ch01: how many turns are still waiting to be handed out?
        # more: len() works on a deque
        return len(self._script)
        # endregion

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        """Record the call, then return the next scripted turn.

        Raises ``MockProviderExhausted`` (a ``ProviderError``) when the script is used up.
        """
        # region ch01: write the call down before anything can fail, then hand out the oldest turn
        # more: log ProviderCall(tuple(...), tuple(...)); then popleft(), or MockProviderExhausted
        self.calls.append(ProviderCall(messages=tuple(messages), tools=tuple(tools)))
        if not self._script:
            raise MockProviderExhausted(
                f"MockProvider's script is used up: call {len(self.calls)} found no turn left; "
                "script more turns with MockProvider([...]) or provider.add(...)"
            )
        return self._script.popleft()
        # endregion
