"""Print mode (``claw -p``): one run for a script, only the answer on stdout.

``claw -p "review this"`` runs the prompt once and prints the final answer and nothing else on
stdout, so that ``claw -p ... > answer.md`` or ``$(claw -p ...)`` gets the answer alone.
Standard input, when it is not a terminal, is read to its end and added to the prompt as
context (``git diff | claw -p "review this"``); the prompt ``-`` is standard input itself.
``--output-format json`` prints one result object instead, ``stream-json`` one JSON object per
line for each event and then that result object, as Claude Code does.

Nobody can answer a question in print mode: a call that needs approval is refused, with a
line on stderr saying how to allow it (``approvers.NoTerminalApprover``). Never is an answer
read from the piped input, which is the user's data, not the user.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TextIO

from .agent import Finish
from .errors import ClawError
from .events import AssistantText, Event, RunFinished, StepUsage, ToolCalled, ToolResult
from .signals import ENDED_WELL
from .streaming import TextDelta
from .types import TokenUsage

if TYPE_CHECKING:
    from pathlib import Path

    from .assemble import Claw

STDIN_PROMPT = "-"
"""The prompt that means: read the prompt from standard input."""

SUBTYPES = {
    Finish.DONE: "success",
    Finish.HOOK_STOPPED: "success",
    Finish.MAX_STEPS: "error_max_turns",  # Claude Code's word for its --max-turns
}
"""Claude Code's ``subtype`` of the result object for a finish reason; others are
``error_during_execution``."""

class UsageError(ClawError):
    """The command line cannot work (no prompt, say): claw exits with status 2."""


def read_prompt(prompt: str | None, stdin: TextIO) -> str:
    """The prompt to run: ``prompt``, with piped standard input added as context.

    ``-`` (or no prompt) takes the prompt from ``stdin``; otherwise a ``stdin`` that is not a
    terminal is read to its end and, when it holds something, added after the prompt between
    ``<stdin>`` and ``</stdin>`` lines. Raises ``UsageError`` when there is no prompt at all.
    """
    # region ch19: "-" or None reads the prompt from stdin; else piped stdin goes after the prompt
    # more: stdin.isatty() means nobody piped anything: do not read it (it would wait for typing)
    piped = "" if stdin.isatty() else stdin.read()
    if prompt is None or prompt == STDIN_PROMPT:
        if not piped.strip():
            raise UsageError("no prompt: give one, or pipe it in with the prompt -")
        return piped
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    if not piped.strip():
        return prompt
    return f"{prompt}\n\n<stdin>\n{piped.rstrip(chr(10))}\n</stdin>"
    # endregion


def usage_object(usage: TokenUsage) -> dict[str, int]:
    """``usage`` as the ``usage`` field of a JSON object."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def event_object(event: Event) -> dict[str, Any] | None:
    """One line of ``stream-json`` for ``event``; ``None`` for the stream's own plumbing.

    Text as it streams is ``{"type": "text", "text": ...}``; the step's whole text
    ``assistant``; a call ``tool_use``; its result ``tool_result``; a step's tokens ``usage``.
    """
    # region ch19: a dict with a "type" for each event claw reports; None for the others
    # more: match event: case TextDelta(text=t): return {"type": "text", "text": t} ...
    match event:
        case TextDelta(text=text):
            return {"type": "text", "text": text}
        case AssistantText(step=step, text=text):
            return {"type": "assistant", "step": step, "text": text}
        case ToolCalled(step=step, id=id, name=name, arguments=arguments):
            return {"type": "tool_use", "step": step, "id": id, "name": name, "input": arguments}
        case ToolResult(step=step, id=id, name=name, output=output, is_error=is_error):
            return {
                "type": "tool_result",
                "step": step,
                "tool_use_id": id,
                "name": name,
                "content": output,
                "is_error": is_error,
            }
        case StepUsage(step=step, usage=usage):
            return {"type": "usage", "step": step, "usage": usage_object(usage)}
    return None
    # endregion


def total_cost(finished: RunFinished) -> Decimal | None:
    """The run's cost in US dollars for the result object: what the provider reported.

    Chapter 17's ``CostTracker`` knows better (prices for providers that report none); this
    is the one place that changes when it comes.
    """
    return finished.usage.cost


def result_object(
    finished: RunFinished, duration_ms: int, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The final result object (``json``, and the last line of ``stream-json``).

    Claude Code's fields (``type``, ``subtype``, ``is_error``, ``result``, ``num_turns``,
    ``duration_ms``, ``total_cost_usd``, ``usage``) plus claw's ``finish_reason``; ``extra``
    adds fields (a session id, say).
    """
    # region ch19: Claude Code's result fields from the RunFinished, plus finish_reason
    # more: subtype: SUBTYPES.get(reason, "error_during_execution"); is_error: not in ENDED_WELL
    cost = total_cost(finished)
    return {
        "type": "result",
        "subtype": SUBTYPES.get(finished.reason, "error_during_execution"),
        "is_error": finished.reason not in ENDED_WELL,
        "finish_reason": str(finished.reason),
        "result": finished.text,
        "num_turns": finished.steps,
        "duration_ms": duration_ms,
        "total_cost_usd": float(cost) if cost is not None else None,
        "usage": usage_object(finished.usage),
        **(extra or {}),
    }
    # endregion


class PrintOutput:
    """Writes a print-mode run to stdout in one of the ``--output-format`` formats."""

    def __init__(self, output_format: str, out: TextIO) -> None:
        """Write ``output_format`` (``text``, ``json``, ``stream-json``) to ``out``."""
        self.format = output_format
        self.out = out
        self.started = time.monotonic()
        self.extra: dict[str, Any] = {}
        """Fields to add to the result object (a later chapter's ``session_id``, say)."""
        self.steps = 0
        """The steps the run has reported so far (the result object of an error needs them)."""
        self.usage = TokenUsage()
        """What those steps used, as ``StepUsage`` reported it."""

    def line(self, value: Mapping[str, Any]) -> None:
        """One JSON object on a line of its own, flushed so a reader sees it at once."""
        self.out.write(json.dumps(value, ensure_ascii=False) + "\n")
        self.out.flush()

    def start(self, details: Mapping[str, Any]) -> None:
        """The run begins: ``stream-json``'s first line, ``{"type": "system", ...}``."""
        if self.format == "stream-json":
            self.line({"type": "system", "subtype": "init", **details})

    def event(self, event: Event) -> None:
        """An event of the run (only ``stream-json`` shows them)."""
        if isinstance(event, StepUsage):
            self.steps, self.usage = event.step, self.usage + event.usage
        if self.format == "stream-json":
            shown = event_object(event)
            if shown is not None:
                self.line(shown)

    def finish(self, finished: RunFinished) -> None:
        """The run is over: the answer, or the result object."""
        if self.format == "text":
            if finished.text:
                ending = "" if finished.text.endswith("\n") else "\n"
                self.out.write(finished.text + ending)
                self.out.flush()
            return
        duration_ms = round((time.monotonic() - self.started) * 1000)
        self.line(result_object(finished, duration_ms, self.extra))

    def fail(self, message: str) -> None:
        """The run could not go on (an error claw expects): in JSON, a result object saying so.

        Its ``subtype`` is ``error_during_execution``, ``is_error`` is true, ``finish_reason``
        is ``error`` and ``result`` holds ``message``; the text format prints nothing on stdout.
        """
        if self.format == "text":
            return
        duration_ms = round((time.monotonic() - self.started) * 1000)
        self.line({
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "finish_reason": str(Finish.ERROR),
            "result": message,
            "num_turns": self.steps,
            "duration_ms": duration_ms,
            "total_cost_usd": None if self.usage.cost is None else float(self.usage.cost),
            "usage": usage_object(self.usage),
            **self.extra,
        })


async def write_run(
    claw: Claw, prompt: str, output: PrintOutput, err: TextIO, cwd: Path
) -> RunFinished | None:
    """Run ``prompt`` on ``claw`` (``Claw.run``), every record of the run written to ``output``.

    The one place that turns a run into records: print mode writes them as lines, chapter
    29's SDK reads them as typed messages. First ``output.start`` with the model, the folder
    ``cwd``, the tools, the permission mode and the session; then each event; then the
    result, whose ``session_id`` is the session's and whose ``total_cost_usd`` is chapter
    17's count when it has one. Hook warnings go to ``err``. A prompt a UserPromptSubmit hook
    blocked is a result saying so (and a line on ``err``): ``None``; otherwise how it finished.
    """
    from .display import terminal_text, warner
    from .hooks import PromptBlocked

    if claw.recorder is not None:  # chapter 22: the session the run is recorded in
        output.extra["session_id"] = claw.recorder.writer.path.stem
    output.start(
        {"model": claw.settings.model, "cwd": str(cwd), "tools": list(claw.agent.tools.names),
         "permissionMode": claw.settings.permissions.default_mode or "default",
         **({"session_id": output.extra["session_id"]} if claw.recorder else {})}
    )  # fmt: skip
    ended = await claw.run(
        prompt,
        output.event,
        warn=warner(err),
    )
    if isinstance(ended, PromptBlocked):
        reason = terminal_text(ended.reason)
        err.write(f"claw: a UserPromptSubmit hook blocked the prompt: {reason}\n")
        blocked = f"The prompt was blocked by a UserPromptSubmit hook: {reason}"
        output.finish(RunFinished(Finish.DONE, 0, blocked, TokenUsage()))
        return None
    if claw.costs is not None:  # chapter 17 prices what the provider did not report
        spent = claw.costs.tracker.last_run
        output.extra["total_cost_usd"] = None if spent.unpriced else float(spent.cost)
    output.finish(ended)
    return ended
