"""The grade report (``report.html``) as an instructor reads it, from rows built without grading.

Nothing is graded here (``test_grade.py`` grades a class once, end to end): each row comes from
``grade._score`` fed with constructed test results, or is written by hand, and the page is read
back. Its colours are computed from its own style sheet, with a small cascade (selectors,
specificity, inheritance, ``var()``) for every piece of text in both colour schemes, at a
desktop's and a phone's width. Where Chromium is installed, one test also opens the page in it.
"""

import html
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from clawbook.course.chapters import load
from clawbook.harness.report import Location, Outcome, Problem, TestResult
from clawbook.harness.runner import Run
from clawbook.instructor import grade, gradebook, reference, sandbox
from clawbook.instructor.gradereport import STYLE, render
from clawbook.instructor.rows import ChapterScore, Failure, Grade, RowStatus

AA = 4.5
"""WCAG's least contrast for body text (level AA)."""


def course(*ids: str, bwrap: bool = True) -> reference.Course:
    """A course of the chapters ``ids`` with the expected tests left to the test."""
    curriculum = load()
    isolation = sandbox.Isolation("bwrap" if bwrap else None, None if bwrap else "not installed")
    return reference.Course(curriculum, [curriculum.get(i) for i in ids], isolation=isolation)


def result(
    nodeid: str, chapter: str, outcome: Outcome, message: str = "", where: str = ""
) -> TestResult:
    path, _, line = where.partition(":")
    return TestResult(
        nodeid, nodeid.split("::")[0], chapter, outcome, message=message or None,
        where=Location(path, int(line)) if where else None,
    )  # fmt: skip


def scored(c: reference.Course, name: str, results: list[TestResult], problems=()) -> Grade:
    """The row ``clawbook grade`` writes for a run that said ``results``."""
    run = Run(tuple(results), 1, "", problems=tuple(problems), collected=())
    return grade._score(c, name, [run], {r.nodeid: r for r in results})


SYNTAX = "SyntaxError: unmatched ']'"
MOCK = "tests/test_mock_provider.py"
AGENT = "tests/test_simple_agent.py"
AGENT_LINE = "starter/agent.py:40"
READING = ChapterScore("ch04", 38, 38, 0, 0, stubs=False)
"""A reading chapter: its tests pass on the untouched starter."""


def broken(c: reference.Course) -> Grade:
    """ch01's mock.py does not import: ch01's and ch03's tests stop there, ch02's do not."""
    c.expected = {
        "ch01": [f"{MOCK}::test_mock_a", f"{MOCK}::test_mock_b"],
        "ch02": ["tests/test_read_tool.py::test_read_c"],
        "ch03": [f"{AGENT}::test_agent_d", "tests/test_agent_cmd.py::test_agent_e"],
    }
    cause = f"cannot import starter/mock.py (line 53): {SYNTAX}"
    results = [
        result(MOCK, "ch01", Outcome.ERROR, cause, "starter/mock.py:53"),
        result("tests/test_read_tool.py::test_read_c", "ch02", Outcome.PASSED),
        result(AGENT, "ch03", Outcome.ERROR, cause, "starter/mock.py:53"),
        # A test that imports the package inside itself: pytest's own words for the same error.
        result("tests/test_agent_cmd.py::test_agent_e", "ch03", Outcome.FAILED,
               f"{SYNTAX} (mock.py, line 53)", "starter/streaming.py:28"),
    ]  # fmt: skip
    problem = Problem(Location("starter/mock.py", 53, "self.calls = []]"), SYNTAX, "claw.mock")
    return scored(c, "linus", results, [problem])


def row_of(page: str, name: str) -> str:
    """The table row of learner ``name``."""
    return page[page.index(f">{name}</a>") :].split("</tr>")[0]


def section_of(page: str, name: str) -> str:
    """The section of learner ``name``."""
    return page[page.index(f'<section class="learner" id="learner-{name}">') :].split("</section>")[
        0
    ]


def cells(row: str) -> list[str]:
    """The kinds of the chapter cells of a table row, in order."""
    return re.findall(r'<td class="(done|part|none|failing|blocked)"', row)


# ---------------------------------------------------------------- one cause, shown once


def test_grade_report_one_import_error_is_one_cause_shown_once():
    c = course("ch01", "ch02", "ch03")
    row = broken(c)
    assert row.status == RowStatus.CANNOT_IMPORT
    assert row.standing == "stuck at ch01: cannot import starter/mock.py (line 53)"
    assert row.to_json()["standing"] == row.standing
    # Every test the broken module stops counts as failing, and as blocked by that one cause.
    assert [(s.failing, s.blocked) for s in row.chapters] == [(2, 2), (0, 0), (2, 2)]
    page = render(c, [row])
    # Its own chapter is the one marked failing; a later chapter it stops is "blocked", not ✗.
    assert cells(row_of(page, "linus")) == ["failing", "done", "blocked"]
    assert "stuck at ch01: cannot import starter/mock.py (line 53)" in row_of(page, "linus")
    section = section_of(page, "linus")
    assert section.count("unmatched") == 1, section  # the message once, not once per test
    assert "stops 4 test(s) in ch01, ch03" in section
    assert "test_agent_e" not in section and "Failing:" not in section


def test_grade_gradescope_names_one_import_error_once_per_chapter():
    c = course("ch01", "ch02", "ch03")
    data = gradebook.gradescope_results(broken(c), c)
    ch01, ch02, ch03 = (t["output"] for t in data["tests"])
    stuck = "cannot run: stuck at ch01: cannot import starter/mock.py (line 53)"
    assert f"2 test(s) {stuck}." in ch01 and f"2 test(s) {stuck}." in ch03
    assert "test_agent_e" not in ch03 and "unmatched" not in ch03  # not once per test
    assert "cannot" not in ch02
    assert "stuck at ch01: cannot import starter/mock.py (line 53)." in data["output"]
    assert SYNTAX in data["output"]  # the message itself, once, in the detail


def test_grade_report_two_modules_that_do_not_import_are_each_named_once():
    c = course("ch01", "ch02", "ch03")
    c.expected = {
        "ch01": [f"{MOCK}::test_mock_a"],
        "ch02": ["tests/test_read_tool.py::test_read_c"],
        "ch03": [f"{AGENT}::test_agent_d"],
    }
    mock = f"cannot import starter/mock.py (line 53): {SYNTAX}"
    read = "cannot import starter/tools/read.py (line 9): NameError: name 'Pth' is not defined"
    results = [
        result(MOCK, "ch01", Outcome.ERROR, mock, "starter/mock.py:53"),
        result("tests/test_read_tool.py", "ch02", Outcome.ERROR, read, "starter/tools/read.py:9"),
        result(AGENT, "ch03", Outcome.ERROR, mock, "starter/mock.py:53"),
    ]
    problems = [
        Problem(Location("starter/mock.py", 53), SYNTAX),
        Problem(Location("starter/tools/read.py", 9), "NameError: name 'Pth' is not defined"),
    ]
    row = scored(c, "linus", results, problems)
    assert row.standing == "stuck at ch01: cannot import starter/mock.py (line 53)"
    causes = {f.test: f.cause for f in row.failures}
    assert causes["tests/test_read_tool.py"] == "cannot import starter/tools/read.py (line 9)"
    page = render(c, [row])
    # Each chapter whose own file does not import is ✗; the one only stopped by them is ⊘.
    assert cells(row_of(page, "linus")) == ["failing", "failing", "blocked"]
    section = section_of(page, "linus")
    assert section.count("unmatched") == 1 and section.count("Pth") == 1, section
    assert "2 modules do not import, which stops 3 test(s) in ch01, ch02, ch03" in section


def test_grade_report_a_redacted_row_keeps_its_one_cause():
    """The gradebook is written from redacted rows: the cause must survive, cleaned too."""
    row = broken(course("ch01", "ch02", "ch03"))
    clean = gradebook.redact(row, ["mock.py"])
    assert clean.standing == "stuck at ch01: cannot import starter/[redacted] (line 53)"
    assert [c.blocked for c in clean.chapters] == [2, 0, 2]
    assert {f.cause for f in clean.failures} == {"cannot import starter/[redacted] (line 53)"}


def test_grade_report_a_loop_is_stuck_at_its_chapter_and_shown_once():
    c = course("ch01", "ch02", "ch03")
    c.expected = {
        "ch01": [f"{MOCK}::test_mock_a"],
        "ch02": ["tests/test_read_tool.py::test_read_c"],
        "ch03": [f"{AGENT}::test_agent_d", f"{AGENT}::test_agent_f", f"{AGENT}::test_agent_g"],
    }
    results = [
        result(f"{MOCK}::test_mock_a", "ch01", Outcome.PASSED),
        result("tests/test_read_tool.py::test_read_c", "ch02", Outcome.PASSED),
        result(f"{AGENT}::test_agent_d", "ch03", Outcome.HUNG,
               "seems to loop forever: still running after 5 s", AGENT_LINE),
        result(f"{AGENT}::test_agent_f", "ch03", Outcome.HUNG,
               "test_agent_f seems to loop forever: nothing happened for 8 s", AGENT_LINE),
        result(f"{AGENT}::test_agent_g", "ch03", Outcome.PASSED),
    ]  # fmt: skip
    row = scored(c, "grace", results)
    assert row.status == RowStatus.HUNG
    assert row.standing.startswith("stuck at ch03: hung: test_agent_d: seems to loop forever")
    assert "starter/agent.py:40" in row.standing
    section = section_of(render(c, [row]), "grace")
    assert section.count("<li>") == 1  # two tests looping at one line: one entry naming both
    assert "test_agent_d" in section.split("<li>")[1] and "test_agent_f" in section


def test_grade_report_a_failure_of_its_own_is_not_hidden_behind_an_import_error():
    """A chapter stopped by the import error and failing on its own as well stays ✗."""
    c = course("ch01", "ch02", "ch03")
    row = broken(c)
    c.expected["ch02"].append("tests/test_read_tool.py::test_read_h")
    results = {f.test: f for f in row.failures}
    assert all(f.cause == "cannot import starter/mock.py (line 53)" for f in results.values())
    own = result("tests/test_read_tool.py::test_read_h", "ch02", Outcome.FAILED,
                 "AssertionError: 'a' != 'b'", "starter/tools/read.py:12")  # fmt: skip
    problem = Problem(Location("starter/mock.py", 53), SYNTAX)
    cause = f"cannot import starter/mock.py (line 53): {SYNTAX}"
    again = scored(
        c, "linus",
        [result(MOCK, "ch01", Outcome.ERROR, cause),
         result("tests/test_read_tool.py::test_read_c", "ch02", Outcome.PASSED), own,
         result(AGENT, "ch03", Outcome.ERROR, cause)],
        [problem],
    )  # fmt: skip
    page = render(c, [again])
    assert cells(row_of(page, "linus")) == ["failing", "failing", "blocked"]
    assert "test_read_h" in section_of(page, "linus")
    assert [f.test for f in again.failures if f.cause is None] == [own.nodeid]


# ---------------------------------------------------------------- a reading chapter


def test_grade_report_a_reading_chapter_is_not_completed_by_a_learner_who_has_not_started():
    c = course("ch01", "ch04")
    idle = Grade(
        "idle", RowStatus.OK,
        chapters=[ChapterScore("ch01", 0, 4, 4, 0), READING],
    )  # fmt: skip
    begun = Grade(
        "begun", RowStatus.OK,
        chapters=[ChapterScore("ch01", 4, 4, 0, 0), READING],
    )  # fmt: skip
    assert idle.completed == [] and begun.completed == ["ch01", "ch04"]
    page = render(c, [idle, begun])
    assert cells(row_of(page, "idle")) == ["none", "none"]
    assert cells(row_of(page, "begun")) == ["done", "done"]
    assert "<title>ch04: 1 of 2</title>" in page  # the chart counts only the learner who began
    assert "Chapters completed: none." in section_of(page, "idle")


# ---------------------------------------------------------------- colours, both schemes


@dataclass
class Element:
    tag: str
    classes: frozenset[str]
    first: bool
    attrs: dict[str, str] = field(default_factory=dict)
    children: int = 0


@dataclass(frozen=True)
class Rule:
    selector: str
    declarations: tuple[tuple[str, str], ...]
    media: str
    order: int


def parse_rules(css: str) -> list[Rule]:
    """Every rule of the sheet, with the media query it sits in ('' for none)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules: list[Rule] = []

    def block(text: str, media: str) -> None:
        at = 0
        while True:
            brace = text.find("{", at)
            if brace < 0:
                assert not text[at:].strip(), text[at:]
                return
            prelude = text[at:brace].strip()
            if prelude.startswith("@media"):
                depth, end = 1, brace + 1
                while depth:
                    depth += {"{": 1, "}": -1}.get(text[end], 0)
                    end += 1
                block(text[brace + 1 : end - 1], prelude.removeprefix("@media").strip())
                at = end
                continue
            end = text.index("}", brace)
            declarations = tuple(
                (name.strip(), value.strip())
                for name, _, value in (d.partition(":") for d in text[brace + 1 : end].split(";"))
                if name.strip()
            )
            for selector in prelude.split(","):
                rules.append(Rule(selector.strip(), declarations, media, len(rules)))
            at = end + 1

    block(css, "")
    return rules


def media_applies(media: str, dark: bool, narrow: bool) -> bool:
    if not media:
        return True
    if media == "(prefers-color-scheme: dark)":
        return dark
    if media == "(prefers-color-scheme: light)":
        return not dark
    match = re.fullmatch(r"\(max-width: ([\d.]+)rem\)", media)
    assert match, f"a media query this test cannot read: {media}"
    return narrow  # a phone is narrower than any of the sheet's breakpoints, a desktop wider


COMPOUND = re.compile(r"(?P<tag>[a-z][a-z0-9]*|\*)?(?P<rest>(?:[.:][\w-]+)*)$")


def matches_compound(compound: str, element: Element) -> bool:
    match = COMPOUND.match(compound)
    assert match, f"a selector this test cannot read: {compound}"
    if match["tag"] not in (None, "*", element.tag):
        return False
    for kind, name in re.findall(r"([.:])([\w-]+)", match["rest"]):
        if kind == "." and name not in element.classes:
            return False
        if kind == ":" and not (
            (name == "root" and element.tag == "html") or (name == "first-child" and element.first)
        ):
            return False
    return True


def matches(selector: str, path: list[Element]) -> bool:
    """Whether ``selector`` (compounds joined by descendant spaces) matches ``path[-1]``."""
    assert not re.search(r"[>+~]", selector), f"a combinator this test cannot read: {selector}"
    *ancestors, last = selector.split()
    if not matches_compound(last, path[-1]):
        return False
    at = len(path) - 1
    for compound in reversed(ancestors):
        at -= 1
        while at >= 0 and not matches_compound(compound, path[at]):
            at -= 1
        if at < 0:
            return False
    return True


def specificity(selector: str) -> tuple[int, int]:
    classes = len(re.findall(r"[.:][\w-]+", selector))
    tags = len(re.findall(r"(?:^|\s)[a-z][a-z0-9]*", selector))
    return classes, tags


def cascade(rules: list[Rule], path: list[Element], dark: bool, narrow: bool) -> dict[str, str]:
    """The declarations that win for ``path[-1]`` (by specificity, then order)."""
    won: dict[str, tuple[tuple[int, int], int, str]] = {}
    for rule in rules:
        if not media_applies(rule.media, dark, narrow) or not matches(rule.selector, path):
            continue
        for name, value in rule.declarations:
            key = (specificity(rule.selector), rule.order)
            if name not in won or key >= won[name][:2]:
                won[name] = (*key, value)
    return {name: value for name, (_s, _o, value) in won.items()}


def rgb(value: str) -> tuple[int, int, int] | None:
    value = value.strip().lower()
    named = {"white": "#ffffff", "black": "#000000"}
    value = named.get(value, value)
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        return tuple(int(ch * 2, 16) for ch in value[1:])  # type: ignore[return-value]
    if re.fullmatch(r"#[0-9a-f]{6}", value):
        return tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
    return None


def luminance(colour: tuple[int, int, int]) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


VOID = ("meta", "link", "br", "img", "input", "hr", "wbr")
UNSEEN = ("head", "title", "style", "script")
"""Elements whose text is never drawn (an SVG ``<title>`` is a tooltip)."""


class Texts(HTMLParser):
    """Every piece of visible text of a page, with the elements it sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.path: list[Element] = []
        self.found: list[tuple[str, list[Element]]] = []

    def handle_starttag(self, tag, attrs):
        parent = self.path[-1] if self.path else None
        element = Element(
            tag, frozenset((dict(attrs).get("class") or "").split()),
            first=parent is None or parent.children == 0, attrs=dict(attrs),
        )  # fmt: skip
        if parent is not None:
            parent.children += 1
        if tag not in VOID:
            self.path.append(element)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.path:
            if self.path.pop().tag == tag:
                break

    def handle_data(self, data):
        if data.strip() and not any(e.tag in UNSEEN for e in self.path):
            self.found.append((data.strip(), list(self.path)))


def colours(page: str, dark: bool, narrow: bool) -> list[tuple[str, str, str, float]]:
    """``(text, colour, background, contrast)`` for every visible text of ``page``.

    Colour is inherited (an SVG ``fill`` other than ``currentColor`` sets it for its text), the
    background is the nearest one drawn under the text; ``var()`` takes the value inherited at
    the element; the canvas follows ``color-scheme`` as browsers draw it.
    """
    rules = parse_rules(STYLE)
    parser = Texts()
    parser.feed(page)
    seen: list[tuple[str, str, str, float]] = []
    for text, path in parser.found:
        variables: dict[str, str] = {}
        colour = background = None
        scheme = ""
        for depth in range(1, len(path) + 1):
            won = cascade(rules, path[:depth], dark, narrow)
            variables.update({k: v for k, v in won.items() if k.startswith("--")})

            def value(raw: str, variables: dict[str, str] = variables) -> str:
                return re.sub(r"var\((--[\w-]+)\)", lambda m: variables[m[1]], raw)

            scheme = won.get("color-scheme", scheme) if depth == 1 else scheme
            if "color" in won:
                colour = value(won["color"])
            fill = path[depth - 1].attrs.get("fill")
            if fill and fill != "currentColor" and path[depth - 1].tag == "text":
                colour = fill
            for name in ("background", "background-color"):
                if name in won:
                    drawn = rgb(value(won[name]).split()[0])
                    if drawn is not None:
                        background = "#{:02x}{:02x}{:02x}".format(*drawn)
        dark_canvas = dark and "dark" in scheme
        colour = colour or ("#ffffff" if dark_canvas else "#000000")
        background = background or ("#121212" if dark_canvas else "#ffffff")
        fg, bg = rgb(colour), rgb(background)
        assert fg is not None and bg is not None, (text, colour, background)
        seen.append((text, colour, background, contrast(fg, bg)))
    return seen


def class_of_four() -> tuple[reference.Course, list[Grade]]:
    """Done, stuck (a loop), broken (an import error) and not started, graded without bwrap
    and interrupted: every kind of cell, status and warning the page has."""
    c = course("ch01", "ch02", "ch03", bwrap=False)
    linus = broken(c)
    scores = {cid: len(ids) for cid, ids in c.expected.items()}
    done = Grade(
        "ada", RowStatus.OK, chapters=[ChapterScore(k, n, n, 0, 0) for k, n in scores.items()]
    )
    stuck = Grade(
        "grace", RowStatus.HUNG, "test_agent_d: seems to loop forever at starter/agent.py:40",
        chapters=[ChapterScore("ch01", 2, 2, 0, 0), ChapterScore("ch02", 1, 1, 0, 0),
                  ChapterScore("ch03", 0, 2, 1, 1)],
        failures=[Failure(f"{AGENT}::test_agent_d", "ch03", Outcome.HUNG,
                                "seems to loop forever", "starter/agent.py:40")],
        stuck_in="ch03", cause="timeout: test_agent_d loops",
    )  # fmt: skip
    idle = Grade(
        "barbara", RowStatus.OK, chapters=[ChapterScore(k, 0, n, n, 0) for k, n in scores.items()]
    )
    half = Grade(
        "edsger", RowStatus.OK,
        chapters=[ChapterScore("ch01", 2, 2, 0, 0), ChapterScore("ch02", 0, 1, 0, 1),
                  ChapterScore("ch03", 1, 2, 1, 0)],
        failures=[Failure("tests/test_read_tool.py::test_read_c", "ch02", Outcome.FAILED,
                                "AssertionError: 'a' != 'b'", "starter/tools/read.py:9")],
    )  # fmt: skip
    return c, [done, stuck, linus, idle, half]


@pytest.mark.parametrize("narrow", [False, True], ids=["desktop", "phone"])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_grade_report_every_text_is_readable_in_both_colour_schemes(dark, narrow):
    c, rows = class_of_four()
    page = render(c, rows, complete=False)
    seen = colours(page, dark, narrow)
    kinds = {"warning", "pre", "failing", "blocked", "done", "part", "none", "muted"}
    assert kinds <= {k for k in kinds if f'class="{k}' in page or f"<{k}>" in page}
    assert len(seen) > 100
    low = [s for s in seen if s[3] < AA]
    assert not low, low[:10]
    # The page is drawn in the scheme asked for: dark text on light, or light text on dark.
    body = next(s for s in seen if s[0] == "Clawbook gradebook")
    assert (luminance(rgb(body[2])) < 0.05) == dark, body


# ---------------------------------------------------------------- layout


def test_grade_report_the_chart_shows_every_chapter_and_fits_a_phone():
    curriculum = load()
    chapters = reference.gradable_chapters(curriculum)
    c = reference.Course(curriculum, chapters, isolation=sandbox.Isolation("bwrap"))
    done = Grade("ada", RowStatus.OK, chapters=[ChapterScore(ch.id, 3, 3, 0, 0) for ch in chapters])
    page = render(c, [done])
    charts = re.findall(r"<svg [^>]*>.*?</svg>", page, flags=re.S)
    widths = [int(re.search(r'width="(\d+)"', svg)[1]) for svg in charts]
    # A phone 390 px wide, less the page's margins, holds each; 1280 px holds them side by side.
    assert widths and max(widths) <= 360, widths
    assert sum(widths) + 32 * (len(widths) - 1) <= 1152 or len(widths) <= 3
    titles = re.findall(r"<title>(ch\w+): 1 of 1</title>", "".join(charts))
    assert titles == [ch.id for ch in chapters]


def test_grade_report_table_scrolls_in_its_box_with_the_learner_column_fixed():
    c, rows = class_of_four()
    page = render(c, rows)
    rules = parse_rules(STYLE)
    html_ = Element("html", frozenset(), True)
    body = Element("body", frozenset(), False)
    box = Element("div", frozenset({"scroll"}), False)
    table = [Element("table", frozenset(), True), Element("tbody", frozenset(), False),
             Element("tr", frozenset(), True)]  # fmt: skip
    for narrow in (False, True):
        assert cascade(rules, [html_, body, box], False, narrow)["overflow-x"] == "auto"
        who = cascade(rules, [html_, body, box, *table, Element("td", frozenset({"who"}), True)],
                      False, narrow)  # fmt: skip
        assert who["position"] == "sticky" and who["left"] == "0", who
        assert who.get("background", "transparent") != "transparent"  # cells pass under it
    header = re.findall(r"<th[^>]*>([^<]+)</th>", page)
    # What an instructor reads first comes before "where they are" and the chapters.
    assert header[:6] == ["submission", "status", "passed", "todo", "failing", "where they are"]
    assert '<div class="scroll"><table>' in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

PROBE = """<script>
function lum(c){const m=c.match(/[\\d.]+/g).map(Number);const f=v=>{v/=255;
 return v<=0.03928?v/12.92:Math.pow((v+0.055)/1.055,2.4)};
 return 0.2126*f(m[0])+0.7152*f(m[1])+0.0722*f(m[2]);}
function bg(el){for(;el;el=el.parentElement){const b=getComputedStyle(el).backgroundColor;
 const a=b.match(/[\\d.]+/g);if(a.length<4||Number(a[3])>0)return b;}return 'rgb(255,255,255)';}
addEventListener('load',()=>{const low=[];const w=document.createTreeWalker(document.body,4);
 while(w.nextNode()){const t=w.currentNode;const el=t.parentElement;
  if(!t.textContent.trim()||el.closest('title'))continue;
  const fg=el.closest('svg')?getComputedStyle(el).fill:getComputedStyle(el).color;
  const l=[lum(fg),lum(bg(el))].sort();const r=(l[1]+0.05)/(l[0]+0.05);
  if(r<4.5)low.push([t.textContent.trim().slice(0,30),fg,bg(el),r.toFixed(2)]);}
 const charts=[...document.querySelectorAll('svg')].map(s=>s.getBoundingClientRect().right);
 const heads=[...document.querySelectorAll('.scroll th')].slice(0,5);
 const columns=Object.fromEntries(heads.map(h=>[h.textContent,h.getBoundingClientRect().right]));
 const box=document.querySelector('.scroll').getBoundingClientRect().right;
 const wrap=document.querySelector('.scroll');const note=document.querySelector('.swipe');
 const swipe={scrolls:wrap.scrollWidth>wrap.clientWidth+1,
  said:!!note&&getComputedStyle(note).display!=='none'};
 parent.postMessage(JSON.stringify({width:innerWidth,columns:columns,box:box,swipe:swipe,
  dark:matchMedia('(prefers-color-scheme: dark)').matches,charts:Math.max(0,...charts),
  scroll:document.documentElement.scrollWidth,low:low}),'*');});
</script>"""


def whole_course() -> tuple[reference.Course, list[Grade]]:
    """Every gradable chapter, one learner done and one not started: the widest chart."""
    curriculum = load()
    chapters = reference.gradable_chapters(curriculum)
    c = reference.Course(curriculum, chapters, isolation=sandbox.Isolation("bwrap"))
    done = Grade("ada", RowStatus.OK, chapters=[ChapterScore(k.id, 3, 3, 0, 0) for k in chapters])
    idle = Grade("bo", RowStatus.OK, chapters=[ChapterScore(k.id, 0, 3, 3, 0) for k in chapters])
    return c, [done, idle]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: the page is not opened")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_grade_report_in_chromium_fits_the_screen_and_reads_in_both_schemes(tmp_path, dark, width):
    """Chromium draws the page in a frame of ``width`` px (its window is never 390 px wide)."""
    for name, (c, rows) in {"four": class_of_four(), "whole": whole_course()}.items():
        page = render(c, rows, complete=False)
        (tmp_path / f"{name}.html").write_text(page.replace("</body>", PROBE + "</body>"))
        host = tmp_path / f"host-{name}.html"
        host.write_text(
            f'<!DOCTYPE html><html><body><pre id="r"></pre><iframe src="{name}.html" '
            f'width="{width}" height="800"></iframe><script>addEventListener("message",e=>'
            '{document.getElementById("r").textContent=e.data})</script></body></html>'
        )
        command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                   "--allow-file-access-from-files", "--virtual-time-budget=5000",
                   f"--window-size={width + 100},900", *(["--force-dark-mode"] if dark else []),
                   "--dump-dom", host.as_uri()]  # fmt: skip
        out = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
        found = re.search(r'<pre id="r">(.*?)</pre>', out, flags=re.S)
        assert found and found[1], out[-2000:]
        seen = json.loads(html.unescape(found[1]))
        assert seen["width"] == width and seen["dark"] == dark, seen
        assert seen["scroll"] <= width, (name, seen)  # nothing makes the page scroll sideways
        assert seen["charts"] <= width, (name, seen)  # every chapter's bar is on the screen
        # Who and the status columns show in the table's box before any swipe (its edge, not
        # the window's, cuts them off): the chapters may scroll.
        assert list(seen["columns"]) == ["submission", "status", "passed", "todo", "failing"]
        assert max(seen["columns"].values()) <= seen["box"] <= width, (name, seen)
        # A table that scrolls says so above it; one that fits says nothing.
        assert seen["swipe"]["said"] == seen["swipe"]["scrolls"], (name, width, seen["swipe"])
        assert seen["low"] == [], (name, seen["low"])
