"""Stub bookkeeping in the learner's ``starter/``: what remains, resets, backups, edits.

Which stubs remain, how to reset a chapter's stubs, how to put a backup back, and whether
``starter/`` is still exactly as generated.

Nothing here deletes a learner's code: every file a reset, a restore or a forced regeneration
overwrites is first copied to ``.clawbook/backups/<time>-<what>/``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import Chapter

ROOT = Path(__file__).resolve().parents[2]


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

    A file that does not parse is skipped: the test run reports its syntax error. Only files
    whose text holds a ``Todo(`` call (of the chapter, if one is asked for) are parsed: a
    finished starter has none, and parsing every file costs a learner's check a third of a second.
    """
    found: list[Stub] = []
    for file in stubgen.package_files(starter):
        if file.suffix != ".py":
            continue
        relative = file.relative_to(starter).as_posix()
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "Todo(" not in text or (chapter is not None and chapter.id not in text):
            continue
        try:
            tree = ast.parse(text)
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
    return sorted(innermost.values(), key=lambda s: (order.get(s.path, len(order)), s.path, s.line))


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
class CatalogueEntry:
    """One region of the reference, as the learner's tools need it: no solution code."""

    chapter: str
    function: str
    hint: str
    more: str | None = None
    """The second hint (``clawbook hint --more``), if the region has one."""


@dataclass(frozen=True)
class Catalogue:
    """What ``clawbook stubs`` records so that no learner command needs ``solution/``.

    ``stubs`` lists every region of every starter file (chapter, function, both hints);
    ``pristine`` holds the generated text of each file that has regions, which ``clawbook
    reset`` takes a chapter's stubbed functions from.
    """

    stubs: dict[str, list[CatalogueEntry]] = field(default_factory=dict)
    pristine: dict[str, str] = field(default_factory=dict)

    def second_hint(self, path: str, hint: str, function: str) -> str | None:
        """The ``# more:`` hint of the region in ``path`` with this hint (else this function)."""
        entries = self.stubs.get(path, [])
        for entry in entries:
            if entry.hint == hint and entry.more:
                return entry.more
        return next((e.more for e in entries if e.function == function and e.more), None)


def catalogue_of(solution: Path, files: dict[str, str | bytes]) -> Catalogue:
    """The catalogue of the starter ``files`` generated from ``solution``."""
    catalogue = Catalogue()
    for region in stubgen.all_regions(solution):
        entry = CatalogueEntry(region.chapter, region.function, region.hint, region.more)
        catalogue.stubs.setdefault(region.path, []).append(entry)
    for relative in catalogue.stubs:
        text = files.get(relative)
        if isinstance(text, str):
            catalogue.pristine[relative] = text
    return catalogue


def catalogue_json(catalogue: Catalogue) -> str:
    """The catalogue as the text of its file (stable, so regenerating changes nothing)."""
    data = {
        "stubs": {
            path: [asdict(entry) for entry in entries]
            for path, entries in sorted(catalogue.stubs.items())
        },
        "pristine": dict(sorted(catalogue.pristine.items())),
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def write_catalogue(path: Path, solution: Path, files: dict[str, str | bytes]) -> None:
    """Record the catalogue of the starter ``files`` generated from ``solution``."""
    path.write_text(catalogue_json(catalogue_of(solution, files)), encoding="utf-8")


def read_catalogue(path: Path) -> Catalogue:
    """The catalogue written at the last generation; raises ``ResetError`` if it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Catalogue(
            stubs={
                str(p): [CatalogueEntry(**entry) for entry in entries]
                for p, entries in data["stubs"].items()
            },
            pristine={str(p): str(text) for p, text in data["pristine"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ResetError(
            f"{path.name} is missing or unreadable ({error}); it comes with the course: "
            "get it back from your copy of the repository (git checkout -- clawbook/)"
        ) from error


@dataclass(frozen=True)
class ResetPlan:
    """What ``clawbook reset`` will replace, and the new text of each file."""

    chapter: Chapter
    functions: dict[str, list[str]]
    """Per starter file, the functions that go back to their stubs."""
    new_text: dict[str, str]
    whole_files: dict[str, str] = field(default_factory=dict)
    """Files that go back whole, with the reason: the functions could not be replaced alone."""


def plan_reset(chapter: Chapter, catalogue: Catalogue, starter: Path) -> ResetPlan:
    """Work out how to put a chapter's stubs back without touching the rest of the starter.

    Each function that holds one of the chapter's regions is replaced, whole, by its stubbed
    version from the ``catalogue`` (never from ``solution/``, which a learner may not have);
    everything else in the file, other chapters' work included, stays as it is.
    """
    functions: dict[str, list[str]] = {}
    new_text: dict[str, str] = {}
    whole: dict[str, str] = {}
    for relative in chapter.files:
        targets = sorted(
            {s.function for s in catalogue.stubs.get(relative, []) if s.chapter == chapter.id}
        )
        fresh = catalogue.pristine.get(relative)
        if not targets or fresh is None:
            continue
        current_path = starter / relative
        current = current_path.read_text(encoding="utf-8") if current_path.exists() else None
        functions[relative] = targets
        if current is None:
            whole[relative] = "is missing"
            text = fresh
        else:
            text, reason = _replace_functions(current, fresh, targets)
            if reason:
                whole[relative] = reason
        new_text[relative] = stubgen.ensure_todo_import(text, relative)
    if not new_text:
        raise ResetError(f"{chapter.id} has no stubs to reset")
    return ResetPlan(chapter=chapter, functions=functions, new_text=new_text, whole_files=whole)


def _replace_functions(current: str, fresh: str, targets: list[str]) -> tuple[str, str | None]:
    """``current`` with the functions named in ``targets`` taken from ``fresh``.

    Falls back to the whole of ``fresh`` when ``current`` does not parse or has lost one of the
    functions, and then says why (the backup keeps the learner's text either way).
    """
    try:
        current_tree = ast.parse(current)
    except SyntaxError as error:
        return fresh, f"does not parse (line {error.lineno}: {error.msg})"
    fresh_spans = _spans(ast.parse(fresh))
    current_spans = _spans(current_tree)
    lost = [t for t in targets if t not in current_spans or t not in fresh_spans]
    if lost:
        return fresh, f"no longer has {', '.join(lost)}"
    lines = current.splitlines()
    fresh_lines = fresh.splitlines()
    # Replace from the bottom up so earlier line numbers stay valid; skip functions nested in
    # another target, which the outer replacement already covers.
    chosen = [t for t in targets if not any(t.startswith(o + ".") for o in targets)]
    for target in sorted(chosen, key=lambda t: current_spans[t][0], reverse=True):
        start, end = current_spans[target]
        fresh_start, fresh_end = fresh_spans[target]
        lines[start:end] = fresh_lines[fresh_start:fresh_end]
    return "\n".join(lines) + "\n", None


def _spans(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Each function's 0-based line span, decorators included."""
    spans: dict[str, tuple[int, int]] = {}
    for name, func in stubgen.iter_functions(tree):
        first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
        spans[name] = (first - 1, func.end_lineno or func.lineno)
    return spans


def apply_reset(plan: ResetPlan, starter: Path, backups: Path) -> Path:
    """Back up the files a reset touches, then write them. Returns the backup folder."""
    folder = back_up(starter, list(plan.new_text), backups, plan.chapter.id)
    for relative, text in plan.new_text.items():
        target = starter / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


# ---------------------------------------------------------------- backups and restore


def back_up(starter: Path, files: list[str], backups: Path, label: str) -> Path:
    """Copy the ``files`` of ``starter`` that exist to a new backup folder, and return it.

    The folder is ``<backups>/<time>-<label>/starter/...``, so a backup reads like the package.
    """
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    folder = backups / f"{stamp}-{label}"
    for relative in files:
        source = starter / relative
        if source.is_file():
            copy = folder / "starter" / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class Backup:
    """One backup folder and the starter files it holds."""

    folder: Path
    files: tuple[str, ...]

    @property
    def name(self) -> str:
        """The folder's name: ``<time>-<label>``."""
        return self.folder.name


def list_backups(backups: Path, chapter: str | None = None) -> list[Backup]:
    """The backups, newest first; for one chapter (its resets and restores) when given."""
    if not backups.is_dir():
        return []
    found = []
    for folder in sorted(backups.iterdir(), reverse=True):
        if not folder.is_dir():
            continue
        label = folder.name.split("-", 3)[-1] if folder.name.count("-") >= 3 else ""
        if chapter is not None and label.split("-")[0] != chapter:
            continue
        root = folder / "starter"
        files = tuple(
            p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file()
        )
        found.append(Backup(folder, files))
    return found


def restore(backup: Backup, starter: Path, backups: Path, label: str) -> Path:
    """Put a backup's files back into ``starter``, after backing up what they replace.

    Returns the folder that holds the code as it was just before the restore.
    """
    before = back_up(starter, list(backup.files), backups, f"{label}-before-restore")
    for relative in backup.files:
        target = starter / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(backup.folder / "starter" / relative, target)
    return before


# ---------------------------------------------------------------- the generated starter


def manifest(files: dict[str, str | bytes]) -> dict[str, str]:
    """The SHA-256 of every generated file: what ``starter/`` holds before anyone edits it."""
    return {
        relative: hashlib.sha256(
            content.encode("utf-8") if isinstance(content, str) else content
        ).hexdigest()
        for relative, content in sorted(files.items())
    }


def read_manifest(path: Path) -> dict[str, str]:
    """The manifest written at the last generation (empty if there is none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def write_manifest(path: Path, files: dict[str, str | bytes]) -> None:
    """Record what was generated."""
    path.write_text(json.dumps(manifest(files), indent=1, sort_keys=True) + "\n", "utf-8")


def edited_files(starter: Path, recorded: dict[str, str]) -> list[str]:
    """Files of ``starter`` that differ from what was generated, or were added to it."""
    present = (
        {p.relative_to(starter).as_posix(): p for p in stubgen.package_files(starter)}
        if starter.is_dir()
        else {}
    )
    changed = [
        relative
        for relative, path in sorted(present.items())
        if recorded.get(relative) != hashlib.sha256(path.read_bytes()).hexdigest()
    ]
    return changed
