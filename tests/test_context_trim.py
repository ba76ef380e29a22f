"""ch18 · Context management: trimming large tool results, the cheap stage.

A trimmed result keeps its head and tail, says how much was cut from the middle, and never
cuts inside a character: not between the halves of a surrogate pair, not before a combining
accent, not next to the joiner of an emoji sequence.
"""

from context_histories import cut_between_characters, text, whole
from hypothesis import given
from hypothesis import strategies as st

from claw.context import safe_cut, trim_note, trim_text, trim_tool_results
from claw.types import Message, ToolCall, ToolResultMessage


def test_context_trim_keeps_head_and_tail_and_says_what_was_cut() -> None:
    lines = [f"line {n}" for n in range(1, 1001)]
    original = "\n".join(lines)
    trimmed = trim_text(original, head=60, tail=30)
    assert trimmed.startswith("line 1\nline 2\n")
    assert trimmed.endswith("line 999\nline 1000")
    head, rest = trimmed.split("\n[...", 1)
    note, tail = rest.split("...]\n", 1)
    assert original.startswith(head) and original.endswith(tail)
    cut = original[len(head) : len(original) - len(tail)]
    assert f"{len(cut):,} characters" in note
    assert f"({cut.count(chr(10)):,} lines) cut from the middle of this tool result" in note
    assert "run the tool again" in note
    assert len(trimmed) < len(original)
    assert trim_text("short", head=60, tail=30) == "short"
    almost = "x" * 100  # over head + tail, but the note is longer than what it would save
    assert trim_text(almost, head=60, tail=30) == almost
    # a cut of exactly the note's length and its two newlines: no shorter, so unchanged
    size = next(n for n in range(1, 1000) if n == len(trim_note(n, 0)) + 2)
    even = "x" * (10 + size + 10)
    assert trim_text(even, head=10, tail=10) == even


def test_context_trim_never_cuts_inside_a_character() -> None:
    # Each of these would be broken by a cut at the naive position 3 or len - 3.
    for tricky in ("ab\ud83d\ude00" * 200, "aae\u0301" * 200, "a👩\u200d💻" * 200):
        trimmed = trim_text(tricky, head=3, tail=3)
        assert trimmed != tricky
        head = trimmed.split("\n[...", 1)[0]
        tail = trimmed.rsplit("...]\n", 1)[1]
        assert whole(head) and whole(tail), (head, tail)
        assert cut_between_characters(tricky, len(head))
        assert cut_between_characters(tricky, len(tricky) - len(tail))
    assert safe_cut("ab\ud83d\ude00", 3) == 2, "never between the halves of a surrogate pair"
    assert safe_cut("ae\u0301", 2) == 1, "never between a letter and its accent"
    assert safe_cut("👩\u200d💻", 1) == 0 and safe_cut("👩\u200d💻", 2) == 0
    assert safe_cut("a\ud83d\udc00", 2) == 1, "\\udc00 is a low surrogate"
    assert safe_cut("a\udbff\udfff", 2) == 1, "and so is \\udfff"
    assert (safe_cut("abc", -5), safe_cut("abc", 0), safe_cut("abc", 9)) == (0, 0, 3), "clamped"
    assert safe_cut("\u0301ab", 0) == 0, "the start of the text is always a place to cut"


@given(text, st.integers(0, 40), st.integers(0, 40))
def test_context_trim_property_cuts_only_between_characters_and_never_grows(
    original: str, head: int, tail: int
) -> None:
    original = original * 5
    trimmed = trim_text(original, head, tail)
    assert len(trimmed) <= len(original)
    assert whole(trimmed)
    if trimmed != original:
        kept_head = trimmed.split("\n[...", 1)[0]
        kept_tail = trimmed.rsplit("...]\n", 1)[1]
        assert original.startswith(kept_head) and original.endswith(kept_tail)
        assert len(kept_head) <= head and len(kept_tail) >= tail
        assert cut_between_characters(original, len(kept_head))
        assert cut_between_characters(original, len(original) - len(kept_tail))


def test_context_trim_tool_results_only_before_the_kept_turns() -> None:
    big = "z" * 5_000
    messages = [
        Message.user("task"),
        Message.assistant(tool_calls=[_call("c1")]),
        Message.tool_result("c1", big),
        Message.assistant(tool_calls=[_call("c2")]),
        Message.tool_error("c2", big),
        Message.user("z" * 5_000),
    ]
    trimmed, count = trim_tool_results(messages, before=3, head=100, tail=100)
    assert count == 1
    first = trimmed[2]
    assert isinstance(first, ToolResultMessage) and first.tool_call_id == "c1"
    assert len(first.content) < 400 and "cut from the middle" in first.content
    assert trimmed[4] is messages[4], "a result in the kept turns stays word for word"
    assert trimmed[5] is messages[5], "only tool results are trimmed, never what the user said"
    assert messages[2].content == big, "the input list is not changed"
    again, _ = trim_tool_results(messages, before=6, head=100, tail=100)
    again_error = again[4]
    assert isinstance(again_error, ToolResultMessage) and again_error.is_error
    kept = [again[i] is messages[i] for i in (0, 1, 3, 5)]
    assert kept == [True] * 4, "what the user and the model said is never trimmed"


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", arguments={"command": "pytest"})
