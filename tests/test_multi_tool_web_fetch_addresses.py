"""ch12 · web_fetch reaches only public addresses, checked after the lookup, at every hop.

Each attack is performed for real: the URL points at the loopback server's port (or at an
address no test may reach), and the test asserts the refusal and that nothing arrived. Names
are looked up by a table given to the tool (``resolve=``), never by DNS; redirects from a
"public" host are served by ``httpx.MockTransport``, so no test opens a socket to anything but
127.0.0.1.
"""

import asyncio
import socket
from collections.abc import Callable, Sequence
from ipaddress import ip_address

import httpx
import pytest

from claw.tools.web_fetch import WebFetchTool, address_problem, check_url
from clawbook.harness.loopback import LoopbackServer, TextReply

PUBLIC_ONLY = "web_fetch only fetches from public internet addresses"
LOOPBACK = "a loopback address (this machine)"


UNKNOWN = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
"""What the system's resolver raises for a name it does not know."""


class Table:
    """A resolver that answers from a table, and remembers every question."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append((host, port))
        if host not in self.answers:
            raise UNKNOWN
        return self.answers[host]


NAMES = {
    "127.0.0.1.nip.io": ["127.0.0.1"],  # what nip.io's DNS answers for this name
    "rebound.example": ["::ffff:127.0.0.1"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],  # one good answer is not enough
    "metadata.example": ["169.254.169.254"],
}


# The spellings of this machine (and of other places that are not the public internet) a
# model can be led to: each URL is fetched, and must be refused saying which host and why.
NOT_PUBLIC = [
    ("localhost", "localhost is this machine (a loopback name)"),
    ("LOCALHOST.", "localhost. is this machine (a loopback name)"),
    ("admin.localhost", "admin.localhost is this machine (a loopback name)"),
    ("127.0.0.1", f"127.0.0.1 is {LOOPBACK}"),
    ("127.1", f"127.1 is 127.0.0.1, {LOOPBACK}"),
    ("0x7f.1", f"0x7f.1 is 127.0.0.1, {LOOPBACK}"),
    ("0x7f000001", f"0x7f000001 is 127.0.0.1, {LOOPBACK}"),
    ("2130706433", f"2130706433 is 127.0.0.1, {LOOPBACK}"),
    ("0177.1", f"0177.1 is 127.0.0.1, {LOOPBACK}"),
    ("127.254.3.9", f"127.254.3.9 is {LOOPBACK}"),
    ("[::1]", f"::1 is {LOOPBACK}"),
    ("[::ffff:127.0.0.1]", f"::ffff:127.0.0.1 is 127.0.0.1, {LOOPBACK}"),
    ("[::ffff:7f00:1]", f"::ffff:7f00:1 is 127.0.0.1, {LOOPBACK}"),
    ("0.0.0.0", "0.0.0.0 is an unspecified address (it reaches this machine)"),
    ("0", "0 is 0.0.0.0, an unspecified address (it reaches this machine)"),
    ("[::]", ":: is an unspecified address (it reaches this machine)"),
    ("127.0.0.1.nip.io", f"127.0.0.1.nip.io resolves to 127.0.0.1, {LOOPBACK}"),
    ("rebound.example", f"rebound.example resolves to 127.0.0.1 (in IPv6 form), {LOOPBACK}"),
    ("mixed.example", f"mixed.example resolves to 127.0.0.1, {LOOPBACK}"),
    (
        "169.254.169.254",
        "169.254.169.254 is a link-local address (where cloud metadata services answer)",
    ),
    (
        "metadata.example",
        "metadata.example resolves to 169.254.169.254, a link-local address (where cloud "
        "metadata services answer)",
    ),
    (
        "[::ffff:169.254.169.254]",
        "::ffff:169.254.169.254 is 169.254.169.254, a link-local address (where cloud "
        "metadata services answer)",
    ),
    ("[fe80::1]", "fe80::1 is a link-local address (where cloud metadata services answer)"),
    ("10.0.0.5", "10.0.0.5 is a private address (a local network)"),
    ("172.16.8.1", "172.16.8.1 is a private address (a local network)"),
    ("192.168.1.1", "192.168.1.1 is a private address (a local network)"),
    ("[fd12:3456::1]", "fd12:3456::1 is a private address (a local network)"),
    ("[64:ff9b::a00:5]", "64:ff9b::a00:5 is 10.0.0.5, a private address (a local network)"),
    ("100.64.0.1", "100.64.0.1 is a shared address (100.64.0.0/10, a carrier's network)"),
    ("224.0.0.1", "224.0.0.1 is a multicast address"),
    ("[ff02::1]", "ff02::1 is a multicast address"),
    ("240.0.0.1", "240.0.0.1 is a reserved address"),
    ("255.255.255.255", "255.255.255.255 is a reserved address"),
]


@pytest.mark.parametrize(("host", "why"), [pytest.param(*case, id=case[0]) for case in NOT_PUBLIC])
async def test_multi_tool_web_fetch_refuses_hosts_that_are_not_public(
    server: LoopbackServer, host: str, why: str
) -> None:
    server.add(TextReply(body="the admin page"))
    resolve = Table(NAMES)
    tool = WebFetchTool(resolve=resolve)
    output = await tool.run({"url": f"http://{host}:{server.port}/admin"})
    assert output.is_error
    assert output.content == f"refused: {why}; {PUBLIC_ONLY}"
    assert server.requests == []
    if host.strip("[]") not in NAMES:
        assert resolve.asked == []  # an address (or localhost) is judged without a lookup


async def test_multi_tool_web_fetch_refuses_an_ip_spelling_it_cannot_parse(
    server: LoopbackServer,
) -> None:
    # 0177.0.0.1 is 127.0.0.1 to the C library, but httpx will not parse it: refused as such.
    url = f"http://0177.0.0.1:{server.port}/admin"
    output = await WebFetchTool().run({"url": url})
    assert (
        output.content == f"refused: {url!r} is not a valid URL: Invalid IPv4 address: '0177.0.0.1'"
    )
    assert check_url(url) == output.content
    assert server.requests == []


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2002:5db8:d822::1", "64:ff9b::808:808"],
)
def test_multi_tool_web_fetch_address_problem_passes_public_addresses(address: str) -> None:
    assert address_problem(ip_address(address)) is None


def test_multi_tool_web_fetch_address_problem_looks_inside_6to4() -> None:
    assert address_problem(ip_address("2002:7f00:1::1")) == LOOPBACK  # 6to4 of 127.0.0.1


def recording(
    reply: Callable[[httpx.Request], httpx.Response],
) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """A client whose requests never leave the process: ``reply`` answers, ``seen`` records."""
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return reply(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), seen


class Rebinding(Table):
    """A DNS server an attacker controls: a public answer first, then this machine."""

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append((host, port))
        return ["93.184.216.34"] if len(self.asked) == 1 else ["127.0.0.1"]


async def test_multi_tool_web_fetch_connects_to_the_address_it_checked() -> None:
    client, seen = recording(lambda _: httpx.Response(200, text="docs", headers={"X": "y"}))
    resolve = Rebinding({})
    tool = WebFetchTool(resolve=resolve, client=client)
    output = await tool.run({"url": "https://docs.example/guide?page=2"})
    assert output.content == "https://docs.example/guide?page=2\n\ndocs"
    assert resolve.asked == [("docs.example", 443)]  # looked up once: no second answer
    (request,) = seen
    assert request.url == "https://93.184.216.34/guide?page=2"  # the checked address
    assert request.headers["host"] == "docs.example"  # the name, for the server
    assert request.extensions["sni_hostname"] == "docs.example"  # and for TLS
    await client.aclose()


async def test_multi_tool_web_fetch_tries_the_next_address_when_one_refuses() -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        if request.url.host == "2606:2800:220:1:248:1893:25c8:1946":
            raise httpx.ConnectError("no route to host", request=request)
        return httpx.Response(200, text="over IPv4")

    client, seen = recording(reply)
    resolve = Table({"docs.example": ["2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"]})
    output = await WebFetchTool(resolve=resolve, client=client).run({"url": "http://docs.example/"})
    assert output.content == "http://docs.example/\n\nover IPv4"
    assert [request.url.host for request in seen] == [
        "2606:2800:220:1:248:1893:25c8:1946",
        "93.184.216.34",
    ]
    assert all(request.headers["host"] == "docs.example" for request in seen)
    await client.aclose()


HOPS = [
    ("http://127.0.0.1/admin", f"127.0.0.1 is {LOOPBACK}"),
    ("http://[::1]:8080/", f"::1 is {LOOPBACK}"),
    ("http://localhost/", "localhost is this machine (a loopback name)"),
    ("http://evil.example/x", f"evil.example resolves to 127.0.0.1, {LOOPBACK}"),
    (
        "http://169.254.169.254/latest/meta-data/",
        "169.254.169.254 is a link-local address (where cloud metadata services answer)",
    ),
]


@pytest.mark.parametrize(("location", "why"), [pytest.param(*hop, id=hop[0]) for hop in HOPS])
async def test_multi_tool_web_fetch_checks_the_address_of_every_hop(
    location: str, why: str
) -> None:
    client, seen = recording(lambda _: httpx.Response(302, headers={"Location": location}))
    resolve = Table({"docs.example": ["93.184.216.34"], "evil.example": ["127.0.0.1"]})
    output = await WebFetchTool(resolve=resolve, client=client).run(
        {"url": "http://docs.example/start"}
    )
    target = httpx.URL(location)
    assert output.content == (
        f"refused: http://docs.example/start redirects to {target}; {why}; {PUBLIC_ONLY}"
    )
    assert [str(request.url) for request in seen] == ["http://93.184.216.34/start"]
    await client.aclose()


async def test_multi_tool_web_fetch_says_when_a_name_does_not_resolve() -> None:
    output = await WebFetchTool(resolve=Table({})).run({"url": "https://nowhere.example/x"})
    # On Linux: ... cannot resolve nowhere.example: [Errno -2] Name or service not known
    assert output.content == (
        f"could not fetch https://nowhere.example/x: cannot resolve nowhere.example: {UNKNOWN}"
    )


async def test_multi_tool_web_fetch_says_when_a_name_has_no_address() -> None:
    output = await WebFetchTool(resolve=Table({"empty.example": []})).run(
        {"url": "http://empty.example/"}
    )
    assert output.is_error
    assert "empty.example" in output.content
    assert "no address" in output.content


async def test_multi_tool_web_fetch_looks_names_up_with_the_system_resolver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[str, int]] = []
    ipv6, ipv4 = "2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"

    async def getaddrinfo(host: str, port: int, **options: int) -> list[tuple]:
        asked.append((host, port))  # what getaddrinfo answers: (family, type, proto, name, addr)
        stream, tcp = socket.SOCK_STREAM, socket.IPPROTO_TCP
        return [
            (socket.AF_INET6, stream, tcp, "", (ipv6, port, 0, 0)),
            (socket.AF_INET, stream, tcp, "", (ipv4, port)),
            (socket.AF_INET6, stream, tcp, "", (ipv6, port, 0, 0)),  # once is enough
        ]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)

    def reply(request: httpx.Request) -> httpx.Response:
        if request.url.host == ipv6:
            raise httpx.ConnectError("no route to host", request=request)
        return httpx.Response(200, text="over IPv4")

    client, seen = recording(reply)
    output = await WebFetchTool(client=client).run({"url": "http://docs.example/guide"})
    assert output.content == "http://docs.example/guide\n\nover IPv4"
    assert asked == [("docs.example", 80)]  # http's port when the URL names none
    assert [request.url.host for request in seen] == [ipv6, ipv4]
    await client.aclose()


async def test_multi_tool_web_fetch_allow_private_hosts_reaches_this_machine_by_name(
    server: LoopbackServer,
) -> None:
    server.add(TextReply(body="local docs"))
    resolve = Table({"docs.internal": ["127.0.0.1"]})
    tool = WebFetchTool(allow_private_hosts=True, resolve=resolve)
    output = await tool.run({"url": f"http://docs.internal:{server.port}/"})
    # The name is resolved by the table only: a lookup by httpx would hit the network guard.
    assert output.content == f"http://docs.internal:{server.port}/\n\nlocal docs"
    assert server.requests[0].headers["host"] == f"docs.internal:{server.port}"
    assert resolve.asked == [("docs.internal", server.port)]


async def test_multi_tool_web_fetch_ignores_proxies_named_in_the_environment(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer() as proxy:
        proxy.add(TextReply(body="the proxy answered"))
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        server.add(TextReply(body="the page"))
        resolve = Table({"docs.internal": ["127.0.0.1"]})
        tool = WebFetchTool(allow_private_hosts=True, resolve=resolve)
        output = await tool.run({"url": f"http://docs.internal:{server.port}/"})
        assert output.content == f"http://docs.internal:{server.port}/\n\nthe page"
        assert proxy.requests == []


async def test_multi_tool_web_fetch_asks_check_redirect_about_every_hop(
    server: LoopbackServer,
) -> None:
    base = f"http://127.0.0.1:{server.port}"
    server.add(
        TextReply(status=302, headers={"Location": "/second"}),
        TextReply(status=302, headers={"Location": f"http://other.example:{server.port}/x"}),
        TextReply(body="never sent"),
    )
    asked: list[tuple[str, str]] = []

    def check(source: str, target: str) -> str | None:
        asked.append((source, target))
        return "not this one" if "other.example" in target else None

    tool = WebFetchTool(
        allow_private_hosts=True,
        resolve=Table({"other.example": ["127.0.0.1"]}),
        check_redirect=check,
    )
    output = await tool.run({"url": f"{base}/first"})
    other = f"http://other.example:{server.port}/x"
    assert output.content == f"refused: {base}/second redirects to {other}; not this one"
    assert asked == [(f"{base}/first", f"{base}/second"), (f"{base}/second", other)]
    assert [request.path for request in server.requests] == ["/first", "/second"]
