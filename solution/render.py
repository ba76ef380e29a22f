"""How the terminal app shows a run: markdown rendered as it streams, a line per tool call.

Rendering markdown needs the whole of a block: half a code fence or half a table renders as
something else. Re-rendering the whole answer at every chunk would cost time that grows with
the square of its length (a long answer arrives in thousands of chunks). So ``BlockSplitter``
cuts the stream into blocks, paragraphs and fenced code separated by blank lines, and
``MarkdownStream`` renders each completed block once, with ``rich``, as soon as it is
complete (blocks completed within ``PRINT_INTERVAL`` of the last print wait for the next one,
and are printed together); only the last, open block waits for more text.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import ClassVar

from markdown_it import MarkdownIt
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text

from .display import arguments_text, one_line, terminal_text
from .events import AssistantText, Event, RunFinished, SubagentEvent, ToolCalled, ToolResult
from .preview import SCREENFUL, cut_lines
from .streaming import TextDelta

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
"""A line that opens or closes a fenced code block: three or more backticks or tildes."""

CHANGING_TOOLS = frozenset({"edit", "write", "apply_patch"})
"""The tools whose result is (or ends with) a diff the user should see."""

PRINT_INTERVAL = 0.1
"""Seconds: blocks completed sooner than this after the last print wait to be printed together.

Each ``console.print`` has a cost of its own, apart from rendering; a fast stream completes
many blocks a second, more than anyone can read. At a terminal, a waiting block stays on
screen as plain text (in the live view) until it is printed."""


class BlockSplitter:
    """Cuts streamed markdown into complete blocks, looking at each character once.

    A block ends at a blank line outside a code fence, or at the line that closes a fence.
    """

    def __init__(self) -> None:
        """Start with nothing."""
        self.pending: list[str] = []
        """The complete lines of the open block."""
        self.partial = ""
        """The text after the last newline: a line still being streamed."""
        self.fence: str | None = None
        """The marker (```` ``` ````, ``~~~~``...) of the open code fence, if inside one."""

    def feed(self, text: str) -> list[str]:
        """Add streamed ``text``; return the blocks it completed, in order."""
        # region ch19: cut complete lines; a blank line outside a fence or a closing fence ends one
        # more: lines = (self.partial + text).split("\n"); the last piece is the new partial
        *lines, self.partial = (self.partial + text).split("\n")
        done: list[str] = []
        for line in lines:
            opener = FENCE.match(line)
            if self.fence is None and not line.strip():
                if self.pending:
                    done.append("\n".join(self.pending))
                    self.pending = []
                continue
            self.pending.append(line)
            if opener is None:
                continue
            marker = opener.group(1)
            if self.fence is None:
                self.fence = marker
            elif (
                marker[0] == self.fence[0]
                and len(marker) >= len(self.fence)
                and not line.strip()[len(marker) :].strip()  # a closing fence has no info string
            ):
                self.fence = None
                done.append("\n".join(self.pending))
                self.pending = []
        return done
        # endregion

    def close(self) -> str:
        """The rest: the open block with the unfinished line, once the stream has ended."""
        rest = "\n".join([*self.pending, self.partial]) if self.partial else "\n".join(self.pending)
        self.pending, self.partial, self.fence = [], "", None
        return rest


@cache
def code_lexer(name: str) -> Lexer | None:
    """The pygments lexer for the language ``name``, as ``Syntax`` finds it; built once."""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return None


@cache
def code_theme(name: str) -> SyntaxTheme:
    """The syntax theme called ``name``, built once (it caches each token's style)."""
    return Syntax.get_theme(name)


class SharedCodeBlock(CodeBlock):
    """``rich``'s code block, with each language's lexer and the theme built once.

    ``Syntax`` looks its lexer up by name (a search through every lexer pygments has) and
    builds its theme anew for every block; an answer with hundreds of code blocks paid for both
    each time. And when every line fits, the block is rendered in one piece rather than wrapped
    line by line: the lines are the same.
    """

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The code, highlighted as ``CodeBlock`` does it."""
        code = str(self.text).rstrip()
        width = options.max_width - 2  # the padding of one column on each side
        wrap = "\t" in code or any(cell_len(line) > width for line in code.split("\n"))
        lexer = code_lexer(self.lexer_name)
        yield Syntax(
            code,
            self.lexer_name if lexer is None else lexer,
            theme=code_theme(self.theme),
            word_wrap=wrap,
            padding=1,
        )


class BlockMarkdown(Markdown):
    """``rich``'s ``Markdown`` for one block, with one parser shared by all blocks.

    ``Markdown.__init__`` builds a new ``MarkdownIt`` parser each time, which costs more than
    parsing a short block; an answer of two thousand blocks would pay for it two thousand
    times. This sets the same attributes with a parser built once.
    """

    parser = MarkdownIt().enable("strikethrough").enable("table")
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": SharedCodeBlock,
        "code_block": SharedCodeBlock,
    }

    def __init__(self, markup: str) -> None:
        """Parse ``markup`` with the shared parser; the rest as ``Markdown``'s defaults."""
        self.markup = markup
        self.parsed = self.parser.parse(markup)
        self.code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = self.code_theme


class MarkdownStream:
    """Renders streamed markdown on ``console``, each block once, as soon as it is complete.

    At a terminal the open block is shown too, live, as plain text that ``rich.live.Live``
    shows at once, then redraws a few times a second (not at every chunk), and replaces with
    the rendered block once it is complete. Blocks completed within ``PRINT_INTERVAL`` of the
    last print (by ``clock``) wait for the next chunk and are printed with it, in one
    ``console.print``.
    """

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        """Render on ``console``; ``clock`` tells the time in seconds."""
        self.console = console
        self.splitter = BlockSplitter()
        self.live: Live | None = None
        self.clock = clock
        self.ready: list[str] = []
        """Completed blocks not printed yet."""
        self.printed_at = -math.inf

    def feed(self, text: str) -> None:
        """Add ``text``; render the blocks it completed."""
        self.ready += self.splitter.feed(terminal_text(text))
        if self.ready and self.clock() - self.printed_at >= PRINT_INTERVAL:
            self._print_ready()
        if self.console.is_terminal:
            self._show_open()

    def _print_ready(self) -> None:
        self._stop_live()
        self.console.print(*[BlockMarkdown(block) for block in self.ready])
        self.ready = []
        self.printed_at = self.clock()

    def _show_open(self) -> None:
        open_block = "\n".join([*self.splitter.pending, self.splitter.partial])
        open_text = "\n\n".join([*self.ready, open_block])
        if not open_text.strip():
            return
        if self.live is None:  # the first words at once, then a few redraws a second
            self.live = Live(
                Text(open_text), console=self.console, transient=True, refresh_per_second=8
            )
            self.live.start(refresh=True)
        else:
            self.live.update(Text(open_text))

    def _stop_live(self) -> None:
        if self.live is not None:
            self.live.update(Text(""))
            self.live.stop()
            self.live = None

    def close(self) -> None:
        """The answer is complete: render the blocks still waiting and the open block too."""
        self._stop_live()
        rest = self.splitter.close()
        if rest.strip():
            self.ready.append(rest)
        if self.ready:
            self._print_ready()


def diff_text(diff: str) -> Text:
    """A unified diff coloured as ``git diff`` colours it."""
    text = Text()
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        text.append(line + "\n", style=style)
    return text


# --8<-- [start:spinner]
STILL_RUNNING_AFTER = 1.0
"""Seconds a tool runs before a line says that it still runs, and for how long."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""The frames of that line's spinner, one a second."""
# --8<-- [end:spinner]


def still_running(names: Sequence[str], seconds: float) -> str:
    """The line for tools ``names`` running ``seconds``: ``⠙ bash running · 1 s``.

    Whole seconds; the spinner shows the frame of that second; several tools are counted.
    """
    # region ch19: one name, or "N tools"; whole seconds; SPINNER's frame for that second
    # more: whole = int(seconds); SPINNER[whole % len(SPINNER)]; f"{frame} {what} running · ..."
    whole = int(seconds)
    what = names[0] if len(names) == 1 else f"{len(names)} tools"
    return f"{SPINNER[whole % len(SPINNER)]} {what} running · {whole} s"
    # endregion


class Waiting:
    """A line that says which tool runs and for how long, once it has run a second.

    ``bash running · 3 s``, under the call's own line, redrawn every second and gone when the
    tool ends. The time is the running asyncio loop's (``loop.time``, ``call_later``): the
    REPL's own, which a test moves by hand. Without a running loop, nothing is shown.
    """

    def __init__(self, console: Console) -> None:
        """Show the line on ``console`` (only at a terminal: it is redrawn in place)."""
        self.console = console
        self.running: dict[str, str] = {}
        """The calls that run now: id to tool name."""
        self.since = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.live: Live | None = None
        self.holding = False
        """A question is being asked: the line waits until it is answered."""

    def started(self, call_id: str, name: str) -> None:
        """Call ``call_id`` of tool ``name`` has started: a line in a second, unless it ends."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if not self.running:
            self.since = loop.time()
        self.running[call_id] = name
        if self.timer is None and not self.holding:
            self.timer = loop.call_later(STILL_RUNNING_AFTER, self._tick)

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        line = Text(still_running(list(self.running.values()), loop.time() - self.since), "dim")
        if self.live is None:
            self.live = Live(line, console=self.console, transient=True, auto_refresh=False)
            self.live.start(refresh=True)
        else:
            self.live.update(line, refresh=True)
        self.timer = loop.call_later(1.0, self._tick)

    def ended(self, call_id: str) -> None:
        """Call ``call_id`` has its result: the line goes once no call runs."""
        self.running.pop(call_id, None)
        if not self.running:
            self.stop()

    def stop(self) -> None:
        """No line, no timer, no call counted (the run ended)."""
        self.running.clear()
        self._hide()

    def _hide(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.live is not None:
            self.live.stop()
            self.live = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """While the user is asked something: no line; the time starts again after it."""
        before, self.holding = self.holding, True
        self._hide()
        try:
            yield
        finally:
            self.holding = before
            running, self.running = self.running, {}
            for call_id, name in running.items():
                self.started(call_id, name)


class RunView:
    """Shows a run's events on a ``rich`` console: markdown, a line per tool call, diffs."""

    def __init__(self, console: Console) -> None:
        """Show on ``console``."""
        self.console = console
        self.answer = MarkdownStream(console)
        self.waiting = Waiting(console)
        """The line that says a tool still runs (after ``STILL_RUNNING_AFTER``)."""

    def show(self, event: Event) -> None:
        """Show ``event``."""
        if isinstance(event, TextDelta):
            self.answer.feed(event.text)
        elif isinstance(event, AssistantText):
            self.answer.close()
        elif isinstance(event, ToolCalled):
            self.answer.close()
            line = f"→ {event.name}({one_line(arguments_text(event.arguments))})"
            self.console.print(Text(line, style="dim"))
            self.waiting.started(event.id, one_line(event.name, 40))
        elif isinstance(event, ToolResult):
            self.waiting.ended(event.id)
            mark, style = ("✗", "red") if event.is_error else ("✓", "green")
            first, _, rest = event.output.partition("\n")
            self.console.print(Text(f"  {mark} {event.name}: {one_line(first)}", style=style))
            if event.name in CHANGING_TOOLS and not event.is_error and rest.strip():
                self.console.print(diff_text(cut_lines(terminal_text(rest), SCREENFUL)))
        elif isinstance(event, SubagentEvent):
            self.show_child(event)
        elif isinstance(event, RunFinished):
            self.waiting.stop()
            self.answer.close()
            if event.reason != "done":
                self.console.print(Text(f"[{event.reason} after {event.steps} step(s)]", "yellow"))

    def show_child(self, event: SubagentEvent) -> None:
        """A subagent's tool call (chapter 21): one indented line naming the child.

        ``  ⎿ task-1 → grep(pattern='TODO')``, under the parent's ``task`` line, as Claude Code
        shows a subagent's progress. The child's text and results stay in its report.
        """
        inner = event.event
        if isinstance(inner, ToolCalled):
            self.answer.close()
            call = f"{one_line(inner.name, 80)}({one_line(arguments_text(inner.arguments))})"
            line = f"  ⎿ {one_line(event.agent_id, 40)} → {call}"
            self.console.print(Text(line, style="dim"))
