"""Plan mode: the model reads and plans first, and changes nothing until the user approves.

Plan mode is a small state machine with three states. While *planning*, only tools that
declare themselves read-only (chapter 12's ``read_only = True``) run; any other call is
refused with a result that tells the model where it is and what to do next. The model ends
planning by calling ``exit_plan_mode`` with its plan: the plan is kept, and the run ends with
``Finish.PLAN_PENDING``. The plan is then *pending*: the user approves it, and the state is
*executing*, where plan mode lets every call through to the next checks; or the user rejects
it with feedback, and the state is *planning* again. Every change of state is a method
(``enter``, ``submit``, ``approve``, ``reject``, and ``leave`` when the user quits planning),
and a change the table does not allow raises ``PlanModeError`` instead of leaving the machine
in a state nobody meant.

Which tools may run while planning is decided by what a tool says about itself, never by a
list of names: a new read-only tool (or, later, an MCP tool that declares itself read-only)
is allowed without touching this module.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from pydantic import Field

from .agent import Finish
from .registry import is_read_only
from .tools.base import ArgumentsTool, ToolArguments
from .types import DeveloperMessage, ToolCall, ToolOutput, ToolSet

EXIT_PLAN_MODE = "exit_plan_mode"
"""The name of the tool the model presents its plan with (Claude Code's ``ExitPlanMode``)."""

SUBMITTED = (
    "plan submitted for approval. Stop here: the user will read the plan and approve it, "
    "or tell you what to change."
)
"""What ``exit_plan_mode`` answers the model."""

PLAN_MODE_NOTE = (
    "You are in plan mode. Explore with the read-only tools (read, glob, grep, list_dir) and "
    "change nothing: write, edit, apply_patch and bash are refused until the user approves a "
    "plan. When you know what to do, present your plan with the exit_plan_mode tool."
)
"""The developer message that tells the model it is planning (``plan_mode_message``)."""


# --8<-- [start:states]
class PlanState(StrEnum):
    """Where plan mode is."""

    PLANNING = "planning"
    """Only read-only tools run; the model explores and writes a plan."""
    PENDING = "pending"
    """The model presented a plan; nothing runs until the user approves or rejects it."""
    EXECUTING = "executing"
    """The plan was approved: plan mode lets every call through to the next checks."""


TRANSITIONS: dict[str, tuple[frozenset[PlanState], PlanState]] = {
    "enter": (frozenset({PlanState.EXECUTING}), PlanState.PLANNING),
    "submit": (frozenset({PlanState.PLANNING}), PlanState.PENDING),
    "approve": (frozenset({PlanState.PENDING}), PlanState.EXECUTING),
    "reject": (frozenset({PlanState.PENDING}), PlanState.PLANNING),
    "leave": (frozenset({PlanState.PLANNING, PlanState.PENDING}), PlanState.EXECUTING),
}
"""Every legal change of state: the event, the states it may happen in, the state it leads to."""


class PlanModeError(RuntimeError):
    """A change of state the table does not allow, such as approving while planning."""
# --8<-- [end:states]


# --8<-- [start:messages]
def refusal(tool: str) -> str:
    """What the model is told when it calls ``tool``, a tool that changes things, while planning."""
    return (
        f"{tool} is refused: you are in plan mode, where you may only read (read-only tools). "
        "Nothing was changed. Finish exploring, then present your plan with the "
        f"{EXIT_PLAN_MODE} tool and wait for the user's approval."
    )


def pending_refusal(tool: str) -> str:
    """What the model is told when it calls ``tool`` while its plan waits for approval."""
    return (
        f"{tool} is refused: your plan is waiting for the user's approval, and nothing runs "
        "until they answer. Stop here."
    )


def not_planning() -> str:
    """What the model is told when it calls ``exit_plan_mode`` outside plan mode."""
    return (
        f"{EXIT_PLAN_MODE} is refused: you are not in plan mode. Your plan was already "
        "approved; carry it out with the tools."
    )


def approval_prompt() -> str:
    """The next user message after the user approves the plan."""
    return "The user approved your plan. Plan mode is over: carry out the plan now."


def rejection_prompt(feedback: str) -> str:
    """The next user message after the user rejects the plan with ``feedback``."""
    said = feedback.strip() or "(no feedback given)"
    return (
        f"The user did not approve your plan. Their feedback:\n{said}\n\n"
        "You are still in plan mode: explore more if you need to, then present a revised "
        f"plan with {EXIT_PLAN_MODE}."
    )


def plan_mode_message() -> DeveloperMessage:
    """A developer message that tells the model it is planning (for ``Agent(context=...)``)."""
    return DeveloperMessage(content=PLAN_MODE_NOTE)


PLAN_MODE_OVER = (
    "Plan mode is over: the user left it without approving a plan. You may use every tool "
    "again, as the permissions allow; do what the user asks next."
)
"""The developer message that tells the model the user left plan mode (``plan_over_message``)."""


def plan_over_message() -> DeveloperMessage:
    """A developer message that tells the model plan mode is over (after ``PlanMode.leave``)."""
    return DeveloperMessage(content=PLAN_MODE_OVER)
# --8<-- [end:messages]


# --8<-- [start:plan-mode-head]
class PlanMode:
    """The plan-mode state machine, and the check that gates tool calls by it.

    >>> plan = PlanMode(agent.tools, agent.request_finish)
    >>> agent.gate = Controls(agent.tools, checks=[plan.check])
    >>> finished = await agent.run("Rename mean to average")   # ends PLAN_PENDING
    >>> print(plan.plan); await agent.run(plan.approve())
    """

    def __init__(
        self,
        tools: ToolSet,
        request_finish: Callable[[Finish], None],
        *,
        planning: bool = True,
    ) -> None:
        """Plan mode over ``tools`` (the agent's own ``ToolSet``), planning at once if ``planning``.

        ``request_finish`` is ``Agent.request_finish``: presenting a plan ends the run with it.
        """
        self.tools = tools
        self.request_finish = request_finish
        self.state = PlanState.EXECUTING
        """Where plan mode is now."""
        self.plan: str | None = None
        """The plan the model presented: waiting for approval, or approved; ``None`` until then."""
        if planning:
            self.enter()
    # --8<-- [end:plan-mode-head]

    def _move(self, event: str) -> None:
        """Change state for ``event`` as ``TRANSITIONS`` says, or raise ``PlanModeError``."""
        # region ch16: look the event up in TRANSITIONS; refuse it from any other state
        # more: allowed, target = TRANSITIONS[event]; message "cannot {event} while {state}; ..."
        allowed, target = TRANSITIONS[event]
        if self.state not in allowed:
            only = " or ".join(sorted(state.value for state in allowed))
            raise PlanModeError(
                f"cannot {event} while {self.state.value}; {event} is allowed only while {only}"
            )
        self.state = target
        # endregion

    # --8<-- [start:transitions]
    def enter(self) -> None:
        """Start planning (again): only read-only tools run; ``exit_plan_mode`` is available."""
        # region ch16: move to planning, forget the old plan, add the exit_plan_mode tool once
        # more: self._move("enter"); if EXIT_PLAN_MODE not in self.tools: add ExitPlanModeTool
        self._move("enter")
        self.plan = None
        if EXIT_PLAN_MODE not in self.tools:
            self.tools.add(ExitPlanModeTool(self))
        # endregion

    def submit(self, plan: str) -> ToolOutput:
        """The model presents ``plan``: keep it, wait for approval, end the run PLAN_PENDING."""
        # region ch16: move to pending, keep the plan, request the PLAN_PENDING finish
        # more: self._move("submit"); self.request_finish(Finish.PLAN_PENDING); ToolOutput.ok
        self._move("submit")
        self.plan = plan
        self.request_finish(Finish.PLAN_PENDING)
        return ToolOutput.ok(SUBMITTED)
        # endregion

    def approve(self) -> str:
        """The user approves the plan: execute with the normal permissions; the next prompt."""
        # region ch16: move to executing; the plan stays; return the prompt that says go ahead
        # more: self._move("approve"); return approval_prompt()
        self._move("approve")
        return approval_prompt()
        # endregion

    def reject(self, feedback: str) -> str:
        """The user rejects the plan: plan again; the next prompt, carrying ``feedback``."""
        # region ch16: move back to planning, drop the plan, return the prompt with the feedback
        # more: self._move("reject"); self.plan = None; return rejection_prompt(feedback)
        self._move("reject")
        self.plan = None
        return rejection_prompt(feedback)
        # endregion

    def leave(self) -> None:
        """The user leaves plan mode without approving a plan: executing, and no plan kept."""
        # region ch16: move to executing (from planning or pending); forget the plan
        # more: self._move("leave"); self.plan = None
        self._move("leave")
        self.plan = None
        # endregion
    # --8<-- [end:transitions]

    async def check(self, call: ToolCall) -> ToolCall | ToolOutput:
        """Chapter 16's check for ``Controls``: while planning, only read-only tools go on."""
        # region ch16: executing: all but exit_plan_mode go on; planning: read-only tools only
        # more: exit_plan_mode only while planning; a name no tool has goes on (run_tool answers)
        if call.name == EXIT_PLAN_MODE:
            if self.state is PlanState.PLANNING:
                return call
            if self.state is PlanState.PENDING:
                return ToolOutput.error(pending_refusal(call.name))
            return ToolOutput.error(not_planning())
        if self.state is PlanState.EXECUTING:
            return call
        if self.state is PlanState.PENDING:
            return ToolOutput.error(pending_refusal(call.name))
        tool = self.tools.get(call.name)
        if tool is None or is_read_only(tool):
            return call
        return ToolOutput.error(refusal(call.name))
        # endregion


# --8<-- [start:exit-tool-head]
class ExitPlanModeArguments(ToolArguments):
    """The plan the model presents."""

    plan: str = Field(
        min_length=1,
        description="Your plan, in Markdown: the steps, the files each step changes, and how "
        "you will check that it worked.",
    )


class ExitPlanModeTool(ArgumentsTool[ExitPlanModeArguments]):
    """``exit_plan_mode``: the model presents its plan for the user's approval."""

    name = EXIT_PLAN_MODE
    description = (
        "Present your plan to the user for approval, when you are in plan mode and know what "
        "to do. The run ends; the user approves the plan (then you carry it out) or tells you "
        "what to change."
    )
    Arguments = ExitPlanModeArguments
    read_only = False
    """Presenting a plan changes plan mode's state and ends the run: it runs alone."""

    def __init__(self, plan_mode: PlanMode) -> None:
        """The tool of ``plan_mode``."""
        self.plan_mode = plan_mode
    # --8<-- [end:exit-tool-head]

    async def call(self, args: ExitPlanModeArguments) -> ToolOutput:
        """Hand the plan to plan mode; outside planning, an error result, never an exception."""
        # region ch16: submit the plan while planning; any other state is an error result
        # more: PENDING: pending_refusal(self.name); EXECUTING: not_planning(); else submit
        if self.plan_mode.state is PlanState.PENDING:
            return ToolOutput.error(pending_refusal(self.name))
        if self.plan_mode.state is PlanState.EXECUTING:
            return ToolOutput.error(not_planning())
        return self.plan_mode.submit(args.plan)
        # endregion
