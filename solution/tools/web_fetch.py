"""The ``web_fetch`` tool: HTTP GET a page and hand the model its text, within strict limits.

A page of documentation or an issue thread is often what the model needs to fix a bug, but
the web is the least trustworthy input an agent has. So the tool is narrow on purpose:

* only ``http://`` and ``https://`` URLs: ``file:///etc/passwd`` or ``ftp://`` are refused
  before any connection is made, and so is a redirect to such a URL;
* only public internet addresses: the host is resolved first, and a loopback, link-local,
  private, unspecified, multicast or reserved address (however the URL spells it: ``127.1``,
  ``[::ffff:127.0.0.1]``, a name whose DNS answer is ``127.0.0.1``) is refused, unless the
  tool was built with ``allow_private_hosts=True``. The connection then goes to the address
  that was checked, so a second lookup cannot answer differently;
* redirects are followed by hand, at most ``max_redirects`` of them, checking each hop: its
  scheme, its addresses, and (through ``check_redirect``) the permission rules;
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
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import html_text
import httpx
from pydantic import Field

from ..errors import ToolError
from ..providers.http import tls_context
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
    # region ch12: parse with httpx.URL (say why it does not parse); http(s) with a host only
    # more: except httpx.InvalidURL as error; parsed.scheme in SCHEMES; parsed.host
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        return f"refused: {url!r} is not a valid URL: {error}"
    if parsed.scheme not in SCHEMES or not parsed.host:
        return f"refused: {url!r} is not an http:// or https:// URL"
    return None
    # endregion


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
"""An IP address of either family."""

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Looks a host name up: given the name and the port, the IP addresses it has, best first."""

RedirectCheck = Callable[[str, str], str | None]
"""Decides whether to follow a redirect: given the URL that redirects and the URL it sends the
client to, ``None`` to follow it, or why not (a sentence for the model)."""

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""The well-known NAT64 prefix: its last 32 bits are an IPv4 address a translator connects to."""

SHARED = ipaddress.IPv4Network("100.64.0.0/10")
"""The shared address space of carrier-grade NAT (RFC 6598): neither private nor public."""


async def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system's resolver (``getaddrinfo``) gives ``host``, in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def spelled_address(host: str) -> IPAddress | None:
    """The IP address ``host`` spells, if it spells one; ``None`` for a name.

    Besides ``127.0.0.1`` and ``::1``, every form the C library's ``inet_aton`` (and so
    ``getaddrinfo``) reads as an IPv4 address counts: ``127.1``, ``0x7f.1``, ``2130706433``,
    ``0177.1``. What a connection would go to is what gets checked.
    """
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def names_this_machine(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a name under it (RFC 6761: always this machine)."""
    name = host.lower().removesuffix(".")
    return name == "localhost" or name.endswith(".localhost")


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 or 6to4; else ``None``."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def address_problem(address: IPAddress) -> str | None:
    """Why ``web_fetch`` may not connect to ``address``, or ``None`` for a public address.

    An IPv6 address that stands for an IPv4 one (``::ffff:127.0.0.1``) is judged by the IPv4
    address. The answer names the kind: unspecified, loopback, link-local, multicast,
    reserved, shared (100.64.0.0/10), private, or otherwise not public.
    """
    # region ch12: judge the IPv4 inside an IPv6 address; name the first kind that fits
    # more: embedded_ipv4(address); is_unspecified, is_loopback, ..., SHARED, is_global
    address = embedded_ipv4(address) or address
    if address.is_unspecified:
        return "an unspecified address (it reaches this machine)"
    if address.is_loopback:
        return "a loopback address (this machine)"
    if address.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_reserved:
        return "a reserved address"
    if address in SHARED:
        return "a shared address (100.64.0.0/10, a carrier's network)"
    if address.is_private:
        return "a private address (a local network)"
    if not address.is_global:
        return "not a public internet address"
    return None
    # endregion


def media_type(content_type: str) -> str:
    """The media type of a ``Content-Type`` header, lower case, without its parameters."""
    return content_type.partition(";")[0].strip().lower()


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
    # region ch12: collect chunks from aiter_bytes until max_bytes; stop early, say if cut
    # more: a bytearray; once len(data) > max_bytes: return bytes(data[:max_bytes]), True
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > max_bytes:
            return bytes(data[:max_bytes]), True
    return bytes(data), False
    # endregion


class FetchError(ToolError):
    """A fetch that cannot go on; the message is for the model."""


class WebFetchTool(ArgumentsTool[WebFetchArguments]):
    """Fetch a web page with HTTP GET and show the model its text."""

    name = "web_fetch"
    description = (
        "Fetch a web page (http:// or https:// only, public internet addresses only) and return "
        "its text: HTML is turned into plain text, other text is shown as it is, binary files "
        "are refused. Large pages are cut."
    )
    Arguments = WebFetchArguments
    read_only = True

    def __init__(
        self,
        *,
        timeout: float = 20.0,
        max_bytes: int = 1_000_000,
        max_redirects: int = 5,
        allow_private_hosts: bool = False,
        resolve: Resolver = system_resolve,
        check_redirect: RedirectCheck | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        """Fetch within ``timeout`` seconds, at most ``max_bytes`` of body, ``max_redirects`` hops.

        ``allow_private_hosts`` lets it connect to addresses that are not public (this
        machine, the local network): for a documentation server on ``localhost``, and for
        tests. ``resolve`` looks names up (tests give a table). ``check_redirect`` is asked
        about every redirect before it is followed (chapter 13 fills it in from the
        permission rules). ``client`` is for tests; by default each call opens (and closes)
        its own, which ignores proxies named in the environment.
        """
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allow_private_hosts = allow_private_hosts
        self.resolve = resolve
        self.check_redirect = check_redirect
        self.client = client

    async def addresses(
        self, url: httpx.URL, came_from: httpx.URL | None = None
    ) -> list[IPAddress]:
        """The addresses to connect to for ``url``, each one checked; ``FetchError`` if refused.

        A host that spells an address is that address; ``localhost`` (and names under it) is
        refused without a lookup; any other name is resolved once, with ``resolve``, and
        every address it has must pass ``address_problem``, not only the first. When ``url``
        is where ``came_from`` redirected to, a refusal says so.
        """
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if url.scheme == "https" else 80)
        hop = "" if came_from is None else f"{came_from} redirects to {url}; "
        spelled = spelled_address(host)
        if spelled is not None:
            found = [spelled]
        elif names_this_machine(host) and not self.allow_private_hosts:
            why = f"{host} is this machine (a loopback name); {PUBLIC_ONLY}"
            raise FetchError(f"refused: {hop}{why}")
        else:
            try:
                found = [ipaddress.ip_address(text) for text in await self.resolve(host, port)]
            except (OSError, ValueError) as error:
                message = f"could not fetch {url}: cannot resolve {host}: {error}"
                raise FetchError(message) from error
            if not found:
                raise FetchError(f"could not fetch {url}: {host} has no address")
        if not self.allow_private_hosts:
            for address in found:
                if (problem := address_problem(address)) is not None:
                    raise FetchError(f"refused: {hop}{refused_host(host, address, problem)}")
        return found

    @asynccontextmanager
    async def connect(
        self, client: httpx.AsyncClient, url: httpx.URL, addresses: Sequence[IPAddress]
    ) -> AsyncIterator[httpx.Response]:
        """GET ``url`` from the first of ``addresses`` that takes the connection, streamed.

        The URL sent names the address, so no second lookup can lead elsewhere; the host's
        name stays in the ``Host`` header and, for https, in TLS (``sni_hostname``), where
        the certificate is checked against it.
        """
        response = None
        for number, address in enumerate(addresses, start=1):
            request = pinned_request(client, url, address)
            try:
                response = await client.send(request, stream=True)
                break
            except httpx.ConnectError:
                if number == len(addresses):
                    raise
        assert response is not None  # addresses is never empty
        try:
            yield response
        finally:
            await response.aclose()

    async def fetch(self, client: httpx.AsyncClient, url: str) -> Page:
        """GET ``url``, following redirects by hand: at most ``max_redirects``, each checked."""
        # region ch12: check the addresses; loop: GET (streamed); a redirect → check the next hop
        # more: self.connect(...); current.join(location); check_url, check_redirect, addresses
        current = httpx.URL(url)
        addresses = await self.addresses(current)
        for _ in range(self.max_redirects + 1):
            async with self.connect(client, current, addresses) as response:
                location = response.headers.get("location")
                if response.status_code in REDIRECTS and location:
                    target = current.join(location)
                    if check_url(str(target)) is not None:
                        raise FetchError(
                            f"refused: {current} redirects to {location!r}, which is not "
                            "an http:// or https:// URL"
                        )
                    if self.check_redirect is not None:
                        problem = self.check_redirect(str(current), str(target))
                        if problem is not None:
                            raise FetchError(f"refused: {current} redirects to {target}; {problem}")
                    addresses = await self.addresses(target, came_from=current)
                    current = target
                    continue
                body, cut = await read_body(response, self.max_bytes)
                return Page(
                    url=str(current),
                    status=response.status_code,
                    reason=response.reason_phrase,
                    content_type=response.headers.get("content-type", ""),
                    encoding=response.charset_encoding or "utf-8",
                    body=body,
                    cut=cut,
                )
        raise FetchError(f"too many redirects: more than {self.max_redirects}")
        # endregion

    async def call(self, args: WebFetchArguments) -> ToolOutput:
        """Fetch the page and show its text; every failure is an error result."""
        # region ch12: check the URL; fetch within one timeout; status, binary and cut → words
        # more: asyncio.timeout(self.timeout); FetchError, TimeoutError, httpx.HTTPError
        if (problem := check_url(args.url)) is not None:
            return ToolOutput.error(problem)
        client = self.client or open_client(self.timeout)
        try:
            async with asyncio.timeout(self.timeout):
                page = await self.fetch(client, args.url)
        except FetchError as error:
            return ToolOutput.error(str(error))
        except TimeoutError:
            return ToolOutput.error(f"timed out after {self.timeout:g} s fetching {args.url}")
        except httpx.HTTPError as error:
            reason = str(error) or type(error).__name__  # an exception itself is always true
            return ToolOutput.error(f"could not fetch {args.url}: {reason}")
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


PUBLIC_ONLY = "web_fetch only fetches from public internet addresses"
"""The end of every refusal of an address."""


def refused_host(host: str, address: IPAddress, problem: str) -> str:
    """Say which address ``host`` is (or resolves to) and why it is refused."""
    inner = embedded_ipv4(address)
    if spelled_address(host) is None:
        shown = f"{address}" if inner is None else f"{inner} (in IPv6 form)"
        return f"{host} resolves to {shown}, {problem}; {PUBLIC_ONLY}"
    shown = f"{inner or address}"
    if shown == host:
        return f"{host} is {problem}; {PUBLIC_ONLY}"
    return f"{host} is {shown}, {problem}; {PUBLIC_ONLY}"


def pinned_request(client: httpx.AsyncClient, url: httpx.URL, address: IPAddress) -> httpx.Request:
    """A GET of ``url`` sent to ``address``, with the host's name in ``Host`` and in TLS."""
    host = url.raw_host.decode("ascii")
    extensions = {}
    if url.scheme == "https" and spelled_address(host) is None:
        extensions["sni_hostname"] = host
    headers = {"Host": url.netloc.decode("ascii")}
    return client.build_request(
        "GET", url.copy_with(host=str(address)), headers=headers, extensions=extensions
    )


def open_client(timeout: float) -> httpx.AsyncClient:
    """A client for one fetch: no redirects followed for us, no proxy from the environment.

    A proxy would look the name up itself and connect wherever its own answer says, past the
    address check; giving the client its own transport keeps ``HTTP_PROXY`` and friends out.
    The certificates are the providers' (``tls_context``: ``SSL_CERT_FILE`` still counts),
    loaded once per process rather than once per fetch.
    """
    transport = httpx.AsyncHTTPTransport(verify=tls_context())
    return httpx.AsyncClient(follow_redirects=False, timeout=timeout, transport=transport)
