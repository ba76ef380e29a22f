"""ch12 · The tool registry: read-only tools, batches, running a batch at once, default tools."""

import asyncio
import itertools
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import claw.registry
from claw.agent import CANCELLED, Finish
from claw.events import Event, RunFinished, ToolCalled, ToolResult
from claw.loop import Agent
from claw.registry import batches, default_tools, is_read_only, run_batch
from claw.streaming import MockStreamProvider
from claw.tools.edit import EditTool
from claw.tools.patch import ApplyPatchTool
from claw.tools.read import ReadTool
from claw.tools.web_fetch import WebFetchTool
from claw.tools.write import WriteTool
from claw.types import (
    AssistantTurn,
    StopReason,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
)

# ------------------------------------------------------------------ helpers


class Missing(NotImplementedError):
    """Code that is not written yet, as a stub reports it (but not a claw ``Todo``)."""


class Probe:
    """A tool that logs when each call starts and ends, and waits as it is told.

    ``wait`` maps a call's ``key`` argument to seconds to sleep, or to an ``asyncio.Event``
    to wait for. ``fail`` maps a key to an exception to raise. ``ended[key]`` is an event set
    once the call with that key has ended, however it ended.
    """

    def __init__(self, name: str, *, read_only: bool | None, log: list[tuple[str, str]]) -> None:
        self.name = name
        if read_only is not None:
            self.read_only = read_only
        self.log = log
        self.wait: dict[str, float | asyncio.Event] = {}
        self.fail: dict[str, BaseException] = {}
        self.ended: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name=self.name, description="A probe.").param(
            "key", "string", "Which call this is."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        key = arguments["key"]
        self.log.append(("start", key))
        try:
            wait = self.wait.get(key, 0.0)
            if isinstance(wait, asyncio.Event):
                await wait.wait()
            else:
                await asyncio.sleep(wait)
            if key in self.fail:
                raise self.fail[key]
            return ToolOutput.ok(f"{self.name} {key} done")
        finally:
            self.log.append(("end", key))
            self.ended[key].set()


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def calls_turn(*calls: ToolCall) -> AssistantTurn:
    return AssistantTurn(tool_calls=calls, stop_reason=StopReason.TOOL_USE)


def probes(log: list[tuple[str, str]]) -> tuple[Probe, Probe, ToolSet]:
    look = Probe("look", read_only=True, log=log)
    change = Probe("change", read_only=False, log=log)
    return look, change, ToolSet([look, change])


async def run_agent(
    tools: ToolSet, *turn_calls: ToolCall, concurrent: bool = True
) -> tuple[Agent, MockStreamProvider, list[Event]]:
    provider = MockStreamProvider([calls_turn(*turn_calls), "All done."])
    events: list[Event] = []
    agent = Agent(provider, tools, observers=[events.append], concurrent=concurrent)
    await agent.run("go")
    return agent, provider, events


def tool_results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.history if isinstance(m, ToolResultMessage)]


# ------------------------------------------------------------------ read-only


def test_multi_tool_read_only_is_declared_by_the_tool(tmp_path: Path) -> None:
    assert is_read_only(ReadTool(tmp_path))
    assert is_read_only(WebFetchTool())
    for tool in (WriteTool(tmp_path), EditTool(tmp_path), ApplyPatchTool(tmp_path)):
        assert not is_read_only(tool), tool.name
    log: list[tuple[str, str]] = []
    assert not is_read_only(Probe("plain", read_only=None, log=log))  # no attribute at all
    assert not is_read_only(None)  # no such tool

    class Truthy(Probe):
        read_only = "yes"  # type: ignore[assignment]

    assert not is_read_only(Truthy("truthy", read_only=None, log=log))


# ------------------------------------------------------------------ batches


def test_multi_tool_batches_group_only_consecutive_read_only_calls() -> None:
    _, _, tools = probes([])
    calls = [
        call("1", "look", key="a"),
        call("2", "look", key="b"),
        call("3", "change", key="c"),
        call("4", "look", key="d"),
        call("5", "hallucinated", key="e"),
        call("6", "look", key="f"),
        call("7", "look", key="g"),
        call("8", "change", key="h"),
        call("9", "change", key="i"),
    ]
    groups = batches(calls, tools)
    assert [[c.id for c in group] for group in groups] == [
        ["1", "2"],
        ["3"],
        ["4"],
        ["5"],
        ["6", "7"],
        ["8"],
        ["9"],
    ]
    assert batches([], tools) == []


KINDS = ["look", "change", "nothing"]
TURNS = [names for size in range(7) for names in itertools.product(KINDS, repeat=size)]
"""Every turn of up to six calls of a read-only tool, a tool that changes things, or a tool
that does not exist (1,093 turns: every arrangement of runs that short turns can have)."""


def test_multi_tool_batches_keep_every_call_in_order_in_maximal_groups() -> None:
    _, _, tools = probes([])
    for names in TURNS:
        calls = [call(str(i), name, key=str(i)) for i, name in enumerate(names)]
        groups = batches(calls, tools)
        assert [c for group in groups for c in group] == calls, names
        for group in groups:
            assert group, f"no empty group: {names}"
            if len(group) > 1:
                assert all(c.name == "look" for c in group), names
        for before, after in itertools.pairwise(groups):
            both_read_only = before[-1].name == "look" and after[0].name == "look"
            assert not both_read_only, f"consecutive read-only calls belong in one group: {names}"


# ------------------------------------------------------------------ run_batch


async def test_multi_tool_run_batch_runs_every_call_at_once_results_in_call_order() -> None:
    arrived = 0
    turn = [asyncio.Event() for _ in range(4)]
    turn[3].set()  # the last call finishes first, then each lets the one before it finish
    finished: list[str] = []

    async def work(c: ToolCall) -> str:
        nonlocal arrived
        arrived += 1
        await asyncio.sleep(0)  # calls run at once have all started before any goes on
        assert arrived == 4, "the calls ran one at a time"
        position = int(c.id)
        await turn[position].wait()
        finished.append(c.id)
        if position:
            turn[position - 1].set()
        return f"result {c.id}"

    calls = [call(str(i), "look", key=str(i)) for i in range(4)]
    results = await run_batch(work, calls)
    assert finished == ["3", "2", "1", "0"]
    assert results == ["result 0", "result 1", "result 2", "result 3"]


async def test_multi_tool_run_batch_lets_a_bug_through_unwrapped_and_cancels_the_rest() -> None:
    cleaned: list[str] = []
    never = asyncio.Event()

    async def work(c: ToolCall) -> str:
        try:
            if c.id == "bug":
                await asyncio.sleep(0)  # once the others are waiting
                raise Missing("not written yet")
            await never.wait()  # only a cancel ends these
            return "slow"
        finally:
            cleaned.append(c.id)

    calls = [call("bug", "look", key="b"), call("a", "look", key="a"), call("c", "look", key="c")]
    with pytest.raises(Missing, match="not written yet"):
        await run_batch(work, calls)
    assert sorted(cleaned) == ["a", "bug", "c"], "the others were cancelled and cleaned up first"


# ------------------------------------------------------------------ through the agent


async def test_multi_tool_agent_runs_consecutive_read_only_calls_together() -> None:
    log: list[tuple[str, str]] = []
    look, _, tools = probes(log)
    gate = asyncio.Event()
    look.wait = {"a": gate, "b": gate, "c": gate}

    async def open_gate_when_all_started() -> None:
        while len([entry for entry in log if entry[0] == "start"]) < 3:
            await asyncio.sleep(0.001)
        gate.set()

    opener = asyncio.create_task(open_gate_when_all_started())
    try:  # one at a time, the first call would wait for the gate forever
        agent, _, _ = await run_agent(
            tools,
            call("1", "look", key="a"),
            call("2", "look", key="b"),
            call("3", "look", key="c"),
        )
    finally:
        opener.cancel()
    assert [m.content for m in tool_results(agent)] == ["look a done", "look b done", "look c done"]
    assert log[:3] == [("start", "a"), ("start", "b"), ("start", "c")]


async def test_multi_tool_calls_that_change_things_run_alone_in_call_order() -> None:
    log: list[tuple[str, str]] = []
    _, _, tools = probes(log)
    # every call pauses once (sleep(0)): calls started together all start before any ends
    agent, _, _ = await run_agent(
        tools,
        call("1", "look", key="a"),
        call("2", "look", key="b"),
        call("3", "change", key="c"),
        call("4", "look", key="d"),
    )
    # a and b together; c only once both ended; d only once c ended.
    assert log.index(("start", "c")) > max(log.index(("end", "a")), log.index(("end", "b")))
    assert log.index(("start", "d")) > log.index(("end", "c"))
    assert [m.tool_call_id for m in tool_results(agent)] == ["1", "2", "3", "4"]


async def test_multi_tool_events_called_before_the_batch_results_in_call_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[tuple[str, str]] = []
    look, _, tools = probes(log)
    slow_may_end = asyncio.Event()
    look.wait = {"slow": slow_may_end, "fast": 0.0}
    events: list[Event] = []
    now = 100.0  # the clock `timed` reads: it moves only when the test says
    monkeypatch.setattr(claw.registry, "time", SimpleNamespace(monotonic=lambda: now))

    def observe(event: Event) -> None:
        if isinstance(event, ToolCalled | ToolResult):
            log.append((type(event).__name__, event.id))
        events.append(event)

    async def five_seconds_after_the_fast_call() -> None:
        nonlocal now
        await look.ended["fast"].wait()
        now += 5.0
        slow_may_end.set()

    provider = MockStreamProvider(
        [calls_turn(call("s", "look", key="slow"), call("f", "look", key="fast")), "ok"]
    )
    agent = Agent(provider, tools, observers=[observe], concurrent=True)
    clock = asyncio.create_task(five_seconds_after_the_fast_call())
    try:
        await agent.run("go")
    finally:
        clock.cancel()
    assert [entry for entry in log if entry[0] != "end"] == [
        ("ToolCalled", "s"),
        ("ToolCalled", "f"),
        ("start", "slow"),
        ("start", "fast"),
        ("ToolResult", "s"),
        ("ToolResult", "f"),
    ]
    results = {e.id: e for e in events if isinstance(e, ToolResult)}
    durations = (results["s"].duration, results["f"].duration)
    assert durations == (5.0, 0.0), "each call times itself, with the given timed()"
    # The provider saw the results in call order, each under its own id.
    seen = [m for m in provider.calls[1].messages if isinstance(m, ToolResultMessage)]
    assert [(m.tool_call_id, m.content) for m in seen] == [
        ("s", "look slow done"),
        ("f", "look fast done"),
    ]


async def test_multi_tool_one_failing_call_does_not_stop_its_siblings() -> None:
    log: list[tuple[str, str]] = []
    look, _, tools = probes(log)
    look.wait = {"a": look.ended["b"], "c": look.ended["b"]}  # still running when b fails
    look.fail = {"b": OSError("disk on fire")}
    agent, _, events = await run_agent(
        tools, call("1", "look", key="a"), call("2", "look", key="b"), call("3", "look", key="c")
    )
    results = tool_results(agent)
    assert [m.is_error for m in results] == [False, True, False]
    assert results[0].content == "look a done"
    assert results[2].content == "look c done"
    assert "OSError: disk on fire" in results[1].content
    assert events[-1] == RunFinished(Finish.DONE, 2, "All done.", events[-1].usage)
    reported = [e for e in events if isinstance(e, ToolResult)]
    assert [e.is_error for e in reported] == [False, True, False], "each event says if it failed"
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert [e.step for e in called + reported] == [1] * 6, "every event names its step"


async def test_multi_tool_missing_code_in_a_batch_propagates_as_itself() -> None:
    log: list[tuple[str, str]] = []
    look, _, tools = probes(log)
    look.wait = {"a": asyncio.Event()}  # never set: only a cancel ends it
    look.fail = {"b": Missing("a stub")}
    provider = MockStreamProvider(
        [calls_turn(call("1", "look", key="b"), call("2", "look", key="a")), "ok"]
    )
    agent = Agent(provider, tools, concurrent=True)
    with pytest.raises(Missing, match="a stub"):
        await agent.run("go")
    assert ("end", "a") in log, "the sibling was cancelled and cleaned up"


async def test_multi_tool_cancel_stops_every_call_of_the_batch() -> None:
    log: list[tuple[str, str]] = []
    look, _, tools = probes(log)
    never = asyncio.Event()
    look.wait = {"a": never, "b": never, "c": never}
    provider = MockStreamProvider(
        [calls_turn(*(call(k, "look", key=k) for k in "abc")), "never reached"]
    )
    events: list[Event] = []
    agent = Agent(provider, tools, observers=[events.append], concurrent=True)
    task = asyncio.create_task(agent.run("go"))
    while len(log) < 3 and not task.done():
        await asyncio.sleep(0.001)
    if task.done():
        await task  # it failed before the calls started: show why
    agent.cancel()
    finished = await task  # calls that were not cancelled would wait forever
    assert finished.reason is Finish.CANCELLED
    assert sorted(entry for entry in log if entry[0] == "end") == [
        ("end", "a"),
        ("end", "b"),
        ("end", "c"),
    ]
    assert [m.content for m in tool_results(agent)] == [CANCELLED.content] * 3
    assert not [e for e in events if isinstance(e, ToolResult)]
    assert len(provider.calls) == 1


async def test_multi_tool_a_hallucinated_tool_gets_the_list_of_real_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    tools = default_tools(tmp_path)
    agent, provider, _ = await run_agent(
        tools, call("1", "read", path="a.txt"), call("2", "read_file", path="a.txt")
    )
    good, bad = tool_results(agent)
    assert good.content == "     1\talpha"
    assert bad.is_error
    assert bad.content.startswith("unknown tool 'read_file'; the tools are: ")
    for name in tools.names:
        assert name in bad.content
    assert [d.name for d in provider.calls[0].tools] == list(tools.names)


# ------------------------------------------------------------------ default_tools


def test_multi_tool_default_tools_are_claws_standard_set(tmp_path: Path) -> None:
    tools = default_tools(tmp_path)
    assert tools.names == (
        "read", "glob", "grep", "list_dir", "write", "edit", "apply_patch", "bash"
    )
    assert "web_fetch" not in tools
    web = default_tools(tmp_path, web=True)
    assert "web_fetch" in web
    assert is_read_only(web["web_fetch"])
    looking = {name for name in tools.names if is_read_only(tools[name])}
    assert looking == {"read", "glob", "grep", "list_dir"}
    assert set(tools.names) - looking == {"write", "edit", "apply_patch", "bash"}
    assert isinstance(tools["read"], ReadTool)
    assert tools["read"].root == tmp_path


async def test_multi_tool_default_tools_share_one_file_tracker(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    tools = default_tools(tmp_path)
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    refused = await tools["edit"].run(edit)
    assert refused.is_error
    assert "read app.py before editing it" in refused.content
    assert not (await tools["read"].run({"path": "app.py"})).is_error
    edited = await tools["edit"].run(edit)
    assert not edited.is_error, edited.content
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 2\n+x = 3\n*** End Patch\n"
    patched = await tools["apply_patch"].run({"patch": patch})
    assert not patched.is_error, patched.content
    assert (tmp_path / "app.py").read_text() == "x = 3\n"
    again = await tools["edit"].run({**edit, "old_string": "x = 3", "new_string": "x = 4"})
    assert not again.is_error, "edit knows what apply_patch wrote: " + again.content
    written = await tools["write"].run({"path": "new.py", "content": "y = 1\n"})
    assert not written.is_error, written.content
    assert (tmp_path / "new.py").read_text() == "y = 1\n", "write works in the root too"
    fresh = {"path": "new.py", "old_string": "y = 1", "new_string": "y = 2"}
    assert not (await tools["edit"].run(fresh)).is_error, "edit knows what write wrote"
    other = default_tools(tmp_path)  # a new session has not read anything
    assert (await other["edit"].run({**edit, "old_string": "x = 3"})).is_error
