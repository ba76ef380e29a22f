"""ch16 · Plan mode: read-only planning, a plan presented for approval, then execution.

The state machine alone (legal and illegal transitions, and every sequence of five events
checked against the table), the check that gates tools by their declared capability, the
``exit_plan_mode`` tool, and two sessions end to end: the real ``Agent``, the real ``EditTool``
and ``Controls``, driven by a scripted model.
"""

import itertools
from pathlib import Path
from typing import Any, ClassVar

import pytest

from claw.agent import Finish
from claw.control import Controls
from claw.loop import Agent
from claw.plan import (
    EXIT_PLAN_MODE,
    PLAN_MODE_NOTE,
    TRANSITIONS,
    PlanMode,
    PlanModeError,
    PlanState,
    plan_mode_message,
    plan_over_message,
)
from claw.registry import default_tools
from claw.streaming import MockStreamProvider
from claw.tools.base import ArgumentsTool, ToolArguments
from claw.types import (
    AssistantTurn,
    DeveloperMessage,
    StopReason,
    ToolCall,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)

PLAN = (
    "1. In stats.py, rename `mean` to `average`.\n"
    "2. Keep `mean = average` so old callers still work.\n"
    "3. Run the tests."
)


class Finishes:
    """Stands in for ``Agent.request_finish``: records every finish requested."""

    def __init__(self) -> None:
        self.requested: list[Finish] = []

    def __call__(self, reason: Finish) -> None:
        self.requested.append(reason)


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def turn(*calls: ToolCall, text: str = "") -> AssistantTurn:
    return AssistantTurn(text=text, tool_calls=calls, stop_reason=StopReason.TOOL_USE)


def planning(tmp_path: Path) -> tuple[PlanMode, ToolSet, Finishes]:
    """Plan mode over claw's standard tools in ``tmp_path`` (added after plan mode starts)."""
    tools = ToolSet()
    finishes = Finishes()
    plan = PlanMode(tools, finishes)
    for tool in default_tools(tmp_path):
        tools.add(tool)
    return plan, tools, finishes


async def present(plan: PlanMode, text: str = PLAN) -> ToolOutput:
    """The model calls exit_plan_mode through the check and the tool, as Controls would."""
    verdict = await plan.check(call(EXIT_PLAN_MODE, plan=text))
    assert isinstance(verdict, ToolCall), verdict
    return await plan.tools[EXIT_PLAN_MODE].run(verdict.arguments)


# --- the state machine ---------------------------------------------------------------


def test_plan_starts_planning_with_the_exit_tool_in_the_tool_set(tmp_path: Path) -> None:
    plan, tools, finishes = planning(tmp_path)
    assert plan.state is PlanState.PLANNING
    assert plan.plan is None
    assert EXIT_PLAN_MODE in tools.names  # added to the agent's own tool set
    definition = tools[EXIT_PLAN_MODE].definition
    assert definition.parameters["required"] == ["plan"]
    assert finishes.requested == []


def test_plan_off_at_first_then_enter_starts_planning() -> None:
    tools = ToolSet()
    plan = PlanMode(tools, Finishes(), planning=False)
    assert plan.state is PlanState.EXECUTING
    assert EXIT_PLAN_MODE not in tools
    plan.enter()
    assert plan.state is PlanState.PLANNING
    assert EXIT_PLAN_MODE in tools


async def test_plan_full_cycle_plan_approve_plan_again(tmp_path: Path) -> None:
    plan, tools, finishes = planning(tmp_path)
    size = len(tools)
    await present(plan)
    assert (plan.state, plan.plan) == (PlanState.PENDING, PLAN)
    plan.approve()
    assert (plan.state, plan.plan) == (PlanState.EXECUTING, PLAN)  # the approved plan stays
    plan.enter()
    assert (plan.state, plan.plan) == (PlanState.PLANNING, None)
    assert len(tools) == size  # entering again does not add a second exit_plan_mode
    assert finishes.requested == [Finish.PLAN_PENDING]


@pytest.mark.parametrize(
    ("before", "event", "message"),
    [
        ([], "approve", "cannot approve while planning; approve is allowed only while pending"),
        ([], "reject", "cannot reject while planning"),
        ([], "enter", "cannot enter while planning; enter is allowed only while executing"),
        (["submit"], "enter", "cannot enter while pending"),
        (["submit"], "submit", "cannot submit while pending"),
        (["submit", "approve"], "approve", "cannot approve while executing"),
        (["submit", "approve"], "reject", "cannot reject while executing"),
        (["submit", "approve"], "submit", "cannot submit while executing"),
        (
            ["submit", "approve"],
            "leave",
            "cannot leave while executing; leave is allowed only while pending or planning",
        ),
    ],
)
def test_plan_illegal_transition_raises_and_changes_nothing(
    tmp_path: Path, before: list[str], event: str, message: str
) -> None:
    plan, _, _ = planning(tmp_path)
    for step in before:
        perform(plan, step)
    state, kept = plan.state, plan.plan
    with pytest.raises(PlanModeError, match=message):
        perform(plan, event)
    assert (plan.state, plan.plan) == (state, kept)


def test_plan_an_event_allowed_in_several_states_names_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # today every event is allowed in one state; a table that grows keeps its messages right
    either = frozenset({PlanState.PENDING, PlanState.EXECUTING})
    monkeypatch.setitem(TRANSITIONS, "enter", (either, PlanState.PLANNING))
    plan = PlanMode(ToolSet(), Finishes())
    message = "cannot enter while planning; enter is allowed only while executing or pending"
    with pytest.raises(PlanModeError, match=message):
        plan.enter()
    plan.submit(PLAN)
    plan.enter()  # allowed while pending now
    assert plan.state is PlanState.PLANNING


def perform(plan: PlanMode, event: str) -> None:
    match event:
        case "enter":
            plan.enter()
        case "submit":
            plan.submit(PLAN)
        case "approve":
            plan.approve()
        case "reject":
            plan.reject("not like this")
        case "leave":
            plan.leave()


SEQUENCES = list(itertools.product(sorted(TRANSITIONS), repeat=5))
"""Every sequence of five events (3,125), and so every shorter one, as the start of one: each
legal or illegal event from every state, after every way of getting there."""


def test_plan_any_sequence_of_events_follows_the_table() -> None:
    for events in SEQUENCES:
        plan = PlanMode(ToolSet(), Finishes())
        expected, kept = PlanState.PLANNING, False
        for event in events:
            allowed, target = TRANSITIONS[event]
            if expected in allowed:
                perform(plan, event)
                expected = target
                kept = event in ("submit", "approve")  # only a plan presented or approved stays
            else:  # refused, saying why (no pytest.raises: 9,883 of them took 40% of the time)
                try:
                    perform(plan, event)
                except PlanModeError as refused:
                    assert f"cannot {event} while {expected.value}" in str(refused), events
                else:
                    raise AssertionError(f"{event} was allowed while {expected.value}: {events}")
            assert plan.state is expected, events
            assert (plan.plan is not None) == kept, events


@pytest.mark.parametrize("before", [[], ["submit"]], ids=["planning", "pending"])
async def test_plan_leave_executes_without_a_plan_and_lets_calls_through(
    tmp_path: Path, before: list[str]
) -> None:
    plan, _, _ = planning(tmp_path)
    for step in before:
        perform(plan, step)
    plan.leave()  # the user quit plan mode (/permissions default, Shift+Tab)
    assert (plan.state, plan.plan) == (PlanState.EXECUTING, None)
    write = call("write", path="notes.md", content="x")
    assert await plan.check(write) == write  # on to the next checks, no longer refused
    assert "Plan mode is over" in plan_over_message().text
    plan.enter()  # and planning can start again
    assert plan.state is PlanState.PLANNING


def test_plan_reject_plans_again_and_the_prompt_carries_the_feedback(tmp_path: Path) -> None:
    plan, _, _ = planning(tmp_path)
    plan.submit(PLAN)
    prompt = plan.reject("Keep the old name: other packages import mean.")
    assert (plan.state, plan.plan) == (PlanState.PLANNING, None)
    assert "Keep the old name: other packages import mean." in prompt
    assert "still in plan mode" in prompt
    assert EXIT_PLAN_MODE in prompt


def test_plan_approve_returns_the_prompt_that_says_go_ahead(tmp_path: Path) -> None:
    plan, _, _ = planning(tmp_path)
    plan.submit(PLAN)
    prompt = plan.approve()
    assert "approved" in prompt
    assert "carry out the plan" in prompt


# --- gating by capability --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write", {"path": "notes.md", "content": "x"}),
        ("edit", {"path": "stats.py", "old_string": "mean", "new_string": "average"}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch"}),
        ("bash", {"command": "touch made-by-bash"}),
    ],
)
async def test_plan_refuses_tools_that_change_things_and_says_why(
    tmp_path: Path, name: str, arguments: dict[str, Any]
) -> None:
    plan, _, _ = planning(tmp_path)
    verdict = await plan.check(call(name, **arguments))
    assert isinstance(verdict, ToolOutput) and verdict.is_error
    assert verdict.content.startswith(f"{name} is refused: you are in plan mode")
    assert "you may only read" in verdict.content
    assert "present your plan with the exit_plan_mode tool" in verdict.content
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read", {"path": "stats.py"}),
        ("glob", {"pattern": "**/*.py"}),
        ("grep", {"pattern": "def mean"}),
        ("list_dir", {}),
    ],
)
async def test_plan_lets_read_only_tools_through_unchanged(
    tmp_path: Path, name: str, arguments: dict[str, Any]
) -> None:
    plan, _, _ = planning(tmp_path)
    asked = call(name, **arguments)
    assert await plan.check(asked) is asked


class CountArguments(ToolArguments):
    path: str


class CountLines(ArgumentsTool[CountArguments]):
    """A tool plan mode has never heard of."""

    name = "count_lines"
    description = "Count the lines of a file."
    Arguments = CountArguments
    read_only: ClassVar[object] = True

    async def call(self, args: CountArguments) -> ToolOutput:
        return ToolOutput.ok("3")


class CountAndLog(CountLines):
    name = "count_and_log"
    read_only = False


class CountMaybe(CountLines):
    name = "count_maybe"
    read_only = "yes"  # truthy, but not the declaration True


async def test_plan_gates_a_new_tool_by_its_read_only_declaration_not_its_name() -> None:
    tools = ToolSet()
    plan = PlanMode(tools, Finishes())
    for tool in (CountLines(), CountAndLog(), CountMaybe()):
        tools.add(tool)
    allowed = call("count_lines", path="a.py")
    assert await plan.check(allowed) is allowed
    for name in ("count_and_log", "count_maybe"):
        verdict = await plan.check(call(name, path="a.py"))
        assert isinstance(verdict, ToolOutput) and verdict.is_error, name
        assert "plan mode" in verdict.content


async def test_plan_leaves_an_unknown_tool_to_the_loop(tmp_path: Path) -> None:
    plan, tools, _ = planning(tmp_path)
    asked = call("delete_everything")
    assert await plan.check(asked) is asked  # run_tool answers "unknown tool", not plan mode
    output = await Controls(tools, checks=[plan.check])(asked)
    assert output.is_error and output.content.startswith("unknown tool 'delete_everything'")


async def test_plan_after_approval_every_call_goes_on_to_the_next_checks(tmp_path: Path) -> None:
    plan, tools, _ = planning(tmp_path)
    seen: list[str] = []

    async def next_check(asked: ToolCall) -> ToolCall | ToolOutput:
        seen.append(asked.name)
        return ToolOutput.ok("answered by the next check")

    controls = Controls(tools, checks=[plan.check, next_check])
    edit = call("edit", path="a.py", old_string="a", new_string="b")
    refused = await controls(edit)
    assert refused.is_error and "plan mode" in refused.content
    assert seen == []  # a refused call never reaches a later check
    plan.submit(PLAN)
    plan.approve()
    for name in ("edit", "bash", "write"):
        asked = call(name)
        assert await plan.check(asked) is asked
    assert (await controls(edit)).content == "answered by the next check"
    assert seen == ["edit"]


# --- exit_plan_mode ----------------------------------------------------------------------


async def test_plan_exit_plan_mode_keeps_the_plan_and_requests_plan_pending(
    tmp_path: Path,
) -> None:
    plan, _, finishes = planning(tmp_path)
    output = await present(plan)
    assert not output.is_error
    assert output.content.startswith("plan submitted for approval")
    assert plan.plan == PLAN
    assert plan.state is PlanState.PENDING
    assert finishes.requested == [Finish.PLAN_PENDING]


async def test_plan_exit_plan_mode_without_a_plan_is_an_error_and_changes_nothing(
    tmp_path: Path,
) -> None:
    plan, tools, finishes = planning(tmp_path)
    for arguments in ({}, {"plan": ""}):
        output = await tools[EXIT_PLAN_MODE].run(arguments)
        assert output.is_error
        assert output.content.startswith("invalid arguments for exit_plan_mode")
    assert (plan.state, plan.plan, finishes.requested) == (PlanState.PLANNING, None, [])


async def test_plan_exit_plan_mode_is_refused_outside_planning(tmp_path: Path) -> None:
    plan, tools, finishes = planning(tmp_path)
    await present(plan)
    again = await plan.check(call(EXIT_PLAN_MODE, plan="a second plan"))
    assert isinstance(again, ToolOutput) and again.is_error
    assert "waiting for the user's approval" in again.content
    assert again.content.startswith("exit_plan_mode is refused: your plan is waiting")
    pending = await tools[EXIT_PLAN_MODE].run({"plan": "a second plan"})  # no exception
    assert pending.is_error
    assert pending.content.startswith("exit_plan_mode is refused: your plan is waiting")
    assert (plan.state, plan.plan) == (PlanState.PENDING, PLAN)
    plan.approve()
    late = await plan.check(call(EXIT_PLAN_MODE, plan="a second plan"))
    assert isinstance(late, ToolOutput) and late.is_error
    assert late.content.startswith("exit_plan_mode is refused: you are not in plan mode")
    direct = await tools[EXIT_PLAN_MODE].run({"plan": "a second plan"})  # no exception
    assert direct.is_error and "not in plan mode" in direct.content
    assert (plan.state, plan.plan) == (PlanState.EXECUTING, PLAN)
    assert finishes.requested == [Finish.PLAN_PENDING]


async def test_plan_pending_refuses_every_other_call(tmp_path: Path) -> None:
    plan, _, _ = planning(tmp_path)
    await present(plan)
    for name in ("read", "edit"):
        verdict = await plan.check(call(name, path="stats.py"))
        assert isinstance(verdict, ToolOutput) and verdict.is_error
        assert verdict.content.startswith(f"{name} is refused: your plan is waiting")


# --- end to end ----------------------------------------------------------------------------

STATS = "def mean(values):\n    return sum(values) / len(values)\n"
RENAMED = "def average(values):\n    return sum(values) / len(values)\n\n\nmean = average\n"
EDIT = {"path": "stats.py", "old_string": STATS, "new_string": RENAMED}


def session(tmp_path: Path, script: list[Any]) -> tuple[Agent, PlanMode, MockStreamProvider]:
    """claw in plan mode, as a caller wires it: the real tools, Controls, the developer note."""
    (tmp_path / "stats.py").write_text(STATS)
    provider = MockStreamProvider(script)
    agent = Agent(provider, context=[plan_mode_message()])
    plan = PlanMode(agent.tools, agent.request_finish)
    for tool in default_tools(tmp_path):  # the tools share one ToolSet with plan mode
        agent.tools.add(tool)
    agent.gate = Controls(agent.tools, checks=[plan.check])
    return agent, plan, provider


def result_of(agent: Agent, call_id: str) -> ToolResultMessage:
    found = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    return next(m for m in found if m.tool_call_id == call_id)


async def test_plan_end_to_end_edit_refused_plan_pending_then_approved_edit_runs(
    tmp_path: Path,
) -> None:
    agent, plan, provider = session(
        tmp_path,
        [
            turn(call("read", "read-1", path="stats.py"), call("edit", "edit-1", **EDIT)),
            turn(call(EXIT_PLAN_MODE, "plan-1", plan=PLAN), text="Here is my plan."),
        ],
    )
    finished = await agent.run("Rename mean to average in stats.py.")

    assert finished.reason is Finish.PLAN_PENDING
    assert (tmp_path / "stats.py").read_text() == STATS  # nothing changed on disk
    assert plan.plan == PLAN and plan.state is PlanState.PENDING
    refused = result_of(agent, "edit-1")
    assert refused.is_error and refused.content.startswith("edit is refused: you are in plan")
    assert not result_of(agent, "read-1").is_error  # reading is what planning is for
    assert result_of(agent, "plan-1").content.startswith("plan submitted for approval")
    assert len(provider.calls) == 2
    first = provider.calls[0]
    assert DeveloperMessage(content=PLAN_MODE_NOTE) in first.messages
    assert EXIT_PLAN_MODE in [tool.name for tool in first.tools]
    # the model saw the refusal in the call after it
    assert refused in provider.calls[1].messages

    provider.add(turn(call("edit", "edit-2", **EDIT)))
    provider.add("Renamed mean to average and kept mean as an alias.")
    prompt = plan.approve()
    finished = await agent.run(prompt)
    assert finished.reason is Finish.DONE
    assert provider.calls[2].messages[-1] == UserMessage(content=prompt)
    assert (tmp_path / "stats.py").read_text() == RENAMED
    assert not result_of(agent, "edit-2").is_error


async def test_plan_end_to_end_rejected_plan_feedback_reaches_the_model(tmp_path: Path) -> None:
    second = PLAN.replace("3. Run the tests.", "3. Add a test for the alias.\n4. Run the tests.")
    agent, plan, provider = session(
        tmp_path,
        [
            turn(call(EXIT_PLAN_MODE, "plan-1", plan=PLAN)),
            turn(call("edit", "edit-1", **EDIT)),  # tries to act on the rejected plan
            turn(call(EXIT_PLAN_MODE, "plan-2", plan=second)),
        ],
    )
    assert (await agent.run("Rename mean to average.")).reason is Finish.PLAN_PENDING
    feedback = "Also add a test for the alias."
    finished = await agent.run(plan.reject(feedback))

    sent = provider.calls[1].messages[-1]
    assert isinstance(sent, UserMessage)  # the feedback is the next user message
    assert feedback in str(sent.content) and "still in plan mode" in str(sent.content)
    refused = result_of(agent, "edit-1")
    assert refused.is_error and "plan mode" in refused.content  # planning again
    assert (tmp_path / "stats.py").read_text() == STATS
    assert finished.reason is Finish.PLAN_PENDING
    assert plan.plan == second


async def test_plan_exit_plan_mode_ends_the_run_after_the_step_and_later_calls_wait(
    tmp_path: Path,
) -> None:
    agent, plan, provider = session(
        tmp_path,
        [
            turn(call(EXIT_PLAN_MODE, "plan-1", plan=PLAN), call("edit", "edit-1", **EDIT)),
            "never streamed",
        ],
    )
    finished = await agent.run("Rename mean to average.")
    assert finished.reason is Finish.PLAN_PENDING
    assert finished.steps == 1 and len(provider.calls) == 1
    assert plan.plan == PLAN
    late = result_of(agent, "edit-1")
    assert late.is_error and late.content.startswith("edit is refused: your plan is waiting")
    assert (tmp_path / "stats.py").read_text() == STATS
