"""Histories for chapter 18's tests: a Hypothesis strategy, the recorded sessions, and the rules
a compacted history must still keep."""

import json
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from history import assert_valid_history
from hypothesis import strategies as st

from claw.types import (
    AssistantMessage,
    DeveloperMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    load_messages,
)

SESSIONS = Path(__file__).parent / "data" / "context" / "sessions.json"
"""Three coding sessions with the prompt tokens a real tokenizer counted for each request
(``tests/data/context/make_sessions.py`` says how they were made)."""

PIECES = ["a", "b", " ", "\n", "é", "e\u0301", "👩\u200d💻", "\ud83d\ude00", "字", "x" * 7]
"""Pieces of text that are easy to cut wrongly: a combining accent, a ZWJ sequence, a
surrogate pair (two code points, as JSON with \\ud83d\\ude00 escapes decodes), wide characters."""

text = st.lists(st.sampled_from(PIECES), min_size=1, max_size=60).map("".join)


def recorded_sessions() -> list[dict[str, Any]]:
    """The recorded sessions, each with its ``messages`` loaded as claw messages."""
    sessions: list[dict[str, Any]] = json.loads(SESSIONS.read_text(encoding="utf-8"))["sessions"]
    for session in sessions:
        session["messages"] = load_messages(json.dumps(session["messages"]))
    return sessions


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """A valid history: instructions, a first task, then turns of talk and tool calls."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(content=draw(text)))
    messages += [DeveloperMessage(content=draw(text)) for _ in range(draw(st.integers(0, 2)))]
    messages.append(UserMessage(content=draw(text)))
    calls = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools", "developer"]))
        if kind == "user":
            messages.append(UserMessage(content=draw(text)))
        elif kind == "developer":
            messages.append(DeveloperMessage(content=draw(text)))
        elif kind == "assistant":
            messages.append(AssistantMessage(content=draw(text)))
        else:
            ids = [f"call_{calls + n}" for n in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            said = draw(st.one_of(st.just(""), text))
            tool_calls = [ToolCall(id=i, name="read", arguments={"path": draw(text)}) for i in ids]
            messages.append(AssistantMessage(content=said, tool_calls=tuple(tool_calls)))
            for call_id in ids:
                body = draw(text) * draw(st.sampled_from([1, 1, 5, 20]))
                messages.append(ToolResultMessage(tool_call_id=call_id, content=body))
    return messages


def whole(text: str) -> bool:
    """Whether ``text`` holds no half of a surrogate pair (strict UTF-16 reads it back)."""
    try:
        text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return False
    return True


def cut_between_characters(text: str, at: int) -> bool:
    """Whether cutting ``text`` at ``at`` leaves every character, accent and joined emoji whole."""
    if at in (0, len(text)):
        return True
    after, before = text[at], text[at - 1]
    return not (
        "\udc00" <= after <= "\udfff"
        or unicodedata.category(after).startswith("M")
        or "\u200d" in (after, before)
    )


def assert_valid_for_every_provider(messages: Sequence[Message]) -> None:
    """Each call answered right after it; instructions first; the talk opens with the user."""
    assert_valid_history(messages)
    talk = [m for m in messages if not isinstance(m, SystemMessage | DeveloperMessage)]
    assert talk and isinstance(talk[0], UserMessage), "the conversation must open with the user"
    first_talk = messages.index(talk[0])
    assert not any(isinstance(m, SystemMessage) for m in messages[first_talk:]), "late system"
    for message in messages:
        assert whole(message.text), f"half a surrogate pair in {message.text!r}"
