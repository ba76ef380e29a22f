"""One tree of errors: every exception a user of claw can meet is a ``ClawError`` (issue 42).

``solution/errors.py`` draws the tree in its docstring. The classes are read with ``ast``, never
imported: an exception class is one whose bases lead to a built-in exception. Those that are
not ``ClawError``s are the signals no user meets, named in ``INTERNAL`` and in the docstring;
the comparison is exact, so a new exception outside the tree fails, and so does one taken into
it that is still listed.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from clawbook.harness.runner import ROOT

INTERNAL = {
    "Todo": "a stub of the learner's, not written yet",
    "Interrupted": "the loop's own signal that a run was cancelled",
    "StopBeforeRequest": "a preflight check's signal to the loop",
    "Unsplittable": "a command the permission rules ask about instead",
    "BadSubject": "a path the permission rules refuse instead",
    "Unusable": "an ignore pattern that matches nothing",
    "HookFailed": "a hook that could not answer: a warning",
    "PromptBlockedError": "an evaluation's blocked prompt: a result",
    "PlanModeError": "a transition plan mode's table forbids: a bug",
    "Crash": "a test's stand-in for a crash in the middle of a rewind",
    "BadRequest": "a request the sandbox's proxy answers 400: the command's, not the user's",
    "RpcError": "claw acp's answer to an editor's request: a JSON-RPC error it sends",
    "LineTooLong": "an editor's line over claw acp's limit: skipped, answered with an error",
}
"""The exceptions of ``solution/`` that are not ``ClawError``s, and why no user meets them."""

BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def exception_bases(root: Path) -> dict[str, list[str]]:
    """Each class of ``root/solution`` whose bases lead to an exception, with its bases' names."""
    bases: dict[str, list[str]] = {}
    for path in sorted((root / "solution").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [
                    b.attr if isinstance(b, ast.Attribute) else ast.unparse(b) for b in node.bases
                ]

    def is_exception(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in BUILTIN_ERRORS:
            return True
        return name not in seen and any(
            is_exception(base, seen | {name}) for base in bases.get(name, [])
        )

    return {name: found for name, found in bases.items() if is_exception(name)}


def outside_the_tree(bases: dict[str, list[str]]) -> set[str]:
    """The exception classes that do not descend from ``ClawError``."""

    def in_tree(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == "ClawError":
            return True
        return name not in seen and any(in_tree(b, seen | {name}) for b in bases.get(name, []))

    return {name for name in bases if not in_tree(name)}


def test_error_tree_every_error_a_user_can_meet_is_a_claw_error():
    bases = exception_bases(ROOT)
    outside = outside_the_tree(bases)
    assert outside == set(INTERNAL), (
        f"not ClawErrors and not listed as internal: {sorted(outside - set(INTERNAL))}; "
        f"listed but now ClawErrors (or gone): {sorted(set(INTERNAL) - outside)}"
    )


def test_error_tree_the_docstring_draws_every_claw_error():
    bases = exception_bases(ROOT)
    drawn = ast.get_docstring(ast.parse((ROOT / "solution" / "errors.py").read_text())) or ""
    missing = sorted(name for name in set(bases) - outside_the_tree(bases) if name not in drawn)
    assert missing == [], f"errors.py's tree does not show {missing}"
    assert all(name in drawn for name in INTERNAL), "the docstring names the ones outside"


def test_error_tree_finds_an_exception_outside_the_tree(tmp_path):
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "errors.py").write_text("class ClawError(Exception):\n    pass\n")
    (tmp_path / "solution" / "tool.py").write_text(
        "from .errors import ClawError\n"
        "class Kept(ClawError, ValueError):\n    pass\n"
        "class Stray(ValueError):\n    pass\n"
        "class Strayer(Stray):\n    pass\n"
        "class NotAnError:\n    pass\n"
    )
    bases = exception_bases(tmp_path)
    assert set(bases) == {"ClawError", "Kept", "Stray", "Strayer"}
    assert outside_the_tree(bases) == {"Stray", "Strayer"}
