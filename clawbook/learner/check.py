"""``clawbook check``: one chapter's tests, failures briefly, and the next stub to write."""

from __future__ import annotations

import argparse

from rich.markup import escape

from clawbook.course import stubs
from clawbook.course.chapters import Chapter
from clawbook.harness.report import Location, Outcome, TestResult
from clawbook.harness.runner import ROOT, Progress, Run, chapter_test_files
from clawbook.learner.console import (
    FAILED,
    OK,
    STATE_STYLE,
    TODO,
    USAGE,
    chapter_named,
    code_line,
    console,
    print_problems,
    progress_bar,
    run_tests,
)


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
    run = run_tests(label, args, implementation, timeout)
    p = Progress(chapter, run.for_chapter(chapter), run.expected_for(chapter))
    if select and run.complete and not p.results and not run.problems:
        console.print(
            f"[yellow]No test of {chapter.id} matches -k {escape(select)!r}.[/] "
            f"`clawbook check {chapter.id}` lists the chapter's tests by name."
        )
        return USAGE, p
    print_problems(run)
    print_results(p, run, implementation, select=select, verbose=verbose)
    return exit_code(p, run), p


def print_results(
    p: Progress,
    run: Run,
    implementation: str,
    *,
    select: str | None = None,
    verbose: bool = False,
) -> None:
    """A chapter's results: each test, each failure briefly, and what to write next."""
    chapter = p.chapter
    subset = f"  [dim](only the tests -k {escape(select)!r} selects)[/]" if select else ""
    state = STATE_STYLE[p.state]
    if select and p.state == "done":
        state = "[green]✓ these pass[/]"
    heading = f"[bold]{chapter.id} · {escape(chapter.title)}[/]  {state}  {progress_bar(p)}"
    console.print(f"{heading}{subset}\n")
    waiting = any(result.outcome == Outcome.TODO for result in p.results)
    stub_names = {
        (f"{implementation}/{stub.path}", stub.line): stub.function
        for stub in (stubs.remaining_stubs(ROOT / implementation) if waiting else ())
    }
    for result in p.results:
        name = escape(result.name)
        if result.outcome == Outcome.PASSED:
            console.print(f"  [green]✓[/] {name}")
        elif result.outcome == Outcome.TODO:
            console.print(f"  [dim]○ {name}{_waiting_for(result, stub_names)}[/]")
        elif result.outcome == Outcome.SKIPPED:
            console.print(f"  [dim]- {name} ({escape(result.message or 'skipped')})[/]")
        elif result.outcome == Outcome.ERROR:
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
                console.print(f"      at   {code_line(result.where)}")
            if result.called_from is not None:
                for comment in _comments_above(result.called_from):
                    console.print(f"      [dim]│ {escape(comment)}[/]")
                console.print(f"      from {code_line(result.called_from)}")
            if result.test_line is not None:
                console.print(f"      test {code_line(result.test_line)}")
    ran = {result.nodeid for result in p.results}
    why = run.not_run_because()
    for number, nodeid in enumerate(n for n in p.expected or () if n not in ran):
        name = escape(nodeid.split("::")[-1])
        because = f"did not run: {escape(why)}" if number == 0 else "did not run either"
        console.print(f"  [red]? {name}[/]  [dim]{because}[/]")
    problem = p.first_problem
    if problem is not None and problem.outcome in (Outcome.FAILED, Outcome.HUNG):
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


def exit_code(p: Progress, run: Run) -> int:
    """OK when the chapter passes, TODO while stubs are left, FAILED otherwise."""
    if p.state in ("failing", "cannot import", "not run") or not run.complete:
        return FAILED
    if p.state in ("todo", "in progress"):
        return TODO
    return OK


def cmd_check(args: argparse.Namespace) -> int:
    """Run one chapter's tests."""
    chapter = chapter_named(args.chapter)
    code, _ = check_chapter(
        chapter, args.impl, args.timeout, select=args.select, verbose=args.verbose
    )
    return code
