"""``report.html``: the class at a glance, then a section per learner, in one static page.

No JavaScript and nothing fetched: the styles are inline, the chart is an inline SVG, so the
file opens from a laptop, an e-mail attachment or a course's file share alike. Everything a
learner wrote (names, messages) is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from clawbook.harness.report import Outcome
from clawbook.instructor.rows import RowStatus

if TYPE_CHECKING:
    from clawbook.instructor.reference import Course
    from clawbook.instructor.rows import ChapterScore, Failure, Grade

STYLE = """
:root { color-scheme: light dark;
  --fg: #1f1f1f; --bg: #ffffff; --muted: #5c5c5c; --line: #d4d4d4; --link: #0b57d0;
  --done: #dff3df; --part: #fff4d6; --failing: #fde2e1; --failing-fg: #8a1c1c;
  --blocked: #ececec; --ok: #1a7f37; --bad: #b3261e; --pre: #f4f4f4;
  --warning: #fff4d6; --warning-edge: #c98f00; --bar: #3f7fbf; }
@media (prefers-color-scheme: dark) { :root {
  --fg: #e4e4e4; --bg: #1b1c20; --muted: #a9a9a9; --line: #3e3f45; --link: #8ab4f8;
  --done: #1f3b25; --part: #3d3418; --failing: #4a1f1f; --failing-fg: #ffb4ab;
  --blocked: #2e2f35; --ok: #6dd58c; --bad: #ff8a80; --pre: #26272c;
  --warning: #3d3418; --warning-edge: #e0a800; --bar: #5b9bd5; } }
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
  padding: 0 1rem; color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
a { color: var(--link); }
h1 { margin-bottom: 0.2rem; } .muted { color: var(--muted); }
table { border-collapse: separate; border-spacing: 0; margin: 1rem 0;
  border-top: 1px solid var(--line); border-left: 1px solid var(--line); }
th, td { border: solid var(--line); border-width: 0 1px 1px 0; padding: 0.25rem 0.5rem;
  text-align: right; white-space: nowrap; background: var(--bg); }
th.who, td.who { text-align: left; position: sticky; left: 0; z-index: 1;
  box-shadow: 2px 0 0 var(--line); }
th.where, td.where { text-align: left; white-space: normal; min-width: 16rem; }
td.done, .key.done { background: var(--done); } td.part, .key.part { background: var(--part); }
td.none { color: var(--muted); } .key.none { background: var(--bg); }
td.blocked, .key.blocked { background: var(--blocked); }
td.failing, .key.failing { background: var(--failing); }
td.failing { color: var(--failing-fg); font-weight: 600; }
.status-ok { color: var(--ok); } .status-bad { color: var(--bad); font-weight: 600; }
.status-idle { color: var(--muted); }
.scroll { overflow-x: auto; max-width: 100%; }
.swipe { color: var(--muted); margin: 1rem 0 -0.6rem; } .swipe.narrow { display: none; }
.chart { display: flex; flex-wrap: wrap; align-items: flex-start; column-gap: 2rem; }
.chart svg { max-width: 100%; height: auto; }
.legend .entry { display: inline-block; margin-right: 1rem; }
.legend .key { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em;
  border: 1px solid var(--line); margin-right: 0.3em; }
section.learner { border-top: 1px solid var(--line); margin-top: 1.5rem; }
pre { background: var(--pre); padding: 0.4rem 0.6rem; white-space: pre-wrap; margin: 0.2rem 0; }
.warning { background: var(--warning); padding: 0.5rem 0.8rem;
  border-left: 4px solid var(--warning-edge); }
@media (max-width: 40rem) { body { margin: 1rem auto; padding: 0 0.6rem; font-size: 14px; }
  table { font-size: 13px; } th, td { padding: 0.25rem 0.35rem; }
  td.who { white-space: normal; max-width: 5rem; overflow-wrap: anywhere; }
  td.status { white-space: normal; overflow-wrap: normal; }
  th.where, td.where { min-width: 12rem; } .swipe.narrow { display: block; } }
"""
"""Every colour is a variable of ``:root``, set once per scheme: the rules below use only
the variables, so no rule can bring a light background into the dark page by coming later."""

MAX_FAILURES_SHOWN = 25
WIDE_TABLE = 8
"""More chapters than this make the table wider than a 1280 px screen: it says that it scrolls."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(name: str) -> str:
    return "learner-" + "".join(ch if ch.isalnum() else "-" for ch in name)


CHART_ROWS = 14
"""Chapters per column of the chart: the columns sit side by side where they fit (two at
1280 px for 28 chapters) and one under the other on a phone."""


def chart(course: Course, grades: Sequence[Grade]) -> str:
    """Inline SVG bar charts: for each chapter, how many learners completed it.

    One horizontal bar per chapter, in book order, in columns of ``CHART_ROWS`` chapters: every
    chapter is on the screen at any width (a column is narrower than a phone) and none scrolls.
    """
    chapters = [c.id for c in course.chapters]
    counts = {c: sum(1 for g in grades if c in g.completed) for c in chapters}
    learners = max(1, len(grades))
    row, label, scale, right, top = 20, 52, 220, 40, 22
    width = label + scale + right
    columns = [chapters[i : i + CHART_ROWS] for i in range(0, len(chapters), CHART_ROWS)]
    out = ['<div class="chart">']
    for column in columns:
        height = top + row * len(column) + 4
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" fill="currentColor" '
            f'font-size="12" aria-label="Learners who completed each chapter, '
            f'{_e(column[0])} to {_e(column[-1])}">',
            f'<text x="{label}" y="{top - 8}" font-size="11">0</text>',
            f'<text x="{label + scale}" y="{top - 8}" text-anchor="end" font-size="11">'
            f"{len(grades)} learner{'s' if len(grades) != 1 else ''}</text>",
            f'<line x1="{label}" y1="{top - 4}" x2="{label}" y2="{height}" stroke="#888"/>',
        ]
        for index, chapter in enumerate(column):
            y = top + index * row
            count = counts[chapter]
            w = round(scale * count / learners)
            parts.append(
                f'<text x="{label - 6}" y="{y + 14}" text-anchor="end">{_e(chapter)}</text>'
                f'<rect x="{label}" y="{y + 3}" width="{w}" height="{row - 6}" fill="#3f7fbf">'
                f"<title>{_e(chapter)}: {count} of {len(grades)}</title></rect>"
                f'<text x="{label + w + 4}" y="{y + 14}">{count}</text>'
            )
        parts.append("</svg>")
        out.append("".join(parts))
    out.append("</div>")
    return "".join(out)


CELLS = {
    "done": ("✓", "every test passes"),
    "failing": ("✗", "tests fail: a bug, or the chapter's own file does not import"),
    "blocked": ("⊘", "cannot run: another chapter's file does not import (named once, in the row)"),
    "part": ("◐", "some pass, the rest wait for stubs"),
    "none": ("○", "not started: every test waits for a stub"),
}
"""Each kind of chapter cell: its mark (so the table reads without colour) and its meaning."""

READING = "a reading chapter: its tests pass on the untouched starter, so they count once the \
learner has started"


def _cell_kind(grade: Grade, score: ChapterScore, broken: set[str]) -> str:
    if score.failing > score.blocked or (score.failing and score.chapter in broken):
        return "failing"
    if score.failing:
        return "blocked"
    if score.complete:
        return "done" if score.chapter in grade.completed else "none"
    return "part" if score.passed else "none"


def _broken(course: Course, grade: Grade) -> set[str]:
    """The chapters whose own file is a module that does not import (the row's causes)."""
    causes = {f.cause for f in grade.failures if f.cause}
    owners = {
        chapter.id
        for chapter in course.chapters
        for name in chapter.files
        for cause in causes
        if cause == f"cannot import starter/{name}"
        or cause.startswith(f"cannot import starter/{name} (")
    }
    return owners | ({grade.stuck_in} if grade.stuck_in else set())


def _cell(grade: Grade, score: ChapterScore, broken: set[str]) -> str:
    kind = _cell_kind(grade, score, broken)
    mark, meaning = CELLS[kind]
    if kind == "none" and score.complete:
        meaning = READING
    extra = f" ({score.failing} failing)" if kind == "failing" else ""
    return (
        f'<td class="{kind}" title="{_e(meaning)}{extra}">{mark} {score.passed}/{score.total}'
        f"{f' ✗{score.failing}' if kind == 'failing' else ''}</td>"
    )


def _legend() -> str:
    keys = "".join(
        f'<span class="entry"><span class="key {kind}"></span>{mark} {_e(text)}</span> '
        for kind, (mark, text) in CELLS.items()
    )
    return f'<p class="legend muted">{keys}</p>'


def _status(grade: Grade) -> str:
    if grade.status != RowStatus.OK:
        return f'<span class="status-bad">{_e(grade.status)}</span>'
    if not grade.started:
        return '<span class="status-idle">not started</span>'
    return '<span class="status-ok">ok</span>'


def most_failed(grades: Sequence[Grade], limit: int = 10) -> list[tuple[str, int, str]]:
    """The tests that fail for the most learners: ``(test, learners, a typical message)``.

    A test stopped by a module that does not import says nothing about the test: left out.
    """
    counts: dict[str, int] = {}
    messages: dict[str, dict[str, int]] = {}
    for grade in grades:
        own = [f for f in grade.failures if f.cause is None]
        for test in {f.test for f in own}:
            counts[test] = counts.get(test, 0) + 1
        for failure in own:
            first = failure.message.splitlines()[0] if failure.message else ""
            seen = messages.setdefault(failure.test, {})
            seen[first] = seen.get(first, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [
        (test, count, max(messages[test].items(), key=lambda m: m[1])[0])
        for test, count in ranked
        if count > 1
    ]


def render(course: Course, grades: Sequence[Grade], complete: bool = True) -> str:
    """The whole page."""
    chapters = [c.id for c in course.chapters]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Clawbook gradebook</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>Clawbook gradebook</h1>",
        f'<p class="muted">{len(grades)} submission(s), chapters {_e(", ".join(chapters))}; '
        f"limits: {course.limits.wall_time:g} s per submission, "
        f"{course.limits.test_timeout:g} s per test, "
        f"{course.limits.memory / 1024**3:g} GiB of memory.</p>",
    ]
    isolation = course.isolation
    if isolation.program is None:
        out.append(f'<p class="warning">Graded without bubblewrap: {_e(isolation.summary())}.</p>')
    else:
        out.append(f'<p class="muted">Isolation: {_e(isolation.summary())}.</p>')
    if not complete:
        out.append(
            '<p class="warning">Grading was interrupted: only the submissions that finished '
            "are listed.</p>"
        )
    out += ["<h2>The class at a glance</h2>", "<h3>Learners who completed each chapter</h3>"]
    out.append(chart(course, grades))
    out.append(_legend())
    # Who, the status, the totals and where they are first: with thirty chapters the table
    # scrolls sideways in its box (the learner's name stays put), and what an instructor reads
    # first must be on a phone's screen.
    # A phone always cuts the table (its "where they are" column alone is half the screen).
    narrow = "" if len(chapters) > WIDE_TABLE else " narrow"
    out.append(f'<p class="swipe{narrow}">↔ The table scrolls sideways.</p>')
    out.append('<div class="scroll"><table><thead><tr><th class="who">submission</th>')
    out.append(
        '<th class="status">status</th><th>passed</th><th>todo</th><th>failing</th>'
        '<th class="where">where they are</th>'
    )
    out += [f"<th>{_e(c)}</th>" for c in chapters]
    out.append("<th>seconds</th></tr></thead><tbody>")
    for grade in grades:
        by_id = {c.chapter: c for c in grade.chapters}
        broken = _broken(course, grade)
        out.append(
            f'<tr><td class="who"><a href="#{_anchor(grade.submission)}">'
            f'{_e(grade.submission)}</a></td><td class="status">{_status(grade)}</td>'
            f"<td>{grade.passed}/{grade.total}</td><td>{grade.todo}</td>"
            f'<td>{grade.failing}</td><td class="where">{_e(grade.standing)}</td>'
        )
        for chapter in chapters:
            score = by_id.get(chapter)
            out.append(_cell(grade, score, broken) if score else "<td></td>")
        out.append(f"<td>{grade.seconds:.1f}</td></tr>")
    out.append("</tbody></table></div>")
    common = most_failed(grades)
    if common:
        out.append("<h3>The tests most of the class fails</h3><ol>")
        for test, count, message in common:
            out.append(
                f"<li><code>{_e(test)}</code>: {count} of {len(grades)} learners"
                f"<pre>{_e(message)}</pre></li>"
            )
        out.append("</ol>")
    out.append("<h2>Learners</h2>")
    for grade in grades:
        out.append(_learner(grade, chapters))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _learner(grade: Grade, chapters: Sequence[str]) -> str:
    """One learner's section: status, chapters, and each failing test with its line.

    Failures with one cause are one entry: the module that does not import, once, with the
    tests it stopped counted; tests that fail the same way at the same line, once, named.
    """
    out = [
        f'<section class="learner" id="{_anchor(grade.submission)}">',
        f"<h3>{_e(grade.submission)}</h3>",
        f"<p>{grade.passed} of {grade.total} tests pass, {grade.todo} todo, "
        f"{grade.failing} failing; status {_status(grade)} "
        f'<span class="muted">({grade.seconds:.1f} s)</span></p>',
        f"<p><strong>{_e(grade.standing)}</strong></p>",
    ]
    stopped = [f for f in grade.failures if f.cause is not None]
    if grade.detail and not stopped and grade.detail not in grade.standing:
        out.append(f"<pre>{_e(grade.detail)}</pre>")
    done = grade.completed
    out.append(f"<p>Chapters completed: {_e(', '.join(done)) if done else 'none'}.</p>")
    if stopped:
        blocked = sum(c.blocked for c in grade.chapters)
        hit = ", ".join(c.chapter for c in grade.chapters if c.blocked) or "no graded chapter"
        causes: dict[str, Failure] = {}
        for failure in sorted(stopped, key=lambda f: f.outcome != Outcome.ERROR):
            causes.setdefault(failure.cause or "", failure)
        if len(causes) == 1:
            [(cause, failure)] = causes.items()
            out.append(f"<p>{_e(cause)}, which stops {blocked} test(s) in {_e(hit)}:</p>")
            out.append(f"<pre>{_e(failure.message.removeprefix(f'{cause}: '))}</pre>")
        else:
            out.append(
                f"<p>{len(causes)} modules do not import, which stops {blocked} test(s) in "
                f"{_e(hit)}:</p><ul>"
            )
            for cause, failure in causes.items():
                message = failure.message.removeprefix(f"{cause}: ")
                out.append(f"<li>{_e(cause)}<pre>{_e(message)}</pre></li>")
            out.append("</ul>")
        if grade.detail and not grade.detail.startswith("cannot import"):
            out.append(f"<pre>{_e(grade.detail)}</pre>")
    groups = _groups([f for f in grade.failures if f.cause is None])
    if groups:
        out.append("<p>Failing:</p><ul>")
        for group in groups[:MAX_FAILURES_SHOWN]:
            failure = group[0]
            where = f" at <code>{_e(failure.where)}</code>" if failure.where else ""
            names = ", ".join(f"<code>{_e(f.test)}</code>" for f in group[:3])
            more = f" and {len(group) - 3} more" if len(group) > 3 else ""
            out.append(
                f"<li>{names}{more} ({_e(failure.outcome)}){where}"
                f"<pre>{_e(failure.message)}</pre></li>"
            )
        out.append("</ul>")
        hidden = sum(len(g) for g in groups[MAX_FAILURES_SHOWN:])
        if hidden > 0:
            out.append(f'<p class="muted">... and {hidden} more in gradebook.json.</p>')
    out.append("</section>")
    return "\n".join(out)


def _groups(failures: Sequence[Failure]) -> list[list[Failure]]:
    """Failures that read the same, together, in their first one's order.

    The same outcome, line of the learner's code and first line of the message is one group
    (a bug that several tests reach); a loop or a crash at one line is one group whatever the
    message (it names the test, or how long it ran).
    """
    groups: dict[tuple[str, str, str], list[Failure]] = {}
    for failure in failures:
        first = (failure.message.splitlines() or [""])[0]
        if failure.where and failure.outcome in (Outcome.HUNG, Outcome.CRASHED):
            first = ""
        key = (failure.outcome, failure.where or "", first)
        groups.setdefault(key, []).append(failure)
    return list(groups.values())
