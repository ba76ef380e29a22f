"""``clawbook``: your progress through the book, one command away.

Exit codes: 0 when what you asked about is done (or the command succeeded), 1 when a test fails
or a check does not hold, 2 for a usage error, 3 when nothing fails but tests are still todo.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import stubgen, stubs
from .chapters import Chapter, Curriculum, load
from .runner import ROOT, Progress, Run, chapter_test_files, next_chapter, progress, run_pytest

OK, FAILED, USAGE, TODO = 0, 1, 2, 3

console = Console(highlight=False, soft_wrap=True)

STATE_STYLE = {
    "done": "[green]✓ done[/]",
    "in progress": "[yellow]◐ in progress[/]",
    "todo": "[dim]○ todo[/]",
    "failing": "[red]✗ failing[/]",
    "reading": "[blue]📖 reading[/]",
    "coming": "[dim]… coming soon[/]",
}


def _bar(p: Progress, width: int = 12) -> str:
    if not p.total:
        return ""
    filled = round(width * p.passed / p.total)
    colour = "green" if p.state == "done" else "red" if p.state == "failing" else "yellow"
    return f"[{colour}]{'█' * filled}[/][dim]{'░' * (width - filled)}[/] {p.passed}/{p.total}"


# ---------------------------------------------------------------- status


def cmd_status(args: argparse.Namespace) -> int:
    """A table of every chapter and the next one to work on."""
    curriculum = load()
    with console.status("running the tests against starter/ ..."):
        run = run_pytest(implementation=args.impl)
    report = progress(curriculum, run)
    table = Table(title=f"Clawbook · your progress ({args.impl}/)", title_style="bold")
    table.add_column("", justify="right", style="dim")
    table.add_column("chapter")
    table.add_column("state")
    table.add_column("tests")
    for p in report:
        if p.state == "coming" and not args.all:
            continue
        title = p.chapter.title if p.chapter.written else f"[dim]{p.chapter.title}[/]"
        table.add_row(p.chapter.id, title, STATE_STYLE[p.state], _bar(p))
    console.print(table)
    if not args.all:
        coming = sum(1 for p in report if p.state == "coming")
        console.print(
            f"[dim]{coming} more chapters are coming; `clawbook status --all` lists them.[/]"
        )
    upcoming = next_chapter(report)
    if upcoming is None:
        console.print(
            "\n[bold green]🎉 Every written chapter passes. You built a working agent![/] "
            "Try it, read the next chapter as it lands, or help a friend get here."
        )
        return OK
    chapter = upcoming.chapter
    console.print(f"\n[bold]Next:[/] {chapter.id} · {chapter.title}")
    if chapter.files:
        console.print(f"  edit   {', '.join('starter/' + f for f in chapter.files)}")
    console.print(f"  read   book/{chapter.page}")
    console.print(f"  run    clawbook check {chapter.id}   (or clawbook watch)")
    return FAILED if any(p.state == "failing" for p in report) else TODO


# ---------------------------------------------------------------- check


def check_chapter(chapter: Chapter, implementation: str = "starter") -> tuple[int, Progress]:
    """Run one chapter's tests and print what a learner needs: failures briefly, one hint."""
    files = chapter_test_files(chapter)
    if not files:
        console.print(f"[yellow]{chapter.id} has no tests yet.[/]")
        return OK, Progress(chapter)
    with console.status(f"running {chapter.id}'s tests against {implementation}/ ..."):
        run = run_pytest(files, implementation=implementation)
    p = Progress(chapter, run.for_chapter(chapter))
    _print_results(p, run)
    return _exit_code(p), p


def _print_results(p: Progress, run: Run) -> None:
    chapter = p.chapter
    console.print(f"[bold]{chapter.id} · {chapter.title}[/]  {STATE_STYLE[p.state]}  {_bar(p)}\n")
    for result in p.results:
        if result.outcome == "passed":
            console.print(f"  [green]✓[/] {escape(result.name)}")
        elif result.outcome == "todo":
            console.print(f"  [dim]○ {escape(result.name)}[/]")
        elif result.outcome == "skipped":
            console.print(f"  [dim]- {escape(result.name)} (skipped)[/]")
        else:
            where = f"{result.file}:{result.line}" if result.line else result.file
            console.print(f"  [red]✗ {escape(result.name)}[/]  [dim]{escape(where)}[/]")
            for line in (result.message or "").splitlines()[:8]:
                console.print(f"      [red]{escape(line)}[/]")
    problem = p.first_problem
    if problem is not None:
        console.print(
            f"\n[dim]Read the failing test at {escape(problem.file)}"
            f"{':' + str(problem.line) if problem.line else ''}; "
            f"`pytest {escape(problem.file)} -x` shows the full traceback.[/]"
        )
    if not p.results and run.returncode not in (0, 5):
        console.print(escape(run.output[-3000:]))
    todo = p.first_todo
    if todo is not None and p.first_problem is None:
        console.print(
            f"\n[yellow]Next stub:[/] {escape(todo.hint or '')}  "
            f"[dim](clawbook hint {chapter.id} shows where)[/]"
        )
    if p.state == "done":
        console.print(f"\n[bold green]✓ {chapter.id} is done.[/] On to the next chapter!")


def _exit_code(p: Progress) -> int:
    if p.state == "failing":
        return FAILED
    if p.state in ("todo", "in progress"):
        return TODO
    return OK


def cmd_check(args: argparse.Namespace) -> int:
    """Run one chapter's tests."""
    chapter = _chapter(args.chapter)
    code, _ = check_chapter(chapter, args.impl)
    return code


# ---------------------------------------------------------------- hint


def cmd_hint(args: argparse.Namespace) -> int:
    """Where the chapter's remaining stubs are, and the hint of each."""
    chapter = _chapter(args.chapter)
    console.print(f"[bold]{chapter.id} · {chapter.title}[/]")
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
    for stub in remaining:
        console.print(f"\n  [bold]starter/{stub.path}:{stub.line}[/]  {stub.function}")
        console.print(f"    [yellow]hint:[/] {escape(stub.hint)}")
    console.print(
        f"\n{len(remaining)} stub(s) to go. Replace each `raise Todo(...)` with real code."
    )
    return TODO


# ---------------------------------------------------------------- reset


def cmd_reset(args: argparse.Namespace) -> int:
    """Put a chapter's stubs back, after asking; the old files go to a backup folder."""
    chapter = _chapter(args.chapter)
    try:
        plan = stubs.plan_reset(chapter, ROOT / "solution", ROOT / "starter")
    except stubs.ResetError as error:
        console.print(f"[yellow]{error}[/]")
        return USAGE
    console.print(f"Reset {chapter.id} · {chapter.title}: these go back to their stubs:")
    for path, names in plan.functions.items():
        console.print(f"  starter/{path}: {', '.join(names)}")
    if not args.yes:
        if not sys.stdin.isatty():
            console.print("[red]Not resetting: confirm with --yes when there is no terminal.[/]")
            return USAGE
        answer = console.input("Your current code goes to .clawbook/backups/. Reset? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            console.print("Nothing changed.")
            return OK
    folder = stubs.apply_reset(plan, ROOT / "starter", ROOT / ".clawbook" / "backups")
    console.print(f"[green]Done.[/] Your previous code is in {folder.relative_to(ROOT)}/")
    return OK


# ---------------------------------------------------------------- watch


def cmd_watch(args: argparse.Namespace) -> int:
    """Re-run a chapter's tests on every save under starter/; move on when it passes."""
    from watchfiles import watch

    curriculum = load()
    chapter = _chapter(args.chapter) if args.chapter else _next_unfinished(curriculum, args.impl)
    if chapter is None:
        console.print("[bold green]Everything passes already. 🎉[/]")
        return OK
    try:
        code, p = _watch_once(chapter, args.impl)
        for _changes in watch(ROOT / args.impl, watch_filter=lambda _c, path: path.endswith(".py")):
            if p.state == "done":
                following = _next_unfinished(curriculum, args.impl)
                if following is None:
                    console.print("[bold green]Every written chapter passes. 🎉[/]")
                    return OK
                chapter = following
            code, p = _watch_once(chapter, args.impl)
    except KeyboardInterrupt:
        return code
    return code


def _watch_once(chapter: Chapter, implementation: str) -> tuple[int, Progress]:
    console.clear()
    code, p = check_chapter(chapter, implementation)
    console.print(f"\n[dim]watching {implementation}/ for changes · Ctrl-C to stop[/]")
    return code, p


def _next_unfinished(curriculum: Curriculum, implementation: str) -> Chapter | None:
    upcoming = next_chapter(progress(curriculum, run_pytest(implementation=implementation)))
    return upcoming.chapter if upcoming else None


# ---------------------------------------------------------------- stubs (for authors)


def cmd_stubs(args: argparse.Namespace) -> int:
    """Generate starter/ from solution/, or with --check report whether it is stale."""
    files = stubgen.render_tree(ROOT / "solution")
    if args.check:
        problems = stubgen.differences(files, ROOT / "starter")
        if problems:
            for problem in problems:
                console.print(f"  [red]{problem}[/]")
            console.print(
                "[red]starter/ is out of date:[/] run `clawbook stubs` and commit the result."
            )
            return FAILED
        console.print(f"[green]starter/ is in sync with solution/[/] ({len(files)} files).")
        return OK
    stubgen.write_tree(files, ROOT / "starter")
    console.print(f"Wrote starter/ ({len(files)} files) from solution/.")
    return OK


# ---------------------------------------------------------------- verify (for instructors)


def cmd_verify(args: argparse.Namespace) -> int:
    """Prove the course is sound; see ``clawbook.verify``."""
    from .verify import verify

    return verify(console, fast=args.fast)


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
        prog="clawbook", description="Your progress through Clawbook, and the instructor's checks."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: object, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    def impl_option(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--impl",
            choices=("starter", "solution"),
            default="starter",
            help="the package to test (default: starter, your code)",
        )

    status = add("status", cmd_status, "show every chapter's progress and what to do next")
    status.add_argument("--all", action="store_true", help="also list chapters not written yet")
    impl_option(status)
    check = add("check", cmd_check, "run one chapter's tests")
    check.add_argument("chapter", help="a chapter id, such as ch01")
    impl_option(check)
    hint = add("hint", cmd_hint, "show where a chapter's stubs are, and their hints")
    hint.add_argument("chapter")
    watch = add("watch", cmd_watch, "re-run a chapter's tests whenever you save a file")
    watch.add_argument("chapter", nargs="?", help="default: the next unfinished chapter")
    impl_option(watch)
    reset = add("reset", cmd_reset, "put a chapter's stubs back (your code is backed up)")
    reset.add_argument("chapter")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    stubs_cmd = add("stubs", cmd_stubs, "(authors) generate starter/ from solution/")
    stubs_cmd.add_argument("--check", action="store_true", help="only report whether it is stale")
    verify = add("verify", cmd_verify, "(instructors) prove the course is sound")
    verify.add_argument(
        "--fast", action="store_true", help="skip the slow checks (progression, book, notebooks)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``clawbook`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["status"])
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
