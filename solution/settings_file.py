"""The project's settings file, ``.claw/settings.json``: the permission rules kept between runs.

The file is JSON, shaped like Claude Code's ``.claude/settings.json``::

    {"permissions": {"allow": ["Bash(git *)"], "ask": [], "deny": ["Read(./.env)"]}}

Chapter 13 reads the three lists and, when the user approves a call "always for this
project", appends an allow rule to the project's personal file, ``.claw/settings.local.json``,
which claw adds to the project's ``.gitignore`` when it first writes it (your approvals are
yours, not the team's). Chapter 17 grows these files into claw's layered settings
(``settings.py``); other keys are kept as they are.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

from .errors import SettingsError
from .tools.fs import open_regular
from .tools.write import atomic_write

SETTINGS_FILE = Path(".claw") / "settings.json"
"""Where a project keeps its settings, relative to the project's root."""

LOCAL_SETTINGS_FILE = Path(".claw") / "settings.local.json"
"""Where a project keeps the user's own settings and approvals, relative to its root."""

LISTS = ("allow", "ask", "deny")
"""The three rule lists under ``"permissions"``."""

MAX_SETTINGS_BYTES = 1_000_000
"""The largest settings file claw reads: far more than any real one, far less than memory."""


def read_json_object(
    path: Path, shown: str | None = None, *, any_file: bool = False
) -> dict[str, Any] | None:
    """The JSON object in the file at ``path``; ``None`` when there is no such file.

    Every other problem is a ``SettingsError`` that names the file as ``shown`` (its path if
    not given): ``SHOWN: cannot be read: ...`` (a folder, no permission, bytes that are not
    UTF-8, more than ``MAX_SETTINGS_BYTES``), ``SHOWN: not valid JSON: ...``, ``SHOWN: must hold
    a JSON object, not list``. A repository may put anything where its settings should be, so
    only a regular file is read: a FIFO there would hang claw, and ``/dev/zero`` would fill its
    memory. ``any_file`` also reads a pipe the user names (``--settings <(...)``).
    """
    name = str(path) if shown is None else shown
    try:
        text = read_capped(path, any_file).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{name}: cannot be read: {error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(f"{name}: not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise SettingsError(f"{name}: must hold a JSON object, not {type(data).__name__}")
    return data


def read_capped(path: Path, any_file: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (any file, with ``any_file``).

    More than ``MAX_SETTINGS_BYTES`` is an ``OSError`` (``EFBIG``), read no further.
    """
    with path.open("rb") if any_file else open_regular(path) as file:
        data = file.read(MAX_SETTINGS_BYTES + 1)
    if len(data) > MAX_SETTINGS_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_SETTINGS_BYTES:,} bytes", str(path))
    return data


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` as a dict; ``{}`` when the file does not exist.

    Raises ``SettingsError`` as ``read_json_object`` does.
    """
    data = read_json_object(path)
    return {} if data is None else data


def permission_rules(path: Path) -> dict[str, list[str]]:
    """The ``allow``, ``ask`` and ``deny`` lists of the settings in ``path`` (missing: empty)."""
    return rules_in(read_settings(path), path)


def rules_in(data: dict[str, Any], path: Path) -> dict[str, list[str]]:
    """The ``allow``, ``ask`` and ``deny`` lists of ``data``, the settings read from ``path``.

    A list that is missing is empty; one that is not a list of strings is a ``SettingsError``
    naming ``path``.
    """
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError(f'{path}: "permissions" must be an object')
    lists: dict[str, list[str]] = {}
    for name in LISTS:
        rules = permissions.get(name, [])
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            raise SettingsError(f'{path}: "permissions.{name}" must be a list of strings')
        lists[name] = list(rules)
    return lists


def add_rule(path: Path, list_name: str, rule: str) -> None:
    """Append ``rule`` to the ``list_name`` list of the settings in ``path``, atomically.

    The file (and its folder) are created if missing; every other key is kept; a rule already
    in the list is not added twice.
    """
    if list_name not in LISTS:
        raise ValueError(f"list_name must be one of {', '.join(LISTS)}, not {list_name!r}")
    if path.name == LOCAL_SETTINGS_FILE.name and not path.exists():
        ignore_in_git(path)
    # region ch13: read the settings (or {}), append the rule once, write it with atomic_write
    # more: data.setdefault("permissions", {}).setdefault(list_name, []); mkdir(parents=True)
    data = read_settings(path)
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError(f'{path}: "permissions" must be an object')
    rules = permissions.setdefault(list_name, [])
    if rule not in rules:
        rules.append(rule)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    # endregion


def ignore_in_git(path: Path) -> None:
    """Add ``path``, the personal ``ROOT/.claw/settings.local.json``, to ``ROOT/.gitignore``.

    Not when a line there already names it. The ``.gitignore`` is created if missing; a file
    without a final newline gets one first.
    """
    root = path.parent.parent
    entry = path.relative_to(root).as_posix()
    ignore = root / ".gitignore"
    try:
        text = ignore.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if any(line.strip().lstrip("/") == entry for line in text.splitlines()):
        return
    if text and not text.endswith("\n"):
        text += "\n"
    root.mkdir(parents=True, exist_ok=True)
    atomic_write(ignore, (text + entry + "\n").encode("utf-8"))
