"""``clawbook reset`` and ``clawbook restore``: stubs back, and code back, never lost."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.markup import escape

from clawbook.course import stubs
from clawbook.harness.runner import ROOT
from clawbook.learner.console import BACKUPS, CATALOGUE, OK, USAGE, chapter_named, console


def confirm(question: str, yes: bool, command: str) -> bool | None:
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
    chapter = chapter_named(args.chapter)
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
    answer = confirm(
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
    chapter = chapter_named(args.chapter)
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
    answer = confirm(
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
