"""ch18 · Context management: counting a request's tokens without a tokenizer.

The provider's report for the last request is the anchor; only what was added since is
estimated, with a characters-per-token ratio calibrated per model. The oracle is a real
tokenizer: the recorded sessions carry the prompt tokens it counted for every request.
"""

import math
import statistics

import pytest
from context_histories import recorded_sessions

from claw.context import (
    CALIBRATE_CHARS,
    MESSAGE_FRAMING,
    TokenCounter,
    message_chars,
    request_chars,
)
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
    assert counter.estimate(sent) == math.ceil(request_chars(sent) / 4), "4 a token at first"
    counter.observe(sent, 1_000, "m")
    assert counter.estimate(sent, "m") == 1_000, "the report is exact for what it was for"
    assert counter.ratio("m") == 4.0, "one report alone calibrates nothing"
    new = Message.assistant("x" * 300)
    assert counter.estimate([*sent, new], "m") == 1_000 + math.ceil(message_chars(new) / 4)
    counter.ratios["m"] = 2.0
    assert counter.estimate([*sent, new], "m") == 1_000 + math.ceil(message_chars(new) / 2)


def test_context_the_growth_between_reports_calibrates_each_models_ratio() -> None:
    counter = TokenCounter(chars_per_token=4.0)
    first = [Message.user("y" * 400)]
    read = Message.tool_result("c1", "z" * 984)  # 1,000 characters with the framing and id
    for model, tokens in (("small-tokens", 500), ("big-tokens", 125)):
        counter.observe(first, 300, model)
        counter.observe(
            [*first, Message.assistant(tool_calls=[_call()]), read], 300 + tokens, model
        )
    grown = request_chars([Message.assistant(tool_calls=[_call()]), read])
    assert counter.ratio("small-tokens") == pytest.approx(grown / 500)
    assert counter.ratio("big-tokens") == pytest.approx(grown / 125)
    assert counter.ratio("never-seen") == 4.0
    before = (counter.sent, counter.reported, dict(counter.ratios))
    counter.observe([*counter.sent, Message.user("z")], 0, "big-tokens")  # no usage reported
    assert (counter.sent, counter.reported, dict(counter.ratios)) == before
    counter.observe([*counter.sent, Message.user("ok")], counter.reported + 5, "big-tokens")
    assert counter.ratios == before[2], "a few characters more are too few to calibrate on"
    with pytest.raises(ValueError, match="chars_per_token must be positive"):
        TokenCounter(chars_per_token=0)


def test_context_the_edges_of_a_report_and_of_calibration() -> None:
    counter = TokenCounter()
    first = [Message.user("a")]
    counter.observe(first, 1)
    assert counter.estimate(first) == 1, "a report of one token is a report"
    # exactly CALIBRATE_CHARS new characters, and a report one token bigger: that calibrates
    grown = [*first, Message.user("b" * (CALIBRATE_CHARS - MESSAGE_FRAMING))]
    counter.observe(grown, 2)
    assert counter.ratio() == CALIBRATE_CHARS / 1, "no model named: the ratio of the key \"\""
    assert counter.ratio("other") == 4.0
    more = [*grown, Message.user("c" * 300)]
    counter.observe(more, 2)  # the report did not grow: nothing to calibrate on
    assert counter.ratio() == CALIBRATE_CHARS
    assert counter.estimate(more) == 2, "but it is the new anchor"


def test_context_a_history_changed_since_the_report_loses_its_anchor() -> None:
    counter = TokenCounter()
    sent = [Message.user("a" * 100), Message.assistant("b" * 100)]
    counter.observe(sent, 10_000)
    compacted = [sent[0], Message.user("summary")]
    assert counter.estimate(compacted) == math.ceil(request_chars(compacted) / counter.ratio())
    assert counter.estimate(sent[:1]) < 10_000, "a shorter history is not the reported one"
    copy = [Message.user("a" * 100), Message.assistant("b" * 100)]
    assert counter.estimate(copy) == 10_000, "equal messages, not only the same objects"


def _call() -> ToolCall:
    return ToolCall(id="c1", name="read", arguments={"path": "a.py"})


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
    assert max(anchored) <= 0.25, "calibrating on growth keeps even the worst estimate close"
    assert statistics.median(anchored) < statistics.median(plain) / 4, (
        "anchoring on the report must beat dividing by four by far"
    )
