"""``clawbook watch``: re-run a chapter's tests on every save, and move on when it passes."""

from __future__ import annotations

import argparse

from clawbook.course.chapters import Chapter, Curriculum, load
from clawbook.harness.runner import ROOT, Progress, next_chapter, progress
from clawbook.learner.check import check_chapter, exit_code, print_results
from clawbook.learner.console import (
    FAILED,
    OK,
    TODO,
    chapter_named,
    console,
    print_problems,
    run_all,
)


def cmd_watch(args: argparse.Namespace) -> int:
    """Re-run a chapter's tests on every save under starter/; move on when it passes."""
    from watchfiles import watch

    curriculum = load()
    code = TODO
    try:
        chapter: Chapter | None
        if args.chapter:
            chapter = chapter_named(args.chapter)
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
    run = run_all(curriculum, implementation, timeout)
    print_problems(run)
    upcoming = next_chapter(progress(curriculum, run))
    if upcoming is None:
        if run.complete and not run.problems:
            console.print("[bold green]Every written chapter passes. 🎉[/]")
            return None, OK, Progress(curriculum.chapters[0])
        return None, FAILED, Progress(curriculum.chapters[0])
    print_results(upcoming, run, implementation)
    return upcoming.chapter, exit_code(upcoming, run), upcoming


def _watching(implementation: str) -> None:
    console.print(f"\n[dim]watching {implementation}/ for changes · Ctrl-C to stop[/]")
