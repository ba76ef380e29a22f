"""``clawbook hint``: where a chapter's remaining stubs are, with their hints."""

from __future__ import annotations

import argparse

from rich.markup import escape

from clawbook.course import stubs
from clawbook.harness.runner import ROOT
from clawbook.learner.console import CATALOGUE, OK, TODO, chapter_named, console


def cmd_hint(args: argparse.Namespace) -> int:
    """Where the chapter's remaining stubs are, and the hint of each (and a second, if asked)."""
    chapter = chapter_named(args.chapter)
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
