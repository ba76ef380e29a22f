"""ch18 · Context management: planning a compaction and summarising older turns.

What is kept (instructions, the first task, the last turns), what the model is asked, the one
message that stands for the rest, and two properties over random histories: a compacted
history is still one every provider accepts, and it is never larger than before.
"""

from collections.abc import Sequence
from decimal import Decimal

import pytest
from budget import examples
from context_histories import assert_valid_for_every_provider, histories, text, whole
from hypothesis import given, settings
from hypothesis import strategies as st

from claw.agent import Finish
from claw.context import (
    MESSAGE_FRAMING,
    SUMMARY_PROMPT,
    ContextWindow,
    message_chars,
    plan_compaction,
    request_chars,
    summarize_with,
    summary_message,
    transcript,
    trim_text,
)
from claw.cost import CostTracker, RunSummary
from claw.events import Compacted, RunFinished, StepUsage
from claw.providers.openrouter import message_to_wire
from claw.streaming import MockStreamProvider
from claw.types import (
    AssistantTurn,
    DeveloperMessage,
    Message,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


def call(call_id: str, path: str = "a.py") -> ToolCall:
    return ToolCall(id=call_id, name="read", arguments={"path": path})


def session(rounds: int, result: str = "contents") -> list[Message]:
    """System, a developer note, the task, then ``rounds`` rounds of one read and its result."""
    messages: list[Message] = [
        Message.system("You are claw."),
        Message.developer("Project rules: run the tests."),
        Message.user("Rename mean to average."),
    ]
    for n in range(rounds):
        messages += [
            Message.assistant(f"step {n}", tool_calls=[call(f"c{n}", f"f{n}.py")]),
            Message.tool_result(f"c{n}", f"{result} {n}"),
        ]
    return messages


class Summarizer:
    """A stand-in for the model: records what it was asked, answers with ``summary``."""

    def __init__(self, summary: str = "The user wants mean renamed; f0..f5 were read.") -> None:
        self.summary = summary
        self.asked: list[list[Message]] = []

    async def __call__(self, messages: Sequence[Message], focus: str = "") -> str:
        self.asked.append(list(messages))
        return self.summary


def test_context_plan_pins_instructions_and_the_task_and_keeps_the_last_turns() -> None:
    messages = session(6)
    plan = plan_compaction(messages, keep=2)
    assert plan.pinned == (0, 1, 2)
    assert plan.recent == len(messages) - 4, "two turns: each an assistant message and its result"
    assert plan.summarized == tuple(range(3, len(messages) - 4))
    assert plan_compaction(session(2), keep=2).summarized == (), "nothing old enough to go"
    late_rule = [*messages[:5], Message.developer("Plan mode is on."), *messages[5:]]
    assert 5 in plan_compaction(late_rule, keep=2).pinned, "a developer message is kept"
    three_turns = session(2)  # the task, then two rounds: exactly three turns
    exact = plan_compaction(three_turns, keep=3)
    assert (exact.pinned, exact.summarized, exact.recent) == ((0, 1), (), 2)
    fewer = plan_compaction(three_turns, keep=4)
    assert (fewer.pinned, fewer.summarized, fewer.recent) == ((), (), 0)
    no_task = [Message.system("s"), Message.assistant("a"), Message.assistant("b")]
    untasked = plan_compaction(no_task, keep=1)
    assert (untasked.pinned, untasked.summarized, untasked.recent) == ((0,), (1,), 2)
    with pytest.raises(ValueError, match="keep must be at least 1 turn"):
        plan_compaction(messages, keep=0)


def test_context_plan_never_separates_a_call_from_its_result() -> None:
    messages: list[Message] = [Message.user("go")]
    for n in range(4):
        calls = [call(f"c{n}a"), call(f"c{n}b"), call(f"c{n}c")]
        messages.append(Message.assistant(tool_calls=calls))
        messages += [Message.tool_result(c.id, "ok") for c in calls]
    for keep in range(1, 6):
        plan = plan_compaction(messages, keep=keep)
        assert plan.recent == len(messages) or not isinstance(
            messages[plan.recent], ToolResultMessage
        ), f"keep={keep}: the kept turns start with a result whose call is summarised"


async def test_context_compaction_summarises_old_turns_into_one_message_that_says_so() -> None:
    messages = session(6, result="contents " * 40)
    summarizer = Summarizer()
    window = ContextWindow(100, summarizer, keep=2)
    compaction = await window.compact(messages, force=True)
    assert compaction is not None
    new = compaction.messages
    assert new[:3] == messages[:3], "system, developer message and first task are kept"
    summary = new[3]
    assert isinstance(summary, UserMessage)
    assert "This is a summary of the earlier part of this conversation" in summary.text
    assert "8 messages were replaced" in summary.text
    assert summary.text.endswith(summarizer.summary)
    assert new[4:] == messages[-4:], "the last two turns word for word"
    assert summarizer.asked == [messages[1:-4]], "the model reads everything it replaces"
    event = compaction.event
    assert event == Compacted(8, len(new), event.tokens_before, event.tokens_after, 0)
    assert event.tokens_after < event.tokens_before
    assert_valid_for_every_provider(new)


async def test_context_the_summary_request_is_the_prompt_and_a_transcript() -> None:
    provider = MockStreamProvider(["Summary: renamed nothing yet."])
    messages = session(4, result="contents " * 40)
    window = ContextWindow(100, summarize_with(provider), keep=2)
    compaction = await window.compact(messages, force=True)
    assert compaction is not None
    assert compaction.messages[3].text.endswith("\n\nSummary: renamed nothing yet.")
    old = messages[1:-4]
    (sent,) = provider.calls
    assert sent.tools == (), "no tools: the summary request must not call any"
    system, user = sent.messages
    assert isinstance(system, SystemMessage) and system.text == SUMMARY_PROMPT
    assert isinstance(user, UserMessage) and user.text == transcript(old)
    shown = transcript(old)
    assert "[user]\nRename mean to average." in shown
    assert '[tool call c0] read {"path": "f0.py"}' in shown
    lines = shown.splitlines()
    assert lines[lines.index("[tool result c0]") + 1] == "contents " * 40 + " 0", "the result"
    for duty in ("file paths", "what remains to be done", "Do not call tools"):
        assert duty in SUMMARY_PROMPT


async def test_context_the_summary_request_is_a_call_of_the_run_and_not_a_step() -> None:
    # The summary is paid like a step (summarize_with's count: the cost tracker's
    # count_summary), but it is not one: a run that ends with a step stopped mid-stream still
    # says that one call's cost is unknown.
    usage = TokenUsage(input_tokens=900, output_tokens=30, cost=Decimal("0.004"))
    provider = MockStreamProvider([AssistantTurn(text="Summary.", usage=usage)])
    tracker = CostTracker("m")
    window = ContextWindow(100, summarize_with(provider, tracker.count_summary), keep=2)
    assert await window.compact(session(4, result="contents " * 40), force=True) is not None
    tracker(StepUsage(1, TokenUsage(input_tokens=100, output_tokens=5, cost=Decimal("0.001"))))
    run = tracker.run
    assert (run.calls, run.summaries, run.input_tokens, run.output_tokens) == (2, 1, 1000, 35)
    assert (run.cost, tracker.session.cost) == (Decimal("0.005"), Decimal("0.005"))
    assert (len(tracker.steps), tracker.last_prompt_tokens) == (1, 100)
    stopped = RunFinished(Finish.CANCELLED, 2, "", TokenUsage())
    line = RunSummary(stopped, run, "m", 1.0).line()
    assert "cost at least $0.0050 (1 call(s) stopped before the provider reported" in line


async def test_context_trimming_comes_first_and_the_model_is_asked_only_if_needed() -> None:
    messages = session(6, result="log line\n" * 2_000)[:-4] + session(6)[-4:]
    summarizer = Summarizer()
    window = ContextWindow(2_000, summarizer, keep=2, trim_head=200, trim_tail=100)
    assert window.tokens(messages) > window.limit
    compaction = await window.compact(messages)
    assert compaction is not None and summarizer.asked == [], "trimming was enough"
    assert compaction.event.removed == 0 and compaction.event.trimmed == 4
    assert window.tokens(compaction.messages) <= window.limit
    assert compaction.messages[-4:] == messages[-4:], "results of the kept turns are not trimmed"
    first_result, original = compaction.messages[4], messages[4]
    assert isinstance(first_result, ToolResultMessage) and isinstance(original, ToolResultMessage)
    assert first_result.content == trim_text(original.content, 200, 100), "the window's sizes"
    small = ContextWindow(300, summarizer, keep=2, trim_head=200, trim_tail=100)
    compaction = await small.compact(messages)
    assert compaction is not None and len(summarizer.asked) == 1, "not enough: now summarise"
    assert compaction.event.removed == 8 and compaction.event.trimmed == 4
    assert "cut from the middle" in transcript(summarizer.asked[0]), "the model reads it trimmed"


async def test_context_a_long_or_empty_summary_never_makes_the_history_larger() -> None:
    messages = session(6)
    rambling = Summarizer("é\u0301" * 100_000)
    compaction = await ContextWindow(100, rambling, keep=2).compact(messages, force=True)
    assert compaction is not None
    assert request_chars(compaction.messages) < request_chars(messages)
    assert whole(compaction.messages[3].text)
    silent = await ContextWindow(100, Summarizer("   "), keep=2).compact(messages, force=True)
    assert silent is None, "no summary, nothing replaced: an empty answer loses nothing"
    short = await ContextWindow(100, Summarizer(), keep=4).compact(session(3), force=True)
    assert short is None, "too few turns to summarise, nothing to trim"


async def test_context_a_long_summary_is_cut_to_the_room_the_replaced_messages_leave() -> None:
    messages = session(6)
    removed = [messages[i] for i in plan_compaction(messages, keep=2).summarized]
    room = request_chars(removed) - message_chars(summary_message("", len(removed))) - 1

    async def summary_of(answer: str) -> str:
        compaction = await ContextWindow(100, Summarizer(answer), keep=2).compact(
            messages, force=True
        )
        assert compaction is not None
        return compaction.messages[3].text.split("\n\n", 1)[1]

    assert await summary_of("a" * room + "b" * 500) == "a" * room, "cut at exactly the room"
    stripped = await summary_of("a" * (room - 1) + " " + "b" * 500)
    assert stripped == "a" * (room - 1), "then stripped"
    # a room of one character: a summary of one character still replaces what it stands for
    wrapper = message_chars(summary_message("", 1))
    filler = Message.assistant("x" * (wrapper + 2 - MESSAGE_FRAMING))
    tiny = [Message.user("task"), filler, Message.user("now"), Message.assistant("ok")]
    compaction = await ContextWindow(100, Summarizer("ABC"), keep=2).compact(tiny, force=True)
    assert compaction is not None and compaction.messages[1].text.endswith("\n\nA")
    assert compaction.event.removed == 1


async def test_context_a_request_exactly_at_the_limit_is_under_it() -> None:
    messages = session(6, result="log line\n" * 2_000)[:-4] + session(6)[-4:]
    summarizer = Summarizer()

    def window(size: int) -> ContextWindow:
        return ContextWindow(size, summarizer, threshold=1.0, keep=2, trim_head=200, trim_tail=100)

    probe = await window(10**9).compact(messages)
    assert probe is not None
    compaction = await window(probe.event.tokens_after).compact(messages)
    assert compaction is not None and compaction.event.removed == 0
    assert summarizer.asked == [], "trimmed to exactly the limit is enough: no summary"
    at_limit = window(probe.event.tokens_before)
    history = list(messages)
    assert await at_limit.prepare(history) is None, "at the limit is not above it: no event"
    assert history == messages and summarizer.asked == []


def test_context_window_settings_are_checked() -> None:
    summarize = Summarizer()
    fresh = ContextWindow(10_000, summarize)
    assert fresh.tokens([Message.user("x" * 384)]) == 100, "4 characters a token until a report"
    assert fresh.limit == 8_000, "80 % by default"
    assert ContextWindow(10_000, summarize, threshold=0.5).limit == 5_000
    assert ContextWindow(10_000, summarize).keep == 4
    with pytest.raises(ValueError, match="window must be at least 1 token"):
        ContextWindow(0, summarize)
    with pytest.raises(ValueError, match="threshold must be above 0 and at most 1"):
        ContextWindow(1000, summarize, threshold=1.5)
    with pytest.raises(ValueError, match="keep must be at least 1 turn"):
        ContextWindow(1000, summarize, keep=0)


@pytest.mark.timeout(60)  # 200 examples take about 5 s on a quiet machine, far more on a busy one
@settings(max_examples=examples(200), deadline=None)
@given(histories(), text, st.integers(1, 5))
async def test_context_property_a_compacted_history_is_valid_and_never_larger(
    messages: list[Message], summary: str, keep: int
) -> None:
    window = ContextWindow(50, Summarizer(summary * 3), keep=keep, trim_head=40, trim_tail=20)
    compaction = await window.compact(messages, force=True)
    if compaction is None:
        return
    new = compaction.messages
    assert_valid_for_every_provider(new)
    for message in new:
        wire = message_to_wire(message)
        assert wire["role"] in ("system", "developer", "user", "assistant", "tool")
    assert request_chars(new) <= request_chars(messages)
    assert len(new) <= len(messages)
    kept = [m for m in messages if isinstance(m, SystemMessage | DeveloperMessage)]
    assert [m for m in new if isinstance(m, SystemMessage | DeveloperMessage)] == kept
    first_task = next(m for m in messages if isinstance(m, UserMessage))
    assert first_task in new, "the first user message is kept"
    summaries = [m for m in new if "This is a summary of the earlier part" in m.text]
    assert len(summaries) == (1 if compaction.event.removed else 0)
    assert compaction.event.kept == len(new)
    last = plan_compaction(messages, keep).recent
    assert new[len(new) - (len(messages) - last) :] == messages[last:], "kept turns unchanged"
