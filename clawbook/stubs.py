"""Stub bookkeeping in the learner's ``starter/``: which stubs remain, and how to reset them."""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from . import stubgen
from .chapters import Chapter

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Stub:
    """A ``raise Todo(chapter, hint)`` still present in a starter file."""

    path: str
    line: int
    function: str
    chapter: str
    hint: str


def remaining_stubs(starter: Path, chapter: Chapter | None = None) -> list[Stub]:
    """The stubs still in ``starter``, for one chapter or for all.

    A file that does not parse is skipped: the test run reports its syntax error.
    """
    found: list[Stub] = []
    for file in stubgen.package_files(starter):
        if file.suffix != ".py":
            continue
        relative = file.relative_to(starter).as_posix()
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for name, func in stubgen.iter_functions(tree):
            for node in ast.walk(func):
                stub = _as_stub(node, relative, name)
                if stub and (chapter is None or stub.chapter == chapter.id):
                    found.append(stub)
    # A stub inside a nested function is also seen from the outer one; keep the innermost.
    innermost: dict[tuple[str, int], Stub] = {}
    for stub in found:
        innermost[(stub.path, stub.line)] = stub
    # In the order the chapter lists its files (the order the book builds them), then by line.
    order = {path: number for number, path in enumerate(chapter.files if chapter else ())}
    return sorted(
        innermost.values(), key=lambda s: (order.get(s.path, len(order)), s.path, s.line)
    )


def _as_stub(node: ast.AST, path: str, function: str) -> Stub | None:
    if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
        return None
    call = node.exc
    if not (isinstance(call.func, ast.Name) and call.func.id == "Todo" and len(call.args) == 2):
        return None
    chapter, hint = call.args
    if isinstance(chapter, ast.Constant) and isinstance(hint, ast.Constant):
        return Stub(path, node.lineno, function, str(chapter.value), str(hint.value))
    return None


class ResetError(RuntimeError):
    """A chapter's stubs cannot be restored automatically."""


@dataclass(frozen=True)
class ResetPlan:
    """What ``clawbook reset`` will replace, and the new text of each file."""

    chapter: Chapter
    functions: dict[str, list[str]]
    """Per starter file, the functions that go back to their stubs."""
    new_text: dict[str, str]


def plan_reset(chapter: Chapter, solution: Path, starter: Path) -> ResetPlan:
    """Work out how to put a chapter's stubs back without touching the rest of the starter.

    Each function that holds one of the chapter's regions is replaced, whole, by its stubbed
    version; everything else in the file, other chapters' work included, stays as it is.
    """
    functions: dict[str, list[str]] = {}
    new_text: dict[str, str] = {}
    for relative in chapter.files:
        source = (solution / relative).read_text(encoding="utf-8")
        targets = sorted(
            {r.function for r in stubgen.find_regions(source, relative) if r.chapter == chapter.id}
        )
        if not targets:
            continue
        fresh = stubgen.render(source, relative)
        current_path = starter / relative
        current = current_path.read_text(encoding="utf-8") if current_path.exists() else None
        functions[relative] = targets
        text = _replace_functions(current, fresh, targets) if current else fresh
        new_text[relative] = stubgen.ensure_todo_import(text, relative)
    if not new_text:
        raise ResetError(f"{chapter.id} has no stubs to reset")
    return ResetPlan(chapter=chapter, functions=functions, new_text=new_text)


def _replace_functions(current: str, fresh: str, targets: list[str]) -> str:
    """``current`` with the functions named in ``targets`` taken from ``fresh``.

    Falls back to the whole of ``fresh`` when ``current`` does not parse or has lost one of the
    functions (the backup keeps the learner's text either way).
    """
    try:
        current_tree = ast.parse(current)
    except SyntaxError:
        return fresh
    fresh_spans = _spans(ast.parse(fresh))
    current_spans = _spans(current_tree)
    if any(t not in current_spans or t not in fresh_spans for t in targets):
        return fresh
    lines = current.splitlines()
    fresh_lines = fresh.splitlines()
    # Replace from the bottom up so earlier line numbers stay valid; skip functions nested in
    # another target, which the outer replacement already covers.
    chosen = [t for t in targets if not any(t.startswith(o + ".") for o in targets)]
    for target in sorted(chosen, key=lambda t: current_spans[t][0], reverse=True):
        start, end = current_spans[target]
        fresh_start, fresh_end = fresh_spans[target]
        lines[start:end] = fresh_lines[fresh_start:fresh_end]
    return "\n".join(lines) + "\n"


def _spans(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Each function's 0-based line span, decorators included."""
    spans: dict[str, tuple[int, int]] = {}
    for name, func in stubgen.iter_functions(tree):
        first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
        spans[name] = (first - 1, func.end_lineno or func.lineno)
    return spans


def apply_reset(plan: ResetPlan, starter: Path, backups: Path) -> Path:
    """Back up the files a reset touches, then write them. Returns the backup folder."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    folder = backups / f"{stamp}-{plan.chapter.id}"
    for relative, text in plan.new_text.items():
        target = starter / relative
        if target.exists():
            copy = folder / "starter" / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target, copy)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder
