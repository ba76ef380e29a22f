"""Permissions: which tool calls run, which need the user's approval, and which never run.

Rules are written as in Claude Code: ``Tool`` or ``Tool(specifier)``, in three lists. A call
is checked against the deny rules, then the ask rules, then the allow rules; the first rule
that matches decides, however specific another rule may be. When nothing matches, the mode
decides (``Mode``). A shell command is split into its simple commands first, and every one
of them must be allowed on its own; a command that cannot be split safely is never allowed
without asking.

``Permissions.check`` is a chapter 13 check for ``Controls`` (``control.py``).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import httpx
import pathspec

from .agent import Finish
from .settings_file import SETTINGS_FILE, add_rule, permission_rules
from .todo import Todo
from .tools.patch import ADD, DELETE, MOVE, UPDATE
from .types import ToolCall, ToolOutput


class Decision(StrEnum):
    """What the permission rules say about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Mode(StrEnum):
    """What happens to a call no rule matches (the names are Claude Code's)."""

    DEFAULT = "default"
    """Looking tools run; edits and commands ask."""
    ACCEPT_EDITS = "acceptEdits"
    """Looking tools and edits run; commands ask."""
    PLAN = "plan"
    """Looking tools run; edits and commands are denied."""
    BYPASS = "bypassPermissions"
    """Everything runs (deny and ask rules still apply)."""


class Approval(StrEnum):
    """The user's answer when a call needs approval."""

    DENY = "deny"
    """No: the call does not run."""
    ONCE = "once"
    """Yes, this call only."""
    SESSION = "session"
    """Yes, and don't ask again while this session lasts (an allow rule in memory)."""
    PROJECT = "project"
    """Yes, and don't ask again in this project (an allow rule in the settings file)."""


Approver = Callable[[ToolCall, str], Awaitable[Approval]]
"""Asks the user about a call: given the call and why it needs approval, returns the answer."""


class Finisher(Protocol):
    """Anything that can end a run, such as chapter 7's ``Agent``."""

    def request_finish(self, reason: Finish) -> None:
        """End the run with ``reason`` after the current step."""


TOOL_NAMES: dict[str, frozenset[str]] = {
    "Bash": frozenset({"bash"}),
    "Read": frozenset({"read", "grep", "glob", "list_dir"}),
    "Edit": frozenset({"edit", "write", "apply_patch"}),
    "Write": frozenset({"write"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"glob"}),
    "LS": frozenset({"list_dir"}),
    "WebFetch": frozenset({"web_fetch"}),
}
"""Claude Code's tool names in rules, and the claw tools each one covers. A rule may also
name a claw tool directly (``bash``, ``write``, ...): it then covers that tool only."""

LOOKING_TOOLS = frozenset({"read", "grep", "glob", "list_dir"})
"""Tools that only look at the workspace: allowed in every mode unless a rule says otherwise."""
EDIT_TOOLS = frozenset({"edit", "write", "apply_patch"})
"""Tools that change files: they ask in ``default``, run in ``acceptEdits``."""
PATH_TOOLS = LOOKING_TOOLS | EDIT_TOOLS
"""Tools whose rule specifier is a path pattern."""

DEFAULT_MAX_DENIALS = 3
"""How many refused calls end a run (``Finish.PERMISSION_DENIALS``)."""


class RuleError(ValueError):
    """A permission rule that is not ``Tool`` or ``Tool(specifier)``."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``Bash(git *)`` is ``Rule("Bash", "git *")``; ``Edit`` has no specifier."""

    tool: str
    specifier: str | None = None

    def __str__(self) -> str:
        """The rule as written in a settings file."""
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def covers(self, name: str) -> bool:
        """Whether this rule is about the claw tool called ``name``."""
        return name in TOOL_NAMES.get(self.tool, frozenset({self.tool}))


def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise ``RuleError`` for anything else.

    The tool name is letters, digits and ``_``; the specifier is everything between the first
    ``(`` and the final ``)``, and may not be empty.
    """
    raise Todo("ch13", "split \"Tool(specifier)\" at the first \"(\"; it must end with \")\"")


def command_matches(pattern: str, command: str) -> bool:
    """Whether one simple ``command`` matches a ``Bash(...)`` specifier.

    ``prefix:*`` matches ``prefix`` alone or followed by a space and anything; a ``*``
    anywhere else matches any characters (spaces too), and a final `` *`` may also match
    nothing (``git *`` matches ``git``); anything else must equal the command.
    """
    raise Todo("ch13", "\"prefix:*\" is a word-boundary prefix; \"*\" is a wildcard; else exact")


SEPARATOR_CHARS = frozenset("&|;\n()")
"""A token made only of these separates commands: ``&&``, ``||``, ``;``, ``|``, ``&``, newline,
``|&``, and the parentheses of a subshell."""

UNSAFE = {
    "$(": "command substitution",
    "`": "command substitution",
    "<(": "process substitution",
    ">(": "process substitution",
    "<<": "a here-document",
}
"""Shell syntax the splitter does not take apart: a command holding one of these asks."""

KEYWORDS = frozenset(
    {
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
        "case", "esac", "select", "function", "{", "}", "!", "[[", "]]",
    }
)  # fmt: skip
"""Words that start shell syntax rather than a command."""


class Unsplittable(ValueError):
    """A command the splitter cannot take apart safely; the message says why."""


def split_command(command: str) -> list[str]:
    """The simple commands in a shell ``command``, each as its words joined by single spaces.

    ``git status && rm -rf "$HOME"`` gives ``["git status", "rm -rf $HOME"]``. Raises
    ``Unsplittable`` for what cannot be split safely: unbalanced quotes, command or process
    substitution, here-documents, shell keywords (``if``, ``for``, ...), a command that starts
    with a variable assignment, and an empty part (``a && && b``).
    """
    raise Todo("ch13", "look for UNSAFE syntax, then lex with shlex (punctuation_chars) and split")


def path_matches(pattern: str, path: str, root: Path, home: Path | None = None) -> bool:
    """Whether ``path`` (relative to ``root``, or absolute) matches a gitignore-style pattern.

    ``//x`` is the absolute path ``/x``; ``~/x`` is under ``home`` (default: the user's home);
    ``/x`` and ``./x`` are anchored at ``root``; a bare pattern is relative to ``root`` and,
    as in ``.gitignore``, one without a ``/`` matches at any depth (``*.env``). A folder
    matches when the pattern covers what is in it (``secrets/**`` matches ``secrets``).
    """
    raise Todo("ch13", "pick the base folder from the prefix, make path relative to it, pathspec")


def host_of(url: str) -> str:
    """The host name of ``url`` as sent: lower case, ASCII, no trailing dot; ``""`` if none.

    An international name is in its ``xn--`` form, as a browser's ``URL.hostname`` gives it.
    """
    try:
        return httpx.URL(url).raw_host.decode("ascii").lower().removesuffix(".")
    except (httpx.InvalidURL, TypeError, UnicodeDecodeError):
        return ""


def domain_matches(pattern: str, host: str) -> bool:
    """Whether ``host`` matches the ``domain:`` pattern of a ``WebFetch`` rule.

    As Claude Code's documentation states: case does not matter, and a trailing dot is
    dropped from both; ``*`` alone matches every host; a leading ``*.`` matches any
    subdomain, at any depth, but not the domain itself; anywhere else ``*`` matches within
    one label (``example.*`` matches ``example.org``, not ``example.evil.com``).
    """
    pattern = pattern.strip().lower().removesuffix(".")
    host = host.lower().removesuffix(".")
    if pattern == "*":
        return bool(host)
    prefix = ""
    if pattern.startswith("*."):
        prefix, pattern = r"(?:[^.]+\.)+", pattern[2:]
    label_wildcards = r"[^.]*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(prefix + label_wildcards, host) is not None


def call_subjects(call: ToolCall) -> list[str] | None:
    """What a call's rules are matched against; ``None`` for tools without a specifier.

    The paths of a file tool (every path an ``apply_patch`` names), the URL of ``web_fetch``,
    the whole command of ``bash`` (``decide`` splits it).
    """
    arguments = call.arguments
    if call.name == "bash":
        return [str(arguments.get("command", ""))]
    if call.name == "apply_patch":
        paths = []
        for line in str(arguments.get("patch", "")).splitlines():
            for marker in (ADD, DELETE, UPDATE, MOVE):
                if line.startswith(marker):
                    paths.append(line[len(marker) :].strip())
        return paths or [""]
    if call.name in PATH_TOOLS:
        return [str(arguments.get("path", "."))]
    if call.name == "web_fetch":
        return [str(arguments.get("url", ""))]
    return None


@dataclass(frozen=True)
class Verdict:
    """A decision, and why: the rule that matched, or what the mode says."""

    decision: Decision
    reason: str
    rule: Rule | None = None


def mode_default(mode: Mode, name: str) -> Decision:
    """What ``mode`` says about a call to the tool ``name`` when no rule matches it."""
    if name in LOOKING_TOOLS or mode is Mode.BYPASS:
        return Decision.ALLOW
    if name in EDIT_TOOLS:
        return {Mode.ACCEPT_EDITS: Decision.ALLOW, Mode.PLAN: Decision.DENY}.get(mode, Decision.ASK)
    if mode is Mode.PLAN and name != "web_fetch":  # web_fetch only reads, if off the machine
        return Decision.DENY
    return Decision.ASK


class Permissions:
    """The rules, the mode and the approval handler, and the ``check`` that applies them."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        mode: Mode = Mode.DEFAULT,
        approve: Approver | None = None,
        settings: Path | None = None,
        max_denials: int = DEFAULT_MAX_DENIALS,
        agent: Finisher | None = None,
        home: Path | None = None,
    ) -> None:
        """Rules for the project in ``root``.

        ``approve`` asks the user (none: a call that needs approval is refused). ``settings``
        is the project's settings file, where "always for this project" answers go (default:
        ``root/.claw/settings.json``). After ``max_denials`` refused calls, ``agent`` is asked
        to end its run with ``Finish.PERMISSION_DENIALS``.
        """
        self.root = Path(root)
        self.rules = {
            Decision.DENY: [parse_rule(rule) for rule in deny],
            Decision.ASK: [parse_rule(rule) for rule in ask],
            Decision.ALLOW: [parse_rule(rule) for rule in allow],
        }
        self.mode = mode
        self.approve = approve
        self.settings = settings if settings is not None else self.root / SETTINGS_FILE
        self.max_denials = max_denials
        self.agent = agent
        self.home = home
        self.denials = 0
        """Calls refused so far (by a rule, the mode, or the user)."""

    @classmethod
    def for_project(cls, root: Path | str, **options: object) -> Permissions:
        """Permissions with the rules of ``root/.claw/settings.json`` (if the file exists)."""
        lists = permission_rules(Path(root) / SETTINGS_FILE)
        return cls(root, **lists, **options)  # type: ignore[arg-type]

    def rule_matches(self, rule: Rule, name: str, subject: str | None) -> bool:
        """Whether ``rule`` matches a call to ``name`` about ``subject``.

        ``subject`` is one simple command, one path or one URL; ``None`` for tools that have
        none, which only a rule without a specifier matches.
        """
        if not rule.covers(name):
            return False
        if rule.specifier is None:
            return True
        if subject is None:
            return False
        if name == "bash":
            return command_matches(rule.specifier, subject)
        if name == "web_fetch":
            kind, _, domain = rule.specifier.partition(":")
            return kind == "domain" and domain_matches(domain, host_of(subject))
        return path_matches(rule.specifier, subject, self.root, self.home)

    def decide_one(self, name: str, subject: str | None) -> Verdict:
        """The verdict for one subject of a call.

        The first matching rule in the order deny, ask, allow decides; when none matches, the
        mode's default does.
        """
        raise Todo("ch13", "for deny, ask, allow in that order, the first matching rule decides")

    def decide(self, call: ToolCall) -> Verdict:
        """The verdict for a whole call: the worst verdict of its subjects.

        Every subject (every simple command of a shell command) is decided on its own; a deny
        wins over an ask, an ask over an allow.
        """
        raise Todo("ch13", "split a bash command; a deny anywhere wins, then an ask, else allow")

    def allow_rules_for(self, call: ToolCall) -> list[str]:
        """The allow rules an "always" answer adds: one per simple command or path."""
        subjects = call_subjects(call)
        if call.name == "bash" and subjects:
            try:
                return [f"Bash({part})" for part in split_command(subjects[0])]
            except Unsplittable:
                return [f"Bash({subjects[0]})"]
        if call.name in PATH_TOOLS and subjects:
            tool = "Edit" if call.name in EDIT_TOOLS else "Read"
            paths = [posixpath.normpath(subject).removeprefix("./") for subject in subjects]
            return [f"{tool}(/{path})" for path in paths]
        if call.name == "web_fetch" and subjects:
            return [f"WebFetch(domain:{host_of(subjects[0])})"]
        return [call.name]

    def check_redirect(self, source: str, target: str) -> str | None:
        """Whether ``web_fetch`` may follow ``source``'s redirect: chapter 12's ``RedirectCheck``.

        ``None`` to follow the redirect to ``target``, else why not, for the model.
        Every hop is decided as a call to fetch ``target`` would be. Allowed: followed.
        Denied: not followed, and the deny rule is named. Needing approval: followed when
        ``target`` is on the host of ``source``, which a rule, the mode or the user already
        let through for this call; for another host, not followed, and the model is told to
        fetch it with a call of its own, which is checked, and asked about, like any other.
        """
        verdict = self.decide_one("web_fetch", target)
        if verdict.decision is Decision.ALLOW:
            return None
        if verdict.decision is Decision.DENY:
            return f"the permission rules deny it: {verdict.reason}"
        if host_of(target) == host_of(source):
            return None
        return (
            f"its host needs approval ({verdict.reason}): fetch that URL with a web_fetch "
            "call of its own if you need it"
        )

    async def check(self, call: ToolCall) -> ToolCall | ToolOutput:
        """A ``Controls`` check: let ``call`` go on, or answer it with an error saying why not.

        An ``ask`` verdict goes to ``approve``; "session" and "project" answers add allow
        rules (the latter also to the settings file). Every refusal counts; at ``max_denials``
        the agent is asked to finish with ``Finish.PERMISSION_DENIALS``.
        """
        raise Todo(
            "ch13",
            "decide; ask the approver; add allow rules for \"always\"; count refusals",
        )

    def refuse(self, call: ToolCall, reason: str) -> ToolOutput:
        """Count one refusal, end the run if there were too many, and say what was refused."""
        self.denials += 1
        if self.agent is not None and self.denials >= self.max_denials:
            self.agent.request_finish(Finish.PERMISSION_DENIALS)
        return ToolOutput.error(
            f"Permission denied: the {call.name} call did not run because {reason}. "
            "Do not try to reach the same result another way; ask the user if you need it."
        )
