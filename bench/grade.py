"""Benchmark 6: grading a class with ``clawbook grade``, one worker against several.

An instructor grades forty submissions at the end of a week; it should take minutes, not an
afternoon, and more cores should make it faster. This benchmark builds a synthetic class of 40
starters from the solution (the regions of chapters <= k filled in, k going round every
chapter with stubs, so the class is spread over the book as a real one is), grades it once with
one worker and once with one worker per CPU, and reports the total time, the time per
submission and the speed-up. Where bubblewrap can run, it also grades the class with one
worker without it, and reports what the sandbox costs per submission. The runs grade the
same submissions with the same course, in the same process, so the ratios read the same on
any machine; the reference run against the solution (done once) is not timed.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path

from clawbook.course import stubgen
from clawbook.course.chapters import load
from clawbook.harness.runner import run_pytest
from clawbook.instructor import grade, intake, reference, sandbox

from .common import Result

ROOT = Path(__file__).resolve().parent.parent
CLASS_SIZE = 40
QUICK_SIZE = 8


def build_class(folder: Path, size: int, curriculum_chapters: list[str]) -> list[Path]:
    """``size`` submissions, the i-th with the chapters up to ``i % (len + 1)`` filled in."""
    paths = []
    for index in range(size):
        keep = set(curriculum_chapters[: index % (len(curriculum_chapters) + 1)])
        path = folder / f"learner-{index:02d}"
        stubgen.write_tree(stubgen.render_tree(ROOT / "solution", keep=keep), path / "starter")
        paths.append(path)
    return paths


def _time(
    course: reference.Course, work: list[intake.Submission], workers: int
) -> tuple[float, int]:
    started = time.perf_counter()
    rows = grade.grade_class(course, work, workers)
    seconds = time.perf_counter() - started
    broken = sum(1 for row in rows if row.status != "ok") + len(work) - len(rows)
    if broken:
        raise RuntimeError(f"{broken} synthetic submission(s) did not grade as ok")
    return seconds, len(rows)


def run(quick: bool) -> list[Result]:
    """Grade the synthetic class with 1 worker and with one per CPU."""
    size = QUICK_SIZE if quick else CLASS_SIZE
    cpus = os.cpu_count() or 1
    curriculum = load()
    chapters = reference.gradable_chapters(curriculum)
    course = reference.Course(curriculum, chapters)
    course.prepare()
    # The floor: one plain run of the same tests against the solution, as `make verify` does.
    began = time.perf_counter()
    run_pytest(course.test_files, implementation="solution")
    floor = time.perf_counter() - began
    with_stubs = [c.id for c in chapters if c.has_stubs]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="clawbook-bench-grade-") as scratch:
        work = intake.submissions(build_class(Path(scratch), size, with_stubs))
        serial, _ = _time(course, work, 1)
        plain = None
        if course.isolation.program is not None:  # right after, under the same load
            off = sandbox.Isolation(None, "turned off to measure what bubblewrap costs")
            plain, _ = _time(dataclasses.replace(course, isolation=off), work, 1)
        parallel, _ = _time(course, work, cpus)
    tests = sum(len(ids) for ids in course.expected.values())
    chapters_text = f"{chapters[0].id}..{chapters[-1].id}" if chapters else "none"
    context = {
        "class": f"{size} submissions × {tests} tests ({chapters_text})",
        "one worker": f"{serial:.1f} s in all, {serial / size:.2f} s per submission",
        f"{cpus} workers": f"{parallel:.1f} s in all, {parallel / size:.2f} s per submission",
        "floor": f"{floor:.2f} s: one plain run of the same tests against solution/",
        "load": f"1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} "
        f"after, on {cpus} CPUs (other work on the machine eats into the speed-up)",
    }
    raw: dict[str, float | int | list[float]] = {
        "submissions": size,
        "tests": tests,
        "cpus": cpus,
        "serial": serial,
        "parallel": parallel,
        "floor": floor,
    }
    sandboxed = []
    if plain is None:
        context["isolation"] = course.isolation.summary()
    else:
        sandboxed.append(
            Result(
                benchmark="grade: bubblewrap cost",
                metric="one worker's time per submission, in bubblewrap / without it",
                value=serial / plain,
                unit="×",
                target=1.25,
                better="lower",
                context={
                    "in bubblewrap": f"{serial / size:.2f} s per submission",
                    "without it": f"{plain / size:.2f} s per submission (limits only)",
                },
                raw={**raw, "plain": plain},
            )
        )
    return [
        *sandboxed,
        Result(
            benchmark="grade: class",
            metric=f"wall time, {size} submissions, {cpus} workers",
            value=parallel,
            unit="s",
            target=300.0 * size / CLASS_SIZE,
            better="lower",
            context=context,
            raw=raw,
        ),
        Result(
            benchmark="grade: per submission",
            metric="one worker's time per submission / one plain run of the tests",
            value=serial / size / floor,
            unit="×",
            target=1.5,
            better="lower",
            context={k: context[k] for k in ("one worker", "floor")},
            raw=raw,
        ),
        Result(
            benchmark="grade: speed-up",
            metric=f"one worker's time / {cpus} workers' time",
            value=serial / parallel,
            unit="×",
            target=max(1.0, 0.75 * cpus),
            better="higher",
            context={k: context[k] for k in ("one worker", f"{cpus} workers", "load")},
            raw=raw,
        ),
    ]
