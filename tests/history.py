"""The rule every provider holds a history to, for the tests of interrupted runs to share."""

from collections.abc import Sequence

from claw.types import AssistantMessage, Message, ToolResultMessage


def assert_valid_history(messages: Sequence[Message]) -> None:
    """What every provider demands: each tool call answered by one result, right after it."""
    messages = list(messages)
    index = 0
    while index < len(messages):
        message = messages[index]
        assert not isinstance(message, ToolResultMessage), f"message {index}: a result, no call"
        index += 1
        if isinstance(message, AssistantMessage) and message.tool_calls:
            wanted = [call.id for call in message.tool_calls]
            found = [
                getattr(m, "tool_call_id", None) for m in messages[index : index + len(wanted)]
            ]
            assert found == wanted, f"message {index - 1} calls {wanted}; the results are {found}"
            index += len(wanted)
