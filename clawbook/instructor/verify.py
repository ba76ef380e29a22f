"""``clawbook verify``: the instructor's proof that the course is sound.

Each check proves one promise of DESIGN.md and says, when it fails, what to fix:

1. ``starter/`` is exactly what the generator makes from ``solution/``;
2. the chapter list, the regions, the pages and the test files agree with each other;
3. against a freshly generated starter, every test of a chapter with stubs is todo (none passes
   by accident) and every other test passes;
4. progression: with chapters 1..N filled in, chapter N passes and later chapters stay todo;
5. every test command quoted in the book selects at least one test, and every word a test
   demands of the learner's code is stated in the lesson text (``clawbook/instructor/demands.py``),
   and the pages keep their rules: no answer shown outside a solution fold, no heading made by
   accident (``clawbook/instructor/pages.py``), one book's conventions: titles, section and
   column names, chapters and cited docs as links, times from one estimate
   (``clawbook/instructor/consistency.py``), and every quiz question offers three options or
   more while the right answers are spread over the positions (``clawbook/instructor/quizzes.py``);
6. the book builds with ``mkdocs build --strict``;
7. the notebooks pass nbval;
8. ruff and mypy are clean;
9. the whole suite passes against the solution; this runs last, so the final line is pytest's.
"""

from __future__ import annotations

import glob
import html
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from clawbook.course import stubgen, stubs
from clawbook.course.chapters import (
    CHAPTERS_ENV,
    Chapter,
    Curriculum,
    CurriculumError,
    load_file,
    test_functions,
)
from clawbook.harness.report import Outcome
from clawbook.harness.runner import ROOT, Run, chapter_test_files, pytest_command, run_pytest
from clawbook.instructor import consistency, demands, pages, quizzes

PARALLEL_ENV = "CLAWBOOK_PARALLEL"
"""How many pytest runs (or workers) verify runs at once; default: one per CPU."""


def parallel_runs() -> int:
    """How many of verify's pytest processes run at once: ``CLAWBOOK_PARALLEL``, else the CPUs.

    Verify's tests spend most of their time on the CPU, so more than one per CPU only makes
    each slower (one progression run on two CPUs: 93 s alone, 67 s over two workers, 86 s
    over four).
    """
    chosen = os.environ.get(PARALLEL_ENV, "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    return max(1, min(8, os.cpu_count() or 1))


@dataclass(frozen=True)
class Project:
    """The course under verification: a repository root and its chapter list."""

    root: Path
    runs: dict[str, Run] = field(default_factory=dict, compare=False, repr=False)
    """Runs one check leaves for a later one: ``untouched`` (the fresh starter's run, which
    the progression starts from)."""

    @property
    def curriculum(self) -> Curriculum:
        """The chapters of this project."""
        return load_file(self.chapters_file)

    @property
    def chapters_file(self) -> Path:
        """The project's ``chapters.toml``."""
        return self.root / "clawbook" / "chapters.toml"

    @property
    def solution(self) -> Path:
        """The reference implementation."""
        return self.root / "solution"

    @property
    def starter(self) -> Path:
        """The learner's package."""
        return self.root / "starter"

    @property
    def manifest(self) -> Path:
        """What the generator wrote into ``starter/`` last time (``clawbook stubs``)."""
        return self.root / "clawbook" / "generated-starter.json"

    @property
    def catalogue(self) -> Path:
        """The stubs' hints and pristine files that hint and reset read (``clawbook stubs``)."""
        return self.root / "clawbook" / "starter-stubs.json"

    @property
    def book(self) -> Path:
        """The book's Markdown sources."""
        return self.root / "book"

    def env(self) -> dict[str, str]:
        """Environment for subprocesses that must read this project's chapter list."""
        return {CHAPTERS_ENV: str(self.chapters_file)}

    def pytest(self, args: list[str], implementation: str, impl_path: Path | None = None) -> Run:
        """Run pytest in this project against an implementation."""
        return run_pytest(
            args,
            implementation=implementation,
            impl_path=impl_path,
            root=self.root,
            extra_env=self.env(),
        )


@dataclass
class CheckOutcome:
    """What one check found."""

    ok: bool
    summary: str
    """What the check proved, or what is wrong and how to fix it."""
    details: list[str] = field(default_factory=list)
    """What is wrong, a line each (shown under a failed check)."""
    notes: list[str] = field(default_factory=list)
    """How the check went, a line each (shown dimmed under a check that holds)."""


def _fail(summary: str, details: list[str]) -> CheckOutcome:
    shown = details[:15]
    if len(details) > 15:
        shown.append(f"... and {len(details) - 15} more")
    return CheckOutcome(False, summary, shown)


# ---------------------------------------------------------------- 1. starter in sync


def check_starter_in_sync(project: Project) -> CheckOutcome:
    """``starter/`` is what the generator makes from ``solution/`` (or that, with your edits).

    The manifest written at generation tells the two apart: a file that differs from what was
    generated holds a learner's code and is no fault of the course; a manifest that no longer
    matches ``solution/`` means an author forgot to regenerate.
    """
    try:
        files = stubgen.render_tree(project.solution)
    except stubgen.MarkerError as error:
        return _fail(f"a region marker is wrong: {error}", [])
    recorded = stubs.read_manifest(project.manifest)
    edited = stubs.edited_files(project.starter, recorded)
    if recorded != stubs.manifest(files):
        if edited:
            return _fail(
                "solution/ changed since starter/ was generated, and these starter files were "
                "edited since: `clawbook stubs --force` backs them up and regenerates",
                edited,
            )
        problems = stubgen.differences(files, project.starter) or [
            f"{project.manifest.relative_to(project.root)} does not match the generated files"
        ]
        return _fail("starter/ is stale: run `clawbook stubs` and commit the result", problems)
    catalogue = stubs.catalogue_json(stubs.catalogue_of(project.solution, files))
    if not project.catalogue.exists() or project.catalogue.read_text("utf-8") != catalogue:
        return _fail(
            "starter/ is stale: run `clawbook stubs` and commit the result",
            [f"{project.catalogue.relative_to(project.root)} does not match the generated files"],
        )
    if edited:
        return CheckOutcome(
            True,
            f"starter/ is generated from solution/; {len(edited)} file(s) hold your own code, "
            "so the checks below use a freshly generated copy",
        )
    return CheckOutcome(
        True, f"starter/ is generated from solution/ and up to date ({len(files)} files)"
    )


# ---------------------------------------------------------------- 2. chapter data


def check_chapter_data(project: Project) -> CheckOutcome:
    """The chapter list, the regions, the book pages and the test files agree."""
    curriculum = project.curriculum
    problems: list[str] = []
    ids = {c.id for c in curriculum.chapters}
    try:
        regions = stubgen.all_regions(project.solution)
    except stubgen.MarkerError as error:
        return _fail(f"a region marker is wrong: {error}", [])
    for region in regions:
        if region.chapter not in ids:
            problems.append(f"{region.location}: region of unknown chapter {region.chapter}")
            continue
        chapter = curriculum.get(region.chapter)
        if region.path not in chapter.files:
            problems.append(
                f"{region.location}: {chapter.id} does not list {region.path} in its files"
            )
    for chapter in curriculum.chapters:
        if chapter.page is not None and not (project.book / chapter.page).exists():
            problems.append(f"{chapter.id}: its page book/{chapter.page} does not exist")
        if not chapter.written:
            continue
        for file in chapter.files:
            if not any(r.chapter == chapter.id and r.path == file for r in regions):
                problems.append(
                    f"{chapter.id}: lists {file} but solution/{file} has no region of it"
                )
        if chapter.tests and not chapter_test_files(chapter, project.root, project.curriculum):
            problems.append(f"{chapter.id}: no test file matches {', '.join(chapter.test_globs)}")
    problems.extend(_misnamed_tests(project))
    problems.extend(_misstyled_boxes(project))
    if problems:
        return _fail("the chapter data and the code disagree", problems)
    written = len(curriculum.written)
    return CheckOutcome(
        True,
        f"{len(curriculum.chapters)} chapters ({written} written), {len(regions)} regions, "
        "pages and test files agree",
    )


BOX_TYPES = {"Python concept": "python", "How Claude Code does it": "claude"}
"""The page template's boxes and the admonition type that styles each alike in every chapter."""
_BOX = re.compile(r'^\s*(?:!!!|\?\?\?\+?)\s+(\w+)\s+"([^"]*)"', re.MULTILINE)


def _misstyled_boxes(project: Project) -> Iterator[str]:
    """Template boxes written with another admonition type (they would look unlike the rest)."""
    for chapter in project.curriculum.written:
        if chapter.page is None or not (project.book / chapter.page).exists():
            continue
        text = (project.book / chapter.page).read_text(encoding="utf-8")
        for match in _BOX.finditer(text):
            kind, title = match.groups()
            for prefix, expected in BOX_TYPES.items():
                if title.startswith(prefix) and kind != expected:
                    line = text.count("\n", 0, match.start()) + 1
                    yield (
                        f'book/{chapter.page}:{line}: a "{prefix}" box is `!!! {expected}`, '
                        f"not `{kind}`"
                    )


def _misnamed_tests(project: Project) -> Iterator[str]:
    """Test functions whose names do not start with their chapter's prefix."""
    curriculum = project.curriculum
    for path in sorted((project.root / "tests").glob("test_*.py")):
        chapter = curriculum.chapter_for_test_file(path.name)
        if chapter is None:
            yield f"tests/{path.name}: belongs to no chapter (rename, or move to tests/tooling/)"
            continue
        for name in test_functions(path):
            if not name.startswith(chapter.prefixes):
                prefixes = " or ".join(chapter.prefixes)
                yield f"tests/{path.name}::{name} should start with {prefixes}"


# ---------------------------------------------------------------- 3. untouched starter


def untouched_run(project: Project) -> Run:
    """The whole suite against a freshly generated starter (run once, then kept)."""
    if "untouched" not in project.runs:
        with tempfile.TemporaryDirectory(prefix="clawbook-starter-") as scratch:
            stubgen.write_tree(stubgen.render_tree(project.solution), Path(scratch) / "starter")
            project.runs["untouched"] = project.pytest([], "starter", impl_path=Path(scratch))
    return project.runs["untouched"]


def check_untouched_starter(project: Project) -> CheckOutcome:
    """Against a fresh starter, stubbed chapters are all todo and everything else passes."""
    run = untouched_run(project)
    curriculum = project.curriculum
    problems: list[str] = []
    todo = passed = skipped = 0
    for result in run.results:
        chapter = curriculum.get(result.chapter) if result.chapter else None
        if result.outcome in (Outcome.FAILED, Outcome.ERROR):
            problems.append(
                f"{result.nodeid} fails against the untouched starter: {result.message}"
            )
        elif result.outcome == Outcome.SKIPPED:
            skipped += 1  # opt-in tests (the live provider test) skip unless asked for
        elif chapter is not None and chapter.has_stubs and result.outcome != Outcome.TODO:
            problems.append(
                f"{result.nodeid} ({chapter.id}) {result.outcome} against the untouched starter: "
                "it must reach one of the chapter's stubs"
            )
        elif chapter is not None and not chapter.has_stubs and result.outcome != Outcome.PASSED:
            problems.append(
                f"{result.nodeid} ({chapter.id}) is {result.outcome} against the untouched "
                f"starter, but {chapter.id} has no stubs: its tests must pass from the start"
            )
        elif result.outcome == Outcome.TODO:
            todo += 1
        else:
            passed += 1
    problems.extend(_too_few_tests(curriculum, run))
    if not run.results:
        problems.append(f"no test ran:\n{run.output[-2000:]}")
    if problems:
        return _fail("the untouched starter does not behave as a starter must", problems)
    return CheckOutcome(
        True,
        f"{todo} tests todo (every test of a chapter with stubs), "
        f"{passed} pass (chapters without stubs), none fails"
        + (f", {skipped} opt-in skipped" if skipped else ""),
    )


def _too_few_tests(curriculum: Curriculum, run: Run) -> Iterator[str]:
    for chapter in curriculum.written:
        for prefix, minimum in chapter.tests.items():
            count = sum(
                1
                for r in run.for_chapter(chapter)
                if r.name.startswith(prefix) and r.outcome != Outcome.SKIPPED
            )
            if count < minimum:
                yield f"{chapter.id}: {count} tests named {prefix}*, at least {minimum} needed"


# ---------------------------------------------------------------- 4. progression


def check_progression(project: Project) -> CheckOutcome:
    """With chapters 1..N filled in, N passes and every later chapter with stubs is todo.

    Chapter by chapter, from the untouched starter's run: filling in chapter N changes only
    N's regions, each of which was a stub raising ``Todo("chN", ...)``. A test whose last run
    reached no stub of N (caught or not, in any process it started: ``TestResult.reached``)
    ran none of that code, so it runs the same with N filled in and keeps its outcome. Each
    step therefore runs N's own tests and those that reached one of N's stubs, on a starter
    filled up to N, and the guarantee is the one a run of every test at every step gives.
    """
    curriculum = project.curriculum
    stubbed = [c for c in curriculum.chapters if c.has_stubs and c.written]
    test_files = {f for c in stubbed for f in chapter_test_files(c, project.root, curriculum)}
    state = {r.nodeid: r for r in untouched_run(project).results if r.file in test_files}
    problems: list[str] = []
    steps: list[str] = []
    if not state:
        problems.append("the untouched starter's run gave no result to start from")
    for chapter in stubbed if state else ():
        filled_ids = {c.id for c in curriculum.chapters[: curriculum.index(chapter.id) + 1]}
        again = sorted(
            nodeid
            for nodeid, result in state.items()
            if result.chapter == chapter.id
            or result.reached is None
            or chapter.id in result.reached
        )
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="clawbook-progress-") as scratch:
            files = stubgen.render_tree(project.solution, keep=filled_ids)
            stubgen.write_tree(files, Path(scratch) / "starter")
            run = project.pytest(again, "starter", impl_path=Path(scratch)) if again else None
        seconds = time.perf_counter() - started
        steps.append(f"{chapter.id}: {len(again)} tests run again, {seconds:.1f}s")
        if run is None:
            continue
        state.update({r.nodeid: r for r in run.results})
        problems.extend(_progression_problems(curriculum, chapter, filled_ids, run))
        ran = {r.nodeid for r in run.results}
        if run.results and run.complete:
            problems.extend(
                f"with chapters up to {chapter.id} filled in, {nodeid} did not run"
                for nodeid in again
                if nodeid not in ran
            )
    if problems:
        return _fail("a chapter depends on code from a later one", problems)
    return CheckOutcome(
        True,
        f"progression holds for {len(stubbed)} chapter(s) with stubs: "
        f"{', '.join(c.id for c in stubbed) or 'none'}",
        notes=steps,
    )


def _progression_problems(
    curriculum: Curriculum, chapter: Chapter, filled_ids: set[str], run: Run
) -> Iterator[str]:
    """What is wrong with one progression run.

    A filled chapter's test that does not pass, a later chapter's test that is not todo, or a
    run in which no test ran at all.
    """
    if not run.results:
        yield f"with chapters up to {chapter.id} filled in, no test ran:\n{run.output[-2000:]}"
    for result in run.results:
        owner = curriculum.get(result.chapter) if result.chapter else None
        if owner is None or result.outcome == Outcome.SKIPPED:
            continue
        if owner.id in filled_ids and result.outcome != Outcome.PASSED:
            yield (
                f"with chapters up to {chapter.id} filled in, {result.nodeid} is "
                f"{result.outcome}: {result.message or result.hint or ''}"
            )
        if owner.id not in filled_ids and result.outcome != Outcome.TODO:
            yield (
                f"with chapters up to {chapter.id} filled in, {result.nodeid} of the later "
                f"chapter {owner.id} is {result.outcome}; it must still be todo"
            )


# ---------------------------------------------------------------- 5. commands in the book

COMMAND = re.compile(
    r"^(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?(?:python -m )?(?:pytest|clawbook check)(?:\s|$)"
)
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def book_commands(book: Path) -> list[tuple[str, str]]:
    """Every ``pytest ...`` and ``clawbook check ...`` command quoted in the book, with its page.

    Commands are found on the lines of code blocks (after an optional ``$`` prompt) and in
    inline code spans. A line that ends in a backslash goes on on the next, as in the shell: a
    long command is broken so that a phone shows it whole, and is checked whole.
    """
    found: set[tuple[str, str]] = set()
    for page in sorted(book.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        joined = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)
        candidates = [line.strip() for line in joined.splitlines()]
        candidates += [m.group(1).strip() for m in INLINE_CODE.finditer(text)]
        for candidate in candidates:
            command = candidate.removeprefix("$ ").split(" #")[0].strip()
            if COMMAND.match(command):
                found.add((page.relative_to(book).as_posix(), command))
    return sorted(found)


def check_book_commands(project: Project) -> CheckOutcome:
    """Every test command quoted in the book selects at least one test.

    One collection of the whole suite answers every command that only names test files,
    folders or test ids; a command with other options (``-k``, ``-m``) is collected on its own.
    """
    commands = book_commands(project.book)
    suite = _collected_ids(project, [])
    with ThreadPoolExecutor(max_workers=parallel_runs()) as pool:
        found = pool.map(
            lambda quoted: _book_command_problem(project, quoted[0], quoted[1], suite), commands
        )
        problems = [problem for problem in found if problem]
    if problems:
        return _fail("the book quotes test commands that select nothing", problems)
    return CheckOutcome(True, f"all {len(commands)} test commands quoted in the book select tests")


def _book_command_problem(
    project: Project, page: str, command: str, suite: list[str] | None = None
) -> str | None:
    """What is wrong with one test command quoted on a page of the book, if anything.

    ``suite``: the ids a collection of the whole suite found, for commands that only name
    paths; without it, every command is collected on its own.
    """
    try:
        words = shlex.split(command)
    except ValueError as error:
        return f"book/{page}: cannot parse `{command}`: {error}"
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words.pop(0)
    if words[:2] == ["clawbook", "check"]:
        if len(words) < 3:
            return f"book/{page}: `{command}` names no chapter"
        try:
            chapter = project.curriculum.get(words[2])
        except KeyError:
            return f"book/{page}: `{command}`: no chapter {words[2]}"
        if not chapter_test_files(chapter, project.root, project.curriculum):
            return f"book/{page}: `{command}` selects no test: {chapter.id} has none"
        return None
    args = _expand(project.root, words[words.index("pytest") + 1 :])
    if any(a in ("--nbval", "--nbval-lax") for a in args):
        return None
    paths = [a for a in args if a not in QUIET_FLAGS]
    if suite is not None and all(_in_suite(project.root, a) for a in paths):
        count = sum(1 for nodeid in suite if not paths or any(_selects(a, nodeid) for a in paths))
    else:
        count = len(_collected_ids(project, args))
    if count == 0:
        return f"book/{page}: `{command}` selects no test"
    return None


QUIET_FLAGS = frozenset({"-q", "-qq", "-v", "-vv", "-x", "-s", "-rA", "--tb=short", "--tb=line"})
"""Options that change what pytest prints or when it stops, never which tests it selects."""


def _in_suite(root: Path, arg: str) -> bool:
    """Whether ``arg`` names an existing file or folder of the suite a whole collection covers."""
    if arg.startswith("-"):
        return False
    path = (root / arg.split("::")[0]).resolve()
    tests = (root / "tests").resolve()
    tooling = tests / "tooling"  # collected only when named (tests/conftest.py)
    inside = path == tests or tests in path.parents
    return inside and path.exists() and not (path == tooling or tooling in path.parents)


def _selects(arg: str, nodeid: str) -> bool:
    """Whether a path or test id on pytest's command line selects the test ``nodeid``."""
    if "::" in arg:
        return nodeid == arg or nodeid.startswith((f"{arg}[", f"{arg}::"))
    path = Path(arg).as_posix().rstrip("/").removeprefix("./")
    return nodeid.startswith((f"{path}::", f"{path}/"))


def _expand(root: Path, args: list[str]) -> list[str]:
    """Expand wildcards in file arguments as the learner's shell does (unmatched: left as is)."""
    expanded: list[str] = []
    for arg in args:
        is_path = not arg.startswith("-") and expanded[-1:] not in (["-k"], ["-m"])
        found = glob.glob(arg, root_dir=root) if is_path and glob.has_magic(arg) else []
        expanded.extend(sorted(found) or [arg])
    return expanded


def _collected_ids(project: Project, args: list[str]) -> list[str]:
    """The ids of the tests ``pytest args`` selects against the solution."""
    env = {**os.environ, **project.env(), "CLAW_IMPL": "solution"}
    completed = subprocess.run(
        pytest_command("--collect-only", "-q", *args),
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.strip() for line in completed.stdout.splitlines() if "::" in line]


def check_test_demands(project: Project) -> CheckOutcome:
    """Every word a test demands is stated in the step that lists its test, outside folds.

    Wording stated on an earlier chapter's page counts too (see ``instructor.demands``).
    """
    found = demands.findings(project.root, project.curriculum)
    missing = [str(finding) for finding in found if not finding.stated]
    if missing:
        return _fail(
            f"{len(missing)} of {len(found)} words the tests demand are not in the lesson text: "
            + demands.HOW_TO_STATE,
            missing,
        )
    chapters = len({finding.chapter for finding in found})
    return CheckOutcome(
        True,
        f"{len(found)} demands in {chapters} chapters are stated in the lesson text, each in "
        "the step that lists its test, outside folded solutions",
    )


def check_page_rules(project: Project) -> CheckOutcome:
    """The pages keep their rules (``instructor.pages``, ``instructor.consistency``)."""
    found = [
        str(finding)
        for rules in (pages, consistency)
        for finding in rules.findings(project.root, project.curriculum)
    ]
    if found:
        return _fail(f"{len(found)} page rules broken: fix each line named", found)
    return CheckOutcome(
        True,
        "no page shows its chapter's answer outside a solution fold, no line turns into a "
        "heading by accident, and the pages keep the book's consistency rules",
    )


def check_quizzes(project: Project) -> CheckOutcome:
    """Quiz questions offer three options or more, and their right answers are spread.

    Each option stands on its one line, as mkdocs-quiz reads it; the rule for the spread is
    ``instructor.quizzes``'s.
    """
    found = quizzes.problems(project.book, project.curriculum)
    if found:
        return _fail(f"{len(found)} quiz faults: fix each line named", found)
    by_part = quizzes.book_questions(project.book, project.curriculum)
    count = sum(len(questions) for questions in by_part.values())
    return CheckOutcome(
        True,
        f"{count} quiz questions offer {quizzes.MIN_OPTIONS} options or more each, and every "
        "part's right answers are spread over the positions",
    )


# ---------------------------------------------------------------- 5b. scripts in the book

SCRIPT_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})python\b[^\n]*?title=\"(?P<name>[^\"/]+\.py)\""
)
SCRIPT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Script:
    """A script the book tells the reader to save and run.

    It is a ``python`` block titled with a bare file name (``name.py``); a title with a path
    (``solution/mock.py``) names a file of the solution shown in the book instead.
    """

    page: str
    line: int
    name: str
    code: str


def book_scripts(book: Path) -> list[Script]:
    """Every script block of the book, in page order."""
    scripts: list[Script] = []
    for page in sorted(book.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            opening = SCRIPT_FENCE.match(lines[index])
            index += 1
            if not opening:
                continue
            indent, fence, start = opening["indent"], opening["fence"], index
            body: list[str] = []
            while index < len(lines) and lines[index].strip() != fence:
                body.append(lines[index].removeprefix(indent))
                index += 1
            scripts.append(
                Script(
                    page=page.relative_to(book).as_posix(),
                    line=start,
                    name=opening["name"],
                    code="\n".join(body) + "\n",
                )
            )
            index += 1
    return scripts


def run_script(project: Project, script: Script) -> str | None:
    """Run a book script as a reader would, against the solution; what went wrong, or None.

    It runs from the repository's top folder with ``python <name>``; API keys are removed (a
    script that needs one must say so and stop) and any proxy points at a closed port, so no
    script reaches the network.
    """
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(project.env())
    env.update({"CLAW_IMPL": "solution", "HTTPS_PROXY": "http://127.0.0.1:9"})
    env.update({"HTTP_PROXY": "http://127.0.0.1:9"})
    env.pop("CLAW_IMPL_PATH", None)
    with tempfile.TemporaryDirectory(prefix="clawbook-script-") as scratch:
        path = Path(scratch) / script.name
        path.write_text(script.code, encoding="utf-8")
        try:
            completed = subprocess.run(
                [sys.executable, str(path)],
                cwd=project.root,
                env=env,
                capture_output=True,
                text=True,
                timeout=SCRIPT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"still running after {SCRIPT_TIMEOUT:g} s"
    if completed.returncode != 0:
        lines = (completed.stderr or completed.stdout).strip().splitlines()
        return f"exit status {completed.returncode}: " + (lines[-1] if lines else "no output")
    return None


def check_book_scripts(project: Project) -> CheckOutcome:
    """Every script the book tells the reader to save and run runs, as printed."""
    scripts = book_scripts(project.book)
    problems = []
    for script in scripts:
        error = run_script(project, script)
        if error is not None:
            problems.append(f"book/{script.page}:{script.line} {script.name}: {error}")
    if problems:
        return _fail("a script in the book does not run as printed", problems)
    return CheckOutcome(True, f"all {len(scripts)} scripts in the book run as printed")


# ---------------------------------------------------------------- 6-8. book, notebooks, linters


def _tool(project: Project, name: str, args: list[str], proved: str, fix: str) -> CheckOutcome:
    executable = Path(sys.executable).with_name(name)
    command = [str(executable) if executable.exists() else name, *args]
    env = {**os.environ, **project.env(), "NO_MKDOCS_2_WARNING": "1", "CLAW_IMPL": "solution"}
    completed = subprocess.run(
        command, cwd=project.root, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        output = (completed.stdout + completed.stderr).strip().splitlines()
        interesting = [
            line
            for line in output
            if any(word in line for word in ("WARNING", "ERROR", "error", "FAILED"))
        ]
        return _fail(fix, (interesting or output)[-15:])
    return CheckOutcome(True, proved)


def check_book_builds(project: Project) -> CheckOutcome:
    """``mkdocs build --strict`` succeeds, and no link within a page points at a missing anchor."""
    with tempfile.TemporaryDirectory(prefix="clawbook-site-") as site:
        built = _tool(
            project,
            "mkdocs",
            ["build", "--strict", "--quiet", "--site-dir", site],
            "the book builds with mkdocs build --strict",
            "the book does not build: fix the warnings below (mkdocs build --strict)",
        )
        if not built.ok:
            return built
        dead = dead_anchors(Path(site))
    if dead:
        return _fail("links within a page lead nowhere: rename the heading or the link", dead)
    return CheckOutcome(
        True, "the book builds with mkdocs build --strict; every in-page link has its anchor"
    )


_ANCHOR_ID = re.compile(r'\sid="([^"]+)"')
_ANCHOR_LINK = re.compile(r'\shref="#([^"]+)"')


def dead_anchors(site: Path) -> list[str]:
    """``page: #anchor`` for every ``href="#anchor"`` of a built page that names no element.

    mkdocs checks links in the Markdown; a table of contents a plugin writes (a notebook's,
    whose headings lose their code spans) is only seen in the built page.
    """
    dead: list[str] = []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        ids = {html.unescape(i) for i in _ANCHOR_ID.findall(text)}
        for link in _ANCHOR_LINK.findall(text):
            anchor = html.unescape(link)
            if anchor not in ids and not anchor.startswith("__"):
                dead.append(f"{page.relative_to(site).as_posix()}: #{anchor}")
    return dead


NBVAL = ("-p", "nbval", "--nbval", "--nbval-current-env")
"""nbval is not loaded by default (see pyproject.toml); these flags load it and use it."""


def check_notebooks(project: Project) -> CheckOutcome:
    """Every notebook under ``book/notebooks`` passes nbval against the solution."""
    notebooks = sorted((project.book / "notebooks").glob("*.ipynb"))
    if not notebooks:
        return CheckOutcome(True, "no notebooks to validate")
    relative = [str(n.relative_to(project.root)) for n in notebooks]
    outcome = _tool(
        project,
        "pytest",
        ["-q", "-p", "no:cacheprovider", *NBVAL, *relative],
        f"{len(notebooks)} notebook(s) reproduce their stored outputs (nbval)",
        "a notebook's stored outputs no longer match: re-run it against the solution",
    )
    return outcome


def check_ruff(project: Project) -> CheckOutcome:
    """``ruff check`` is clean."""
    return _tool(
        project,
        "ruff",
        ["check", "--quiet", "--output-format", "concise", "."],
        "ruff is clean",
        "ruff finds problems",
    )


def check_mypy(project: Project) -> CheckOutcome:
    """``mypy`` (strict) is clean on solution, starter, clawbook and bench."""
    return _tool(
        project,
        "mypy",
        [],
        "mypy --strict is clean on solution/, starter/, clawbook/ and bench/",
        "mypy finds type errors",
    )


# ---------------------------------------------------------------- 9. the solution


def run_solution_suite(project: Project) -> int:
    """Run every test against the solution with pytest's own output; return its exit code."""
    env = {**os.environ, **project.env(), "CLAW_IMPL": "solution"}
    env.pop("CLAW_IMPL_PATH", None)
    return subprocess.run(
        pytest_command("-q", "--tooling"),
        cwd=project.root,
        env=env,
        check=False,
    ).returncode


# ---------------------------------------------------------------- driver

Check = Callable[[Project], CheckOutcome]

CHECKS: list[tuple[str, Check, bool]] = [
    ("starter in sync", check_starter_in_sync, False),
    ("chapter data", check_chapter_data, False),
    ("untouched starter", check_untouched_starter, False),
    ("progression", check_progression, True),
    ("book test commands", check_book_commands, False),
    ("test demands", check_test_demands, False),
    ("page rules", check_page_rules, False),
    ("quizzes", check_quizzes, False),
    ("book scripts", check_book_scripts, False),
    ("book builds", check_book_builds, True),
    ("notebooks", check_notebooks, True),
    ("ruff", check_ruff, False),
    ("mypy", check_mypy, False),
]
"""(name, check, slow): in the order they run. ``--fast`` skips the slow ones."""


def verify(console: Console, *, fast: bool = False, project: Project | None = None) -> int:
    """Run every check, then the whole suite against the solution. Returns the exit code."""
    project = project or Project(ROOT)
    failed: list[tuple[str, CheckOutcome]] = []
    began = time.perf_counter()
    console.print("[bold]clawbook verify[/]: proving the course is sound\n")
    for name, check, slow in CHECKS:
        if slow and fast:
            console.print(f"[dim]- {name}: skipped (--fast)[/]")
            continue
        started = time.perf_counter()
        with console.status(f"{name} ..."):
            try:
                outcome = check(project)
            except (stubgen.MarkerError, CurriculumError) as error:
                outcome = _fail(str(error), [])
        seconds = time.perf_counter() - started
        mark = "[green]✓[/]" if outcome.ok else "[red]✗[/]"
        console.print(f"{mark} [bold]{name}[/]: {escape(outcome.summary)} [dim]({seconds:.1f}s)[/]")
        for line in outcome.details:
            console.print(f"    [red]{escape(line)}[/]")
        for line in outcome.notes if outcome.ok else ():
            console.print(f"    [dim]{escape(line)}[/]")
        if not outcome.ok:
            failed.append((name, outcome))
    console.print("\n[bold]solution[/]: every test must pass against the reference agent\n")
    started = time.perf_counter()
    code = run_solution_suite(project)
    finished = time.perf_counter()
    mark = "[green]✓[/]" if code == 0 else "[red]✗[/]"
    seconds = finished - started
    console.print(f"{mark} [bold]solution[/]: pytest exit status {code} [dim]({seconds:.1f}s)[/]")
    console.print(f"[bold]verify took {finished - began:.1f}s[/] in all")
    failures = [name for name, _ in failed] + (["solution"] if code != 0 else [])
    if failures:
        # Repeated at the end: a CI log is often read from its tail.
        for name, outcome in failed:
            console.print(f"\n[red]✗[/] [bold]{name}[/]: {escape(outcome.summary)}")
            for line in outcome.details:
                console.print(f"    [red]{escape(line)}[/]")
        console.print(f"\n[bold red]verify failed:[/] {', '.join(failures)}")
        return 1
    return 0
