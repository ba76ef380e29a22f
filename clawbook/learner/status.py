"""``clawbook status``: a table of every chapter and the next one to work on."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from clawbook.course.chapters import load
from clawbook.harness.report import Outcome
from clawbook.harness.runner import ROOT, Progress, next_chapter, progress
from clawbook.learner.console import (
    FAILED,
    OK,
    STATE_STYLE,
    TODO,
    console,
    print_problems,
    progress_bar,
    run_all,
)

FAILURES_SHOWN = 3
"""Failing tests named per chapter; ``clawbook check`` shows the rest."""
CHAPTERS_SHOWN = 3
"""Failing chapters whose tests are named; the others are listed by id."""


def _print_failures(report: list[Progress]) -> None:
    """Name the first failing tests of each failing chapter, and the command that shows all."""
    failing = [p for p in report if p.state == "failing"]
    if not failing:
        return
    console.print("\n[red]Failing tests[/] (the first of each chapter):")
    for p in failing[:CHAPTERS_SHOWN]:
        problems = [r for r in p.results if r.is_problem]
        for result in problems[:FAILURES_SHOWN]:
            outcome = "" if result.outcome == Outcome.FAILED else f"  [dim]({result.outcome})[/]"
            console.print(f"  {p.chapter.id:>5}  [red]✗[/] {escape(result.name)}{outcome}")
        more = len(problems) - FAILURES_SHOWN
        rest = f"the other {more} and " if more > 0 else ""
        console.print(
            f"         [dim]`clawbook check {p.chapter.id}` shows {rest}where each fails[/]"
        )
    others = [p.chapter.id for p in failing[CHAPTERS_SHOWN:]]
    if others:
        console.print(
            f"  [dim]also failing: {', '.join(others)} (`clawbook check <id>` for each)[/]"
        )


def cmd_status(args: argparse.Namespace) -> int:
    """A table of every chapter and the next one to work on."""
    curriculum = load()
    run = run_all(curriculum, args.impl, args.timeout, fresh=args.fresh)
    report = progress(curriculum, run)
    print_problems(run)
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
            progress_bar(p),
        )
    console.print(table)
    _print_failures(report)
    coming = sum(1 for p in report if p.state == "coming")
    if coming and not args.all:
        more = "1 more chapter is" if coming == 1 else f"{coming} more chapters are"
        console.print(f"[dim]{more} coming; `clawbook status --all` lists them.[/]")
    upcoming = next_chapter(report)
    if upcoming is None and run.complete and not run.problems:
        still = "read the next chapter as it lands, " if coming else ""
        console.print(
            "\n[bold green]🎉 Every written chapter passes. You built a working agent![/] "
            f"Try it (`claw --help`), {still}or help a friend get here."
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
