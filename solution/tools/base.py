"""The shape of a claw tool: arguments declared as a pydantic model, checked before the tool runs.

A tool names its arguments in a pydantic model. The JSON Schema the model is shown comes from
that model (descriptions, enums, defaults and bounds included), and the arguments the model
sends are validated with it before the tool does anything. Arguments that do not fit never
reach the tool: they come back to the model as an error result, one short line per problem,
saying which argument, what was expected and what was sent, so the next call can be right.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..types import ToolDefinition, ToolOutput

A = TypeVar("A", bound=BaseModel)

MAX_PROBLEMS = 10
"""How many problems a validation error lists; the rest are counted, not shown."""

MAX_INPUT_CHARS = 60
"""How much of a wrong value is quoted back to the model."""

DATA_KEYWORDS = frozenset({"default", "const", "enum", "examples"})
"""Schema keywords whose values are data, not schemas: nothing inside them is a title or a $ref."""


class ToolArguments(BaseModel):
    """The base of a tool's argument model: an argument the model made up is an error.

    A plain ``BaseModel`` drops names it does not know without a word, so a model that writes
    ``start_line`` for ``offset`` would never learn that its choice was ignored. With
    ``extra="forbid"`` it hears so, and the schema says ``"additionalProperties": false``.
    """

    model_config = ConfigDict(extra="forbid")


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of ``model``, made plain for a tool's ``parameters``.

    pydantic writes a nested model or an ``Enum`` once, under ``$defs``, and points to it with
    ``$ref``. Not every provider follows references, so each one is replaced by a copy of what
    it points to. The ``title`` pydantic gives every field and model is dropped (it repeats the
    name), and ``properties`` and ``required`` are always there. A model that contains itself
    cannot be written out this way and is refused with a ``ValueError``. Values that are data
    (a ``default``, an ``enum``) are copied as they are, even a dict with a ``"title"`` key.
    """
    # region ch06: inline every "$ref" from "$defs", drop the titles, always give the two keys
    # more: a recursive helper; `seen`: the definitions on the current path; DATA_KEYWORDS as is
    schema = model.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs", {})

    def plain(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [plain(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in seen:
                raise ValueError(
                    f"{model.__name__} refers to {name} inside {name}; a tool's arguments "
                    "cannot be recursive"
                )
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return plain({**definitions[name], **rest}, (*seen, name))
        return {
            key: value if key in DATA_KEYWORDS else plain(value, seen)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }

    result: dict[str, Any] = plain(schema, ())
    result.setdefault("properties", {})
    result.setdefault("required", [])
    return result
    # endregion


_SCHEMAS: dict[type[BaseModel], str] = {}


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """``tool_schema(model)``, worked out once per model; each caller gets its own copy.

    A run asks for every tool's definition at each step, and pydantic takes about a millisecond
    to write a model's schema, which never changes. It is kept as JSON text: parsing it gives a
    fresh copy five times faster than ``copy.deepcopy`` (a fifth of a run's CPU went there).
    """
    text = _SCHEMAS.get(model)
    if text is None:
        text = _SCHEMAS[model] = json.dumps(tool_schema(model))
    schema: dict[str, Any] = json.loads(text)
    return schema


def show_input(value: Any) -> str:
    """``value`` as the model wrote it (JSON), cut to ``MAX_INPUT_CHARS`` characters."""
    # region ch06: JSON for what JSON can say, repr for the rest; cut long text with an ellipsis
    # more: json.dumps(value, ensure_ascii=False) raises TypeError for what is not JSON
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > MAX_INPUT_CHARS:
        text = text[: MAX_INPUT_CHARS - 1] + "…"
    return text
    # endregion


def explain_validation_error(
    tool: str, error: ValidationError, fields: tuple[str, ...] = ()
) -> str:
    """What was wrong with a call of ``tool``, for the model: a heading and one line a problem.

    Each line names the argument (``items[2].path`` for one inside a list), says what was
    expected in pydantic's words and quotes what was sent::

        invalid arguments for read:
        - offset: Input should be greater than or equal to 1 (got 0)
        - path: missing (a required argument)
        - colour: not an argument of read (its arguments: path, offset, limit)

    ``fields`` are the tool's argument names, listed for an unknown argument (one inside a
    nested object gets pydantic's words). No link to pydantic's documentation: the model cannot
    follow it. At most ``MAX_PROBLEMS`` lines, then a count of the rest.
    """
    # region ch06: one "- where: what (got value)" line per problem; "missing" and "extra" differ
    # more: error.errors(include_url=False) gives "loc", "msg", "type", "input"; ints in loc are [i]
    lines = [f"invalid arguments for {tool}:"]
    problems = error.errors(include_url=False)
    for problem in problems[:MAX_PROBLEMS]:
        loc = problem["loc"]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        where = where.removeprefix(".") or "(the arguments)"
        if problem["type"] == "missing":
            lines.append(f"- {where}: missing (a required argument)")
        elif problem["type"] == "extra_forbidden" and len(loc) == 1:
            known = f" (its arguments: {', '.join(fields)})" if fields else ""
            lines.append(f"- {where}: not an argument of {tool}{known}")
        else:
            lines.append(f"- {where}: {problem['msg']} (got {show_input(problem['input'])})")
    if len(problems) > MAX_PROBLEMS:
        lines.append(f"- … and {len(problems) - MAX_PROBLEMS} more")
    return "\n".join(lines)
    # endregion


class ArgumentsTool(Generic[A]):
    """A tool whose arguments are the pydantic model ``Arguments``.

    A subclass sets ``name``, ``description`` and ``Arguments`` (best a ``ToolArguments``, so
    that made-up arguments are refused), and writes ``call``, which receives arguments already
    validated and typed. ``run``, what the loop calls, does the
    validation: arguments that do not fit become an error result and ``call`` never runs.
    """

    name: ClassVar[str]
    """The tool's name, as the model calls it."""
    description: ClassVar[str]
    """What the tool does and when to use it, for the model."""
    Arguments: type[A]
    """The pydantic model of the arguments."""

    @property
    def definition(self) -> ToolDefinition:
        """How the tool is described to the model: its schema comes from ``Arguments``."""
        return ToolDefinition(
            name=self.name, description=self.description, parameters=schema_of(self.Arguments)
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Validate ``arguments`` with ``Arguments``, then ``call`` the tool with them."""
        try:
            args = self.Arguments.model_validate(arguments)
        except ValidationError as error:
            fields = tuple(self.Arguments.model_fields)
            return ToolOutput.error(explain_validation_error(self.name, error, fields))
        return await self.call(args)

    async def call(self, args: A) -> ToolOutput:
        """Do the tool's work with validated ``args``; report failures as ``ToolOutput.error``."""
        raise NotImplementedError(f"{type(self).__name__} must define call()")
