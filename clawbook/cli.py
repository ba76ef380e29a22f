"""``clawbook``: your progress through the book, one command away.

Exit codes: 0 when what you asked about is done (or the command succeeded), 1 when a test fails,
a run breaks or a check does not hold, 2 for a usage error, 3 when nothing fails but tests are
still todo. Ctrl-C (or SIGTERM) stops a run and everything it started.

The learner's tools are held to a strict rule: they never report success that did not happen,
they point at the learner's own file and line, they never hang silently, and they never delete a
learner's code.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from . import stubgen, stubs
from .chapters import Chapter, Curriculum, CurriculumError, load
from .report import Location, Problem, Report, TestResult
from .runner import (
    ROOT,
    Progress,
    Run,
    chapter_test_files,
    default_timeout,
    next_chapter,
    progress,
    run_pytest,
)

OK, FAILED, USAGE, TODO = 0, 1, 2, 3
INTERRUPTED = 130
QUICK_EXAMPLES_ENV = "CLAWBOOK_EXAMPLES"
"""Set to ``quick`` for the learner's runs: property tests try a tenth of their examples
(``tests/budget.py``); ``verify``, CI and a plain ``pytest`` try them all."""
EXIT_CODES = """exit codes (for scripts):
  0    done: every test asked about passes (or the command succeeded)
  1    a test fails, a run broke off, or a check does not hold
  2    usage error (an unknown chapter, a bad option, -k that selects nothing)
  3    nothing fails, but tests are still todo (a chapter is unfinished)
  130  interrupted (Ctrl-C)"""

console = Console(highlight=False, soft_wrap=True, emoji=False)
BACKUPS = ROOT / ".clawbook" / "backups"
MANIFEST = ROOT / "clawbook" / "generated-starter.json"
"""What ``clawbook stubs`` generated last, to tell a learner's edits from a stale starter."""
CATALOGUE = ROOT / "clawbook" / "starter-stubs.json"
"""Every region's hints and the pristine starter files: what hint and reset read, so that no
learner command needs ``solution/``."""

STATE_STYLE = {
    "done": "[green]✓ done[/]",
    "in progress": "[yellow]◐ in progress[/]",
    "todo": "[dim]○ todo[/]",
    "failing": "[red]✗ failing[/]",
    "cannot import": "[red]✗ cannot import[/]",
    "not run": "[red]? not run[/]",
    "reading": "[blue]– reading[/]",
    "coming": "[dim]… coming soon[/]",
}


def _bar(p: Progress, width: int = 12) -> str:
    if p.state == "cannot import":
        error = next((r for r in p.results if r.outcome == "error" and r.where), None)
        where = error.where if error else None
        return f"[red]{escape(_where_words(where))}[/]" if where else "[red]see above[/]"
    if not p.total:
        return ""
    if p.not_run == p.total:
        return "[dim]none of its tests ran[/]"
    filled = round(width * p.passed / p.total)
    colour = "green" if p.state == "done" else "red" if p.state == "failing" else "yellow"
    bar = f"[{colour}]{'█' * filled}[/][dim]{'░' * (width - filled)}[/] {p.passed}/{p.total}"
    return bar + (f" [red]{p.not_run} not run[/]" if p.not_run else "")


def _where_words(where: Location) -> str:
    return f"{where.path} (line {where.line})"


# ---------------------------------------------------------------- running, with progress


def _run(label: str, args: Sequence[str], implementation: str, timeout: float | None = None) -> Run:
    """Run pytest with a live status line; Ctrl-C stops the run (and everything it started)."""
    with console.status(f"{label} ...") as status:
        return run_pytest(
            args,
            implementation=implementation,
            timeout=timeout,
            extra_env={QUICK_EXAMPLES_ENV: "quick"},
            watch=lambda report, elapsed: _show_progress(status, label, report, elapsed),
        )


def _cached_run(
    curriculum: Curriculum, implementation: str, timeout: float | None, *, fresh: bool = False
) -> Run:
    """Every chapter's tests, re-running only the test files whose code changed (``cache``)."""
    from . import cache

    label = f"running the tests against {implementation}/"
    limit = timeout or default_timeout()
    run, reuse = cache.cached_run(
        curriculum,
        implementation,
        limit,
        lambda files: _run(label, files, implementation, timeout),
        fresh=fresh,
    )
    if reuse.reused and not reuse.rerun_files:
        console.print(
            f"[dim]Nothing changed since the last run: its {reuse.reused} results are shown "
            "(--fresh runs every test again).[/]"
        )
    elif reuse.reused:
        console.print(
            f"[dim]Ran again the {len(reuse.rerun_files)} test file(s) whose code changed; "
            f"{reuse.reused} results of the others are from the last run (--fresh runs all).[/]"
        )
    return run


def _show_progress(status: Status, label: str, report: Report, elapsed: float) -> None:
    done = len(report.results)
    total = f"/{len(report.collected)}" if report.collected is not None else ""
    running = report.running.split("::")[-1] if report.running else ""
    status.update(f"{escape(label)} · {done}{total} · {escape(running)} [dim]({elapsed:.0f} s)[/]")


def _print_problems(run: Run) -> None:
    """What stops everything else, said once and first: broken modules, a run that broke off."""
    for problem in run.problems:
        _print_problem(problem)
    stop = run.stopped
    if stop is None:
        return
    if stop.reason == "error":
        console.print(f"[red]✗ The tests could not start:[/] {escape(stop.detail)}")
        return
    console.print(f"[red]✗ The test run stopped early:[/] {escape(stop.detail)}")
    if stop.where is not None:
        console.print(f"    at {_code_line(stop.where)}")
    missing = len(run.collected or ()) - len(run.results)
    if missing > 0:
        console.print(f"    [dim]{missing} test(s) did not run. Fix this first, then run again.[/]")
    console.print()


def _print_problem(problem: Problem) -> None:
    where = problem.where
    console.print(
        f"[red]✗ cannot import {escape(_where_words(where))}:[/] {escape(problem.message)}"
    )
    if where.source:
        console.print(f"    [dim]{where.line:>5} │[/] {escape(where.source)}")
        if problem.caret:
            console.print(f"    [dim]{'':>5} │[/] {' ' * (problem.caret - 1)}[red]^[/]")
    console.print("    [dim]Every test that imports this module stops here: fix it first.[/]\n")


def _code_line(where: Location) -> str:
    text = f"[bold]{escape(str(where))}[/]"
    if where.source:
        text += f"   [dim]{escape(where.source)}[/]"
    return text


# ---------------------------------------------------------------- status


def cmd_status(args: argparse.Namespace) -> int:
    """A table of every chapter and the next one to work on."""
    curriculum = load()
    run = _cached_run(curriculum, args.impl, args.timeout, fresh=args.fresh)
    report = progress(curriculum, run)
    _print_problems(run)
    title = f"Clawbook · your progress ({args.impl}/)"
    if not Path.cwd().resolve().is_relative_to(ROOT):
        title += f" in {ROOT}"
    table = Table(title=escape(title), title_style="bold")
    table.add_column("", justify="right", style="dim")
    table.add_column("chapter")
    table.add_column("state")
    table.add_column("tests")
    for p in report:
        if p.state == "coming" and not args.all:
            continue
        title = escape(p.chapter.title)
        table.add_row(
            p.chapter.id,
            title if p.chapter.written else f"[dim]{title}[/]",
            STATE_STYLE[p.state],
            _bar(p),
        )
    console.print(table)
    if not args.all:
        coming = sum(1 for p in report if p.state == "coming")
        console.print(
            f"[dim]{coming} more chapters are coming; `clawbook status --all` lists them.[/]"
        )
    upcoming = next_chapter(report)
    if upcoming is None and run.complete and not run.problems:
        console.print(
            "\n[bold green]🎉 Every written chapter passes. You built a working agent![/] "
            "Try it, read the next chapter as it lands, or help a friend get here."
        )
        return OK
    if upcoming is not None:
        chapter = upcoming.chapter
        console.print(f"\n[bold]Next:[/] {chapter.id} · {escape(chapter.title)}")
        if chapter.files:
            console.print(f"  edit   {', '.join('starter/' + f for f in chapter.files)}")
        console.print(f"  read   book/{chapter.page}")
        console.print(f"  run    clawbook check {chapter.id}   (or clawbook watch)")
    broken = not run.complete or run.problems
    if broken or any(p.state in ("failing", "cannot import", "not run") for p in report):
        return FAILED
    return TODO


# ---------------------------------------------------------------- check


def check_chapter(
    chapter: Chapter,
    implementation: str = "starter",
    timeout: float | None = None,
    *,
    select: str | None = None,
    verbose: bool = False,
) -> tuple[int, Progress]:
    """Run one chapter's tests and print what a learner needs: failures briefly, one hint.

    ``select`` is a pytest ``-k`` expression that runs only some of the tests; ``verbose``
    prints each failure's whole message instead of its first lines.
    """
    files = chapter_test_files(chapter)
    if not files:
        console.print(f"[yellow]{chapter.id} has no tests yet.[/]")
        return OK, Progress(chapter)
    label = f"running {chapter.id}'s tests against {implementation}/"
    args = [*files, "-k", select] if select else list(files)
    if verbose:
        args.append("-vv")  # pytest's whole diffs, as its "Use -v to get more diff" promises
    run = _run(label, args, implementation, timeout)
    p = Progress(chapter, run.for_chapter(chapter), run.expected_for(chapter))
    if select and run.complete and not p.results and not run.problems:
        console.print(
            f"[yellow]No test of {chapter.id} matches -k {escape(select)!r}.[/] "
            f"`clawbook check {chapter.id}` lists the chapter's tests by name."
        )
        return USAGE, p
    _print_problems(run)
    _print_results(p, run, implementation, select=select, verbose=verbose)
    return _exit_code(p, run), p


def _print_results(
    p: Progress, run: Run, implementation: str, *, select: str | None = None, verbose: bool = False
) -> None:
    chapter = p.chapter
    subset = f"  [dim](only the tests -k {escape(select)!r} selects)[/]" if select else ""
    state = STATE_STYLE[p.state]
    if select and p.state == "done":
        state = "[green]✓ these pass[/]"
    console.print(f"[bold]{chapter.id} · {escape(chapter.title)}[/]  {state}  {_bar(p)}{subset}\n")
    stub_names = {
        (f"{implementation}/{stub.path}", stub.line): stub.function
        for stub in stubs.remaining_stubs(ROOT / implementation)
    }
    for result in p.results:
        name = escape(result.name)
        if result.outcome == "passed":
            console.print(f"  [green]✓[/] {name}")
        elif result.outcome == "todo":
            console.print(f"  [dim]○ {name}{_waiting_for(result, stub_names)}[/]")
        elif result.outcome == "skipped":
            console.print(f"  [dim]- {name} (skipped)[/]")
        elif result.outcome == "error":
            message = escape(result.message or "")
            console.print(f"  [red]✗ {escape(result.file)}[/]  [red]{message}[/]")
        else:
            console.print(f"  [red]✗ {name}[/]")
            lines = (result.message or "").splitlines()
            for line in lines if verbose else lines[:8]:
                console.print(f"      [red]{escape(line)}[/]")
            if len(lines) > 8 and not verbose:
                more = len(lines) - 8
                console.print(f"      [dim]... {more} more line(s): add -v to see them[/]")
            if result.where is not None:
                console.print(f"      at   {_code_line(result.where)}")
            if result.called_from is not None:
                for comment in _comments_above(result.called_from):
                    console.print(f"      [dim]│ {escape(comment)}[/]")
                console.print(f"      from {_code_line(result.called_from)}")
            if result.test_line is not None:
                console.print(f"      test {_code_line(result.test_line)}")
    problem = p.first_problem
    if problem is not None and problem.outcome in ("failed", "hung"):
        console.print(f"\n[dim]`pytest {escape(problem.nodeid)}` shows the whole traceback.[/]")
    if not p.results and run.stopped is None and run.returncode not in (0, 5):
        console.print(escape(run.output[-3000:]))
    if problem is None and p.first_todo is not None:
        _print_next_stub(chapter, p, implementation)
    if p.state == "done" and select:
        console.print(
            f"\n[green]The selected tests pass.[/] `clawbook check {chapter.id}` runs them all."
        )
    elif p.state == "done":
        console.print(f"\n[bold green]✓ {chapter.id} is done.[/] On to the next chapter!")


def _comments_above(where: Location, limit: int = 6) -> list[str]:
    """The comment lines right above ``where`` in its file: in a test, often the rule."""
    try:
        lines = (ROOT / where.path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found: list[str] = []
    index = where.line - 2
    while index >= 0 and lines[index].strip().startswith("#") and len(found) < limit:
        found.insert(0, lines[index].strip())
        index -= 1
    return found


def _waiting_for(result: TestResult, stub_names: dict[tuple[str, int], str]) -> str:
    """`` · waits for Permissions.decide (ch13)``: the stub a todo test reached, if known."""
    where = result.where
    if where is None:
        return ""
    function = stub_names.get((where.path, where.line)) or where.function
    chapter = f"{result.todo_chapter}, " if result.todo_chapter else ""
    return f" · waits for {escape(function)} ({chapter}{escape(str(where))})"


def _print_next_stub(chapter: Chapter, p: Progress, implementation: str) -> None:
    """What to write next: an earlier chapter the tests wait for, or this chapter's first stub.

    Stubs are taken in the order the book builds them (``clawbook hint``'s order), not in the
    order the tests happen to reach them.
    """
    waiting = sorted({r.todo_chapter for r in p.results if r.todo_chapter} - {chapter.id})
    own = any(r.todo_chapter == chapter.id for r in p.results)
    if waiting and not own:
        console.print(
            f"\n[yellow]These tests wait for stubs of {', '.join(waiting)}:[/] finish "
            f"{waiting[0]} first (clawbook check {waiting[0]})."
        )
        return
    remaining = stubs.remaining_stubs(ROOT / implementation, chapter)
    if remaining:
        stub = remaining[0]
        console.print(
            f"\n[yellow]Next stub:[/] [bold]{implementation}/{stub.path}:{stub.line}[/] "
            f"{escape(stub.function)}\n  hint: {escape(stub.hint)}\n"
            f"  [dim](clawbook hint {chapter.id} lists them all; --more gives a second hint)[/]"
        )
    if waiting:
        console.print(
            f"[dim]Some tests also wait for stubs of {', '.join(waiting)} "
            f"(clawbook check {waiting[0]}).[/]"
        )


def _exit_code(p: Progress, run: Run) -> int:
    if p.state in ("failing", "cannot import", "not run") or not run.complete:
        return FAILED
    if p.state in ("todo", "in progress"):
        return TODO
    return OK


def cmd_check(args: argparse.Namespace) -> int:
    """Run one chapter's tests."""
    chapter = _chapter(args.chapter)
    code, _ = check_chapter(
        chapter, args.impl, args.timeout, select=args.select, verbose=args.verbose
    )
    return code


# ---------------------------------------------------------------- hint


def cmd_hint(args: argparse.Namespace) -> int:
    """Where the chapter's remaining stubs are, and the hint of each (and a second, if asked)."""
    chapter = _chapter(args.chapter)
    console.print(f"[bold]{chapter.id} · {escape(chapter.title)}[/]")
    if chapter.page:
        console.print(f"[dim]read: book/{chapter.page}[/]")
    if not chapter.has_stubs:
        console.print("This is a reading chapter: there is no code to write, only code to read.")
        return OK
    remaining = stubs.remaining_stubs(ROOT / "starter", chapter)
    if not remaining:
        console.print(
            "No stubs left in this chapter. If a test still fails, "
            f"`clawbook check {chapter.id}` shows which and why."
        )
        return OK
    catalogue = None
    if args.more:
        try:
            catalogue = stubs.read_catalogue(CATALOGUE)
        except stubs.ResetError as error:
            console.print(f"[yellow]No second hints:[/] {escape(str(error))}")
    for stub in remaining:
        console.print(f"\n  [bold]starter/{stub.path}:{stub.line}[/]  {escape(stub.function)}")
        console.print(f"    [yellow]hint:[/] {escape(stub.hint)}")
        if catalogue is not None:
            second = catalogue.second_hint(stub.path, stub.hint, stub.function)
            text = escape(second) if second else "[dim](this stub has no second hint)[/]"
            console.print(f"    [yellow]more:[/] {text}")
    console.print(
        f"\n{len(remaining)} stub(s) to go. Replace each `raise Todo(...)` with real code."
    )
    if not args.more:
        console.print(
            f"[dim]Stuck? `clawbook hint {chapter.id} --more` gives a second, more specific "
            "hint for each.[/]"
        )
    return TODO


# ---------------------------------------------------------------- reset and restore


def _confirm(question: str, yes: bool, command: str) -> bool | None:
    """True to go on, False if the learner said no, None when nobody can be asked."""
    if yes:
        return True
    if not sys.stdin.isatty():
        console.print(
            f"[red]Nothing changed:[/] there is no terminal to ask you. Run `{command} --yes` "
            "to go ahead without a question."
        )
        return None
    answer = console.input(f"{question} [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        console.print("Nothing changed.")
        return False
    return True


def cmd_reset(args: argparse.Namespace) -> int:
    """Put a chapter's stubs back, after asking; the old files go to a backup folder."""
    chapter = _chapter(args.chapter)
    try:
        plan = stubs.plan_reset(chapter, stubs.read_catalogue(CATALOGUE), ROOT / "starter")
    except stubs.ResetError as error:
        console.print(f"[yellow]{escape(str(error))}[/]")
        return USAGE
    console.print(f"Reset {chapter.id} · {escape(chapter.title)}:")
    for path, names in plan.functions.items():
        reason = plan.whole_files.get(path)
        if reason:
            console.print(
                f"  starter/{path} {escape(reason)}, so [bold]the whole file[/] goes back to "
                "its starter version (other chapters' code in it too)"
            )
        else:
            console.print(f"  starter/{path}: {', '.join(names)} go back to their stubs")
    answer = _confirm(
        "Your current files go to .clawbook/backups/ first. Reset?",
        args.yes,
        f"clawbook reset {chapter.id}",
    )
    if not answer:
        return OK if answer is False else USAGE
    folder = stubs.apply_reset(plan, ROOT / "starter", BACKUPS)
    console.print(
        f"[green]Done.[/] Your previous code is in {folder.relative_to(ROOT)}/; "
        f"`clawbook restore {chapter.id}` puts it back."
    )
    return OK


def cmd_restore(args: argparse.Namespace) -> int:
    """Put a backup back into starter/, backing up the current files first."""
    chapter = _chapter(args.chapter)
    backups = stubs.list_backups(BACKUPS, chapter.id)
    if not backups:
        console.print(f"There is no backup of {chapter.id} in .clawbook/backups/.")
        return USAGE
    if args.backup:
        chosen = next((b for b in backups if b.name == Path(args.backup).name), None)
        if chosen is None:
            console.print(f"[red]No backup named {escape(args.backup)!r}.[/] The backups are:")
            for backup in backups:
                console.print(f"  {backup.name}")
            return USAGE
    else:
        chosen = next((b for b in backups if "-before-restore" not in b.name), backups[0])
    console.print(f"Restore {chosen.name}: these files go back to their backed-up version:")
    for relative in chosen.files:
        console.print(f"  starter/{relative}")
    answer = _confirm(
        "Your current versions go to .clawbook/backups/ first. Restore?",
        args.yes,
        f"clawbook restore {chapter.id} {chosen.name}",
    )
    if not answer:
        return OK if answer is False else USAGE
    before = stubs.restore(chosen, ROOT / "starter", BACKUPS, chapter.id)
    console.print(
        f"[green]Restored.[/] The code you had just now is in {before.relative_to(ROOT)}/ "
        f"(`clawbook restore {chapter.id} {before.name}` undoes this)."
    )
    return OK


# ---------------------------------------------------------------- watch


def cmd_watch(args: argparse.Namespace) -> int:
    """Re-run a chapter's tests on every save under starter/; move on when it passes."""
    from watchfiles import watch

    curriculum = load()
    code = TODO
    try:
        chapter: Chapter | None
        if args.chapter:
            chapter = _chapter(args.chapter)
            console.clear()
            code, p = check_chapter(chapter, args.impl, args.timeout)
        else:
            console.clear()
            chapter, code, p = _watch_next(curriculum, args.impl, args.timeout)
            if chapter is None:
                return code
        _watching(args.impl)
        for _changes in watch(ROOT / args.impl, watch_filter=lambda _c, path: path.endswith(".py")):
            console.clear()
            if p.state == "done":
                chapter, code, p = _watch_next(curriculum, args.impl, args.timeout)
                if chapter is None:
                    return code
            else:
                assert chapter is not None
                code, p = check_chapter(chapter, args.impl, args.timeout)
            _watching(args.impl)
    except KeyboardInterrupt:
        console.print("\n[dim]Stopped watching.[/]")
    return code


def _watch_next(
    curriculum: Curriculum, implementation: str, timeout: float | None
) -> tuple[Chapter | None, int, Progress]:
    """One run of the whole suite: show the first unfinished chapter's results from it."""
    run = _cached_run(curriculum, implementation, timeout)
    _print_problems(run)
    upcoming = next_chapter(progress(curriculum, run))
    if upcoming is None:
        if run.complete and not run.problems:
            console.print("[bold green]Every written chapter passes. 🎉[/]")
            return None, OK, Progress(curriculum.chapters[0])
        return None, FAILED, Progress(curriculum.chapters[0])
    _print_results(upcoming, run, implementation)
    return upcoming.chapter, _exit_code(upcoming, run), upcoming


def _watching(implementation: str) -> None:
    console.print(f"\n[dim]watching {implementation}/ for changes · Ctrl-C to stop[/]")


# ---------------------------------------------------------------- stubs (for authors)


def cmd_stubs(args: argparse.Namespace) -> int:
    """Generate starter/ from solution/, or with --check report whether it is stale."""
    files = stubgen.render_tree(ROOT / "solution")
    starter = ROOT / "starter"
    if args.check:
        problems = stubgen.differences(files, starter)
        recorded = stubs.read_manifest(MANIFEST)
        if recorded != stubs.manifest(files):
            problems.append(f"{MANIFEST.relative_to(ROOT)} does not match the generated files")
        catalogue = stubs.catalogue_json(stubs.catalogue_of(ROOT / "solution", files))
        if not CATALOGUE.exists() or CATALOGUE.read_text(encoding="utf-8") != catalogue:
            problems.append(f"{CATALOGUE.relative_to(ROOT)} does not match the generated files")
        if problems:
            for problem in problems:
                console.print(f"  [red]{escape(problem)}[/]")
            console.print(
                "[red]starter/ is not what solution/ generates.[/] Authors: run `clawbook stubs` "
                "and commit the result. (Learners never need to: your code lives in starter/.)"
            )
            return FAILED
        console.print(f"[green]starter/ is in sync with solution/[/] ({len(files)} files).")
        return OK
    edited = stubs.edited_files(starter, stubs.read_manifest(MANIFEST))
    if edited and not args.force:
        console.print(
            f"[red]Not writing starter/:[/] {len(edited)} file(s) differ from what was generated "
            f"({escape(', '.join(edited[:5]))}{', ...' if len(edited) > 5 else ''}), so they may "
            "hold your own code. Learners never need this command: `clawbook reset <chapter>` "
            "puts one chapter's stubs back. Authors: `clawbook stubs --force` backs up starter/ "
            "and regenerates it."
        )
        return FAILED
    if edited:
        folder = stubs.back_up(starter, edited, BACKUPS, "stubs")
        console.print(f"Backed up {len(edited)} edited file(s) to {folder.relative_to(ROOT)}/")
    stubgen.write_tree(files, starter)
    stubs.write_manifest(MANIFEST, files)
    stubs.write_catalogue(CATALOGUE, ROOT / "solution", files)
    console.print(f"Wrote starter/ ({len(files)} files) from solution/.")
    return OK


# ---------------------------------------------------------------- verify (for instructors)


def cmd_verify(args: argparse.Namespace) -> int:
    """Prove the course is sound; see ``clawbook.verify``."""
    from .verify import verify

    return verify(console, fast=args.fast)


# ---------------------------------------------------------------- grade (for instructors)


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade a class's submissions with the instructor's tests; see ``clawbook.grade``."""
    import threading

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from . import grade

    curriculum = load()
    try:
        chapters = grade.select_chapters(curriculum, args.chapters)
    except ValueError as error:
        return _usage_error(str(error))
    limits = grade.Limits(
        wall_time=args.wall_time,
        test_timeout=args.timeout or default_timeout(),
        memory=int(args.memory * 1024**3),
    )
    course = grade.Course(curriculum, chapters, limits=limits)
    work = grade.submissions(Path(p) for p in args.submissions)
    isolation = course.isolation
    if isolation.program is None:  # the first line, where no one can miss it
        console.print(f"[yellow]Warning:[/] {escape(isolation.summary())}.", soft_wrap=True)
    console.print(
        f"Grading {len(work)} submission(s) on {', '.join(c.id for c in chapters)} "
        f"with {args.workers} worker(s)"
        + (", each in a bubblewrap sandbox." if isolation.program else "."),
        soft_wrap=True,
    )
    if args.workers < 1:
        return _usage_error("--workers must be at least 1")
    try:
        with console.status("running your tests against solution/ (the reference) ..."):
            reference = course.prepare()
    except RuntimeError as error:
        console.print(f"[red]✗ Nothing was graded:[/] {escape(str(error))}")
        return FAILED
    wrong = [r for r in reference.results if r.is_problem]
    if wrong:
        console.print(
            f"[yellow]Warning:[/] {len(wrong)} test(s) do not pass against solution/ either "
            f"(first: {escape(wrong[0].nodeid)}); no learner can pass them."
        )
    done: list[grade.Grade] = []
    cancel = threading.Event()
    complete = True
    columns = (
        "{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        "{task.fields[last]}",
    )  # fmt: skip
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("grading", total=len(work), last="")

        def finished(row: grade.Grade) -> None:
            done.append(row)
            bar.update(
                task,
                advance=1,
                last=f"{escape(row.submission)}: {row.passed}/{row.total} {row.status}",
            )

        try:
            rows = grade.grade_class(course, work, args.workers, finished, cancel)
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or SIGTERM (see _terminate)
            complete = False
            names = [s.name for s in work]
            rows = sorted(done, key=lambda r: names.index(r.submission))
    written = grade.write_all(args.out, course, rows, complete=complete, gradescope=args.gradescope)
    if not complete:
        console.print(
            f"[yellow]Interrupted:[/] {len(rows)} of {len(work)} submission(s) finished and "
            "are written."
        )
    _print_grades(rows)
    for path in written:
        console.print(f"  wrote {escape(str(path))}")
    if not complete:
        return INTERRUPTED
    return OK if all(r.status == "ok" for r in rows) else FAILED


def _print_grades(rows: Sequence[object]) -> None:
    from .grade import Grade

    table = Table(title="gradebook", title_style="bold")
    for column in ("submission", "passed", "todo", "failing", "status", "seconds"):
        table.add_column(column, justify="left" if column == "submission" else "right")
    for row in rows:
        assert isinstance(row, Grade)
        status = f"[red]{row.status}[/]"
        if row.status == "ok":
            status = "[green]ok[/]" if row.started else "[dim]not started[/]"
        table.add_row(
            escape(row.submission), f"{row.passed}/{row.total}", str(row.todo),
            str(row.failing), status, f"{row.seconds:.1f}",
        )  # fmt: skip
    console.print(table)
    for row in rows:
        assert isinstance(row, Grade)
        if row.detail:
            console.print(f"  [bold]{escape(row.submission)}[/]: {escape(row.detail)}")


# ---------------------------------------------------------------- wiring


def _chapter(chapter_id: str) -> Chapter:
    try:
        return load().get(chapter_id)
    except KeyError as error:
        raise SystemExit(_usage_error(str(error.args[0]))) from None


def _usage_error(message: str) -> int:
    console.print(f"[red]{escape(message)}[/]")
    return USAGE


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="clawbook",
        description="Your progress through Clawbook, and the instructor's checks.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: object, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help,
            description=help,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(handler=handler)
        return sub

    def run_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--impl",
            choices=("starter", "solution"),
            default="starter",
            help="the package to test (default: starter, your code)",
        )
        sub.add_argument(
            "--timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help=f"stop a test that runs longer than this as a likely endless loop "
            f"(default {default_timeout():g}; or set CLAWBOOK_TIMEOUT)",
        )

    status = add("status", cmd_status, "show every chapter's progress and what to do next")
    status.add_argument("--all", action="store_true", help="also list chapters not written yet")
    status.add_argument(
        "--fresh",
        action="store_true",
        help="run every test again, even those whose code did not change since the last run",
    )
    run_options(status)
    check = add("check", cmd_check, "run one chapter's tests")
    check.add_argument("chapter", help="a chapter id, such as ch01")
    check.add_argument(
        "-k", dest="select", default=None, metavar="EXPR",
        help="only the tests whose names match EXPR, as in pytest (-k decide_one)",
    )  # fmt: skip
    check.add_argument(
        "-v", "--verbose", action="store_true", help="show each failure's whole message"
    )
    run_options(check)
    hint = add("hint", cmd_hint, "show where a chapter's stubs are, and their hints")
    hint.add_argument("chapter")
    hint.add_argument("--more", action="store_true", help="also show a second, more specific hint")
    watch = add("watch", cmd_watch, "re-run a chapter's tests whenever you save a file")
    watch.add_argument("chapter", nargs="?", help="default: the next unfinished chapter")
    run_options(watch)
    reset = add("reset", cmd_reset, "put a chapter's stubs back (your code is backed up first)")
    reset.add_argument("chapter")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    restore = add("restore", cmd_restore, "put back the code a reset (or restore) backed up")
    restore.add_argument("chapter")
    restore.add_argument("backup", nargs="?", help="a backup's name (default: the newest)")
    restore.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    stubs_cmd = add("stubs", cmd_stubs, "(authors) generate starter/ from solution/")
    stubs_cmd.add_argument("--check", action="store_true", help="only report whether it is stale")
    stubs_cmd.add_argument(
        "--force", action="store_true", help="overwrite edited starter files (backed up first)"
    )
    verify = add("verify", cmd_verify, "(instructors) prove the course is sound")
    verify.add_argument(
        "--fast", action="store_true", help="skip the slow checks (progression, book, notebooks)"
    )
    grade = add("grade", cmd_grade, "(instructors) grade a class's submissions with your tests")
    grade.add_argument(
        "submissions", nargs="+", metavar="SUBMISSION",
        help="a folder holding a learner's starter/ (a whole clone is fine), or a .zip / .tar.gz",
    )  # fmt: skip
    grade.add_argument("--out", type=Path, required=True, help="the folder to write results to")
    grade.add_argument(
        "--chapters", default=None, metavar="IDS",
        help="chapters to grade: ids and ranges, such as ch01..ch05b or ch01,ch03 "
        "(default: every written chapter with tests)",
    )  # fmt: skip
    grade.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, metavar="N",
        help="submissions graded at once (default: the number of CPUs)",
    )  # fmt: skip
    grade.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help="per-test limit before a test counts as an endless loop "
        f"(default {default_timeout():g})",
    )  # fmt: skip
    grade.add_argument(
        "--wall-time", type=float, default=300.0, metavar="SECONDS",
        help="limit for a whole submission (default 300)",
    )  # fmt: skip
    grade.add_argument(
        "--memory", type=float, default=2.0, metavar="GIB",
        help="address space each submission's tests may use, in GiB (default 2)",
    )  # fmt: skip
    grade.add_argument(
        "--gradescope", action="store_true",
        help="also write Gradescope's results.json for each submission (OUT/gradescope/NAME/)",
    )  # fmt: skip
    return parser


def find_repository(start: Path) -> Path | None:
    """The Clawbook checkout that contains ``start``, if any."""
    for folder in (start, *start.parents):
        if (folder / "clawbook" / "chapters.toml").is_file() and (folder / "starter").is_dir():
            return folder
    return None


REEXEC_ENV = "CLAWBOOK_REEXEC"


def _use_this_repository(argv: Sequence[str]) -> int | None:
    """Work on the checkout you are in, even if ``clawbook`` was installed from another one.

    Runs this checkout's own ``clawbook`` in place of this process; returns an exit code only if
    that is impossible.
    """
    here = find_repository(Path.cwd().resolve())
    if here is None or here == ROOT:
        return None
    if os.environ.get(REEXEC_ENV) == str(here):
        console.print(
            f"[red]clawbook cannot load the checkout you are in ({escape(str(here))}).[/] "
            f"It is installed from {escape(str(ROOT))}; "
            f"run `pip install -e .` in {escape(str(here))}."
        )
        return USAGE
    env = {**os.environ, REEXEC_ENV: str(here)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(here), env.get("PYTHONPATH")]))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "clawbook", *argv], env)
    return None  # not reached: execve does not return


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``clawbook`` command."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # a real command line, not a call from a test
        refused = _use_this_repository(arguments)
        if refused is not None:
            return refused
        signal.signal(signal.SIGTERM, _terminate)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command is None:
        args = parser.parse_args(["status"])
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        console.print("\n[dim]Stopped.[/]")
        return INTERRUPTED
    except (CurriculumError, stubgen.MarkerError) as error:
        console.print(f"[red]✗ {escape(str(error))}[/]")
        return USAGE if isinstance(error, CurriculumError) else FAILED
    return code


if __name__ == "__main__":
    sys.exit(main())
