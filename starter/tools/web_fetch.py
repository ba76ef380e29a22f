"""The ``web_fetch`` tool: HTTP GET a page and hand the model its text, within strict limits.

A page of documentation or an issue thread is often what the model needs to fix a bug, but
the web is the least trustworthy input an agent has. So the tool is narrow on purpose:

* only ``http://`` and ``https://`` URLs: ``file:///etc/passwd`` or ``ftp://`` are refused
  before any connection is made, and so is a redirect to such a URL;
* redirects are followed by hand, at most ``max_redirects`` of them, checking each hop;
* one ``timeout`` covers the whole fetch, every hop and the body included;
* the body is streamed and reading stops at ``max_bytes``: a page of ten gigabytes costs no
  more than one of ``max_bytes``;
* HTML is turned into readable text (the ``html-text`` library drops scripts, styles and tags
  and keeps the layout of headings, paragraphs and lists); other text (plain text, JSON, XML)
  passes through; anything binary (an image, a PDF, an archive) is refused.

It only reads, so it is read-only and may run beside other read-only calls. An agent gets it
only when asked for (``default_tools(root, web=True)``, ``claw --web``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import html_text
import httpx
from pydantic import Field

from ..todo import Todo
from ..types import ToolOutput
from .base import ArgumentsTool, ToolArguments
from .read import looks_binary

SCHEMES = ("http", "https")
"""The only URL schemes the tool fetches."""

HTML_TYPES = ("text/html", "application/xhtml+xml")
"""Media types whose body is turned from HTML into text."""

TEXT_TYPES = ("application/json", "application/xml", "application/javascript")
"""Media types outside ``text/*`` that are text all the same, and pass through."""

REDIRECTS = (301, 302, 303, 307, 308)
"""The status codes that send the client elsewhere, with a ``Location`` header."""


class WebFetchArguments(ToolArguments):
    """The page to fetch."""

    url: str = Field(min_length=1, description="The full http:// or https:// URL to fetch.")


def check_url(url: str) -> str | None:
    """Why ``url`` may not be fetched, or ``None`` if it may: http(s) with a host only."""
    raise Todo("ch12", "parse with httpx.URL; refuse what does not parse, other schemes, no host")


def media_type(content_type: str) -> str:
    """The media type of a ``Content-Type`` header, lower case, without its parameters."""
    return content_type.partition(";")[0].strip().lower()


def page_text(body: bytes, content_type: str, encoding: str = "utf-8") -> str | None:
    """The readable text of a body of type ``content_type``, or ``None`` if it is binary.

    HTML becomes text with ``html_text.extract_text``; ``text/*`` and the ``TEXT_TYPES``
    are decoded as they are; a body without a type is text if it has no NUL byte. Bytes that
    do not decode become U+FFFD.
    """
    raise Todo("ch12", "HTML → extract_text; text types → decode; no type → sniff; the rest → None")


@dataclass
class Page:
    """What one fetch got: where it ended up, and (at most ``max_bytes`` of) its body."""

    url: str
    status: int
    reason: str
    content_type: str
    encoding: str
    body: bytes
    cut: bool
    """Whether the body went on past ``max_bytes`` and was cut there."""


async def read_body(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the body of ``response``, streamed; and whether there was more.

    Reading stops as soon as the cap is reached: the rest of the body is never downloaded.
    """
    raise Todo("ch12", "collect chunks from aiter_bytes until max_bytes; stop early, say if cut")


class FetchError(Exception):
    """A fetch that cannot go on; the message is for the model."""


class WebFetchTool(ArgumentsTool[WebFetchArguments]):
    """Fetch a web page with HTTP GET and show the model its text."""

    name = "web_fetch"
    description = (
        "Fetch a web page (http:// or https:// only) and return its text: HTML is turned into "
        "plain text, other text is shown as it is, binary files are refused. Large pages are cut."
    )
    Arguments = WebFetchArguments
    read_only = True

    def __init__(
        self,
        *,
        timeout: float = 20.0,
        max_bytes: int = 1_000_000,
        max_redirects: int = 5,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        """Fetch within ``timeout`` seconds, at most ``max_bytes`` of body, ``max_redirects`` hops.

        ``client`` is for tests; by default each call opens (and closes) its own.
        """
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.client = client

    async def fetch(self, client: httpx.AsyncClient, url: str) -> Page:
        """GET ``url``, following redirects by hand: at most ``max_redirects``, each checked."""
        raise Todo(
            "ch12",
            "loop: GET (streamed), a redirect → check the next URL, else read the body",
        )

    async def call(self, args: WebFetchArguments) -> ToolOutput:
        """Fetch the page and show its text; every failure is an error result."""
        raise Todo(
            "ch12",
            "check the URL; fetch within one timeout; status, binary and cut → words",
        )
