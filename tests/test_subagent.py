"""ch21 · Subagents: the ``task`` tool runs a child agent and hands back its answer.

The child's tools (read-only by default, never ``task``), its own history, its answer as the
result, its events at the parent's observers marked with its id, its step and cost budgets,
a failing child as an error result, the parent's gate, two children at the same time, a
cancelled parent cancelling its child, and the real ``claw`` command delegating a search.
"""

import asyncio
import json
import logging
import subprocess
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from claw_command import calls, run_claw, says, tool_results
from fake_tools import Echo
from history import assert_valid_history

from claw.agent import Finish
from claw.events import RunFinished, SubagentEvent, ToolCalled, ToolResult
from claw.loop import Agent
from claw.mock import ProviderCall
from claw.registry import batches, default_tools
from claw.streaming import MockStreamProvider, StreamEvent, collect
from claw.subagents import (
    CHILD_PROMPT,
    TaskTool,
    WorktreeTaskTool,
    child_tools,
    token_budget,
)
from claw.tools.ask import AskUserTool, no_one_to_ask
from claw.types import (
    AssistantTurn,
    Message,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
)
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    usage_body,
)

PARENT = "Find where the config is read."
LOOKING = ("read", "glob", "grep", "list_dir", "web_fetch")
"""Chapter 12's read-only tools, in the order ``default_tools`` gives them."""


# ------------------------------------------------------------------ helpers


class Routed:
    """A stream provider with one script per conversation, chosen by its first user message.

    The parent and its children share this one provider, as they share the real one; which
    script answers a call depends only on whose conversation it is, never on the order in
    which concurrent children happen to call.
    """

    def __init__(self, scripts: dict[str, list[AssistantTurn | str]]) -> None:
        self.scripts = {prompt: MockStreamProvider(turns) for prompt, turns in scripts.items()}
        self.calls: list[tuple[str, ProviderCall]] = []

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncIterator[StreamEvent]:
        first = next(m.content for m in messages if isinstance(m, UserMessage))
        assert isinstance(first, str)
        self.calls.append((first, ProviderCall(tuple(messages), tuple(tools))))
        return self.scripts[first].stream(messages, tools)

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AssistantTurn:
        return await collect(self.stream(messages, tools))


class Look:
    """A read-only tool named ``look`` that answers ``saw <what>``."""

    read_only = True

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="look", description="Look at something.").param(
            "what", "string", "What to look at."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput.ok(f"saw {arguments['what']}")


class Meeting:
    """A read-only tool ``meet``: each caller waits until both callers are inside it.

    Two calls made one after the other can never meet: the first one waits alone until the
    test's time limit stops it (no shorter limit of its own, which a busy machine could reach
    while the other call is on its way).
    """

    read_only = True

    def __init__(self) -> None:
        self.order: list[str] = []
        self.arrived = 0
        self.both_here = asyncio.Event()

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="meet", description="Wait for the other one.").param(
            "who", "string", "Who arrives."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        who = arguments["who"]
        self.order.append(f"arrive {who}")
        self.arrived += 1
        if self.arrived == 2:
            self.both_here.set()
        await self.both_here.wait()  # run one after the other, the first would wait here forever
        self.order.append(f"leave {who}")
        return ToolOutput.ok(f"{who} met the other")


class Hang:
    """A read-only tool ``hang`` that never returns, and notes that it was cancelled."""

    read_only = True

    def __init__(self) -> None:
        self.cancelled = False

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="hang", description="Never returns.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolOutput.ok("impossible")


def task(prompt: str, call_id: str = "t1", description: str = "look around") -> ToolCall:
    return ToolCall(
        id=call_id, name="task", arguments={"description": description, "prompt": prompt}
    )


def uses(name: str, call_id: str = "c1", **arguments: Any) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)])


def spent(turn: AssistantTurn, tokens: int) -> AssistantTurn:
    return turn.model_copy(update={"usage": TokenUsage(input_tokens=tokens)})


def parent_with(
    provider: Routed, task_tool: TaskTool, *extra: Any, concurrent: bool = False
) -> Agent:
    agent = Agent(provider, ToolSet([Look(), Echo(), *extra, task_tool]), concurrent=concurrent)
    task_tool.bind(agent)
    return agent


def results(agent: Agent) -> list[ToolOutput]:
    return [
        ToolOutput(content=str(m.content), is_error=m.is_error)
        for m in agent.history
        if m.role == "tool"
    ]


# ------------------------------------------------------------------ the child's tools


def test_subagent_child_tools_are_the_read_only_ones_never_task_nor_ask_user(
    tmp_path: Path,
) -> None:
    tools = default_tools(tmp_path, web=True)
    tools.add(AskUserTool(no_one_to_ask))
    tools.add(TaskTool())

    assert child_tools(tools).names == LOOKING
    assert child_tools(tools, read_only=False).names == (
        *LOOKING[:4],
        "write",
        "edit",
        "apply_patch",
        "bash",
        "web_fetch",
    )


def test_subagent_task_is_read_only_only_when_its_children_are_and_ids_count_up() -> None:
    looking, editing = TaskTool(), TaskTool(read_only=False)
    parent = Agent(MockStreamProvider(), ToolSet([Look(), Echo(), looking]))
    two = [task("a", "t1"), task("b", "t2")]

    assert len(batches(two, ToolSet([looking]))) == 1
    assert len(batches(two, ToolSet([editing]))) == 2
    first, _ = looking.spawn(parent)
    second, child = looking.spawn(parent)
    assert (first, second) == ("task-1", "task-2")
    assert child.provider is parent.provider and child.tools.names == ("look",)
    assert child.limits.max_steps == looking.max_steps
    _, editor = editing.spawn(parent)
    assert editor.tools.names == ("look", "echo")  # the changing tools too, never task


# ------------------------------------------------------------------ the answer


async def test_subagent_answer_is_the_tool_result_and_the_child_sees_only_its_prompt() -> None:
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(text="Delegating.", tool_calls=[task("Search for config reads.")]),
                "It is read in settings.py.",
            ],
            "Search for config reads.": [
                uses("look", what="settings.py"),
                "settings.py line 12 reads config.toml.",
            ],
        }
    )
    parent = parent_with(provider, TaskTool())

    bad = await parent.tools["task"].run({"description": "x", "prompt": ""})
    finished = await parent.run(PARENT)

    assert bad.is_error and bad.content.startswith("invalid arguments for task:")
    assert finished.reason == Finish.DONE
    assert results(parent) == [ToolOutput.ok("settings.py line 12 reads config.toml.")]
    child_calls = [call for prompt, call in provider.calls if prompt != PARENT]
    assert child_calls[0].messages == (
        SystemMessage(content=CHILD_PROMPT),
        UserMessage(content="Search for config reads."),
    )
    assert child_calls[0].tool_names == ("look",)
    assert all("Delegating." not in str(m.content) for c in child_calls for m in c.messages)


async def test_subagent_events_reach_the_parents_observers_marked_with_the_childs_id() -> None:
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Look at a.")]), "Done."],
            "Look at a.": [uses("look", what="a"), "a is fine."],
        }
    )
    parent = parent_with(provider, TaskTool())
    seen: list[Any] = []
    parent.sink.add(seen.append)

    await parent.run(PARENT)

    kinds = [
        (type(e).__name__, e.agent_id if isinstance(e, SubagentEvent) else None)
        for e in seen
        if isinstance(e, SubagentEvent | ToolCalled | ToolResult)
    ]
    assert kinds[0] == ("ToolCalled", None) and kinds[-1] == ("ToolResult", None)
    assert {agent for _, agent in kinds[1:-1]} == {"task-1"}
    inner = [e.event for e in seen if isinstance(e, SubagentEvent)]
    assert next(e for e in inner if isinstance(e, ToolCalled)).name == "look"
    assert next(e for e in inner if isinstance(e, ToolResult)).output == "saw a"
    assert isinstance(inner[-1], RunFinished) and inner[-1].text == "a is fine."
    assert not any(isinstance(e, SubagentEvent) for e in parent.history)


# ------------------------------------------------------------------ budgets and failures


async def test_subagent_out_of_steps_is_an_error_result_and_the_parent_goes_on() -> None:
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Keep looking.")]), "It gave up."],
            "Keep looking.": [
                AssistantTurn(
                    text="first",
                    tool_calls=[ToolCall(id="a", name="look", arguments={"what": "1"})],
                ),
                AssistantTurn(
                    text="still going",
                    tool_calls=[ToolCall(id="b", name="look", arguments={"what": "2"})],
                ),
            ],
        }
    )
    parent = parent_with(provider, TaskTool(max_steps=2))

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE and finished.text == "It gave up."
    [result] = results(parent)
    assert result.is_error
    assert result.content == (
        "subagent task-1 did not finish: it ended max_steps after 2 step(s); "
        "its last text: still going"
    )


async def test_subagent_whose_provider_fails_is_an_error_result_not_a_dead_parent() -> None:
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Nothing scripted.")]), "Noted."],
            "Nothing scripted.": [],
        }
    )
    parent = parent_with(provider, TaskTool())

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE
    [result] = results(parent)
    assert result.is_error
    assert result.content.startswith("subagent task-1 failed: MockProviderExhausted: ")
    assert_valid_history(parent.history)


async def test_subagent_over_its_cost_budget_is_stopped_with_an_error_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[TokenUsage] = []

    def budget(usage: TokenUsage) -> str | None:
        seen.append(usage)
        return token_budget(100)(usage)

    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Spend.")]), "Too dear."],
            "Spend.": [
                spent(uses("look", "a", what="1"), 60),
                spent(uses("look", "b", what="2"), 60),
                spent(uses("look", "c", what="3"), 60),
                "never reached",
            ],
        }
    )
    parent = parent_with(provider, TaskTool(budget=budget))

    with caplog.at_level(logging.WARNING, logger="claw.events"):
        finished = await parent.run(PARENT)

    # the usage observer looked at StepUsage events only: it never failed on another event
    assert [r.getMessage() for r in caplog.records if r.name == "claw.events"] == []
    assert finished.reason == Finish.DONE
    [result] = results(parent)
    assert result.is_error
    assert result.content.startswith(
        "subagent task-1 went over its budget (120 tokens used, the budget is 100) "
        "and was stopped after 2 step(s)"
    )
    assert result.content.endswith("after 2 step(s); it wrote no text")
    # asked once before the child starts (nothing used), then with the child's total so far
    assert [usage.total_tokens for usage in seen] == [0, 60, 120]
    with pytest.raises(ValueError, match="at least 1"):
        token_budget(0)

    broke = Routed({PARENT: [AssistantTurn(tool_calls=[task("Spend.")]), "No money."]})
    poor = parent_with(broke, TaskTool(budget=lambda usage: "nothing left"))
    assert (await poor.run(PARENT)).reason == Finish.DONE
    [refused] = results(poor)
    assert refused == ToolOutput.error("subagent task-1 was not started: nothing left")
    assert [prompt for prompt, _ in broke.calls] == [PARENT, PARENT], "no child call was made"


async def test_subagent_runs_its_calls_through_the_parents_gate() -> None:
    asked: list[str] = []

    async def gate(call: ToolCall) -> ToolOutput | None:
        asked.append(call.name)
        return ToolOutput.error("refused by the gate") if call.name == "look" else None

    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Look.")]), "Ok."],
            "Look.": [uses("look", what="secret"), "I was refused."],
        }
    )
    parent = parent_with(provider, TaskTool())
    parent.gate = gate  # set after bind, as guard() does: the child still gets it

    await parent.run(PARENT)

    assert asked == ["task", "look"]
    child = [c for p, c in provider.calls if p == "Look."][1]
    assert any(m.role == "tool" and m.content == "refused by the gate" for m in child.messages)
    assert results(parent) == [ToolOutput.ok("I was refused.")]


async def test_subagent_unbound_task_is_an_error_result() -> None:
    tool = TaskTool()

    output = await tool.run({"description": "x", "prompt": "y"})

    assert output.is_error and "not connected to an agent" in output.content
    assert child_tools(ToolSet([tool, Look()])).names == ("look",)


async def test_subagent_a_child_that_wrote_no_text_says_so() -> None:
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(tool_calls=[task("Say nothing.", "t1"), task("Loop.", "t2")]),
                "Both were quiet.",
            ],
            "Say nothing.": [uses("look", what="a"), ""],
            "Loop.": [uses("look", "a", what="1"), uses("look", "b", what="2")],
        }
    )
    parent = parent_with(provider, TaskTool(max_steps=2))

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE
    assert results(parent) == [
        ToolOutput.ok("(subagent task-1 finished without an answer)"),
        ToolOutput.error(
            "subagent task-2 did not finish: it ended max_steps after 2 step(s); it wrote no text"
        ),
    ]


# ------------------------------------------------------------------ at the same time


async def test_subagent_two_read_only_children_run_at_the_same_time() -> None:
    meeting = Meeting()
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(tool_calls=[task("Go A.", "t1"), task("Go B.", "t2")]),
                "Both met.",
            ],
            "Go A.": [uses("meet", who="A"), "A done."],
            "Go B.": [uses("meet", who="B"), "B done."],
        }
    )
    parent = parent_with(provider, TaskTool(), meeting, concurrent=True)
    seen: list[Any] = []
    parent.sink.add(seen.append)

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE
    assert results(parent) == [ToolOutput.ok("A done."), ToolOutput.ok("B done.")]
    assert sorted(meeting.order[:2]) == ["arrive A", "arrive B"]  # both inside before any left
    ids = [e.agent_id for e in seen if isinstance(e, SubagentEvent)]
    first_end = next(
        i
        for i, e in enumerate(seen)
        if isinstance(e, SubagentEvent) and isinstance(e.event, RunFinished)
    )
    assert set(ids) == {"task-1", "task-2"}
    assert {e.agent_id for e in seen[:first_end] if isinstance(e, SubagentEvent)} == {
        "task-1",
        "task-2",
    }


async def test_subagent_a_child_runs_its_own_calls_as_its_parent_does() -> None:
    both = [
        ToolCall(id="m1", name="meet", arguments={"who": "A"}),
        ToolCall(id="m2", name="meet", arguments={"who": "B"}),
    ]
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Meet.")]), "Met."],
            "Meet.": [AssistantTurn(tool_calls=both), "Both met."],
        }
    )
    parent = parent_with(provider, TaskTool(), Meeting(), concurrent=True)

    await parent.run(PARENT)

    # one after the other, the first meet would wait alone: the child runs concurrently too
    answered = [c for p, c in provider.calls if p == "Meet."][1].messages
    assert [m.content for m in answered if m.role == "tool"] == [
        "A met the other",
        "B met the other",
    ]
    assert results(parent) == [ToolOutput.ok("Both met.")]


async def test_subagent_cancelling_the_parent_cancels_the_child() -> None:
    hang = Hang()
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Wait.")])],
            "Wait.": [uses("hang")],
        }
    )
    parent = parent_with(provider, TaskTool(), hang)
    seen: list[Any] = []

    def watch(event: object) -> None:
        seen.append(event)
        if isinstance(event, SubagentEvent) and isinstance(event.event, ToolCalled):
            parent.cancel()

    parent.sink.add(watch)

    finished = await parent.run(PARENT)  # a child that is not cancelled would hang forever

    assert finished.reason == Finish.CANCELLED
    assert hang.cancelled
    ends = [
        e.event for e in seen if isinstance(e, SubagentEvent) and isinstance(e.event, RunFinished)
    ]
    assert [end.reason for end in ends] == [Finish.CANCELLED]
    assert_valid_history(parent.history)
    # The cancellation went on up through call: chapter 7's note answers the task call, not
    # an error result made of a caught CancelledError ("subagent task-1 failed: ...").
    answer = parent.history[-1]
    assert isinstance(answer, ToolResultMessage) and answer.content.startswith("cancelled")


# ------------------------------------------------------------------ in the claw command


def test_subagent_claw_command_delegates_a_search_and_gets_the_answer(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("CONFIG = 'config.toml'\n")
    server.add(
        calls("task", {"description": "find config", "prompt": "Where is the config named?"}),
        calls("grep", {"pattern": "CONFIG"}, "call-2"),
        says("app.py names config.toml."),
        says("The config is config.toml, named in app.py."),
    )

    status = run_claw(server, project, monkeypatch, "Where is the config?")

    assert status == 0
    assert tool_results(server)[-1] == "app.py names config.toml."
    child = server.requests[1].json
    assert [m["role"] for m in child["messages"]] == ["system", "user"]
    assert child["messages"][1]["content"] == "Where is the config named?"
    offered = {tool["function"]["name"] for tool in child["tools"]}
    assert {"read", "grep", "glob", "list_dir"} <= offered
    assert not offered & {"task", "write", "edit", "bash", "ask_user"}
    assert "app.py:1" in str(server.requests[2].json["messages"][-1]["content"])


# ------------------------------------------------------------------ a child that edits, isolated


def make_repo(path: Path) -> Path:
    path.mkdir()
    for command in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "T"],
    ):
        subprocess.run(["git", "-C", str(path), *command], check=True)
    (path / "a.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(path), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "start"], check=True)
    return path


def worktrees(repo: Path) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in listing.splitlines() if line.startswith("worktree ")]


def same_changes_by_hand(repo: Path, where: Path) -> str:
    """The diff git itself makes of the child's two changes, in a clone of ``repo``."""
    subprocess.run(["git", "clone", "-q", str(repo), str(where)], check=True)
    (where / "b.txt").write_text("two\n")
    (where / "a.txt").write_text("uno\n")
    subprocess.run(["git", "-C", str(where), "add", "--all"], check=True)
    return subprocess.run(
        ["git", "-C", str(where), "diff", "--cached", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def test_subagent_worktree_child_edits_its_own_checkout_and_the_diff_comes_back(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    provider = Routed(
        {
            PARENT: [AssistantTurn(tool_calls=[task("Add b.txt.")]), "Got the diff."],
            "Add b.txt.": [
                uses("write", path="b.txt", content="two\n"),
                uses("bash", "c2", command="sed -i s/one/uno/ a.txt"),
                "Added b.txt, changed a.txt.",
            ],
        }
    )
    tool = WorktreeTaskTool(repo, lambda root: default_tools(root))
    parent = parent_with(provider, tool)

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE
    [result] = results(parent)
    assert not result.is_error
    assert result.content.startswith(
        "Added b.txt, changed a.txt.\n\nThe subagent's changes, as a diff against HEAD"
    )
    assert result.content.endswith(":\n" + same_changes_by_hand(repo, tmp_path / "oracle"))
    assert not (repo / "b.txt").exists() and (repo / "a.txt").read_text() == "one\n"
    assert worktrees(repo) == [f"worktree {repo.resolve()}"]
    child = next(c for p, c in provider.calls if p == "Add b.txt.")
    assert {"write", "bash"} <= set(child.tool_names) and "task" not in child.tool_names


async def test_subagent_worktree_is_removed_when_the_child_fails_and_needs_a_repository(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    provider = Routed(
        {PARENT: [AssistantTurn(tool_calls=[task("Nothing.")]), "Ok."], "Nothing.": []}
    )
    parent = parent_with(provider, WorktreeTaskTool(repo, lambda root: default_tools(root)))

    await parent.run(PARENT)

    [result] = results(parent)
    assert result.is_error
    assert result.content.startswith("subagent task-1 failed: MockProviderExhausted")
    assert result.content.endswith("The subagent changed no file.")
    assert worktrees(repo) == [f"worktree {repo.resolve()}"]

    plain = tmp_path / "plain"
    plain.mkdir()
    lonely = WorktreeTaskTool(plain, lambda root: default_tools(root))
    lonely.bind(parent)
    output = await lonely.run({"description": "x", "prompt": "Nothing."})
    assert output.is_error and output.content.startswith("no worktree for the subagent: ")


# ------------------------------------------------------------------ the session's money


def calls_for(name: str, arguments: dict[str, object], call_id: str, cost: float) -> StreamReply:
    """A streamed turn asking for one call, whose usage reports ``cost`` dollars (1,000 in)."""
    return calls(name, arguments, call_id, usage=usage_body(1000, 10, cost=cost))


def test_subagent_claw_command_counts_the_childs_cost_and_stops_it_at_the_budget(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("CONFIG = 'config.toml'\n")
    server.add(
        calls_for("task", {"description": "find it", "prompt": "Find the config."}, "c1", 0.001),
        calls_for("grep", {"pattern": "CONFIG"}, "c2", 0.004),
        calls_for("grep", {"pattern": "config"}, "c3", 0.006),
        says("never asked: the session's budget is spent"),
    )

    options = ("--unguarded", "--max-cost", "0.01", "--summary", "json")
    status = run_claw(server, project, monkeypatch, "Where is the config?", *options)

    out, err = capsys.readouterr()
    assert status == 1  # the parent ended by its budget, alive: no traceback, a summary
    assert len(server.requests) == 3
    assert (
        "✗ task: subagent task-1 went over its budget (the session has spent $0.0110 of its "
        "$0.0100 budget)"
    ) in out
    assert out.endswith("[budget after 1 step(s)]\n")
    summary = json.loads(err.splitlines()[-1])
    assert summary["cost_usd"] == "0.011", "the child's $0.010 is the session's too"
    assert (summary["finish"], summary["steps"], summary["input_tokens"]) == ("budget", 1, 3000)
