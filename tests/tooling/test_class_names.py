"""One name, one class: no two classes of ``solution/`` or ``clawbook/`` share a name.

Two classes with one name make a reader (and an import) guess which is meant. The classes are
read with ``ast``, never imported. ``KNOWN_SHARED`` lists a name still shared for a while (none
today): the comparison with it is exact, so a new shared name fails, and so does a rename that is
not taken off the list.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from clawbook.harness.runner import ROOT

TREES = ("solution", "clawbook")

SDK_NAMES = ("solution/sdk/types.py", "solution/types.py")
KNOWN_SHARED: dict[str, tuple[str, ...]] = {
    # Chapter 29's messages carry the Claude Agent SDK's class names (its oracle test compares
    # them), and three of those are chapter 4's message names too; claw.sdk's are imported
    # from claw.sdk, and the page says which is which.
    "AssistantMessage": SDK_NAMES,
    "SystemMessage": SDK_NAMES,
    "UserMessage": SDK_NAMES,
}
"""The names still shared today, with the files that define them."""


def classes(root: Path = ROOT, trees: Iterable[str] = TREES) -> dict[str, tuple[str, ...]]:
    """Each class name defined in ``trees`` (at any depth), with the files defining it."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.ClassDef):
                    found[node.name].add(path.relative_to(root).as_posix())
    return {name: tuple(sorted(files)) for name, files in found.items()}


def shared(found: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The names more than one file defines a class by."""
    return {name: files for name, files in sorted(found.items()) if len(files) > 1}


def test_class_names_no_two_classes_share_a_name_but_the_known_ones():
    now = shared(classes())
    said = [
        f"{name}: {', '.join(files)}" for name, files in now.items() if name not in KNOWN_SHARED
    ]
    said += [
        f"{name} is no longer shared as listed (now {', '.join(now.get(name, ())) or 'one'}): "
        "take it off KNOWN_SHARED"
        for name, files in KNOWN_SHARED.items()
        if now.get(name) != files
    ]
    assert not said, "\n".join(said)


def test_class_names_finds_a_class_defined_twice(tmp_path):
    (tmp_path / "solution" / "tools").mkdir(parents=True)
    (tmp_path / "solution" / "a.py").write_text("class Line:\n    pass\n")
    (tmp_path / "solution" / "tools" / "b.py").write_text(
        "def make():\n    class Line(str):\n        pass\n    return Line\n\n"
        "class Other:\n    pass\n"
    )
    assert shared(classes(tmp_path, ("solution",))) == {
        "Line": ("solution/a.py", "solution/tools/b.py")
    }
