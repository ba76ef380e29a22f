"""ch04 · Messages and types. types.py is given complete, so these pass from the start: read them
as a specification of the vocabulary every later chapter speaks."""

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from claw.types import (
    MESSAGES,
    AssistantMessage,
    AssistantTurn,
    Provider,
    StopReason,
    SystemMessage,
    TokenUsage,
    Tool,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
    dump_messages,
    load_messages,
)


def conversation() -> list[Any]:
    call = ToolCall(id="call_1", name="read", arguments={"path": "notes.txt", "limit": 5})
    return [
        SystemMessage(content="You are claw."),
        UserMessage(content="What is in notes.txt?"),
        AssistantMessage(content="Let me read it.", tool_calls=[call]),
        ToolResultMessage(tool_call_id="call_1", content="1\tbuy milk"),
        AssistantMessage(content="It says: buy milk."),
    ]


def test_types_a_dict_becomes_the_message_class_its_role_names():
    parsed = MESSAGES.validate_python(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "a"},
            {"role": "tool", "tool_call_id": "c1", "content": "t"},
        ]
    )
    kinds = [type(m) for m in parsed]
    assert kinds == [SystemMessage, UserMessage, AssistantMessage, ToolResultMessage]


def test_types_an_unknown_role_is_rejected_and_the_error_names_the_field():
    with pytest.raises(ValidationError) as caught:
        MESSAGES.validate_python([{"role": "robot", "content": "beep"}])
    assert "role" in str(caught.value) or "robot" in str(caught.value)


def test_types_a_whole_conversation_survives_a_json_round_trip():
    original = conversation()
    text = dump_messages(original)
    assert isinstance(json.loads(text), list)
    restored = load_messages(text)
    assert restored == original
    assert [type(m) for m in restored] == [type(m) for m in original]
    assert restored[2].tool_calls[0].arguments == {"path": "notes.txt", "limit": 5}


def test_types_messages_are_frozen():
    message = UserMessage(content="hi")
    with pytest.raises(ValidationError):
        message.content = "changed"  # type: ignore[misc]


def test_types_unknown_fields_are_rejected_not_silently_dropped():
    with pytest.raises(ValidationError):
        UserMessage(content="hi", contnet="typo")  # type: ignore[call-arg]


def test_types_turn_stop_reason_is_inferred_from_tool_calls():
    call = ToolCall(id="c1", name="read", arguments={})
    assert AssistantTurn(text="done").stop_reason is StopReason.END_TURN
    assert AssistantTurn(tool_calls=[call]).stop_reason is StopReason.TOOL_USE


def test_types_turn_with_tool_use_but_no_calls_is_illegal():
    with pytest.raises(ValidationError, match="tool call"):
        AssistantTurn(stop_reason=StopReason.TOOL_USE)


def test_types_turn_with_calls_but_another_stop_reason_is_illegal():
    call = ToolCall(id="c1", name="read", arguments={})
    with pytest.raises(ValidationError, match="tool_use"):
        AssistantTurn(tool_calls=[call], stop_reason=StopReason.END_TURN)


def test_types_tool_call_ids_must_be_unique_within_a_turn():
    calls = [ToolCall(id="same", name="read"), ToolCall(id="same", name="glob")]
    with pytest.raises(ValidationError, match="same"):
        AssistantTurn(tool_calls=calls)
    with pytest.raises(ValidationError, match="same"):
        AssistantMessage(tool_calls=calls)


def test_types_tool_call_arguments_must_be_a_json_object():
    with pytest.raises(ValidationError):
        ToolCall(id="c1", name="read", arguments=["not", "an", "object"])  # type: ignore[arg-type]


def test_types_turn_to_message_keeps_text_and_calls():
    call = ToolCall(id="c1", name="read", arguments={"path": "a"})
    message = AssistantTurn(text="Reading.", tool_calls=[call]).to_message()
    assert message == AssistantMessage(content="Reading.", tool_calls=[call])


def test_types_tool_output_answers_the_call_it_belongs_to():
    call = ToolCall(id="call_7", name="read")
    assert ToolOutput.ok("fine").to_message(call) == ToolResultMessage(
        tool_call_id="call_7", content="fine"
    )
    failed = ToolOutput.error("no such file").to_message(call)
    assert failed.is_error and failed.tool_call_id == "call_7"


def test_types_definition_builder_adds_required_and_optional_parameters():
    base = ToolDefinition(name="read", description="Read a file.")
    built = base.param("path", "string", "The file.").param(
        "limit", "integer", "Lines to read.", required=False
    )
    assert built.parameters["type"] == "object"
    assert built.parameters["properties"]["path"] == {"type": "string", "description": "The file."}
    assert built.parameters["properties"]["limit"]["type"] == "integer"
    assert built.required == ("path",)
    # Each step returns a new definition; the one you started from is unchanged.
    assert base.parameters["properties"] == {}


def test_types_definition_param_raw_takes_any_schema_and_refuses_duplicates():
    mode = {"type": "string", "enum": ["fast", "careful"]}
    built = ToolDefinition(name="run", description="Run.").param_raw("mode", mode)
    assert built.parameters["properties"]["mode"]["enum"] == ["fast", "careful"]
    mode["enum"].append("changed later")
    assert built.parameters["properties"]["mode"]["enum"] == ["fast", "careful"]
    with pytest.raises(ValueError, match="mode"):
        built.param("mode", "string", "again")


def test_types_definition_from_a_pydantic_model():
    class ReadArgs(BaseModel):
        path: str = Field(description="The file to read.")
        offset: int = Field(default=0, ge=0, description="First line.")

    definition = ToolDefinition.from_model("read", "Read a file.", ReadArgs)
    properties = definition.parameters["properties"]
    assert properties["path"]["description"] == "The file to read."
    assert properties["offset"]["minimum"] == 0
    assert definition.required == ("path",)
    assert "title" not in definition.parameters
    assert "title" not in properties["path"]


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.are.not.allowed"])
def test_types_definition_rejects_names_the_apis_refuse(name):
    with pytest.raises(ValidationError):
        ToolDefinition(name=name, description="d")


def test_types_usage_adds_up_and_keeps_unknown_cost_unknown():
    a = TokenUsage(input_tokens=100, output_tokens=20, cost=Decimal("0.0010"))
    b = TokenUsage(input_tokens=50, output_tokens=5)
    total = a + b
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (150, 25, 175)
    assert total.cost == Decimal("0.0010")
    assert (b + TokenUsage()).cost is None


class EchoTool:
    definition = ToolDefinition(name="echo", description="Echo.").param("text", "string", "t")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput.ok(arguments["text"])


def test_types_toolset_looks_up_by_name_and_refuses_duplicates():
    tools = ToolSet([EchoTool()])
    assert "echo" in tools and len(tools) == 1
    assert tools.names == ("echo",)
    assert tools.definitions() == [EchoTool.definition]
    assert tools.get("missing") is None
    with pytest.raises(KeyError, match="echo"):
        tools["missing"]
    with pytest.raises(ValueError, match="echo"):
        tools.add(EchoTool())


def test_types_protocols_are_structural():
    class Answerer:
        async def complete(self, messages, tools):
            return AssistantTurn(text="42")

    assert isinstance(Answerer(), Provider)
    assert isinstance(EchoTool(), Tool)
    assert not isinstance(object(), Provider)


TEXT = st.text(max_size=40)
"""Message text: long enough for any character and for escapes, short enough to be quick."""
json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
arguments = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=5),
    max_size=3,
)
tool_calls = st.builds(
    ToolCall,
    id=st.uuids().map(str),
    name=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    arguments=arguments,
)
messages = st.one_of(
    st.builds(SystemMessage, content=TEXT),
    st.builds(UserMessage, content=TEXT),
    st.builds(
        AssistantMessage,
        content=TEXT,
        tool_calls=st.lists(tool_calls, max_size=3, unique_by=lambda c: c.id),
    ),
    st.builds(
        ToolResultMessage,
        tool_call_id=st.text(min_size=1, max_size=12),
        content=TEXT,
        is_error=st.booleans(),
    ),
)


@given(st.lists(messages, max_size=8))
def test_types_any_conversation_survives_a_json_round_trip(conversation):
    assert load_messages(dump_messages(conversation)) == conversation
