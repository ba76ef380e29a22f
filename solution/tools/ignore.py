"""What the search tools skip, and the walk through a tree that skips it.

``glob``, ``grep`` and ``list_dir`` see a workspace the way its developers do: without the
``.git`` folder's internals, without ``node_modules`` and other version-control folders,
without virtual environments (any directory holding a ``pyvenv.cfg``, whatever its name), and
without what the project's ``.gitignore`` files ignore. A ``.gitignore`` applies to its own
directory and everything under it; a deeper one is read after a shallower one, so its
patterns (a negation ``!keep.log`` included) have the last word, as in git. The patterns are
matched by the ``pathspec`` library, which follows git's rules, rather than by hand.

``walk`` goes through a tree with ``os.scandir``, one directory at a time, and never goes into
a directory it skips: a skipped ``node_modules`` of 100,000 files costs one ``stat``. It is a
generator, so the caller holds one directory's entries at a time, never a list of the tree.
Not read: ``.git/info/exclude`` and the user's global excludes file (they belong to one
person's machine, not to the project).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pathspec

ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules"})
"""Directory names that are skipped everywhere, whatever the ``.gitignore`` files say."""

VENV_MARKER = "pyvenv.cfg"
"""The file every virtual environment made by ``venv`` or ``virtualenv`` has at its top."""


# --8<-- [start:rules]
@dataclass(frozen=True)
class Rules:
    """The patterns of one ``.gitignore`` file and the directory they apply to."""

    base: str
    """The directory of the ``.gitignore``, relative to the root, with a trailing ``/``
    (``"src/"``), or ``""`` for the root itself."""
    spec: pathspec.GitIgnoreSpec
    """The file's patterns, matched with git's rules."""


def read_rules(root: str, directory: str) -> Rules | None:
    """The rules of ``directory``'s ``.gitignore`` (``directory`` relative to ``root``), if any."""
    try:
        with open(os.path.join(root, directory, ".gitignore"), encoding="utf-8",
                  errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    base = f"{directory}/" if directory else ""
    return Rules(base, pathspec.GitIgnoreSpec.from_lines(lines))
# --8<-- [end:rules]


# --8<-- [start:is-ignored]
def is_ignored(rules: Sequence[Rules], relative: str, is_dir: bool) -> bool:
    """Whether the ``.gitignore`` rules ignore ``relative`` (a ``/``-separated path).

    ``rules`` go from the root down, so the deepest file that has a say has the last word.
    A directory is matched with a trailing ``/``, so that ``build/`` ignores the directory
    ``build`` and not a file of that name.
    """
    # region ch11: each Rules whose base is a prefix of the path decides if a pattern matches
    # more: spec.check_file(path_below_base).include is True (ignored), False (!negated) or None
    ignored = False
    for rule in rules:
        if not relative.startswith(rule.base):
            continue
        below = relative[len(rule.base):] + ("/" if is_dir else "")
        verdict = rule.spec.check_file(below).include
        if verdict is not None:
            ignored = verdict
    return ignored
    # endregion
# --8<-- [end:is-ignored]


# --8<-- [start:is-skipped-dir]
def is_skipped_dir(path: str, name: str) -> bool:
    """Whether the directory ``path`` (named ``name``) is skipped, whatever ``.gitignore`` says.

    It is when its name is in ``ALWAYS_SKIPPED``, or when it is a virtual environment: it holds
    a ``pyvenv.cfg`` file, whatever it is called.
    """
    # region ch11: a name in ALWAYS_SKIPPED, or a pyvenv.cfg file inside
    # more: os.path.isfile(os.path.join(path, VENV_MARKER))
    return name in ALWAYS_SKIPPED or os.path.isfile(os.path.join(path, VENV_MARKER))
    # endregion
# --8<-- [end:is-skipped-dir]


def rules_above(root: str, directory: str) -> list[Rules]:
    """The rules of every ``.gitignore`` from ``root`` down to ``directory`` (both included)."""
    rules: list[Rules] = []
    parts = [part for part in directory.split("/") if part]
    for depth in range(len(parts) + 1):
        found = read_rules(root, "/".join(parts[:depth]))
        if found is not None:
            rules.append(found)
    return rules


def child(directory: str, name: str) -> str:
    """The relative path of ``name`` inside ``directory`` (``""`` is the root)."""
    return f"{directory}/{name}" if directory else name


# --8<-- [start:walk]
def walk(root: str | os.PathLike[str], start: str = "") -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Yield ``(relative path, entry)`` for every file under ``root/start`` that is not skipped.

    Depth first, each directory's entries sorted by name; a directory's files come before the
    files of its subdirectories. Skipped and ignored directories are never entered; symbolic
    links to directories are not followed (a link can make a loop); a directory that cannot be
    read is passed over. Paths are relative to ``root``, with ``/`` between parts.
    """
    # region ch11: a stack of (directory, rules); scandir each, skip, yield files, push subdirs
    # more: rules + [read_rules(...)] for a .gitignore here; entry.is_dir(follow_symlinks=False)
    top = os.fspath(root)
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
                if not is_skipped_dir(entry.path, entry.name) and not is_ignored(
                    rules, relative, True
                ):
                    subdirectories.append(relative)
            elif entry.is_file() and not is_ignored(rules, relative, False):
                yield relative, entry
        stack.extend((sub, rules) for sub in reversed(subdirectories))
    # endregion
# --8<-- [end:walk]
