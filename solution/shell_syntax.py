"""Reading a shell command line: its simple commands, their programs, what each one touches.

A command line is lexed as the shell would (``shell_tokens``), split into its simple commands
(``split_tokens`` and ``split_command``; ``control_parts`` for ``if`` and loops), and each
simple command is taken apart (``analyse``): its words without redirections, the files it
reads and changes, every spelling of it claw recognises (past wrappers such as ``timeout``,
``env`` or ``sudo``, variable assignments and program paths), and why claw cannot see what it
runs, if it cannot. The permission rules (``permissions.py``) and the safety checks
(``safety.py``) are matched against what this module finds; it decides nothing itself.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

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
def shell_tokens(command: str) -> list[str]:
    """``command`` lexed as a shell would: words, and runs of ``();<>|&`` or newlines.

    Quotes are removed from the words, and ``#`` is text, not a comment. Raises ``ValueError``
    for an unbalanced quote.
    """
    # region ch13: shlex.shlex with punctuation_chars "();<>|&\n"; a newline is no whitespace
    # more: lexer.whitespace = " \t\r"; whitespace_split = True; commenters = ""; list(lexer)
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # a newline separates commands: it is punctuation here
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)
    # endregion


def split_tokens(tokens: Sequence[str]) -> list[list[str]]:
    """The words of each simple command in ``tokens``, in order; a part may be empty.

    A token made only of ``SEPARATOR_CHARS`` ends a command and starts the next one.
    """
    # region ch13: start a new list of words at each separator token, else add to the last
    # more: parts = [[]]; a token is a separator when token and set(token) <= SEPARATOR_CHARS
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= SEPARATOR_CHARS:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts
    # endregion


def split_command(command: str) -> list[str]:
    """The simple commands in a shell ``command``, each as its words quoted by ``shlex.join``.

    ``git status && rm -rf "$HOME"`` gives ``["git status", "rm -rf '$HOME'"]``, so that
    ``shlex.split`` gives each command's words back exactly. Raises ``Unsplittable`` for what
    cannot be split safely: unbalanced quotes, command or process substitution,
    here-documents, a command that starts with a shell keyword (``if``, ``for``, ...), and a
    line with no command at all.
    """
    # region ch13: look for UNSAFE syntax, then shell_tokens and split_tokens; no keywords
    # more: raise Unsplittable(...) for each case, the ValueError of shell_tokens included
    for marker, what in UNSAFE.items():
        if marker in command:
            raise Unsplittable(f"it uses {what}: {marker}")
    try:
        tokens = shell_tokens(command)
    except ValueError as error:
        raise Unsplittable(f"it cannot be parsed ({error})") from error
    parts = split_tokens(tokens)
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
    found: list[str] = []
    for words in split_tokens(tokens):
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
