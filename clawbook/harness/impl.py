"""Choose the implementation under test and make it importable as ``claw``.

The tests, the notebooks and the learner tooling never import ``starter`` or ``solution`` by
name. They import ``claw``, and ``CLAW_IMPL`` (``starter`` unless set) decides which package that
is. ``CLAW_IMPL_PATH`` may name a directory to import the package from, which is how the
instructor checks test freshly generated copies of the starter.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

ALIAS = "claw"
IMPLEMENTATIONS = ("starter", "solution")
IMPL_ENV = "CLAW_IMPL"
PATH_ENV = "CLAW_IMPL_PATH"
DEFAULT = "starter"


class ImplementationError(RuntimeError):
    """``CLAW_IMPL`` names no implementation, or the chosen one cannot be imported.

    When the package exists but fails to import, the original error is the ``__cause__``.
    """


def selected() -> str:
    """The implementation named by ``CLAW_IMPL``, validated."""
    name = os.environ.get(IMPL_ENV, DEFAULT).strip() or DEFAULT
    if name not in IMPLEMENTATIONS:
        raise ImplementationError(
            f"{IMPL_ENV}={name!r} is not an implementation; "
            f"use one of: {', '.join(IMPLEMENTATIONS)}"
        )
    return name


class _AliasLoader(importlib.abc.Loader):
    """Loads ``claw.x`` by importing the real module and putting it in its place."""

    def __init__(self, real_name: str) -> None:
        self.real_name = real_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # The import system re-reads sys.modules after exec_module, so the caller receives
        # the real module: `claw.mock` and `starter.mock` are one and the same object.
        sys.modules[module.__name__] = importlib.import_module(self.real_name)

    def get_code(self, fullname: str) -> CodeType | None:
        """The real module's code: ``python -m claw.main`` (runpy) runs it as ``__main__``."""
        spec = importlib.util.find_spec(self.real_name)
        loader = spec.loader if spec is not None else None
        if isinstance(loader, importlib.abc.InspectLoader):
            return loader.get_code(self.real_name)
        return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Maps ``claw`` and ``claw.*`` onto the chosen package."""

    def __init__(self, target: str) -> None:
        self.target = target

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real_name = self.target + fullname[len(ALIAS) :]
        real_spec = importlib.util.find_spec(real_name)
        if real_spec is None:
            return None
        return importlib.util.spec_from_loader(
            fullname,
            _AliasLoader(real_name),
            is_package=real_spec.submodule_search_locations is not None,
        )


def use(name: str | None = None, path: str | Path | None = None) -> ModuleType:
    """Make ``import claw`` import the chosen implementation, and return its package.

    ``name`` defaults to ``CLAW_IMPL``; ``path`` to ``CLAW_IMPL_PATH``, if set.
    """
    name = name or selected()
    if name not in IMPLEMENTATIONS:
        raise ImplementationError(f"unknown implementation {name!r}")
    location = path or os.environ.get(PATH_ENV)
    if location:
        sys.path.insert(0, str(Path(location).resolve()))
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    sys.meta_path.insert(0, _AliasFinder(name))
    for module_name in [m for m in sys.modules if m == ALIAS or m.startswith(ALIAS + ".")]:
        del sys.modules[module_name]
    try:
        return importlib.import_module(name)
    except Exception as error:  # a learner's package can fail to import in any way at all
        raise ImplementationError(
            f"cannot import the {name!r} package: {type(error).__name__}: {error}"
        ) from error


def locate(name: str) -> Path | None:
    """The directory of an implementation package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def describe(package: ModuleType) -> str:
    """``starter (/path/to/starter)``: which package ``claw`` is, and where it was imported from."""
    location = Path(package.__file__ or "?").parent
    return f"{package.__name__} ({location})"
