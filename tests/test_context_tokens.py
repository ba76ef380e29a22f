"""ch18 · Context management: counting a request's tokens without a tokenizer.

The provider's report for the last request is the anchor; only what was added since is
estimated, with a characters-per-token ratio calibrated per model. The oracle is a real
tokenizer: the recorded sessions carry the prompt tokens it counted for every request.
"""

import math
import statistics

import pytest
from context_histories import recorded_sessions

from claw.context import MESSAGE_FRAMING, TokenCounter, message_chars, request_chars
from claw.types import Message, ToolCall


def test_context_message_chars_counts_text_calls_and_framing() -> None:
    said = Message.user("héllo")
    assert message_chars(said) == MESSAGE_FRAMING + 5
    call = ToolCall(id="c1", name="read", arguments={"path": "ü.py"})
    asked = Message.assistant("ok", tool_calls=[call], reasoning_content="hmm")
    # text 2 + reasoning 3 + id 2 + name 4 + '{"path": "ü.py"}' 16, characters not bytes
    assert message_chars(asked) == MESSAGE_FRAMING + 2 + 3 + 2 + 4 + 16
    answered = Message.tool_result("c1", "x" * 10)
    assert message_chars(answered) == MESSAGE_FRAMING + 2 + 10
    assert request_chars([said, asked, answered]) == sum(
        message_chars(m) for m in (said, asked, answered)
    )


def test_context_the_report_is_the_anchor_and_only_new_messages_are_estimated() -> None:
    counter = TokenCounter()
    sent = [Message.system("You are claw."), Message.user("Fix the tests.")]
    assert counter.estimate(sent) == math.ceil(request_chars(sent) / 4)  # the default 4 per token
    counter.observe(sent, 1_000, "m")
    assert counter.estimate(sent, "m") == 1_000, "the report is exact for what it was for"
    assert counter.ratio("m") == pytest.approx(request_chars(sent) / 1_000)
    new = Message.assistant("x" * 300)
    expected = 1_000 + math.ceil(message_chars(new) / counter.ratio("m"))
    assert counter.estimate([*sent, new], "m") == expected
    counter.ratios["m"] = 2.0  # a ratio from other text: the anchor still counts as reported
    assert counter.estimate([*sent, new], "m") == 1_000 + math.ceil(message_chars(new) / 2)


def test_context_a_ratio_per_model_and_a_report_of_nothing_teaches_nothing() -> None:
    counter = TokenCounter(chars_per_token=4.0)
    sent = [Message.user("y" * 400)]
    counter.observe(sent, 200, "small-tokens")
    counter.observe(sent, 50, "big-tokens")
    assert counter.ratio("small-tokens") == pytest.approx(request_chars(sent) / 200)
    assert counter.ratio("big-tokens") == pytest.approx(request_chars(sent) / 50)
    assert counter.ratio("never-seen") == 4.0
    before = (counter.sent, counter.reported, dict(counter.ratios))
    counter.observe([Message.user("z")], 0, "big-tokens")  # a provider that reports no usage
    assert (counter.sent, counter.reported, dict(counter.ratios)) == before
    with pytest.raises(ValueError, match="chars_per_token must be positive"):
        TokenCounter(chars_per_token=0)


def test_context_a_history_changed_since_the_report_loses_its_anchor() -> None:
    counter = TokenCounter()
    sent = [Message.user("a" * 100), Message.assistant("b" * 100)]
    counter.observe(sent, 10_000)
    compacted = [sent[0], Message.user("summary")]
    assert counter.estimate(compacted) == math.ceil(request_chars(compacted) / counter.ratio())
    assert counter.estimate(sent[:1]) < 10_000, "a shorter history is not the reported one"


def test_context_estimate_error_on_recorded_sessions_is_small() -> None:
    anchored: list[float] = []
    plain: list[float] = []
    for session in recorded_sessions():
        counter = TokenCounter()
        messages = session["messages"]
        for request in session["requests"]:
            sent, truth = messages[: request["messages"]], request["prompt_tokens"]
            if counter.sent:
                anchored.append(abs(counter.estimate(sent, session["model"]) - truth) / truth)
            plain.append(abs(request_chars(sent) / 4 - truth) / truth)
            counter.observe(sent, truth, session["model"])
    assert len(anchored) >= 70
    assert statistics.median(anchored) <= 0.10
    assert statistics.median(anchored) < statistics.median(plain) / 4, (
        "anchoring on the report must beat dividing by four by far"
    )
