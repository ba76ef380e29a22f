"""ch31 · Attacks: a hostile session renders inert and bounded.

Each test plants in a transcript what a hostile model, tool output or file name could put
there, renders it as ``claw view`` does, and parses the page with ``html.parser``: no
script element, no event-handler attribute, no link, nothing that loads, the structure intact,
and the size bounded.
"""

from pathlib import Path

from viewed import assert_inert, event, plant, prompt

from claw.events import StepUsage, ToolCalled, ToolResult
from claw.types import TokenUsage
from claw.view.model import build_view, read_records
from claw.view.page import SHOWN_CHARS, render, shown


def page_of(path: Path) -> str:
    """The page ``claw view`` makes of the transcript at ``path``."""
    return render(build_view(*read_records(path)))


def one_call(path: Path, name: str, arguments: dict[str, object], output: str) -> Path:
    """A transcript of one prompt with one tool call and its result."""
    return plant(
        path,
        prompt("look"),
        event(StepUsage(1, TokenUsage(input_tokens=1, output_tokens=1))),
        event(ToolCalled(1, "call-1", name, arguments)),
        event(ToolResult(1, "call-1", name, output, False, 0.5)),
    )


SCRIPT = '<script>alert(1)</script><img src=x onerror="alert(2)"><svg onload=alert(3)>'


def test_view_html_and_scripts_in_a_prompt_a_result_and_a_file_name_stay_text(
    tmp_path: Path,
) -> None:
    path = plant(
        tmp_path / "s.jsonl",
        prompt(f"read {SCRIPT}"),
        event(ToolCalled(1, "call-1", "read", {"path": f"{SCRIPT}.txt"})),
        event(ToolResult(1, "call-1", f"read{SCRIPT}", f"file says {SCRIPT}", False, 0.1)),
    )

    page = assert_inert(page_of(path))  # no script, img, svg handler: none of them is a tag

    text = page.all_text()
    assert f"read {SCRIPT}" in text  # the prompt, shown as the characters it is
    assert f"file says {SCRIPT}" in text
    assert f"path: {SCRIPT}.txt" in text  # the arguments
    assert "svg" not in {tag for tag, _ in page.tags}
    assert shown("\"'") == "&quot;&#x27;"  # quotes too: no text can end an attribute


def test_view_closing_tags_and_comment_ends_cannot_break_out_of_a_fold(tmp_path: Path) -> None:
    breakout = "</pre></details></section><!-- x --> --> ]]> <details open><summary>fake"
    path = one_call(tmp_path / "s.jsonl", "bash", {"command": breakout}, breakout)

    html = page_of(path)
    page = assert_inert(html)  # every element closed where it was opened

    assert page.details_depths == [0]  # still one fold, and no new one
    assert all("open" not in attrs for attrs in page.elements("details"))
    assert page.all_text().count(breakout) == 3  # summary, arguments and result: as text
    assert "<!--" not in html and "-->" not in html


def test_view_terminal_escapes_are_shown_as_escapes_never_kept(tmp_path: Path) -> None:
    hostile = (
        "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x07\x9b2J\u202e"
    )
    path = one_call(tmp_path / "s.jsonl", "bash", {"command": "ls\x1b[2K"}, hostile)

    html = page_of(path)
    page = assert_inert(html)

    assert not any(ch in html for ch in "\x1b\x07\x9b\u202e")
    text = page.all_text()
    assert r"\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07click" in text
    assert r"\x9b2J\u202e" in text
    assert page.elements("a") == []  # the OSC 8 link is not a link


def test_view_a_10_mb_tool_result_is_cut_with_a_note_of_how_much(tmp_path: Path) -> None:
    huge = "A" * 10_000_000
    path = one_call(tmp_path / "s.jsonl", "bash", {"command": "yes A"}, huge)

    html = page_of(path)

    assert len(html.encode()) < 60_000
    assert "[… 9,980,000 more characters not shown]" in assert_inert(html).all_text()
    assert shown("x" * SHOWN_CHARS) == "x" * SHOWN_CHARS  # exactly the limit: whole
    assert shown("x" * (SHOWN_CHARS + 1)).endswith("x\n[… 1 more characters not shown]")


def test_view_bytes_that_are_not_utf8_and_lone_surrogates_do_not_break_the_page(
    tmp_path: Path,
) -> None:
    bad_bytes = b'{"type":"message","message":{"role":"user","content":"caf\xe9 \xff\xfe!"}}\n'
    surrogate = b'{"type":"message","message":{"role":"user","content":"half \\ud800 pair"}}\n'
    path = plant(tmp_path / "s.jsonl", bad_bytes, surrogate)

    html = page_of(path)

    html.encode("utf-8")  # a lone surrogate would raise here
    text = assert_inert(html).all_text()
    assert "caf\ufffd \ufffd\ufffd!" in text
    assert "half \ufffd pair" in text


def test_view_a_javascript_url_is_never_a_link(tmp_path: Path) -> None:
    urls = (
        "[click me](javascript:alert(document.cookie)) "
        '<a href="javascript:alert(1)">x</a> JaVaScRiPt:alert(2) https://example.com'
    )
    path = one_call(tmp_path / "s.jsonl", "web_fetch", {"url": "javascript:alert(3)"}, urls)

    html = page_of(path)
    page = assert_inert(html)

    hrefs = [attrs for tag, attrs in page.tags if "href" in attrs or "src" in attrs]
    assert hrefs == [] and page.elements("a") == []
    assert "javascript:alert(1)" in page.all_text()  # shown, as text
