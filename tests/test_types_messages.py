"""ch04 · Messages and types. types.py is given complete, so these pass from the start: read them
as a specification of the vocabulary every later chapter speaks."""

import json
from decimal import Decimal
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from claw.types import (
    MESSAGES,
    AssistantMessage,
    AssistantTurn,
    CacheControl,
    DeveloperMessage,
    Message,
    Provider,
    StopReason,
    SystemMessage,
    TextPart,
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
            {"role": "developer", "content": "d"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "content": "a"},
            {"role": "tool", "tool_call_id": "c1", "content": "t"},
        ]
    )
    kinds = [type(m) for m in parsed]
    assert kinds == [
        SystemMessage,
        DeveloperMessage,
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
    ]


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
parts = st.lists(
    st.builds(TextPart, text=st.text(min_size=1, max_size=20)), min_size=1, max_size=3
).map(tuple)
contents = TEXT | parts
cache_controls = st.none() | st.builds(CacheControl, ttl=st.sampled_from([None, "5m", "1h"]))


def with_breakpoint(kind: type[Any], **fields: Any) -> st.SearchStrategy[Any]:
    """Messages of ``kind``; a cache breakpoint only where there is text for it to mark."""
    return st.builds(
        lambda content, cache_control, **rest: kind(
            content=content,
            cache_control=cache_control if content_has_text(content) else None,
            **rest,
        ),
        content=contents,
        cache_control=cache_controls,
        **fields,
    )


def content_has_text(content: Any) -> bool:
    return bool(content if isinstance(content, str) else "".join(p.text for p in content))


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
    with_breakpoint(SystemMessage),
    with_breakpoint(DeveloperMessage),
    st.builds(UserMessage, content=contents),
    with_breakpoint(
        AssistantMessage,
        tool_calls=st.lists(tool_calls, max_size=3, unique_by=lambda c: c.id),
        reasoning_content=TEXT,
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


# The full message design: five kinds, constructors, content parts, cache breakpoints, reasoning.


def test_types_message_as_a_type_validates_to_the_five_classes():
    adapter = TypeAdapter(list[Message])
    parsed = adapter.validate_python([{"role": "developer", "content": "Use pytest."}])
    assert type(parsed[0]) is DeveloperMessage
    assert type(Message.model_validate({"role": "user", "content": "hi"})) is UserMessage
    restored = Message.model_validate_json(
        '{"role": "tool", "tool_call_id": "c1", "content": "ok"}'
    )
    assert restored == ToolResultMessage(tool_call_id="c1", content="ok")


def test_types_message_itself_cannot_be_built():
    with pytest.raises(TypeError, match="Message"):
        Message(role="user", content="hi")


def test_types_no_sixth_kind_of_message_can_be_added():
    with pytest.raises(TypeError, match="five"):

        class NoteMessage(Message):  # pragma: no cover - the class statement itself fails
            role: Literal["note"] = "note"


def test_types_constructors_build_each_kind():
    call = ToolCall(id="c1", name="read", arguments={"path": "a"})
    assert Message.system("Be brief.") == SystemMessage(content="Be brief.")
    assert Message.developer("Use pytest.") == DeveloperMessage(content="Use pytest.")
    assert Message.user("hi") == UserMessage(content="hi")
    assert Message.assistant("Reading.", tool_calls=[call]) == AssistantMessage(
        content="Reading.", tool_calls=(call,)
    )
    assert Message.tool_result("c1", "1\tbuy milk") == ToolResultMessage(
        tool_call_id="c1", content="1\tbuy milk"
    )
    failed = Message.tool_error("c1", "no such file: a")
    assert failed == ToolResultMessage(tool_call_id="c1", content="no such file: a", is_error=True)


def test_types_role_is_a_plain_string_naming_the_kind():
    built = [
        Message.system("s"),
        Message.developer("d"),
        Message.user("u"),
        Message.assistant("a"),
        Message.tool_result("c1", "t"),
    ]
    assert [m.role for m in built] == ["system", "developer", "user", "assistant", "tool"]
    assert all(type(m.role) is str for m in built)


def test_types_content_is_a_string_or_a_list_of_parts_with_a_text_view():
    as_parts = UserMessage(content=[{"type": "text", "text": "Read "}, TextPart(text="notes.txt")])
    assert as_parts.content == (TextPart(text="Read "), TextPart(text="notes.txt"))
    assert as_parts.text == "Read notes.txt"
    assert UserMessage(content="Read notes.txt").text == "Read notes.txt"
    assert Message.assistant([TextPart(text="Done.")]).text == "Done."
    assert Message.tool_result("c1", "output").text == "output"


def test_types_content_parts_must_be_known_and_not_empty():
    with pytest.raises(ValidationError):
        UserMessage(content=[])
    with pytest.raises(ValidationError):
        TextPart(text="")
    with pytest.raises(ValidationError):
        UserMessage(content=[{"type": "video", "url": "x"}])
    with pytest.raises(ValidationError):
        UserMessage(content=[{"type": "text", "text": "hi", "colour": "red"}])


def test_types_matching_on_a_class_unpacks_parts_and_strings_alike():
    def describe(message: Message) -> str:
        match message:
            case DeveloperMessage(text=text):
                return f"developer: {text}"
            case AssistantMessage(content=content, reasoning_content=reasoning) if reasoning:
                return f"assistant, after thinking: {content}"
            case _:
                return message.role

    assert describe(Message.developer([TextPart(text="Use "), TextPart(text="pytest.")])) == (
        "developer: Use pytest."
    )
    assert describe(Message.assistant("42", reasoning_content="6 * 7")) == (
        "assistant, after thinking: 42"
    )
    assert describe(Message.user("hi")) == "user"


def test_types_cache_breakpoints_go_on_system_developer_and_assistant_only():
    mark = CacheControl()
    assert mark.type == "ephemeral" and mark.ttl is None
    assert Message.system("Rules.", cache_control=mark).cache_control == mark
    assert Message.developer("Notes.", cache_control=mark).cache_control == mark
    assert Message.assistant("Done.", cache_control=mark).cache_control == mark
    with pytest.raises(ValidationError):
        UserMessage(content="hi", cache_control=mark)
    with pytest.raises(ValidationError):
        ToolResultMessage(tool_call_id="c1", content="x", cache_control=mark)


def test_types_a_cache_breakpoint_needs_text_to_mark():
    call = ToolCall(id="c1", name="read")
    with pytest.raises(ValidationError, match="cache_control"):
        SystemMessage(content="", cache_control=CacheControl())
    with pytest.raises(ValidationError, match="cache_control"):
        AssistantMessage(tool_calls=[call], cache_control=CacheControl())


def test_types_cache_control_knows_its_kinds_and_lifetimes():
    assert CacheControl(ttl="1h").ttl == "1h"
    with pytest.raises(ValidationError):
        CacheControl(type="forever")
    with pytest.raises(ValidationError):
        CacheControl(ttl="2h")


def test_types_reasoning_is_kept_apart_from_the_text():
    message = Message.assistant("It is 42.", reasoning_content="6 times 7 is 42.")
    assert message.text == "It is 42."
    assert message.reasoning_content == "6 times 7 is 42."
    assert Message.assistant("plain").reasoning_content == ""


def test_types_turn_to_message_keeps_the_reasoning():
    call = ToolCall(id="c1", name="read", arguments={"path": "a"})
    turn = AssistantTurn(text="Reading.", tool_calls=[call], reasoning="I need the file first.")
    message = turn.to_message()
    assert message == AssistantMessage(
        content="Reading.", tool_calls=(call,), reasoning_content="I need the file first."
    )


def test_types_usage_adds_up_cached_and_reasoning_tokens():
    first = TokenUsage(
        input_tokens=1000, output_tokens=300, cached_input_tokens=800, reasoning_tokens=250
    )
    second = TokenUsage(
        input_tokens=1200, output_tokens=100, cached_input_tokens=1000, reasoning_tokens=40
    )
    total = first + second
    assert (total.cached_input_tokens, total.reasoning_tokens) == (1800, 290)
    assert total.total_tokens == 2600, "reasoning is part of the output, not added to it"
    with pytest.raises(ValidationError):
        TokenUsage(reasoning_tokens=-1)


def test_types_every_new_field_survives_a_json_round_trip():
    call = ToolCall(id="c1", name="read", arguments={"path": "a"})
    original = [
        Message.system("Rules.", cache_control=CacheControl(ttl="1h")),
        Message.developer([TextPart(text="Use "), TextPart(text="pytest.")]),
        Message.user([TextPart(text="Read a.")]),
        Message.assistant(
            "Reading.",
            tool_calls=[call],
            reasoning_content="The file first.",
            cache_control=CacheControl(),
        ),
        Message.tool_error("c1", "no such file: a"),
    ]
    text = dump_messages(original)
    as_json = json.loads(text)
    assert as_json[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert as_json[1]["content"] == [
        {"type": "text", "text": "Use "},
        {"type": "text", "text": "pytest."},
    ]
    assert as_json[3]["reasoning_content"] == "The file first."
    restored = load_messages(text)
    assert restored == original
    assert [type(m) for m in restored] == [type(m) for m in original]
