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
from .tools.patch import ADD, DELETE, MOVE, UPDATE
from .types import ToolCall, ToolOutput


# --8<-- [start:enums]
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
# --8<-- [end:enums]


Approver = Callable[[ToolCall, str], Awaitable[Approval]]
"""Asks the user about a call: given the call and why it needs approval, returns the answer."""


class Finisher(Protocol):
    """Anything that can end a run, such as chapter 7's ``Agent``."""

    def request_finish(self, reason: Finish) -> None:
        """End the run with ``reason`` after the current step."""


# --8<-- [start:tools]
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
# --8<-- [end:tools]

DEFAULT_MAX_DENIALS = 3
"""How many refused calls end a run (``Finish.PERMISSION_DENIALS``)."""


class RuleError(ValueError):
    """A permission rule that is not ``Tool`` or ``Tool(specifier)``."""


# --8<-- [start:rule]
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
    # region ch13: split "Tool(specifier)" at the first "("; it must end with ")"
    # more: text.strip(); name.replace("_", "").isalnum(); "Tool()" and "Tool(x" are errors
    text = text.strip()
    name, paren, rest = text.partition("(")
    if not name or not name.replace("_", "").isalnum():
        raise RuleError(f"bad permission rule {text!r}: expected Tool or Tool(specifier)")
    if not paren:
        return Rule(name)
    if not rest.endswith(")") or not rest[:-1].strip():
        raise RuleError(f"bad permission rule {text!r}: expected Tool or Tool(specifier)")
    return Rule(name, rest[:-1].strip())
    # endregion
# --8<-- [end:rule]


# --8<-- [start:command-matches]
def command_matches(pattern: str, command: str) -> bool:
    """Whether one simple ``command`` matches a ``Bash(...)`` specifier.

    ``prefix:*`` matches ``prefix`` alone or followed by a space and anything; a ``*``
    anywhere else matches any characters (spaces too), and a final `` *`` may also match
    nothing (``git *`` matches ``git``); anything else must equal the command.
    """
    # region ch13: "prefix:*" is a word-boundary prefix; "*" is a wildcard; else exact
    # more: split the pattern at "*" and match the pieces in order (startswith/find/endswith)
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        return command == prefix or command.startswith(prefix + " ")
    if "*" not in pattern:
        return command == pattern
    if pattern.endswith(" *") and pattern.count("*") == 1 and command == pattern[:-2]:
        return True
    first, *middle, last = pattern.split("*")
    if not command.startswith(first):
        return False
    position = len(first)
    for piece in middle:
        found = command.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return len(command) - position >= len(last) and command.endswith(last)
    # endregion
# --8<-- [end:command-matches]


# --8<-- [start:split]
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
    # region ch13: look for UNSAFE syntax, then lex with shlex (punctuation_chars) and split
    # more: shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n"); whitespace=" \t\r"
    for marker, what in UNSAFE.items():
        if marker in command:
            raise Unsplittable(f"it uses {what}: {marker}")
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # a newline separates commands: it is punctuation here
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as error:
        raise Unsplittable(f"it cannot be parsed ({error})") from error
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= SEPARATOR_CHARS:
            parts.append([])
        else:
            parts[-1].append(token)
    commands = [" ".join(words) for words in parts if words]
    if not commands:
        raise Unsplittable("it holds no command")
    for words in parts:
        if words and (words[0] in KEYWORDS or "=" in words[0].split("/")[0]):
            raise Unsplittable(f"it uses shell syntax the splitter does not handle ({words[0]})")
    return commands
    # endregion
# --8<-- [end:split]


# --8<-- [start:path-matches]
def path_matches(pattern: str, path: str, root: Path, home: Path | None = None) -> bool:
    """Whether ``path`` (relative to ``root``, or absolute) matches a gitignore-style pattern.

    ``//x`` is the absolute path ``/x``; ``~/x`` is under ``home`` (default: the user's home);
    ``/x`` and ``./x`` are anchored at ``root``; a bare pattern is relative to ``root`` and,
    as in ``.gitignore``, one without a ``/`` matches at any depth (``*.env``). A folder
    matches when the pattern covers what is in it (``secrets/**`` matches ``secrets``).
    """
    # region ch13: pick the base folder from the prefix, make path relative to it, pathspec
    # more: normpath(join(root, path)); relpath to base; ".." means outside; GitIgnoreSpec
    if pattern.startswith("//"):
        base, rest = Path("/"), "/" + pattern[2:]
    elif pattern.startswith("~/"):
        base, rest = home or Path.home(), "/" + pattern[2:]
    elif pattern.startswith("./"):
        base, rest = root, "/" + pattern[2:]
    else:
        base, rest = root, pattern
    full = posixpath.normpath(posixpath.join(os.fspath(root), path))
    relative = posixpath.relpath(full, posixpath.normpath(os.fspath(base)))
    if relative == ".." or relative.startswith("../"):
        return False
    spec = pathspec.GitIgnoreSpec.from_lines([rest])
    return spec.match_file(relative) or spec.match_file(relative + "/")  # a folder: its files
    # endregion
# --8<-- [end:path-matches]


# --8<-- [start:webfetch]
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
# --8<-- [end:webfetch]


# --8<-- [start:subjects]
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
# --8<-- [end:subjects]


@dataclass(frozen=True)
class Verdict:
    """A decision, and why: the rule that matched, or what the mode says."""

    decision: Decision
    reason: str
    rule: Rule | None = None


# --8<-- [start:mode-default]
def mode_default(mode: Mode, name: str) -> Decision:
    """What ``mode`` says about a call to the tool ``name`` when no rule matches it."""
    if name in LOOKING_TOOLS or mode is Mode.BYPASS:
        return Decision.ALLOW
    if name in EDIT_TOOLS:
        return {Mode.ACCEPT_EDITS: Decision.ALLOW, Mode.PLAN: Decision.DENY}.get(mode, Decision.ASK)
    if mode is Mode.PLAN and name != "web_fetch":  # web_fetch only reads, if off the machine
        return Decision.DENY
    return Decision.ASK
# --8<-- [end:mode-default]


class Permissions:
    """The rules, the mode and the approval handler, and the ``check`` that applies them."""

    # --8<-- [start:init]
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
    # --8<-- [end:init]

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

    # --8<-- [start:decide-one]
    def decide_one(self, name: str, subject: str | None) -> Verdict:
        """The verdict for one subject of a call.

        The first matching rule in the order deny, ask, allow decides; when none matches, the
        mode's default does.
        """
        # region ch13: for deny, ask, allow in that order, the first matching rule decides
        # more: self.rules[decision]; self.rule_matches(rule, name, subject); else mode_default
        shown = f" {subject!r}" if subject is not None else ""
        for decision in (Decision.DENY, Decision.ASK, Decision.ALLOW):
            for rule in self.rules[decision]:
                if self.rule_matches(rule, name, subject):
                    return Verdict(decision, f'the {decision} rule "{rule}" matches{shown}', rule)
        decision = mode_default(self.mode, name)
        return Verdict(decision, f"no rule matches{shown}; {self.mode} mode says {decision}")
        # endregion
    # --8<-- [end:decide-one]

    # --8<-- [start:decide]
    def decide(self, call: ToolCall) -> Verdict:
        """The verdict for a whole call: the worst verdict of its subjects.

        Every subject (every simple command of a shell command) is decided on its own; a deny
        wins over an ask, an ask over an allow.
        """
        # region ch13: split a bash command; a deny anywhere wins, then an ask, else allow
        # more: Unsplittable: deny if a deny rule matches the whole command, else ASK
        subjects: Sequence[str | None] = call_subjects(call) or [None]
        if call.name == "bash":
            command = str(subjects[0])
            try:
                subjects = split_command(command)
            except Unsplittable as why:
                whole = self.decide_one("bash", command)
                if whole.decision is Decision.DENY:
                    return whole
                reason = f"the command cannot be split into simple commands safely: {why}"
                return Verdict(Decision.ASK, reason)
        verdicts = [self.decide_one(call.name, subject) for subject in subjects]
        for decision in (Decision.DENY, Decision.ASK):
            for verdict in verdicts:
                if verdict.decision is decision:
                    return verdict
        return verdicts[0]
        # endregion
    # --8<-- [end:decide]

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

    # --8<-- [start:check-redirect]
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
    # --8<-- [end:check-redirect]

    # --8<-- [start:check]
    async def check(self, call: ToolCall) -> ToolCall | ToolOutput:
        """A ``Controls`` check: let ``call`` go on, or answer it with an error saying why not.

        An ``ask`` verdict goes to ``approve``; "session" and "project" answers add allow
        rules (the latter also to the settings file). Every refusal counts; at ``max_denials``
        the agent is asked to finish with ``Finish.PERMISSION_DENIALS``.
        """
        # region ch13: decide; ask the approver; add allow rules for "always"; count refusals
        # more: no approver: refuse "it needs approval and none was given"; add_rule(...)
        verdict = self.decide(call)
        if verdict.decision is Decision.ALLOW:
            return call
        if verdict.decision is Decision.DENY:
            return self.refuse(call, verdict.reason)
        if self.approve is None:
            return self.refuse(call, f"{verdict.reason}; it needs approval and none was given")
        answer = await self.approve(call, verdict.reason)
        if answer is Approval.DENY:
            return self.refuse(call, f"{verdict.reason}; the user refused it")
        if answer in (Approval.SESSION, Approval.PROJECT):
            for rule in self.allow_rules_for(call):
                self.rules[Decision.ALLOW].append(parse_rule(rule))
                if answer is Approval.PROJECT:
                    add_rule(self.settings, "allow", rule)
        return call
        # endregion

    def refuse(self, call: ToolCall, reason: str) -> ToolOutput:
        """Count one refusal, end the run if there were too many, and say what was refused."""
        self.denials += 1
        if self.agent is not None and self.denials >= self.max_denials:
            self.agent.request_finish(Finish.PERMISSION_DENIALS)
        return ToolOutput.error(
            f"Permission denied: the {call.name} call did not run because {reason}. "
            "Do not try to reach the same result another way; ask the user if you need it."
        )
    # --8<-- [end:check]
