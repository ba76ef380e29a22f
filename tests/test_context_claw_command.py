"""ch18 · compaction in the real ``claw`` command: a window from the settings, kept to."""

import json
from pathlib import Path

import pytest
from claw_command import run_claw

from claw.context import message_chars
from claw.types import UserMessage
from clawbook.harness.loopback import (
    JSONReply,
    LoopbackServer,
    StreamReply,
    call_delta,
    call_start,
    chunk,
    completion,
    sse,
    text_chunks,
    usage_body,
)

LOG = "\n".join(f"line {n}: building module {n} ... ok" for n in range(200))  # ~7,000 chars


def reads(call_id: str, prompt_tokens: int, cost: float | None = None) -> StreamReply:
    """A turn that reads ``build.log``, reporting ``prompt_tokens`` (and ``cost``) for it."""
    return StreamReply(
        pieces=[
            sse(
                chunk("", role="assistant"),
                chunk(tool_calls=[call_start(0, call_id, "read")]),
                chunk(tool_calls=[call_delta(0, json.dumps({"path": "build.log"}))]),
                chunk(finish_reason="tool_calls"),
                chunk(choices=False, usage=usage_body(prompt_tokens, 20, cost=cost)),
            )
        ]
    )


def answers(text: str, prompt_tokens: int, cost: float | None = None) -> StreamReply:
    """A turn that answers ``text`` (reporting ``cost``, if given)."""
    return StreamReply(
        pieces=[
            sse(
                *text_chunks(text),
                chunk(finish_reason="stop"),
                chunk(choices=False, usage=usage_body(prompt_tokens, 20, cost=cost)),
            )
        ]
    )


def windowed_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: Path) -> Path:
    """A project holding ``build.log``, for a claw that keeps 1 turn in a 1,000-token window.

    The user's settings (in claw's own folder, ``config``) keep one recent turn; the
    environment layer gives the window. Without chapter 18 claw never compacts, so this first
    reaches one of its stubs: a test that uses it waits for the chapter (todo), never fails.
    """
    message_chars(UserMessage(content="?"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "build.log").write_text(LOG)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (config / "settings.json").write_text('{"context": {"keep_turns": 1}}')
    monkeypatch.setenv("CLAW_CONTEXT_WINDOW", "1000")
    return project


def test_context_claw_command_compacts_a_session_to_the_window_in_its_settings(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    claw_config_dir: Path,
):
    project = windowed_project(tmp_path, monkeypatch, claw_config_dir)
    server.add(
        reads("c1", 100),
        reads("c2", 1900),  # the log's ~7,000 characters, reported as ~1,800 tokens
        # The summary, asked for as a whole answer with no tools:
        JSONReply(completion("The log lists 200 modules, all ok.", usage=usage_body(1100, 12))),
        answers("All 200 modules built.", 900),
    )
    assert run_claw(server, project, monkeypatch, "Did the build pass?", "--unguarded") == 0
    out = capsys.readouterr().out
    assert "[context compacted: " in out
    assert "2 messages summarised" in out and "1 tool results trimmed" in out
    assert out.endswith("All 200 modules built.\n[done after 3 step(s)]\n")
    chats = [r.json for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 4
    summary_request, last = chats[2], chats[3]
    assert "tools" not in summary_request  # the summary is asked for without tools
    contents = [m.get("content") or "" for m in last["messages"]]
    assert any("This is a summary of the earlier part of this conversation" in c for c in contents)
    assert [m["tool_call_id"] for m in last["messages"] if m["role"] == "tool"] == ["c2"]


def test_context_claw_command_counts_the_summary_request_in_the_cost_and_the_budget(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    claw_config_dir: Path,
):
    project = windowed_project(tmp_path, monkeypatch, claw_config_dir)

    server.add(
        reads("c1", 100, cost=0.001),
        reads("c2", 1900, cost=0.001),
        JSONReply(completion("All ok.", usage=usage_body(1100, 12, cost=0.01))),  # the summary
        answers("All 200 modules built.", 900, cost=0.001),
    )
    arguments = ("Did the build pass?", "--unguarded", "--summary", "json")
    assert run_claw(server, project, monkeypatch, *arguments) == 0
    shown = json.loads(capsys.readouterr().err.splitlines()[-1])
    # The summary request is paid like a step: its tokens and its $0.01 are the run's too.
    assert (shown["steps"], shown["input_tokens"], shown["output_tokens"]) == (3, 4000, 72)
    assert shown["cost_usd"] == "0.013"
    # A budget sees it: steps that cost nothing, and a summary that takes the session past
    # $0.005, end the run before the request the summary was made for.
    server.add(
        reads("c1", 100, cost=0.0),
        reads("c2", 1900, cost=0.0),
        JSONReply(completion("All ok.", usage=usage_body(1100, 12, cost=0.01))),
        answers("never sent", 900, cost=0.0),
    )
    assert run_claw(server, project, monkeypatch, *arguments, "--max-cost", "0.005") == 1
    out = capsys.readouterr().out
    assert out.endswith("[budget after 2 step(s)]\n"), out
    chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 4 + 3  # the second run: two steps and the summary, then the budget
