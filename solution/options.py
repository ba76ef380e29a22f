"""The ``claw`` command line: its options, checked as they are parsed, and one-line errors.

``parse_arguments`` builds the parser with ``OneLineParser`` and hands it to
``add_app_arguments``, which adds the options of the terminal app, and to
``add_session_arguments``, which adds chapter 22's (kept here, not in ``session_start.py``, so
that parsing the command line loads none of the agent's modules). Every option is checked where
it is parsed (a ``type=`` function), so that a wrong value ends claw with one line that names
the option and says what it takes, and exit status 2, before anything runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import NoReturn
from urllib.parse import urlsplit

OUTPUT_FORMATS = ("text", "json", "stream-json")
"""What ``--output-format`` takes: the answer alone, one JSON result, or a JSON line per event."""

EXIT_DONE = 0
"""The run ended ``done`` (the model answered) or ``hook_stopped`` (a hook ended it on purpose)."""
EXIT_FAILED = 1
"""The run ended for another reason: a limit (steps, stuck, denials), an error, a blocked prompt."""
EXIT_USAGE = 2
"""The command line was wrong; nothing ran."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT) stopped claw: 128 + 2, as a shell reports it."""

EXIT_CODES = f"""\
exit status:
  {EXIT_DONE}    the run ended done (the model answered) or a hook stopped it ("continue": false)
  {EXIT_FAILED}    the run ended by a limit or an error (max steps, stuck, denials, a server error)
  {EXIT_USAGE}    usage error: a wrong option or value; nothing ran
  {EXIT_INTERRUPTED}  interrupted by Ctrl-C; SIGTERM and SIGHUP give 143 and 129 (128 + signal)
"""
"""The exit status table ``claw --help`` ends with (and chapter 19 documents)."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr, then exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Say what is wrong in one line (``claw: error: ...``) and exit with status 2."""
        # region ch19: one line on stderr naming the problem and pointing at --help; exit 2
        # more: sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_USAGE)
        # endregion


def positive_int(text: str) -> int:
    """``text`` as a whole number of at least 1, for ``--max-steps``."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def http_url(text: str) -> str:
    """``text`` if it is an ``http`` or ``https`` address with a host, for ``--base-url``."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// address, such as https://openrouter.ai/api/v1, "
            f"not {text!r}"
        )
    return text


def model_id(text: str) -> str:
    """``text`` if it can be a model id: not empty, no spaces."""
    if not text.strip() or any(character.isspace() for character in text):
        raise argparse.ArgumentTypeError(f"expected a model id such as openai/gpt-4o, not {text!r}")
    return text


def rule_list(text: str) -> list[str]:
    """``text`` as permission rules, for ``--allowed-tools`` and ``--disallowed-tools``.

    Rules are separated by commas or spaces, as Claude Code takes them; a comma or space inside
    a rule's parentheses belongs to the rule (``Bash(git log *)``). The rules themselves are
    checked with the settings (chapter 13's parser), which names the one that is wrong.
    """
    rules: list[str] = []
    rule, depth = "", 0
    for character in text:
        if character in ", \t\n" and depth == 0:
            rules.append(rule)
            rule = ""
            continue
        if character == "(":
            depth += 1
        elif character == ")" and depth:
            depth -= 1
        rule += character
    rules.append(rule)
    found = [item for item in rules if item]
    if not found:
        raise argparse.ArgumentTypeError(
            f"expected rules such as 'Bash(make *),Read', not {text!r}"
        )
    return found


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Chapter 17's command-line layer: rules, and a settings file, spelled as Claude Code.

    Each rule option may be given more than once; the camelCase spellings are Claude Code's.
    """
    parser.add_argument(
        "--allowed-tools",
        "--allowedTools",
        dest="allowed_tools",
        type=rule_list,
        action="extend",
        metavar="RULES",
        help="allow rules for this run, comma- or space-separated: 'Bash(make *),Read'",
    )
    parser.add_argument(
        "--disallowed-tools",
        "--disallowedTools",
        dest="disallowed_tools",
        type=rule_list,
        action="extend",
        metavar="RULES",
        help="deny rules for this run, comma- or space-separated",
    )
    parser.add_argument(
        "--settings",
        metavar="FILE_OR_JSON",
        help="one more settings layer, above the files: a settings file, or its JSON text",
    )


def add_app_arguments(parser: argparse.ArgumentParser) -> None:
    """Add print mode (``-p``) and ``--output-format`` to ``claw``'s parser."""
    parser.add_argument(
        "-p",
        "--print",
        action="store_true",
        help="print mode, for scripts: print only the answer and exit; piped stdin is added "
        "as context; the prompt - reads the prompt from stdin",
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="with -p: text (the answer), json (one result object) or stream-json "
        "(one JSON object per event, then the result)",
    )


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """``-c/--continue``, ``-r/--resume [ID]`` and ``--fork-session``, spelled as Claude Code."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue this folder's most recent session",
    )
    group.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a session by id (or a unique start of it); without an id, choose from a list",
    )
    parser.add_argument(
        "--fork-session",
        action="store_true",
        help="with --continue or --resume: go on in a new session, leaving the old one as it was",
    )


def check_session_arguments(
    parser: argparse.ArgumentParser, arguments: argparse.Namespace
) -> None:
    """A usage error (exit status 2) for ``--fork-session`` without a session to fork.

    ``-r 'fix the bug'`` with no other prompt is ``-r`` without an id, then the prompt: an id
    never holds a space, and argparse would otherwise take the prompt for one.
    """
    resume, prompt = arguments.resume, getattr(arguments, "prompt", "")
    if resume and prompt is None and any(character.isspace() for character in resume):
        arguments.prompt, arguments.resume = resume, ""
    if arguments.fork_session and not (arguments.continue_session or arguments.resume is not None):
        parser.error("--fork-session needs --continue or --resume (the session to fork)")


DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
"""The model ``claw`` uses when ``--model`` is not given."""

BASE_URL_VARIABLE = "CLAW_BASE_URL"
"""The environment variable that sets the server, like ``--base-url``."""

PROVIDERS = ("openrouter", "anthropic")
"""The APIs ``--provider`` chooses from: chapter 5b's OpenAI format, chapter 24's Messages API."""
PROVIDER_VARIABLE = "CLAW_PROVIDER"
"""The environment variable that sets the provider, like ``--provider``."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")
"""Chapter 13's ``Mode`` values. Named here, not imported, so that the command line of
chapter 12's claw works while chapters 13 to 16 are still being written (or do not import)."""


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line: a prompt, and optionally the model, the server and web access."""
    parser = OneLineParser(
        prog="claw",
        description="Run claw, a coding agent, on the current directory.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        help="what you want done (none: start a conversation; claw config: see the settings)",
    )
    parser.add_argument(
        "--model", type=model_id, help=f"an OpenRouter model id (default: {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--base-url",
        type=http_url,
        help=f"an OpenAI-compatible server (default: ${BASE_URL_VARIABLE} or OpenRouter)",
    )
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=os.environ.get(PROVIDER_VARIABLE, "openrouter"),
        help=f"whose API to speak (chapter 24; default: ${PROVIDER_VARIABLE} or openrouter)",
    )
    parser.add_argument(
        "--web", action="store_true", default=None, help="also give claw the web_fetch tool"
    )
    parser.add_argument(
        "--max-cost", type=Decimal, help="end the run before the session spends more (US dollars)"
    )
    parser.add_argument(
        "--summary",
        choices=("line", "json", "off"),
        help="the summary after each run: one line (default), one JSON object, or none",
    )
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        help="end the run after this many model calls",
    )
    parser.add_argument(
        "--unguarded",
        action="store_true",
        help="no permission rules, safety checks, hooks or plan mode (chapter 12's claw)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        help="what runs without asking (chapter 13); plan: plan first, change nothing (chapter 16)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="use this folder's settings, hooks and instructions in this run, without asking",
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="start the MCP servers of this folder's .mcp.json in this run (chapter 23)",
    )
    add_app_arguments(parser)  # chapter 19: -p, --output-format
    add_session_arguments(parser)  # chapter 22: --continue, --resume, --fork-session
    add_settings_arguments(parser)  # chapter 17: --allowed-tools, --disallowed-tools, --settings
    arguments = parser.parse_args(argv)
    check_session_arguments(parser, arguments)
    return arguments
