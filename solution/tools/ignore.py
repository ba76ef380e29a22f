r"""What the search tools skip, and the walk through a tree that skips it.

``glob``, ``grep`` and ``list_dir`` see a workspace the way its developers do: without the
``.git`` folder's internals, without ``node_modules`` and other version-control folders,
without virtual environments (any directory holding a ``pyvenv.cfg``, whatever its name), and
without what git ignores. The ignore files are read as ``git`` reads them: the user's global
excludes file (``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore``, else
``~/.config/git/ignore``), then ``.git/info/exclude``, then each folder's ``.gitignore`` from
the root down. Every line is one pattern, matched as git's ``wildmatch`` matches it, on the
bytes of the path; of all the patterns that match a path, the last one decides, so a deeper
``.gitignore`` (a negation ``!keep.log`` included) has the last word. A line git cannot use
(``foo\``, ``[z-a]``, a ``[[:nonsense:]]`` class) matches nothing, as in git, instead of
breaking the walk.

``walk`` goes through a tree with ``os.scandir``, one directory at a time, and never goes into
a directory it skips: a skipped ``node_modules`` of 100,000 files costs one ``stat``. It is a
generator, so the caller holds one directory's entries at a time, never a list of the tree.
Nothing inside an ignored folder can come back, as in git: it is never entered. A symbolic
link is followed only to a file inside the root; the walk never leaves it. A ``withhold``
callable (chapters 13 and 14 fill it in) hides further paths from every search tool.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules"})
"""Directory names that are skipped everywhere, whatever the ignore files say."""

VENV_MARKER = "pyvenv.cfg"
"""The file every virtual environment made by ``venv`` or ``virtualenv`` has at its top."""

Withhold = Callable[[str], "str | None"]
"""Why a search tool must neither open nor name a path (relative to its root, ``/`` between
parts), or ``None`` when it may. Chapters 13 and 14 build one from the permission rules and the
safety checks (``search_guard.py``); without one, only the ignore rules and the root apply."""

POSIX_CLASSES: dict[bytes, frozenset[int]] = {
    name: frozenset(ord(char) for char in chars)
    for name, chars in {
        b"alnum": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        b"alpha": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        b"blank": " \t",
        b"cntrl": "".join(map(chr, range(32))) + "\x7f",
        b"digit": "0123456789",
        b"graph": "".join(map(chr, range(33, 127))),
        b"lower": "abcdefghijklmnopqrstuvwxyz",
        b"print": "".join(map(chr, range(32, 127))),
        b"punct": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        b"space": " \t\n\r",
        b"upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        b"xdigit": "0123456789ABCDEFabcdef",
    }.items()
}
"""The character classes ``[[:digit:]]`` and friends: ASCII only, as in git."""

SLASH = ord("/")


class Unusable(ValueError):
    """A pattern git cannot use (it matches nothing)."""


# --8<-- [start:wildmatch]
def bracket(pattern: bytes, start: int) -> tuple[bytes, int]:
    r"""The regex of the ``[...]`` set that opens at ``pattern[start]``, and the index after it.

    As git's ``wildmatch``: ``!`` or ``^`` first negates; a ``]`` first is a member; ``a-z`` is
    a range (``z-a`` one with no member); ``\`` escapes; ``[:digit:]`` is a class. A set never
    matches ``/``. Raises ``Unusable`` for a set that never closes or an unknown class.
    """
    i = start + 1
    negated = i < len(pattern) and pattern[i] in b"!^"
    i += negated
    members: set[int] = set()
    previous = 0
    while True:
        if i >= len(pattern):
            raise Unusable("a [ that is never closed")
        char = pattern[i]
        if char == ord("\\"):
            i += 1
            if i >= len(pattern):
                raise Unusable("a \\ at the end")
            char = pattern[i]
            members.add(char)
        elif char == ord("-") and previous and i + 1 < len(pattern) and pattern[i + 1] != ord("]"):
            i += 1
            last = pattern[i]
            if last == ord("\\"):
                i += 1
                if i >= len(pattern):
                    raise Unusable("a \\ at the end")
                last = pattern[i]
            members.update(range(previous, last + 1))  # empty when reversed, as in git
            char = 0
        elif char == ord("[") and pattern[i + 1 : i + 2] == b":":
            end = pattern.find(b"]", i + 2)
            if end == -1:
                raise Unusable("a [ that is never closed")
            if end - (i + 2) < 1 or pattern[end - 1] != ord(":"):
                members.add(char)  # not a class after all: a plain "["
            else:
                name = pattern[i + 2 : end - 1]
                if name not in POSIX_CLASSES:
                    raise Unusable(f"no character class [:{name.decode(errors='replace')}:]")
                members |= POSIX_CLASSES[name]
                i = end
                char = 0
        else:
            members.add(char)
        previous = char
        i += 1
        if i < len(pattern) and pattern[i] == ord("]"):
            break
    chosen = (set(range(256)) - members) if negated else members
    chosen.discard(SLASH)
    if not chosen:
        return b"(?!)", i + 1
    return b"[" + b"".join(re.escape(bytes([byte])) for byte in sorted(chosen)) + b"]", i + 1


def wildmatch_regex(pattern: bytes, anchored: bool = False) -> re.Pattern[bytes]:
    r"""``pattern`` (one gitignore pattern, no ``!`` or trailing ``/``) as a bytes regex.

    ``*`` is any bytes but ``/`` and ``?`` one; ``**`` between slashes (or at an end) crosses
    folders: ``**/`` is any folders or none, a final ``/**`` everything inside, ``**\/`` at
    least one folder; ``\`` makes the next byte plain. Raises ``Unusable`` where git's matcher
    would give up.

    An ``anchored`` pattern (one with a ``/``) is matched by git in two steps: its start up to
    the first ``*``, ``?``, ``[`` or ``\``, byte for byte, then the rest with ``wildmatch``. So
    a ``**`` right after that start counts as at the start too: ``d**/y`` matches ``dy``,
    ``d/y`` and ``d/e/y``.
    """
    literal = next((n for n, byte in enumerate(pattern) if byte in b"*?[\\"), len(pattern))
    out: list[bytes] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == ord("*"):
            stars = i
            while i < len(pattern) and pattern[i] == ord("*"):
                i += 1
            at_start = stars == 0 or pattern[stars - 1] == SLASH or (anchored and stars == literal)
            rest = pattern[i:]
            if i - stars >= 2 and at_start and (not rest or rest.startswith((b"/", b"\\/"))):
                if rest.startswith(b"/"):
                    out.append(b"(?:.*/)?")  # git tries "no folder" first only before a plain /
                    i += 1
                else:
                    out.append(b".*")
            else:
                out.append(b"[^/]*")
            continue
        if char == ord("?"):
            out.append(b"[^/]")
        elif char == ord("["):
            regex, i = bracket(pattern, i)
            out.append(regex)
            continue
        elif char == ord("\\"):
            i += 1
            if i >= len(pattern):
                raise Unusable("a \\ at the end")
            out.append(re.escape(pattern[i : i + 1]))
        else:
            out.append(re.escape(pattern[i : i + 1]))
        i += 1
    return re.compile(b"".join(out), re.DOTALL)
# --8<-- [end:wildmatch]


# --8<-- [start:pattern]
@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file, ready to match."""

    regex: re.Pattern[bytes]
    """What the path must be, whole (``fullmatch``), as bytes."""
    negated: bool
    """A ``!`` line: a path it matches is *not* ignored."""
    dir_only: bool
    """It ended with ``/``: it matches folders only."""
    anywhere: bool
    """It has no ``/`` (but a final one): it is matched against the last part of the path,
    at any depth; otherwise against the whole path below the ignore file's folder."""

    def matches(self, below: str, is_dir: bool) -> bool:
        """Whether this pattern matches ``below`` (the path below the ignore file's folder)."""
        if self.dir_only and not is_dir:
            return False
        subject = below.rsplit("/", 1)[-1] if self.anywhere else below
        return self.regex.fullmatch(os.fsencode(subject)) is not None


def trim_trailing_spaces(line: bytes) -> bytes:
    r"""``line`` without its trailing spaces, except one escaped with ``\`` (tabs stay)."""
    last_space = None
    i = 0
    while i < len(line):
        if line[i] == ord(" "):
            if last_space is None:
                last_space = i
        elif line[i] == ord("\\"):
            i += 1
            last_space = None
            if i >= len(line):
                break
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def parse_line(line: bytes) -> Pattern | None:
    """The pattern on ``line`` (no newline); ``None`` for a blank, a comment or an unusable line."""
    if not line or line.startswith(b"#"):
        return None
    line = trim_trailing_spaces(line)
    negated = line.startswith(b"!")
    body = line[1:] if negated else line
    dir_only = body.endswith(b"/")
    body = body[:-1] if dir_only else body
    anywhere = b"/" not in body
    try:
        regex = wildmatch_regex(body.removeprefix(b"/"), anchored=not anywhere)
    except Unusable:
        return None
    return Pattern(regex, negated, dir_only, anywhere)


def parse_lines(data: bytes) -> tuple[Pattern, ...]:
    r"""The patterns of a whole ignore file, in order.

    A UTF-8 byte-order mark is skipped; lines are split at ``\n``, a ``\r`` before it dropped.
    """
    data = data.removeprefix(b"\xef\xbb\xbf")
    patterns = []
    for line in data.split(b"\n"):
        pattern = parse_line(line.removesuffix(b"\r"))
        if pattern is not None:
            patterns.append(pattern)
    return tuple(patterns)
# --8<-- [end:pattern]


# --8<-- [start:rules]
@dataclass(frozen=True)
class Rules:
    """The patterns of one ignore file and the directory they apply to."""

    base: str
    """The directory of the ``.gitignore``, relative to the root, with a trailing ``/``
    (``"src/"``), or ``""`` for the root itself (and for the exclude files)."""
    patterns: tuple[Pattern, ...]
    """The file's patterns, in order."""


def read_ignore_file(
    path: str | os.PathLike[str], base: str = "", follow: bool = True
) -> Rules | None:
    """The rules of the ignore file at ``path``, applying under ``base``; ``None`` if unreadable.

    With ``follow`` false, a ``path`` that is a symbolic link counts as unreadable.
    """
    flags = os.O_RDONLY | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        with open(os.open(path, flags), "rb") as file:
            data = file.read()
    except OSError:
        return None
    return Rules(base, parse_lines(data))


def read_rules(root: str, directory: str) -> Rules | None:
    """The rules of ``directory``'s ``.gitignore`` (``directory`` relative to ``root``), if any.

    A ``.gitignore`` that is a symbolic link is not read, as git (since 2.32) does not.
    """
    base = f"{directory}/" if directory else ""
    return read_ignore_file(os.path.join(root, directory, ".gitignore"), base, follow=False)
# --8<-- [end:rules]


def git_dir(root: str) -> Path | None:
    """The git folder whose ``info/exclude`` applies to ``root``, if any.

    ``root/.git``, or where a ``.git`` file (a linked worktree, a submodule) points, through its
    ``commondir``.
    """
    dot_git = Path(root, ".git")
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    folder = Path(root, first.removeprefix("gitdir:").strip())
    try:
        common = (folder / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return folder
    return folder / common


GIT_ENVIRONMENT = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
                   "GIT_CONFIG_SYSTEM", "GIT_DIR")  # fmt: skip
"""The environment variables that change where git looks for its configuration."""


def global_excludes_file(root: str) -> Path:
    """The user's global excludes file, where git looks for it.

    ``core.excludesFile`` (asked of ``git config``, run in ``root``), else
    ``$XDG_CONFIG_HOME/git/ignore``, else ``~/.config/git/ignore``. The answer is remembered
    per folder and git environment: a search should not start a ``git`` process every time.
    Every folder outside a repository has the same answer (git reads no repository's
    configuration there), so git is asked once for all of them, in ``/``.
    """
    key = tuple(os.environ.get(name) for name in GIT_ENVIRONMENT)
    real = os.path.realpath(root)
    setting = _core_excludes_file(os.sep if outside_any_repository(real) else real, key)
    if setting is not None:
        return Path(real, setting)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config, "git", "ignore")


@functools.lru_cache(maxsize=64)
def _core_excludes_file(folder: str, environment: tuple[str | None, ...]) -> str | None:
    """``core.excludesFile`` as ``git config`` run in ``folder`` gives it; ``None`` if unset.

    ``environment`` is the cache's key: the git environment it was asked in. ``None`` too when
    git cannot say (it is missing, or fails).
    """
    try:
        done = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"], cwd=folder,
            capture_output=True, check=False, timeout=5,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # no git: its default places still count
    if done.returncode == 0 and done.stdout.strip():
        return os.fsdecode(done.stdout.rstrip(b"\r\n"))
    return None


def outside_any_repository(folder: str) -> bool:
    """Whether git finds no repository from ``folder``, nor any configuration of one.

    Neither ``folder`` nor a folder above it holds a ``.git`` (a work tree's), or a ``HEAD``
    (as a bare repository's own folder does).
    """
    path = Path(folder)
    return not any(
        os.path.lexists(place / ".git") or os.path.lexists(place / "HEAD")
        for place in (path, *path.parents)
    )


def exclude_rules(root: str) -> list[Rules]:
    """The rules that come before any ``.gitignore``, matched against paths below ``root``.

    The global excludes file first, then ``.git/info/exclude``: in git, the latter wins.
    """
    found = []
    places = [global_excludes_file(root)]
    folder = git_dir(root)
    if folder is not None:
        places.append(folder / "info" / "exclude")
    for place in places:
        rules = read_ignore_file(place)
        if rules is not None and rules.patterns:
            found.append(rules)
    return found


def is_ignored(rules: Sequence[Rules], relative: str, is_dir: bool) -> bool:
    """Whether the ignore rules ignore ``relative`` (a ``/``-separated path below the root).

    ``rules`` come in git's order (the exclude files, then each ``.gitignore`` from the root
    down); of every pattern that matches, the last one decides, a negation saying "not
    ignored". A ``Rules`` applies only under its ``base``, and its patterns see the path below
    it. The caller never asks about a path inside an ignored folder: the walk never enters one.
    """
    # region ch11: the last matching pattern of the rules whose base is a prefix decides
    # more: below = relative[len(rule.base):]; pattern.matches(below, is_dir); not pattern.negated
    ignored = False
    for rule in rules:
        if not relative.startswith(rule.base):
            continue
        below = relative[len(rule.base) :]
        for pattern in rule.patterns:
            if pattern.matches(below, is_dir):
                ignored = not pattern.negated
    return ignored
    # endregion


def is_skipped_dir(path: str, name: str) -> bool:
    """Whether the directory ``path`` (named ``name``) is skipped, whatever the ignore files say.

    It is when its name is in ``ALWAYS_SKIPPED``, or when it is a virtual environment: it holds
    a ``pyvenv.cfg`` file, whatever it is called.
    """
    # region ch11: a name in ALWAYS_SKIPPED, or a pyvenv.cfg file inside
    # more: os.path.isfile(os.path.join(path, VENV_MARKER))
    return name in ALWAYS_SKIPPED or os.path.isfile(os.path.join(path, VENV_MARKER))
    # endregion


def rules_above(root: str, directory: str) -> list[Rules]:
    """The exclude files' rules, then each ``.gitignore``'s from ``root`` to ``directory``.

    Both ends included.
    """
    rules = exclude_rules(root)
    parts = [part for part in directory.split("/") if part]
    for depth in range(len(parts) + 1):
        found = read_rules(root, "/".join(parts[:depth]))
        if found is not None:
            rules.append(found)
    return rules


def child(directory: str, name: str) -> str:
    """The relative path of ``name`` inside ``directory`` (``""`` is the root)."""
    return f"{directory}/{name}" if directory else name


# --8<-- [start:inside]
def inside(root: str, path: str) -> bool:
    """Whether ``path``, links followed, is ``root`` or under it (``root`` resolved already)."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def stays_inside(root: str, entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is no link, or a link that leads to a place under ``root`` (resolved)."""
    return not entry.is_symlink() or inside(root, entry.path)


def refusal(root: str | os.PathLike[str], path: str, withhold: Withhold | None) -> str | None:
    """Why a search tool must not look at ``path`` (relative to ``root``); ``None`` if it may.

    It must not when ``path`` leads out of the root (links followed), or ``withhold`` says why.
    """
    top = os.fspath(root)
    try:
        if not inside(os.path.realpath(top), os.path.join(top, path)):
            return "it leads to a place outside the workspace"
    except ValueError as error:  # a NUL byte
        return f"not a usable path ({error})"
    relative = os.path.normpath(path).replace(os.sep, "/")
    if withhold is None or relative in (".", ""):
        return None
    return withhold(relative)
# --8<-- [end:inside]


def walk(
    root: str | os.PathLike[str], start: str = "", withhold: Withhold | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(relative path, entry)`` for every file under ``root/start`` that is not skipped.

    Depth first, each directory's entries sorted by name; a directory's files come before the
    files of its subdirectories. Skipped and ignored directories are never entered; symbolic
    links to directories are not followed (a link can make a loop), and a link to a file is
    yielded only when it leads to a place inside the root (``stays_inside``); a directory that
    cannot be read is passed over. A file or directory for which ``withhold`` gives a reason is
    neither yielded nor entered. Paths are relative to ``root``, with ``/`` between parts.
    """
    # region ch11: a stack of (directory, rules); scandir each, skip, yield files, push subdirs
    # more: rules + [read_rules(...)]; entry.is_dir(follow_symlinks=False); stays_inside; withhold
    top = os.fspath(root)
    real_top = os.path.realpath(top)
    start = start.strip("/")
    stack = [(start, rules_above(top, start))]
    while stack:
        directory, rules = stack.pop()
        try:
            with os.scandir(os.path.join(top, directory)) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        own = read_rules(top, directory) if directory != start else None
        if own is not None:
            rules = [*rules, own]
        subdirectories = []
        for entry in entries:
            relative = child(directory, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if (
                    not is_skipped_dir(entry.path, entry.name)
                    and not is_ignored(rules, relative, True)
                    and (withhold is None or withhold(relative) is None)
                ):
                    subdirectories.append(relative)
            elif (
                entry.is_file()
                and not is_ignored(rules, relative, False)
                and stays_inside(real_top, entry)
                and (withhold is None or withhold(relative) is None)
            ):
                yield relative, entry
        stack.extend((sub, rules) for sub in reversed(subdirectories))
    # endregion
