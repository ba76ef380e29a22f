"""``report.html``: the class at a glance, then a section per learner, in one static page.

No JavaScript and nothing fetched: the styles are inline, the chart is an inline SVG, so the
file opens from a laptop, an e-mail attachment or a course's file share alike. Everything a
learner wrote (names, messages) is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawbook.instructor.grade import Course, Grade

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #222; }
h1 { margin-bottom: 0.2rem; } .muted { color: #666; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th, td { white-space: nowrap; } th.where, td.where { text-align: left; white-space: normal;
  min-width: 16rem; overflow-wrap: anywhere; }
td.done { background: #dff3df; } td.part { background: #fff4d6; } td.none { color: #999; }
td.failing { background: #fde2e1; color: #8a1c1c; font-weight: 600; }
.status-ok { color: #1a7f37; } .status-bad { color: #c62828; font-weight: 600; }
.status-idle { color: #666; }
.scroll { overflow-x: auto; } li code, h3 { overflow-wrap: anywhere; }
.legend span { margin-right: 1rem; white-space: nowrap; }
.legend .key { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em;
  border: 1px solid #ccc; margin-right: 0.3em; }
@media (max-width: 40rem) { body { margin: 1rem 0.6rem; font-size: 14px; } }
section.learner { border-top: 1px solid #ccc; margin-top: 1.5rem; }
pre { background: #f6f6f6; padding: 0.4rem 0.6rem; white-space: pre-wrap; margin: 0.2rem 0; }
.warning { background: #fff4d6; padding: 0.5rem 0.8rem; border-left: 4px solid #e0a800; }
"""

MAX_FAILURES_SHOWN = 25


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(name: str) -> str:
    return "learner-" + "".join(ch if ch.isalnum() else "-" for ch in name)


def chart(course: Course, grades: Sequence[Grade]) -> str:
    """An inline SVG bar chart: for each chapter, how many learners completed it."""
    chapters = [c.id for c in course.chapters]
    counts = [sum(1 for g in grades if c in g.completed) for c in chapters]
    learners = max(1, len(grades))
    bar, gap, height, top, bottom, left = 36, 14, 180, 20, 40, 36
    width = left + len(chapters) * (bar + gap) + gap
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{top + height + bottom}" role="img" '
        f'aria-label="Learners who completed each chapter">',
        f'<line x1="{left}" y1="{top + height}" x2="{width}" y2="{top + height}" stroke="#888"/>',
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" font-size="11">{learners}</text>',
        f'<text x="{left - 6}" y="{top + height}" text-anchor="end" font-size="11">0</text>',
    ]
    for index, (chapter, count) in enumerate(zip(chapters, counts, strict=True)):
        x = left + gap + index * (bar + gap)
        h = round(height * count / learners)
        parts.append(
            f'<rect x="{x}" y="{top + height - h}" width="{bar}" height="{h}" fill="#3f7fbf">'
            f"<title>{_e(chapter)}: {count} of {len(grades)}</title></rect>"
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{top + height - h - 4}" text-anchor="middle" '
            f'font-size="11">{count}</text>'
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{top + height + 16}" text-anchor="middle" '
            f'font-size="12">{_e(chapter)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


CELLS = {
    "done": ("✓", "every test passes"),
    "failing": ("✗", "tests fail (a bug, or code that does not import)"),
    "part": ("◐", "some pass, the rest wait for stubs"),
    "none": ("○", "not started: every test waits for a stub"),
}
"""Each kind of chapter cell: its mark (so the table reads without colour) and its meaning."""


def _cell_kind(passed: int, total: int, failing: int) -> str:
    if failing:
        return "failing"
    if total and passed == total:
        return "done"
    return "part" if passed else "none"


def _cell(passed: int, total: int, failing: int = 0) -> str:
    kind = _cell_kind(passed, total, failing)
    mark, meaning = CELLS[kind]
    extra = f" ({failing} failing)" if failing else ""
    return (
        f'<td class="{kind}" title="{_e(meaning)}{extra}">{mark} {passed}/{total}'
        f"{f' ✗{failing}' if failing else ''}</td>"
    )


def _legend() -> str:
    keys = "".join(
        f'<span><span class="key {kind}" style="background:{colour}"></span>{mark} {_e(text)}'
        "</span>"
        for kind, colour, (mark, text) in (
            (k, {"done": "#dff3df", "failing": "#fde2e1", "part": "#fff4d6", "none": "#fff"}[k], v)
            for k, v in CELLS.items()
        )
    )
    return f'<p class="legend muted">{keys}</p>'


def _status(grade: Grade) -> str:
    if grade.status != "ok":
        return f'<span class="status-bad">{_e(grade.status)}</span>'
    if not grade.started:
        return '<span class="status-idle">not started</span>'
    return '<span class="status-ok">ok</span>'


def most_failed(grades: Sequence[Grade], limit: int = 10) -> list[tuple[str, int, str]]:
    """The tests that fail for the most learners: ``(test, learners, a typical message)``."""
    counts: dict[str, int] = {}
    messages: dict[str, dict[str, int]] = {}
    for grade in grades:
        for test in {f.test for f in grade.failures}:
            counts[test] = counts.get(test, 0) + 1
        for failure in grade.failures:
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
    out.append('<div class="scroll"><table><thead><tr><th>submission</th>')
    out += [f"<th>{_e(c)}</th>" for c in chapters]
    out.append(
        "<th>passed</th><th>todo</th><th>failing</th><th>status</th><th>seconds</th>"
        '<th class="where">where they are</th>'
    )
    out.append("</tr></thead><tbody>")
    for grade in grades:
        by_id = {c.chapter: c for c in grade.chapters}
        out.append(
            f'<tr><td><a href="#{_anchor(grade.submission)}">{_e(grade.submission)}</a></td>'
        )
        for chapter in chapters:
            score = by_id.get(chapter)
            out.append(_cell(score.passed, score.total, score.failing) if score else "<td></td>")
        out.append(
            f"<td>{grade.passed}/{grade.total}</td><td>{grade.todo}</td>"
            f"<td>{grade.failing}</td><td>{_status(grade)}</td>"
            f'<td>{grade.seconds:.1f}</td><td class="where">{_e(grade.standing)}</td>'
            "</tr>"
        )
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
    """One learner's section: status, chapters, and each failing test with its line."""
    out = [
        f'<section class="learner" id="{_anchor(grade.submission)}">',
        f"<h3>{_e(grade.submission)}</h3>",
        f"<p>{grade.passed} of {grade.total} tests pass, {grade.todo} todo, "
        f"{grade.failing} failing; status {_status(grade)} "
        f'<span class="muted">({grade.seconds:.1f} s)</span></p>',
        f"<p><strong>{_e(grade.standing)}</strong></p>",
    ]
    if grade.detail:
        out.append(f"<pre>{_e(grade.detail)}</pre>")
    done = grade.completed
    out.append(f"<p>Chapters completed: {_e(', '.join(done)) if done else 'none'}.</p>")
    if grade.failures:
        out.append("<p>Failing:</p><ul>")
        for failure in grade.failures[:MAX_FAILURES_SHOWN]:
            where = f" at <code>{_e(failure.where)}</code>" if failure.where else ""
            out.append(
                f"<li><code>{_e(failure.test)}</code> ({_e(failure.outcome)}){where}"
                f"<pre>{_e(failure.message)}</pre></li>"
            )
        out.append("</ul>")
        hidden = len(grade.failures) - MAX_FAILURES_SHOWN
        if hidden > 0:
            out.append(f'<p class="muted">... and {hidden} more in gradebook.json.</p>')
    out.append("</section>")
    return "\n".join(out)
