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


# --8<-- [start:arguments]
class WebFetchArguments(ToolArguments):
    """The page to fetch."""

    url: str = Field(min_length=1, description="The full http:// or https:// URL to fetch.")
# --8<-- [end:arguments]


# --8<-- [start:check-url]
def check_url(url: str) -> str | None:
    """Why ``url`` may not be fetched, or ``None`` if it may: http(s) with a host only."""
    # region ch12: parse with httpx.URL; refuse what does not parse, other schemes, no host
    # more: httpx.InvalidURL; url.scheme in SCHEMES; url.host; one message for all three
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in SCHEMES or not parsed.host:
        return f"refused: {url!r} is not an http:// or https:// URL"
    return None
    # endregion
# --8<-- [end:check-url]


# --8<-- [start:media-type]
def media_type(content_type: str) -> str:
    """The media type of a ``Content-Type`` header, lower case, without its parameters."""
    return content_type.partition(";")[0].strip().lower()
# --8<-- [end:media-type]


# --8<-- [start:page-text]
def page_text(body: bytes, content_type: str, encoding: str = "utf-8") -> str | None:
    """The readable text of a body of type ``content_type``, or ``None`` if it is binary.

    HTML becomes text with ``html_text.extract_text``; ``text/*`` and the ``TEXT_TYPES``
    are decoded as they are; a body without a type is text if it has no NUL byte. Bytes that
    do not decode become U+FFFD.
    """
    # region ch12: HTML → extract_text; text types → decode; no type → sniff; the rest → None
    # more: media_type(content_type); looks_binary(body); body.decode(encoding, "replace")
    kind = media_type(content_type)
    textual = kind in HTML_TYPES or kind.startswith("text/") or kind in TEXT_TYPES
    if (kind and not textual) or looks_binary(body):
        return None
    try:
        text = body.decode(encoding, "replace")
    except LookupError:  # a charset Python does not know
        text = body.decode("utf-8", "replace")
    if kind in HTML_TYPES:
        return html_text.extract_text(text)
    return text
    # endregion
# --8<-- [end:page-text]


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


# --8<-- [start:read-body]
async def read_body(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the body of ``response``, streamed; and whether there was more.

    Reading stops as soon as the cap is reached: the rest of the body is never downloaded.
    """
    # region ch12: collect chunks from aiter_bytes until max_bytes; stop early, say if cut
    # more: a bytearray; once len(data) > max_bytes: return bytes(data[:max_bytes]), True
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > max_bytes:
            return bytes(data[:max_bytes]), True
    return bytes(data), False
    # endregion
# --8<-- [end:read-body]


class FetchError(Exception):
    """A fetch that cannot go on; the message is for the model."""


# --8<-- [start:tool]
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

    # --8<-- [start:fetch]
    async def fetch(self, client: httpx.AsyncClient, url: str) -> Page:
        """GET ``url``, following redirects by hand: at most ``max_redirects``, each checked."""
        # region ch12: loop: GET (streamed), a redirect → check the next URL, else read the body
        # more: client.stream("GET", url); response.url.join(Location); check_url each hop
        for _ in range(self.max_redirects + 1):
            async with client.stream("GET", url) as response:
                location = response.headers.get("location")
                if response.status_code in REDIRECTS and location:
                    url = str(response.url.join(location))
                    if check_url(url) is not None:
                        raise FetchError(
                            f"refused: {response.url} redirects to {location!r}, which is not "
                            "an http:// or https:// URL"
                        )
                    continue
                body, cut = await read_body(response, self.max_bytes)
                return Page(
                    url=str(response.url),
                    status=response.status_code,
                    reason=response.reason_phrase,
                    content_type=response.headers.get("content-type", ""),
                    encoding=response.charset_encoding or "utf-8",
                    body=body,
                    cut=cut,
                )
        raise FetchError(f"too many redirects: more than {self.max_redirects}")
        # endregion
    # --8<-- [end:fetch]

    # --8<-- [start:call]
    async def call(self, args: WebFetchArguments) -> ToolOutput:
        """Fetch the page and show its text; every failure is an error result."""
        # region ch12: check the URL; fetch within one timeout; status, binary and cut → words
        # more: asyncio.timeout(self.timeout); FetchError, TimeoutError, httpx.HTTPError
        if (problem := check_url(args.url)) is not None:
            return ToolOutput.error(problem)
        client = self.client or httpx.AsyncClient(follow_redirects=False, timeout=self.timeout)
        try:
            async with asyncio.timeout(self.timeout):
                page = await self.fetch(client, args.url)
        except FetchError as error:
            return ToolOutput.error(str(error))
        except TimeoutError:
            return ToolOutput.error(f"timed out after {self.timeout:g} s fetching {args.url}")
        except httpx.HTTPError as error:
            return ToolOutput.error(f"could not fetch {args.url}: {error or type(error).__name__}")
        finally:
            if self.client is None:
                await client.aclose()
        text = page_text(page.body, page.content_type, page.encoding)
        if text is None:
            kind = media_type(page.content_type) or "no content type"
            return ToolOutput.error(f"refused: {page.url} is binary ({kind}), not text")
        if page.cut:
            text += f"\n[page cut: only the first {self.max_bytes:,} bytes were read]"
        if page.status >= 400:
            return ToolOutput.error(f"HTTP {page.status} {page.reason} from {page.url}\n\n{text}")
        return ToolOutput.ok(f"{page.url}\n\n{text}")
        # endregion
    # --8<-- [end:call]
# --8<-- [end:tool]
