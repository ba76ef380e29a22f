"""Permissions: which tool calls run, which need the user's approval, and which never run.

Rules are written as in Claude Code: ``Tool`` or ``Tool(specifier)``, in three lists. A call
is checked against the deny rules, then the ask rules, then the allow rules; the first rule
that matches decides, however specific another rule may be. When nothing matches, the mode
decides (``Mode``). A shell command is split into its simple commands first, and every one
of them must be allowed on its own; a command that cannot be split safely is never allowed
without asking. Before matching, claw looks through what Claude Code's documentation says it
looks through (wrappers such as ``timeout``, safe variable assignments, bare ``xargs``), and,
for deny and ask rules, through every other spelling it can recognise (``/bin/rm``, ``env``,
``sudo``, any assignment): a deny rule holds for each of them. Output redirections are edits
of their targets, and Claude Code's built-in read-only commands run without asking.

``Permissions.check`` is a chapter 13 check for ``Controls`` (``control.py``).
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import os
import posixpath
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import httpx
import pathspec

from .agent import Finish
from .errors import SettingsError
from .settings_file import LOCAL_SETTINGS_FILE, SETTINGS_FILE, add_rule, permission_rules
from .shell_syntax import (
    FS_COMMANDS,
    MAGIC,
    Simple,
    Unsplittable,
    analyse,
    control_parts,
    program_of,
    runs_apart,
    split_command,
    strip_documented,
    substitution_bodies,
    unquoted_glob,
)
from .tool_names import (
    EDIT_TOOLS,
    LOOKING_TOOLS,
    MEMORY_TOOLS,
    PATH_TOOLS,
    TOOL_NAMES,
    UNASKED_TOOLS,
    UNREAD_PATH_RULES,
    claude_code_name,
)
from .tools.patch import (
    ADD,
    DELETE,
    MOVE,
    UPDATE,
    AddFile,
    DeleteFile,
    PatchError,
    UpdateFile,
    parse_patch,
)
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
    """Looking tools and read-only commands run; edits and other commands ask. Claude Code
    also calls it ``manual``: ``Mode("manual")`` is this member."""
    ACCEPT_EDITS = "acceptEdits"
    """Also edits, and ``mkdir``, ``touch``, ``rm``, ``rmdir``, ``mv``, ``cp``, ``sed`` on
    paths inside the project, run; other commands ask."""
    PLAN = "plan"
    """Looking tools and read-only commands run; edits and other commands are denied."""
    AUTO = "auto"
    """Claude Code lets a classifier model approve calls; claw has none, so it asks as in
    ``default``: nothing runs on a judgement claw cannot make."""
    DONT_ASK = "dontAsk"
    """What would ask is denied: only looking tools, read-only commands and allow rules run."""
    BYPASS = "bypassPermissions"
    """Everything runs (deny and ask rules still apply)."""

    @classmethod
    def _missing_(cls, value: object) -> Mode | None:
        """``manual``, Claude Code's other name for ``default``."""
        return cls.DEFAULT if value == "manual" else None


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



DEFAULT_MAX_DENIALS = 3
"""How many refused calls end a run (``Finish.PERMISSION_DENIALS``)."""

MAX_SAVED_RULES = 5
"""The most allow rules one "always" answer saves for a compound command (Claude Code's)."""


class RuleError(SettingsError):
    """A permission rule that is not ``Tool`` or ``Tool(specifier)``."""


def is_mcp_server_rule(tool: str) -> bool:
    """Whether a rule's tool is ``mcp__<server>`` (chapter 23): every tool of that MCP server."""
    server = tool.removeprefix("mcp__")
    return tool.startswith("mcp__") and bool(server) and "__" not in server


@dataclass(frozen=True)
class Rule:
    """One parsed rule: ``Bash(git *)`` is ``Rule("Bash", "git *")``; ``Edit`` has no specifier."""

    tool: str
    specifier: str | None = None

    def __str__(self) -> str:
        """The rule as written in a settings file."""
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def covers(self, name: str, decision: Decision | None = None) -> bool:
        """Whether this rule, in the ``decision`` list, is about the claw tool called ``name``.

        ``Read`` covers every looking tool and ``Edit`` every editing tool, except that a bare
        ``Edit`` allow rule does not allow ``write`` (as in Claude Code); a ``Read`` deny rule
        also covers the editing tools. A tool name with ``*`` is a glob over both names of the
        tool (claw's and Claude Code's).
        """
        if self.tool == "Read" and (
            name in LOOKING_TOOLS or (decision is Decision.DENY and name in EDIT_TOOLS)
        ):
            return True
        if self.tool == "Edit" and name in EDIT_TOOLS:
            return not (name == "write" and self.specifier is None and decision is Decision.ALLOW)
        if "*" in self.tool:
            names = (name, claude_code_name(name))
            return any(fnmatch.fnmatchcase(each, self.tool) for each in names)
        if is_mcp_server_rule(self.tool) and name.startswith(self.tool + "__"):
            return True
        return name in TOOL_NAMES.get(self.tool, frozenset({self.tool}))


def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise ``RuleError`` for anything else.

    The tool name is letters, digits, ``_`` and ``*`` (a glob over tool names); the specifier
    is everything between the first ``(`` and the final ``)``, and may not be empty.
    """
    # region ch13: split "Tool(specifier)" at the first "("; it must end with ")"
    # more: text.strip(); name.replace("_", "").isalnum(); "Tool()" and "Tool(x" are errors
    text = text.strip()
    name, paren, rest = text.partition("(")
    if not name or not (name == "*" or name.replace("_", "").replace("*", "").isalnum()):
        raise RuleError(f"bad permission rule {text!r}: expected Tool or Tool(specifier)")
    if not paren:
        return Rule(name)
    if not rest.endswith(")") or not rest[:-1].strip():
        raise RuleError(f"bad permission rule {text!r}: expected Tool or Tool(specifier)")
    return Rule(name, rest[:-1].strip())
    # endregion


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


def escape_pattern(path: str) -> str:
    r"""``path`` as a gitignore pattern that matches that path only (``[`` becomes ``\[``)."""
    escaped = re.sub(r"([\\*?\[\]])", r"\\\1", path)
    if escaped.startswith(("!", "#")):
        escaped = "\\" + escaped
    return escaped


def bare_pattern(pattern: str) -> str:
    """``pattern`` without its ``./``, as a bare gitignore pattern (``./.env`` is ``.env``).

    A ``#`` or ``!`` it then starts with is escaped: ``./!`` is the file named ``!``, never a
    comment or a negation.
    """
    if not pattern.startswith("./"):
        return pattern
    bare = pattern[2:]
    return "\\" + bare if bare.startswith(("#", "!")) else bare


def path_matches(
    pattern: str, path: str, root: Path, home: Path | None = None, *, anywhere: bool = False
) -> bool:
    """Whether ``path`` (relative to ``root``, or absolute) matches a gitignore-style pattern.

    ``//x`` is the absolute path ``/x``; ``~/x`` is under ``home`` (default: the user's home);
    ``/x`` is anchored at ``root``; a bare pattern is relative to ``root`` and, as in
    ``.gitignore``, one without a ``/`` matches at any depth (``*.env``); ``./x`` is the bare
    pattern ``x`` (``./.env`` matches ``config/.env``, as in Claude Code). With
    ``anywhere`` (deny and ask rules), a bare pattern of one folder name and ``/**``
    (``secrets/**``) matches that folder at any depth too. A folder matches when the pattern
    covers what is in it (``secrets/**`` matches ``secrets``).
    """
    # region ch13: pick the base folder from the prefix, make path relative to it, pathspec
    # more: bare_pattern drops "./"; normpath(join(root, path)); relpath; ".." is outside
    bare = bare_pattern(pattern)
    if pattern.startswith("//"):
        base, rest = Path("/"), "/" + pattern[2:]
    elif pattern.startswith("~/"):
        base, rest = home or Path.home(), "/" + pattern[2:]
    elif anywhere and re.fullmatch(r"[^/]+/\*\*", bare):
        base, rest = root, "**/" + bare
    else:
        base, rest = root, bare
    full = posixpath.normpath(posixpath.join(os.fspath(root), path))
    relative = posixpath.relpath(full, posixpath.normpath(os.fspath(base)))
    if relative == ".." or relative.startswith("../"):
        return False
    spec = pathspec.GitIgnoreSpec.from_lines([rest])
    return spec.match_file(relative) or spec.match_file(relative + "/")  # a folder: its files
    # endregion


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
class BadSubject(ValueError):
    """A call whose paths claw cannot read safely: it is refused, never matched as ``""``."""


HEADERS = (ADD, DELETE, UPDATE, MOVE)
"""The patch lines that name a path."""

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""Control characters: no path a rule could be meant to match holds one."""


def call_subjects(call: ToolCall) -> list[str] | None:
    """What a call's rules are matched against; ``None`` for tools without a specifier.

    The paths of a file tool (every path an ``apply_patch`` names, read by the tool's own
    parser), the URL of ``web_fetch``, the whole command of ``bash`` (``decide`` splits it).
    Raises ``BadSubject`` for a patch that does not parse or a path with a control character.
    """
    arguments = call.arguments
    if call.name == "bash":
        return [str(arguments.get("command", ""))]
    if call.name == "apply_patch":
        patch = str(arguments.get("patch", ""))
        paths = []
        try:
            for operation in parse_patch(patch):
                if isinstance(operation, AddFile | DeleteFile | UpdateFile):
                    paths.append(operation.path)
                if isinstance(operation, UpdateFile) and operation.move_to:
                    paths.append(operation.move_to)
        except PatchError:  # the tool refuses it too; still, every header it holds is decided
            for line in patch.split("\n"):  # splitlines would also split at \x1c
                marker = next((m for m in HEADERS if line.strip().startswith(m.strip())), None)
                if marker is not None:
                    path = line.strip().removeprefix(marker.strip())
                    if CONTROL.search(line.removesuffix("\r")):
                        why = f"the patch header {line!r} holds a control character"
                        raise BadSubject(why) from None
                    paths.append(path.strip())
        subjects = paths or [""]
    elif call.name in PATH_TOOLS:
        subjects = [str(arguments.get("path", "."))]
    elif call.name == "web_fetch":
        return [str(arguments.get("url", ""))]
    else:
        return None
    for path in subjects:
        if CONTROL.search(path):
            raise BadSubject(f"the path {path!r} holds a control character")
    return subjects
# --8<-- [end:subjects]


@dataclass(frozen=True)
class Ruling:
    """The rules' decision on a call, and why: the rule that matched, or what the mode says."""

    decision: Decision
    reason: str
    rule: Rule | None = None


def mode_default(mode: Mode, name: str) -> Decision:
    """What ``mode`` says about a call to the tool ``name`` when no rule matches it."""
    if name in LOOKING_TOOLS or name in UNASKED_TOOLS or mode is Mode.BYPASS:
        return Decision.ALLOW
    if mode is Mode.DONT_ASK:
        return Decision.DENY
    if name in EDIT_TOOLS or name in MEMORY_TOOLS:
        return {Mode.ACCEPT_EDITS: Decision.ALLOW, Mode.PLAN: Decision.DENY}.get(mode, Decision.ASK)
    if mode is Mode.PLAN and name != "web_fetch":  # web_fetch only reads, if off the machine
        return Decision.DENY
    return Decision.ASK


def check_rule(rule: Rule, decision: Decision) -> None:
    """Refuse a rule claw would not apply as written, with a ``RuleError`` saying why.

    A path rule for a tool Claude Code never reads path rules for (``Write(docs/**)``), a
    tool-name glob in an allow rule, or a path pattern that does not compile.
    """
    if rule.specifier is not None and rule.tool in UNREAD_PATH_RULES:
        instead = "Read" if rule.tool == "Glob" else "Edit"
        raise RuleError(
            f'"{rule}": Claude Code never consults {rule.tool}(...) path rules, so claw does '
            f'not accept them either; write "{instead}({rule.specifier})" instead'
        )
    if "*" in rule.tool and decision is Decision.ALLOW:
        raise RuleError(
            f'"{rule}": a tool name with "*" may only deny or ask; an allow rule must '
            "name its tool"
        )
    if rule.specifier is not None and any(rule.covers(name, decision) for name in PATH_TOOLS):
        try:
            pathspec.GitIgnoreSpec.from_lines([compiled_pattern(rule.specifier, decision)])
        except (ValueError, re.error) as error:
            raise RuleError(f'"{rule}": the path pattern does not compile ({error})') from error


def compiled_pattern(specifier: str, decision: Decision) -> str:
    """The gitignore line ``path_matches`` compiles for a path rule's ``specifier``.

    The same prefixes (``//`` and ``~/`` become ``/``; ``./`` is dropped) and, for a deny or
    ask rule, the
    same ``**/`` before a bare ``name/**``: so a pattern that passes ``check_rule`` never fails
    on a later call, and one that would compile there is never refused.
    """
    for prefix in ("//", "~/"):
        if specifier.startswith(prefix):
            return "/" + specifier[len(prefix) :]
    specifier = bare_pattern(specifier)
    if decision is not Decision.ALLOW and re.fullmatch(r"[^/]+/\*\*", specifier):
        return "**/" + specifier
    return specifier


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
        is the settings file where "always for this project" answers go (default:
        ``root/.claw/settings.json``; the ``claw`` command of chapter 17 passes the personal
        ``root/.claw/settings.local.json``, which git ignores). After ``max_denials`` refused
        calls, ``agent`` is asked to end its run with ``Finish.PERMISSION_DENIALS``.
        """
        self.root = Path(root)
        self.rules = {
            Decision.DENY: [parse_rule(rule) for rule in deny],
            Decision.ASK: [parse_rule(rule) for rule in ask],
            Decision.ALLOW: [parse_rule(rule) for rule in allow],
        }
        for decision, rules in self.rules.items():
            for rule in rules:
                check_rule(rule, decision)
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
        """Permissions with the rules of the project's two settings files (those that exist).

        ``root/.claw/settings.json``, and its personal neighbour ``settings.local.json``, where
        the ``claw`` command saves approvals (chapter 17).
        """
        lists = permission_rules(Path(root) / SETTINGS_FILE)
        for name, rules in permission_rules(Path(root) / LOCAL_SETTINGS_FILE).items():
            lists[name] += [rule for rule in rules if rule not in lists[name]]
        return cls(root, **lists, **options)  # type: ignore[arg-type]
    # --8<-- [end:init]

    def rule_matches(
        self, rule: Rule, name: str, subject: str | None, decision: Decision | None = None
    ) -> bool:
        """Whether ``rule``, in the ``decision`` list, matches a call to ``name`` about ``subject``.

        ``subject`` is one simple command, one path or one URL; ``None`` for tools that have
        none, which only a rule without a specifier matches.
        """
        if not rule.covers(name, decision):
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
        return self.path_rule_matches(rule.specifier, subject, decision)

    def path_rule_matches(self, pattern: str, path: str, decision: Decision | None) -> bool:
        """Whether a path rule matches ``path`` as written and as the file system resolves it.

        A deny or ask rule matches when either does (a link to a denied file is denied); an
        allow rule only when both do (a link out of an allowed folder still asks).
        """
        anywhere = decision is not Decision.ALLOW
        if path == "~" or path.startswith("~/"):  # a command's home path: under ``home``
            path = os.fspath(self.home or Path.home()) + path[1:]
        written = path_matches(pattern, path, self.root, self.home, anywhere=anywhere)
        full = os.path.join(os.path.abspath(self.root), path)
        real_root = Path(os.path.realpath(self.root))
        resolved = os.path.realpath(full)
        real = path_matches(pattern, resolved, real_root, self.home, anywhere=anywhere)
        return (written or real) if anywhere else (written and real)

    def decide_one(self, name: str, subject: str | None) -> Ruling:
        """The verdict for one subject of a call.

        The first matching rule in the order deny, ask, allow decides (in ``plan`` mode no
        allow rule allows an edit); when none matches, the mode's default does, except that a
        path outside the project asks where the mode would allow it (``bypassPermissions``
        aside).
        """
        # region ch13: for deny, ask, allow in that order, the first matching rule decides
        # more: self.rule_matches(rule, name, subject); mode_default; not self.inside(subject): ask
        shown = f" {subject!r}" if subject is not None else ""
        for decision in (Decision.DENY, Decision.ASK, Decision.ALLOW):
            if decision is Decision.ALLOW and self.mode is Mode.PLAN and name in EDIT_TOOLS:
                break
            for rule in self.rules[decision]:
                if self.rule_matches(rule, name, subject, decision):
                    return Ruling(decision, f'the {decision} rule "{rule}" matches{shown}', rule)
        decision = mode_default(self.mode, name)
        if (
            decision is Decision.ALLOW
            and self.mode is not Mode.BYPASS
            and name in PATH_TOOLS
            and subject is not None
            and not self.inside(subject)
        ):
            return Ruling(Decision.ASK, f"{subject!r} is outside the project; it needs approval")
        return Ruling(decision, f"no rule matches{shown}; {self.mode} mode says {decision}")
        # endregion

    def decide(self, call: ToolCall) -> Ruling:
        """The verdict for a whole call: the worst verdict of its subjects.

        Every subject (every simple command of a shell command) is decided on its own; a deny
        wins over an ask, an ask over an allow. In ``dontAsk`` mode an ask is a deny.
        """
        # region ch13: split a bash command; a deny anywhere wins, then an ask, else allow
        # more: BadSubject: deny; decide_simple(part, command); decide_unsplittable; dontAsk: deny
        try:
            subjects: Sequence[str | None] = call_subjects(call) or [None]
        except BadSubject as why:
            return Ruling(Decision.DENY, str(why))
        if call.name == "bash":
            try:
                command = str(subjects[0])
                verdicts = [self.decide_simple(part, command) for part in split_command(command)]
            except Unsplittable as why:
                verdicts = [self.decide_unsplittable(str(subjects[0]), str(why))]
        else:
            verdicts = [self.decide_one(call.name, subject) for subject in subjects]
        worst = verdicts[0]
        for decision in (Decision.DENY, Decision.ASK):
            found = [verdict for verdict in verdicts if verdict.decision is decision]
            if found:
                worst = found[0]
                break
        if worst.decision is Decision.ASK and self.mode is Mode.DONT_ASK:
            return Ruling(Decision.DENY, f"{worst.reason}; dontAsk mode denies it", worst.rule)
        return worst
        # endregion

    def first_rule(
        self, decision: Decision, name: str, subjects: Iterable[str]
    ) -> Ruling | None:
        """The verdict of the first ``decision`` rule about ``name`` matching a subject."""
        for subject in subjects:
            for rule in self.rules[decision]:
                if self.rule_matches(rule, name, subject, decision):
                    reason = f'the {decision} rule "{rule}" matches {subject!r}'
                    return Ruling(decision, reason, rule)
        return None

    def inside(self, path: str, *, below: bool = False) -> bool:
        """Whether ``path`` (relative to the project, or absolute) resolves inside it.

        ``below``: strictly below the project's root, not the root itself (what ``rm -rf .``
        would remove is never "a path in the project").
        """
        if path.startswith("~"):
            return False
        root = os.path.realpath(self.root)
        resolved = os.path.realpath(os.path.join(root, path))
        return (resolved == root and not below) or resolved.startswith(root.rstrip("/") + "/")

    def expanded(self, paths: Iterable[str]) -> list[str]:
        """``paths``, and the files each glob among them names now, as the shell expands it.

        So ``cat s*/token`` meets the rules for ``secrets/token``.
        """
        found: list[str] = []
        for path in paths:
            found.append(path)
            if MAGIC.search(path):
                base = os.path.abspath(self.root)
                matches = globlib.glob(os.path.join(base, os.path.expanduser(path)))
                found.extend(os.path.relpath(match, base) for match in matches[:1000])
        return found

    def deny_or_ask(self, simple: Simple, seen: int = 0) -> Ruling | None:
        """The first deny, else ask, verdict about ``simple``.

        Rules are matched over its spellings, the text it runs (``bash -c``), the files it
        reads and the files it writes or changes.
        """
        inner: list[Simple] = []
        for text in simple.inner if seen < 5 else ():
            try:
                inner.extend(analyse(part) for part in split_command(text))
            except Unsplittable:
                inner.append(Simple(words=(text,), spellings=(text,)))
        verdicts: list[Ruling | None] = []  # each nested text's, worked out once
        for decision in (Decision.DENY, Decision.ASK):
            found = (
                self.first_rule(decision, "bash", simple.spellings)
                or self.first_rule(decision, "read", self.expanded(simple.reads))
                or self.first_rule(
                    decision, "write", self.expanded(simple.writes + simple.changes)
                )
            )
            if found is not None:
                return found
            for index, nested in enumerate(inner):
                if index == len(verdicts):
                    verdicts.append(self.deny_or_ask(nested, seen + 1))
                found = verdicts[index]
                if found is not None and found.decision is decision:
                    return found
        return None

    def decide_simple(self, command: str, line: str | None = None) -> Ruling:
        """The verdict for one simple command, as ``split_command`` gives it from ``line``.

        A deny rule for the whole command ``line`` denies. Then deny, then ask rules, over
        every spelling of the command and every file it reads, writes or changes; a command
        claw cannot see through then asks, if any shell rule could be dodged by it. Then the
        command itself is allowed by an allow rule (or an exact one for the whole line), by
        being read-only, or by ``acceptEdits`` (file-system commands inside the project), else
        the mode decides; each file it writes must be allowed as an edit. An allow becomes an
        ask when the line runs a command in the background (``&``) or in a subshell.
        """
        line = command if line is None else line
        simple = analyse(command, unquoted_glob(line))
        shown = " ".join(simple.words)
        found = self.first_rule(Decision.DENY, "bash", [line.strip()]) if line != command else None
        found = found or self.deny_or_ask(simple)
        if found is not None:
            return found
        if simple.opaque and (self.rules[Decision.DENY] or self.rules[Decision.ASK]):
            return Ruling(Decision.ASK, f"claw cannot check {shown!r}: {simple.opaque}")
        verdicts = [self.decide_program(simple, shown, line.strip())]
        for target in simple.writes:
            verdicts.append(self.decide_write(target))
        for decision in (Decision.DENY, Decision.ASK):
            for verdict in verdicts:
                if verdict.decision is decision:
                    return verdict
        apart = runs_apart(line)
        if apart is not None:
            return Ruling(Decision.ASK, f"{shown!r} needs approval: the command line {apart}")
        return verdicts[0]

    def decide_program(self, simple: Simple, shown: str, line: str | None = None) -> Ruling:
        """The verdict for the program a simple command runs, when no deny or ask rule matched.

        ``line``: the whole command line, which an allow rule without ``*`` may name exactly.
        """
        for rule in self.rules[Decision.ALLOW]:
            if not rule.covers("bash"):
                continue
            if line is not None and rule.specifier == line and "*" not in line:
                reason = f'the allow rule "{rule}" matches the whole command line'
                return Ruling(Decision.ALLOW, reason, rule)
            if rule.specifier is None:
                return Ruling(Decision.ALLOW, f'the allow rule "{rule}" matches {shown!r}', rule)
            star = "*" in rule.specifier
            if star and (simple.opaque or simple.exact_only):
                continue
            forms = simple.allow_forms if star else simple.exact_forms
            if any(command_matches(rule.specifier, form) for form in forms):
                return Ruling(Decision.ALLOW, f'the allow rule "{rule}" matches {shown!r}', rule)
        if simple.read_only and all(self.inside(path) for path in self.expanded(simple.reads)):
            return Ruling(Decision.ALLOW, f"{shown!r} is a read-only command")
        program = program_of(simple.words)
        if (
            self.mode is Mode.ACCEPT_EDITS
            and program[:1]
            and program[0] in FS_COMMANDS
            and simple.changes
            and simple.opaque is None
            and strip_documented(simple.words) is not None
            and all(self.inside(p) for p in self.expanded(simple.reads))
            and all(self.inside(p, below=True) for p in self.expanded(simple.changes))
        ):
            return Ruling(Decision.ALLOW, f"acceptEdits mode runs {shown!r} inside the project")
        decision = mode_default(self.mode, "bash")
        return Ruling(decision, f"no rule matches {shown!r}; {self.mode} mode says {decision}")

    def decide_write(self, target: str) -> Ruling:
        """The verdict for a file a command writes through a redirection: an edit of it."""
        if target.startswith("~") or MAGIC.search(target) or "$" in target or "`" in target:
            return Ruling(Decision.ASK, f"the redirection target {target!r} needs approval")
        if not self.inside(target) and self.mode is not Mode.BYPASS:
            decision = Decision.DENY if self.mode in (Mode.PLAN, Mode.DONT_ASK) else Decision.ASK
            return Ruling(decision, f"the redirection writes {target!r}, outside the project")
        verdict = self.decide_one("edit", target)
        reason = f"{verdict.reason} (a redirection writes it)"
        return Ruling(verdict.decision, reason, verdict.rule)

    def decide_unsplittable(self, command: str, why: str) -> Ruling:
        """The verdict for a command the splitter cannot take apart: never an allow.

        Denied if a deny rule matches it whole or a command in one of its substitutions. A
        line of ``if``, ``for``, ``while`` and ``until`` is decided by the commands it runs,
        as a compound command is (``if true; then make; fi`` is ``true``, then ``make``).
        """
        parts = control_parts(command)
        if parts is not None:
            verdicts = [self.decide_simple(part, command) for part in parts]
            for decision in (Decision.DENY, Decision.ASK):
                found = next((v for v in verdicts if v.decision is decision), None)
                if found is not None:
                    return found
            return verdicts[0]
        pieces = [command, *substitution_bodies(command)]
        for piece in pieces:
            found = self.first_rule(Decision.DENY, "bash", [piece])
            if found is not None:
                return found
            try:
                for part in split_command(piece):
                    found = self.deny_or_ask(analyse(part))
                    if found is not None and found.decision is Decision.DENY:
                        return found
            except Unsplittable:
                continue
        reason = f"the command cannot be split into simple commands safely: {why}"
        return Ruling(Decision.ASK, reason)

    def allow_rules_for(self, call: ToolCall) -> list[str]:
        """The allow rules an "always" answer adds, at most ``MAX_SAVED_RULES``.

        One per simple command or path that needed approval; none when more would be needed.

        A path is escaped (``escape_pattern``), so the rule matches that path only. A command
        holding a ``*`` gets no rule: ``*`` is a wildcard in ``Bash(...)`` and cannot be
        escaped, so the rule would allow more than the user saw.
        """
        try:
            subjects = call_subjects(call)
        except BadSubject:
            return []
        rules: list[str] = []
        if call.name == "bash" and subjects:
            try:
                parts = split_command(subjects[0])
            except Unsplittable:
                return []
            for part in parts:
                if self.decide_simple(part).decision is Decision.ALLOW:
                    continue
                simple = analyse(part)
                text = " ".join(simple.words)
                if self.decide_program(simple, text).decision is not Decision.ALLOW:
                    if "*" in text:
                        return []
                    rules.append(f"Bash({text})")
                for target in simple.writes:  # a Bash rule allows the command, not its target
                    if self.decide_write(target).decision is not Decision.ALLOW:
                        if not self.inside(target) or target.startswith("~"):
                            return []
                        path = posixpath.normpath(target).removeprefix("./")
                        rules.append(f"Edit(/{escape_pattern(path)})")
        elif call.name in PATH_TOOLS and subjects:
            tool = "Edit" if call.name in EDIT_TOOLS else "Read"
            for subject in subjects:
                path = posixpath.normpath(subject).removeprefix("./")
                rules.append(f"{tool}(/{escape_pattern(path)})")  # "//x" when x is absolute
        elif call.name == "web_fetch" and subjects:
            rules.append(f"WebFetch(domain:{host_of(subjects[0])})")
        else:
            rules.append(call.name)
        unique = list(dict.fromkeys(rules))
        return unique if len(unique) <= MAX_SAVED_RULES else []

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
