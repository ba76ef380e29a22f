"""ch06 · The tool interface: argument models, their JSON Schema, and errors the model can read.

A tool declares its arguments as a pydantic model. ``tool_schema`` turns the model into the plain
JSON Schema a provider sends (no ``$ref``, no titles); ``ArgumentsTool.run`` validates what the
model sent, and ``explain_validation_error`` turns a ``ValidationError`` into a short error result
written for the model. The last tests run the whole way: a scripted model sends bad arguments,
reads the explanation, and corrects itself, through ``MockProvider`` and through real HTTP.
"""

import json
import random
import string
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field, ValidationError

from claw.agent import Finish, SimpleAgent
from claw.mock import MockProvider
from claw.providers.http import HTTPLimits, RetryPolicy
from claw.providers.openrouter import OpenRouterProvider
from claw.tools.base import (
    MAX_INPUT_CHARS,
    MAX_PROBLEMS,
    ArgumentsTool,
    ToolArguments,
    explain_validation_error,
    show_input,
    tool_schema,
)
from claw.tools.read import ReadArguments, ReadTool
from claw.types import (
    AssistantTurn,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    dump_messages,
    load_messages,
)
from clawbook.harness.loopback import MODEL, JSONReply, LoopbackServer, completion, tool_call

HEADING = "invalid arguments for read:"
READ_FIELDS = "(its arguments: path, offset, limit)"


# ---------------------------------------------------------------- argument models of the tests


class SearchArguments(ToolArguments):
    """What to search for, and where."""

    pattern: str = Field(min_length=1, description="A regular expression to look for.")
    path: str = Field(default=".", description="The folder to search, relative to the workspace.")
    output: Literal["lines", "files", "count"] = Field(
        default="lines", description="What to show for each match."
    )
    max_results: int = Field(default=100, ge=1, le=1000, description="Stop after this many.")
    ignore_case: bool = Field(default=False, description="Match upper and lower case alike.")


class Position(ToolArguments):
    """A place in a file."""

    line: int = Field(ge=1, description="The line, from 1.")
    column: int = Field(default=1, ge=1, description="The column, from 1.")


class Replacement(ToolArguments):
    """One exact replacement."""

    old: str = Field(min_length=1, description="The exact text to replace.")
    new: str = Field(description="What to put in its place.")


class Encoding(StrEnum):
    """How the file is written."""

    UTF8 = "utf-8"
    LATIN1 = "latin-1"


class EditArguments(ToolArguments):
    """Which file to change, and how."""

    path: str = Field(description="The file to change.")
    edits: list[Replacement] = Field(min_length=1, description="The replacements, in order.")
    start: Position = Field(description="Where the edits start.")
    end: Position | None = Field(default=None, description="Where they stop (default: the end).")
    encoding: Encoding = Encoding.UTF8


class NoteArguments(ToolArguments):
    """A note to keep."""

    title: str = Field(description="The note's title.")
    meta: dict[str, str] = Field(default={"title": "Untitled"}, description="Free-form labels.")


class Node(ToolArguments):
    """A tree: a name and more trees."""

    name: str
    children: list["Node"] = Field(default_factory=list)


class Folder(ToolArguments):
    """A folder, whose files point back to it."""

    files: list["File"] = Field(default_factory=list)


class File(ToolArguments):
    """A file in a folder."""

    name: str
    folder: Folder | None = None


class Counting(ArgumentsTool[SearchArguments]):
    """A search tool that only counts how often ``call`` runs, and keeps what it was given."""

    name = "search"
    description = "Search files for a regular expression."
    Arguments = SearchArguments

    def __init__(self) -> None:
        self.calls: list[SearchArguments] = []

    async def call(self, args: SearchArguments) -> ToolOutput:
        self.calls.append(args)
        return ToolOutput.ok(f"searched for {args.pattern}")


class Editing(ArgumentsTool[EditArguments]):
    """An edit tool that never edits: it reports how many replacements it was given."""

    name = "edit"
    description = "Replace exact text in a file."
    Arguments = EditArguments

    async def call(self, args: EditArguments) -> ToolOutput:
        return ToolOutput.ok(f"{len(args.edits)} edits")


def walk(node: Any):
    """Every dict inside ``node``, ``node`` included."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def schema_nodes(schema: dict[str, Any]):
    """Every dict of ``schema`` that is itself a schema (not a default or an enum's data)."""
    yield schema
    for key, value in schema.items():
        if key == "properties":
            for sub in value.values():
                yield from schema_nodes(sub)
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            yield from schema_nodes(value)
        elif key in ("anyOf", "oneOf", "allOf"):
            for sub in value:
                yield from schema_nodes(sub)


def explain(model: type, arguments: Any, tool: str = "read") -> str:
    """The explanation of why ``arguments`` do not fit ``model``."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(arguments)
    return explain_validation_error(tool, caught.value, tuple(model.model_fields))


# ---------------------------------------------------------------- the schema


def test_tool_schema_keeps_descriptions_defaults_bounds_and_literal_choices():
    definition = Counting().definition
    assert definition == ToolDefinition(
        name="search",
        description="Search files for a regular expression.",
        parameters=tool_schema(SearchArguments),
    )
    assert definition.parameters == {
        "type": "object",
        "description": "What to search for, and where.",
        "additionalProperties": False,
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "A regular expression to look for.",
            },
            "path": {
                "type": "string",
                "default": ".",
                "description": "The folder to search, relative to the workspace.",
            },
            "output": {
                "type": "string",
                "enum": ["lines", "files", "count"],
                "default": "lines",
                "description": "What to show for each match.",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "default": 100,
                "description": "Stop after this many.",
            },
            "ignore_case": {
                "type": "boolean",
                "default": False,
                "description": "Match upper and lower case alike.",
            },
        },
        "required": ["pattern"],
    }


def test_tool_schema_inlines_nested_models_and_enums_leaving_no_ref_or_defs():
    schema = tool_schema(EditArguments)
    assert not [node for node in walk(schema) if "$ref" in node or "$defs" in node]
    properties = schema["properties"]
    assert properties["edits"]["items"] == {
        "type": "object",
        "description": "One exact replacement.",
        "additionalProperties": False,
        "properties": {
            "old": {"type": "string", "minLength": 1, "description": "The exact text to replace."},
            "new": {"type": "string", "description": "What to put in its place."},
        },
        "required": ["old", "new"],
    }
    start = properties["start"]
    assert start["type"] == "object"
    assert start["description"] == "Where the edits start.", "the field's description wins"
    assert start["properties"]["line"] == {
        "type": "integer",
        "minimum": 1,
        "description": "The line, from 1.",
    }
    assert start["required"] == ["line"]
    # A model used twice (start, and inside end's anyOf) is copied twice: it is not recursive.
    position, null = properties["end"]["anyOf"]
    assert position["properties"] == start["properties"]
    assert null == {"type": "null"}
    assert properties["encoding"] == {
        "type": "string",
        "enum": ["utf-8", "latin-1"],
        "description": "How the file is written.",
        "default": "utf-8",
    }
    assert schema["required"] == ["path", "edits", "start"]


def test_tool_schema_drops_generated_titles_but_keeps_a_property_named_title():
    schema = tool_schema(NoteArguments)
    assert [node for node in schema_nodes(schema) if "title" in node] == []
    assert schema["properties"]["title"] == {"type": "string", "description": "The note's title."}
    assert schema["required"] == ["title"]
    assert schema["properties"]["meta"]["default"] == {"title": "Untitled"}, (
        "a default is data: its keys are copied as they are, even one named title"
    )
    assert not [n for n in schema_nodes(tool_schema(EditArguments)) if "title" in n]


def test_tool_schema_always_has_properties_and_required():
    class NoArguments(ToolArguments):
        """Nothing to say."""

    class AllOptional(ToolArguments):
        """Everything has a default."""

        verbose: bool = False

    assert tool_schema(NoArguments) == {
        "type": "object",
        "description": "Nothing to say.",
        "additionalProperties": False,
        "properties": {},
        "required": [],
    }
    optional = tool_schema(AllOptional)
    assert optional["required"] == []
    assert optional["properties"] == {"verbose": {"type": "boolean", "default": False}}


def test_tool_schema_refuses_a_recursive_model_with_value_error():
    with pytest.raises(ValueError, match="recursive"):
        tool_schema(Node)
    with pytest.raises(ValueError, match="recursive"):
        tool_schema(Folder)  # Folder → File → Folder


def test_tool_read_definition_is_the_schema_of_its_arguments():
    definition = ReadTool(max_lines=30).definition
    assert definition.parameters == tool_schema(ReadArguments)
    assert definition.parameters["properties"]["offset"] == {
        "type": "integer",
        "minimum": 1,
        "default": 1,
        "description": "The first line to show (1 is the first).",
    }
    assert definition.parameters["additionalProperties"] is False


# ---------------------------------------------------------------- explaining a validation error


async def test_tool_explains_a_missing_argument_and_a_wrong_type_one_line_each(tmp_path):
    output = await ReadTool(tmp_path).run({"offset": "ten"})
    assert output.is_error
    assert output.content == (
        "invalid arguments for read:\n"
        "- path: missing (a required argument)\n"
        "- offset: Input should be a valid integer, unable to parse string as an integer "
        '(got "ten")'
    )


async def test_tool_explains_bounds_and_literal_choices_in_pydantic_words():
    tool = Counting()
    output = await tool.run({"pattern": "TODO", "output": "matches", "max_results": 5000})
    assert output == ToolOutput.error(
        "invalid arguments for search:\n"
        "- output: Input should be 'lines', 'files' or 'count' (got \"matches\")\n"
        "- max_results: Input should be less than or equal to 1000 (got 5000)"
    )
    assert tool.calls == []


async def test_tool_an_invented_argument_is_named_with_the_real_arguments(tmp_path):
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    output = await ReadTool(tmp_path).run({"path": "notes.txt", "start_line": 2})
    assert output.is_error, "an unknown argument is refused, not silently ignored"
    assert output.content == (
        "invalid arguments for read:\n"
        "- start_line: not an argument of read (its arguments: path, offset, limit)"
    )


async def test_tool_a_problem_inside_a_list_is_located_like_edits_1_old():
    arguments = {
        "path": "app.py",
        "edits": [{"old": "a", "new": "b", "colour": True}, {"new": "c"}, {"old": "", "new": 3}],
        "start": {"line": 0},
    }
    output = await Editing().run(arguments)
    assert output.is_error
    lines = output.content.splitlines()
    assert lines[0] == "invalid arguments for edit:"
    assert sorted(lines[1:]) == sorted(
        [
            "- edits[0].colour: Extra inputs are not permitted (got true)",
            "- edits[1].old: missing (a required argument)",
            "- edits[2].old: String should have at least 1 character (got \"\")",
            "- edits[2].new: Input should be a valid string (got 3)",
            "- start.line: Input should be greater than or equal to 1 (got 0)",
        ]
    )


def test_tool_a_value_that_is_not_an_object_is_explained_as_the_arguments():
    text = explain(ReadArguments, ["notes.txt"])
    assert text.splitlines() == [
        HEADING,
        "- (the arguments): Input should be a valid dictionary or instance of ReadArguments "
        '(got ["notes.txt"])',
    ]


def test_tool_show_input_quotes_json_and_cuts_long_values_with_an_ellipsis():
    assert show_input("naïve ✓") == '"naïve ✓"', "JSON as the model wrote it, not \\u escapes"
    assert show_input(None) == "null"
    assert show_input({"a": [1, True]}) == '{"a": [1, true]}'
    assert show_input(b"\x00") == "b'\\x00'", "what JSON cannot say is shown with repr"
    long = show_input("x" * 500)
    assert len(long) == MAX_INPUT_CHARS
    assert long == '"' + "x" * (MAX_INPUT_CHARS - 2) + "…"
    text = explain(ReadArguments, {"path": "a.txt", "offset": "y" * 10_000})
    line = text.splitlines()[1]
    assert line.startswith("- offset: Input should be a valid integer")
    assert line.endswith("…)") and len(line) < 200


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=80),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@given(JSON_VALUES)
def test_tool_show_input_is_the_json_whole_when_it_fits_else_its_cut_start(value):
    whole = json.dumps(value, ensure_ascii=False)
    shown = show_input(value)
    if len(whole) <= MAX_INPUT_CHARS:
        assert shown == whole
    else:
        assert len(shown) == MAX_INPUT_CHARS
        assert shown == whole[: MAX_INPUT_CHARS - 1] + "…"


async def test_tool_no_pydantic_link_or_internals_reach_the_model(tmp_path):
    output = await Editing().run({"path": 7, "edits": [], "start": "top", "colour": "red"})
    assert output.is_error
    assert "https://errors.pydantic.dev" not in output.content
    assert "For further information" not in output.content
    assert "[type=" not in output.content and "input_value" not in output.content
    assert "validation error" not in output.content, "pydantic's own heading is not the heading"
    assert output.content.startswith("invalid arguments for edit:\n- ")
    assert len(output.content.splitlines()) == 1 + 4


def test_tool_more_than_max_problems_are_counted_not_listed():
    many = {f"extra_{n:02}": n for n in range(MAX_PROBLEMS + 7)}
    lines = explain(ReadArguments, {"path": "a.txt", **many}).splitlines()
    assert len(lines) == 1 + MAX_PROBLEMS + 1
    assert lines[1] == f"- extra_00: not an argument of read {READ_FIELDS}"
    assert lines[-1] == "- … and 7 more"


@settings(max_examples=examples(60))
@given(st.integers(max_value=0))
def test_tool_any_offset_below_1_gives_exactly_one_line_naming_offset(offset):
    text = explain(ReadArguments, {"path": "notes.txt", "offset": offset})
    assert text.splitlines() == [
        HEADING,
        f"- offset: Input should be greater than or equal to 1 (got {offset})",
    ]


NAMES = st.text(string.ascii_lowercase + "_", min_size=1, max_size=12).filter(
    lambda name: name not in ReadArguments.model_fields
)


@settings(max_examples=examples(60))
@given(st.dictionaries(NAMES, JSON_VALUES, min_size=1, max_size=MAX_PROBLEMS))
def test_tool_every_invented_argument_gets_its_own_line(invented):
    text = explain(ReadArguments, {"path": "notes.txt", **invented})
    assert text.splitlines()[0] == HEADING
    assert sorted(text.splitlines()[1:]) == sorted(
        f"- {name}: not an argument of read {READ_FIELDS}" for name in invented
    )


async def test_tool_call_never_runs_when_the_arguments_do_not_fit():
    tool = Counting()
    for bad in [{}, {"pattern": ""}, {"pattern": "x", "max_results": 0}, {"pattern": "x", "n": 1}]:
        output = await tool.run(bad)
        assert output.is_error
        assert output.content.startswith("invalid arguments for search:\n- ")
    assert tool.calls == []
    output = await tool.run({"pattern": "TODO", "max_results": 3})
    assert output == ToolOutput.ok("searched for TODO")
    assert tool.calls == [SearchArguments(pattern="TODO", max_results=3)]


class Unfinished(ArgumentsTool[SearchArguments]):
    """A tool whose author forgot to write ``call``."""

    name = "search"
    description = "Search the workspace."
    Arguments = SearchArguments


async def test_tool_a_tool_without_call_validates_then_names_itself_as_unfinished():
    tool = Unfinished()
    output = await tool.run({})
    assert output.is_error
    assert output.content.startswith("invalid arguments for search:\n- pattern: missing")
    with pytest.raises(NotImplementedError, match="Unfinished"):
        await tool.run({"pattern": "TODO"})


# ---------------------------------------------------------------- the whole way round


def read_turn(call_id: str, **arguments: Any) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id=call_id, name="read", arguments=arguments)])


async def test_tool_the_loop_goes_on_and_the_model_corrects_its_arguments(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\ncall the plumber\nwater the plants\n")
    provider = MockProvider(
        [
            read_turn("call_1", path="notes.txt", offset=0, lines=2),
            read_turn("call_2", path="notes.txt", offset=2, limit=1),
            "Line 2 says: call the plumber.",
        ]
    )
    agent = SimpleAgent(provider, [ReadTool(tmp_path)])
    result = await agent.run("What is on line 2 of notes.txt?")
    assert result.finish is Finish.DONE
    assert result.steps == 3
    failed, read = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    assert failed == ToolResultMessage(
        tool_call_id="call_1",
        is_error=True,
        content=(
            "invalid arguments for read:\n"
            "- offset: Input should be greater than or equal to 1 (got 0)\n"
            f"- lines: not an argument of read {READ_FIELDS}"
        ),
    )
    assert failed in provider.calls[1].messages, "the model reads the explanation next turn"
    assert read.is_error is False
    assert read.content.startswith("     2\tcall the plumber")
    again = load_messages(dump_messages(agent.history))
    assert again == agent.history
    assert [m.is_error for m in again if isinstance(m, ToolResultMessage)] == [True, False]


async def test_tool_the_explanation_travels_to_the_wire_as_error_text(
    tmp_path: Path, server: LoopbackServer
):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    first = tool_call("call_a", "read", {"path": "notes.txt", "limit": 0})
    second = tool_call("call_b", "read", {"path": "notes.txt"})
    server.add(
        JSONReply(completion(None, tool_calls=[first])),
        JSONReply(completion(None, tool_calls=[second])),
        JSONReply(completion("It holds alpha and beta.")),
    )
    provider = OpenRouterProvider(
        MODEL,
        base_url=server.base_url,
        api_key="sk-or-v1-test",
        limits=HTTPLimits(retry=RetryPolicy(max_retries=0)),
        rng=random.Random(0),
    )
    agent = SimpleAgent(provider, [ReadTool(tmp_path)])
    result = await agent.run("What is in notes.txt?")
    assert result.text == "It holds alpha and beta."
    assert len(server.requests) == 3
    sent = server.requests[1].json["messages"][-1]
    assert sent == {
        "role": "tool",
        "tool_call_id": "call_a",
        "content": "Error: invalid arguments for read:\n"
        "- limit: Input should be greater than or equal to 1 (got 0)",
    }
    later = server.requests[2].json["messages"][-1]
    assert later["tool_call_id"] == "call_b"
    assert later["content"] == "     1\talpha\n     2\tbeta"


class NoArguments(ToolArguments):
    """A tool that takes no arguments at all."""


def test_tool_an_unknown_argument_of_a_tool_without_arguments_lists_none():
    assert explain(NoArguments, {"verbose": True}, "ping") == (
        "invalid arguments for ping:\n- verbose: not an argument of ping"
    )
