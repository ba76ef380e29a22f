"""Whether a chapter is written is asked one way: ``todo.if_written`` (issue 42).

Each chapter's claw runs while the later chapters are stubs, so claw falls back to what the
earlier chapters did where a later one is not written yet. It used to ask in several ways
(``except NotImplementedError``, ``except Todo``, a probe call), each catching a stub of *any*
chapter: a stub the fallback was not meant for was taken for "not written yet" and hidden.
``if_written`` names its chapter and lets every other chapter's stub through.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from clawbook.harness.runner import ROOT
from solution.todo import Todo, if_written

LET_THROUGH = {("solution/main.py", "cli"), ("solution/acp.py", "answer")}
"""Handlers that catch a stub and neither hide it nor fall back: the console script, which
says it in one line, and ``claw acp``'s answer to a request, which tells the editor and then
raises the stub out of ``AcpServer.serve``."""


def stub_handlers(root: Path) -> list[str]:
    """``file:line in function`` of each handler of ``root/solution`` that catches a stub
    (``Todo`` or ``NotImplementedError``) and does more than raise it again, outside
    ``todo.py`` and ``LET_THROUGH``."""
    found: list[str] = []
    for path in sorted((root / "solution").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == "solution/todo.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), name)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.ExceptHandler) or node.type is None:
                    continue
                caught = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
                if not caught & {"Todo", "NotImplementedError"}:
                    continue
                reraises = len(node.body) == 1 and isinstance(node.body[0], ast.Raise)
                if not reraises and (name, function.name) not in LET_THROUGH:
                    found.append(f"{name}:{node.lineno} in {function.name}")
    return found


def test_if_written_is_the_one_way_claw_asks_whether_a_chapter_is_written(tmp_path):
    assert stub_handlers(ROOT) == []
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "late.py").write_text(
        "def settings():\n"
        "    try:\n        return load()\n    except NotImplementedError:\n        return None\n"
        "def through():\n"
        "    try:\n        return load()\n    except Todo:\n        raise\n"
    )
    assert stub_handlers(tmp_path) == ["solution/late.py:4 in settings"]


def test_if_written_gives_the_value_or_that_chapters_stub_and_raises_any_other():
    assert if_written("ch17", lambda: 42) == 42
    todo = if_written("ch17", lambda: (_ for _ in ()).throw(Todo("ch17", "not yet")))
    assert isinstance(todo, Todo) and todo.chapter == "ch17"
    with pytest.raises(Todo, match="ch18: later"):
        if_written("ch17", lambda: (_ for _ in ()).throw(Todo("ch18", "later")))
    with pytest.raises(NotImplementedError, match="the learner's own"):
        if_written("ch17", lambda: (_ for _ in ()).throw(NotImplementedError("the learner's own")))
