"""The terminal app's front door: print mode for scripts, the REPL for a person.

``main.main`` hands the command line here unless it is chapter 12's one-shot claw (a prompt,
standard input not a terminal, no ``-p``). Both modes open claw with ``assemble.open_claw``, as
every front door does, each with the approver it needs, and run a prompt with ``Claw.run``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .approvers import NoTerminalApprover
from .display import error_line, terminal_text
from .errors import ClawError
from .options import EXIT_DONE, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from .permissions import Approval
from .printmode import PrintOutput, UsageError, read_prompt, write_run
from .signals import Stopper, exit_status
from .terminal import at_terminal
from .tools.ask import TerminalAsker
from .types import ToolCall

if TYPE_CHECKING:
    pass


async def no_answer() -> str:
    """A ``ReadLine`` for when nobody is there: the end of input at once."""
    return ""


async def run_print(
    arguments: argparse.Namespace, prompt: str, out: TextIO, err: TextIO
) -> int:
    """Print mode: run ``prompt`` once, write it as ``--output-format`` says; the exit status.

    An error claw expects (the server is down, the settings file is wrong, no session to
    continue) is one line on ``err`` and, in JSON, the result object of ``PrintOutput.fail``;
    the status is 1.
    """
    output = PrintOutput(arguments.output_format, out)
    try:
        return await print_run(arguments, prompt, output, err)
    except ClawError as error:
        err.write(error_line(error) + "\n")
        output.fail(terminal_text(str(error)))
        return EXIT_FAILED


async def print_run(
    arguments: argparse.Namespace, prompt: str, output: PrintOutput, err: TextIO
) -> int:
    """``run_print``'s run: the agent, its events written to ``output``, the exit status.

    The result object lists, as ``permission_denials``, each call refused for want of someone
    to approve it; a prompt a UserPromptSubmit hook blocked is a result saying so, status 0
    (as Claude Code 2.1.332 does).
    """
    from .assemble import open_claw

    refuse = NoTerminalApprover(err)
    denials: list[dict[str, object]] = []
    output.extra["permission_denials"] = denials

    async def approve(call: ToolCall, why: str) -> Approval:
        denials.append({"tool_name": call.name, "tool_use_id": call.id,
                        "tool_input": call.arguments})  # fmt: skip
        return await refuse(call, why)

    # Everything but the answer goes to ``err``; chapter 20's ask_user has nobody to ask.
    ask = TerminalAsker(err, no_answer, is_interactive=lambda: False)
    async with open_claw(
        arguments, out=err, err=err, read_line=no_answer, approve=approve, ask=ask
    ) as claw:
        with Stopper(claw.agent.cancel) as stopper:
            finished = await write_run(claw, prompt, output, err, Path.cwd())
        if finished is None:  # a UserPromptSubmit hook blocked the prompt
            return EXIT_DONE
        if finished.reason != "done":
            err.write(f"claw: the run ended {finished.reason} after {finished.steps} step(s)\n")
        return exit_status(finished, stopper.signalled)


def run_app(arguments: argparse.Namespace) -> int:
    """Print mode with ``-p``, else the REPL; a usage error ends with status 2."""
    try:
        if arguments.print:
            prompt = read_prompt(arguments.prompt, sys.stdin)
            return asyncio.run(run_print(arguments, prompt, sys.stdout, sys.stderr))
        if arguments.output_format != "text":
            raise UsageError("--output-format needs -p (print mode)")
        if not at_terminal():
            raise UsageError("no prompt and no terminal: give a prompt, or use -p for scripts")
        from .repl import run_repl

        return asyncio.run(run_repl(arguments))
    except UsageError as error:
        print(f"claw: error: {error} (see claw --help)", file=sys.stderr)
        return EXIT_USAGE
    except ClawError as error:  # the REPL could not start: a wrong settings file, say
        print(error_line(error), file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C before a run began: at the trust question, say
        print(file=sys.stderr)
        return EXIT_INTERRUPTED

