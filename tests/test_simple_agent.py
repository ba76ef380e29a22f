"""ch03 · SimpleAgent: run steps until the model answers without asking for a tool."""

from decimal import Decimal

import pytest
from fake_tools import Broken, Echo

from claw.agent import AgentResult, Finish, SimpleAgent
from claw.mock import MockProvider, MockProviderExhausted
from claw.types import (
    AssistantMessage,
    AssistantTurn,
    StopReason,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)


def echo_turn(id: str, text: str, *, said: str = "", usage: TokenUsage | None = None):
    return AssistantTurn(
        text=said,
        tool_calls=[ToolCall(id=id, name="echo", arguments={"text": text})],
        usage=usage or TokenUsage(),
    )


def used(input_tokens: int, output_tokens: int, cost: str | None = None) -> TokenUsage:
    return TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=Decimal(cost) if cost is not None else None,
    )


async def test_simple_agent_returns_the_answer_of_a_turn_without_tool_calls():
    provider = MockProvider(["Hello there."])
    result = await SimpleAgent(provider).run("Hi")
    assert result == AgentResult(
        text="Hello there.", finish=Finish.DONE, steps=1, usage=TokenUsage()
    )
    assert list(provider.calls[0].messages) == [UserMessage(content="Hi")]


async def test_simple_agent_loops_until_the_model_stops_calling_tools():
    echo = Echo()
    provider = MockProvider([echo_turn("c1", "one"), echo_turn("c2", "two"), "Both echoed."])
    result = await SimpleAgent(provider, ToolSet([echo])).run("Echo twice.")
    assert echo.seen == ["one", "two"]
    assert result.text == "Both echoed."
    assert result.finish is Finish.DONE
    assert result.steps == 3
    assert len(provider.calls) == 3
    assert provider.remaining == 0


async def test_simple_agent_sends_each_tool_result_back_after_the_call_with_the_same_id():
    turn = echo_turn("call_42", "marco", said="Calling.")
    provider = MockProvider([turn, "Polo."])
    await SimpleAgent(provider, ToolSet([Echo()])).run("Say marco.")
    assert list(provider.calls[1].messages) == [
        UserMessage(content="Say marco."),
        AssistantMessage(content="Calling.", tool_calls=turn.tool_calls),
        ToolResultMessage(tool_call_id="call_42", content="marco"),
    ]


async def test_simple_agent_offers_the_tools_on_every_call():
    echo = Echo()
    provider = MockProvider([echo_turn("c1", "x"), "Done."])
    await SimpleAgent(provider, ToolSet([echo])).run("Go.")
    assert [c.tools for c in provider.calls] == [(echo.definition,), (echo.definition,)]


async def test_simple_agent_history_holds_every_message_in_order():
    first, second = echo_turn("c1", "a", said="One."), echo_turn("c2", "b")
    agent = SimpleAgent(MockProvider([first, second, "Fin."]), ToolSet([Echo()]))
    await agent.run("Start.")
    assert agent.history == [
        UserMessage(content="Start."),
        first.to_message(),
        ToolResultMessage(tool_call_id="c1", content="a"),
        second.to_message(),
        ToolResultMessage(tool_call_id="c2", content="b"),
        AssistantMessage(content="Fin."),
    ]


async def test_simple_agent_sums_usage_and_cost_across_all_steps():
    provider = MockProvider(
        [
            echo_turn("c1", "x", usage=used(100, 10, "0.001")),
            echo_turn("c2", "y", usage=used(150, 20)),
            AssistantTurn(text="Done.", usage=used(200, 30, "0.002")),
        ]
    )
    result = await SimpleAgent(provider, ToolSet([Echo()])).run("Go.")
    assert result.usage == used(450, 60, "0.003")


async def test_simple_agent_max_steps_stops_a_model_that_keeps_calling_tools():
    echo = Echo()
    provider = MockProvider([echo_turn(f"c{n}", str(n), said=f"Try {n}.") for n in range(1, 6)])
    result = await SimpleAgent(provider, ToolSet([echo]), max_steps=3).run("Loop forever.")
    assert result.finish is Finish.MAX_STEPS
    assert result.steps == 3
    assert result.text == "Try 3."
    assert len(provider.calls) == 3
    assert provider.remaining == 2
    assert echo.seen == ["1", "2", "3"]


async def test_simple_agent_rejects_max_steps_below_one_and_allows_exactly_one():
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_steps"):
            SimpleAgent(MockProvider(), max_steps=bad)
    provider = MockProvider([echo_turn("c1", "x"), "never reached"])
    result = await SimpleAgent(provider, ToolSet([Echo()]), max_steps=1).run("Go.")
    assert (result.finish, result.steps, len(provider.calls)) == (Finish.MAX_STEPS, 1, 1)


async def test_simple_agent_max_steps_still_sums_the_usage_of_every_step():
    turns = [echo_turn(f"c{n}", str(n), usage=used(100, 10, "0.001")) for n in range(1, 4)]
    provider = MockProvider(turns)
    result = await SimpleAgent(provider, ToolSet([Echo()]), max_steps=2).run("Loop forever.")
    assert result.finish is Finish.MAX_STEPS
    assert result.usage == used(200, 20, "0.002")


async def test_simple_agent_keeps_the_history_across_two_runs():
    provider = MockProvider([echo_turn("c1", "hi"), "Said hi.", "You asked me to say hi."])
    agent = SimpleAgent(provider, ToolSet([Echo()]), system="Be brief.")
    await agent.run("Say hi.")
    first_conversation = [*provider.calls[1].messages, AssistantMessage(content="Said hi.")]
    result = await agent.run("What did I ask?")
    assert list(provider.calls[2].messages) == [
        *first_conversation,
        UserMessage(content="What did I ask?"),
    ]
    assert result.steps == 1
    assert result.text == "You asked me to say hi."


async def test_simple_agent_puts_the_system_prompt_first_in_the_history():
    provider = MockProvider(["Ok."])
    agent = SimpleAgent(provider, system="You are claw.")
    await agent.run("Hello.")
    assert list(provider.calls[0].messages) == [
        SystemMessage(content="You are claw."),
        UserMessage(content="Hello."),
    ]
    assert agent.history[0] == SystemMessage(content="You are claw.")


async def test_simple_agent_accepts_a_plain_list_of_tools():
    echo = Echo()
    provider = MockProvider([echo_turn("c1", "from a list"), "Done."])
    result = await SimpleAgent(provider, [echo]).run("Go.")
    assert echo.seen == ["from a list"]
    assert provider.calls[0].tool_names == ("echo",)
    assert result.finish is Finish.DONE


async def test_simple_agent_keeps_the_tool_set_it_was_given_so_a_tool_added_later_is_offered():
    tools = ToolSet()
    provider = MockProvider([echo_turn("c1", "added later"), "Done."])
    agent = SimpleAgent(provider, tools)
    echo = Echo()
    tools.add(echo)
    await agent.run("Go.")
    assert provider.calls[0].tool_names == ("echo",)
    assert echo.seen == ["added later"]


async def test_simple_agent_reports_max_tokens_when_the_answer_is_cut_off():
    cut_off = AssistantTurn(text="The answer is", stop_reason=StopReason.MAX_TOKENS)
    provider = MockProvider([cut_off])
    result = await SimpleAgent(provider).run("Explain everything.")
    assert result.finish is Finish.MAX_TOKENS
    assert result.text == "The answer is"
    assert result.steps == 1


async def test_simple_agent_errors_from_the_provider_propagate():
    provider = MockProvider([echo_turn("c1", "x")])
    agent = SimpleAgent(provider, ToolSet([Echo()]))
    with pytest.raises(MockProviderExhausted):
        await agent.run("Go.")
    assert len(provider.calls) == 2


async def test_simple_agent_goes_on_after_an_unknown_tool_or_a_tool_that_raises():
    provider = MockProvider(
        [
            AssistantTurn(tool_calls=[ToolCall(id="c1", name="teleport")]),
            AssistantTurn(tool_calls=[ToolCall(id="c2", name="broken")]),
            "I could not do it.",
        ]
    )
    result = await SimpleAgent(provider, ToolSet([Echo(), Broken()])).run("Go.")
    assert result.finish is Finish.DONE
    assert result.steps == 3
    unknown, raised = provider.calls[1].messages[-1], provider.calls[2].messages[-1]
    assert isinstance(unknown, ToolResultMessage) and unknown.is_error
    assert unknown.tool_call_id == "c1" and "echo" in unknown.content
    assert isinstance(raised, ToolResultMessage) and raised.is_error
    assert raised.tool_call_id == "c2" and "permission denied" in raised.content
