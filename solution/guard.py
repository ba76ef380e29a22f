"""What the ``claw`` command puts in front of its tools: chapters 13 to 16, in one call.

``guard(agent, root, ...)`` builds chapter 13-16's ``Controls`` for the agent the ``claw``
command runs and makes it the agent's gate, in the order ``control.py`` explains: plan mode
(planning only when the run starts in it), the safety checks, the project's ``PreToolUse`` and
``PostToolUse`` hooks, and the permission rules, whose "ask" goes to the person at the
terminal (``approvers.TerminalApprover``).

It uses your chapters 13 to 16. Until they are written, their stubs raise ``Todo`` the first
time claw needs them; ``claw --unguarded`` runs without any of them, as chapter 12's claw did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .control import After, Check, Controls
from .display import terminal_text
from .errors import SettingsError
from .hooks import Hooks
from .loop import Agent
from .permissions import Approver, Decision, Mode, Permissions
from .plan import EXIT_PLAN_MODE, PlanMode, PlanState, plan_mode_message
from .safety import SafetyChecks
from .search_guard import guard_searches
from .settings_file import LOCAL_SETTINGS_FILE, SETTINGS_FILE, read_settings
from .terminal import ReadLine, echo_answer, read_stdin_line
from .tools.web_fetch import WebFetchTool
from .types import ToolCall, ToolOutput

if TYPE_CHECKING:
    from .settings import Settings

APPROVE_PLAN = "Approve this plan? [y] yes, or type what to change (Enter: stop here): "
"""The question after the model presented its plan in plan mode."""

class BadSettings(SettingsError):
    """The project's settings file is not usable: claw stops before it runs anything."""


def presenting_a_plan_goes_on(check: Check) -> Check:
    """``check`` for every call but ``exit_plan_mode``, which needs no permission.

    Presenting a plan changes nothing, and the user is asked about the plan itself right
    after; asking first whether the model may ask would be one question too many.
    """

    async def checked(call: ToolCall) -> ToolCall | ToolOutput:
        return call if call.name == EXIT_PLAN_MODE else await check(call)

    return checked


@dataclass
class Guarded:
    """What ``guard`` built and put in front of the tools."""

    controls: Controls
    permissions: Permissions
    safety: SafetyChecks
    plan: PlanMode
    """Plan mode: planning when the run started in it, else executing until someone enters it."""
    hooks: Hooks | None = None
    """The project's hooks; ``None`` when it has none."""

    async def ask_about_plan(self, out: TextIO, read_line: ReadLine | None = None) -> str | None:
        """Show the plan the model presented and ask the user: the next prompt, or ``None``.

        ``y`` approves it (``plan.approve()``'s prompt); other words reject it with those words
        as feedback (``plan.reject``); an empty answer or the end of input leaves it pending.
        """
        out.write(f"\nThe plan:\n{terminal_text(str(self.plan.plan))}\n\n{APPROVE_PLAN}")
        out.flush()
        answer = (await (read_line or read_stdin_line)()).strip()
        if not answer:
            out.write("\n")
            return None
        echo_answer(out, answer)
        if answer.lower() in ("y", "yes"):
            return self.plan.approve()
        return self.plan.reject(answer)


# --8<-- [start:guard]
def guard(
    agent: Agent,
    root: Path,
    *,
    mode: Mode = Mode.DEFAULT,
    approve: Approver | None = None,
    trusted: bool = True,
    settings: Settings | None = None,
) -> Guarded:
    """Put chapters 13-16 in front of ``agent``'s tools in the project ``root``: its new gate.

    ``mode`` is chapter 13's permission mode; ``Mode.PLAN`` starts chapter 16's plan mode
    planning instead, and tells the model so with ``plan_mode_message()`` (the permissions
    use ``Mode.DEFAULT`` once the plan is approved). Plan mode is in the chain either way, so
    that a later ``plan.enter()`` can start planning.
    The rules and hooks come from the project's ``.claw/settings.json``; while the folder is
    not ``trusted`` (``trust.py``), only its deny and ask rules are used, not its allow rules
    and hooks. Raises ``BadSettings`` when that file is wrong: better to stop than to run
    without the rules it meant to set.

    Chapter 17's ``claw`` passes ``settings``, its layered settings (already without what an
    untrusted folder may not set): then the rules and hooks come from them, and approvals
    for the project go to the personal ``.claw/settings.local.json``.
    """
    if settings is not None:
        return guard_with(agent, root, mode, approve, settings)
    path = root / SETTINGS_FILE
    try:
        data = read_settings(path)
    except SettingsError as error:
        raise BadSettings(str(error)) from error
    try:
        hooks = Hooks.from_settings(data.get("hooks", {}) if trusted else {}, root)
        permissions = Permissions.for_project(
            root,
            mode=Mode.DEFAULT if mode is Mode.PLAN else mode,
            approve=approve,
            agent=agent,
        )
        if not trusted:  # deny and ask rules only make claw safer: they apply in any case
            permissions.rules[Decision.ALLOW] = []
    except (ValueError, KeyError, TypeError, AttributeError) as error:  # RuleError too
        raise BadSettings(f"{path}: {error}") from error
    return assemble(agent, root, mode, permissions, hooks)


EXPLAIN = "claw config --explain {key} shows where it is set"
"""The end of a ``BadSettings`` from layered settings: the command that finds the layer."""


def guard_with(
    agent: Agent, root: Path, mode: Mode, approve: Approver | None, settings: Settings
) -> Guarded:
    """``guard`` with the rules and hooks of chapter 17's layered ``settings``.

    A bad hook or rule is ``BadSettings``, saying what is wrong and which ``claw config
    --explain`` key shows the layer it comes from.
    """
    try:
        hooks = Hooks.from_settings(settings.hooks, root)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise BadSettings(f"settings: {error} ({EXPLAIN.format(key='hooks')})") from error
    try:
        permissions = Permissions(
            root,
            allow=settings.permissions.allow,
            ask=settings.permissions.ask,
            deny=settings.permissions.deny,
            mode=Mode.DEFAULT if mode is Mode.PLAN else mode,
            approve=approve,
            settings=root / LOCAL_SETTINGS_FILE,
            agent=agent,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:  # RuleError too
        raise BadSettings(f"settings: {error} ({EXPLAIN.format(key='permissions')})") from error
    return assemble(agent, root, mode, permissions, hooks)


def assemble(
    agent: Agent, root: Path, mode: Mode, permissions: Permissions, hooks: Hooks
) -> Guarded:
    """Chain plan mode, the safety checks, the hooks and ``permissions`` into ``agent``'s gate."""
    # web_fetch's redirects: every hop is decided by the rules too, not only the first URL.
    fetch = agent.tools.get("web_fetch")
    if isinstance(fetch, WebFetchTool):
        fetch.check_redirect = permissions.check_redirect
    plan = PlanMode(agent.tools, agent.request_finish, planning=mode is Mode.PLAN)
    if plan.state is PlanState.PLANNING:
        agent.history.append(plan_mode_message())  # tell the model it is planning
    safety = SafetyChecks(root)
    # the search tools withhold each file read may not see (search_guard.py, issue 17)
    guard_searches(agent.tools, safety, permissions)
    checks: list[Check] = [plan.check, safety.check]
    after: list[After] = []
    if hooks.registered:
        hooks.permission_mode = mode.value  # what each hook's payload says (Claude Code's names)
        hooks.permissions = permissions  # a hook's "ask" asks through them (chapter 15)
        checks.append(hooks.pre_tool_use)
        after.append(hooks.post_tool_use)
    checks.append(presenting_a_plan_goes_on(permissions.check))
    controls = Controls(agent.tools, checks=checks, after=after)
    agent.gate = controls
    return Guarded(controls, permissions, safety, plan, hooks if hooks.registered else None)
# --8<-- [end:guard]
