"""The author's and instructor's commands: ``stubs``, ``verify`` and ``grade``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from clawbook.course import stubgen, stubs
from clawbook.course.chapters import load
from clawbook.harness.runner import ROOT, default_timeout
from clawbook.learner.console import (
    BACKUPS,
    CATALOGUE,
    FAILED,
    INTERRUPTED,
    MANIFEST,
    OK,
    console,
    usage_error,
)


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
    """Prove the course is sound; see ``clawbook.instructor.verify``."""
    from clawbook.instructor.verify import verify

    return verify(console, fast=args.fast)


# ---------------------------------------------------------------- grade (for instructors)


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade a class's submissions with the instructor's tests; see ``instructor.grade``."""
    import threading

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from clawbook.instructor import grade, gradebook, intake
    from clawbook.instructor.reference import Course, SubmissionLimits, select_chapters
    from clawbook.instructor.rows import Grade, RowStatus

    curriculum = load()
    try:
        chapters = select_chapters(curriculum, args.chapters)
    except ValueError as error:
        return usage_error(str(error))
    limits = SubmissionLimits(
        wall_time=args.wall_time,
        test_timeout=args.timeout or default_timeout(),
        memory=int(args.memory * 1024**3),
    )
    course = Course(curriculum, chapters, limits=limits)
    work = intake.submissions(Path(p) for p in args.submissions)
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
        return usage_error("--workers must be at least 1")
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
    done: list[Grade] = []
    cancel = threading.Event()
    complete = True
    columns = (
        "{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        "{task.fields[last]}",
    )  # fmt: skip
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("grading", total=len(work), last="")

        def finished(row: Grade) -> None:
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
    written = gradebook.write_all(
        args.out, course, rows, complete=complete, gradescope=args.gradescope
    )
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
    return OK if all(r.status == RowStatus.OK for r in rows) else FAILED


def _print_grades(rows: Sequence[object]) -> None:
    from clawbook.instructor.rows import Grade, RowStatus

    table = Table(title="gradebook", title_style="bold")
    for column in ("submission", "passed", "todo", "failing", "status", "seconds"):
        table.add_column(column, justify="left" if column == "submission" else "right")
    for row in rows:
        assert isinstance(row, Grade)
        status = f"[red]{row.status}[/]"
        if row.status == RowStatus.OK:
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
