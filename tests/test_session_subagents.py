"""ch22 · A subagent's work in the session's transcript: its steps and their cost, not its stream.

Chapter 21's children report to the parent's observers, the session recorder among them, as
``SubagentEvent``. The transcript keeps what a child settled (its tool calls, its usage) under
its id, never the thousands of pieces of its stream, and the session's cost counts the
child's calls: they were paid for with the same key.
"""

import json
from decimal import Decimal
from pathlib import Path

from test_subagent import Look, Routed, task, uses

from claw.agent import Finish
from claw.events import StepUsage, SubagentEvent, ToolCalled
from claw.loop import Agent
from claw.sessions import SessionRecorder, load_session, session_usage, start_session
from claw.streaming import TextDelta
from claw.subagents import TaskTool
from claw.transcript import UnknownEvent, decode_event, event_record
from claw.types import AssistantTurn, TokenUsage, ToolSet

PARENT = "Find where the config is read."


def priced(turn: AssistantTurn | str, cost: str) -> AssistantTurn:
    turn = AssistantTurn(text=turn) if isinstance(turn, str) else turn
    return turn.model_copy(update={"usage": TokenUsage(input_tokens=100, cost=Decimal(cost))})


def test_session_a_subagent_event_is_recorded_by_its_id_and_read_back() -> None:
    usage = TokenUsage(input_tokens=100, cost=Decimal("0.002"))
    assert event_record(SubagentEvent("task-1", TextDelta("hel"))) is None
    record = event_record(SubagentEvent("task-1", StepUsage(1, usage)))
    assert record is not None
    assert json.loads(json.dumps(record, default=str))["data"]["agent_id"] == "task-1"
    assert record["data"]["event"]["event"] == "StepUsage"
    assert decode_event(record) == SubagentEvent("task-1", StepUsage(1, usage))
    broken = {"type": "event", "event": "SubagentEvent", "data": {"agent_id": "task-1"}}
    assert decode_event(broken) == UnknownEvent("SubagentEvent", {"agent_id": "task-1"})


async def test_session_a_childs_steps_are_recorded_and_count_in_the_sessions_cost(
    tmp_path: Path,
) -> None:
    provider = Routed(
        {
            PARENT: [
                priced(AssistantTurn(tool_calls=[task("Look for it.")]), "0.001"),
                priced("It is app.py.", "0.001"),
            ],
            "Look for it.": [
                priced(uses("look", "a", what="app.py"), "0.004"),
                priced("app.py reads it.", "0.004"),
            ],
        }
    )
    tool = TaskTool()
    agent = Agent(provider, ToolSet([Look(), tool]))
    tool.bind(agent)
    _, writer = start_session(tmp_path)
    agent.sink.add(SessionRecorder(agent, writer))

    finished = await agent.run(PARENT)
    writer.close()

    assert finished.reason == Finish.DONE
    lines = [json.loads(line) for line in writer.path.read_text().splitlines()]
    children = [line["data"] for line in lines if line.get("event") == "SubagentEvent"]
    kinds = [child["event"]["event"] for child in children]
    assert "TextDelta" not in kinds and "StepUsage" in kinds and "ToolCalled" in kinds
    assert {child["agent_id"] for child in children} == {"task-1"}
    session = load_session(writer.path)
    assert session_usage(session) == TokenUsage(input_tokens=400, cost=Decimal("0.010"))
    called = [e for e in session.events(SubagentEvent) if isinstance(e, SubagentEvent)]
    assert any(isinstance(e.event, ToolCalled) and e.event.name == "look" for e in called)
