"""How chapters 13 to 16 control tool calls: a chain of checks in front of every tool.

Chapter 7's ``Agent`` has one seam in front of the tools, its ``gate``: a function that is
given each call before it runs and may answer it instead. ``Controls`` is such a gate, built
from small checks that each do one job, in a fixed order:

1. plan mode (chapter 16): while planning, only read-only tools run;
2. safety checks (chapter 14): the workspace sandbox, protected files, the command filter;
   these are hard limits that nothing later can lift;
3. ``PreToolUse`` hooks (chapter 15): the project's own rules, which may block a call or
   change its arguments;
4. permissions (chapter 13): the allow, ask and deny rules, and the user's approval.

A call of a tool that does not exist is answered first, as ``run_tool`` answers it (``unknown
tool 'x'; the tools are: ...``): there is nothing to run, so nothing to check or approve, and
the model learns the names it may use. Then each check either lets the call go on (returning
it, or a changed copy) or answers it (returning a ``ToolOutput``, usually an error that says
what was refused and why); the first answer ends the chain and the tool never runs. A changed
copy (a hook's ``updatedInput``) goes through the checks before it again: new arguments never
skip the safety checks. After the tool, ``after`` hooks (chapter 15's ``PostToolUse``) see the
call and its output and may change the output.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from .agent import run_tool
from .types import ToolCall, ToolOutput, ToolSet

Check = Callable[[ToolCall], Awaitable[ToolCall | ToolOutput]]
"""Look at a call before it runs: return it (or a changed copy) to let it go on, or a
``ToolOutput`` to answer it instead, in which case the tool never runs."""

After = Callable[[ToolCall, ToolOutput], Awaitable[ToolOutput]]
"""Look at a call and its output after the tool ran; return the output the model will see."""


class Controls:
    """A gate for ``Agent`` (chapter 7): ``checks`` in order, then the tool, then ``after``.

    >>> agent.gate = Controls(agent.tools, checks=[plan.check, safety.check, permissions.check])
    """

    def __init__(
        self, tools: ToolSet, checks: Iterable[Check] = (), after: Iterable[After] = ()
    ) -> None:
        """Control calls of ``tools``: ``checks`` before they run, ``after`` once they did."""
        self.tools = tools
        self.checks = list(checks)
        self.after = list(after)

    async def __call__(self, call: ToolCall) -> ToolOutput:
        """Answer ``call``: with the first check's refusal, or by running the tool.

        When a check changes the call, the checks before it look at the changed call too. A
        name no tool has is answered by ``run_tool`` at once (an unknown tool), before any check.
        """
        if call.name not in self.tools:
            return await run_tool(self.tools, call)
        for index, check in enumerate(self.checks):
            verdict = await check(call)
            if isinstance(verdict, ToolOutput):
                return verdict
            if verdict != call:
                for earlier in self.checks[:index]:
                    again = await earlier(verdict)
                    if isinstance(again, ToolOutput):
                        return again
                    verdict = again
            call = verdict
        output = await run_tool(self.tools, call)
        for hook in self.after:
            output = await hook(call, output)
        return output
