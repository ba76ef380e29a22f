"""ch01 · MockProvider: a scripted provider that records what it was sent."""

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw.errors import ProviderError
from claw.mock import MockProvider, MockProviderExhausted
from claw.types import (
    AssistantTurn,
    Provider,
    StopReason,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    UserMessage,
)

READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")


def hello() -> list[UserMessage]:
    return [UserMessage(content="hello")]


async def test_mock_returns_turns_in_the_order_they_were_scripted():
    provider = MockProvider([AssistantTurn(text="first"), AssistantTurn(text="second")])
    first = await provider.complete(hello(), [])
    second = await provider.complete(hello(), [])
    assert (first.text, second.text) == ("first", "second")


async def test_mock_turns_a_string_into_a_text_turn_that_ends_the_conversation():
    provider = MockProvider(["Hi there!"])
    turn = await provider.complete(hello(), [])
    assert isinstance(turn, AssistantTurn)
    assert turn.text == "Hi there!"
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.tool_calls == ()


async def test_mock_returns_a_tool_call_turn_unchanged():
    call = ToolCall(id="call_1", name="read", arguments={"path": "README.md"})
    scripted = AssistantTurn(text="Let me look.", tool_calls=[call])
    provider = MockProvider([scripted])
    turn = await provider.complete(hello(), [READ])
    assert turn == scripted
    assert turn.stop_reason is StopReason.TOOL_USE


async def test_mock_records_the_messages_of_every_call():
    provider = MockProvider(["one", "two"])
    first = [SystemMessage(content="Be brief."), UserMessage(content="hi")]
    second = [*first, AssistantTurn(text="one").to_message(), UserMessage(content="again")]
    await provider.complete(first, [])
    await provider.complete(second, [])
    assert len(provider.calls) == 2
    assert list(provider.calls[0].messages) == first
    assert list(provider.calls[1].messages) == second


async def test_mock_records_the_tool_definitions_offered():
    provider = MockProvider(["ok"])
    await provider.complete(hello(), [READ])
    assert list(provider.calls[0].tools) == [READ]
    assert provider.calls[0].tool_names == ("read",)


async def test_mock_keeps_a_snapshot_not_a_reference_to_the_callers_history():
    provider = MockProvider(["ok"])
    history = hello()
    await provider.complete(history, [])
    history.append(UserMessage(content="added after the call"))
    assert len(provider.calls[0].messages) == 1


async def test_mock_raises_a_provider_error_when_the_script_is_used_up():
    provider = MockProvider(["only one"])
    await provider.complete(hello(), [])
    with pytest.raises(ProviderError):
        await provider.complete(hello(), [])


async def test_mock_exhaustion_error_is_specific_and_says_what_to_do():
    provider = MockProvider([])
    with pytest.raises(MockProviderExhausted) as caught:
        await provider.complete(hello(), [])
    message = str(caught.value)
    assert "script" in message
    assert "add" in message


async def test_mock_records_a_call_even_when_the_script_is_used_up():
    provider = MockProvider([])
    with pytest.raises(MockProviderExhausted):
        await provider.complete(hello(), [READ])
    assert len(provider.calls) == 1
    assert provider.calls[0].tool_names == ("read",)


async def test_mock_remaining_counts_down_as_turns_are_handed_out():
    provider = MockProvider(["a", "b", "c"])
    assert provider.remaining == 3
    await provider.complete(hello(), [])
    assert provider.remaining == 2
    await provider.complete(hello(), [])
    await provider.complete(hello(), [])
    assert provider.remaining == 0


async def test_mock_add_appends_to_the_end_of_the_script():
    provider = MockProvider(["first"])
    provider.add("second")
    provider.add(AssistantTurn(text="third"))
    texts = [(await provider.complete(hello(), [])).text for _ in range(3)]
    assert texts == ["first", "second", "third"]


async def test_mock_can_be_refilled_after_it_ran_out():
    provider = MockProvider(["a"])
    await provider.complete(hello(), [])
    provider.add("b")
    assert (await provider.complete(hello(), [])).text == "b"


async def test_mock_does_not_change_the_list_it_was_given():
    script = ["a", "b"]
    provider = MockProvider(script)
    await provider.complete(hello(), [])
    assert script == ["a", "b"]
    assert provider.remaining == 1


async def test_mock_accepts_any_iterable_such_as_a_generator():
    provider = MockProvider(text for text in ["x", "y"])
    assert provider.remaining == 2
    assert (await provider.complete(hello(), [])).text == "x"


async def test_mock_instances_do_not_share_a_script_or_calls():
    first, second = MockProvider(), MockProvider()
    first.add("only for the first")
    assert second.remaining == 0
    await first.complete(hello(), [])
    assert second.calls == []


async def test_mock_concurrent_calls_get_distinct_turns_in_call_order():
    provider = MockProvider(["a", "b", "c"])
    turns = await asyncio.gather(*(provider.complete(hello(), []) for _ in range(3)))
    assert [turn.text for turn in turns] == ["a", "b", "c"]
    assert len(provider.calls) == 3


async def test_mock_is_a_provider():
    provider = MockProvider()
    assert isinstance(provider, Provider)
    assert asyncio.iscoroutinefunction(provider.complete)


@given(st.lists(st.text(max_size=20), max_size=8))
def test_mock_hands_out_any_script_in_order_then_reports_exhaustion(texts):
    async def drain() -> list[str]:
        provider = MockProvider(texts)
        out = [(await provider.complete(hello(), [])).text for _ in texts]
        with pytest.raises(MockProviderExhausted):
            await provider.complete(hello(), [])
        assert len(provider.calls) == len(texts) + 1
        return out

    assert asyncio.run(drain()) == texts
