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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .control import After, Check, Controls
from .display import terminal_text
from .errors import SettingsError
from .hooks import Hooks
from .loop import Agent
from .permissions import Approver, Mode, Permissions
from .plan import EXIT_PLAN_MODE, PlanMode, PlanState, plan_mode_message
from .safety import SafetyChecks
from .search_guard import guard_searches
from .settings_file import (
    LOCAL_SETTINGS_FILE,
    SETTINGS_FILE,
    permission_rules,
    read_settings,
    rules_in,
)
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
@dataclass(frozen=True)
class RuleSource:
    """Where the rules and hooks of chapters 13 and 15 come from, and how a mistake is told."""

    hooks: Mapping[str, Any]
    """The ``hooks`` table, in Claude Code's shape."""
    lists: dict[str, list[str]]
    """The ``allow``, ``ask`` and ``deny`` rules."""
    save_to: Path
    """The settings file an "always in this project" answer adds its rule to."""
    blame: Callable[[str, ValueError], str]
    """The message of a wrong ``hooks`` or ``permissions`` value: what, and where to look."""


EXPLAIN = "claw config --explain {key} shows where it is set"
"""The end of a ``BadSettings`` from layered settings: the command that finds the layer."""


def project_rules(root: Path, trusted: bool) -> RuleSource:
    """Chapter 16's rules and hooks: the project's ``.claw/settings.json``, as it is written.

    Its local neighbour adds rules too; while the folder is not ``trusted``, only its deny and
    ask rules count. A file that cannot be read is ``BadSettings``.
    """
    path = root / SETTINGS_FILE
    try:
        data = read_settings(path)  # once: the hooks and the rules come from the same text
        lists = rules_in(data, path)
        for name, rules in permission_rules(root / LOCAL_SETTINGS_FILE).items():
            lists[name] += [rule for rule in rules if rule not in lists[name]]
    except SettingsError as error:
        raise BadSettings(str(error)) from error
    if not trusted:  # deny and ask rules only make claw safer: they apply in any case
        lists["allow"] = []
    hooks = data.get("hooks", {}) if trusted else {}
    return RuleSource(hooks, lists, path, lambda key, error: f"{path}: {error}")


def layered_rules(settings: Settings, root: Path) -> RuleSource:
    """Chapter 17's rules and hooks: the layered ``settings``.

    They are already without what an untrusted folder may not set; "always in this project"
    goes to the personal ``.claw/settings.local.json``.
    """
    lists = {
        "allow": list(settings.permissions.allow),
        "ask": list(settings.permissions.ask),
        "deny": list(settings.permissions.deny),
    }
    return RuleSource(
        settings.hooks,
        lists,
        root / LOCAL_SETTINGS_FILE,
        lambda key, error: f"settings: {error} ({EXPLAIN.format(key=key)})",
    )


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
    The rules and hooks come from chapter 17's layered ``settings`` when it passes them, else
    from the project's ``.claw/settings.json`` (``project_rules``). A wrong hook or rule is
    ``BadSettings``, saying what is wrong and where: better to stop than to run without the
    rules the settings meant to set. Only the ``ValueError`` a wrong value raises is told so;
    any other exception is a bug of claw's, and is not dressed up as the user's mistake.
    """
    rules = layered_rules(settings, root) if settings is not None else project_rules(root, trusted)
    try:
        hooks = Hooks.from_settings(rules.hooks, root)
    except ValueError as error:
        raise BadSettings(rules.blame("hooks", error)) from error
    try:
        permissions = Permissions(
            root,
            allow=rules.lists["allow"],
            ask=rules.lists["ask"],
            deny=rules.lists["deny"],
            mode=Mode.DEFAULT if mode is Mode.PLAN else mode,
            approve=approve,
            settings=rules.save_to,
            agent=agent,
        )
    except ValueError as error:  # a RuleError
        raise BadSettings(rules.blame("permissions", error)) from error
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
