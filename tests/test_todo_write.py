"""ch20 · The ``todo_write`` tool: Claude Code's TodoWrite, the model's plan as a list.

The whole list replaced at each call; the fields and statuses as Claude Code has them; at
most one item in progress; a ``TodosChanged`` event for each change (a Hypothesis property
checks the list against a model of it); the rendering; the permissions; and the event reaching
the observers of the agent the ``claw`` command builds, before the call's result.
"""

from pathlib import Path
from typing import Any

import pytest
from claw_command import calls, says
from hypothesis import given
from hypothesis import strategies as st

from claw.assemble import build_agent
from claw.control import Controls
from claw.events import Event, TodosChanged, ToolResult
from claw.permissions import Approval, Mode, Permissions
from claw.providers.openrouter import OpenRouterProvider
from claw.tools.ask import ScriptedAnswers
from claw.tools.todo_write import TodoItem, TodoList, TodoWriteTool, render, todos
from claw.types import ToolCall, ToolSet
from clawbook.harness.loopback import LoopbackServer

STATUSES = ("pending", "in_progress", "completed")


def item(content: str, status: str = "pending", active: str | None = None) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active or f"Doing: {content}"}


PLAN = [
    item("Read the failing test", "completed", "Reading the failing test"),
    item("Fix the parser", "in_progress", "Fixing the parser"),
    item("Run the tests", "pending", "Running the tests"),
]


async def test_todo_write_replaces_the_whole_list_and_answers_with_it() -> None:
    tool = TodoWriteTool()
    await tool.run({"todos": [item("Old task", "in_progress")]})

    output = await tool.run({"todos": PLAN})

    assert not output.is_error
    assert output.content == (
        "Todo list updated (3 items: 1 completed, 1 in progress, 1 pending):\n"
        "[x] Read the failing test\n"
        "[>] Fixing the parser\n"
        "[ ] Run the tests"
    )
    assert [i.content for i in tool.todos.items] == [
        "Read the failing test", "Fix the parser", "Run the tests"
    ]
    assert tool.todos.current == TodoItem.model_validate(PLAN[1])
    assert (await tool.run({"todos": []})).content == "Todo list updated (0 items):\n(no todos)"
    assert tool.todos.items == ()
    one = await tool.run({"todos": [item("Run the tests")]})
    assert one.content == "Todo list updated (1 item: 1 pending):\n[ ] Run the tests"
    assert todos(ToolSet([tool])) is tool.todos
    assert todos(ToolSet([])) is None  # an agent without todo_write has no list


async def test_todo_two_items_in_progress_are_refused_and_nothing_changes() -> None:
    tool = TodoWriteTool()
    await tool.run({"todos": PLAN})
    before = tool.todos.items

    output = await tool.run(
        {"todos": [item("Write the parser", "in_progress"), item("Run the tests", "in_progress")]}
    )

    assert output.is_error
    assert output.content == (
        "todo_write refused the list: 2 items are in_progress ('Write the parser', "
        "'Run the tests'); at most one may be. Nothing was changed; send the whole list "
        "again with one item in_progress."
    )
    assert tool.todos.items == before


async def test_todo_items_have_claude_codes_fields_and_statuses() -> None:
    tool = TodoWriteTool()
    assert not (await tool.run({"todos": PLAN})).is_error
    schema = tool.definition.parameters
    fields = schema["properties"]["todos"]["items"]

    assert schema["required"] == ["todos"]
    assert set(fields["properties"]) == {"content", "status", "activeForm"}
    assert sorted(fields["required"]) == ["activeForm", "content", "status"]
    assert fields["properties"]["status"]["enum"] == list(STATUSES)
    for bad, problem in [
        ({"content": "x", "status": "pending"}, "todos[0].activeForm: missing"),
        (item("", "pending"), "todos[0].content: String should have at least 1 character"),
        (item("x", "done"), "todos[0].status: Input should be 'pending', 'in_progress' or"),
        ({**item("x"), "priority": "high"}, "todos[0].priority: Extra inputs are not permitted"),
    ]:
        output = await tool.run({"todos": [bad]})
        assert output.is_error and problem in output.content
    assert [i.content for i in tool.todos.items] == [p["content"] for p in PLAN]


async def test_todo_render_shows_the_active_form_of_the_item_in_progress() -> None:
    tool = TodoWriteTool()
    await tool.run({"todos": PLAN})

    assert render(tool.todos.items).splitlines()[1] == "[>] Fixing the parser"
    assert render([TodoItem.model_validate(item("Ship it", "completed"))]) == "[x] Ship it"
    assert render([]) == "(no todos)"


async def test_todo_each_change_is_announced_and_an_equal_list_is_not() -> None:
    seen: list[Event] = []
    todo_list = TodoList()
    todo_list.subscribe(seen.append)
    tool = TodoWriteTool(todo_list)

    await tool.run({"todos": PLAN})
    await tool.run({"todos": PLAN})  # the same list again: no change
    await tool.run({"todos": [item("a", "in_progress"), item("b", "in_progress")]})  # refused
    done = [{**p, "status": "completed"} for p in PLAN]
    await tool.run({"todos": done})

    assert seen == [
        TodosChanged(tuple(TodoItem.model_validate(p) for p in PLAN)),
        TodosChanged(tuple(TodoItem.model_validate(p) for p in done)),
    ]
    fresh = TodoList()
    items = [TodoItem.model_validate(p) for p in PLAN]
    assert fresh.replace(items) is True, "a change"
    assert fresh.replace(list(items)) is False, "the same list again: no change"


items_strategy = st.lists(
    st.builds(
        item,
        st.sampled_from(["Read", "Fix", "Test", "Ship"]),
        st.sampled_from(STATUSES),
    ),
    max_size=4,
)


@pytest.mark.timeout(30)  # a hundred runs of the tool: seconds on a busy machine
@given(st.lists(items_strategy, max_size=6))
async def test_todo_the_list_is_always_the_last_accepted_one(
    lists: list[list[dict[str, str]]],
) -> None:
    events: list[Event] = []
    todo_list = TodoList()
    todo_list.subscribe(events.append)
    tool = TodoWriteTool(todo_list)
    expected: tuple[TodoItem, ...] = ()
    changes = 0

    for sent in lists:
        output = await tool.run({"todos": sent})
        busy = sum(1 for i in sent if i["status"] == "in_progress")
        assert output.is_error is (busy > 1)
        if busy <= 1:
            new = tuple(TodoItem.model_validate(i) for i in sent)
            changes += new != expected
            expected = new
        assert todo_list.items == expected
        assert sum(1 for i in todo_list.items if i.status == "in_progress") <= 1

    assert len(events) == changes


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.PLAN, Mode.DONT_ASK])
async def test_todo_needs_no_approval_but_a_deny_rule_holds(tmp_path: Path, mode: Mode) -> None:
    async def approver(call: ToolCall, why: str) -> Approval:
        raise AssertionError(f"asked about {call.name}: {why}")

    tool = TodoWriteTool()
    tools = ToolSet([tool])
    call = ToolCall(id="c1", name="todo_write", arguments={"todos": PLAN})

    allowed = Controls(tools, checks=[Permissions(tmp_path, mode=mode, approve=approver).check])
    assert not (await allowed(call)).is_error
    assert len(tool.todos.items) == 3

    denying = Permissions(tmp_path, mode=mode, deny=["TodoWrite"], approve=approver)
    refused = await Controls(tools, checks=[denying.check])(
        ToolCall(id="c2", name="todo_write", arguments={"todos": []})
    )
    assert refused.is_error and 'the deny rule "TodoWrite" matches' in refused.content
    assert len(tool.todos.items) == 3


async def test_todo_the_claw_agent_tells_its_observers_before_the_result(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    server.add(calls("todo_write", {"todos": PLAN}), says("Working on the parser."))
    seen: list[Any] = []

    async with OpenRouterProvider("test/model", base_url=server.base_url, api_key="k") as provider:
        agent = build_agent(provider, tmp_path, ask=ScriptedAnswers([]))
        agent.sink.add(seen.append)
        finished = await agent.run("Fix the parser.")

    assert finished.reason == "done"
    kinds = [type(event) for event in seen if isinstance(event, TodosChanged | ToolResult)]
    assert kinds == [TodosChanged, ToolResult]
    [changed] = [event for event in seen if isinstance(event, TodosChanged)]
    found = todos(agent.tools)
    assert found is not None and changed.todos == found.items
    assert [i.activeForm for i in found.items] == [p["activeForm"] for p in PLAN]
    assert {"ask_user", "remember", "recall", "todo_write"} <= set(agent.tools.names)
