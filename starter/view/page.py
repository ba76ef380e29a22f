"""The page of a ``SessionView``: one HTML file, no script, nothing fetched, every text escaped.

The rule that shapes this module: a transcript is data written by a model, its tools and
whatever they read, so every character of it that reaches the page goes through ``shown``,
which cuts what is too long with a note, replaces what UTF-8 cannot hold, shows control
characters as escapes and escapes HTML. Nothing from a transcript ever becomes a tag, an
attribute or a link. The Content-Security-Policy that allows no script is a second wall.
Folding is ``<details>``; light and dark are one ``prefers-color-scheme`` rule.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from ..display import arguments_text, one_line, terminal_text
from ..todo import Todo
from ..types import TokenUsage
from .model import Call, CompactionEntry, Entry, Rewind, SessionView, Subagent

SHOWN_CHARS = 20_000
"""The most characters of one text (a prompt, an answer, a tool's result) the page shows."""


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    r"""``text`` as inert HTML: cut to ``limit`` characters, control characters shown, escaped.

    A text longer than ``limit`` keeps its first ``limit`` characters and ends with a line
    ``[… N more characters not shown]``. What UTF-8 cannot hold (a lone surrogate) becomes
    U+FFFD; each control character but tab and newline is shown as its escape (``\x1b``), as
    the terminal shows it (``display.terminal_text``); then ``<``, ``>``, ``&`` and quotes are
    escaped, so nothing in it can open or close a tag, a comment or an attribute.
    """
    raise Todo(
        "ch31",
        "cut with a note of how much, lone surrogates to U+FFFD, terminal_text, escape",
    )


def diff_html(text: str) -> str:
    """``text`` as ``shown`` makes it, with the lines of a diff in it marked by their kind.

    A diff starts at a line beginning with ``*** Begin Patch`` (chapter 9b's patches) or with
    ``--- `` when the next line begins with ``+++ `` (a unified diff, chapter 9a's ``edit``).
    From there on, a line starting with ``+`` is wrapped in ``<ins>``, with ``-`` in
    ``<del>``, with ``@@`` in ``<span class="hunk">``; a line starting with ``--- `` or
    ``+++ `` (a file's header) is not. Each line is escaped (``shown``) before it is wrapped.
    """
    raise Todo(
        "ch31",
        "shown() first; find where the diff starts; then wrap +, -, @@ lines after it",
    )


def usage_text(usage: TokenUsage | None) -> str:
    """A step's or a session's spending in words: tokens in and out, and the cost if known."""
    if usage is None:
        return "no usage recorded"
    cost = "cost unknown" if usage.cost is None else f"${usage.cost:.4f}"
    return f"{usage.input_tokens:,} tokens in, {usage.output_tokens:,} out · {cost}"


STYLE = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1d1d1f; --muted: #6b6b70;
  --box: #f1f1f3; --line: #d6d6db; --add: #dcf5e0; --add-fg: #14532d; --del: #fde2e1;
  --del-fg: #7f1d1d; --hunk: #5b3fa8; --error: #b42318; --accent: #0b63c5; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #16171a; --fg: #e6e6e9; --muted: #9a9aa2; --box: #212227; --line: #3a3b42;
    --add: #123820; --add-fg: #b7f0c4; --del: #481a1a; --del-fg: #ffc9c6; --hunk: #b9a3ff;
    --error: #ff8a80; --accent: #7cb6ff; } }
* { box-sizing: border-box; }
body { margin: 0 auto; padding: 1rem; max-width: 60rem; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
.meta, .usage { color: var(--muted); font-size: .85rem; }
section.turn { border-top: 1px solid var(--line); padding: .5rem 0; }
.prompt { background: var(--box); border-left: 4px solid var(--accent); padding: .5rem .75rem; }
.answer { padding: .25rem 0; }
pre { margin: .25rem 0; padding: .5rem; background: var(--box); border-radius: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.45 ui-monospace, Menlo, monospace; }
.prompt pre, .answer pre { background: none; padding: 0; font-family: inherit; font-size: inherit; }
details { margin: .25rem 0; border: 1px solid var(--line); border-radius: 4px;
  padding: .25rem .5rem; }
summary { cursor: pointer; overflow-wrap: anywhere; white-space: pre-wrap; }
summary code { font-weight: 600; }
.error > summary { color: var(--error); }
section.subagent { margin: .5rem 0 .5rem .75rem; padding-left: .75rem;
  border-left: 3px solid var(--hunk); }
.note { color: var(--muted); font-style: italic; margin: .25rem 0; }
ins, del { text-decoration: none; display: inline-block; width: 100%; }
ins { background: var(--add); color: var(--add-fg); }
del { background: var(--del); color: var(--del-fg); }
.hunk { color: var(--hunk); }
"""
"""The page's whole style: light colours, dark ones when the reader's system prefers them."""

POLICY = "default-src 'none'; style-src 'unsafe-inline'"
"""The page's Content-Security-Policy: its inline style, and nothing else (no script at all)."""


def arguments_block(arguments: dict[str, Any]) -> str:
    """A call's arguments, one a line: ``name: value``; a value of several lines starts below.

    A string is shown as itself (a file's content or a patch reads line by line, and a diff in
    it can be coloured); any other value as JSON.
    """
    lines: list[str] = []
    for name, value in arguments.items():
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        )
        lines.append(f"{name}:\n{text}" if "\n" in text else f"{name}: {text}")
    return "\n".join(lines)


def render_call(call: Call) -> str:
    """A tool call, folded: its name and arguments on the summary line, all of it inside.

    Inside: the arguments (``arguments_block``), the subagents it started, then the result,
    or a note that none was recorded; each text through ``diff_html``, so a diff is coloured.
    """
    raise Todo(
        "ch31",
        "<details> (class \"error\"), <summary>: name, one-line arguments, seconds/error",
    )


def render_subagent(child: Subagent) -> str:
    """A subagent's run: a section of its own, open, with its steps inside."""
    return (
        f'<section class="subagent"><details open><summary>subagent '
        f"<code>{shown(child.agent_id)}</code></summary>"
        f"{render_entries(child.entries)}</details></section>"
    )


def render_entries(entries: Sequence[Entry]) -> str:
    """A turn's (or a subagent's) steps and compactions, in order."""
    raise Todo(
        "ch31",
        "a compaction's note; each step: its usage line, its texts and calls, in order",
    )


def render(view: SessionView) -> str:
    """The whole page of ``view``: header with the totals, then each turn and rewind."""
    body: list[str] = []
    number = 0
    for item in view.items:
        if isinstance(item, Rewind):
            body.append(
                f'<p class="note">rewound the {shown(item.what, 40)} to before prompt '
                f"{item.prompt}</p>"
            )
            continue
        number += 1 if item.prompt is not None else 0
        prompt = "(before the first prompt)" if item.prompt is None else shown(item.prompt)
        finish = f'<p class="note">finished: {shown(item.finish, 80)}</p>' if item.finish else ""
        body.append(
            f'<section class="turn"><div class="prompt"><div class="usage">prompt {number}'
            f"</div><pre>{prompt}</pre></div>{render_entries(item.entries)}\n{finish}</section>"
        )
    unpriced = (
        f" (cost unknown for {view.unpriced} step(s))" if view.unpriced and view.total.cost else ""
    )
    notices = "".join(f'<p class="note">{shown(notice, 2000)}</p>' for notice in view.notices)
    title = f"claw session {shown(view.id, 100)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f'<header><h1>{title}</h1><div class="meta">{shown(view.cwd, 500)} · started '
        f'{shown(view.started, 100)}</div><div class="usage">total: {usage_text(view.total)}'
        f"{unpriced}</div>{notices}</header>\n" + "\n".join(body) + "\n</body></html>\n"
    )
