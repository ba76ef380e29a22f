"""Reuse test results while nothing they depend on changed: ``clawbook status`` in a second.

A learner asks for their progress far more often than they change code, and a run of the whole
suite takes many seconds. So every full run leaves its results in ``.clawbook/cache/``, filed by
test file, each with a fingerprint of the files that test file depends on:

* the test file itself and the helper modules of ``tests/`` it imports;
* every module of the implementation it imports, followed through the implementation's own
  imports (read with ``ast``, so an import inside a function counts too);
* the whole implementation, when the test file (or a helper) starts a process that imports it
  (the ``claw`` command): what runs in there cannot be read off the test's imports;
* for every test file alike: ``tests/conftest.py``, ``pyproject.toml``, the chapter list, the
  ``clawbook`` package (the plugin that reports the results), the Python that runs them and the
  per-test time limit.

The next run re-runs only the test files whose fingerprint changed and takes the rest from the
cache; when nothing changed, no test runs at all. A run that broke off, or that found a module
it cannot import, is never stored: the next run starts afresh.

Why not pytest-testmon, which selects tests by coverage: it measures coverage during every run
(a cost on each run), it must be told to keep results of the tests it skips, and its finer,
per-function selection buys little here, where a chapter's tests import a handful of modules.
The price of this file-level rule is that a test is re-run when any module it imports changed,
even a part of it the test never reaches. ``clawbook status --fresh`` ignores the cache.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clawbook.course.chapters import Curriculum
from clawbook.harness.report import ReportError, TestResult
from clawbook.harness.runner import ROOT, Run

CACHE_VERSION = 1
PROCESS_WORDS = ("claw_command", "claw.main", "-m claw", "pexpect", "CLAW_IMPL")
"""A test file whose source says one of these starts a process that imports the implementation
(the ``claw`` command, most often): what runs in there cannot be read off the test's imports, so
it depends on every module."""


@dataclass(frozen=True)
class Reuse:
    """What a cached run took from the cache and what it ran again."""

    reused: int
    """Tests whose results came from the cache."""
    rerun_files: tuple[str, ...]
    """Test files that ran again, because something they depend on changed."""


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts and p.is_file())


def _imports(path: Path) -> Iterable[tuple[str, int, tuple[str, ...]]]:
    """``(module, level, names)`` of every import in ``path``, wherever it stands."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, 0, ()
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level, tuple(a.name for a in node.names)


class Dependencies:
    """Which files each test file depends on, for one implementation package."""

    def __init__(self, root: Path, package: Path) -> None:
        """Read ``root``'s tests against the implementation in ``package``."""
        self.root = root
        self.package = package
        self.tests = root / "tests"
        self._modules: dict[Path, set[Path]] = {}

    def _module_file(self, dotted: str) -> Path | None:
        """The file of ``package``'s module named ``dotted`` (relative to the package)."""
        base = self.package.joinpath(*dotted.split(".")) if dotted else self.package
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def _implementation_closure(self, start: Iterable[Path]) -> set[Path]:
        """``start`` and every module of the package they import, transitively."""
        seen: set[Path] = set()
        todo = list(start)
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            todo.extend(self._imported_by(path) - seen)
        return seen

    def _imported_by(self, path: Path) -> set[Path]:
        if path in self._modules:
            return self._modules[path]
        found: set[Path] = set()
        here = path.parent.relative_to(self.package).parts
        for module, level, names in _imports(path):
            if level == 0:
                continue  # the package imports itself relatively; anything else is outside
            parts = list(here[: len(here) - (level - 1)] if level > 1 else here)
            base = ".".join([*parts, *filter(None, module.split("."))])
            for dotted in [base, *(f"{base}.{n}" if base else n for n in names)]:
                target = self._module_file(dotted)
                if target is not None:
                    found.add(target)
            # a parent package's __init__ runs before any of its modules
            for depth in range(len(parts) + 1):
                init = self.package.joinpath(*parts[:depth], "__init__.py")
                if init.is_file():
                    found.add(init)
        self._modules[path] = found
        return found

    def of(self, test_file: Path) -> set[Path]:
        """The files ``test_file``'s results depend on (global ones aside)."""
        files = {test_file}
        helpers = [test_file]
        implementation: set[Path] = set()
        everything = False
        while helpers:
            current = helpers.pop()
            try:
                text = current.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            everything = everything or any(word in text for word in PROCESS_WORDS)
            for module, level, names in _imports(current):
                top = module.split(".")[0]
                if level == 0 and top == "claw":
                    rest = module.split(".", 1)[1] if "." in module else ""
                    for dotted in [rest, *(f"{rest}.{n}" if rest else n for n in names)]:
                        target = self._module_file(dotted)
                        if target is not None:
                            implementation.add(target)
                    implementation.add(self.package / "__init__.py")
                elif level == 0 and (self.tests / f"{top}.py").is_file():
                    helper = self.tests / f"{top}.py"
                    if helper not in files:
                        files.add(helper)
                        helpers.append(helper)
        if everything:
            return files | set(_python_files(self.package))
        return files | self._implementation_closure(implementation)


def global_inputs(root: Path, timeout: float, implementation: str, package: Path) -> str:
    """The fingerprint of what every test depends on alike."""
    digest = hashlib.sha256()
    digest.update(
        json.dumps(
            [CACHE_VERSION, sys.version, sys.executable, timeout, implementation, str(package)]
        ).encode()
    )
    for path in [
        root / "pyproject.toml",
        root / "tests" / "conftest.py",
        *_python_files(root / "clawbook"),
        root / "clawbook" / "chapters.toml",
    ]:
        digest.update(f"{path.relative_to(root)}:{_digest(path)}\n".encode())
    return digest.hexdigest()


def fingerprint(common: str, files: Iterable[Path], root: Path) -> str:
    """One test file's fingerprint: the common inputs and the contents of ``files``."""
    digest = hashlib.sha256(common.encode())
    for path in sorted(files):
        digest.update(f"{path.relative_to(root)}:{_digest(path)}\n".encode())
    return digest.hexdigest()


def _result_json(result: TestResult) -> dict[str, Any]:
    return asdict(result)


def cache_file(root: Path, implementation: str) -> Path:
    """Where the results of runs against ``implementation`` are kept."""
    return root / ".clawbook" / "cache" / f"results-{implementation}.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _save(path: Path, files: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"version": CACHE_VERSION, "files": files}), "utf-8")
    temporary.replace(path)


Runner = Callable[[Sequence[str]], Run]
"""Runs pytest on the given test files (all of them when given none) and returns the run."""


def cached_run(
    curriculum: Curriculum,
    implementation: str,
    timeout: float,
    run: Runner,
    *,
    root: Path = ROOT,
    package: Path | None = None,
    fresh: bool = False,
) -> tuple[Run, Reuse]:
    """A run of every chapter's tests that re-runs only what changed since the last one."""
    package = package or (root / implementation)
    test_files = sorted(
        p
        for p in (root / "tests").glob("test_*.py")
        if curriculum.chapter_for_test_file(p.name) is not None
    )
    dependencies = Dependencies(root, package)
    common = global_inputs(root, timeout, implementation, package)
    prints = {
        p.relative_to(root).as_posix(): fingerprint(common, dependencies.of(p), root)
        for p in test_files
    }
    stored = {} if fresh else _load(cache_file(root, implementation))
    fresh_files = {
        name
        for name, print_ in prints.items()
        if isinstance(stored.get(name), dict) and stored[name].get("fingerprint") == print_
    }
    reused: dict[str, list[TestResult]] = {}
    for name in sorted(fresh_files):
        with contextlib.suppress(ReportError):  # a damaged entry: its file runs again
            reused[name] = [TestResult.from_json(r) for r in stored[name]["results"]]
    fresh_files = set(reused)
    stale = sorted(set(prints) - fresh_files)
    reused_results = [result for results in reused.values() for result in results]
    reused_collected = [n for name in sorted(fresh_files) for n in stored[name]["collected"]]
    if not stale:
        result = Run(
            results=tuple(reused_results),
            returncode=0,
            output="",
            collected=tuple(reused_collected),
        )
        return result, Reuse(len(reused_results), ())
    new = run(stale)
    combined = dataclasses.replace(
        new,
        results=tuple(reused_results) + new.results,
        collected=(None if new.collected is None else tuple(reused_collected) + new.collected),
    )
    whole = new.complete and new.cut_short is None
    if whole and not new.problems and new.collected is not None:
        keep = {name: stored[name] for name in fresh_files}
        for name in stale:
            keep[name] = {
                "fingerprint": prints[name],
                "results": [
                    _result_json(r) for r in new.results if r.nodeid.split("::")[0] == name
                ],
                "collected": [n for n in new.collected if n.split("::")[0] == name],
            }
        _save(cache_file(root, implementation), keep)
    return combined, Reuse(len(reused_results), tuple(stale) if fresh_files else ())
