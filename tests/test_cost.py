"""ch17 · Cost: usage added up per step, run, session and model, priced, summarised, budgeted.

The usage is what OpenRouter sends (its ``cost``, ``prompt_tokens_details.cached_tokens``,
``completion_tokens_details.reasoning_tokens``), streamed by the loopback server to the real
``OpenRouterProvider``; the model list is served by the loopback server too.
"""

import json
import os
import stat
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from claw_command import run_claw
from history import assert_valid_history

from claw.agent import Finish
from claw.cost import (
    Budget,
    CostTracker,
    RunSummary,
    Tally,
    cost_of,
    describe_cost,
    estimate_prompt_tokens,
    format_cost,
)
from claw.events import RunFinished, StepUsage
from claw.models import ModelCatalog, ModelInfo, parse_model_list, price
from claw.preflight import PreflightAgent
from claw.providers.openrouter import OpenRouterProvider
from claw.types import Message, TokenUsage, UserMessage
from clawbook.harness.loopback import (
    MODEL,
    JSONReply,
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    sse,
    text_chunks,
)

PRICED = "anthropic/claude-sonnet-4.5"

MODEL_LIST = {
    "data": [
        {
            "id": PRICED,
            "name": "Anthropic: Claude Sonnet 4.5",
            "context_length": 1000000,
            "pricing": {
                "prompt": "0.000003",
                "completion": "0.000015",
                "request": "0",
                "image": "0.0048",
                "input_cache_read": "0.0000003",
                "input_cache_write": "0.00000375",
            },
        },
        {
            "id": "openai/gpt-4o-mini",
            "context_length": 128000,
            "pricing": {"prompt": "0.00000015", "completion": "0.0000006"},
        },
        {
            "id": "openrouter/auto",
            "context_length": 2000000,
            "pricing": {"prompt": "-1", "completion": "-1"},
        },
        {"name": "an entry without an id"},
    ]
}


def usage(
    prompt: int,
    completion: int,
    *,
    cached: int = 0,
    reasoning: int = 0,
    cost: float | None = None,
) -> dict[str, Any]:
    """A ``usage`` object as OpenRouter sends it in the last chunk of a stream."""
    body: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {
            "cached_tokens": cached,
            "cache_write_tokens": 0,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }
    if cost is not None:
        body["cost"] = cost
        body["cost_details"] = {"upstream_inference_cost": None}
    return body


def says(text: str, used: dict[str, Any]) -> StreamReply:
    """A streamed answer with ``text`` and the usage ``used``."""
    return StreamReply(
        pieces=[
            sse(*text_chunks(text), chunk(finish_reason="stop"), chunk(choices=False, usage=used))
        ]
    )


def calls_bash(command: str, used: dict[str, Any], call_id: str = "call-1") -> StreamReply:
    """A streamed turn that runs ``command`` with the bash tool, with the usage ``used``."""
    return StreamReply(
        pieces=[
            sse(
                chunk("", role="assistant"),
                chunk(tool_calls=[call_start(0, call_id, "bash")]),
                chunk(tool_calls=[call_delta(0, json.dumps({"command": command}))]),
                chunk(finish_reason="tool_calls"),
                chunk(choices=False, usage=used),
            )
        ]
    )


class Echo:
    """A tool that answers with ``size`` characters, whatever it is asked."""

    def __init__(self, size: int) -> None:
        from claw.types import ToolDefinition

        self.size = size
        self.definition = ToolDefinition(name="bash", description="run a command").param(
            "command", "string", "the command"
        )

    async def run(self, arguments: dict[str, Any]) -> Any:
        from claw.types import ToolOutput

        return ToolOutput(content="x" * self.size)


def tracker_written() -> None:
    """Reach chapter 17's tracker first.

    It runs as an observer, and chapter 7's event sink reports an observer that raises
    instead of passing the error on: without this, a missing tracker would fail the test's
    assertions instead of showing as todo.
    """
    CostTracker(MODEL)(StepUsage(1, TokenUsage()))


async def catalog_from(server: LoopbackServer, cache: Path) -> ModelCatalog:
    """A catalog loaded from the model list the loopback server serves."""
    server.add(JSONReply(MODEL_LIST))
    catalog = ModelCatalog(f"{server.base_url}/models", cache)
    async with httpx.AsyncClient() as client:
        await catalog.load(client)
    return catalog


def test_cost_prices_are_read_exactly_and_unusable_ones_are_none():
    assert price("0.000003") == Decimal("0.000003")
    assert price(0.1) == Decimal("0.1")  # through str: not 0.1000000000000000055511151231257827
    assert price("-1") is None  # OpenRouter's "no fixed price"
    assert price("n/a") is None and price(None) is None and price(True) is None
    assert price("NaN") is None and price("Infinity") is None
    assert price("0") == Decimal(0)  # a free model is free, not unknown


def test_cost_model_list_is_parsed_into_model_info():
    models = parse_model_list(MODEL_LIST)
    assert set(models) == {PRICED, "openai/gpt-4o-mini", "openrouter/auto"}
    assert models[PRICED] == ModelInfo(
        id=PRICED,
        context_length=1000000,
        prompt=Decimal("0.000003"),
        completion=Decimal("0.000015"),
        cache_read=Decimal("0.0000003"),
        cache_write=Decimal("0.00000375"),
    )
    assert models["openai/gpt-4o-mini"].cache_read is None
    assert models["openai/gpt-4o-mini"].cache_write is None
    auto = models["openrouter/auto"]
    assert (auto.prompt, auto.completion, auto.context_length) == (None, None, 2000000)
    odd = parse_model_list(
        {
            "data": [
                "not an object",
                {"id": 7},
                {"id": "a/no-pricing", "pricing": None, "context_length": "1000"},
                {"id": "b/zero", "context_length": 0, "pricing": {"prompt": "0"}},
                {"id": "c/one", "context_length": 1},
            ]
        }
    )
    assert set(odd) == {"a/no-pricing", "b/zero", "c/one"}, "skipped entries, not the end"
    assert odd["a/no-pricing"] == ModelInfo(id="a/no-pricing")
    assert (odd["b/zero"].context_length, odd["b/zero"].prompt) == (None, Decimal(0))
    assert odd["c/one"].context_length == 1, "a positive int"


async def test_cost_model_list_is_fetched_once_and_cached_on_disk_with_its_date(
    server: LoopbackServer, tmp_path: Path
):
    cache = tmp_path / "cache" / "models.json"
    catalog = await catalog_from(server, cache)
    assert catalog.lookup(PRICED) is not None and catalog.lookup("no/such-model") is None
    assert [request.path for request in server.requests] == ["/v1/models"]
    saved = json.loads(cache.read_text())
    fetched = datetime.fromisoformat(saved["fetched"])
    assert abs(datetime.now(UTC) - fetched) < timedelta(minutes=1)
    assert saved["url"] == f"{server.base_url}/models"
    async with httpx.AsyncClient() as client:
        again = ModelCatalog(f"{server.base_url}/models", cache)
        await again.load(client)  # from the cache: no request
        assert again.lookup(PRICED) == catalog.lookup(PRICED) and len(server.requests) == 1
        server.add(JSONReply({"data": [{"id": "new/model", "pricing": {}}]}))
        later = ModelCatalog(f"{server.base_url}/models", cache)
        await later.load(client, now=fetched + timedelta(days=1, seconds=1))  # a day old
        assert len(server.requests) == 2 and later.lookup("new/model") is not None


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
async def test_cost_the_model_lists_cache_is_private_whatever_the_umask(
    server: LoopbackServer, tmp_path: Path, umask: int
):
    # Everything claw keeps in ~/.claw is the user's alone: folders 700, files 600.
    cache = tmp_path / "home" / ".claw" / "cache" / "models.json"
    previous = os.umask(umask)
    try:
        await catalog_from(server, cache)
    finally:
        os.umask(previous)
    kept = (cache.parent.parent, cache.parent, cache)
    assert [stat.S_IMODE(path.stat().st_mode) for path in kept] == [0o700, 0o700, 0o600]
    assert json.loads(cache.read_text())["url"] == f"{server.base_url}/models"


async def test_cost_a_model_list_that_cannot_be_read_leaves_prices_unknown(
    server: LoopbackServer, tmp_path: Path
):
    server.add(JSONReply({"error": {"code": 500, "message": "down"}}, status=500))
    catalog = ModelCatalog(f"{server.base_url}/models", tmp_path / "models.json")
    async with httpx.AsyncClient() as client:
        await catalog.load(client)
    assert catalog.lookup(PRICED) is None
    assert catalog.problem is not None and "/models could not be read" in catalog.problem
    assert not (tmp_path / "models.json").exists()
    fixed = await catalog_from(server, tmp_path / "models.json")  # the next run tries again
    assert fixed.problem is None and fixed.lookup(PRICED) is not None


def test_cost_of_a_call_prefers_the_reported_cost_then_the_prices():
    info = parse_model_list(MODEL_LIST)[PRICED]
    reported = TokenUsage(input_tokens=1000, output_tokens=100, cost=Decimal("0.00123"))
    assert cost_of(reported, info) == Decimal("0.00123")
    priced = TokenUsage(input_tokens=1000, output_tokens=100, cached_input_tokens=800)
    # 200 uncached x 0.000003 + 800 cached x 0.0000003 + 100 out x 0.000015, exactly
    assert cost_of(priced, info) == Decimal("0.0006") + Decimal("0.00024") + Decimal("0.0015")
    no_cache_price = parse_model_list(MODEL_LIST)["openai/gpt-4o-mini"]
    assert cost_of(priced, no_cache_price) == 1000 * Decimal("0.00000015") + 100 * Decimal(
        "0.0000006"
    )
    assert cost_of(priced, None) is None
    assert cost_of(priced, ModelInfo(id="x", prompt=Decimal("0.000003"))) is None
    assert cost_of(priced, ModelInfo(id="x", completion=Decimal("0.000015"))) is None
    assert cost_of(priced, parse_model_list(MODEL_LIST)["openrouter/auto"]) is None


def test_cost_of_a_call_prices_cache_writes_at_the_write_price():
    # A call that writes the cache, as chapter 24's Anthropic provider counts it: of 1,000 input
    # tokens, 600 were read from the cache and 300 written to it; 100 are plain input.
    info = parse_model_list(MODEL_LIST)[PRICED]
    assert info.cache_write == Decimal("0.00000375")
    cached = TokenUsage(
        input_tokens=1000, output_tokens=100, cached_input_tokens=600, cache_write_tokens=300
    )
    # 100 x $3/M + 600 read x $0.30/M + 300 written x $3.75/M + 100 out x $15/M, exactly
    assert cost_of(cached, info) == Decimal("0.003105")
    # Writes priced as plain input (300 x $3/M) would make it $0.00288: 7 % too little.
    assert cost_of(cached, info) != Decimal("0.00288")
    # A model listed without a write price: writes cost what plain input costs.
    no_cache_price = parse_model_list(MODEL_LIST)["openai/gpt-4o-mini"]
    assert cost_of(cached, no_cache_price) == 1000 * Decimal("0.00000015") + 100 * Decimal(
        "0.0000006"
    )
    # Counts that add up to more than the input: no token is charged twice, none below zero.
    odd = TokenUsage(
        input_tokens=100, output_tokens=0, cached_input_tokens=80, cache_write_tokens=50
    )
    assert cost_of(odd, info) == 80 * Decimal("0.0000003") + 20 * Decimal("0.00000375")


def test_cost_money_is_rounded_half_up_to_a_hundredth_of_a_cent():
    assert format_cost(Decimal("0.00125")) == "$0.0013"
    assert format_cost(Decimal("0.00124999")) == "$0.0012"
    assert format_cost(Decimal("12.3")) == "$12.3000"
    assert format_cost(Decimal(0)) == "$0.0000"
    assert format_cost(Decimal("0.00004")) == "<$0.0001"  # spent, if not much
    tally = Tally()
    for _ in range(3):
        tally.add(TokenUsage(cost=Decimal("0.1")), Decimal("0.1"))
    assert tally.cost == Decimal("0.3")  # Decimal: three dimes make exactly 30 cents


def test_cost_unknown_is_said_never_zero():
    tally = Tally()
    tally.add(TokenUsage(input_tokens=10, output_tokens=2), None)
    assert tally.known_cost is None
    assert describe_cost(tally, "local/llama") == "unknown (no price for local/llama)"
    tally.add(TokenUsage(input_tokens=10, output_tokens=2), Decimal("0.002"))
    assert describe_cost(tally, "local/llama") == "at least $0.0020 (1 of 2 calls without a price)"
    two_unknown = Tally()
    for _ in range(2):
        two_unknown.add(TokenUsage(input_tokens=10, output_tokens=2), None)
    assert (two_unknown.calls, two_unknown.unpriced) == (2, 2)
    finished = RunFinished(Finish.DONE, 2, "ok", TokenUsage())
    shown = json.loads(RunSummary(finished, tally, "local/llama", 1.0).json())
    assert shown["cost_usd"] is None and shown["calls_without_price"] == 1
    assert "$0.0000" not in RunSummary(finished, tally, "local/llama", 1.0).line()


def test_cost_a_call_stopped_before_its_usage_came_is_unknown_never_zero():
    # Ctrl-C mid-stream: the step began, the provider never reported its usage, yet it may bill.
    stopped = RunFinished(Finish.CANCELLED, 1, "", TokenUsage())
    line = RunSummary(stopped, Tally(), "test/model", 3.0).line()
    assert "$0.0000" not in line
    assert "cost unknown (1 call(s) stopped before the provider reported their usage)" in line
    assert json.loads(RunSummary(stopped, Tally(), "test/model", 3.0).json())["cost_usd"] is None
    tally = Tally()
    tally.add(TokenUsage(input_tokens=10, output_tokens=2), Decimal("0.002"))
    two = RunFinished(Finish.CANCELLED, 2, "", TokenUsage())  # the second call was stopped
    assert (
        "cost at least $0.0020 (1 call(s) stopped before the provider reported their usage)"
        in RunSummary(two, tally, "m", 1.0).line()
    )
    spent_nothing = RunFinished(Finish.BUDGET, 0, "", TokenUsage())  # no call was ever made
    assert "cost $0.0000" in RunSummary(spent_nothing, Tally(), "m", 0.1).line()


def test_cost_a_stopped_run_of_a_model_without_a_price_is_unknown_not_at_least_zero():
    # Ctrl-C in the second step of a run on a model with no price: nothing is known at all.
    tally = Tally()
    tally.add(TokenUsage(input_tokens=10, output_tokens=2), None)
    two = RunFinished(Finish.CANCELLED, 2, "", TokenUsage())
    line = RunSummary(two, tally, "local/llama", 1.0).line()
    assert "at least" not in line and "$0.0000" not in line
    assert (
        "cost unknown (no price for local/llama, and 1 call(s) stopped before the provider "
        "reported their usage)" in line
    )
    tally.add(TokenUsage(input_tokens=10, output_tokens=2), Decimal("0.002"))  # one priced
    three = RunFinished(Finish.CANCELLED, 3, "", TokenUsage())
    assert "cost at least $0.0020 (1 of 2 calls without a price, and 1 call(s) stopped" in (
        RunSummary(three, tally, "local/llama", 1.0).line()
    )


def test_cost_estimate_is_last_reported_prompt_plus_new_characters_over_four():
    new = [UserMessage(content="x" * 400)]
    from claw.types import dump_messages

    assert estimate_prompt_tokens(1000, new) == 1000 + len(dump_messages(new)) // 4
    assert estimate_prompt_tokens(0, []) == len(dump_messages([])) // 4


async def test_cost_tracker_adds_up_reported_usage_per_step_run_session_and_model(
    server: LoopbackServer,
):
    tracker_written()
    server.add(
        calls_bash("ls", usage(1200, 40, cached=1000, reasoning=30, cost=0.00123)),
        says("Two files.", usage(1300, 12, cached=1200, cost=0.000456)),
        says("Still two.", usage(1400, 5, cost=0.0007)),
    )
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        tracker = CostTracker(MODEL)
        agent = PreflightAgent(provider, [Echo(10)], observers=[tracker])
        first = await agent.run("What is here?")
        assert first.reason is Finish.DONE
        run = tracker.last_run
        assert (run.calls, run.input_tokens, run.output_tokens) == (2, 2500, 52)
        assert (run.cached_tokens, run.reasoning_tokens) == (2200, 30)
        assert run.cost == Decimal("0.00123") + Decimal("0.000456")
        assert [step.cost for step in tracker.steps] == [Decimal("0.00123"), Decimal("0.000456")]
        await agent.run("And now?")
    assert tracker.last_run.calls == 1 and tracker.last_run.cost == Decimal("0.0007")
    assert tracker.session.calls == 3
    assert tracker.session.cost == Decimal("0.002386")
    assert tracker.by_model == {MODEL: tracker.session}
    assert tracker.run == Tally()  # nothing in progress


async def test_cost_tracker_prices_usage_without_a_cost_from_the_model_list(
    server: LoopbackServer, tmp_path: Path
):
    tracker_written()
    catalog = await catalog_from(server, tmp_path / "models.json")
    server.add(says("Hi.", usage(2000, 100, cached=1000)))
    async with OpenRouterProvider(PRICED, base_url=server.base_url, api_key="sk-test") as provider:
        tracker = CostTracker(PRICED, catalog)
        await PreflightAgent(provider, observers=[tracker]).run("Hello")
    # 1000 x $3/M + 1000 cached x $0.30/M + 100 x $15/M
    assert tracker.session.known_cost == Decimal("0.003") + Decimal("0.0003") + Decimal("0.0015")
    unknown = CostTracker("local/model", catalog)
    unknown(StepUsage(1, TokenUsage(input_tokens=5, output_tokens=5)))
    assert unknown.session.known_cost is None and unknown.session.unpriced == 1


async def test_cost_budget_ends_the_run_before_the_call_that_would_pass_it(
    server: LoopbackServer,
):
    tracker_written()
    # Each call reports $0.004; the budget is $0.01: the third call would pass it.
    server.add(
        calls_bash("ls", usage(1000, 20, cost=0.004), "call-1"),
        calls_bash("ls -l", usage(1100, 20, cost=0.004), "call-2"),
        calls_bash("ls -la", usage(1200, 20, cost=0.004), "call-3"),
    )
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        tracker = CostTracker(MODEL)
        agent = PreflightAgent(provider, [Echo(10)], observers=[tracker])
        budget = Budget(Decimal("0.01"), tracker)
        agent.preflight.append(budget.check)
        finished = await agent.run("List the files, again and again.")
    assert finished.reason is Finish.BUDGET and finished.reason == "budget"
    assert len(server.requests) == 2 and tracker.session.cost == Decimal("0.008")
    assert budget.estimate is not None and Decimal("0.008") + budget.estimate > Decimal("0.01")
    assert_valid_history(agent.history)  # every call has its result


async def test_cost_budget_counts_the_prompt_about_to_be_sent(server: LoopbackServer):
    tracker_written()

    # $0.001 per 1000 prompt tokens. After one call ($0.001 of $0.002), a small tool result
    # leaves room for the next call; a tool result of 40,000 characters (~10,000 tokens) does not.
    async def second_call_made(result_size: int) -> bool:
        server.add(
            calls_bash("cat big", usage(1000, 0, cost=0.001)),
            says("ok", usage(1010, 0, cost=0.001)),
        )
        async with OpenRouterProvider(
            MODEL, base_url=server.base_url, api_key="sk-test"
        ) as provider:
            tracker = CostTracker(MODEL)
            agent = PreflightAgent(provider, [Echo(result_size)], observers=[tracker])
            agent.preflight.append(Budget(Decimal("0.00250"), tracker).check)
            before = len(server.requests)
            finished = await agent.run("Read it.")
            made = len(server.requests) - before == 2
            assert finished.reason is (Finish.DONE if made else Finish.BUDGET)
        if not made:
            server.add(says("unused", usage(1, 1)))  # keep the script in step
        return made

    assert await second_call_made(40)
    assert not await second_call_made(40_000)


async def test_cost_a_spent_budget_stops_before_the_first_call(server: LoopbackServer):
    tracker_written()
    async with OpenRouterProvider(MODEL, base_url=server.base_url, api_key="sk-test") as provider:
        tracker = CostTracker(MODEL)
        agent = PreflightAgent(provider, observers=[tracker])
        agent.preflight.append(Budget(Decimal(0), tracker).check)
        finished = await agent.run("Hello")
    assert (finished.reason, finished.steps, server.requests) == (Finish.BUDGET, 0, [])


def test_cost_claw_prints_a_summary_after_the_run_and_keeps_to_max_cost(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    tracker_written()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAW_MODELS_URL", f"{server.base_url}/models")
    server.add(
        JSONReply(MODEL_LIST),
        says("Hello!", usage(1234, 56, cached=1000, reasoning=7, cost=0.0123)),
    )
    assert run_claw(server, tmp_path, monkeypatch, "hi", "--unguarded") == 0
    out, err = capsys.readouterr()
    assert out.endswith("Hello!\n[done after 1 step(s)]\n")
    line = err.splitlines()[-1]
    assert line.startswith(
        "[1,234 tokens in (1,000 cached), 56 out (7 reasoning) · cost $0.0123 · "
    )
    assert line.endswith(" s]")
    server.add(says("Hello!", usage(1000, 10)))  # no cost reported: priced from the list
    assert run_claw(server, tmp_path, monkeypatch, "hi", "--unguarded", "--summary", "json") == 0
    shown = json.loads(capsys.readouterr().err.splitlines()[-1])
    assert shown["model"] == "test/model" and shown["cost_usd"] is None  # not in the list
    assert (shown["finish"], shown["input_tokens"], shown["calls_without_price"]) == (
        "done",
        1000,
        1,
    )
    server.add(says("never", usage(1, 1)))
    assert run_claw(server, tmp_path, monkeypatch, "hi", "--unguarded", "--max-cost", "0") == 1
    out, err = capsys.readouterr()
    assert out.endswith("[budget after 0 step(s)]\n")
    assert len([r for r in server.requests if r.path.endswith("/chat/completions")]) == 2


def test_cost_budget_counts_only_what_was_added_since_the_last_call():
    tracker_written()
    tracker = CostTracker(MODEL)
    budget = Budget(Decimal(1), tracker)
    history: list[Message] = [UserMessage(content="x" * 40_000)]
    assert budget.check(history) is None and budget.estimate is None  # no price known yet
    tracker(StepUsage(1, TokenUsage(input_tokens=10_000, cost=Decimal("0.01"))))
    history.append(UserMessage(content="y" * 400))
    assert budget.check(history) is None
    # the 40,000 characters are in the 10,000 reported tokens: only the new message is added
    expected = estimate_prompt_tokens(10_000, history[1:]) * Decimal("0.01") / 10_000
    assert budget.estimate == expected
    # a call that would bring the session to exactly the limit is made: only passing it stops
    estimate = Budget(Decimal(1), tracker).next_call(history)
    assert estimate is not None
    assert Budget(tracker.session.cost + estimate, tracker).check(history) is None
