"""The search tools see only what ``read`` may see: chapters 13 and 14 applied to every file.

``grep``, ``glob`` and ``list_dir`` open or name many files a call, none of them an argument of
the call. The safety checks and the permission rules in front of the tools see only the folder
the model named, so on their own they let ``grep`` print a ``.env`` or a file a ``Read(...)``
deny rule covers, whenever it is asked to search the folder around it. ``search_withhold``
turns the same checks into chapter 11's ``Withhold`` seam, and ``guard_searches`` gives it to
every search tool: each file the tool would open or name must resolve inside the workspace, must
not be a protected file that holds secrets, and must not be denied by a rule (nor covered by an
``ask`` rule about paths: a search cannot stop to ask about one file, so it leaves it out;
``read`` it to be asked). ``guard`` in ``guard.py`` calls ``guard_searches``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .permissions import Decision, Permissions
from .safety import SafetyChecks, WorkspaceError, protected_reason
from .tools.glob import GlobTool
from .tools.grep import GrepTool
from .tools.ignore import Withhold
from .tools.ls import ListDirTool
from .types import Tool

SEARCH_TOOLS = (GlobTool, GrepTool, ListDirTool)
"""The tools that look at files no argument names."""


def resolved_below(root: Path, relative: str) -> str | None:
    """Where ``relative`` (below ``root``) leads, links followed, relative to ``root``.

    ``None`` when it leads out of ``root`` (the search tools never follow such a link).
    """
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, relative))
    inner = os.path.relpath(real, real_root)
    return None if inner == os.pardir or inner.startswith(os.pardir + os.sep) else inner


def search_withhold(
    safety: SafetyChecks | None = None,
    permissions: Permissions | None = None,
    tool: str = "grep",
) -> Withhold:
    """A ``Withhold`` for the search tool called ``tool``, from chapter 14's and 13's checks.

    With ``safety``, a path (relative to the workspace) is withheld when it resolves outside
    the workspace, or when it is a protected file that holds secrets (what ``read`` may not read
    either). With ``permissions``, when the rules for ``read`` or for ``tool`` deny it, or ask
    about it by a rule with a path, as named or as resolved (a link to a denied file counts).
    """

    def withhold(relative: str) -> str | None:
        if safety is not None:
            try:
                resolved = safety.workspace.resolve(relative)
            except WorkspaceError as error:
                return str(error)
            root = safety.workspace.root_of(resolved)
            assert root is not None  # resolve() refuses a path outside every root
            inner = resolved.relative_to(root).as_posix()
            why = protected_reason(inner, reading=True, allow=safety.allow_protected)
            if why is not None:
                return f"protected ({why})"
        if permissions is None:
            return None
        subjects = [relative]
        inner_path = resolved_below(permissions.root, relative)
        if inner_path is not None:
            subjects.append(inner_path.replace(os.sep, "/"))
        for name in dict.fromkeys(("read", tool)):
            for subject in dict.fromkeys(subjects):
                verdict = permissions.decide_one(name, subject)
                by_path_rule = verdict.rule is not None and verdict.rule.specifier is not None
                if verdict.decision is Decision.DENY or (
                    verdict.decision is Decision.ASK and by_path_rule
                ):
                    return verdict.reason
        return None

    return withhold


def guard_searches(
    tools: Iterable[Tool], safety: SafetyChecks, permissions: Permissions | None = None
) -> None:
    """Give every search tool in ``tools`` a ``withhold`` built by ``search_withhold``."""
    for tool in tools:
        if isinstance(tool, SEARCH_TOOLS):
            tool.withhold = search_withhold(safety, permissions, tool.name)
