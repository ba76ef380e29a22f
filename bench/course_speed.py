"""The course at its full size: is every command a learner, an instructor and CI run still fast?

One row per target of issue 36 (``bench/README.md``, "The course at full size"):

* ``checks``: every chapter's ``clawbook check chNN --impl solution``, warm, against 3 s and
  against 2.5 times ch01's, timed in the same rounds;
* ``stuck``: a learner's ``clawbook check ch25`` with chapters up to 24 done and ch25 half
  written or wrong, in a copy without ``solution/``, against 5 s;
* ``status``: a learner with chapters up to 20 done: ``clawbook status`` with no saved
  results (45 s), then with nothing changed (2 s);
* ``suite``: ``CLAW_IMPL=solution pytest``, against 60 s;
* ``grade``: ``clawbook grade`` of one complete submission (90 s), and of several with two
  workers, projected to forty (30 minutes);
* ``load``: the solution suite three times in a row while four CPU-bound processes share the
  two CPUs: no failure;
* ``verify``: ``make verify`` in a fresh clone with a fresh virtualenv, install included
  (15 minutes), with each check's seconds as verify prints them. It takes a quarter of an
  hour, so it runs only when named: ``python -m bench.course_speed verify``.

Every command runs as a learner types it, in a fresh copy of the repository, with Python's
bytecode caches on (one untimed run first fills them, as any second run on a learner's
machine finds them).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import load
from clawbook.instructor import grade as grading
from clawbook.instructor import intake, reference

from .common import Result
from .feedback import environment, fresh_copy, time_command

ROOT = Path(__file__).resolve().parent.parent
CHECK_TARGET = 3.0
RATIO_TARGET = 2.5
STUCK_TARGET = 5.0
STATUS_TARGET = 45.0
UNCHANGED_TARGET = 2.0
SUITE_TARGET = 60.0
ONE_SUBMISSION_TARGET = 90.0
CLASS_TARGET = 30 * 60.0
CLASS_SIZE = 40
VERIFY_TARGET = 15 * 60.0
HOGS = 4
STATUS_DONE = "ch20"
"""The learner of the ``status`` row has finished every chapter up to this one."""


def filled_copy(into: Path, last: str | None) -> Path:
    """A learner's copy without ``solution/``: chapters up to ``last`` filled in."""
    repo = fresh_copy(into)
    curriculum = load()
    keep = {c.id for c in curriculum.chapters[: curriculum.index(last) + 1]} if last else set()
    stubgen.write_tree(stubgen.render_tree(repo / "solution", keep=keep), repo / "starter")
    shutil.rmtree(repo / "solution")
    return repo


def all_chapters() -> set[str]:
    """Every chapter's id: the regions to keep for a finished starter."""
    return {c.id for c in load().chapters}


def chapters_with_tests() -> list[str]:
    """The ids of the written chapters that have tests, in book order."""
    return [c.id for c in load().written if c.tests]


def checks(quick: bool) -> list[Result]:
    """Every chapter's check against the solution, warm; each against 3 s and 2.5 × ch01."""
    rounds = 1 if quick else 3
    ids = chapters_with_tests()
    times: dict[str, list[float]] = {chapter: [] for chapter in ids}
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-checks-") as scratch:
        repo = fresh_copy(Path(scratch))
        for chapter in ids:  # warm: bytecode and every test module compiled once
            time_command(repo, ["-m", "clawbook", "check", chapter, "--impl", "solution"], {})
        for _ in range(rounds):
            for chapter in ids:
                seconds, _output = time_command(
                    repo, ["-m", "clawbook", "check", chapter, "--impl", "solution"], {}
                )
                times[chapter].append(seconds)
    medians = {chapter: statistics.median(values) for chapter, values in times.items()}
    floor = medians["ch01"]
    results = [
        Result(
            benchmark=f"check {chapter}",
            metric="median wall time, --impl solution, warm",
            value=medians[chapter],
            unit="s",
            target=CHECK_TARGET,
            better="lower",
            context={
                "times": ", ".join(f"{t:.2f} s" for t in times[chapter]),
                "against ch01": f"{medians[chapter] / floor:.2f}× ({floor:.2f} s, same rounds)",
            },
            raw={"times": times[chapter], "ch01": floor},
        )
        for chapter in ids
    ]
    slowest = max(ids, key=lambda chapter: medians[chapter])
    results.append(
        Result(
            benchmark="check: slowest chapter",
            metric=f"{slowest}'s check / ch01's, same rounds",
            value=medians[slowest] / floor,
            unit="×",
            target=RATIO_TARGET,
            better="lower",
            context={
                "all chapters": f"{sum(medians.values()):.1f} s summed ({len(ids)} chapters)",
                "slowest": f"{slowest} {medians[slowest]:.2f} s, ch01 {floor:.2f} s",
            },
            raw={"medians": list(medians.values())},
        )
    )
    return results


def _copy_solution_files(repo: Path, names: Sequence[str]) -> None:
    """Put the finished ch25 files ``names`` (under ``evals/``) into the learner's starter."""
    finished = stubgen.render_tree(ROOT / "solution", keep=all_chapters())
    for name in names:
        content = finished[f"evals/{name}"]
        target = repo / "starter" / "evals" / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise RuntimeError(f"{path}: cannot plant the mistake, {old!r} is not there once")
    path.write_text(text.replace(old, new), encoding="utf-8")


def _half_written(repo: Path) -> None:
    _copy_solution_files(repo, ("tasks.py", "scratch.py", "report.py"))


def _timeout_as_error(repo: Path) -> None:
    _copy_solution_files(repo, ("tasks.py", "scratch.py", "report.py", "harness.py"))
    _replace(
        repo / "starter" / "evals" / "harness.py", 'status="timeout",', 'status="error",'
    )


def _wrong_results(repo: Path) -> None:
    _copy_solution_files(repo, ("tasks.py", "scratch.py", "report.py", "harness.py"))
    _replace(
        repo / "starter" / "evals" / "harness.py",
        "        if not line.strip():\n            continue\n",
        "",
    )


def _stuck_states() -> list[tuple[str, Callable[[Path], None]]]:
    """Where a learner stands partway through ch25, and how to put a copy there."""
    return [
        ("ch25 untouched", lambda repo: None),
        ("tasks, scratch and report written; harness still stubs", _half_written),
        ("run_isolated calls a timeout an error", _timeout_as_error),
        ("read_results chokes on a blank line", _wrong_results),
    ]


def stuck(quick: bool) -> list[Result]:
    """A learner's ``clawbook check ch25`` partway through the chapter, against 5 s."""
    rounds = 1 if quick else 3
    results = []
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-stuck-") as scratch:
        for index, (what, make) in enumerate(_stuck_states()):
            repo = filled_copy(Path(scratch) / str(index), "ch24")
            make(repo)
            time_command(repo, ["-m", "clawbook", "check", "ch25"], {})  # warm
            command = ["-m", "clawbook", "check", "ch25"]
            runs = [time_command(repo, command, {}) for _ in range(rounds)]
            times = [seconds for seconds, _ in runs]
            heading = next(
                (line for line in runs[-1][1].splitlines() if line.startswith("ch25 ")), "?"
            )
            results.append(
                Result(
                    benchmark=f"stuck at ch25: {what}",
                    metric="median wall time of the learner's clawbook check ch25",
                    value=statistics.median(times),
                    unit="s",
                    target=STUCK_TARGET,
                    better="lower",
                    context={
                        "times": ", ".join(f"{t:.2f} s" for t in times),
                        "check said": heading.strip(),
                    },
                    raw={"times": times},
                )
            )
    return results


def status(quick: bool) -> list[Result]:
    """A learner with chapters up to 20 done: status with no saved results, then unchanged."""
    rounds = 1 if quick else 3
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-status-") as scratch:
        repo = filled_copy(Path(scratch), STATUS_DONE)
        time_command(repo, ["-m", "clawbook", "status", "--fresh"], {})  # warm the bytecode
        for _ in range(rounds):
            shutil.rmtree(repo / ".clawbook" / "cache", ignore_errors=True)
            cold.append(time_command(repo, ["-m", "clawbook", "status"], {})[0])
            warm.append(time_command(repo, ["-m", "clawbook", "status"], {})[0])
    what = f"chapters up to {STATUS_DONE} done"
    return [
        Result(
            benchmark="status, no saved results",
            metric=f"median wall time, {what}, every test run",
            value=statistics.median(cold),
            unit="s",
            target=STATUS_TARGET,
            better="lower",
            context={"times": ", ".join(f"{t:.1f} s" for t in cold)},
            raw={"times": cold},
        ),
        Result(
            benchmark="status, nothing changed",
            metric=f"median wall time, {what}, results reused",
            value=statistics.median(warm),
            unit="s",
            target=UNCHANGED_TARGET,
            better="lower",
            context={"times": ", ".join(f"{t:.2f} s" for t in warm)},
            raw={"times": warm},
        ),
    ]


SUITE = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]


def suite(quick: bool) -> Result:
    """The solution suite in one process, as `CLAW_IMPL=solution pytest` runs it."""
    rounds = 1 if quick else 2
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-suite-") as scratch:
        repo = fresh_copy(Path(scratch))
        time_command(repo, SUITE, {"CLAW_IMPL": "solution"})  # warm
        runs = [time_command(repo, SUITE, {"CLAW_IMPL": "solution"}) for _ in range(rounds)]
    times = [seconds for seconds, _ in runs]
    summary = runs[-1][1].strip().splitlines()[-1] if runs[-1][1].strip() else "?"
    return Result(
        benchmark="solution suite",
        metric="median wall time, CLAW_IMPL=solution pytest, one process",
        value=statistics.median(times),
        unit="s",
        target=SUITE_TARGET,
        better="lower",
        context={"times": ", ".join(f"{t:.1f} s" for t in times), "pytest said": summary},
        raw={"times": times},
    )


def load_runs(quick: bool) -> Result:
    """The solution suite, three times in a row, with four CPU hogs: how many failures."""
    rounds = 1 if quick else 3
    failures: list[str] = []
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-load-") as scratch:
        repo = fresh_copy(Path(scratch))
        time_command(repo, SUITE, {"CLAW_IMPL": "solution"})  # warm, without the hogs
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
        try:
            for _ in range(rounds):
                seconds, output = time_command(repo, SUITE, {"CLAW_IMPL": "solution"})
                times.append(seconds)
                failures += re.findall(r"^(?:FAILED|ERROR) \S+", output, re.MULTILINE)
        finally:
            for hog in hogs:
                hog.send_signal(signal.SIGKILL)
                hog.wait()
    return Result(
        benchmark="reference under load",
        metric=f"failures in {rounds} whole solution runs beside {HOGS} CPU hogs",
        value=len(failures),
        unit="failures",
        target=0,
        better="lower",
        context={
            "times": ", ".join(f"{t:.1f} s" for t in times),
            "failed": "; ".join(failures) or "none",
        },
        raw={"times": times},
    )


def grade(quick: bool) -> list[Result]:
    """``clawbook grade`` of complete submissions: one alone, then several on two workers."""
    count = 2 if quick else 4
    curriculum = load()
    chapters = reference.gradable_chapters(curriculum)
    course = reference.Course(curriculum, chapters)
    course.prepare()
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-grade-") as scratch:
        paths = []
        for index in range(count):
            path = Path(scratch) / f"complete-{index}"
            finished = stubgen.render_tree(ROOT / "solution", keep=all_chapters())
            stubgen.write_tree(finished, path / "starter")
            paths.append(path)
        work = intake.submissions(paths)
        began = time.perf_counter()
        [alone] = grading.grade_class(course, work[:1], 1)
        one = time.perf_counter() - began
        began = time.perf_counter()
        rows = grading.grade_class(course, work, 2)
        several = time.perf_counter() - began
    bad = [f"{row.submission}: {row.status} {row.detail}" for row in [alone, *rows]]
    bad = [line for line, row in zip(bad, [alone, *rows], strict=True) if row.status != "ok"]
    projected = several / count * CLASS_SIZE
    isolation = course.isolation.summary()
    return [
        Result(
            benchmark="grade: one complete submission",
            metric="wall time, every chapter, one worker",
            value=one,
            unit="s",
            target=ONE_SUBMISSION_TARGET,
            better="lower",
            context={
                "row": f"{alone.status}, {alone.passed}/{alone.total} passed",
                "isolation": isolation,
                "not ok": "; ".join(bad) or "none",
            },
            raw={"seconds": one},
        ),
        Result(
            benchmark=f"grade: {CLASS_SIZE} complete submissions",
            metric=f"projected from {count} graded with --workers 2",
            value=projected,
            unit="s",
            target=CLASS_TARGET,
            better="lower",
            context={"measured": f"{several:.1f} s for {count} ({several / count:.1f} s each)"},
            raw={"seconds": several, "count": count},
        ),
    ]


CHECK_LINE = re.compile(r"^[✓✗] (?P<name>[^:]+): .*\((?P<seconds>[\d.]+)s\)\s*$")


def verify(quick: bool) -> Result:
    """``make verify`` in a fresh clone of HEAD with a fresh virtualenv, install included."""
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-verify-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        began = time.perf_counter()
        done = subprocess.run(
            ["make", "verify"],
            cwd=clone,
            env=environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - began
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    steps = {
        m["name"].strip(): float(m["seconds"])
        for line in output.splitlines()
        if (m := CHECK_LINE.match(line.strip()))
    }
    context = {name: f"{value:.1f} s" for name, value in steps.items()}
    context["exit status"] = str(done.returncode)
    return Result(
        benchmark="make verify",
        metric="wall time in a fresh clone, install included",
        value=seconds,
        unit="s",
        target=VERIFY_TARGET,
        better="lower",
        context=context,
        raw={"seconds": seconds, **steps},
    )


ROWS: dict[str, Callable[[bool], Result | list[Result]]] = {
    "checks": checks,
    "stuck": stuck,
    "status": status,
    "suite": suite,
    "grade": grade,
    "load": load_runs,
    "verify": verify,
}
DEFAULT_ROWS = ("checks", "stuck", "status", "suite", "grade", "load")


def run(quick: bool, rows: Sequence[str] = DEFAULT_ROWS) -> list[Result]:
    """The rows asked for, in order (``verify`` only when named: it takes 15 minutes)."""
    results: list[Result] = []
    for row in rows:
        outcome = ROWS[row](quick)
        results.extend(outcome if isinstance(outcome, list) else [outcome])
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rows named on the command line (default: all but verify) and print them."""
    from rich.console import Console

    from .run import report

    parser = argparse.ArgumentParser(prog="python -m bench.course_speed", description=__doc__)
    parser.add_argument("rows", nargs="*", choices=list(ROWS), help="default: all but verify")
    parser.add_argument("--quick", action="store_true", help="one round of each, fewer runs")
    args = parser.parse_args(argv)
    console = Console()
    load_before = os.getloadavg()[0]
    results = run(args.quick, args.rows or DEFAULT_ROWS)
    report(console, results)
    console.print(
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
        f"on {os.cpu_count()} CPUs",
        highlight=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
