"""Generate ``starter/`` from ``solution/``: every chapter region becomes a stub.

A region is a block of statements inside a function, fenced by two comments::

    # region ch01: a one-line hint for the learner
    ...the code the learner writes...
    # endregion

In the starter the block becomes ``raise Todo("ch01", "a one-line hint for the learner")``.
A region may open with a second, more specific hint on a ``# more: ...`` line; ``clawbook hint
--more`` shows it to a learner who asks, and it never appears in the starter or the book.
Everything outside regions is copied unchanged, so signatures, docstrings and imports of the
two packages cannot drift apart. Snippet section markers (``# --8<-- [start:name]``), which the
book uses to include parts of a file, are removed from the starter too.

The same machinery renders a solution with the regions of some chapters kept and the others
stubbed: the progression check fills in chapters 1..N that way.
"""

from __future__ import annotations

import ast
import re
import shutil
import textwrap
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

REGION = re.compile(r"^(?P<indent>[ ]*)# region (?P<chapter>ch\d\d[a-z]?): (?P<hint>\S.*?)\s*$")
END_REGION = re.compile(r"^[ ]*# endregion\s*$")
MORE = re.compile(r"^[ ]*# more: (?P<hint>\S.*?)\s*$")
ANY_MARKER = re.compile(r"^\s*#\s*(end)?region\b")
SECTION = re.compile(r"^\s*# --8<-- \[(start|end):[-_0-9a-z]+\]\s*$")

LINE_LENGTH = 100
TODO_MODULE = "todo"


class MarkerError(ValueError):
    """A region marker is malformed, nested, unterminated or in the wrong place."""


@dataclass(frozen=True)
class Region:
    """One chapter region of a solution file."""

    path: str
    """The file, relative to the package root, with forward slashes (``tools/read.py``)."""
    chapter: str
    hint: str
    start: int
    """The 0-based index of the ``# region`` line."""
    end: int
    """The 0-based index of the ``# endregion`` line."""
    indent: str
    function: str
    """The qualified name of the function the region sits in (``MockProvider.complete``)."""
    more: str | None = None
    """The second, more specific hint of its ``# more:`` line, if the region has one."""

    @property
    def location(self) -> str:
        """``path:line`` of the region marker, 1-based, for messages."""
        return f"{self.path}:{self.start + 1}"


def iter_functions(
    tree: ast.Module,
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name, outer functions first."""

    def visit(
        node: ast.AST, prefix: str
    ) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")

    yield from visit(tree, "")


def _innermost_function(
    tree: ast.Module, line: int
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The innermost function whose body contains the 1-based ``line``."""
    found = None
    for name, func in iter_functions(tree):
        if func.end_lineno is not None and func.lineno < line <= func.end_lineno:
            found = (name, func)
    return found


def find_regions(source: str, path: str) -> list[Region]:
    """Find and validate the regions of one solution file."""
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        raise MarkerError(f"{path}:{error.lineno}: not valid Python: {error.msg}") from error
    regions: list[Region] = []
    open_match: re.Match[str] | None = None
    open_index = -1
    for index, line in enumerate(lines):
        start = REGION.match(line)
        if start:
            if open_match:
                raise MarkerError(
                    f"{path}:{index + 1}: regions do not nest; the region opened at line "
                    f"{open_index + 1} is still open"
                )
            open_match, open_index = start, index
        elif END_REGION.match(line):
            if not open_match:
                raise MarkerError(
                    f"{path}:{index + 1}: '# endregion' without a '# region' above it"
                )
            indent = open_match["indent"]
            if not line.startswith(indent) or line[len(indent)] == " ":
                raise MarkerError(
                    f"{path}:{index + 1}: '# endregion' must be indented like its '# region' "
                    f"(line {open_index + 1})"
                )
            more = MORE.match(lines[open_index + 1])
            first = open_index + (2 if more else 1)
            body = [text for text in lines[first:index] if text.strip()]
            if not body:
                raise MarkerError(f"{path}:{open_index + 1}: the region is empty")
            if any(not text.startswith(indent) for text in body):
                raise MarkerError(
                    f"{path}:{open_index + 1}: a region line is indented less than its marker"
                )
            enclosing = _innermost_function(tree, open_index + 1)
            if enclosing is None:
                raise MarkerError(
                    f"{path}:{open_index + 1}: a region must sit inside a function body"
                )
            regions.append(
                Region(
                    path=path,
                    chapter=open_match["chapter"],
                    hint=open_match["hint"],
                    start=open_index,
                    end=index,
                    indent=indent,
                    function=enclosing[0],
                    more=more["hint"] if more else None,
                )
            )
            open_match = None
        elif ANY_MARKER.match(line):
            raise MarkerError(
                f"{path}:{index + 1}: malformed marker {line.strip()!r}; write "
                "'# region chNN: hint' or '# endregion'"
            )
    if open_match:
        raise MarkerError(f"{path}:{open_index + 1}: the region is never closed with '# endregion'")
    return regions


def _stub_lines(region: Region) -> list[str]:
    """The lines that replace a region in the starter."""
    call = f'{region.indent}raise Todo("{region.chapter}", {_quote(region.hint)})'
    if len(call) <= LINE_LENGTH:
        return [call]
    inner = region.indent + " " * 4
    hint_lines = textwrap.wrap(
        region.hint, width=LINE_LENGTH - len(inner) - 3, drop_whitespace=False
    )
    return [
        f"{region.indent}raise Todo(",
        f'{inner}"{region.chapter}",',
        *(f"{inner}{_quote(part)}" for part in hint_lines[:-1]),
        f"{inner}{_quote(hint_lines[-1])},",
        f"{region.indent})",
    ]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yield_lines(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[int]:
    """The lines of the yields that belong to ``func`` itself (not to nested functions)."""
    found: list[int] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                continue
            if isinstance(child, ast.Yield | ast.YieldFrom):
                found.append(child.lineno)
            visit(child)

    visit(func)
    return found


def _todo_import(path: str) -> str:
    depth = path.count("/") + 1
    return f"from {'.' * depth}{TODO_MODULE} import Todo"


def _import_position(tree: ast.Module, level: int) -> int:
    """The 0-based line before which the ``Todo`` import goes: sorted among relative imports."""
    imports = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom) and node.col_offset == 0
    ]
    if not imports:
        docstring = ast.get_docstring(tree, clean=False)
        if docstring is not None and tree.body:
            return tree.body[0].end_lineno or 0
        return 0
    for node in imports:
        # isort's order: ``..`` imports before ``.`` ones, each block by module name.
        if isinstance(node, ast.ImportFrom) and (
            (node.level == level and (node.module or "") > TODO_MODULE) or 0 < node.level < level
        ):
            return node.lineno - 1
    return imports[-1].end_lineno or 0


def ensure_todo_import(source: str, path: str) -> str:
    """``source`` with ``from .todo import Todo`` added, unless it already imports ``Todo``."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "Todo" for a in node.names):
            return source
    lines = source.splitlines()
    position = _import_position(tree, path.count("/") + 1)
    relative = any(
        isinstance(node, ast.ImportFrom) and node.level > 0 and node.col_offset == 0
        for node in tree.body
    )
    # Without relative imports the Todo import starts their block, after a blank line (isort).
    new = [_todo_import(path)] if relative or position == 0 else ["", _todo_import(path)]
    lines[position:position] = new
    return "\n".join(lines) + "\n"


QUOTES = ('"""', "'''")
"""How a docstring ends."""


def render(source: str, path: str, keep: Collection[str] = (), *, for_book: bool = False) -> str:
    """Render one solution file.

    Regions of chapters in ``keep`` stay as solution code; the others become stubs. Region
    markers never survive. Snippet section markers are removed too, unless ``for_book`` (the
    book's snippet includes need them).
    """
    regions = find_regions(source, path)
    lines = source.splitlines()
    tree = ast.parse(source)
    functions = dict(iter_functions(tree))
    stubbed = [region for region in regions if region.chapter not in keep]
    stubbed_lines = {n for r in stubbed for n in range(r.start, r.end + 1)}

    replacement: dict[int, list[str]] = {}
    for region in regions:
        if region in stubbed:
            stub = _stub_lines(region)
            func = functions[region.function]
            yields = _yield_lines(func)
            if yields and all(line - 1 in stubbed_lines for line in yields):
                last = max(r.end for r in stubbed if r.function == region.function)
                if region.end == last:
                    stub.append(f"{region.indent}yield  # never reached; keeps this a generator")
            replacement[region.start] = stub
            for index in range(region.start + 1, region.end + 1):
                replacement[index] = []
            # ruff format puts a blank line between a docstring and a nested function, which
            # may open a region; a stub right under a docstring must not keep it (D202).
            above = region.start - 1
            if (
                above >= 1
                and not lines[above].strip()
                and lines[above - 1].rstrip().endswith(QUOTES)
            ):
                replacement.setdefault(above, [])
        else:
            replacement[region.start] = []
            replacement[region.end] = []
            if region.more is not None:
                replacement[region.start + 1] = []

    out: list[str] = []
    origin: list[int] = []
    """For each rendered line, the 0-based solution line it comes from (or stands for)."""
    for index, line in enumerate(lines):
        new = replacement.get(index, [line] if for_book or not SECTION.match(line) else [])
        out.extend(new)
        origin.extend([index] * len(new))
    rendered = "\n".join(out) + "\n"
    try:
        ast.parse(rendered)
    except SyntaxError as error:
        where = origin[min(max((error.lineno or 1) - 1, 0), len(origin) - 1)] + 1 if origin else 1
        raise MarkerError(
            f"{path}:{where}: with its regions stubbed, this file is no longer valid Python "
            f"({error.msg}); a region must hold whole statements, not half of an if/else or "
            "try/except"
        ) from None
    if for_book:
        rendered = with_named_sections(rendered)
    return ensure_todo_import(rendered, path) if stubbed else rendered


NAMED_START = re.compile(r"^\s*# --8<-- \[start:([-_0-9a-z]+)\]\s*$", re.MULTILINE)


def section_name(qualname: str) -> str:
    """The section a page includes a class or function by: its qualified name in lower case.

    A method's class and name are joined by ``-``: ``Permissions.check`` is ``permissions-check``;
    a leading ``_`` is dropped (``_Frozen`` is ``frozen``).
    """
    return qualname.lower().replace(".", "-").lstrip("_")  # a section's name starts with a letter


def with_named_sections(text: str) -> str:
    """``text`` with a snippet section around each class and function a page may include by name.

    Top-level classes and functions, and the methods of top-level classes, each get one,
    decorators included, named by ``section_name``: a page writes
    ``--8<-- "solution/guard.py:guard"`` without any marker in the solution. A section written
    out in the source under that name is left as it is.
    """
    tree = ast.parse(text)
    existing = set(NAMED_START.findall(text))
    starts: dict[int, list[str]] = {}
    ends: dict[int, list[str]] = {}

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, qualname: str) -> None:
        name = section_name(qualname)
        if name in existing:
            return
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        indent = " " * node.col_offset
        starts.setdefault(first, []).append(f"{indent}# --8<-- [start:{name}]")
        last = (node.end_lineno or node.lineno) - 1
        ends.setdefault(last, []).insert(0, f"{indent}# --8<-- [end:{name}]")

    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in tree.body:
        if isinstance(node, definitions):
            add(node, node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(item, f"{node.name}.{item.name}")
    out: list[str] = []
    for index, line in enumerate(text.splitlines()):
        out.extend(starts.get(index, []))
        out.append(line)
        out.extend(ends.get(index, []))
    return "\n".join(out) + "\n"


def package_files(root: Path) -> list[Path]:
    """The files of a package tree, without caches, in a stable order."""
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


def all_regions(solution: Path) -> list[Region]:
    """Every region of every Python file under ``solution``."""
    regions: list[Region] = []
    for file in package_files(solution):
        if file.suffix == ".py":
            relative = file.relative_to(solution).as_posix()
            regions.extend(find_regions(file.read_text(encoding="utf-8"), relative))
    return regions


def render_tree(
    solution: Path, keep: Collection[str] = (), *, for_book: bool = False
) -> dict[str, str | bytes]:
    """Render every file of ``solution``: Python files through ``render``, others copied."""
    files: dict[str, str | bytes] = {}
    for file in package_files(solution):
        relative = file.relative_to(solution).as_posix()
        if file.suffix == ".py":
            files[relative] = render(
                file.read_text(encoding="utf-8"), relative, keep, for_book=for_book
            )
        else:
            files[relative] = file.read_bytes()
    return files


def write_tree(files: dict[str, str | bytes], destination: Path) -> None:
    """Replace ``destination`` with exactly ``files``."""
    if destination.exists():
        shutil.rmtree(destination)
    for relative, content in files.items():
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def differences(files: dict[str, str | bytes], destination: Path) -> list[str]:
    """How ``destination`` differs from ``files``: one line per stale, missing or extra file."""
    problems: list[str] = []
    present = (
        {p.relative_to(destination).as_posix() for p in package_files(destination)}
        if destination.exists()
        else set()
    )
    for relative, content in sorted(files.items()):
        target = destination / relative
        if relative not in present:
            problems.append(f"missing: {relative}")
            continue
        expected = content.encode("utf-8") if isinstance(content, str) else content
        if target.read_bytes() != expected:
            problems.append(f"out of date: {relative}")
    for extra in sorted(present - set(files)):
        problems.append(f"not in solution/: {extra}")
    return problems
