"""MkDocs hooks: the parts of the book that come from ``chapters.toml`` and ``solution/``.

* the navigation, by parts, from the chapter list;
* each chapter's title and its header card (files to edit, tests, time, notebook);
* the chapter map in the overview (``<!-- clawbook:chapter-map -->``);
* ``.cache/book-src/solution``: the solution with chapter markers removed, which the snippets
  extension includes code from, so the book shows exactly the tested code and never a marker.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from clawbook.course import stubgen
from clawbook.course.chapters import Chapter, Curriculum, load
from clawbook.harness.runner import chapter_test_files, pytest_command

ROOT = Path(__file__).resolve().parents[2]
BOOK_SOURCE = ROOT / ".cache" / "book-src"
CHAPTER_MAP = "<!-- clawbook:chapter-map -->"
CLOSING = "where-next.md"
"""The page after the last chapter: where a learner goes from here."""
ROMAN = ["0", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]


def number(chapter: Chapter) -> str:
    """The chapter's number as the book prints it: ``ch05a`` is ``5a``."""
    return chapter.id.removeprefix("ch").lstrip("0") or "0"


def notebook_for(chapter: Chapter, docs_dir: Path) -> str | None:
    """The companion notebook of a chapter, relative to the book, if it has one."""
    if chapter.page is None:
        return None
    candidate = f"notebooks/{Path(chapter.page).stem}.ipynb"
    return candidate if (docs_dir / candidate).exists() else None


def _heading(page: Path) -> str:
    """A page's first ``# `` heading (its title), or its file name without the suffix."""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page.stem


def build_nav(curriculum: Curriculum, docs_dir: Path) -> list[Any]:
    """Home, one section per part with its written chapters, then the appendices.

    An appendix is any page ``appendix-*.md``; it is not a chapter, so it writes its own title.
    ``CLOSING`` ends the learner's path between the last part and the appendices, so the last
    chapter's "Next" leads there and not to an appendix written for instructors.
    The notebooks are not in the navigation: each is a companion of its chapter, linked from
    the chapter's card, and listing them again doubled the menu.
    """
    nav: list[Any] = [{"Home": "index.md"}]
    for part in curriculum.parts:
        written = [c for c in curriculum.written if c.part == part.number]
        if written:
            title = f"Part {ROMAN[part.number]} · {part.title}"
            nav.append({title: [{f"{number(c)} · {c.title}": c.page} for c in written]})
    if (docs_dir / CLOSING).exists():
        nav.append({_heading(docs_dir / CLOSING): CLOSING})
    appendices = [{_heading(p): p.name} for p in sorted(docs_dir.glob("appendix-*.md"))]
    if appendices:
        nav.append({"Appendices": appendices})
    return nav


def write_book_source() -> None:
    """Render the marker-free solution that the book's snippets include."""
    files = stubgen.render_tree(ROOT / "solution", keep=_all_ids(), for_book=True)
    stubgen.write_tree(files, BOOK_SOURCE / "solution")


def _all_ids() -> set[str]:
    return {c.id for c in load().chapters}


def count_tests(chapter: Chapter) -> int:
    """How many tests the chapter has, counted as pytest and ``clawbook check`` count them.

    A parametrized test counts once per case, so the card shows the number the learner will see.
    """
    counts = collected_counts()
    return sum(counts.get(path, 0) for path in chapter_test_files(chapter))


_COLLECTED: dict[tuple[tuple[str, int], ...], dict[str, int]] = {}


def collected_counts() -> dict[str, int]:
    """Test cases per test file, from one ``pytest --collect-only`` of the whole suite.

    Kept while no test file changes, so ``mkdocs serve`` does not collect on every rebuild.
    """
    files = sorted(ROOT.glob("tests/test_*.py"))
    key = tuple((f.name, f.stat().st_mtime_ns) for f in files)
    if key not in _COLLECTED:
        env = {**os.environ, "CLAW_IMPL": "solution"}
        env.pop("CLAW_IMPL_PATH", None)
        completed = subprocess.run(
            pytest_command(
                "--collect-only", "-q", *(f.relative_to(ROOT).as_posix() for f in files)
            ),
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            tail = "\n".join(completed.stdout.strip().splitlines()[-10:])
            raise PluginError(f"cannot count the tests for the chapter cards:\n{tail}")
        counts = Counter(
            line.split("::")[0] for line in completed.stdout.splitlines() if "::" in line
        )
        _COLLECTED.clear()
        _COLLECTED[key] = dict(counts)
    return _COLLECTED[key]


def test_files_text(chapter: Chapter) -> str:
    """The chapter's test files for its card; three or more of one prefix as one pattern.

    ``tests/test_multi_tool_*.py (4 files)`` fits a phone's width where four long names do not.
    """
    paths = chapter_test_files(chapter)
    shown: list[str] = []
    for prefix in sorted(chapter.tests, key=len, reverse=True):
        mine = [p for p in paths if Path(p).name.startswith(prefix.rstrip("_"))]
        paths = [p for p in paths if p not in mine]
        if len(mine) > 2:
            shown.append(f"`tests/{prefix}*.py` ({len(mine)} files)")
        else:
            shown += [f"`{p}`" for p in mine]
    shown += [f"`{p}`" for p in paths]
    return ", ".join(sorted(shown))


def kicker(chapter: Chapter, curriculum: Curriculum) -> str:
    """The line above a chapter's title: its number and its part, ``Chapter 5a · Part I``.

    The number sits in its own span: the line is set in capitals, and ``5A`` is not the
    chapter's name. The part's title follows on a wide screen only.
    """
    part = next(p for p in curriculum.parts if p.number == chapter.part)
    where = "Start here" if part.number == 0 else f"Part {ROMAN[part.number]}"
    return f'Chapter <span class="chapter-number">{number(chapter)}</span> · {where}' + (
        "" if part.number == 0 else f'<span class="part-title"> · {part.title}</span>'
    )


def chapter_card(
    chapter: Chapter, docs_dir: Path, page_path: str, curriculum: Curriculum | None = None
) -> str:
    """The header of a chapter page: the title and a card of facts from ``chapters.toml``."""
    curriculum = curriculum or load()
    rows: list[tuple[str, str]] = []
    if chapter.files:
        rows.append(("You edit", ", ".join(f"`starter/{f}`" for f in chapter.files)))
    else:
        rows.append(("You edit", "nothing: this is a reading chapter"))
    if chapter.tests:
        rows.append(("Tests", f"{count_tests(chapter)} tests in {test_files_text(chapter)}"))
        rows.append(("Run them", f"`clawbook check {chapter.id}`"))
    rows.append(("Time", f"about {chapter.minutes} minutes"))
    if chapter.teaches:
        rows.append(("You learn", chapter.teaches))
    notebook = notebook_for(chapter, docs_dir)
    if notebook:
        depth = page_path.count("/")
        rows.append(("Notebook", f"[try it interactively]({'../' * depth}{notebook})"))
    table = "\n".join(f"| {key} | {value} |" for key, value in rows)
    return (
        f'<p class="chapter-kicker">{kicker(chapter, curriculum)}</p>\n\n'
        f"# {chapter.title}\n\n"
        f'<div class="chapter-card" markdown>\n\n| | |\n|---|---|\n{table}\n\n</div>\n\n'
    )


def chapter_map(curriculum: Curriculum) -> str:
    """A table per part: every chapter, linked once it is written, with what it teaches."""
    out: list[str] = []
    for part in curriculum.parts:
        out.append(f"**Part {ROMAN[part.number]} · {part.title}**\n")
        out.append("| | Chapter | You build | Python ideas | Time |")
        out.append("|---|---|---|---|---|")
        for c in (c for c in curriculum.chapters if c.part == part.number):
            if c.page:
                title = f"[{c.title}]({c.page})"
            else:
                title = f'{c.title} <span class="coming-soon">(coming soon)</span>'
            files = ", ".join(f"`{f}`" for f in c.files) or "–"
            out.append(f"| {number(c)} | {title} | {files} | {c.teaches} | {c.minutes} min |")
        out.append("")
    return "\n".join(out)


NOTEBOOK_LOGGERS = ("mkdocs.plugins.mkdocs_jupyter", "mkdocs.mkdocs-jupyter")
"""mkdocs-jupyter's loggers: at INFO they say, for every notebook, that it was converted, cached
and copied (about 80 lines a build, which hid the lines that matter)."""


def quiet_notebook_plugin() -> None:
    """Keep mkdocs-jupyter to its warnings, unless mkdocs itself was asked for more (``-v``)."""
    if logging.getLogger("mkdocs").getEffectiveLevel() >= logging.INFO:
        for name in NOTEBOOK_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)


# ---------------------------------------------------------------- MkDocs event handlers


def on_config(config: Any) -> Any:
    """Write the book's copy of the solution and build the navigation from the chapter list."""
    quiet_notebook_plugin()
    write_book_source()
    config["nav"] = build_nav(load(), Path(config["docs_dir"]))
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Add a chapter's title and card, and the chapter map where a page asks for it."""
    src = page.file.src_uri
    docs_dir = Path(config["docs_dir"])
    curriculum = load()
    for chapter in curriculum.written:
        if chapter.page == src:
            markdown = chapter_card(chapter, docs_dir, src, curriculum) + markdown
            break
    if CHAPTER_MAP in markdown:
        markdown = markdown.replace(CHAPTER_MAP, chapter_map(curriculum))
    return learner_paths(markdown)


SOLUTION_CAPTION = re.compile(r'(title=")solution/')


def learner_paths(markdown: str) -> str:
    """Caption included code with the file the learner has: ``starter/...``, not ``solution/...``.

    The code comes from ``solution/`` (the single source of truth), but a learner works in
    ``starter/`` and may not have ``solution/`` at all; given code is the same in both.
    """
    return SOLUTION_CAPTION.sub(r"\1starter/", markdown)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Keep the notebooks out of the search index: the chapter is the page a search should find.

    A notebook repeats its chapter's words, so it ranked above the chapter it belongs to.
    """
    if page.file.src_uri.endswith(".ipynb"):
        page.meta["search"] = {"exclude": True}
    return html
