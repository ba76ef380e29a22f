"""The book's pages in a real browser: a wide table says it scrolls, and text can be read.

Material wraps each table in a box that scrolls sideways (``md-typeset__scrollwrap``); the pages
here are built the way Material's script leaves them, with Material's own stylesheets, the
book's ``extra.css`` and its ``tables.js``, and Chromium draws them in a frame 390 or 1280 px
wide (its window is never 390 px wide), in the light and the dark scheme.
"""

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import material
import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "book" / "assets"
STYLESHEETS = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AA = 4.5

WIDE = (
    "<tr>"
    + "".join(f"<td><code>column_{n}_with_a_long_name</code></td>" for n in range(4))
    + "</tr>"
)
NARROW = "<tr><td>0</td><td>done</td></tr>"

TABLES = """
const boxes = [...document.querySelectorAll('.md-typeset__scrollwrap')].map(box => ({
  id: box.id, scrolls: box.classList.contains('clawbook-scrolls'),
  cue: getComputedStyle(box, '::before').content,
  cut: box.scrollWidth > box.clientWidth}));
const code = Object.fromEntries([...document.querySelectorAll('pre > code')].map(c =>
  [c.parentElement.parentElement.id, c.scrollWidth > c.clientWidth]));
return {boxes: boxes, code: code};
"""

LONG = '"' + ", ".join(f"item_{n}" for n in range(12)) + '"'
CODE = "".join(
    f'<div class="language-{language} highlight" id="{language}"><pre><span></span>'
    f"<code>{LONG}</code></pre></div>"
    for language in ("json", "python")
)

HELPERS = """
function lum(c) { const m = c.match(/[\\d.]+/g).map(Number); const f = v => { v /= 255;
  return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]); }
function bg(el) { for (; el; el = el.parentElement) {
  const b = getComputedStyle(el).backgroundColor; const a = b.match(/[\\d.]+/g);
  if (a.length < 4 || Number(a[3]) > 0) return b; }
  return 'rgb(255, 255, 255)'; }
"""
"""What every probe may call: a colour's relative luminance, the background under an element."""

CONTRAST = """
return {texts: [...document.querySelectorAll('[data-text]')].map(el => {
  const l = [lum(getComputedStyle(el).color), lum(bg(el))].sort();
  return [el.dataset.text, (l[1] + 0.05) / (l[0] + 0.05)]; })};
"""

READ = """
<p><a data-text="link" href="#">a link</a></p>
<p><a data-text="button" class="md-button" href="#">Reset quiz</a></p>
<div class="highlight"><pre><span></span><code><span data-text="number" class="mi">200</span>
<span data-text="built-in" class="nb">str</span> <span data-text="self" class="bp">self</span>
</code></pre></div>
"""


DIAGRAM = """
<pre class="clawbook-diagram">flowchart TD
  A[tasks] -->|one job each| B[worker]</pre>
"""

EDGE = """
const label = document.querySelector('.clawbook-diagram .edgeLabel p') ||
  document.querySelector('.clawbook-diagram .edgeLabel');
if (!label) return {texts: []};
const l = [lum(getComputedStyle(label).color), lum(bg(label))].sort();
return {texts: [[label.textContent, (l[1] + 0.05) / (l[0] + 0.05)]]};
"""


def page(scheme: str, body: str, probe: str, scripts: tuple[str, ...] = ("tables.js",)) -> str:
    """A Material page in ``scheme`` holding ``body``; ``probe`` (a function body) reports.

    It reports once the page has loaded and any diagram has been drawn (``svg`` in its frame).
    """
    sheets = [*STYLESHEETS.glob("main.*.css"), *STYLESHEETS.glob("palette.*.css")]
    links = "".join(f'<link rel="stylesheet" href="{p.as_uri()}">' for p in sheets)
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width">'
        f'{links}<link rel="stylesheet" href="{(ASSETS / "extra.css").as_uri()}"></head>'
        f'<body data-md-color-scheme="{scheme}" data-md-color-primary="deep-orange" '
        'data-md-color-accent="amber"><div class="md-content">'
        f'<article class="md-content__inner md-typeset">{body}</article></div>'
        + "".join(
            f'<script src="{(ASSETS / "javascripts" / name).as_uri()}"></script>'
            for name in scripts
        )
        + "<script>function report(tries) { const frame = document.querySelector("
        "'.clawbook-diagram'); if (frame && !frame.querySelector('svg') && tries > 0) {"
        "setTimeout(() => report(tries - 1), 100); return; }"
        f"const seen = (() => {{{HELPERS}{probe}}})();"
        "seen.width = innerWidth; parent.postMessage(JSON.stringify(seen), '*'); }"
        "addEventListener('load', () => setTimeout(() => report(50), 50));</script></body></html>"
    )


def seen_in_chromium(tmp_path: Path, text: str, width: int) -> dict:
    """What the probe of the page ``text`` reported, drawn in a frame ``width`` px wide."""
    (tmp_path / "page.html").write_text(text)
    host = tmp_path / "host.html"
    host.write_text(
        f'<!DOCTYPE html><html><body><pre id="r"></pre><iframe src="page.html" '
        f'width="{width}" height="600"></iframe><script>addEventListener("message",e=>'
        '{document.getElementById("r").textContent=e.data})</script></body></html>'
    )
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
               "--allow-file-access-from-files", "--virtual-time-budget=5000",
               f"--window-size={width + 100},700", "--dump-dom", host.as_uri()]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, timeout=100).stdout
    found = re.search(r'<pre id="r">(.*?)</pre>', out, flags=re.S)
    assert found and found[1], out[-2000:]
    seen = json.loads(html.unescape(found[1]))
    assert seen["width"] == width, seen
    return seen


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: the page is not opened")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("width", [390, 1280])
def test_book_a_table_wider_than_the_screen_says_it_scrolls_and_json_wraps(tmp_path, width):
    tables = "".join(
        f'<div class="md-typeset__scrollwrap" id="{name}"><div class="md-typeset__table">'
        f"<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>{row}</tbody></table>"
        "</div></div>"
        for name, row in (("wide", WIDE), ("narrow", NARROW))
    )
    text = page("default", f"<p>Text.</p>{tables}{CODE}", TABLES)
    seen = seen_in_chromium(tmp_path, text, width)
    boxes = {box["id"]: box for box in seen["boxes"]}
    # The four wide columns are cut at 390 px and fit at 1280 px: the cue says which.
    assert boxes["wide"]["cut"] == (width == 390), boxes
    for box in boxes.values():
        assert box["scrolls"] == box["cut"], boxes
        cue = '"↔ scroll sideways for the whole table"' if box["cut"] else "none"
        assert box["cue"] == cue, boxes
    # On a phone a JSON example wraps; Python keeps its lines and scrolls.
    assert seen["code"] == {"json": False, "python": width == 390}, seen["code"]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: the page is not opened")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["default", "slate"], ids=["light", "dark"])
def test_book_links_buttons_and_code_read_in_both_schemes(tmp_path, scheme):
    seen = seen_in_chromium(tmp_path, page(scheme, READ, CONTRAST), 390)
    texts = dict(seen["texts"])
    assert set(texts) == {"link", "button", "number", "built-in", "self"}, texts
    low = {name: round(ratio, 2) for name, ratio in texts.items() if ratio < AA}
    assert low == {}, (scheme, low)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: the page is not opened")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["default", "slate"], ids=["light", "dark"])
def test_book_a_diagrams_arrow_labels_read_in_both_schemes(tmp_path, scheme):
    scripts = ("mermaid.min.js", "diagrams.js")
    seen = seen_in_chromium(tmp_path, page(scheme, DIAGRAM, EDGE, scripts), 390)
    assert [text for text, _ in seen["texts"]] == ["one job each"], seen
    assert seen["texts"][0][1] >= AA, (scheme, seen["texts"])
