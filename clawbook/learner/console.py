"""What every learner command shares.

The console, the exit codes, running the tests with a live status line, and how a progress bar,
a problem and a code line are printed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from clawbook.course.chapters import Chapter, Curriculum, load
from clawbook.harness.report import Location, Outcome, Problem, Report
from clawbook.harness.runner import ROOT, Progress, Run, default_timeout, run_pytest

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

WORKERS_ENV = "CLAWBOOK_WORKERS"
"""How many pytest-xdist workers a long run uses; ``0`` runs every test in one process."""
FEW_FILES = 12
"""Up to this many test files run in one process: starting workers would cost more than it
saves (each imports pytest and the code, and collects the tests, before the first one runs)."""


MANY_CPUS = 2
"""From this many CPUs on, a long run is spread over workers by default."""
WORKERS_PER_CPU = 2
"""Workers started per CPU: the suite spends about a fifth of its time waiting for the
processes its tests start (claw, servers, ``sleep``), and a second worker per CPU runs its
tests meanwhile."""
MOST_WORKERS = 8
"""Each worker imports the code and collects every test: more than this costs more than it saves."""


def workers_for(files: int) -> int:
    """pytest-xdist workers for a run of ``files`` test files.

    ``CLAWBOOK_WORKERS`` if set. Else ``WORKERS_PER_CPU`` per CPU (at most ``MOST_WORKERS``) for
    a run of many files on a machine with ``MANY_CPUS`` or more, and none otherwise. On two
    CPUs, idle, ``status --fresh`` took 110 s in one process, 66 s with two workers and 57 s
    with four (``bench/parallel_suite.py``); on one CPU workers only add their start-up.
    """
    chosen = os.environ.get(WORKERS_ENV, "").strip()
    if chosen.isdigit():
        return int(chosen)
    cpus = os.cpu_count() or 1
    if files <= FEW_FILES or cpus < MANY_CPUS:
        return 0
    return min(MOST_WORKERS, WORKERS_PER_CPU * cpus)


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


def progress_bar(p: Progress, width: int = 12) -> str:
    """A chapter's bar (``████░░ 4/6``), or where it cannot import."""
    if p.state == "cannot import":
        error = next((r for r in p.results if r.outcome == Outcome.ERROR and r.where), None)
        where = error.where if error else None
        return f"[red]{escape(where_words(where))}[/]" if where else "[red]see above[/]"
    if not p.total:
        return ""
    if p.not_run == p.total:
        return "[dim]none of its tests ran[/]"
    filled = round(width * p.passed / p.total)
    colour = "green" if p.state == "done" else "red" if p.state == "failing" else "yellow"
    bar = f"[{colour}]{'█' * filled}[/][dim]{'░' * (width - filled)}[/] {p.passed}/{p.total}"
    return bar + (f" [red]{p.not_run} not run[/]" if p.not_run else "")


def where_words(where: Location) -> str:
    """``path (line N)``: a place in words."""
    return f"{where.path} (line {where.line})"


# ---------------------------------------------------------------- running, with progress


def run_tests(
    label: str,
    args: Sequence[str],
    implementation: str,
    timeout: float | None = None,
    workers: int = 0,
) -> Run:
    """Run pytest with a live status line; Ctrl-C stops the run (and everything it started).

    ``workers`` above 0 spreads the tests over that many pytest-xdist worker processes.
    """
    with console.status(f"{label} ...") as status:
        return run_pytest(
            args,
            implementation=implementation,
            timeout=timeout,
            workers=workers,
            extra_env={QUICK_EXAMPLES_ENV: "quick"},
            watch=lambda report, elapsed: _show_progress(status, label, report, elapsed),
        )


def run_all(
    curriculum: Curriculum, implementation: str, timeout: float | None, *, fresh: bool = False
) -> Run:
    """Every chapter's tests, re-running only the test files whose code changed (``cache``)."""
    from clawbook.learner import cache

    label = f"running the tests against {implementation}/"
    limit = timeout or default_timeout()
    run, reuse = cache.cached_run(
        curriculum,
        implementation,
        limit,
        lambda files: run_tests(label, files, implementation, timeout, workers_for(len(files))),
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


def print_problems(run: Run) -> None:
    """What stops everything else, said once and first: broken modules, a run that broke off."""
    for problem in run.problems:
        _print_problem(problem)
    if run.leftovers:
        console.print(f"[yellow]! {escape(leftovers_line(run.leftovers))}[/]")
    stop = run.stopped
    missing = len(set(run.collected or ()) - {r.nodeid for r in run.results})
    if stop is None:
        if run.cut_short and missing > 0:
            console.print(f"[red]✗ The test run stopped early:[/] {escape(run.cut_short)}")
            console.print(
                f"    [dim]{missing} test(s) did not run. Fix this first, then run again.[/]\n"
            )
        return
    if stop.reason == Outcome.ERROR:
        console.print(f"[red]✗ The tests could not start:[/] {escape(stop.detail)}")
        return
    console.print(f"[red]✗ The test run stopped early:[/] {escape(stop.detail)}")
    if stop.where is not None:
        console.print(f"    at {code_line(stop.where)}")
    if missing > 0:
        console.print(f"    [dim]{missing} test(s) did not run. Fix this first, then run again.[/]")
    console.print()


COMMANDS_SHOWN = 4
COMMAND_WIDTH = 60


def leftovers_line(commands: Sequence[str]) -> str:
    """One line: how many processes the tests left running (the run killed them), and which."""
    shown = [c if len(c) <= COMMAND_WIDTH else c[: COMMAND_WIDTH - 1] + "…" for c in commands]
    named = ", ".join(shown[:COMMANDS_SHOWN])
    if len(shown) > COMMANDS_SHOWN:
        named += f" and {len(shown) - COMMANDS_SHOWN} more"
    count, them = (
        ("1 process", "it") if len(commands) == 1 else (f"{len(commands)} processes", "them")
    )
    return f"The tests left {count} running; the run killed {them}: {named}"


def _print_problem(problem: Problem) -> None:
    where = problem.where
    console.print(
        f"[red]✗ cannot import {escape(where_words(where))}:[/] {escape(problem.message)}"
    )
    if where.source:
        console.print(f"    [dim]{where.line:>5} │[/] {escape(where.source)}")
        if problem.caret:
            console.print(f"    [dim]{'':>5} │[/] {' ' * (problem.caret - 1)}[red]^[/]")
    console.print("    [dim]Every test that imports this module stops here: fix it first.[/]\n")


def code_line(where: Location) -> str:
    """A place in bold, then the source line there, dimmed."""
    text = f"[bold]{escape(str(where))}[/]"
    if where.source:
        text += f"   [dim]{escape(where.source)}[/]"
    return text


# ---------------------------------------------------------------- chapter ids and usage errors


def chapter_named(chapter_id: str) -> Chapter:
    """The chapter with this id; an unknown id ends the command with a usage error."""
    try:
        return load().get(chapter_id)
    except KeyError as error:
        raise SystemExit(usage_error(str(error.args[0]))) from None


def usage_error(message: str) -> int:
    """Say what was wrong with the command line; the usage exit code."""
    console.print(f"[red]{escape(message)}[/]")
    return USAGE
