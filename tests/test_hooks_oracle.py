"""ch15 · Hooks against Claude Code 2.1.332 itself: every recorded hook scenario through claw.

``tests/data/claude-code-2.1.332-hooks.json`` holds what the real program did for each scenario
of ``oracle/hooks.py``, recorded by ``make oracle``: the hooks of a settings file (each a script
that logged the JSON it read and answered with an exit code, stdout and stderr), a scripted
model asking for tool calls, and what followed (which hooks ran with which payload keys, whether
the calls ran or asked, which of the hook's marks reached the model or the user). No Claude Code
runs here, and no hook process either: claw's ``Hooks`` reads each hook's answer through your
``interpret`` as if the script had printed it, in front of the real ``Agent`` and ``Controls``
with small tools that only remember what they were asked.

A scenario where claw does otherwise fails its group unless it is a deliberate difference
(``DIFFERENCES``, listed with its reason on the chapter 15 page: tests/tooling/test_book_lists.py
checks that); so do the keys of the hooks' inputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from claude_code_recording import recording as recorded

from claw.control import Controls
from claw.hooks import Completed, Hook, Hooks, PromptBlocked, Verdict, interpret, run_with_hooks
from claw.loop import Agent
from claw.permissions import Approval, Mode, Permissions
from claw.streaming import MockStreamProvider
from claw.types import (
    AssistantTurn,
    StopReason,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
)

MARKS = ("STDERR-MARK", "STDOUT-MARK", "REASON-MARK", "CONTEXT-MARK", "STOP-MARK")
"""Words the scenarios' hooks print (oracle/hooks.py): where they arrive is the outcome."""
TOOLS = {"Bash": "bash", "Read": "read"}
CLAUDE_NAMES = {claw: claude for claude, claw in TOOLS.items()}


def recording() -> dict[str, dict[str, Any]]:
    """The recorded scenarios, by name."""
    return recorded("hooks")


def marks(value: object) -> set[str]:
    """The marks ``value`` carries (any message, block or text)."""
    text = value if isinstance(value, str) else repr(value)
    return {mark for mark in MARKS if mark in text}


# --- what Claude Code did -------------------------------------------------------------------


def claude_code_did(scenario: dict[str, Any]) -> dict[str, Any]:
    """The recorded outcome, as the facts claw is compared on."""
    done = scenario["outcome"]
    called = bool(done["first_request"])
    result_marks: set[str] = set()
    calls = []
    for call in done["calls"]:
        calls.append(
            (call["asked"], call["answered"], call.get("is_error"), set(call.get("marks", [])))
        )
        result_marks |= set(call.get("marks", []))
    later = {
        mark for request in done["later_requests"] for block in request for mark in block["marks"]
    }
    return {
        "fired": [
            (p["values"]["hook_event_name"], p["values"].get("tool_name")) for p in done["payloads"]
        ],
        "ran": sorted(done["ran"]),
        "calls": calls,
        "model requests": int(called) + len(done["later_requests"]),
        "marks before the first reply": {
            mark
            for message in done["first_request"]
            for block in message["blocks"]
            for mark in block["marks"]
        },
        "marks in later messages": later - result_marks,
        "marks told the user": set(done["result"]["marks"])
        if not called and done["result"]
        else set(),
    }


# --- what claw does -------------------------------------------------------------------------


class Answered(Hooks):
    """claw's hooks, each command hook answered as the scenario's script answers, no process.

    The recorder's hook commands are ``h0``, ``h1``...: ``answers`` holds what each printed and
    its exit code; ``interpret`` reads them as it reads a real hook's.
    """

    answers: dict[str, dict[str, Any]]
    fired: list[dict[str, Any]]

    async def run_one(self, event: str, hook: Hook, payload: dict[str, Any]) -> Verdict:
        label = getattr(hook, "command", "")
        answer = self.answers[label]
        earlier = any(seen["label"] == label for seen in self.fired)
        self.fired.append({"label": label, **payload})
        if answer.get("once") and earlier:
            return interpret(event, Completed(0, "", ""))
        stdout = answer.get("stdout", "")
        stdout = stdout if isinstance(stdout, str) else json.dumps(stdout)
        return interpret(event, Completed(answer["exit"], stdout, answer.get("stderr", "")))


class Recorder:
    """A tool that only remembers what it was asked: ``bash`` "runs" ``touch x`` by noting x."""

    def __init__(self, name: str, ran: list[str]) -> None:
        self.name = name
        self.ran = ran

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name=self.name, description="Records the call.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        command = str(arguments.get("command", ""))
        if command.startswith("touch "):
            self.ran.append(command.split()[1])
        if command == "false":
            return ToolOutput.error("exit code 1")
        return ToolOutput.ok("ok")


def claw_hooks(scenario: dict[str, Any], project: Path) -> Answered | str:
    """The scenario's hooks in claw's ``Hooks``, or why claw refuses them at start-up."""
    table: dict[str, list[dict[str, Any]]] = {}
    answers = {}
    for number, hook in enumerate(scenario["hooks"]):
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": f"h{number}"}]}
        if "matcher" in hook:
            group["matcher"] = hook["matcher"]
        table.setdefault(hook["event"], []).append(group)
        answers[f"h{number}"] = hook
    try:
        hooks = Answered.from_settings({"hooks": table}, project)
    except ValueError:
        return "refuses the hooks at start-up"
    hooks.answers = answers
    return hooks


async def claw_did(
    scenario: dict[str, Any], project: Path, payloads: list[dict[str, Any]] | None = None
) -> dict[str, Any] | str:
    """What claw does with the scenario, as the facts it is compared on (the hooks' inputs go
    to ``payloads``), or why it refuses the scenario's hooks."""
    hooks = claw_hooks(scenario, project)
    if isinstance(hooks, str):
        return hooks
    hooks.fired = [] if payloads is None else payloads
    ran: list[str] = []
    asked: list[str] = []

    async def approve(call: ToolCall, reason: str) -> Approval:  # print mode: an ask is a no
        asked.append(call.id)
        return Approval.DENY

    calls = [ToolCall(id=f"c{n}", name=TOOLS[c["tool"]], arguments=dict(c["input"]))
             for n, c in enumerate(scenario["calls"])]  # fmt: skip
    turns: list[AssistantTurn | str] = [
        AssistantTurn(text="", tool_calls=(call,), stop_reason=StopReason.TOOL_USE)
        for call in calls
    ]
    provider = MockStreamProvider([*turns, *["done"] * 5])
    tools = ToolSet([Recorder("bash", ran), Recorder("read", ran)])
    agent = Agent(provider, tools)
    permissions = Permissions(project, allow=scenario["allow"], mode=Mode.DEFAULT, approve=approve)
    hooks.permissions = permissions  # as claw's guard wires them: a hook's ask asks through them
    agent.gate = Controls(
        tools, checks=[hooks.pre_tool_use, permissions.check], after=[hooks.post_tool_use]
    )
    events = [event async for event in run_with_hooks(agent, hooks, scenario["prompt"])]
    requests = [list(call.messages) for call in provider.calls]
    results: dict[str, ToolResultMessage] = {
        m.tool_call_id: m
        for m in (requests[-1] if requests else [])
        if isinstance(m, ToolResultMessage)
    }
    answered = []
    for call in calls:
        result = results.get(call.id)
        answered.append(
            (call.id in asked, result is not None, None if result is None else result.is_error,
             set() if result is None else marks(result.text))
        )  # fmt: skip
    first = requests[0] if requests else []
    later = [m for m in (requests[-1] if requests else [])[len(first):]
             if not isinstance(m, ToolResultMessage | AssistantTurn)]  # fmt: skip
    blocked = [event for event in events if isinstance(event, PromptBlocked)]
    return {
        "fired": [
            (p["hook_event_name"], CLAUDE_NAMES.get(p.get("tool_name", ""))) for p in hooks.fired
        ],
        "ran": sorted(f for f in ran),
        "calls": answered,
        "model requests": len(requests),
        "marks before the first reply": marks(first),
        "marks in later messages": marks(later),
        "marks told the user": marks(blocked[0].reason) if blocked else set(),
    }


def differences(scenario: dict[str, Any], project: Path) -> list[str]:
    """The facts on which claw does otherwise than Claude Code did ([]: it agrees)."""
    import asyncio

    mine = asyncio.run(claw_did(scenario, project))
    theirs = claude_code_did(scenario)
    if isinstance(mine, str):
        return [mine]
    return [f"{key}: claw {mine[key]}, Claude Code {value}"
            for key, value in theirs.items() if mine[key] != value]  # fmt: skip


SCENARIO_DIFFERENCES: dict[str, str] = {
    "matcher-lower": "claw's own tool names (`bash`) are matcher names too",
    "matcher-prefix": "a matcher that picks no tool is refused at start-up",
    "pre-json-allow-unruled": "a hook's `allow` does not skip the permissions",
    "several-pre-block-and-silent": "the first hook that blocks stops the rest",
}
"""Scenarios where claw deliberately does otherwise, and the words the chapter 15 page's table
of differences uses for each."""

UNSENT_KEYS: dict[str, str] = {
    "duration_ms": "no `duration_ms` in PostToolUse's input",
    "background_tasks": "no `background_tasks` or `session_crons` in Stop's input",
    "session_crons": "no `background_tasks` or `session_crons` in Stop's input",
}
"""Keys of Claude Code 2.1.332's hook inputs that claw deliberately does not send, and the
page's words for each."""

TOOL_RESPONSE = "`tool_response` is what the model read: `content` and `is_error`"
"""The page's words for the deliberate difference in PostToolUse's ``tool_response``."""

DIFFERENCES: dict[str, str] = {
    **SCENARIO_DIFFERENCES,
    **{f"payload key {key}": why for key, why in UNSENT_KEYS.items()},
    "payload tool_response": TOOL_RESPONSE,
}
"""Every deliberate difference (scenarios, then payload keys): the page's table lists each."""

GROUPS = ["pre", "matcher", "post", "ups", "start", "stop", "several"]
"""The sections of the table (a scenario's name starts with its section)."""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project folder claw's hooks and permissions work in (nothing is written there)."""
    return tmp_path_factory.mktemp("hooks-oracle")


@pytest.mark.parametrize("group", GROUPS)
def test_hooks_oracle_claw_reacts_as_claude_code(group: str, project: Path) -> None:
    """Every recorded scenario of ``group``: claw's hooks fire, block, add and stop as Claude
    Code's did, or it is a listed difference that still holds; a failure names each fact."""
    scenarios = recording()
    assert len(scenarios) >= 40
    assert {name.split("-")[0] for name in scenarios} == set(GROUPS), "a section nobody checks"
    mine = {name: s for name, s in scenarios.items() if name.split("-")[0] == group}
    assert mine, f"no recorded scenario in {group!r}"
    wrong = []
    for name, scenario in mine.items():
        found = differences(scenario, project)
        if name in DIFFERENCES and not found:
            wrong.append(f"{name}: claw now does as Claude Code: not a difference any more")
        elif name not in DIFFERENCES:
            wrong += [f"{name}: {difference}" for difference in found]
    assert not wrong, "\n".join(wrong)


# --- the payloads -----------------------------------------------------------------------------


def claude_code_payloads(event: str) -> list[dict[str, Any]]:
    """Every recorded input of ``event``'s hooks."""
    return [
        payload
        for scenario in recording().values()
        for payload in scenario["outcome"]["payloads"]
        if payload["values"]["hook_event_name"] == event
    ]


def claw_payloads(project: Path) -> dict[str, dict[str, Any]]:
    """One input of each event's hooks, as claw's hooks read it (a scenario with all five)."""
    import asyncio

    payloads: list[dict[str, Any]] = []
    asyncio.run(claw_did(recording()["several-events-one-call"], project, payloads))
    return {payload["hook_event_name"]: payload for payload in payloads}


def json_type(value: object) -> str:
    """A JSON value's type as the recording names it."""
    kinds = {bool: "boolean", int: "number", float: "number", str: "string", dict: "object"}
    return kinds.get(type(value), "array" if isinstance(value, list) else "null")


EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"]

UUID = re.compile(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")


def test_hooks_oracle_payloads_carry_claude_codes_keys(project: Path) -> None:
    """Each event's hook input has Claude Code's keys (but those in ``UNSENT_KEYS``), with
    values of the same JSON types, the project as ``cwd``, the same ``permission_mode``, a
    session id that is a UUID, as Claude Code's are, one prompt id (a UUID) for the prompt's
    hooks, and the model's last answer in Stop's ``last_assistant_message``."""
    mine = claw_payloads(project)
    wrong = []
    for event in EVENTS:
        recorded = claude_code_payloads(event)
        assert recorded, f"no recorded input of {event}"
        keys = set().union(*(set(p["keys"]) for p in recorded)) - set(UNSENT_KEYS)
        ours = mine[event]
        sent = set(ours) - {"label"}
        if sent != keys:
            wrong.append(f"{event}: claw lacks {sorted(keys - sent)}, adds {sorted(sent - keys)}")
        for key in keys & sent:
            theirs = recorded[0]["keys"][key]
            kind = "object" if isinstance(theirs, dict) else theirs
            if json_type(ours[key]) != kind:
                wrong.append(f"{event}: {key} is {json_type(ours[key])}, not {kind}")
        if "permission_mode" in keys and ours.get("permission_mode") != "default":
            wrong.append(f"{event}: permission_mode {ours.get('permission_mode')!r}")
        if ours["cwd"] != str(project) or not all(p["cwd_is_project"] for p in recorded):
            wrong.append(f"{event}: cwd is not the project")
        if not UUID.fullmatch(ours["session_id"]):
            wrong.append(f"{event}: session_id {ours['session_id']!r} is not a UUID")
    assert len({payload["session_id"] for payload in mine.values()}) == 1, "one session, one id"
    prompt_ids = {payload.get("prompt_id") for payload in mine.values()} - {None}
    assert len(prompt_ids) == 1 and UUID.fullmatch(prompt_ids.pop()), "one prompt, one UUID"
    assert mine["Stop"]["last_assistant_message"] == "done", "the model's last answer"
    assert not wrong, "\n".join(wrong)


def test_hooks_oracle_payload_differences_still_hold(project: Path) -> None:
    """The deliberate differences in the hooks' inputs are still differences: Claude Code sent
    each key of ``UNSENT_KEYS`` and claw does not; PostToolUse's ``tool_response`` is the tool's
    own record there (a Bash call's ``stdout``, ``stderr``, ``interrupted``...) and what the
    model read in claw: ``content`` and ``is_error``."""
    mine = claw_payloads(project)
    stale = []
    for key in UNSENT_KEYS:
        events = {p["values"]["hook_event_name"] for e in EVENTS for p in claude_code_payloads(e)
                  if key in p["keys"]}  # fmt: skip
        if not events:
            stale.append(f"{key}: Claude Code sent it in no recorded input")
        stale += [f"{key}: claw sends it in {event}'s input now" for event in events
                  if key in mine[event]]  # fmt: skip
    assert not stale, "\n".join(stale)
    ours = mine["PostToolUse"]["tool_response"]
    theirs = claude_code_payloads("PostToolUse")[0]["keys"]["tool_response"]
    assert ours == {"content": "ok", "is_error": False}
    assert set(theirs) != set(ours), "the same shape: not a difference any more"
