"""ch13 · WebFetch rules as Claude Code documents them, and every redirect hop checked by them.

The specification is Claude Code's permissions documentation, section "Tool-specific
permission rules" > "WebFetch" (https://code.claude.com/docs/en/permissions#webfetch): rules
use a ``domain:`` prefix and match the host name of the requested URL; matching ignores case,
supports ``*``, and strips a trailing ``.`` from both the rule and the host name. Its
examples: ``domain:example.com`` matches requests to example.com; ``domain:*.example.com``
matches any subdomain at any depth (``api.example.com``, ``a.b.example.com``) but not
``example.com`` itself; ``domain:*`` matches every domain; anywhere but a leading ``*.`` or a
bare ``*``, the wildcard matches only the text between two dots (``domain:example.*`` matches
``example.org``, not ``example.evil.com``).

The redirect tests run ``web_fetch`` against the loopback server with names from a table:
``localhost`` and ``evil.example`` both "resolve" to 127.0.0.1, so the tool, built with
``allow_private_hosts=True``, can reach the server under either name.
"""

from collections.abc import Sequence
from pathlib import Path

import pytest

from claw.control import Controls
from claw.permissions import Approval, Decision, Mode, Permissions
from claw.tools.web_fetch import WebFetchTool
from claw.types import ToolCall, ToolOutput, ToolSet
from clawbook.harness.loopback import LoopbackServer, TextReply


def fetch(url: str) -> ToolCall:
    return ToolCall(id="f1", name="web_fetch", arguments={"url": url})


ALLOW, ASK = Decision.ALLOW, Decision.ASK

# (rule in the allow list, URL fetched, decision in default mode). ASK: the rule does not match.
# Each group is one statement or example of the documentation's WebFetch section.
DOCUMENTED = [
    # "WebFetch(domain:example.com) matches requests to example.com"
    ("WebFetch(domain:example.com)", "https://example.com/docs?page=2", ALLOW),
    ("WebFetch(domain:example.com)", "http://example.com:8080/", ALLOW),
    ("WebFetch(domain:example.com)", "https://api.example.com/", ASK),
    ("WebFetch(domain:example.com)", "https://example.com.evil.net/", ASK),
    ("WebFetch(domain:example.com)", "https://notexample.com/", ASK),
    # "Matching is case-insensitive"
    ("WebFetch(domain:example.com)", "https://EXAMPLE.Com/", ALLOW),
    ("WebFetch(domain:Example.COM)", "https://example.com/", ALLOW),
    # "strips a trailing . from both the rule and the hostname"
    ("WebFetch(domain:example.com)", "https://example.com./", ALLOW),
    ("WebFetch(domain:example.com.)", "https://example.com/", ALLOW),
    ("WebFetch(domain:example.com.)", "https://example.com./", ALLOW),
    # "*.example.com matches any subdomain at any depth ... but not example.com itself"
    ("WebFetch(domain:*.example.com)", "https://api.example.com/v1", ALLOW),
    ("WebFetch(domain:*.example.com)", "https://a.b.example.com/", ALLOW),
    ("WebFetch(domain:*.example.com)", "https://API.Example.com./", ALLOW),
    ("WebFetch(domain:*.example.com)", "https://example.com/", ASK),
    ("WebFetch(domain:*.example.com)", "https://badexample.com/", ASK),
    ("WebFetch(domain:*.example.com)", "https://api.example.com.evil.net/", ASK),
    # "WebFetch(domain:*) matches every domain"; a bare WebFetch rule covers every URL too
    ("WebFetch(domain:*)", "https://anything.test/x", ALLOW),
    ("WebFetch(domain:*)", "http://93.184.216.34/", ALLOW),
    ("WebFetch", "https://anything.test/x", ALLOW),
    # "example.* matches example.org ... but not example.evil.com": a * elsewhere stays in a label
    ("WebFetch(domain:example.*)", "https://example.org/", ALLOW),
    ("WebFetch(domain:example.*)", "https://example.evil.com/", ASK),
    ("WebFetch(domain:docs.*.example.com)", "https://docs.eu.example.com/", ALLOW),
    ("WebFetch(domain:docs.*.example.com)", "https://docs.a.b.example.com/", ASK),
    # claw: a URL whose host cannot be read (a bad port) matches no domain, not even *
    ("WebFetch(domain:*)", "http://a:b:c/", ASK),
    # only the domain: form is a WebFetch specifier
    ("WebFetch(https://example.com/*)", "https://example.com/x", ASK),
]


@pytest.mark.parametrize(
    ("rule", "url", "decision"),
    [pytest.param(*case, id=f"{case[0]} {case[1]}") for case in DOCUMENTED],
)
def test_permissions_webfetch_rules_match_as_claude_code_documents(
    rule: str, url: str, decision: Decision
) -> None:
    rules = Permissions("/project", allow=[rule])  # no file is read: the folder need not exist
    verdict = rules.decide(fetch(url))
    assert verdict.decision is decision, verdict.reason


def test_permissions_webfetch_deny_wildcard_beats_a_broad_allow(tmp_path: Path) -> None:
    rules = Permissions(tmp_path, deny=["WebFetch(domain:*.evil.example)"], allow=["WebFetch"])
    verdict = rules.decide(fetch("https://cdn.EVIL.example./x"))
    assert verdict.decision is Decision.DENY
    assert verdict.reason == (
        "the deny rule \"WebFetch(domain:*.evil.example)\" matches 'https://cdn.EVIL.example./x'"
    )
    assert rules.decide(fetch("https://good.example/")).decision is Decision.ALLOW


def test_permissions_webfetch_an_ipv6_address_is_written_without_brackets(tmp_path: Path) -> None:
    # claw: a host may hold ":" (an IPv6 address); the specifier is split at its first ":"
    rules = Permissions(tmp_path, deny=["WebFetch(domain:::1)", "WebFetch(domain:fe80::*)"])
    for url in ["http://[::1]:8080/admin", "http://[fe80::1]/"]:
        verdict = rules.decide(fetch(url))
        assert verdict.decision is Decision.DENY, url
    assert rules.decide(fetch("http://[::2]/")).decision is Decision.ASK


async def test_permissions_webfetch_always_saves_the_plain_host(tmp_path: Path) -> None:
    async def always(call: ToolCall, why: str) -> Approval:
        return Approval.SESSION

    rules = Permissions(tmp_path, approve=always)
    assert await rules.check(fetch("https://Docs.Example.com./guide")) == fetch(
        "https://Docs.Example.com./guide"
    )
    assert [str(rule) for rule in rules.rules[Decision.ALLOW]] == [
        "WebFetch(domain:docs.example.com)"
    ]
    assert rules.decide(fetch("https://docs.example.com/other")).decision is Decision.ALLOW


class Table:
    """Names to addresses, for ``web_fetch``'s ``resolve``: no DNS in tests."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        return self.answers[host]


NAMES = Table({"localhost": ["127.0.0.1"], "evil.example": ["127.0.0.1"]})


def guarded_fetch(rules: Permissions) -> Controls:
    """web_fetch behind ``rules``, with its redirects checked by them, as ``claw`` wires it."""
    tool = WebFetchTool(
        allow_private_hosts=True, resolve=NAMES, check_redirect=rules.check_redirect
    )
    return Controls(ToolSet([tool]), checks=[rules.check])


async def run(gate: Controls, url: str) -> ToolOutput:
    return await gate(fetch(url))


async def test_permissions_webfetch_a_redirect_to_an_unapproved_host_is_not_followed(
    tmp_path: Path, server: LoopbackServer
) -> None:
    start = f"http://localhost:{server.port}/start"
    steal = f"http://evil.example:{server.port}/steal"
    server.add(TextReply(status=302, headers={"Location": steal}), TextReply(body="secret"))
    rules = Permissions(tmp_path, allow=["WebFetch(domain:localhost)"])
    output = await run(guarded_fetch(rules), start)
    assert output.is_error
    assert output.content == (
        f"refused: {start} redirects to {steal}; its host needs approval (no rule matches "
        f"'{steal}'; default mode says ask): fetch that URL with a web_fetch call of its own "
        "if you need it"
    )
    assert [request.path for request in server.requests] == ["/start"]


async def test_permissions_webfetch_a_redirect_to_a_denied_host_names_the_rule(
    tmp_path: Path, server: LoopbackServer
) -> None:
    start = f"http://localhost:{server.port}/start"
    steal = f"http://evil.example:{server.port}/steal"
    server.add(TextReply(status=302, headers={"Location": steal}), TextReply(body="secret"))
    rules = Permissions(
        tmp_path,
        deny=["WebFetch(domain:evil.example)"],
        allow=["WebFetch(domain:localhost)"],
        mode=Mode.BYPASS,
    )
    output = await run(guarded_fetch(rules), start)
    assert output.content == (
        f"refused: {start} redirects to {steal}; the permission rules deny it: the deny rule "
        f"\"WebFetch(domain:evil.example)\" matches '{steal}'"
    )
    assert [request.path for request in server.requests] == ["/start"]


async def test_permissions_webfetch_a_redirect_the_rules_allow_is_followed(
    tmp_path: Path, server: LoopbackServer
) -> None:
    start = f"http://localhost:{server.port}/start"
    docs = f"http://evil.example:{server.port}/docs"
    server.add(TextReply(status=301, headers={"Location": docs}), TextReply(body="the docs"))
    rules = Permissions(tmp_path, allow=["WebFetch(domain:localhost)", "WebFetch(domain:*)"])
    output = await run(guarded_fetch(rules), start)
    assert output.content == f"{docs}\n\nthe docs"
    assert [request.path for request in server.requests] == ["/start", "/docs"]
    assert server.requests[1].headers["host"] == f"evil.example:{server.port}"


async def test_permissions_webfetch_an_approved_fetch_follows_redirects_on_its_own_host(
    tmp_path: Path, server: LoopbackServer
) -> None:
    asked: list[str] = []

    async def once(call: ToolCall, why: str) -> Approval:
        asked.append(str(call.arguments["url"]))
        return Approval.ONCE

    start = f"http://localhost:{server.port}/start"
    server.add(
        TextReply(status=302, headers={"Location": "/moved"}),
        TextReply(status=302, headers={"Location": f"http://evil.example:{server.port}/x"}),
    )
    rules = Permissions(tmp_path, approve=once)
    output = await run(guarded_fetch(rules), start)
    assert asked == [start]  # asked once, for the URL the model gave
    moved, away = f"http://localhost:{server.port}/moved", f"http://evil.example:{server.port}/x"
    assert output.content.startswith(f"refused: {moved} redirects to {away}; its host needs")
    assert [request.path for request in server.requests] == ["/start", "/moved"]
