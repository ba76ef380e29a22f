"""ch24 · The official ``anthropic`` SDK as the oracle for claw's Anthropic provider.

The same local server sends the same bytes to both: the SDK's ``messages.stream(...)`` and
claw's ``AnthropicProvider`` must assemble the same turn (text, tool calls with their parsed
input, thinking with its signature, usage, stop reason). The SDK, the oracle, reads each stream
whole; claw reads it whole and cut at every kind of place. The request claw sends must pass the
SDK's own request types unchanged, and both must agree on which errors are worth a retry.

The SDK runs in a process of its own (``anthropic_oracle.py``), started as the chapter's first
test file imports it, so that its second-long import overlaps chapter 24's other tests: a test
scripts a server for each side, asks the oracle for the SDK's call and makes claw's meanwhile.
"""

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from anthropic_oracle import EARLY, SdkOracle
from anthropic_wire import error, message, stream, text, thinking, tool_use, usage

from claw.errors import ProviderError
from claw.providers.anthropic import AnthropicProvider
from claw.providers.http import HTTPLimits, RetryPolicy
from claw.types import AssistantTurn, CacheControl, Message, StopReason, ToolDefinition
from clawbook.harness.loopback import JSONReply, LoopbackServer, Reply, StreamReply

# The first question waits for the SDK's import: seconds on a loaded machine.
pytestmark = pytest.mark.timeout(30)


@pytest.fixture(scope="module")
def sdk() -> Iterator[SdkOracle]:
    """The oracle started at import, or a new one for a later session in the same process
    (mutmut runs several, in forks of one process)."""
    oracle = EARLY if EARLY is not None and EARLY.usable() else SdkOracle()
    try:
        yield oracle
    finally:
        oracle.close()


KEY = "sk-ant-api03-oracle-0123456789"
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")
GREP = (
    ToolDefinition(name="grep", description="Search files.")
    .param("pattern", "string", "A regular expression.")
    .param("limit", "integer", "At most this many lines.", required=False)
)
GO = {"model": "claude-test-1", "max_tokens": 1024, "messages": [{"role": "user", "content": "go"}]}
HI = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}

STOP_REASONS = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "refusal": StopReason.CONTENT_FILTER,
}

TURNS: dict[str, tuple[list[dict[str, Any]], str, dict[str, Any]]] = {
    "text": ([text("Hello! The tests pass.")], "end_turn", usage(12, 6)),
    "thinking, text and a call": (
        [
            thinking("The user wants a.py. I will read it, then answer."),
            text("Let me read a.py."),
            tool_use("toolu_01A", "read", {"path": "src/a.py"}),
        ],
        "tool_use",
        usage(812, 95, read=2048, written=300),
    ),
    "two calls, nested input": (
        [
            tool_use("toolu_1", "grep", {"pattern": "def \\w+\\(", "limit": 20}),
            tool_use(
                "toolu_2", "read", {"path": "caf\u00e9/\u65e5\u672c.py", "deep": {"a": [1, 2]}}
            ),
        ],
        "tool_use",
        usage(50, 40, read=10),
    ),
    "redacted thinking": (
        [
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw",
            },
            thinking("Now the answer.", signature="sig-2"),
            text("Done \u2014 nothing to change. \U0001f44d"),
        ],
        "end_turn",
        usage(30, 20),
    ),
    "cut by max_tokens": ([text("A long answer that was cut")], "max_tokens", usage(9, 64)),
    "refused": ([text("I can't help with that.")], "refusal", usage(9, 8)),
}


def url(server: LoopbackServer) -> str:
    """The server's address as both clients take it: without the ``/v1``."""
    return server.base_url.removesuffix("/v1")


def provider(server: LoopbackServer, **options: Any) -> AnthropicProvider:
    async def sleep(seconds: float) -> None:
        pass

    return AnthropicProvider(
        "claude-test-1", base_url=url(server), api_key=KEY, sleep=sleep, **options
    )


def sdk_turn(answer: dict[str, Any]) -> dict[str, Any]:
    """The turn the SDK assembled (the oracle's ``sdk_view``), its stop reason in claw's terms."""
    assert "turn" in answer, f"the SDK raised {answer['raised']}"
    return {**answer["turn"], "stop": STOP_REASONS[answer["turn"]["stop"] or "end_turn"]}


def sdk_reads(
    sdk: SdkOracle, server: LoopbackServer, what: str, reply: Reply, **arguments: Any
) -> int:
    """Script ``server`` with ``reply`` and put a question to the SDK against it; its number.

    claw gets a server of its own (``LoopbackServer()``), so both read at the same time.
    """
    server.add(reply)
    return sdk.send(what, url=url(server), **arguments)


def claw_view(turn: AssistantTurn) -> dict[str, Any]:
    """What claw assembled, in the same terms."""
    counts = turn.usage
    return {
        "text": turn.text,
        "calls": [[call.id, call.name, call.arguments] for call in turn.tool_calls],
        "kept": [block.data for block in turn.provider_blocks if block.provider == "anthropic"],
        "reasoning": turn.reasoning,
        "usage": [
            counts.input_tokens,
            counts.output_tokens,
            counts.cached_input_tokens,
            counts.cache_write_tokens,
        ],
        "stop": turn.stop_reason,
    }


def cut_everywhere(body: bytes) -> list[bytes]:
    """``body`` cut at every kind of place a reader can stumble over, each one many times.

    Each line is cut after its first byte (inside ``event``/``data``) and in its middle (inside
    the JSON); every other line ends a piece, so the next piece starts a line (a blank line, the
    end of an event, comes alone), and the others do not (a piece holds the end of a line and the
    start of the next); each byte of a character of several bytes is a piece of its own. About
    three pieces a line: cutting a stream into single bytes took ten times as many.
    """
    cuts: set[int] = set()
    start = 0
    for number, line in enumerate(body.splitlines(keepends=True)):
        cuts |= {start + 1, start + len(line) // 2}
        start += len(line)
        if number % 2 == 0:
            cuts.add(start)
    for at, byte in enumerate(body):
        if byte >= 0x80:  # a byte of a character of several bytes: a cut on both sides
            cuts |= {at, at + 1}
    edges = [0, *sorted(cut for cut in cuts if 0 < cut < len(body)), len(body)]
    return [body[a:b] for a, b in pairwise(edges)]


CUTS = {"everywhere": cut_everywhere, "whole": lambda body: [body]}


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("name", list(TURNS))
async def test_anthropic_sdk_and_claw_assemble_the_same_turn_from_one_stream(
    server, sdk, name, cut
):
    blocks, reason, counts = TURNS[name]
    body = stream(blocks, reason, counts, size=3)
    pieces = CUTS[cut](body)
    assert b"".join(pieces) == body
    asked = sdk_reads(sdk, server, "stream", StreamReply([body]), request=GO)
    with LoopbackServer([StreamReply(pieces)]) as own:
        async with provider(own) as claw:
            turn = await claw.stream_turn([Message.user("go")], [READ, GREP])

    expected = sdk_turn(sdk.answer(asked))
    assert claw_view(turn) == expected
    # The comparison has teeth: the SDK really saw this turn, not an empty one.
    assert expected["text"] or expected["calls"]


@pytest.mark.parametrize("name", list(TURNS))
async def test_anthropic_sdk_and_claw_read_the_same_whole_message(server, sdk, name):
    blocks, reason, counts = TURNS[name]
    whole = message(blocks, reason, counts)
    asked = sdk_reads(sdk, server, "create", JSONReply(whole), request=GO)
    with LoopbackServer([JSONReply(whole)]) as own:
        async with provider(own) as claw:
            turn = await claw.complete([Message.user("go")], [READ])
    assert claw_view(turn) == sdk_turn(sdk.answer(asked))


def tool_round_history() -> list[Message]:
    """A conversation after one thinking, tool-using turn, with caching and an error result."""
    return [
        Message.system("You are claw, a coding agent.", cache_control=CacheControl(ttl="1h")),
        Message.developer("Project rules: run the tests."),
        Message.user("Why does test_parse fail?"),
        Message.assistant(
            "Let me look.",
            tool_calls=[
                *(
                    call
                    for call in AssistantTurn(
                        tool_calls=(
                            {"id": "toolu_1", "name": "read", "arguments": {"path": "p.py"}},
                            {"id": "toolu_2", "name": "grep", "arguments": {"pattern": "x"}},
                        )
                    ).tool_calls
                )
            ],
            provider_blocks=[
                {"provider": "anthropic", "data": thinking("Read p.py and grep.")},
                {"provider": "anthropic", "data": {"type": "redacted_thinking", "data": "abc"}},
            ],
        ),
        Message.tool_result("toolu_1", "     1\tdef parse(): ..."),
        Message.tool_error("toolu_2", "grep: bad pattern"),
    ]


async def test_anthropic_sdk_accepts_claws_request_unchanged(server, sdk):
    """claw's body passes the SDK's request types and comes out of the SDK as it went in."""
    server.add(StreamReply([stream([text("ok")])]), StreamReply([stream([text("ok")])]))
    async with provider(server, thinking_budget=1024) as claw:
        await claw.stream_turn(tool_round_history(), [READ, GREP])
    sent = server.requests[0].json

    # Each part of the body, validated by the SDK's own TypedDicts: a key they do not know
    # would be dropped, a wrong type or value refused.
    checked = sdk.ask("check_request", body=sent)
    assert checked["messages"] == sent["messages"]
    assert checked["system"] == sent["system"]
    assert checked["tools"] == sent["tools"]
    assert checked["thinking"] == sent["thinking"]

    # The SDK's create() takes every key as a typed argument and sends the same JSON.
    arguments = {key: value for key, value in sent.items() if key != "stream"}
    sdk_turn(sdk.ask("stream", url=url(server), request=arguments))
    assert server.requests[1].json == sent
    # The same API version as the SDK: the request types above are that version's.
    assert (
        server.requests[1].headers["anthropic-version"]
        == server.requests[0].headers["anthropic-version"]
    )


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ],
)
async def test_anthropic_sdk_and_claw_agree_on_which_errors_to_retry(server, sdk, status, kind):
    def script(on: LoopbackServer) -> None:
        # retry-after-ms keeps the SDK's own wait to a millisecond; claw's sleep is fake.
        on.add(
            JSONReply(error(kind, "the words"), status, headers={"retry-after-ms": "1"}),
            StreamReply([stream([text("second try")])]),
        )

    script(server)
    asked = sdk.send("stream", url=url(server), request=HI, max_retries=1)
    with LoopbackServer() as fresh:  # the same script, for claw, while the SDK reads its own
        script(fresh)
        async with provider(fresh, limits=HTTPLimits(retry=RetryPolicy(max_retries=1))) as claw:
            try:
                turn = await claw.stream_turn([Message.user("hi")], [])
                assert turn.text == "second try"
            except ProviderError as raised:
                assert f"{kind}: the words" in str(raised)
        claw_tries = len(fresh.requests)

    answer = sdk.answer(asked)
    if "turn" in answer:
        assert answer["turn"]["text"] == "second try"
    else:
        raised = answer["raised"]
        assert raised["status_error"], raised  # an APIStatusError, not a failure to connect
        assert raised["status_code"] == status
        assert raised["body"]["error"]["type"] == kind
    sdk_tries = len(server.requests)
    assert sdk_tries in (1, 2)
    assert claw_tries == sdk_tries


async def test_anthropic_sdk_and_claw_both_fail_on_an_error_event_mid_stream(server, sdk):
    events = (
        stream([text("Half of it")], "end_turn", usage()).decode().split("event: message_delta")[0]
    )
    body = (
        events + 'event: error\ndata: {"type": "error", "error": {"type": '
        '"overloaded_error", "message": "Overloaded"}}\n\n'
    ).encode()
    asked = sdk_reads(sdk, server, "stream", StreamReply([body]), request=HI)
    with LoopbackServer([StreamReply([body])]) as own:
        async with provider(own) as claw:
            with pytest.raises(ProviderError, match="overloaded_error: Overloaded"):
                await claw.stream_turn([Message.user("hi")], [])
    raised = sdk.answer(asked).get("raised")
    assert raised is not None, "the SDK read the stream as a whole turn"
    assert raised["status_error"] and "overloaded_error" in raised["message"], raised


def without_nulls(value: Any) -> Any:
    """``value`` without null fields: the SDK writes the optional fields of its response models
    as null when it sends them back; both mean "none"."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


@pytest.mark.parametrize("name", ["thinking, text and a call", "two calls, nested input"])
async def test_anthropic_sdk_and_claw_send_a_turn_back_the_same_way(server, sdk, name):
    """The SDK's way to continue: the response's content blocks, as they came, as the
    assistant's message. claw's history, sent back, must carry the same blocks."""
    blocks, reason, counts = TURNS[name]
    body = stream(blocks, reason, counts)
    for _ in ("sdk", "claw"):
        server.add(StreamReply([body]), StreamReply([stream([text("ok")])]))
    outputs = {"read": "output of read", "grep": "output of grep"}
    go = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]  # as claw sends it
    theirs = sdk.ask("send_back", url=url(server), request={**GO, "messages": go}, outputs=outputs)
    async with provider(server) as claw:
        turn = await claw.stream_turn([Message.user("go")], [READ, GREP])
        history = [
            Message.user("go"),
            turn.to_message(),
            *(Message.tool_result(call_id, output) for call_id, output in theirs["results"]),
        ]
        await claw.stream_turn(history, [READ, GREP])

    sdk_sent, claw_sent = (server.requests[n].json["messages"] for n in (1, 3))
    assert without_nulls(claw_sent) == without_nulls(sdk_sent)
    assert len(sdk_sent[1]["content"]) == len(blocks)
    assert [call_id for call_id, _ in theirs["results"]] == [call.id for call in turn.tool_calls]


async def test_anthropic_sdk_and_claw_continue_a_paused_turn_the_same_way(server, sdk):
    """``pause_turn``: the SDK reports it and leaves the rest to its caller, who sends the
    content back (Anthropic's documented way); claw does that itself, within one turn."""
    paused = stream([thinking("Look it up."), text("Looking. ")], "pause_turn", usage(40, 6))
    final = stream([text("Here it is.")], "end_turn", usage(60, 4, read=40))
    server.add(StreamReply([paused]), StreamReply([final]))
    go = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]  # as claw sends it
    asked = sdk.send("continue_paused", url=url(server), request={**GO, "messages": go})
    with LoopbackServer() as fresh:  # the same script, for claw, while the SDK reads its own
        fresh.add(StreamReply([paused]), StreamReply([final]))
        async with provider(fresh) as claw:
            turn = await claw.stream_turn([Message.user("go")], [READ])
        claw_sent = [request.json for request in fresh.requests]

    first, second = sdk.answer(asked)["turns"]
    assert (first["stop"], second["stop"]) == ("pause_turn", "end_turn")
    sdk_sent = [request.json for request in server.requests]
    assert len(sdk_sent) == len(claw_sent) == 2
    # The continuation carries the paused content as the SDK sends it back.
    assert without_nulls(claw_sent[1]["messages"]) == without_nulls(sdk_sent[1]["messages"])
    # claw's one turn is the SDK's two responses, one after the other.
    assert claw_view(turn) == {
        "text": first["text"] + second["text"],
        "calls": [],
        "kept": first["kept"] + second["kept"],
        "reasoning": first["reasoning"] + second["reasoning"],
        "usage": [a + b for a, b in zip(first["usage"], second["usage"], strict=True)],
        "stop": StopReason.END_TURN,
    }
