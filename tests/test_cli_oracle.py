"""ch19 · Print mode's output against Claude Code 2.1.332 itself: every recorded run through claw.

``tests/data/claude-code-2.1.332-print.json`` holds what the real program printed for each
scenario of ``oracle/printmode.py`` (``make oracle``), as shapes and flags: the exit status,
the result object's keys and the values that are not prose, its usage, its permission denials,
and the kind of each stream-json line. Each scenario is a scripted model that answers, asks for a
Bash call (allowed by a rule, or not: nobody can approve it in print mode), is cut off by the
turn limit, or answers with HTTP 500 or 529; or a UserPromptSubmit hook that blocks the prompt;
in ``--output-format json`` and ``stream-json``.

No Claude Code runs here. claw runs each scenario in this process (``claw_command.run_claw``'s
way) against the loopback server scripted the same way, each model turn reporting the same
usage as the recorder's (100 input and 10 output tokens times the turn's number), and the same
facts are read from its stdout. A fact where claw does otherwise fails unless it is a deliberate
difference (``DIFFERENCES``, listed with its reason on the chapter 19 page; the tooling test
tests/tooling/test_book_lists.py checks that), and a listed difference must still show.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from claude_code_recording import recording
from claw_command import no_fsync

from claw.main import main
from clawbook.harness.loopback import (
    JSONReply,
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    error_body,
    sse,
    text_chunks,
    usage_body,
)

no_fsync = pytest.fixture(autouse=True)(no_fsync)  # durability is not the subject here

KEYS = ("type", "subtype", "is_error", "result", "num_turns", "duration_ms",
        "total_cost_usd", "usage", "permission_denials", "stop_reason", "terminal_reason",
        "finish_reason")  # fmt: skip
"""The result object's keys compared: the documented ones, the ones the issue found missing,
and claw's own. ``session_id`` comes with sessions (chapter 22), whose oracle test checks it;
the rest of Claude Code's keys are its own bookkeeping (``modelUsage``, ``uuid``, timings)."""
TOOLS = {"Bash": "bash"}

DIFFERENCES: dict[str, str] = {
    "key finish_reason": "claw adds `finish_reason`",
    "key stop_reason": "no `stop_reason`: `finish_reason` says why the run ended",
    "key terminal_reason": "no `terminal_reason`: `finish_reason` says it in claw's words",
    "key result": "`result` is there at the turn limit too",
    "num_turns": "`num_turns` counts the model's answers",
    "subtype": "an error's `subtype` is `error_during_execution`",
    "stream lines between": "stream-json's lines are claw's events",
}
"""Facts on which claw deliberately does otherwise, and the words the chapter 19 page's table of
differences uses for each."""


def claude_code_did(scenario: dict[str, Any]) -> dict[str, Any]:
    """The recorded outcome, as the facts claw is compared on."""
    done = scenario["outcome"]
    result = done["result"]
    facts: dict[str, Any] = {"exit": done["exit"], "ran": done["ran"]}
    if scenario["format"] == "text":
        return {**facts, "hook words on stdout": bool(done["stdout_marks"])}
    facts["hook words in the result"] = bool(done["result_marks"])
    facts["result"] = result is not None
    if result is not None:
        facts.update(result_facts(result["keys"], result["values"], result.get("usage", {}),
                                  result["permission_denials"]))  # fmt: skip
    if "stream" in done:
        facts.update(stream_facts(done["stream"]))
    return facts


def result_facts(
    keys: dict[str, Any], values: dict[str, Any], usage: dict[str, Any], denials: list[Any]
) -> dict[str, Any]:
    """The facts of a result object: its keys among ``KEYS``, its values, usage, denials."""
    facts: dict[str, Any] = {f"key {key}": key in keys for key in KEYS}
    for key in ("type", "subtype", "is_error", "num_turns"):
        facts[key] = values.get(key)
    facts["usage"] = (usage.get("input_tokens"), usage.get("output_tokens"))
    facts["permission_denials"] = sorted(
        (tuple(denial["keys"]), TOOLS.get(denial["tool"], denial["tool"])) for denial in denials
    )
    return facts


INIT_KEYS = {"model", "cwd", "tools", "permissionMode", "permission_mode"}
"""The keys of stream-json's first line compared (``session_id`` is chapter 22's to check)."""


def stream_facts(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The facts of stream-json's lines: the first (and its keys), the last, the results, the
    kinds between."""
    return {
        "stream first line": (lines[0]["type"], lines[0].get("subtype")) if lines else None,
        "stream first line's keys": sorted(INIT_KEYS & set(lines[0]["keys"])) if lines else None,
        "stream last line": lines[-1]["type"] if lines else None,
        "stream result lines": sum(line["type"] == "result" for line in lines),
        "stream lines between": [line["type"] for line in lines[1:-1]],
    }


# --- what claw does -------------------------------------------------------------------------


def turn_usage(turn: int) -> dict[str, Any]:
    """The usage the recorder's model reported for main-loop turn ``turn`` (from 1)."""
    return usage_body(100 * turn, 10 * turn)


def asks_for(arguments: dict[str, Any], turn: int) -> StreamReply:
    """A turn that asks for one bash call with ``arguments``."""
    return StreamReply(
        pieces=[
            sse(
                chunk("", role="assistant"),
                chunk(tool_calls=[call_start(0, f"call-{turn}", "bash")]),
                chunk(tool_calls=[call_delta(0, json.dumps(arguments))]),
                chunk(finish_reason="tool_calls"),
                chunk(choices=False, usage=turn_usage(turn)),
            )
        ]
    )


def answers(turn: int) -> StreamReply:
    """A turn that answers ``done``."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks("done"),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=turn_usage(turn)),
            )
        ]
    )


def claw_did(
    scenario: dict[str, Any],
    server: LoopbackServer,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> dict[str, Any]:
    """Run ``scenario`` through claw in this process; the same facts, read from its stdout."""
    project.mkdir()
    settings: dict[str, Any] = {}
    if scenario.get("allow"):
        settings["permissions"] = {"allow": scenario["allow"]}
    if scenario.get("block_prompt"):
        hook = {"type": "command", "command": "echo STDERR-MARK >&2; exit 2", "timeout": 10}
        settings["hooks"] = {"UserPromptSubmit": [{"hooks": [hook]}]}
    if scenario.get("stop_hook"):  # a tool hook that stops the run, as the recorder's answers
        answer = json.dumps({"continue": False, "stopReason": "STOP-MARK"})
        hook = {"type": "command", "command": f"echo '{answer}'", "timeout": 10}
        settings["hooks"] = {scenario["stop_hook"]: [{"matcher": "bash", "hooks": [hook]}]}
    if settings:
        (project / ".claw").mkdir()
        (project / ".claw" / "settings.json").write_text(json.dumps(settings))
    if scenario.get("status"):
        status = scenario["status"]
        server.add(JSONReply(error_body(status, "scripted"), status=status))
    else:
        calls = [{"command": call["command"]} for call in scenario["calls"]]
        server.add(*[asks_for(call, turn) for turn, call in enumerate(calls, 1)])
        server.add(answers(len(calls) + 1))
    arguments = ["-p", "Run the calls.", "--output-format", scenario["format"], "--trust-project"]
    if scenario.get("max_turns"):
        arguments += ["--max-steps", str(scenario["max_turns"])]
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(project))
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    capsys.readouterr()
    code = main([*arguments, "--model", "test/model", "--base-url", server.base_url])
    out = capsys.readouterr().out
    facts: dict[str, Any] = {"exit": code, "ran": (project / "ran.txt").exists()}
    if scenario["format"] == "text":
        return {**facts, "hook words on stdout": "STDERR-MARK" in out}
    lines = [json.loads(line) for line in out.splitlines()]
    results = [line for line in lines if line.get("type") == "result"]
    facts["hook words in the result"] = bool(results) and "STDERR-MARK" in json.dumps(results[-1])
    facts["result"] = bool(results)
    if results:
        result = results[-1]
        values = {key: result.get(key) for key in ("type", "subtype", "is_error", "num_turns")}
        denials = [{"keys": sorted(denial), "tool": denial.get("tool_name")}
                   for denial in result.get("permission_denials") or []]  # fmt: skip
        facts.update(result_facts(result, values, result.get("usage") or {}, denials))
    if scenario["format"] == "stream-json":
        kinds = [{"type": line.get("type"), "subtype": line.get("subtype"), "keys": list(line)}
                 for line in lines]  # fmt: skip
        facts.update(stream_facts(kinds))
    return facts


def differences(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, str]:
    """The facts on which claw does otherwise, each with what each program did."""
    return {
        fact: f"claw {mine.get(fact)!r}, Claude Code {value!r}"
        for fact, value in theirs.items()
        if mine.get(fact) != value
    }


@pytest.mark.parametrize("form", ["json", "stream-json", "text"])
def test_cli_oracle_print_mode_prints_what_claude_code_printed(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every recorded print-mode run in ``form``: claw's exit status, result object and
    stream-json lines agree with Claude Code's on every fact, but the listed differences; and
    each listed difference of a fact this format has still shows in some run."""
    from claw.providers.http import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda *_: None)  # as CLAUDE_CODE_MAX_RETRIES=0
    scenarios = {n: s for n, s in recording("print").items() if s["format"] == form}
    assert len(scenarios) >= (2 if form == "text" else 7)
    wrong: list[str] = []
    shown: set[str] = set()
    facts: set[str] = set()
    for name, scenario in sorted(scenarios.items()):
        theirs = claude_code_did(scenario)
        facts |= set(theirs)
        with LoopbackServer() as server:
            mine = claw_did(scenario, server, tmp_path / name, monkeypatch, capsys)
        found = differences(mine, theirs)
        shown |= set(found)
        wrong += [f"{name}: {fact}: {what}" for fact, what in found.items()
                  if fact not in DIFFERENCES]  # fmt: skip
    wrong += [f"{fact}: claw now does as Claude Code: not a difference any more"
              for fact in sorted(set(DIFFERENCES) & facts - shown)]  # fmt: skip
    assert not wrong, "\n".join(wrong)
