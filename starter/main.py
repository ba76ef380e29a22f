"""``claw``: run your agent from a terminal, on the repository you are in.

    claw "why does test_parse fail? fix it" --model anthropic/claude-sonnet-4.5

It builds the agent of chapters 7, 8 and 12: an ``OpenRouterProvider`` for ``--model``,
``default_tools`` rooted in the current directory, chapter 8's system prompt and project
instructions. Then it runs the prompt and prints what happens as it happens: the model's
text as it streams, and one line for each tool call and each result. Ctrl-C cancels the run
(the tool in flight is stopped, the history stays valid) instead of killing the process.

The key comes from ``OPENROUTER_API_KEY``. ``--base-url`` (or ``CLAW_BASE_URL``) points claw at
another OpenAI-compatible server, such as a local Ollama, or the loopback server of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .errors import ClawError
from .events import AssistantText, Event, RunFinished, ToolCalled, ToolResult
from .instructions import load_instructions
from .loop import Agent, Limits
from .prompt import gather_environment, system_prompt
from .providers.openrouter import OPENROUTER_URL, OpenRouterProvider
from .registry import default_tools
from .streaming import TextDelta

DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
"""The model ``claw`` uses when ``--model`` is not given."""

BASE_URL_VARIABLE = "CLAW_BASE_URL"
"""The environment variable that sets the server, like ``--base-url``."""

SHOWN_CHARS = 100
"""How much of a tool call's arguments or result one line shows."""


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line: a prompt, and optionally the model, the server and web access."""
    parser = argparse.ArgumentParser(
        prog="claw", description="Run claw, a coding agent, on the current directory."
    )
    parser.add_argument("prompt", help="what you want done")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="an OpenRouter model id")
    parser.add_argument(
        "--base-url",
        default=os.environ.get(BASE_URL_VARIABLE, OPENROUTER_URL),
        help=f"an OpenAI-compatible server (default: ${BASE_URL_VARIABLE} or OpenRouter)",
    )
    parser.add_argument("--web", action="store_true", help="also give claw the web_fetch tool")
    parser.add_argument(
        "--max-steps", type=int, default=None, help="end the run after this many model calls"
    )
    return parser.parse_args(argv)


def one_line(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` on one line (newlines shown as ``⏎``), cut to ``limit`` characters."""
    flat = text.replace("\n", " ⏎ ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def show(event: Event, out: TextIO) -> None:
    """Print ``event`` for a person at a terminal: text as it streams, a line per tool step."""
    if isinstance(event, TextDelta):
        out.write(event.text)
    elif isinstance(event, AssistantText):
        out.write("\n")
    elif isinstance(event, ToolCalled):
        arguments = ", ".join(f"{key}={value!r}" for key, value in event.arguments.items())
        out.write(f"→ {event.name}({one_line(arguments)})\n")
    elif isinstance(event, ToolResult):
        mark = "✗" if event.is_error else "✓"
        out.write(f"  {mark} {event.name}: {one_line(event.output)}\n")
    elif isinstance(event, RunFinished):
        out.write(f"[{event.reason} after {event.steps} step(s)]\n")
    out.flush()


def build_agent(
    provider: OpenRouterProvider, cwd: Path, *, web: bool = False, limits: Limits | None = None
) -> Agent:
    """The agent ``claw`` runs: claw's tools in ``cwd``, chapter 8's prompt and instructions."""
    tools = default_tools(cwd, web=web)
    instructions = load_instructions(cwd)
    return Agent(
        provider,
        tools,
        system=system_prompt(gather_environment(cwd), tools.definitions()),
        context=[instructions] if instructions is not None else [],
        limits=limits or Limits(),
        concurrent=True,
    )


async def run(arguments: argparse.Namespace, out: TextIO) -> RunFinished:
    """Run the prompt to the end, printing every event; Ctrl-C cancels the run."""
    async with OpenRouterProvider(arguments.model, base_url=arguments.base_url) as provider:
        limits = Limits() if arguments.max_steps is None else Limits(arguments.max_steps)
        agent = build_agent(provider, Path.cwd(), web=arguments.web, limits=limits)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, agent.cancel)
        try:
            finished: RunFinished | None = None
            async for event in agent.events(arguments.prompt):
                show(event, out)
                if isinstance(event, RunFinished):
                    finished = event
        finally:
            loop.remove_signal_handler(signal.SIGINT)
    assert finished is not None, "events() always ends with RunFinished"
    return finished


def main(argv: Sequence[str] | None = None) -> int:
    """The ``claw`` command: 0 when the run ended ``done``, 1 otherwise, 2 for a usage error."""
    arguments = parse_arguments(argv)
    try:
        finished = asyncio.run(run(arguments, sys.stdout))
    except ClawError as error:
        print(f"claw: {error}", file=sys.stderr)
        return 1
    return 0 if finished.reason == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
