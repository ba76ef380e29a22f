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

from rich.markup import escape

from clawbook.course import stubgen
from clawbook.course.chapters import CurriculumError
from clawbook.harness.runner import ROOT, default_timeout
from clawbook.instructor.commands import cmd_grade, cmd_stubs, cmd_verify
from clawbook.learner.backups import cmd_reset, cmd_restore
from clawbook.learner.check import cmd_check
from clawbook.learner.console import EXIT_CODES, FAILED, INTERRUPTED, USAGE, console
from clawbook.learner.hint import cmd_hint
from clawbook.learner.status import cmd_status
from clawbook.learner.watch import cmd_watch


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
        chapters = folder / "clawbook" / "chapters.toml"
        if chapters.is_file() and (folder / "starter").is_dir():
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
    # -P: the folder you are in is not put first on the path, where starter/'s own types.py
    # would stand in for the standard library's (run from inside starter/, Python could not start).
    os.execve(sys.executable, [sys.executable, "-P", "-m", "clawbook", *argv], env)
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
