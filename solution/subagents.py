"""Subagents: the ``task`` tool, which hands a piece of work to a child agent.

A child is the same ``Agent`` the ``claw`` command runs, started fresh for one task: its own
history (it sees only the prompt the parent wrote for it), its own step budget, and a subset
of the parent's tools, read-only by default. It shares what the parent has: the provider
(one connection, one key), the gate (chapter 13's permissions, chapter 14's checks, chapter
15's hooks), and the observers: every event the child reports reaches the parent's observers
wrapped in a ``SubagentEvent`` that names the child.

The child's last text comes back as the tool's result. A child that fails (its provider
raises, it runs out of steps, it goes over its budget) is an error result the parent's model
can read, never an exception that ends the parent. Cancelling the parent cancels the child:
the child runs inside the parent's tool call, and chapter 7's ``race`` cancels that call.

A ``task`` tool whose children only look is read-only itself, so chapter 12's batches run
several of them at the same time. The children keep the limits of the parent's run: each of
their model calls counts toward the parent's ``max_steps``, and in ``claw`` each is priced
before it is sent, against the session's budget; one turn may start at most
``MAX_TASKS_PER_TURN`` children, and at most ``MAX_RUNNING_TASKS`` run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from .agent import Finish
from .cost import estimate_prompt_tokens, format_cost
from .errors import ToolError
from .events import Event, RunFinished, StepUsage, SubagentEvent
from .registry import is_read_only
from .tools.base import ArgumentsTool, ToolArguments
from .types import Message, TokenUsage, ToolOutput, ToolSet

if TYPE_CHECKING:
    from .cost import Budget as SessionBudget
    from .loop import Agent
    from .preflight import PreflightAgent

TASK = "task"
"""The tool's name, as the model calls it."""

GIT_TIMEOUT = 30.0
"""Seconds one git command of ``WorktreeTaskTool`` may take."""

DEFAULT_CHILD_STEPS = 10
"""How many provider calls a child may make when the ``TaskTool`` is not told otherwise."""

MAX_TASKS_PER_TURN = 20
"""How many ``task`` calls one turn of the parent may start; each call past it is refused."""

MAX_RUNNING_TASKS = 10
"""How many children of one ``task`` tool run at the same time; the others wait for a place.

Claude Code's default for calls that run side by side (``CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY``)."""

NO_CHILD_TOOLS = frozenset({TASK, "ask_user"})
"""Tools a child never gets: no grandchildren, and no questions to a person who cannot see
the child's conversation."""

CHILD_PROMPT = """\
You are a subagent of claw, a coding agent. Another agent gave you one task; do it with the
tools you have, then answer. Your last message is your whole report: the agent that started
you sees nothing else of your work, so make it complete, specific and self-contained (file
paths, line numbers, what you found and what you did not find)."""
"""The system prompt every child starts with."""

Budget = Callable[[TokenUsage], str | None]
"""Looks at a child's usage so far; returns why it must stop now, or ``None`` to go on.

Chapter 17's cost tracker fits here; ``token_budget`` is the simplest one."""


class TaskArguments(ToolArguments):
    """What the model gives a subagent: a label, and the task itself."""

    description: str = Field(
        min_length=1, max_length=80, description="A short (3-5 word) label for the task."
    )
    prompt: str = Field(
        min_length=1,
        description=(
            "The task, complete and self-contained: the subagent sees nothing of this "
            "conversation, only this text. Say what to find or do and what to report back."
        ),
    )


def token_budget(max_tokens: int) -> Budget:
    """A ``Budget`` that stops a child once it has used more than ``max_tokens`` tokens."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")

    def check(usage: TokenUsage) -> str | None:
        if usage.total_tokens > max_tokens:
            return f"{usage.total_tokens:,} tokens used, the budget is {max_tokens:,}"
        return None

    return check


# --8<-- [start:session-budget]
def session_budget(budget: SessionBudget) -> Budget:
    """A child's cost budget in ``claw``: what is left of the session's (chapter 17's ``Budget``).

    The parent's tracker counts the child's steps (``CostTracker.count_subagents``), so after
    each of them ``budget.tracker.session.cost`` is what the parent and all its children have
    spent; once that reaches ``budget.limit``, the child must stop.
    """

    def check(usage: TokenUsage) -> str | None:
        spent = budget.tracker.session.cost
        if spent >= budget.limit:
            return (
                f"the session has spent {format_cost(spent)} of its "
                f"{format_cost(budget.limit)} budget"
            )
        return None

    return check


class SessionMoney:
    """Chapter 17's budget as children see it before each of their calls is sent.

    Children run side by side: eight of them may each ask before any has spent a cent. So a
    call that is let through reserves its estimate (``pending``) until its usage is counted.
    """

    def __init__(self, budget: SessionBudget) -> None:
        """The money of ``budget``: its ``limit``, and what its tracker counts as spent."""
        self.budget = budget
        self.pending = Decimal(0)
        """The estimates of the children's calls let through whose usage is not counted yet."""

    def reserve(self, history: Sequence[Message]) -> tuple[Decimal, str | None]:
        """Reserve the estimate of a child's call that sends ``history``: ``(estimate, None)``.

        ``(0, why)`` instead, reserving nothing, when the session has spent its limit, or when
        what it has spent, plus ``pending``, plus this estimate would pass it. The estimate is
        chapter 17's: ``estimate_prompt_tokens`` of the whole history at ``Budget.price``; an
        unknown price counts as nothing, as it does for the parent.
        """
        estimate = self.budget.price(estimate_prompt_tokens(0, history)) or Decimal(0)
        spent, limit = self.budget.tracker.session.cost, self.budget.limit
        if spent >= limit or spent + self.pending + estimate > limit:
            return Decimal(0), (
                f"its next call, estimated at {format_cost(estimate)}, would take the session "
                f"past its {format_cost(limit)} budget ({format_cost(spent)} spent, "
                f"{format_cost(self.pending)} on its way)"
            )
        self.pending += estimate
        return estimate, None

    def settle(self, estimate: Decimal) -> None:
        """A reserved call's usage is counted now (or will never come): free its ``estimate``."""
        self.pending -= estimate


def limit_children(agent: Agent, budget: SessionBudget) -> None:
    """Limit every ``task`` tool of ``agent`` by the session's ``budget``.

    One that has no budget of its own gets ``session_budget``; all share one ``SessionMoney``,
    which prices each child call before it is sent.
    """
    money = SessionMoney(budget)
    for tool in agent.tools:
        if isinstance(tool, TaskTool):
            tool.money = money
            if tool.budget is None:
                tool.budget = session_budget(budget)
# --8<-- [end:session-budget]


def child_tools(tools: ToolSet, *, read_only: bool = True) -> ToolSet:
    """The tools a child gets from its parent's ``tools``, in the parent's order.

    Never ``task`` itself nor ``ask_user`` (``NO_CHILD_TOOLS``); with ``read_only`` (the
    default), only the tools chapter 12's ``is_read_only`` says change nothing.
    """
    # region ch21: the parent's tools minus NO_CHILD_TOOLS, and only read-only ones if asked
    # more: ToolSet(tool for tool in tools if ...); is_read_only(tool); tool.definition.name
    return ToolSet(
        tool
        for tool in tools
        if tool.definition.name not in NO_CHILD_TOOLS and (not read_only or is_read_only(tool))
    )
    # endregion


def outcome(agent_id: str, finished: RunFinished, over_budget: str | None) -> ToolOutput:
    """The ``task`` result for a child that ended with ``finished``.

    ``done`` gives the child's last text (or a note that it had none). Anything else is an
    error result naming the child, why it stopped, after how many steps, and its last text:
    over its budget (``over_budget`` says why), or any other ``Finish``.
    """
    # region ch21: DONE: the text; else an error naming the child, the reason, steps, last text
    # more: "subagent task-1 went over its budget (...)"; "subagent task-1 did not finish: ..."
    if finished.reason == Finish.DONE and over_budget is None:
        return ToolOutput.ok(finished.text or f"(subagent {agent_id} finished without an answer)")
    steps = f"after {finished.steps} step(s)"
    if over_budget is not None:
        message = f"subagent {agent_id} went over its budget ({over_budget}) and was stopped"
        message += f" {steps}"
    else:
        message = f"subagent {agent_id} did not finish: it ended {finished.reason.value} {steps}"
    last = f"; its last text: {finished.text}" if finished.text else "; it wrote no text"
    return ToolOutput.error(message + last)
    # endregion


# --8<-- [start:task-head]
class TaskTool(ArgumentsTool[TaskArguments]):
    """The ``task`` tool: runs one child agent per call and returns its answer.

    Build it, add it to the parent's tools, build the parent, then ``bind(parent)``: the
    child takes the parent's provider, gate, observers and concurrency at call time, so a
    gate set after ``bind`` (``guard``) applies to the children too.
    """

    name = TASK
    description = (
        "Hand a self-contained task to a subagent: a fresh agent with its own context and "
        "read-only tools, which works on its own and reports back. Use it for searches and "
        "investigations whose details you do not need to keep; several task calls in one "
        "turn run at the same time. The result is the subagent's final report."
    )
    Arguments = TaskArguments

    def __init__(
        self,
        *,
        max_steps: int = DEFAULT_CHILD_STEPS,
        budget: Budget | None = None,
        read_only: bool = True,
        system: str = CHILD_PROMPT,
        max_per_turn: int = MAX_TASKS_PER_TURN,
        max_running: int = MAX_RUNNING_TASKS,
    ) -> None:
        """Children of at most ``max_steps`` steps, stopped when ``budget`` says so.

        ``read_only=False`` gives children the parent's changing tools too (and makes this
        tool not read-only, so its calls run one at a time). One turn of the parent may start
        ``max_per_turn`` children, and ``max_running`` of them run at once.
        """
        for name, value in (
            ("max_steps", max_steps),
            ("max_per_turn", max_per_turn),
            ("max_running", max_running),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        self.max_steps = max_steps
        self.max_per_turn = max_per_turn
        self.running = asyncio.Semaphore(max_running)
        """A place for each child running now; a child waits here for one before its run."""
        self.money: SessionMoney | None = None
        """The session's money, which prices each child call before it is sent (``claw``)."""
        self.calls = 0
        """Model calls of the parent's run in progress: its own, and its children's so far."""
        self.this_turn = 0
        """``task`` calls of the parent's current turn so far."""
        self.budget = budget
        self.read_only = read_only
        """Chapter 12's flag: calls of this tool may run side by side when it is true."""
        self.system = system
        self.parent: Agent | None = None
        self.started = 0
        """How many children this tool has started; the next one is ``task-{started + 1}``."""

    def bind(self, parent: Agent) -> None:
        """Make ``parent`` the agent whose provider, gate and observers children share.

        ``count`` becomes one of its observers (bind once).
        """
        self.parent = parent
        parent.sink.add(self.count)

    def count(self, event: Event) -> None:
        """The parent's observer: each of its own calls is one more of its run, and a new turn.

        A child's events reach the parent wrapped in a ``SubagentEvent``, so a bare
        ``StepUsage`` is the parent's own; its ``RunFinished`` starts the next run at 0.
        """
        if isinstance(event, StepUsage):
            self.calls += 1
            self.this_turn = 0
        elif isinstance(event, RunFinished):
            self.calls = 0
            self.this_turn = 0
    # --8<-- [end:task-head]

    def spawn(self, parent: Agent) -> tuple[str, PreflightAgent]:
        """A new child of ``parent`` and its id, ``task-1``, ``task-2``, ... in start order.

        The child is a ``PreflightAgent`` (chapter 17's, with no checks yet) with
        ``child_tools``, this tool's ``system`` prompt and ``max_steps``, the parent's
        provider, gate and ``concurrent`` flag, and one observer: it hands each event to the
        parent's observers as ``SubagentEvent(agent_id, event)``.
        """
        # region ch21: count the child, a PreflightAgent sharing provider and gate, wrap events
        # more: Limits(max_steps=...); observers=[lambda e: parent.sink.emit(SubagentEvent(id, e))]
        from .loop import Limits  # the loop imports the registry, which imports tools
        from .preflight import PreflightAgent

        self.started += 1
        agent_id = f"{TASK}-{self.started}"

        def forward(event: Event) -> None:
            parent.sink.emit(SubagentEvent(agent_id, event))

        child = PreflightAgent(
            parent.provider,
            child_tools(parent.tools, read_only=self.read_only),
            system=self.system,
            limits=Limits(max_steps=self.max_steps),
            observers=[forward],
            gate=parent.gate,
            concurrent=parent.concurrent,
        )
        return agent_id, child
        # endregion

    def admit(
        self, parent: Agent, history: Sequence[Message], reserved: list[Decimal]
    ) -> str | None:
        """Whether a child of ``parent`` may send ``history`` now: ``None``, or why not.

        Not once the parent's run has made ``parent.limits.max_steps`` model calls, its own and
        its children's together (``calls``); not when ``money``, if there is any, says the call
        would take the session past its budget. A call let through counts in ``calls``, and
        its estimate goes into ``reserved``; the call that takes the last step asks the parent
        to finish ``MAX_STEPS`` once its turn's calls are answered.
        """
        # region ch21: the run's steps used up? the money refused? else count, reserve, maybe finish
        # more: self.calls >= parent.limits.max_steps; self.money.reserve(history); request_finish
        limit = parent.limits.max_steps
        if self.calls >= limit:
            return f"the run has made all its {limit} model call(s), its subagents' included"
        if self.money is not None:
            estimate, why = self.money.reserve(history)
            if why is not None:
                return why
            reserved.append(estimate)
        self.calls += 1
        if self.calls >= limit:
            parent.request_finish(Finish.MAX_STEPS)
        return None
        # endregion

    async def call(self, args: TaskArguments) -> ToolOutput:
        """Run a child on ``args.prompt`` to the end; its answer, or an error result.

        Past ``max_per_turn`` calls in one turn, the call is refused. Before each of the
        child's calls, ``admit`` decides (a refusal ends the child ``BUDGET``); the budget is
        checked after every step (each ``StepUsage``); over it, the child is cancelled. The
        child waits for a place among ``max_running``. An exception from the child is an error
        result; cancelling this call cancels the child, and ``CancelledError`` goes on up.
        """
        # region ch21: cap the turn, spawn, admit each call, watch usage, run in a place, result
        # more: child.preflight.append(check); child.sink.add(watch); async with self.running
        if self.parent is None:
            return ToolOutput.error("task is not connected to an agent (a bug: call bind first)")
        parent = self.parent
        self.this_turn += 1
        if self.this_turn > self.max_per_turn:
            return ToolOutput.error(
                f"task refused: one turn may start at most {self.max_per_turn} subagents; "
                "ask for the rest in a later turn"
            )
        agent_id, child = self.spawn(parent)
        over_budget: list[str] = []
        reserved: list[Decimal] = []
        usage = TokenUsage()
        if self.budget is not None and (why := self.budget(usage)) is not None:
            return ToolOutput.error(f"subagent {agent_id} was not started: {why}")

        def check(history: Sequence[Message]) -> Finish | None:
            why = self.admit(parent, history, reserved)
            if why is None:
                return None
            over_budget.append(why)
            return Finish.BUDGET

        def settle() -> None:
            while reserved and self.money is not None:
                self.money.settle(reserved.pop())

        def watch(event: Event) -> None:
            nonlocal usage
            if isinstance(event, StepUsage):
                settle()  # the call's cost is counted now: the parent's tracker saw it first
                if self.budget is not None and not over_budget:
                    usage += event.usage
                    if (why := self.budget(usage)) is not None:
                        over_budget.append(why)
                        child.cancel()

        child.preflight.append(check)
        child.sink.add(watch)
        try:
            async with self.running:
                finished = await child.run(args.prompt)
        except NotImplementedError:
            raise  # a stub: code to write, not a failure of the child
        except Exception as error:
            return ToolOutput.error(
                f"subagent {agent_id} failed: {type(error).__name__}: {error}"
            )
        finally:
            settle()
        if over_budget and finished.steps == 0:
            return ToolOutput.error(f"subagent {agent_id} was not started: {over_budget[0]}")
        return outcome(agent_id, finished, over_budget[0] if over_budget else None)
        # endregion


# --8<-- [start:worktree]
class WorktreeError(ToolError):
    """git could not make, read or remove a child's worktree; the message is git's."""


def git(repo: Path, *arguments: str) -> str:
    """The output of ``git -C repo ARGUMENTS``; ``WorktreeError`` with git's words if it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *arguments],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise WorktreeError(f"git {arguments[0]} failed: {error}") from None
    if done.returncode != 0:
        raise WorktreeError(f"git {arguments[0]} failed: {done.stderr.strip()}")
    return done.stdout


class WorktreeTaskTool(TaskTool):
    """A ``task`` tool whose children may edit, each in a fresh ``git worktree`` of ``repo``.

    The worktree is a detached checkout of ``HEAD`` in a scratch folder. The child's tools are
    ``make_tools(worktree)`` (say ``lambda root: default_tools(root)``), minus
    ``NO_CHILD_TOOLS``. When the child ends, whatever it changed (new files too) comes back
    after its answer as a diff against ``HEAD``, and the worktree is removed, whether the child
    succeeded, failed or was cancelled. Nothing is applied to ``repo``: the parent's model
    decides what to do with the diff. Its calls run one at a time (it is not read-only).
    """

    def __init__(
        self, repo: Path, make_tools: Callable[[Path], ToolSet], **options: Any
    ) -> None:
        """Children that work in worktrees of ``repo`` with the tools ``make_tools`` builds."""
        super().__init__(read_only=False, **options)
        self.repo = repo
        self.make_tools = make_tools
        self.worktree: Path | None = None
        """The worktree of the child running now (calls of this tool never overlap)."""

    def spawn(self, parent: Agent) -> tuple[str, PreflightAgent]:
        """Chapter 21's child, with tools rooted in the current worktree instead of the parent's."""
        agent_id, child = super().spawn(parent)
        assert self.worktree is not None, "spawn runs inside call, which made the worktree"
        child.tools = child_tools(self.make_tools(self.worktree), read_only=False)
        return agent_id, child

    async def call(self, args: TaskArguments) -> ToolOutput:
        """Make a worktree, run the child in it, hand back its answer and its diff, clean up."""
        scratch = Path(tempfile.mkdtemp(prefix="claw-task-"))
        tree = scratch / "worktree"
        try:
            await asyncio.to_thread(
                git, self.repo, "worktree", "add", "--detach", str(tree), "HEAD"
            )
        except WorktreeError as error:
            shutil.rmtree(scratch, ignore_errors=True)
            return ToolOutput.error(f"no worktree for the subagent: {error}")
        self.worktree = tree
        try:
            output = await super().call(args)
            await asyncio.to_thread(git, tree, "add", "--all")
            diff = await asyncio.to_thread(git, tree, "diff", "--cached", "HEAD")
        except WorktreeError as error:
            return ToolOutput.error(f"the subagent's changes could not be read: {error}")
        finally:
            # Synchronous on purpose: this also runs while the call is being cancelled.
            self.worktree = None
            with contextlib.suppress(WorktreeError):
                git(self.repo, "worktree", "remove", "--force", str(tree))
            shutil.rmtree(scratch, ignore_errors=True)
        changes = (
            f"\n\nThe subagent's changes, as a diff against HEAD (not applied):\n{diff}"
            if diff
            else "\n\nThe subagent changed no file."
        )
        return ToolOutput(content=output.content + changes, is_error=output.is_error)
# --8<-- [end:worktree]
