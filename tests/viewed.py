"""Helpers for chapter 31's tests: transcripts planted by hand, and the page read back as HTML.

``plant`` writes a transcript the way chapter 22's recorder does (a ``session`` record, then
records encoded by ``transcript.encode``), so a test can put into a session what a hostile
model or tool would. ``Page`` parses a produced page with ``html.parser`` (the standard
library's HTML tokenizer, which reads tags the way a browser's tokenizer does): its elements,
their attributes, its text, and how deep each ``<details>`` sits.
"""

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from claw.sessions import header
from claw.transcript import Record, encode, event_record, message_record
from claw.types import UserMessage

VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "source", "area", "base", "col"}
"""Elements that have no end tag."""


def plant(path: Path, *records: Record | bytes, session_id: str = "planted") -> Path:
    """A transcript at ``path``: a ``session`` record, then ``records`` (raw bytes as they are)."""
    lines = [encode(header(session_id, path.parent))]
    lines += [record if isinstance(record, bytes) else encode(record) for record in records]
    path.write_bytes(b"".join(lines))
    return path


def prompt(text: str) -> Record:
    """The ``message`` record of a user's prompt."""
    return message_record(UserMessage(content=text))


def event(value: object) -> Record:
    """The ``event`` record of ``value``, as the recorder writes it."""
    recorded = event_record(value)
    assert recorded is not None
    return recorded


@dataclass
class Page(HTMLParser):
    """A page, parsed: every start tag with its attributes, the text, and the nesting."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    open: list[str] = field(default_factory=list)
    details_depths: list[int] = field(default_factory=list)
    """For each ``<details>``, how many ``<details>`` it sits inside."""
    unbalanced: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Start the parser (a dataclass does not call ``HTMLParser.__init__`` itself)."""
        HTMLParser.__init__(self, convert_charrefs=True)

    @classmethod
    def of(cls, html: str) -> "Page":
        """``html`` parsed to the end."""
        page = cls()
        page.feed(html)
        page.close()
        return page

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Note the tag and its attributes; track the nesting."""
        self.tags.append((tag, dict(attrs)))
        if tag == "details":
            self.details_depths.append(self.open.count("details"))
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        """Close the innermost open element, which must be ``tag``."""
        if not self.open or self.open[-1] != tag:
            self.unbalanced.append(tag)
            return
        self.open.pop()

    def handle_data(self, data: str) -> None:
        """Keep the text a reader sees (not the style sheet's, nor the title's)."""
        if not {"style", "title"} & set(self.open):
            self.text.append(data)

    def all_text(self) -> str:
        """The page's text, as a reader sees it (character references already decoded)."""
        return "".join(self.text)

    def elements(self, name: str) -> list[dict[str, str | None]]:
        """The attributes of every element ``name``, in order."""
        return [attrs for tag, attrs in self.tags if tag == name]


SAFE_ATTRIBUTES = {"charset", "name", "content", "http-equiv", "class", "lang", "open"}
"""Every attribute a page may have: none that loads, links or runs anything."""


def assert_inert(html: str) -> Page:
    """``html`` parsed, having checked that nothing in it can run, load or link anything."""
    page = Page.of(html)
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "iframe", "object", "embed", "img", "a", "link", "form"}
    attributes = {name for _, attrs in page.tags for name in attrs}
    assert attributes <= SAFE_ATTRIBUTES, attributes - SAFE_ATTRIBUTES
    assert not page.unbalanced and page.open == [], (page.unbalanced, page.open)
    return page
