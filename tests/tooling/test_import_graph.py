"""No two modules of ``solution/`` or ``clawbook/`` import each other, directly or round a circle.

The graph is read with ``ast``, never by importing anything. Every import statement is an edge,
wherever it stands: at the top of the module, inside a function (a lazy import) or under
``if TYPE_CHECKING:``. A lazy import only hides a circle from the interpreter; the two modules
still need each other, so it is still a circle of design. ``from package import name`` is an
edge to ``package.name`` when that is a module of the tree, else to ``package``; importing a
module is not counted as importing its parent package's ``__init__``.

No circle is allowed. ``KNOWN_CIRCLES`` is where one would be listed while it is being taken
apart (the last one, ``main.py``, ``app.py`` and ``repl.py`` building claw between them, ended
with ``assemble.py``, the composition root of issue 41); the comparison is exact, so a new
circle fails, and so does a listed one's going away until it is taken off the list.
"""

from __future__ import annotations

import ast
import textwrap
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

from clawbook.harness.runner import ROOT

TREES = ("solution", "clawbook")

KNOWN_CIRCLES: set[frozenset[str]] = set()
"""The circles allowed today, each as the set of its modules: none."""

Graph = dict[str, set[str]]


def modules(root: Path, trees: Iterable[str] = TREES) -> dict[str, tuple[Path, bool]]:
    """Every module under ``trees``: its dotted name, its file and whether it is a package."""
    found: dict[str, tuple[Path, bool]] = {}
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def import_graph(root: Path = ROOT, trees: Iterable[str] = TREES) -> Graph:
    """Each module's imports of other modules of ``trees``, from every import statement."""
    found = modules(root, trees)
    graph: Graph = {}
    for name, (path, package) in found.items():
        here = name if package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in found)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in found:
                        targets.add(submodule)
                    elif source in found:
                        targets.add(source)
        targets.discard(name)
        graph[name] = targets
    return graph


def knots(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The sets of modules that reach each other (strongly connected, two or more), sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in order:
            continue
        # Tarjan's algorithm, iteratively: a frame is a module and its targets still to visit.
        frames = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        while frames:
            node, targets = frames[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    frames.append((target, iter(sorted(graph.get(target, ())))))
                elif target in stack:
                    low[node] = min(low[node], order[target])
                continue
            frames.pop()
            if frames:
                low[frames[-1][0]] = min(low[frames[-1][0]], low[node])
            if low[node] == order[node]:
                knot = set()
                while True:
                    member = stack.pop()
                    knot.add(member)
                    if member == node:
                        break
                if len(knot) > 1:
                    found.append(frozenset(knot))
    return sorted(found, key=sorted)


def circle(graph: Mapping[str, set[str]], knot: frozenset[str]) -> list[str]:
    """A shortest circle through the knot's first module, in import order, back to it."""
    first = min(knot)
    came_from: dict[str, str] = {}
    queue = deque([first])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node] & knot):
            if target == first:
                path = [node]
                while path[-1] != first:
                    path.append(came_from[path[-1]])
                return [*reversed(path), first]
            if target not in came_from:
                came_from[target] = node
                queue.append(target)
    raise AssertionError(f"{sorted(knot)} is not a knot")


def named(graph: Mapping[str, set[str]], knot: frozenset[str]) -> str:
    """``a -> b -> a``; with the rest of the knot when that circle is not all of it."""
    path = circle(graph, knot)
    text = " -> ".join(path)
    rest = sorted(knot - set(path))
    return f"{text} (and {', '.join(rest)} in the same knot)" if rest else text


def problems(graph: Mapping[str, set[str]], known: set[frozenset[str]]) -> list[str]:
    """What is wrong with the graph's circles against the known ones; empty when nothing is."""
    found = knots(graph)
    said = [f"import circle: {named(graph, k)}" for k in found if k not in known]
    said += [
        f"no longer a circle: {', '.join(sorted(k))}; take it off KNOWN_CIRCLES"
        for k in sorted(known - set(found), key=sorted)
    ]
    return said


def test_import_graph_has_no_circle():
    graph = import_graph()
    assert "solution.events" in graph and "clawbook.instructor.grade" in graph
    said = problems(graph, KNOWN_CIRCLES)
    assert not said, "\n".join(said)


def test_import_graph_names_a_planted_circle_and_a_known_one_that_is_gone():
    graph = import_graph()
    assert "solution.events" in graph["solution.tools.todo_write"]
    planted = {**graph, "solution.events": graph["solution.events"] | {"solution.tools.todo_write"}}
    assert problems(planted, KNOWN_CIRCLES) == [
        "import circle: solution.events -> solution.tools.todo_write -> solution.events"
    ]
    known = {frozenset({"solution.app", "solution.main", "solution.repl"})}
    assert problems(graph, known) == [
        "no longer a circle: solution.app, solution.main, solution.repl; take it off KNOWN_CIRCLES"
    ]
    # The circle issue 41 ended: main imports app, app imports main back (as open_agent did).
    knotted = {**graph, "solution.app": graph["solution.app"] | {"solution.main"}}
    assert problems(knotted, KNOWN_CIRCLES) == [
        "import circle: solution.app -> solution.main -> solution.app"
    ]


def test_import_graph_counts_lazy_and_type_checking_imports_and_names_the_order(tmp_path):
    files = {
        "solution/__init__.py": "",
        "solution/alpha.py": "def later():\n    from .tools import beta\n    return beta\n",
        "solution/tools/__init__.py": "",
        "solution/tools/beta.py": "from ..gamma import G\n",
        "solution/gamma.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from solution import alpha\n"
        ),
        "solution/delta.py": "from . import gamma\nimport solution.alpha\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    graph = import_graph(tmp_path, ("solution",))
    assert graph["solution.delta"] == {"solution.gamma", "solution.alpha"}
    assert problems(graph, set()) == [
        "import circle: solution.alpha -> solution.tools.beta -> solution.gamma -> solution.alpha"
    ]
