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
import shlex
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import httpx
import pathspec

from .agent import Finish
from .settings_file import LOCAL_SETTINGS_FILE, SETTINGS_FILE, add_rule, permission_rules
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


# --8<-- [start:tools]
TOOL_NAMES: dict[str, frozenset[str]] = {
    "Bash": frozenset({"bash"}),
    "Read": frozenset({"read"}),
    "Edit": frozenset({"edit", "apply_patch"}),
    "Write": frozenset({"write"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"glob"}),
    "LS": frozenset({"list_dir"}),
    "WebFetch": frozenset({"web_fetch"}),
    "AskUserQuestion": frozenset({"ask_user"}),
    "TodoWrite": frozenset({"todo_write"}),
    "Task": frozenset({"task"}),
    "Agent": frozenset({"task"}),
    "Skill": frozenset({"skill"}),
    "BashOutput": frozenset({"bash_output"}),
    "KillShell": frozenset({"kill_shell"}),
}
"""The one table of tool names: each Claude Code tool name, and the claw tools that are that
tool (``apply_patch`` edits files, so it is an ``Edit``). Permission rules and hook matchers
both read it. A rule or matcher may also name a claw tool directly (``bash``, ``write``)."""

LOOKING_TOOLS = frozenset({"read", "grep", "glob", "list_dir"})
"""Tools that only look at the workspace: allowed in every mode unless a rule says otherwise.
A ``Read`` rule covers all of them, as Claude Code applies Read rules to Grep and Glob."""
EDIT_TOOLS = frozenset({"edit", "write", "apply_patch"})
"""Tools that change files: they ask in ``default``, run in ``acceptEdits``. An ``Edit`` rule
covers all of them, and a ``Read`` deny rule blocks them too."""
PATH_TOOLS = LOOKING_TOOLS | EDIT_TOOLS
"""Tools whose rule specifier is a path pattern."""

UNASKED_TOOLS = frozenset(
    {"ask_user", "todo_write", "recall", "task", "skill", "bash_output", "kill_shell"}
)
"""Chapter 20's tools that need no approval in any mode, as Claude Code's AskUserQuestion and
TodoWrite: asking the user, keeping the model's own list, reading its memory. A deny or ask
rule that names them still applies. Chapter 21's ``task`` (whose child's calls each pass the
gate) and ``skill`` (which reads only the skills' own folders) join them, and chapter 26's
``bash_output`` and ``kill_shell``, which only read or stop a job a ``bash`` call (asked about
like any other) started."""
MEMORY_TOOLS = frozenset({"remember"})
"""Chapter 20's tool that writes the memory later sessions read: the modes treat it as an
edit (it asks in ``default``, runs in ``acceptEdits``, is denied in ``plan``)."""

UNREAD_PATH_RULES = frozenset({"Write", "Glob", "NotebookEdit", "MultiEdit"})
"""Tool names Claude Code never consults a path rule for: it warns and ignores
``Write(docs/**)``; claw refuses it, so that nobody believes such a rule protects anything."""


def claude_code_name(name: str) -> str:
    """Claude Code's name for the claw tool ``name`` (``bash`` is ``Bash``); else ``name``."""
    for claude, tools in TOOL_NAMES.items():
        if name in tools:
            return claude
    return name
# --8<-- [end:tools]

DEFAULT_MAX_DENIALS = 3
"""How many refused calls end a run (``Finish.PERMISSION_DENIALS``)."""


class RuleError(ValueError):
    """A permission rule that is not ``Tool`` or ``Tool(specifier)``."""


def is_mcp_server_rule(tool: str) -> bool:
    """Whether a rule's tool is ``mcp__<server>`` (chapter 23): every tool of that MCP server."""
    server = tool.removeprefix("mcp__")
    return tool.startswith("mcp__") and bool(server) and "__" not in server


# --8<-- [start:rule-class]
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
# --8<-- [end:rule-class]


# --8<-- [start:rule]
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


# --8<-- [start:split-syntax]
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
# --8<-- [end:split-syntax]


# --8<-- [start:split]
def split_command(command: str) -> list[str]:
    """The simple commands in a shell ``command``, each as its words quoted by ``shlex.join``.

    ``git status && rm -rf "$HOME"`` gives ``["git status", "rm -rf '$HOME'"]``, so that
    ``shlex.split`` gives each command's words back exactly. Raises ``Unsplittable`` for what
    cannot be split safely: unbalanced quotes, command or process substitution,
    here-documents, shell keywords (``if``, ``for``, ...), and an empty part (``a && && b``).
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
    commands = [shlex.join(words) for words in parts if words]
    if not commands:
        raise Unsplittable("it holds no command")
    for words in parts:
        if words and words[0] in KEYWORDS:
            raise Unsplittable(f"it uses shell syntax the splitter does not handle ({words[0]})")
    return commands
    # endregion
# --8<-- [end:split]


# --8<-- [start:shell-tables]
STRIPPED_WRAPPERS = frozenset(
    {"timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "noglob"}
)
"""Claude Code's wrappers: an allow rule matches the command after them (``timeout 30 npm
test`` is ``npm test``), as does bare ``xargs`` (without flags)."""

OTHER_WRAPPERS = frozenset(
    {
        "env", "sudo", "doas", "exec", "xargs", "watch", "setsid", "ionice", "flock", "chrt",
        "taskset", "nocorrect", "unbuffer", "chronic", "eatmydata", "fakeroot", "chroot",
        "runuser", "nsenter", "unshare", "strace", "ltrace", "caffeinate", "systemd-run",
        "parallel",
    }
)  # fmt: skip
"""Other programs that run the command after them: deny and ask rules look through them too,
allow rules do not (``env rm -rf x`` is denied by ``Bash(rm *)``, never allowed by it)."""

EXEC_WRAPPERS = frozenset({"watch", "setsid", "ionice", "flock"})
"""Wrappers a prefix rule never allows (``Bash(watch *)``): only a rule without ``*`` does."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})
"""Programs that run text as commands: ``bash -c '...'`` is opaque to allow rules."""

OPAQUE_PROGRAMS = frozenset({"eval", "source", "."})
"""Builtins that run text or a file claw cannot see as commands."""

SAFE_VARIABLES = frozenset(
    {
        "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "TERM", "CI",
        "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "GOFLAGS", "CGO_ENABLED", "COLUMNS",
    }
)  # fmt: skip
"""Variables an allow rule matches past (and every ``LC_*``): they change no program that
runs. An assignment of any other (``PATH=/tmp/evil git status``) stops an allow rule."""

READ_ONLY = frozenset(
    {"ls", "cat", "echo", "pwd", "head", "tail", "grep", "find", "wc", "which", "diff",
     "stat", "du", "cd", "git", "lsof", "uptime", "date", "df", "file", "jq", "ps", "tree",
     "whoami", "sort", "uniq", "sed", "test", "true", "false", "python", "python3"}
)  # fmt: skip
"""Claude Code's built-in read-only commands: they run without asking in every mode (some
only in a read-only form: ``sed -n 1p``, ``python3 --version``, ``sort`` without ``-o``)."""

WRITING_OPTIONS = {
    "date": re.compile(r"-s.*|--set.*"),
    "sort": re.compile(r"-o.*|--output.*|--compress-program.*"),
    "tree": re.compile(r"-o.*"),
    "file": re.compile(r"-C|--compile"),
}
"""Options that make a read-only command write, set something or run a program."""

READ_ONLY_GIT = frozenset(
    {"status", "log", "diff", "show", "ls-files", "rev-parse", "blame", "describe",
     "shortlog", "branch", "tag", "remote"}
)  # fmt: skip
"""The ``git`` subcommands that are read-only when listing (no further name or option
that changes something: ``git branch -D x`` is not)."""

FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
"""``find`` actions that run programs, delete or write: ``Bash(find *)`` does not cover them."""

GIT_RUNS_PROGRAMS = re.compile(
    r"-c|--config-env.*|--exec-path.*|--upload-pack.*|--receive-pack.*|-u|"
    r"--output.*|--ext-diff|-O.*|--open-files-in-pager.*|--textconv"
)
"""``git`` options that run another program or write a file: ``Bash(git *)`` does not
cover them (``git -c core.fsmonitor=cmd status`` runs ``cmd``)."""

FILE_COMMANDS = frozenset(
    {"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "wc", "diff",
     "stat", "du", "ls", "file", "sort", "uniq", "cut", "nl", "tac", "od", "xxd", "strings",
     "md5sum", "sha1sum", "sha256sum", "base64", "sed", "awk", "cp", "cd", "find", "jq", "tree"}
)  # fmt: skip
"""Commands whose arguments name files they read: Read rules apply to those paths."""

PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk", "jq"})
"""File commands whose first argument is a pattern or a script, not a file."""

FS_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
"""The file-system commands ``acceptEdits`` runs without asking, on paths in the project."""

OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
"""Redirections that write their target."""

INPUT_REDIRECTS = frozenset({"<", "<&"})
"""Redirections that read their target."""

MAX_SAVED_RULES = 5
"""The most allow rules one "always" answer saves for a compound command (Claude Code's)."""
# --8<-- [end:shell-tables]


@dataclass(frozen=True)
class Simple:
    """One simple command, taken apart: what rules are matched against and what it touches."""

    words: tuple[str, ...]
    """Its words, redirections removed."""
    reads: tuple[str, ...] = ()
    """Files it reads: arguments of a file command, and ``<`` targets."""
    writes: tuple[str, ...] = ()
    """Files it writes: output redirection targets (``/dev/null`` left out)."""
    changes: tuple[str, ...] = ()
    """Paths a file-system command (``mkdir``, ``rm``, ...) changes."""
    spellings: tuple[str, ...] = ()
    """Every form deny and ask rules are matched against: the command, and the command
    after each wrapper, assignment or program path claw recognises."""
    allow_forms: tuple[str, ...] = ()
    """The forms an allow rule with ``*`` may match: the command, and the command after Claude
    Code's wrappers and safe assignments."""
    exact_forms: tuple[str, ...] = ()
    """The forms an allow rule without ``*`` may match: the same, but not past ``xargs``."""
    exact_only: bool = False
    """A form no prefix rule allows: an exec wrapper, ``find -delete``, ``git -c ...``."""
    opaque: str | None = None
    """Why claw cannot see what it runs (``bash -c``, ``eval``, a ``$`` in the program)."""
    inner: tuple[str, ...] = ()
    """Text it runs as commands (``bash -c TEXT``, ``eval TEXT``), checked for deny rules."""
    read_only: bool = False
    """One of the built-in read-only commands, in a read-only form."""


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
"""A word that sets a variable for the command after it (``NODE_ENV=test``)."""

MAGIC = re.compile(r"[*?\[]")
"""Characters that make a word a glob pattern."""


def substitution_bodies(command: str) -> list[str]:
    """The text inside each ``$(...)`` and backtick pair of ``command``, outermost first."""
    bodies: list[str] = []
    index = 0
    while index < len(command):
        if command.startswith("$(", index) or command.startswith("<(", index) or (
            command.startswith(">(", index)
        ):
            depth, end = 1, index + 2
            while end < len(command) and depth:
                depth += {"(": 1, ")": -1}.get(command[end], 0)
                end += 1
            bodies.append(command[index + 2 : end - 1 if depth == 0 else end])
            index += 2
        elif command[index] == "`":
            end = command.find("`", index + 1)
            end = len(command) if end == -1 else end
            bodies.append(command[index + 1 : end])
            index = end + 1
        else:
            index += 1
    return bodies


def take_redirections(words: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """``words`` without their redirections, and the files written and read.

    A number just before a redirection is its file descriptor (``2>``); ``>&2`` and ``2>&1``
    name no file.
    """
    rest: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in OUTPUT_REDIRECTS | INPUT_REDIRECTS and index + 1 < len(words):
            if rest and rest[-1].isdigit():
                rest.pop()
            target = words[index + 1]
            if word in (">&", "<&") and (target.isdigit() or target == "-"):
                pass
            elif word in INPUT_REDIRECTS:
                reads.append(target)
            elif target != "/dev/null":
                writes.append(target)
            index += 2
            continue
        rest.append(word)
        index += 1
    return rest, writes, reads


def skip_options(words: Sequence[str], with_value: str = "") -> list[str]:
    """``words`` after the leading options (``--`` ends them).

    A one-letter option in ``with_value`` takes the next word (``-n 5``).
    """
    rest = list(words)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        if len(option) == 2 and option[1] in with_value and rest:
            rest.pop(0)
    return rest


def strip_documented(words: Sequence[str], xargs: bool = True) -> list[str] | None:
    """``words`` after Claude Code's wrappers and safe assignments, as allow rules see them.

    Bare ``xargs`` only with ``xargs`` (Claude Code looks past it for a rule with ``*``, not
    for an exact one). ``None`` when an assignment of another variable, or a wrapper option
    claw does not know, stops the stripping: then only a rule for the whole text allows the command.
    """
    rest = list(words)
    while rest:
        first = rest[0]
        if ASSIGNMENT.fullmatch(first):
            name = first.split("=", 1)[0]
            if name not in SAFE_VARIABLES and not name.startswith("LC_"):
                return None
            rest.pop(0)
        elif first == "timeout":
            after = skip_options(rest[1:], "sk")
            if not after or not re.fullmatch(r"\d+(\.\d+)?[smhd]?", after[0]):
                return None
            rest = after[1:]
        elif first == "nice":
            after = rest[1:]
            if after[:1] == ["-n"] and len(after) > 1:
                after = after[2:]
            elif after and re.fullmatch(r"-n?\d+|--adjustment=-?\d+", after[0]):
                after = after[1:]
            rest = after
        elif first == "stdbuf":
            rest = skip_options(rest[1:], "ioe")
        elif first == "time":
            rest = skip_options(rest[1:])
        elif first == "command" and any(word in ("-v", "-V") for word in rest[1:2]):
            return rest  # the query form looks a command up; it runs nothing
        elif first in STRIPPED_WRAPPERS:
            rest = skip_options(rest[1:])
        elif xargs and first == "xargs" and len(rest) > 1 and not rest[1].startswith("-"):
            rest = rest[1:]
        else:
            return rest
    return rest


SPELLING_LIMIT = 200
"""The most spellings of one command claw checks; a command with more is opaque."""

GLOB_SENSITIVE = frozenset({"find", "sort", "sed", "git"})
"""Read-only commands with options that write or run programs: an unquoted glob could
expand into one of them (Claude Code asks for these too)."""


def unquoted_glob(command: str) -> bool:
    """Whether ``command`` holds ``*``, ``?`` or ``[`` outside quotes (and not escaped)."""
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "*?[":
            return True
    return False


def shell_tokens(command: str) -> list[str]:
    """``command`` lexed as ``split_command`` lexes it: words, and runs of ``();<>|&`` or newlines.

    Raises ``ValueError`` for an unbalanced quote.
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def runs_apart(command: str) -> str | None:
    """Why the command line runs a command apart from the others, or ``None``.

    A lone ``&`` runs the command before it in the background, and parentheses run their
    commands in a subshell: Claude Code asks about such a line whatever its rules allow.
    """
    try:
        tokens = shell_tokens(command)
    except ValueError:
        return None
    for token in tokens:
        if token and set(token) <= SEPARATOR_CHARS:
            if "(" in token or ")" in token:
                return "runs commands in a subshell"
            if token.replace("&&", "").replace("|&", "").count("&"):
                return "runs a command in the background (&)"
    return None


CONTROL_OPENERS = frozenset({"if", "then", "else", "elif", "do", "while", "until"})
"""Keywords that open a part of an ``if`` or a loop: the command after them is judged."""


def control_parts(command: str) -> list[str] | None:
    """The simple commands of a command line made of ``if``, ``for``, ``while`` and ``until``.

    ``if true; then make; fi`` gives ``["true", "make"]``; a ``for`` header (``for x in a b``)
    runs nothing. ``None`` for anything else the splitter refused: other keywords (``case``,
    ``{``, ``[[``), substitutions, here-documents, unbalanced quotes.
    """
    if any(marker in command for marker in UNSAFE):
        return None
    try:
        tokens = shell_tokens(command)
    except ValueError:
        return None
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= SEPARATOR_CHARS:
            parts.append([])
        else:
            parts[-1].append(token)
    found: list[str] = []
    for words in parts:
        while words and words[0] in CONTROL_OPENERS:
            words = words[1:]
        if words in (["fi"], ["done"]):
            continue
        if words[:1] == ["for"] and (len(words) == 2 or words[2:3] == ["in"]):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", words[1]):
                return None
            continue
        if words and words[0] in KEYWORDS:
            return None
        if words:
            found.append(shlex.join(words))
    return found or None


def spellings(words: Sequence[str], limit: int = SPELLING_LIMIT) -> list[list[str]]:
    """Every spelling of the command in ``words`` that claw recognises, the command first.

    After an assignment, the rest; after a program named by its path, its name; after a
    wrapper, every command that may follow it (each later word may start it).

    Breadth first, at most ``limit``. The commands that may follow a wrapper wait in line as
    one lazy sequence, made only as far as they are looked at: ``nice`` written 250 times
    would otherwise queue 250 copies of the rest for each of the first 200 spellings.
    """
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    pending: deque[Iterator[list[str]]] = deque([iter([list(words)])])
    while pending and len(found) < limit:
        current = next(pending[0], None)
        if current is None:
            pending.popleft()
            continue
        if not current or tuple(current) in seen:
            continue
        seen.add(tuple(current))
        found.append(current)
        first = current[0]
        if ASSIGNMENT.fullmatch(first):
            pending.append(iter([current[1:]]))
            continue
        name = posixpath.basename(first)
        if name != first:
            pending.append(iter([[name, *current[1:]]]))
        if name in STRIPPED_WRAPPERS | OTHER_WRAPPERS:
            pending.append(tails(current, range(1, len(current))))
        elif name == "find":  # find ... -exec rm -rf {} + runs rm
            actions = ("-exec", "-execdir", "-ok", "-okdir")
            after = (index + 1 for index, word in enumerate(current) if word in actions)
            pending.append(tails(current, after))
    return found


def tails(words: list[str], starts: Iterable[int]) -> Iterator[list[str]]:
    """``words[start:]`` for each of ``starts``, each made only when it is asked for."""
    return (words[start:] for start in starts)


def program_of(words: Sequence[str]) -> list[str]:
    """The command that really runs, past every assignment and wrapper claw recognises.

    The program is named by its file name (``/bin/rm`` is ``rm``).
    """
    rest = list(words)
    while rest:
        name = posixpath.basename(rest[0])
        if ASSIGNMENT.fullmatch(rest[0]):
            rest.pop(0)
        elif name in ("command", "builtin") and rest[1:2] and rest[1] in ("-v", "-V"):
            break
        elif name == "timeout":
            rest = skip_options(rest[1:], "sk")[1:]
        elif name in ("nice", "ionice", "chrt", "taskset"):
            rest = skip_options(rest[1:], "" if name == "taskset" else "ncp")  # taskset -c: a flag
            if name in ("chrt", "taskset") and rest:
                rest = rest[1:]
        elif name in ("stdbuf",):
            rest = skip_options(rest[1:], "ioe")
        elif name in ("env", "sudo", "doas"):
            rest = skip_options(rest[1:], "uCSgphD")
        elif name == "xargs":
            rest = skip_options(rest[1:], "IinLPsdEa")
        elif name == "flock":
            rest = skip_options(rest[1:], "wE")[1:]
        elif name in ("watch",):
            rest = skip_options(rest[1:], "nd")
        elif name in STRIPPED_WRAPPERS | OTHER_WRAPPERS:
            rest = skip_options(rest[1:])
        else:
            break
    if rest:
        rest[0] = posixpath.basename(rest[0])
    return rest


def operands(arguments: Sequence[str]) -> list[str]:
    """The arguments that are not options (everything after ``--`` is an operand)."""
    found: list[str] = []
    options = True
    for word in arguments:
        if options and word == "--":
            options = False
        elif not (options and word.startswith("-") and word != "-"):
            found.append(word)
    return found


def is_read_only(program: Sequence[str]) -> bool:
    """Whether ``program`` (past its wrappers) is a built-in read-only command.

    And in a read-only form: ``find`` without actions that run or delete, ``git`` listing.
    """
    if not program or program[0] not in READ_ONLY:
        return False
    name, arguments = program[0], program[1:]
    if name == "find":
        return not any(word in FIND_ACTIONS for word in arguments)
    if any(option.fullmatch(w) for w in arguments if (option := WRITING_OPTIONS.get(name))):
        return False
    if name in ("python", "python3"):
        return arguments in (["--version"], ["-V"])
    if name == "uniq":
        return len(operands(arguments)) <= 1  # a second operand is the file it writes
    if name == "sed":
        script = operands(arguments)[:1]
        quiet = any(w in ("-n", "--quiet", "--silent") for w in arguments)
        only = all(w in ("-n", "--quiet", "--silent") for w in arguments if w.startswith("-"))
        return quiet and only and bool(script) and re.fullmatch(r"[\d,$]*p", script[0]) is not None
    if name == "git":
        if not arguments or arguments[0].startswith("-"):
            return False  # options before the subcommand (-c, -C, --exec-path...)
        sub, rest = arguments[0], arguments[1:]
        if sub not in READ_ONLY_GIT or any(GIT_RUNS_PROGRAMS.fullmatch(w) for w in rest):
            return False
        if sub in ("branch", "tag", "remote"):
            return all(w in ("-a", "-r", "-v", "-vv", "--list", "-l") for w in rest)
        return True
    return True


def analyse(simple: str, globs: bool = False) -> Simple:
    """Take one simple command (as ``split_command`` gives it) apart for the rules.

    ``globs``: the command line holds an unquoted glob character, which the shell may expand
    into an option (a file named ``-delete``), so ``find``, ``sort``, ``sed`` and ``git`` are
    not read-only then.
    """
    words, writes, reads = take_redirections(shlex.split(simple))
    program = program_of(words)
    name, arguments = (program[0], program[1:]) if program else ("", [])
    found_reads = list(reads)
    changes: list[str] = []
    paths = operands(arguments)
    if name in FILE_COMMANDS and name != "find":
        skip = 1 if name in PATTERN_FIRST and not any(w.startswith("-e") for w in arguments) else 0
        found_reads.extend(paths[skip:])
    if name == "find":
        found_reads.extend(w for w in arguments if not w.startswith(("-", "(", "!", ")")))
    if name == "tee":
        changes.extend(paths)
    if name in FS_COMMANDS:
        if name == "sed":  # with or without -i: Edit rules hold for sed's files
            changes.extend(paths[1:])
        else:
            changes.extend(paths)
    opaque = None
    inner: list[str] = []
    spelled = spellings(words)
    if len(spelled) >= SPELLING_LIMIT:
        opaque = "it has more wrappers than claw looks through"
    if program and program not in spelled:
        spelled.append(program)  # what really runs is always checked
    for form in spelled:
        head = posixpath.basename(form[0])
        if "$" in form[0] or "`" in form[0]:
            opaque = f"the program's name is not known before it runs ({form[0]})"
        elif head in OPAQUE_PROGRAMS:
            opaque = f"{head} runs text claw cannot check"
            inner.append(" ".join(form[1:]))
        elif head in SHELLS:
            opaque = f"{head} runs commands claw cannot see (a script, its input, or -c text)"
            flags = [i for i, w in enumerate(form) if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", w)]
            if flags and flags[0] + 1 < len(form):
                inner.append(form[flags[0] + 1])
    documented = strip_documented(words)
    allow_forms = [" ".join(words)]
    if documented is not None and " ".join(documented) not in allow_forms:
        allow_forms.append(" ".join(documented))
    exact = strip_documented(words, xargs=False)
    exact_forms = [" ".join(words)]
    if exact is not None and " ".join(exact) not in exact_forms:
        exact_forms.append(" ".join(exact))
    exact_only = bool(
        program
        and (
            any(posixpath.basename(w) in EXEC_WRAPPERS for w in words[: len(words) - len(program)])
            or (name == "find" and any(w in FIND_ACTIONS for w in arguments))
            or (name == "git" and any(GIT_RUNS_PROGRAMS.fullmatch(w) for w in arguments))
            or (globs and name in GLOB_SENSITIVE)
        )
    )
    return Simple(
        words=tuple(words),
        reads=tuple(found_reads),
        writes=tuple(writes),
        changes=tuple(changes),
        spellings=tuple(" ".join(form) for form in spelled),
        allow_forms=tuple(allow_forms),
        exact_forms=tuple(exact_forms),
        exact_only=exact_only,
        opaque=opaque,
        inner=tuple(inner),
        read_only=documented is not None
        and posixpath.basename(documented[0] if documented else "") == name  # no other wrapper
        and opaque is None
        and is_read_only(program)
        and not (globs and name in GLOB_SENSITIVE),
    )


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


# --8<-- [start:path-matches]
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
class Verdict:
    """A decision, and why: the rule that matched, or what the mode says."""

    decision: Decision
    reason: str
    rule: Rule | None = None


# --8<-- [start:mode-default]
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
# --8<-- [end:mode-default]


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

    # --8<-- [start:decide-one]
    def decide_one(self, name: str, subject: str | None) -> Verdict:
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
                    return Verdict(decision, f'the {decision} rule "{rule}" matches{shown}', rule)
        decision = mode_default(self.mode, name)
        if (
            decision is Decision.ALLOW
            and self.mode is not Mode.BYPASS
            and name in PATH_TOOLS
            and subject is not None
            and not self.inside(subject)
        ):
            return Verdict(Decision.ASK, f"{subject!r} is outside the project; it needs approval")
        return Verdict(decision, f"no rule matches{shown}; {self.mode} mode says {decision}")
        # endregion
    # --8<-- [end:decide-one]

    # --8<-- [start:decide]
    def decide(self, call: ToolCall) -> Verdict:
        """The verdict for a whole call: the worst verdict of its subjects.

        Every subject (every simple command of a shell command) is decided on its own; a deny
        wins over an ask, an ask over an allow. In ``dontAsk`` mode an ask is a deny.
        """
        # region ch13: split a bash command; a deny anywhere wins, then an ask, else allow
        # more: BadSubject: deny; decide_simple(part, command); decide_unsplittable; dontAsk: deny
        try:
            subjects: Sequence[str | None] = call_subjects(call) or [None]
        except BadSubject as why:
            return Verdict(Decision.DENY, str(why))
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
            return Verdict(Decision.DENY, f"{worst.reason}; dontAsk mode denies it", worst.rule)
        return worst
        # endregion
    # --8<-- [end:decide]

    def first_rule(
        self, decision: Decision, name: str, subjects: Iterable[str]
    ) -> Verdict | None:
        """The verdict of the first ``decision`` rule about ``name`` matching a subject."""
        for subject in subjects:
            for rule in self.rules[decision]:
                if self.rule_matches(rule, name, subject, decision):
                    reason = f'the {decision} rule "{rule}" matches {subject!r}'
                    return Verdict(decision, reason, rule)
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

    def deny_or_ask(self, simple: Simple, seen: int = 0) -> Verdict | None:
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
        verdicts: list[Verdict | None] = []  # each nested text's, worked out once
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

    # --8<-- [start:decide-simple]
    def decide_simple(self, command: str, line: str | None = None) -> Verdict:
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
            return Verdict(Decision.ASK, f"claw cannot check {shown!r}: {simple.opaque}")
        verdicts = [self.decide_program(simple, shown, line.strip())]
        for target in simple.writes:
            verdicts.append(self.decide_write(target))
        for decision in (Decision.DENY, Decision.ASK):
            for verdict in verdicts:
                if verdict.decision is decision:
                    return verdict
        apart = runs_apart(line)
        if apart is not None:
            return Verdict(Decision.ASK, f"{shown!r} needs approval: the command line {apart}")
        return verdicts[0]
    # --8<-- [end:decide-simple]

    def decide_program(self, simple: Simple, shown: str, line: str | None = None) -> Verdict:
        """The verdict for the program a simple command runs, when no deny or ask rule matched.

        ``line``: the whole command line, which an allow rule without ``*`` may name exactly.
        """
        for rule in self.rules[Decision.ALLOW]:
            if not rule.covers("bash"):
                continue
            if line is not None and rule.specifier == line and "*" not in line:
                reason = f'the allow rule "{rule}" matches the whole command line'
                return Verdict(Decision.ALLOW, reason, rule)
            if rule.specifier is None:
                return Verdict(Decision.ALLOW, f'the allow rule "{rule}" matches {shown!r}', rule)
            star = "*" in rule.specifier
            if star and (simple.opaque or simple.exact_only):
                continue
            forms = simple.allow_forms if star else simple.exact_forms
            if any(command_matches(rule.specifier, form) for form in forms):
                return Verdict(Decision.ALLOW, f'the allow rule "{rule}" matches {shown!r}', rule)
        if simple.read_only and all(self.inside(path) for path in self.expanded(simple.reads)):
            return Verdict(Decision.ALLOW, f"{shown!r} is a read-only command")
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
            return Verdict(Decision.ALLOW, f"acceptEdits mode runs {shown!r} inside the project")
        decision = mode_default(self.mode, "bash")
        return Verdict(decision, f"no rule matches {shown!r}; {self.mode} mode says {decision}")

    def decide_write(self, target: str) -> Verdict:
        """The verdict for a file a command writes through a redirection: an edit of it."""
        if target.startswith("~") or MAGIC.search(target) or "$" in target or "`" in target:
            return Verdict(Decision.ASK, f"the redirection target {target!r} needs approval")
        if not self.inside(target) and self.mode is not Mode.BYPASS:
            decision = Decision.DENY if self.mode in (Mode.PLAN, Mode.DONT_ASK) else Decision.ASK
            return Verdict(decision, f"the redirection writes {target!r}, outside the project")
        verdict = self.decide_one("edit", target)
        reason = f"{verdict.reason} (a redirection writes it)"
        return Verdict(verdict.decision, reason, verdict.rule)

    def decide_unsplittable(self, command: str, why: str) -> Verdict:
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
        return Verdict(Decision.ASK, reason)

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
