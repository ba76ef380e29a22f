"""ch03 · single_turn: one provider call and, if the model asked for tools, one round of tools."""

from typing import Any

import pytest
from fake_tools import Echo

from claw.agent import check_arguments, single_turn
from claw.mock import MockProvider
from claw.types import (
    AssistantMessage,
    AssistantTurn,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)


class Recorder:
    """Writes down every call in a shared log, so a test can see what ran and in which order."""

    def __init__(self, name: str, log: list[tuple[str, dict[str, Any]]]) -> None:
        self.name = name
        self.log = log

    @property
    def definition(self) -> ToolDefinition:
        return (
            ToolDefinition(name=self.name, description="Record the call.")
            .param("count", "integer", "How many.")
            .param("ratio", "number", "A fraction.", required=False)
            .param("loud", "boolean", "Shout?", required=False)
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.log.append((self.name, arguments))
        return ToolOutput.ok(f"{self.name} #{len(self.log)}")


class Raiser:
    """Raises the exception it was built with."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="explode", description="Always fails.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        raise self.error


class ReturnsText:
    """A buggy tool: returns a plain string instead of a ToolOutput."""

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="sloppy", description="Returns the wrong type.")

    async def run(self, arguments: dict[str, Any]) -> Any:
        return "just a string"


class MissingCode(NotImplementedError):
    """Stands for a stub in a tool: code that is not written yet."""


def call(id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


def asks(*calls: ToolCall, text: str = "") -> AssistantTurn:
    return AssistantTurn(text=text, tool_calls=calls)


def history() -> list[Any]:
    return [SystemMessage(content="You are claw."), UserMessage(content="Go.")]


async def one_call(tools: ToolSet, tool_call: ToolCall) -> ToolResultMessage:
    """Run a turn in which the model makes exactly ``tool_call``; return its one result."""
    step = await single_turn(MockProvider([asks(tool_call)]), history(), tools)
    assert len(step.results) == 1
    return step.results[0]


async def test_single_turn_sends_the_history_and_every_tool_definition_in_order():
    log: list[tuple[str, dict[str, Any]]] = []
    tools = ToolSet([Echo(), Recorder("tally", log)])
    provider = MockProvider(["Nothing to do."])
    messages = history()
    await single_turn(provider, messages, tools)
    assert len(provider.calls) == 1
    assert list(provider.calls[0].messages) == messages
    assert list(provider.calls[0].tools) == tools.definitions()
    assert provider.calls[0].tool_names == ("echo", "tally")


async def test_single_turn_text_answer_runs_no_tool_and_adds_only_the_assistant_message():
    log: list[tuple[str, dict[str, Any]]] = []
    step = await single_turn(MockProvider(["All done."]), history(), ToolSet([Recorder("t", log)]))
    assert step.turn.text == "All done."
    assert step.results == ()
    assert step.messages == [AssistantMessage(content="All done.")]
    assert log == []


async def test_single_turn_runs_a_tool_call_and_answers_it_with_the_same_id():
    turn = asks(call("call_7", "echo", text="ping"), text="Echoing.")
    step = await single_turn(MockProvider([turn]), history(), ToolSet([Echo()]))
    assert step.turn == turn
    assert step.results == (ToolResultMessage(tool_call_id="call_7", content="ping"),)
    assert step.messages == [turn.to_message(), step.results[0]]


async def test_single_turn_does_not_change_the_list_it_was_given():
    messages = history()
    before = list(messages)
    step = await single_turn(
        MockProvider([asks(call("c1", "echo", text="x"))]), messages, ToolSet([Echo()])
    )
    assert messages == before
    assert len(step.messages) == 2


async def test_single_turn_runs_calls_in_the_order_the_model_made_them():
    log: list[tuple[str, dict[str, Any]]] = []
    tools = ToolSet([Recorder("first", log), Recorder("second", log)])
    turn = asks(
        call("a", "second", count=1), call("b", "first", count=2), call("c", "second", count=3)
    )
    step = await single_turn(MockProvider([turn]), history(), tools)
    assert log == [("second", {"count": 1}), ("first", {"count": 2}), ("second", {"count": 3})]
    assert [r.tool_call_id for r in step.results] == ["a", "b", "c"]
    assert [r.content for r in step.results] == ["second #1", "first #2", "second #3"]


async def test_single_turn_unknown_tool_is_an_error_result_naming_the_available_tools():
    log: list[tuple[str, dict[str, Any]]] = []
    result = await one_call(ToolSet([Echo(), Recorder("tally", log)]), call("c1", "delete_all"))
    assert result.tool_call_id == "c1"
    assert result.is_error
    assert "delete_all" in result.content
    assert "echo" in result.content and "tally" in result.content


async def test_single_turn_missing_required_argument_is_an_error_and_the_tool_does_not_run():
    log: list[tuple[str, dict[str, Any]]] = []
    result = await one_call(ToolSet([Recorder("tally", log)]), call("c1", "tally", ratio=0.5))
    assert result.is_error
    assert "count" in result.content
    assert log == []


async def test_single_turn_wrong_json_type_is_an_error_and_the_tool_does_not_run():
    log: list[tuple[str, dict[str, Any]]] = []
    result = await one_call(ToolSet([Recorder("tally", log)]), call("c1", "tally", count="three"))
    assert result.is_error
    assert "count" in result.content
    assert "integer" in result.content
    assert log == []


async def test_single_turn_a_bool_is_not_accepted_for_an_integer_or_a_number():
    log: list[tuple[str, dict[str, Any]]] = []
    tools = ToolSet([Recorder("tally", log)])
    as_integer = await one_call(tools, call("c1", "tally", count=True))
    as_number = await one_call(tools, call("c2", "tally", count=1, ratio=False))
    assert as_integer.is_error and "count" in as_integer.content
    assert as_number.is_error and "ratio" in as_number.content
    assert log == []


def test_single_turn_check_arguments_accepts_what_fits_the_schema():
    log: list[tuple[str, dict[str, Any]]] = []
    definition = Recorder("tally", log).definition
    assert check_arguments(definition, {"count": 3}) is None
    assert check_arguments(definition, {"count": 3, "ratio": 2, "loud": True}) is None
    assert check_arguments(definition, {"count": 3, "ratio": 0.5, "extra": "ignored"}) is None
    assert check_arguments(definition, {"count": "3"}) is not None
    assert check_arguments(definition, {"count": 3, "loud": "yes"}) is not None


def test_single_turn_check_arguments_skips_what_has_no_simple_type_and_checks_the_rest():
    log: list[tuple[str, dict[str, Any]]] = []
    definition = Recorder("tally", log).definition.param_raw(
        "limit", {"type": ["integer", "null"], "description": "At most."}, required=False
    )
    assert check_arguments(definition, {"count": 3, "limit": None}) is None
    assert check_arguments(definition, {"count": 3, "limit": "many"}) is None
    # Arguments the function skips come first here: the ones after them are still checked.
    problem = check_arguments(definition, {"extra": 1, "limit": None, "count": "three"})
    assert problem is not None and "count" in problem


def test_single_turn_check_arguments_accepts_any_arguments_if_the_schema_has_no_properties():
    bare = ToolDefinition(name="ping", description="Takes nothing.", parameters={"type": "object"})
    assert check_arguments(bare, {}) is None
    assert check_arguments(bare, {"anything": 1}) is None


async def test_single_turn_a_tool_that_raises_becomes_an_error_result_with_the_message():
    error = ValueError("the disk is on fire")
    result = await one_call(ToolSet([Raiser(error)]), call("boom", "explode"))
    assert result.tool_call_id == "boom"
    assert result.is_error
    assert "the disk is on fire" in result.content


async def test_single_turn_not_implemented_error_from_a_tool_propagates():
    tools = ToolSet([Raiser(MissingCode("write me"))])
    with pytest.raises(MissingCode):
        await single_turn(MockProvider([asks(call("c1", "explode"))]), history(), tools)


async def test_single_turn_a_tool_returning_something_other_than_tool_output_is_an_error():
    result = await one_call(ToolSet([ReturnsText()]), call("c1", "sloppy"))
    assert result.is_error
    assert "sloppy" in result.content
    assert result.content != "just a string"


async def test_single_turn_an_error_result_from_a_tool_stays_an_error():
    class Refuses(Echo):
        async def run(self, arguments: dict[str, Any]) -> ToolOutput:
            return ToolOutput.error(f"refusing {arguments['text']}")

    result = await one_call(ToolSet([Refuses()]), call("c1", "echo", text="that"))
    assert result == ToolResultMessage(tool_call_id="c1", content="refusing that", is_error=True)


async def test_single_turn_one_failing_call_does_not_stop_the_calls_after_it():
    log: list[tuple[str, dict[str, Any]]] = []
    tools = ToolSet([Raiser(RuntimeError("nope")), Recorder("tally", log)])
    turn = asks(call("c1", "explode"), call("c2", "nothing_here"), call("c3", "tally", count=1))
    step = await single_turn(MockProvider([turn]), history(), tools)
    assert [(r.tool_call_id, r.is_error) for r in step.results] == [
        ("c1", True),
        ("c2", True),
        ("c3", False),
    ]
    assert log == [("tally", {"count": 1})]
