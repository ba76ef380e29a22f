"""``claw``: run your agent from a terminal, on the repository you are in.

    claw "why does test_parse fail? fix it" --model anthropic/claude-sonnet-4.5

This module reads the command line (``options.parse_arguments``) and sends it where it goes:
``claw config`` (chapter 17), ``claw eval`` (chapter 25), print mode and the REPL (chapter 19,
``app.py``), or the one-shot run below, chapter 12's claw. Every one of them opens claw the same
way, with ``assemble.open_claw``, the composition root; this module builds nothing itself.

The one-shot run prints what happens as it happens: the model's text as it streams, and one
line for each tool call and each result. Ctrl-C cancels the run (the tool in flight is stopped,
the history stays valid) instead of killing the process. With ``--permission-mode plan``, a
presented plan is shown and the user is asked to approve it.

The key comes from ``OPENROUTER_API_KEY``. ``--base-url`` (or ``CLAW_BASE_URL``) points claw at
another OpenAI-compatible server, such as a local Ollama, or the loopback server of the tests;
the key never goes over plain ``http`` except to this machine (``OpenRouterProvider``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from .display import arguments_text, error_line, one_line, terminal_text, warner
from .errors import ClawError
from .options import parse_arguments
from .todo import Todo, if_written

# ``claw --help`` and a wrong option answer before the agent's modules load: the tools, the
# providers, the pydantic models, rich and prompt_toolkit cost most of claw's start-up (bench:
# terminal_app). So everything that runs a prompt is imported by the function that needs it.
if TYPE_CHECKING:
    from .events import Event, RunFinished
    from .guard import Guarded
    from .permissions import Approver
    from .terminal import ReadLine

NO_TERMINAL_FOR_THE_PLAN = (
    "the plan waits for your approval, but there is no terminal to ask; run claw at a terminal "
    "to approve it"
)
"""Said on stderr when plan mode presents a plan to a one-shot run without a terminal."""

GUARD_CHAPTERS = frozenset({"ch13", "ch14", "ch15", "ch16"})
"""The chapters ``guard`` uses, which ``--unguarded`` leaves out."""


def show(event: Event, out: TextIO) -> None:
    """Print ``event`` for a person at a terminal: text as it streams, a line per tool step."""
    from .events import AssistantText, Compacted, RunFinished, ToolCalled, ToolResult
    from .streaming import TextDelta

    if isinstance(event, TextDelta):
        out.write(terminal_text(event.text))
    elif isinstance(event, AssistantText):
        out.write("\n")
    elif isinstance(event, ToolCalled):
        out.write(f"→ {event.name}({one_line(arguments_text(event.arguments))})\n")
    elif isinstance(event, ToolResult):
        mark = "✗" if event.is_error else "✓"
        out.write(f"  {mark} {event.name}: {one_line(event.output)}\n")
    elif isinstance(event, Compacted):
        out.write(
            f"[context compacted: {event.tokens_before:,} → {event.tokens_after:,} tokens"
            + (f", {event.removed} messages summarised" if event.removed else "")
            + (f", {event.trimmed} tool results trimmed" if event.trimmed else "")
            + "]\n"
        )
    elif isinstance(event, RunFinished):
        out.write(f"[{event.reason} after {event.steps} step(s)]\n")
    out.flush()


async def run(
    arguments: argparse.Namespace,
    out: TextIO,
    err: TextIO | None = None,
    read_line: ReadLine | None = None,
) -> RunFinished | None:
    """Run the prompt to the end, printing every event; Ctrl-C cancels the run.

    Returns how the last run finished, or ``None`` when a hook blocked the prompt. In plan
    mode, a presented plan is shown and the user is asked to approve it; an approved plan is
    carried out, a rejected one goes back to the model with the user's words. ``read_line``
    reads the user's answers (default: standard input, and only while it is a terminal:
    without one, each approval question is a no, told on ``err``).
    """
    import asyncio

    from .assemble import open_claw
    from .hooks import PromptBlocked
    from .terminal import interactive

    err = err or sys.stderr
    # Nobody is at a terminal to answer (stdin is a pipe or a file): each question is a no, told
    # on ``err`` with how to allow the call; an answer is never read from piped data (ch19).
    approve: Approver | None = None
    if read_line is None and not interactive():
        from .approvers import NoTerminalApprover

        approve = NoTerminalApprover(err)
    async with open_claw(
        arguments, out=out, err=err, read_line=read_line, approve=approve
    ) as claw:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, claw.agent.cancel)

        def summarise(finished: RunFinished, seconds: float) -> None:
            line = claw.summary(finished, seconds)
            if line is not None:
                print(line, file=err)

        async def plan(guarded: Guarded) -> str | None:
            if approve is not None:  # no terminal: the plan is shown and stays pending
                out.write(f"\nThe plan:\n{terminal_text(str(guarded.plan.plan))}\n")
                err.write(f"claw: {NO_TERMINAL_FOR_THE_PLAN}\n")
                return None
            # No run to cancel while the user reads the plan: Ctrl-C stops the question.
            asking = asyncio.ensure_future(guarded.ask_about_plan(out, read_line))
            loop.add_signal_handler(signal.SIGINT, asking.cancel)
            try:
                return await asking
            except asyncio.CancelledError:
                this = asyncio.current_task()
                if this is not None and this.cancelling():
                    raise  # this run was cancelled from outside, not the question by Ctrl-C
                out.write("\n")
                return None
            finally:
                loop.add_signal_handler(signal.SIGINT, claw.agent.cancel)

        try:
            ended = await claw.run(
                arguments.prompt,
                lambda event: show(event, out),
                warn=warner(err),
                plan=plan,
                finished_run=summarise,
            )
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if isinstance(ended, PromptBlocked):
            reason = terminal_text(ended.reason)
            out.write(f"[the prompt was blocked by a UserPromptSubmit hook: {reason}]\n")
            return None
        return ended


def main(
    argv: Sequence[str] | None = None, *, prepare: Callable[[], object] | None = None
) -> int:
    """The ``claw`` command: 0 when the run ended ``done``, 1 otherwise, 2 for a usage error.

    130 when Ctrl-C stopped claw before a run began (at the trust question, say). A stub of
    yours that claw needs raises ``Todo`` out of here (``cli`` says it politely). ``prepare``
    runs once the command line is known to be good, before anything else (``cli`` hides the
    secrets there).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    # claw config (chapter 17), claw eval (25), claw view (31) and claw acp (30) read their own
    subcommand = argv[0] if argv[:1] in (["config"], ["eval"], ["view"], ["acp"]) else None
    arguments = None if subcommand else parse_arguments(argv)
    if prepare is not None:
        prepare()
    import asyncio

    from .configure import config_main
    from .terminal import at_terminal, piped_now

    if subcommand == "config":  # chapter 17: claw config [--explain KEY]
        return config_main(argv[1:])
    if subcommand == "eval":  # chapter 25: claw eval [TASKS...] [--model ...] [--report ...]
        from .evals.command import main as eval_main

        return eval_main(argv[1:])
    if subcommand == "view":  # chapter 31: claw view [SESSION] [-o FILE]
        from .view.command import view_main

        return view_main(argv[1:])
    if subcommand == "acp":  # chapter 30: claw acp [OPTIONS], an agent for an editor
        from .acp import main as acp_main

        return acp_main(argv[1:])
    assert arguments is not None
    app = arguments.print or arguments.prompt is None or arguments.output_format != "text"
    if app or at_terminal():
        from .app import run_app  # chapter 19: print mode, or the REPL at a terminal

        return run_app(arguments)
    if piped_now(sys.stdin):  # chapter 19: what was piped in is context, as with -p
        from .printmode import UsageError, read_prompt

        try:
            prompt = if_written("ch19", lambda: read_prompt(arguments.prompt, sys.stdin))
            if not isinstance(prompt, Todo):  # else the prompt alone, as in chapter 12
                arguments.prompt = prompt
        except UsageError as error:  # a blank prompt
            print(f"claw: error: {error} (see claw --help)", file=sys.stderr)
            return 2
    try:
        finished = asyncio.run(run(arguments, sys.stdout))
    except ClawError as error:
        print(error_line(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before a run began: at the trust question, say
        print(file=sys.stderr)
        return 130
    return 0 if finished is not None and finished.reason == "done" else 1


def cli() -> None:
    """The console script: ``main``, with a stub you have not written yet told in one line.

    First the secrets leave the environment (``secrets_env``): no command claw runs can read
    them, from its own environment or from claw's. That happens once the command line is
    parsed: ``claw --help`` and a wrong option end before the tools' modules load.
    """

    def hide() -> None:
        from .secrets_env import hide_secrets

        hide_secrets()

    try:
        sys.exit(main(prepare=hide))
    except BrokenPipeError:  # chapter 19: `claw ... | head -1` closed stdout early
        quiet_broken_pipe()
    except Todo as todo:
        print(f"claw: this needs code you have not written yet: {todo}", file=sys.stderr)
        if todo.chapter in GUARD_CHAPTERS:
            print("claw: --unguarded runs claw without chapters 13 to 16", file=sys.stderr)
        sys.exit(1)


def quiet_broken_pipe() -> None:
    """End quietly after stdout's reader went away: no traceback, no second error at exit.

    Python flushes stdout once more when it exits, which would fail again; pointing stdout at
    ``/dev/null`` first makes that flush harmless. The status is 141 (128 + SIGPIPE), what a
    shell reports for a command the closed pipe ended.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


if __name__ == "__main__":
    cli()
