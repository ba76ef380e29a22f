"""ch12 · web_fetch: http(s) only, redirects checked and capped, a timeout, a size cap, text."""

import asyncio
from typing import Any

import httpx
import pytest
from loop_clock import LoopClock

from claw.tools.web_fetch import WebFetchTool, check_url, page_text
from clawbook.harness.loopback import EndlessReply, LoopbackServer, StallReply, TextReply

PAGE = """<!doctype html>
<html><head><title>Release notes</title>
<style>body { color: red }</style>
<script>window.tracking = "do not show me";</script></head>
<body><h1>Version 2.0</h1>
<p>The <code>parse</code> function now <b>rejects</b> empty input &amp; says why.</p>
<ul><li>faster</li><li>smaller</li></ul></body></html>
"""


def page_url(server: LoopbackServer, path: str = "/page") -> str:
    return f"http://127.0.0.1:{server.port}{path}"


def local_tool(**options: Any) -> WebFetchTool:
    """A web_fetch allowed to reach this machine, where the loopback server runs."""
    return WebFetchTool(allow_private_hosts=True, **options)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/file.txt",
        "javascript:alert(1)",
        "example.com/docs",
        "http://",
        "gopher://127.0.0.1:70/",
        "",
    ],
)
def test_multi_tool_web_fetch_refuses_what_is_not_http(url: str) -> None:
    assert check_url(url) == f"refused: {url!r} is not an http:// or https:// URL"


def test_multi_tool_web_fetch_accepts_http_and_https() -> None:
    assert check_url("https://docs.python.org/3/library/asyncio-task.html") is None
    assert check_url("http://127.0.0.1:8000/x?y=1") is None
    assert check_url("HTTPS://EXAMPLE.COM/") is None


async def test_multi_tool_web_fetch_refuses_a_file_url_without_a_request(
    server: LoopbackServer,
) -> None:
    output = await WebFetchTool().run({"url": "file:///etc/passwd"})
    assert output.is_error
    assert output.content == "refused: 'file:///etc/passwd' is not an http:// or https:// URL"
    assert server.requests == []


async def test_multi_tool_web_fetch_turns_html_into_readable_text(server: LoopbackServer) -> None:
    server.add(TextReply(body=PAGE, content_type="text/html; charset=utf-8"))
    output = await local_tool().run({"url": page_url(server)})
    assert not output.is_error, output.content
    url, _, text = output.content.partition("\n\n")
    assert url == page_url(server)
    assert "Version 2.0" in text
    assert "The parse function now rejects empty input & says why." in text
    assert text.splitlines()[-2:] == ["faster", "smaller"]  # one line per list item
    for hidden in ("<p>", "<b>", "&amp;", "tracking", "color: red"):
        assert hidden not in text
    assert server.requests[0].method == "GET"


def test_multi_tool_web_fetch_page_text_passes_text_through_and_refuses_binary() -> None:
    readme = b"# Title\n\n<not a tag> stays as it is\n"
    assert page_text(readme, "text/markdown") == readme.decode()
    assert page_text(b'{"a": "<b>"}', "application/json; charset=utf-8") == '{"a": "<b>"}'
    assert page_text("café".encode("latin-1"), "text/plain", "iso-8859-1") == "café"
    assert page_text(b"plain words", "") == "plain words"
    assert page_text(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png") is None
    assert page_text(b"%PDF-1.7 not really", "application/pdf") is None
    assert page_text(b"GIF89a\x00\x01", "") is None  # no type: sniffed
    assert page_text(b"text\x00with a NUL", "text/plain") is None
    assert page_text(b"caf\xe9", "text/plain") == "caf\ufffd", "not UTF-8: U+FFFD"
    assert page_text("café".encode(), "text/plain", "ascii") == "caf\ufffd\ufffd"
    unknown = page_text(b"caf\xc3\xa9 \xff", "text/plain", "no-such-charset")
    assert unknown == "caf\u00e9 \ufffd", "an unknown encoding falls back to UTF-8"


async def test_multi_tool_web_fetch_refuses_a_binary_body(server: LoopbackServer) -> None:
    server.add(TextReply(body=b"\x89PNG\r\n\x1a\n\x00\x00", content_type="image/png"))
    output = await local_tool().run({"url": page_url(server, "/logo.png")})
    assert output.is_error
    url = page_url(server, "/logo.png")
    assert output.content == f"refused: {url} is binary (image/png), not text"


async def test_multi_tool_web_fetch_follows_redirects_to_the_final_page(
    server: LoopbackServer,
) -> None:
    server.add(
        TextReply(status=301, headers={"Location": "/moved"}),
        TextReply(status=302, headers={"Location": page_url(server, "/final")}),
        TextReply(body="you made it", content_type="text/plain"),
    )
    output = await local_tool().run({"url": page_url(server, "/start")})
    assert output.content == f"{page_url(server, '/final')}\n\nyou made it"
    assert [r.path for r in server.requests] == ["/start", "/moved", "/final"]
    server.add(TextReply(status=201, body="created", headers={"Location": "/elsewhere"}))
    created = await local_tool().run({"url": page_url(server, "/new")})
    assert created.content == f"{page_url(server, '/new')}\n\ncreated", "201 is no redirect"
    assert server.requests[-1].path == "/new"


async def test_multi_tool_web_fetch_caps_the_number_of_redirects(server: LoopbackServer) -> None:
    server.add(*(TextReply(status=302, headers={"Location": f"/hop{i}"}) for i in range(10)))
    output = await local_tool(max_redirects=3).run({"url": page_url(server, "/hop")})
    assert output.is_error
    assert output.content == "too many redirects: more than 3"
    assert len(server.requests) == 4  # the first request and three redirects followed


async def test_multi_tool_web_fetch_follows_five_redirects_by_default(
    server: LoopbackServer,
) -> None:
    server.add(*(TextReply(status=302, headers={"Location": f"/hop{i}"}) for i in range(5)))
    server.add(TextReply(body="five hops away", content_type="text/plain"))
    output = await local_tool().run({"url": page_url(server, "/hop")})
    assert output.content == f"{page_url(server, '/hop4')}\n\nfive hops away"
    server.add(*(TextReply(status=302, headers={"Location": f"/again{i}"}) for i in range(6)))
    server.add(TextReply(body="six hops away", content_type="text/plain"))
    too_far = await local_tool().run({"url": page_url(server, "/again")})
    assert too_far.content == "too many redirects: more than 5"
    assert len(server.requests) == 6 + 6  # the second fetch stopped at its sixth redirect


async def test_multi_tool_web_fetch_checks_the_scheme_of_every_hop(server: LoopbackServer) -> None:
    server.add(TextReply(status=302, headers={"Location": "file:///etc/passwd"}))
    output = await local_tool().run({"url": page_url(server)})
    assert output.is_error
    assert output.content == (
        f"refused: {page_url(server)} redirects to 'file:///etc/passwd', which is not an "
        "http:// or https:// URL"
    )
    assert len(server.requests) == 1


async def test_multi_tool_web_fetch_stops_reading_at_the_size_cap(server: LoopbackServer) -> None:
    reply = EndlessReply(
        head=b"<html><body><p>",
        piece=b"spam " * 200,
        content_type="text/html",
        size=200_000_000,
    )
    server.add(reply)
    output = await local_tool(max_bytes=10_000).run({"url": page_url(server)})
    assert not output.is_error, output.content[:200]
    assert output.content.endswith("\n[page cut: only the first 10,000 bytes were read]")
    assert output.content.count("spam") > 1_500  # the first 10,000 bytes, as text
    assert len(output.content) < 12_000
    assert reply.finished.wait(60), "the client never hung up"
    assert reply.sent < 20_000_000, "the client kept downloading past the cap"
    server.add(TextReply(body="x" * 10_000))
    exactly = await local_tool(max_bytes=10_000).run({"url": page_url(server)})
    assert not exactly.is_error
    assert "page cut" not in exactly.content, "10,000 bytes of 10,000: nothing was cut"


async def test_multi_tool_web_fetch_reads_at_most_a_million_bytes_by_default(
    server: LoopbackServer,
) -> None:
    server.add(TextReply(body="x" * 1_000_001, content_type="text/plain"))
    output = await local_tool().run({"url": page_url(server)})
    assert output.content.endswith("x\n[page cut: only the first 1,000,000 bytes were read]")
    assert output.content.count("x") == 1_000_000


async def test_multi_tool_web_fetch_gives_up_after_its_timeout(server: LoopbackServer) -> None:
    server.add(StallReply())  # the request arrives, and no answer ever comes
    clock = LoopClock.install()
    # a client with no timeout of its own: only the tool's deadline can end the wait
    async with httpx.AsyncClient(timeout=None) as client:
        tool = local_tool(timeout=30, client=client)
        fetch = asyncio.create_task(tool.run({"url": page_url(server)}))
        while not server.requests and not fetch.done():
            await asyncio.sleep(0.01)
        if fetch.done():  # a stub's Todo comes out here; an answer came too soon
            pytest.fail(f"it gave up before its 30 seconds: {fetch.result().content}")
        await clock.advance(30 + 1)
        output = await fetch  # a fetch without the deadline waits here for ever
    assert output.is_error
    assert output.content == f"timed out after 30 s fetching {page_url(server)}"


async def test_multi_tool_web_fetch_reports_an_http_error_with_its_text(
    server: LoopbackServer,
) -> None:
    server.add(TextReply(status=404, body="<h1>No such page</h1>", content_type="text/html"))
    output = await local_tool().run({"url": page_url(server, "/missing")})
    assert output.is_error
    url = page_url(server, "/missing")
    assert output.content == f"HTTP 404 Not Found from {url}\n\nNo such page"
    server.add(TextReply(status=400, body="no", content_type="text/plain"))
    bad = await local_tool().run({"url": page_url(server, "/bad")})
    assert bad.is_error, "400 is the first error status"
    server.add(TextReply(status=399, body="odd", content_type="text/plain"))
    odd = await local_tool().run({"url": page_url(server, "/odd")})
    assert not odd.is_error


async def test_multi_tool_web_fetch_decodes_by_charset_keeps_a_given_client_and_names_errors(
    server: LoopbackServer,
) -> None:
    server.add(TextReply(body="café".encode("latin-1"), content_type="text/plain; charset=latin-1"))
    latin = await local_tool().run({"url": page_url(server)})
    assert latin.content.endswith("\n\ncafé"), "decoded with the response's charset"

    def reply(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/broken":
            raise httpx.ReadError("the connection broke", request=request)
        if request.url.path == "/silent":
            raise httpx.ReadError("", request=request)
        return httpx.Response(200, content=b"no type, plain words")  # no Content-Type

    async def public(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    client = httpx.AsyncClient(transport=httpx.MockTransport(reply))  # never leaves the process
    tool = WebFetchTool(client=client, resolve=public)
    untyped = await tool.run({"url": "http://docs.example/"})
    assert untyped.content == "http://docs.example/\n\nno type, plain words"
    broken = await tool.run({"url": "http://docs.example/broken"})
    assert broken.is_error
    assert broken.content == "could not fetch http://docs.example/broken: the connection broke"
    silent = await tool.run({"url": "http://docs.example/silent"})
    assert silent.content == "could not fetch http://docs.example/silent: ReadError"
    assert not client.is_closed, "a client the tool was given is the caller's to close"
    await client.aclose()
