"""ch21 · Attacks on the session's limits through subagents: one turn that starts many children.

A red team's model answered one turn with eight ``task`` calls. Under ``--max-cost 0.05
--max-steps 1`` the session made nine model calls and spent $0.36: each child's first call was
checked against the money spent so far, which was nothing yet, and none of them counted as a
step. Here the same turn meets every limit: the run's steps count the children's calls, each
child call is priced before it is sent (the calls already on their way included), and one turn
may start only so many children, only so many at a time.
"""

import asyncio
import json
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from claw_command import run_claw
from test_subagent import PARENT, Routed, parent_with, results, task, uses

from claw.agent import Finish
from claw.cost import Budget, CostTracker
from claw.loop import Limits
from claw.subagents import MAX_RUNNING_TASKS, MAX_TASKS_PER_TURN, TaskTool, limit_children
from claw.types import AssistantTurn, TokenUsage, ToolDefinition, ToolOutput
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    sse,
    text_chunks,
    usage_body,
)

LOOK = "Look around the project and report what you find. " * 4
"""A child's prompt of a realistic length."""


def many_tasks(count: int, prompt: str, cost: float) -> StreamReply:
    """One streamed turn asking for ``count`` task calls at once; its usage reports ``cost``."""
    pieces: list[dict[str, Any] | str] = [chunk("", role="assistant")]
    for index in range(count):
        arguments = {"description": f"look {index + 1}", "prompt": prompt}
        pieces.append(chunk(tool_calls=[call_start(index, f"t{index + 1}", "task")]))
        pieces.append(chunk(tool_calls=[call_delta(index, json.dumps(arguments))]))
    pieces += [
        chunk(finish_reason="tool_calls"),
        chunk(choices=False, usage=usage_body(1000, 10, cost=cost)),
    ]
    return StreamReply(pieces=[sse(*pieces)])


def answers(text: str, cost: float) -> StreamReply:
    """A streamed turn with ``text`` and no tool calls, whose usage reports ``cost`` dollars."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks(text),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=usage_body(1000, 10, cost=cost)),
            )
        ]
    )


def failed_tasks(out: str) -> list[str]:
    """The ``task`` results the claw command printed as errors, in order."""
    return [line.split("✗ task: ", 1)[1] for line in out.splitlines() if "✗ task: " in line]


def test_subagent_attack_eight_tasks_in_one_turn_keep_to_max_steps(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    server.add(
        many_tasks(8, LOOK, 0.01),
        *[answers("found it", 0.045) for _ in range(8)],  # what each child would have cost
    )

    options = ("--unguarded", "--max-cost", "0.05", "--max-steps", "1", "--summary", "json")
    status = run_claw(server, project, monkeypatch, "Look everywhere.", *options)

    out, err = capsys.readouterr()
    assert len(server.requests) == 1, "the parent's one call was the run's one step"
    assert failed_tasks(out) == [
        f"subagent task-{n} was not started: the run has made all its 1 model call(s), its "
        "subagents' included"
        for n in range(1, 9)
    ]
    summary = json.loads(err.splitlines()[-1])
    assert (summary["finish"], summary["steps"], summary["cost_usd"]) == ("max_steps", 1, "0.01")
    assert status == 1


def test_subagent_attack_eight_tasks_in_one_turn_keep_to_max_cost(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    prompt = "Read every file of the project and report on each. " + "x" * 4000
    server.add(
        many_tasks(8, prompt, 0.01),  # 1,000 prompt tokens for $0.01: $0.00001 a token
        *[answers("found it", 0.0125) for _ in range(8)],
        answers("never asked: the session's budget is spent", 0.01),
    )

    options = ("--unguarded", "--max-cost", "0.05", "--summary", "json")
    status = run_claw(server, project, monkeypatch, "Look everywhere.", *options)

    out, err = capsys.readouterr()
    # Each child's first call is estimated at $0.0112 (its history's 4,474 characters are
    # 1,118 tokens, at the parent's $0.00001): $0.01 spent and three reserved make $0.0435; a
    # fourth would make $0.0547, past $0.05. (The screen shows each result's first line cut.)
    assert len(server.requests) == 4
    assert failed_tasks(out) == [
        f"subagent task-{n} was not started: its next call, estimated at $0.0112, would take "
        "the session past i…"
        for n in range(4, 9)
    ]
    summary = json.loads(err.splitlines()[-1])
    assert Decimal(summary["cost_usd"]) == Decimal("0.0475") <= Decimal("0.05")
    assert (summary["finish"], status) == ("budget", 1)


async def test_subagent_attack_a_childs_calls_count_toward_the_parents_max_steps(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(tool_calls=[task("Go A.", "t1"), task("Go B.", "t2")]),
                AssistantTurn(tool_calls=[task("Go C.", "t3")]),  # the next run's
                "C answered.",
            ],
            "Go A.": [uses("look", "a", what="1"), uses("look", "b", what="2"), "never asked"],
            "Go B.": ["never asked either"],
            "Go C.": ["C done."],
        }
    )
    tool = TaskTool()
    parent = parent_with(provider, tool)
    parent.limits = Limits(max_steps=3)

    with caplog.at_level(logging.WARNING, logger="claw.events"):
        finished = await parent.run(PARENT)

    # with no budget, the child's usage observer asks none: no observer failed
    assert [r.getMessage() for r in caplog.records if r.name == "claw.events"] == []
    assert (finished.reason, finished.steps) == (Finish.MAX_STEPS, 1)
    assert [prompt for prompt, _ in provider.calls] == [PARENT, "Go A.", "Go A."]
    used = "the run has made all its 3 model call(s), its subagents' included"
    assert results(parent) == [
        ToolOutput.error(
            f"subagent task-1 went over its budget ({used}) and was stopped after 2 step(s); "
            "it wrote no text"
        ),
        ToolOutput.error(f"subagent task-2 was not started: {used}"),
    ]

    # The next run counts from 0 again: a REPL's second prompt may delegate.
    again = await parent.run(PARENT)
    assert (again.reason, again.steps) == (Finish.DONE, 2)
    assert results(parent)[-1] == ToolOutput.ok("C done.")


class Crowd:
    """A read-only tool ``wait``: each caller waits until all ``expected`` children are here.

    Here means inside the tool, or waiting for a place (``asked`` minus ``placed``: the
    ``TaskTool``'s semaphore, counted by ``count_places``). Children that all start at once,
    with nothing to make them wait for a place, all come in; it notes the most inside at once.
    """

    read_only = True

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.inside = 0
        self.most = 0
        self.asked = 0
        self.placed = 0
        self.everyone = asyncio.Event()

    def count_places(self, tool: TaskTool) -> None:
        """Count the children that ask ``tool`` for a place, and those that got one."""
        acquire = tool.running.acquire

        async def counted() -> bool:
            self.asked += 1
            got = await acquire()
            self.placed += 1
            return got

        tool.running.acquire = counted  # type: ignore[method-assign]

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="wait", description="Wait for the others.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.inside += 1
        self.most = max(self.most, self.inside)
        if self.inside + self.asked - self.placed >= self.expected:
            self.everyone.set()
        try:
            await self.everyone.wait()
        finally:
            self.inside -= 1
        return ToolOutput.ok("waited")


@pytest.mark.timeout(10)
async def test_subagent_attack_one_turn_starts_a_few_children_and_runs_fewer_at_once() -> None:
    assert (MAX_TASKS_PER_TURN, MAX_RUNNING_TASKS) == (20, 10)
    crowd = Crowd(expected=3)
    prompts = ["Go A.", "Go B.", "Go C.", "Go D."]
    provider = Routed(
        {
            PARENT: [
                AssistantTurn(tool_calls=[task(p, f"t{i}") for i, p in enumerate(prompts)]),
                AssistantTurn(tool_calls=[task("Go E.", "t9")]),
                "All done.",
            ],
            **{p: [uses("wait"), f"{p[3]} done."] for p in [*prompts, "Go E."]},
        }
    )
    tool = TaskTool(max_per_turn=3, max_running=2)
    crowd.count_places(tool)
    parent = parent_with(provider, tool, crowd, concurrent=True)

    finished = await parent.run(PARENT)

    assert finished.reason == Finish.DONE
    assert crowd.most == 2, "three children of one turn, two at a time"
    assert results(parent) == [
        ToolOutput.ok("A done."),
        ToolOutput.ok("B done."),
        ToolOutput.ok("C done."),
        ToolOutput.error(
            "task refused: one turn may start at most 3 subagents; ask for the rest in a "
            "later turn"
        ),
        ToolOutput.ok("E done."),  # the next turn may start children again
    ]
    for name in ("max_per_turn", "max_running"):
        with pytest.raises(ValueError, match=f"{name} must be at least 1, not 0"):
            TaskTool(**{name: 0})


async def test_subagent_attack_a_childs_call_is_priced_before_it_is_sent_and_freed_after() -> None:
    def priced(turn: AssistantTurn | str, cost: str) -> AssistantTurn:
        turn = AssistantTurn(text=turn) if isinstance(turn, str) else turn
        return turn.model_copy(
            update={"usage": TokenUsage(input_tokens=1000, cost=Decimal(cost))}
        )

    prompt, other = ("Look at each file. " + "x" * 4000, "Read each file. " + "x" * 4003)
    provider = Routed(
        {
            PARENT: [
                priced(AssistantTurn(tool_calls=[task(prompt), task(other, "t2")]), "0.01"),
                priced("Done.", "0.001"),
            ],
            prompt: [
                priced(uses("look", "a", what="1"), "0.001"),
                priced(uses("look", "b", what="2"), "0.001"),
                priced("Looked twice.", "0.001"),
            ],
            other: ["never asked: it would pass the budget"],
        }
    )
    tool = TaskTool()
    parent = parent_with(provider, tool, concurrent=True)
    tracker = CostTracker("model")
    parent.sink.add(tracker)
    parent.sink.add(tracker.count_subagents)
    limit_children(parent, Budget(Decimal("0.03"), tracker))
    assert tool.money is not None and tool.budget is not None

    finished = await parent.run(PARENT)

    # A child's first call is estimated at $0.0111 (4,442 characters of history, 1,110 tokens,
    # at the $0.00001 a token of the parent's call). task-1's is let through and reserved;
    # task-2's, checked before any cost came back, would make $0.0322. task-1's next calls
    # (near $0.012 each) fit only because each reserved estimate is freed once its $0.001 is
    # counted.
    assert finished.reason == Finish.DONE
    assert results(parent) == [
        ToolOutput.ok("Looked twice."),
        ToolOutput.error(
            "subagent task-2 was not started: its next call, estimated at $0.0111, would take "
            "the session past its $0.0300 budget ($0.0100 spent, $0.0111 on its way)"
        ),
    ]
    assert [p for p, _ in provider.calls] == [PARENT, prompt, prompt, prompt, PARENT]
    assert tool.money.pending == 0
    assert tracker.session.cost == Decimal("0.014")
