"""Mutation testing of ``solution/`` against the shared suite: ``python -m bench.mutation``.

A mutant is a copy of the reference implementation with one small change: ``<`` becomes
``<=``, a string gains ``XX``, an argument becomes ``None``. A good suite fails on it (the
mutant is *killed*); a mutant every test still passes (*survived*) is a rule no test holds in
place, unless the change alters no behaviour at all (an *equivalent* mutant).

``mutmut`` (3.x, configured under ``[tool.mutmut]`` in ``pyproject.toml``) makes and runs the
mutants. This module runs it on a scratch copy of the repository, so the working tree is never
touched, and then reads its results per chapter: each mutant's changed line is looked up in
the chapter regions of ``solution/`` (``clawbook.course.stubgen.all_regions``), and mutants outside
every region are counted as given code. Survivors listed in ``bench/mutation-survivors.md``
are shown as listed equivalents. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fnmatch
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mutmut.stats import status_by_exit_code

from clawbook.course import chapters, stubgen

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "solution"
COPIED = ("solution", "tests", "clawbook", "pyproject.toml")
"""What the scratch copy holds: the code under test, the suite, its plugin, the settings."""
SURVIVORS = ROOT / "bench" / "mutation-survivors.md"
DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "clawbook-mutation"
TEST_TIMEOUT = 40
"""pytest-timeout's limit per test in the scratch copy, in seconds (the suite's own is 10)."""
LIMIT_FLOOR = 5.0
"""The least time limit a test gets in the scratch copy once mutmut has timed it, in seconds.

A mutant that loses an MCP answer makes its test wait for this limit: ch23 had 38 such mutants,
and at 10 s they were a third of its run."""
LIMIT_FACTOR = 5.0
"""A timed test's limit in the scratch copy is this many times what its call took in mutmut's
traced first run (at least ``LIMIT_FLOOR``, at most the limit the test declares)."""
TARGET = 90.0
"""The share of each chapter's region mutants the suite must kill, in percent."""

IMPORT_TIME_HOOKS = frozenset({"__get_pydantic_core_schema__", "__get_pydantic_json_schema__"})
"""Methods Python calls while their own class is being created.

mutmut replaces a function by a trampoline that looks the mutant up in a table filled in
after the class statement; a method that pydantic calls while building its own class runs
before that, and the whole package then fails to import. The scratch copy marks these
``# pragma: no mutate block``, so mutmut leaves them as they are.
"""

MUTANT_NAME = re.compile(r"\bsolution\.[\w.\u01c1]+__mutmut_\d+\b")
"""A mutant's name as mutmut prints it: ``solution.mock.xǁMockProviderǁadd__mutmut_2``."""


@dataclass(frozen=True)
class Mutant:
    """One mutant: where its change is, what it is, and what the suite made of it."""

    name: str
    path: str
    """The mutated file, relative to the repository (``solution/agent.py``)."""
    function: str
    """The function it changes, qualified (``SimpleAgent.run``)."""
    status: str
    """mutmut's verdict: ``killed``, ``survived``, ``timeout``, ``no tests``, ..."""
    line: int
    """The first changed line, 1-based, in the original file."""
    before: tuple[str, ...]
    after: tuple[str, ...]
    chapter: str | None
    """The chapter whose region holds the changed line; ``None`` for given code."""
    listed: bool = False
    """Whether ``bench/mutation-survivors.md`` lists it as an equivalent mutant."""


@dataclass
class Tally:
    """Mutant counts of one row of the table."""

    label: str
    killed: int = 0
    survived: int = 0
    listed: int = 0
    no_tests: int = 0
    timeout: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        """Every mutant of the row."""
        return self.killed + self.survived + self.no_tests + self.timeout + self.other

    @property
    def percent_killed(self) -> float:
        """Killed mutants as a share of all of them (timeouts and survivors count against)."""
        return 100.0 * self.killed / self.total if self.total else 100.0

    @property
    def score(self) -> float:
        """The mutation score: killed mutants as a share of those not listed as equivalent."""
        counted = self.total - self.listed
        return 100.0 * self.killed / counted if counted else 100.0

    def add(self, mutant: Mutant) -> None:
        """Count one mutant."""
        if mutant.status == "killed":
            self.killed += 1
        elif mutant.status == "survived":
            self.survived += 1
            self.listed += mutant.listed
        elif mutant.status == "no tests":
            self.no_tests += 1
        elif mutant.status == "timeout":
            self.timeout += 1
        else:
            self.other += 1


@dataclass
class Report:
    """Everything one run found."""

    mutants: list[Mutant]
    regions_without_mutants: list[stubgen.Region] = field(default_factory=list)
    stale_listings: list[str] = field(default_factory=list)
    """Names in the survivors file that are not survivors of this run."""
    seconds: float = 0.0


# ---------------------------------------------------------------- the scratch copy


def prepare(workdir: Path, root: Path = ROOT) -> None:
    """Make ``workdir`` a fresh copy of what the mutation run needs, and nothing else."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    # tests/tooling starts whole pytest sessions (it tests clawbook, not the agent).
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "tooling")
    for name in COPIED:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, workdir / name, ignore=ignore)
        else:
            shutil.copy2(source, workdir / name)
    for path in sorted((workdir / PACKAGE).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        marked = mark_import_time_hooks(text)
        if marked != text:
            path.write_text(marked, encoding="utf-8")
    conftest = workdir / "tests" / "conftest.py"
    with conftest.open("a", encoding="utf-8") as end:
        end.write(limits_hook())
        end.write(preload_hook())
        end.write(NO_SHRINK_HOOK)


def limits_hook(floor: float = LIMIT_FLOOR, factor: float = LIMIT_FACTOR) -> str:
    """Code for the end of the scratch copy's ``tests/conftest.py``: time limits from timings.

    A mutant that loses an MCP server's answer or an eval worker's result makes its test wait,
    and a test that waits is stopped only by its time limit: a 40 s limit for a test that takes
    half a second made ch23's run last most of an hour. mutmut's first (traced) run records how
    long each test's call took (``mutants/mutmut-stats.json``); every later run (the clean one,
    then one per mutant) gives each timed test ``factor`` times that, at least ``floor`` and
    at most the limit the test had (its own ``pytest.mark.timeout`` or the suite's). A traced
    call is slower than a plain one, so the clean run, which must pass, has room. The
    conftest's own ``pytest_collection_modifyitems`` still runs first.
    """
    return f'''

# ---- added by bench.mutation, in the scratch copy only: each test's time limit from its timing
_SUITE_MODIFYITEMS = globals().get("pytest_collection_modifyitems")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-redef]
    if _SUITE_MODIFYITEMS is not None:
        _SUITE_MODIFYITEMS(config, items)
    import json as _json

    stats = config.rootpath / "mutmut-stats.json"
    if not stats.is_file():
        return  # mutmut's first run, which does the timing
    took = _json.loads(stats.read_text(encoding="utf-8")).get("duration_by_test", {{}})
    for item in items:
        if item.nodeid in took:
            own = item.get_closest_marker("timeout")
            if own is None:
                cap = float(config.getini("timeout") or "inf")
            else:
                cap = float(own.kwargs.get("timeout", own.args[0] if own.args else "inf"))
            limit = min(cap, max({floor!r}, {factor!r} * took[item.nodeid]))
            item.add_marker(pytest.mark.timeout(limit), append=False)
'''


PRELOADED: tuple[str, ...] = ()
"""Modules the scratch copy's ``conftest.py`` imports although no test module does at import.

mutmut imports the tests once, in its fork server, and forks a child per mutant; a module a
test imports only when it runs is loaded in every child again, unless it is listed here. None
is today. ``jsonschema`` was (1.5 s, ``rfc3987_syntax`` building a grammar): the MCP SDK's
client imported it on its first ``call_tool`` in ch23's test process; that client now runs
inside the SDK server's own process (``tests/mcp_server_sdk.py --oracle``). The suite itself
never imports a slow module early: ``clawbook status`` collects every test file and would pay
it on each run. (mutmut's own ``preload_modules_file`` belongs to its ``import`` warm-up, which
replaces the collection that loads the tests; the conftest keeps both.)"""


def preload_hook(modules: Sequence[str] = PRELOADED) -> str:
    """Code for the end of the scratch copy's ``tests/conftest.py``: import ``modules`` once."""
    lines = "".join(f"import {name}  # noqa: E402, F401\n" for name in modules)
    return f"""
# ---- added by bench.mutation, in the scratch copy only: loaded once, in mutmut's fork server
{lines}"""


NO_SHRINK_HOOK = """
# ---- added by bench.mutation, in the scratch copy only: a failing property test is a kill as it
# is; shrinking its example to the smallest would only cost time, for every mutant it kills
_SUITE_LOAD_PROFILE = load_hypothesis_profile


def load_hypothesis_profile():  # type: ignore[no-redef]
    _SUITE_LOAD_PROFILE()
    from hypothesis import Phase, settings

    phases = [phase for phase in settings.default.phases if phase is not Phase.shrink]
    settings.register_profile("mutation", settings.default, phases=phases)
    settings.load_profile("mutation")
"""
"""Code for the end of the scratch copy's ``tests/conftest.py``: Hypothesis does not shrink.

The suite's conftest loads its Hypothesis profile when the first test file that uses Hypothesis
is collected (``load_hypothesis_profile``); this wraps that function so the profile in force
keeps every setting but the shrink phase."""


def mark_import_time_hooks(source: str) -> str:
    """``source`` with ``# pragma: no mutate block`` after the header of each import-time hook.

    The pragma goes at the end of the line that holds the colon closing the ``def``; no line
    is added or removed, so every line number stays what it is in ``solution/``.
    """
    lines = source.splitlines(keepends=True)
    marked: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.name in IMPORT_TIME_HOOKS
        ):
            marked.add(_header_end(lines, node))
    for index in sorted(marked):
        line = lines[index]
        body = line.rstrip("\r\n")
        lines[index] = body + "  # pragma: no mutate block" + line[len(body) :]
    return "".join(lines)


def _header_end(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The 0-based index of the line whose ``:`` ends the header of the function ``node``."""
    text = "".join(lines[node.lineno - 1 :])
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.OP:
            continue
        if token.string in "([{":
            depth += 1
        elif token.string in ")]}":
            depth -= 1
        elif token.string == ":" and depth == 0:
            return node.lineno - 1 + token.start[0] - 1
    raise ValueError(f"no end of the header of {node.name}")  # pragma: no cover


# ---------------------------------------------------------------- choosing mutants


def module_name(path: str) -> str:
    """The dotted module of a package-relative file: ``solution.tools.read`` for ``tools/read.py``.

    mutmut names a package's ``__init__.py`` after the package (it drops ``__init__.``).
    """
    dotted = path.removesuffix(".py").replace("/", ".").removesuffix("__init__").rstrip(".")
    return f"{PACKAGE}.{dotted}" if dotted else PACKAGE


def mutant_glob(path: str, function: str, classes: Collection[str]) -> str:
    """The mutmut names of every mutant of the function holding ``function`` in ``path``.

    mutmut makes mutants of top-level functions (``x_f__mutmut_3``) and of methods of
    top-level classes (``xǁCǁm__mutmut_3``); a nested function is mutated as part of the
    function around it. ``classes`` are the top-level class names of the module.
    """
    parts = function.split(".")
    if len(parts) > 1 and parts[0] in classes:
        mangled = f"x\u01c1{parts[0]}\u01c1{parts[1]}"
    else:
        mangled = f"x_{parts[0]}"
    return f"{module_name(path)}.{mangled}__mutmut_*"


def _top_level_classes(package: Path, path: str) -> set[str]:
    """The names of the classes defined at the top level of ``package/path``."""
    tree = ast.parse((package / path).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


def chapter_globs(package: Path, chapter_ids: Collection[str]) -> list[str]:
    """mutmut name globs for the functions that hold the regions of ``chapter_ids``."""
    unknown = sorted(set(chapter_ids) - {r.chapter for r in stubgen.all_regions(package)})
    if unknown:
        raise SystemExit(f"no region of {', '.join(unknown)} in {package}")
    globs: list[str] = []
    for region in stubgen.all_regions(package):
        if region.chapter in chapter_ids:
            classes = _top_level_classes(package, region.path)
            glob = mutant_glob(region.path, region.function, classes)
            if glob not in globs:
                globs.append(glob)
    return globs


def module_glob(package: Path, module: str) -> str:
    """The glob of every mutant of one module, named ``tools/bash.py``, ``tools.bash`` or
    ``solution.tools.bash``."""
    relative = module.removeprefix(f"{PACKAGE}/").removeprefix(f"{PACKAGE}.")
    if not relative.endswith(".py"):
        relative = relative.replace(".", "/") + ".py"
    if not (package / relative).is_file():
        init = relative.removesuffix(".py") + "/__init__.py"
        if not (package / init).is_file():
            raise SystemExit(f"no module {module!r} in {package}")
        relative = init
    return f"{module_name(relative)}.*"


@dataclass(frozen=True)
class Selection:
    """What one run mutates and counts, and which tests it runs."""

    globs: tuple[str, ...] = ()
    """mutmut name globs handed to ``mutmut run``; empty for every mutant."""
    chapters: frozenset[str] = frozenset()
    """Chapters whose region mutants the table counts; empty with no chapter asked for."""
    given: tuple[str, ...] = ()
    """Module globs whose given-code mutants the table counts."""
    names: tuple[str, ...] = ()
    """Plain mutant names or globs asked for (counted whatever their place)."""
    tests: tuple[str, ...] | None = None
    """Test files the run may use (``None``: the whole suite)."""
    files: tuple[str, ...] = ()
    """The files mutmut mutates, relative to the repository (empty: all of ``solution/``)."""

    def counts(self, mutant: Mutant) -> bool:
        """Whether the table counts ``mutant``."""
        if not (self.chapters or self.given or self.names):
            return True
        if mutant.chapter in self.chapters:
            return True
        if mutant.chapter is None and any(fnmatch.fnmatch(mutant.name, g) for g in self.given):
            return True
        return any(fnmatch.fnmatch(mutant.name, n) for n in self.names)


def chapter_tests(root: Path, last: str) -> list[str]:
    """The test files of every chapter up to ``last`` in book order, relative to ``root``.

    These are the tests a learner runs when the chapter is done: a mutant that only a later
    chapter's test kills is a mistake the learner would not see while writing the chapter.
    """
    course = chapters.load()
    upto = {c.id for c in course.chapters[: course.index(last) + 1]}
    return _test_files(root, upto)


def own_tests(root: Path, chapter_ids: Collection[str]) -> list[str]:
    """The test files of the chapters ``chapter_ids`` themselves, relative to ``root``.

    A chapter run needs no more. The progression check (``clawbook verify``) holds every
    earlier chapter's tests passing while this chapter's regions are stubs, so no earlier test
    depends on what a line in these regions does, and none can kill its mutant; running them
    would only lengthen mutmut's first two passes over the tests (most of a run's time for the
    late chapters, whose earlier tests are hundreds).
    """
    return _test_files(root, set(chapter_ids))


def _test_files(root: Path, owners: Collection[str]) -> list[str]:
    """The test files under ``root/tests`` whose chapter is one of ``owners``."""
    course = chapters.load()
    found: list[str] = []
    for path in sorted((root / "tests").glob("test_*.py")):
        owner = course.chapter_for_test_file(path.name)
        if owner is not None and owner.id in owners:
            found.append(path.relative_to(root).as_posix())
    return found


def _owner_of_module(relative: str) -> str | None:
    """The last chapter (in book order) that lists the package file ``relative`` to edit."""
    owner = None
    for chapter in chapters.load().chapters:
        if relative in chapter.files:
            owner = chapter.id
    return owner


def select(
    arguments: Sequence[str], given: Sequence[str], package: Path, all_tests: bool = False
) -> Selection:
    """Turn the command's arguments (chapter ids, mutant names or globs) into a selection."""
    known = set(chapter_order())
    chapter_ids = [a for a in arguments if a in known]
    names = [a for a in arguments if a not in known]
    globs = [*chapter_globs(package, chapter_ids), *names]
    given_globs = [module_glob(package, module) for module in given]
    globs += [g for g in given_globs if g not in globs]
    tests: tuple[str, ...] | None = None
    files: list[str] = []
    if not names:
        for glob in globs:
            relative = _module_file(package, glob.rpartition(".")[0])
            if relative not in files:
                files.append(relative)
    if not all_tests and not names and (chapter_ids or given_globs):
        # Given code is not stubbed, so any test up to the module's owner may hold it in place.
        owners: list[str] = []
        for glob in given_globs:
            dotted = glob.removesuffix(".*").removeprefix(f"{PACKAGE}.")
            owner = _owner_of_module(dotted.replace(".", "/") + ".py") or _owner_of_module(
                dotted.replace(".", "/") + "/__init__.py"
            )
            owners.append(owner or chapter_order()[-1])
        found = own_tests(package.parent, chapter_ids)
        if owners:
            last = max(owners, key=chapter_order().index)
            found += [t for t in chapter_tests(package.parent, last) if t not in found]
        tests = tuple(sorted(found))
    return Selection(
        globs=tuple(globs),
        chapters=frozenset(chapter_ids),
        given=tuple(given_globs),
        names=tuple(names),
        tests=tests,
        files=tuple(files),
    )


def _module_file(package: Path, module: str) -> str:
    """The repository-relative file of the dotted ``module`` (``solution/tools/bash.py``)."""
    relative = module.removeprefix(PACKAGE).lstrip(".").replace(".", "/")
    path = f"{relative}.py" if relative else "__init__.py"
    if not (package / path).is_file():
        path = f"{relative}/__init__.py"
    return f"{PACKAGE}/{path}"


UNTRACEABLE = ("tests/test_eval.py::test_eval_claw_eval_writes_results_and_a_report",)
"""Tests that cannot run under mutmut: this one changes folder before ``claw eval`` starts its
worker processes, and a worker that imports the mutated package there cannot find mutmut's
settings (``Could not figure out where the code to mutate is``), so mutmut's first run fails
and no mutant is run. The other eval tests start workers too and still run."""


def restrict(workdir: Path, tests: Sequence[str] | None, files: Sequence[str] = ()) -> None:
    """Make the scratch copy's ``[tool.mutmut]`` run only ``tests`` and mutate only ``files``.

    mutmut runs the selected tests once to learn which test calls which function, and then
    each mutant against the tests that call its function; fewer test files make that first run
    short, and fewer mutated files spare it the trampolines of functions nobody asked about.
    """
    settings = workdir / "pyproject.toml"
    text = settings.read_text(encoding="utf-8")
    key = "pytest_add_cli_args_test_selection"
    found = re.search(rf"(?m)^{key} = .*$", text)
    if found is None:
        raise SystemExit(f"no {key} line in {settings}")
    selected = json.loads(found.group(0).partition("=")[2]) if tests is None else list(tests)
    for test in UNTRACEABLE:
        selected += ["--deselect", test]
    line = f"{key} = {json.dumps(selected)}"
    if files:
        line += f"\nonly_mutate = {json.dumps(list(files))}"
    text = text[: found.start()] + line + text[found.end() :]
    # mutmut's first run traces every call, and the machine is shared: a property test that
    # takes 4 s alone can pass pytest-timeout's 10 s there. A looping mutant is still stopped,
    # by this limit or by mutmut's own CPU-time limit.
    text = re.sub(r"(?m)^timeout = \d+$", f"timeout = {TEST_TIMEOUT}", text, count=1)
    # A mutant that loops in a worker thread (a search tool's walk runs in one) makes its test
    # fail at the limit, and then hang in teardown, where asyncio joins that thread: mutmut
    # would wait out its CPU limit (two minutes) and call it a timeout. The thread method
    # ends the run at the limit instead, as a failure: the mutant is killed, as it is for a
    # learner whose test runs over its limit.
    text = re.sub(
        r"(?m)^(timeout = \d+)$", r'\1\ntimeout_method = "thread"', text, count=1
    )
    settings.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- running mutmut


def mutmut_command() -> str:
    """The ``mutmut`` script of the Python running this module."""
    beside = Path(sys.executable).with_name("mutmut")
    if beside.exists():
        return str(beside)
    found = shutil.which("mutmut")
    if found is None:
        raise SystemExit("mutmut is not installed: run `make setup` (it is in the dev extra)")
    return found


def mutmut_env() -> dict[str, str]:
    """This environment without the learner's ``CLAW_``/``CLAWBOOK_`` settings, on the reference."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAW_", "CLAWBOOK_"))}
    env["CLAW_IMPL"] = "solution"
    return env


GENERATE = """\
import os, sys
from mutmut import __main__ as mutmut
mutmut.set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
mutmut.copy_src_dir()
mutmut.copy_also_copy_files()
mutmut.setup_source_paths()
mutmut.store_lines_covered_by_tests()
mutmut.create_mutants(int(sys.argv[1]))
"""
"""The first step of ``mutmut run`` alone: write every mutant (and its ``.meta``), run nothing.
``mutmut run`` then finds the files newer than their sources and keeps them as they are."""


def generate_mutants(workdir: Path, max_children: int) -> bool:
    """Write the mutants of the scratch copy without running any; whether that worked.

    mutmut has no command for this step, so it calls mutmut's own functions in the order
    ``mutmut run`` does. They are mutmut's internals: if a later mutmut moves them, this
    returns ``False`` and the caller runs every mutant of the selected functions instead.
    """
    done = subprocess.run(
        [sys.executable, "-c", GENERATE, str(max_children)], cwd=workdir, env=mutmut_env(),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"could not write the mutants before the run ({last}); running them all")
        return False
    return True


def counted_names(workdir: Path, selection: Selection) -> list[str]:
    """The names of the written mutants that ``selection``'s table counts.

    A chapter's regions sit inside functions that hold given code too, and mutmut mutates
    whole functions: without this list a chapter run would also run (and not count) every
    mutant of the given lines around its regions; a ``--given`` run every mutant inside the
    module's regions.
    """
    report = read_results(workdir, listed=set())
    return [m.name for m in report.mutants if selection.counts(m)]


def run_mutmut(workdir: Path, names: Sequence[str], max_children: int, echo: bool) -> None:
    """Run ``mutmut run`` in ``workdir`` with ``CLAW_IMPL=solution``; its output goes to a log."""
    env = mutmut_env()
    command = [mutmut_command(), "run", "--max-children", str(max_children), *names]
    log = workdir / "mutmut.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        assert process.stdout is not None
        output = process.stdout.fileno()
        for chunk in iter(lambda: os.read(output, 65536), b""):
            sink.write(chunk)
            if echo:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
        status = process.wait()
    if status != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
        lines = [line for line in tail.splitlines() if line.strip()][-40:]
        raise SystemExit(f"mutmut failed (exit {status}); the end of {log}:\n" + "\n".join(lines))


# ---------------------------------------------------------------- reading the results


KNOWN_GAP = "not killed"
"""The kind of a row in ``mutation-survivors.md`` that records a survivor no test holds yet:
written down with what it would take, and still counted as a survivor."""


def listed_survivors(path: Path = SURVIVORS) -> set[str]:
    """The mutant names ``bench/mutation-survivors.md`` lists as equivalent or outside the
    contract: every name in backticks, except in a table row whose kind is ``KNOWN_GAP``."""
    if not path.exists():
        return set()
    names: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if line.lstrip().startswith("|") and KNOWN_GAP in cells:
            continue
        names.update(MUTANT_NAME.findall(line))
    return names


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and the methods of top-level classes, by (qualified) name."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{child.name}"] = child
    return found


def _generated(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """mutmut's generated functions (``x_f__mutmut_3``, ``xǁCǁm__mutmut_orig``) by name."""
    return {name.rpartition(".")[2]: node for name, node in _functions(tree).items()}


def _source(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """A function's lines, from its ``def`` line to its last line."""
    assert node.end_lineno is not None
    return lines[node.lineno - 1 : node.end_lineno]


def original_function(generated_name: str) -> str:
    """``SimpleAgent.run`` for ``xǁSimpleAgentǁrun__mutmut_4``; ``f`` for ``x_f__mutmut_1``."""
    mangled = generated_name.partition("__mutmut_")[0]
    if mangled.startswith("x\u01c1"):
        cls, _, method = mangled[2:].partition("\u01c1")
        return f"{cls}.{method}"
    return mangled.removeprefix("x_")


def locate(
    orig: list[str], mutated: list[str], orig_name: str, mutant_name: str
) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """Where ``mutated`` differs from ``orig``: the 0-based index in ``orig``, and the lines."""
    orig = [orig[0].replace(orig_name, "", 1), *orig[1:]]
    mutated = [mutated[0].replace(mutant_name, "", 1), *mutated[1:]]
    matcher = difflib.SequenceMatcher(a=orig, b=mutated, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            index = i1 if i2 > i1 else max(i1 - 1, 0)
            before = tuple(line.rstrip() for line in orig[i1:i2])
            after = tuple(line.rstrip() for line in mutated[j1:j2])
            return index, before, after
    return 0, (), ()


def region_for(regions: Sequence[stubgen.Region], path: str, line: int) -> stubgen.Region | None:
    """The region of ``path`` (relative to the package) whose body holds 1-based ``line``."""
    for region in regions:
        if region.path == path and region.start < line - 1 < region.end:
            return region
    return None


def read_results(workdir: Path, listed: set[str] | None = None) -> Report:
    """Every mutant of the run in ``workdir``, placed in its chapter's region or given code."""
    listed = listed_survivors() if listed is None else listed
    package = workdir / PACKAGE
    regions = stubgen.all_regions(package)
    mutants: list[Mutant] = []
    hit: set[tuple[str, int]] = set()
    for meta in sorted((workdir / "mutants" / PACKAGE).rglob("*.py.meta")):
        relative = meta.relative_to(workdir / "mutants").as_posix().removesuffix(".meta")
        results: dict[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))[
            "exit_code_by_key"
        ]
        if not results:
            continue
        original_text = (workdir / relative).read_text(encoding="utf-8")
        originals = _functions(ast.parse(original_text))
        mutated_text = (workdir / "mutants" / relative).read_text(encoding="utf-8")
        mutated_lines = mutated_text.splitlines()
        generated = _generated(ast.parse(mutated_text))
        for name, exit_code in sorted(results.items()):
            mutant_name = name.rpartition(".")[2]
            orig_name = mutant_name.partition("__mutmut_")[0] + "__mutmut_orig"
            function = original_function(mutant_name)
            index, before, after = locate(
                _source(mutated_lines, generated[orig_name]),
                _source(mutated_lines, generated[mutant_name]),
                orig_name,
                mutant_name,
            )
            line = originals[function].lineno + index
            region = region_for(regions, relative.removeprefix(PACKAGE + "/"), line)
            if region is not None:
                hit.add((region.path, region.start))
            status = status_by_exit_code[exit_code]
            mutants.append(
                Mutant(
                    name=name,
                    path=relative,
                    function=function,
                    status=status,
                    line=line,
                    before=before,
                    after=after,
                    chapter=region.chapter if region else None,
                    listed=status == "survived" and name in listed,
                )
            )
    report = Report(mutants)
    report.regions_without_mutants = [r for r in regions if (r.path, r.start) not in hit]
    survivors = {m.name for m in mutants if m.status == "survived"}
    report.stale_listings = sorted(listed - survivors)
    return report


# ---------------------------------------------------------------- the table


def chapter_order() -> list[str]:
    """Chapter ids in the order of the book."""
    return [chapter.id for chapter in chapters.load().chapters]


def tallies(mutants: Iterable[Mutant]) -> list[Tally]:
    """One row per chapter that has mutants, then given code, then everything."""
    rows: dict[str | None, Tally] = {}
    total = Tally("all")
    for mutant in mutants:
        label = mutant.chapter or "given code"
        rows.setdefault(mutant.chapter, Tally(label)).add(mutant)
        total.add(mutant)
    order = {chapter: index for index, chapter in enumerate(chapter_order())}
    ordered = sorted(
        (chapter for chapter in rows if chapter is not None), key=lambda c: order.get(c, len(order))
    )
    result = [rows[chapter] for chapter in ordered]
    if None in rows:
        result.append(rows[None])
    return [*result, total]


def format_table(rows: Sequence[Tally]) -> str:
    """The per-chapter table, as plain text."""
    header = ("regions", "mutants", "killed", "survived", "listed", "no tests", "timeout", "other")
    lines = [f"{header[0]:<11}" + "".join(f"{h:>9}" for h in header[1:]) + "  killed %   score %"]
    for row in rows:
        counts = (
            row.total, row.killed, row.survived, row.listed, row.no_tests, row.timeout, row.other
        )  # fmt: skip
        verdict = ""
        if row.label.startswith("ch"):
            verdict = "  ok" if row.percent_killed >= TARGET else f"  below {TARGET:g}%"
            if row.survived and row.survived == row.listed:
                verdict += ", every survivor listed"
        lines.append(
            f"{row.label:<11}"
            + "".join(f"{count:>9}" for count in counts)
            + f"{row.percent_killed:>9.1f}%{row.score:>9.1f}%{verdict}"
        )
    return "\n".join(lines)


def format_survivors(mutants: Iterable[Mutant], given_code: bool) -> str:
    """Each survivor in a region (and in given code, if asked): place, name, change."""
    parts: list[str] = []
    for mutant in sorted(mutants, key=lambda m: (m.path, m.line, m.name)):
        if mutant.status not in ("survived", "no tests"):
            continue
        if mutant.chapter is None and not given_code:
            continue
        where = mutant.chapter or "given"
        note = f"  [listed in {SURVIVORS.name}]" if mutant.listed else ""
        if mutant.status == "no tests":
            note = "  [no test reaches it]"
        parts.append(f"{where} {mutant.path}:{mutant.line} {mutant.function}  {mutant.name}{note}")
        parts.extend(f"    - {line.strip()}" for line in mutant.before)
        parts.extend(f"    + {line.strip()}" for line in mutant.after)
    return "\n".join(parts)


def print_report(report: Report, workdir: Path, given_code: bool) -> None:
    """The table, the survivors, and what could not be measured."""
    print(format_table(tallies(report.mutants)))
    print()
    survivors = format_survivors(report.mutants, given_code)
    if survivors:
        scope = "regions and given code" if given_code else "regions"
        print(f"Survivors in the {scope} (`mutmut show NAME` in {workdir} shows one):")
        print(survivors)
        print()
    for region in report.regions_without_mutants:
        print(
            f"no mutants in {region.chapter} region {PACKAGE}/{region.location} "
            f"({region.function}): mutmut 3 mutates no decorated function but static and "
            "class methods, and nothing outside functions"
        )
    for name in report.stale_listings:
        print(f"{SURVIVORS.relative_to(ROOT)} lists {name}, which did not survive this run")
    minutes, seconds = divmod(round(report.seconds), 60)
    if report.seconds:
        print(f"run time: {minutes} min {seconds:02d} s for {len(report.mutants)} mutants")


# ---------------------------------------------------------------- the command


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.mutation",
        description="Run mutmut over solution/ against the shared suite on a scratch copy, "
        "then report killed and surviving mutants per chapter.",
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="CHAPTER|MUTANT",
        help="only these chapters' regions (ch13) or these mutants (names or globs, e.g. "
        "'solution.mock.*'); default: all",
    )
    parser.add_argument(
        "--given",
        action="append",
        default=[],
        metavar="MODULE",
        help="also the given code (outside regions) of this module: tools/bash.py, tools.bash",
    )
    parser.add_argument(
        "--all-tests",
        action="store_true",
        help="run the whole suite; by default a chapter run uses the chapters' own tests, and "
        "given code the tests of the chapters up to the module's owner",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        help=f"the scratch copy, emptied first (default: {DEFAULT_WORKDIR})",
    )
    parser.add_argument(
        "--max-children",
        type=int,
        default=os.cpu_count() or 2,
        help="mutants run at once (default: the number of CPUs)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="do not run anything: report the last run left in --workdir",
    )
    parser.add_argument(
        "--given-code", action="store_true", help="also list the survivors in given code"
    )
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write every mutant as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run (or re-read) a mutation run and print the per-chapter report."""
    options = parse_args(argv)
    workdir: Path = options.workdir.resolve()
    started = time.perf_counter()
    selection = select(options.names, options.given, ROOT / PACKAGE, options.all_tests)
    if not options.report_only:
        prepare(workdir)
        restrict(workdir, selection.tests, selection.files)
        echo = sys.stdout.isatty()
        if not echo:
            print(f"running mutmut in {workdir} (log: {workdir / 'mutmut.log'}) ...", flush=True)
        names = list(selection.globs)
        if names and generate_mutants(workdir, options.max_children):
            names = counted_names(workdir, selection) or names
        run_mutmut(workdir, names, options.max_children, echo)
        print()
    report = read_results(workdir)
    if selection.globs:
        report.mutants = [m for m in report.mutants if selection.counts(m)]
        report.regions_without_mutants = [
            r for r in report.regions_without_mutants if r.chapter in selection.chapters
        ]
        report.stale_listings = []
    if not options.report_only:
        report.seconds = time.perf_counter() - started
    print_report(report, workdir, options.given_code or bool(options.given))
    if options.json:
        options.json.write_text(
            json.dumps([asdict(m) for m in report.mutants], indent=2, ensure_ascii=False),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
