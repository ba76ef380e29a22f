"""Print mode's output and the session files it leaves (chapters 19 and 22), from Claude Code.

A scenario is one run of ``claude -p`` in ``--output-format json`` or ``stream-json``: a scripted
model that answers, asks for a Bash call (allowed by a rule, or not: an ask is a denial in
print mode), is cut off by ``--max-turns``, or answers every request with an HTTP error; or a
UserPromptSubmit hook that blocks the prompt; or a PreToolUse or PostToolUse hook that answers
``{"continue": false, "stopReason": ...}`` (stopping the run). Its outcome is shapes and flags,
never words:

- ``exit``: the exit status;
- ``result``: the result object's keys with the type of each (nested objects by their keys),
  and the values that are not prose (``type``, ``subtype``, ``is_error``, ``num_turns``,
  ``stop_reason``, ``terminal_reason``, the token counts of ``usage``), whether ``session_id`` is
  a UUID and names the transcript, and the ``permission_denials`` entries' keys and tools;
- ``stream``: per stream-json line, in order, its ``type``, ``subtype`` and key names (and, for
  a message, the types of its content blocks);
- ``requests``: how many main-loop requests the scripted model received; ``ran``: whether
  the Bash call ran; which of the hooks' marks (the blocking hook's stderr, the stopping
  hook's ``stopReason``) reached stderr or the result;
- ``transcript``: the folder Claude Code made under ``~/.claude/projects``, and each kind of
  line of the session's ``.jsonl`` file (its ``type`` and key names), once, sorted.

Each main-loop reply reports a usage of its own (100 input and 10 output tokens times the turn
number), so the recorded ``usage`` says which turns it adds up. The sessions table (the folder
name of a path over 200 characters, and of non-Latin paths) is ``oracle.sessions``; it runs the
plain scenario in those folders.

Run scenarios by hand, or record them all into ``tests/data/claude-code-VERSION-print.json``
and ``-sessions.json``, as root::

    python -m oracle.printmode [NAME ...] [--show]
    python -m oracle.printmode --record [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anthropic_wire import error, message, stream, text, tool_use, usage  # type: ignore[import-not-found]

from clawbook.harness.loopback import JSONReply, LoopbackServer, RecordedRequest, Reply, StreamReply
from oracle import CLAUDE, REPOSITORY, VERSION
from oracle.hooks import shape
from oracle.runner import BASH_TIMEOUT, FILES, run_alone
from oracle.sandbox import HOME, PROJECT, USER, as_user, entered, lay_out

UUID = re.compile(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")
VALUES = ("type", "subtype", "is_error", "num_turns", "stop_reason", "terminal_reason")
"""The result object's values that are not prose, recorded as they are."""
TOUCH = {"command": "touch ran.txt", "timeout": BASH_TIMEOUT}
MARKS = ("STDERR-MARK", "STOP-MARK")
"""Words the hooks write (never Claude Code's): where each ends up is recorded."""
STOP_MARK = "STOP-MARK"


@dataclass(frozen=True)
class PrintScenario:
    """One print-mode run: what the model does, the rules, the limits, the format."""

    name: str
    calls: tuple[dict[str, Any], ...] = ()
    """Bash inputs the model asks for, one per turn, before it answers ``done``."""
    allow: tuple[str, ...] = ()
    output_format: str = "json"
    max_turns: int | None = None
    status: int | None = None
    """An HTTP status every main-loop request gets (with an error body), instead of a reply."""
    block_prompt: bool = False
    """A UserPromptSubmit hook exits 2 (blocking the prompt)."""
    stop_hook: str = ""
    """An event (PreToolUse, PostToolUse) whose hook answers ``"continue": false``."""
    cwd: str = ""
    """Where to run, below the project ("": the project itself); made before the run."""

    def as_record(self) -> dict[str, Any]:
        """The scenario as the data file stores it."""
        record: dict[str, Any] = {"format": self.output_format, "calls": list(self.calls)}
        for key in ("allow", "max_turns", "status", "block_prompt", "stop_hook", "cwd"):
            if getattr(self, key):
                value = getattr(self, key)
                record[key] = list(value) if isinstance(value, tuple) else value
        if self.cwd:
            record["cwd"] = str(PROJECT / self.cwd)
        return record


def _scenarios() -> list[PrintScenario]:
    found = []
    for form in ("json", "stream-json"):
        suffix = "stream" if form == "stream-json" else "json"
        found += [
            PrintScenario(f"print-{suffix}-answer", output_format=form),
            PrintScenario(f"print-{suffix}-tool-then-answer", (TOUCH,), ("Bash(touch *)",), form),
            PrintScenario(f"print-{suffix}-denied", (TOUCH,), (), form),
            PrintScenario(
                f"print-{suffix}-max-turns", (TOUCH, TOUCH, TOUCH), ("Bash(touch *)",), form, 2
            ),
            PrintScenario(f"print-{suffix}-server-500", output_format=form, status=500),
            PrintScenario(f"print-{suffix}-overloaded", output_format=form, status=529),
            PrintScenario(f"print-{suffix}-prompt-blocked", output_format=form, block_prompt=True),
        ]
        found += [
            PrintScenario(
                f"print-{suffix}-{event[:-7].lower()}-tool-stopped",
                (TOUCH,),
                ("Bash(touch *)",),
                form,
                stop_hook=event,
            )
            for event in ("PreToolUse", "PostToolUse")
        ]
    found += [
        PrintScenario("print-text-answer", output_format="text"),
        PrintScenario("print-text-prompt-blocked", output_format="text", block_prompt=True),
    ]
    return found


SCENARIOS: list[PrintScenario] = _scenarios()


class PrintModel(LoopbackServer):
    """The scripted model of one print-mode run: calls, then ``done``; or an HTTP error."""

    def __init__(self, scenario: PrintScenario) -> None:
        """Play ``scenario``; ``turns`` counts its main-loop requests."""
        super().__init__()
        self.scenario = scenario
        self.turns = 0
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The address for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or "/messages" not in request.path:
            return JSONReply(error("not_found_error", "not scripted"), status=404)
        if request.path.split("?")[0].endswith("/count_tokens"):
            return JSONReply({"input_tokens": 100})
        body = request.json
        if not body.get("tools"):  # a side request (a title, a summary)
            return self._reply(request, [text("ok")], "end_turn", usage(1, 1))
        with self.lock:
            self.turns += 1
            turn = self.turns
        if self.scenario.status is not None:
            kind = "overloaded_error" if self.scenario.status == 529 else "api_error"
            return JSONReply(error(kind, "scripted"), status=self.scenario.status,
                             headers={"x-should-retry": "false"})  # fmt: skip
        counts = usage(100 * turn, 10 * turn)
        calls = self.scenario.calls
        if turn <= len(calls):
            block = tool_use(f"toolu_print_{turn:03d}", "Bash", calls[turn - 1])
            return self._reply(request, [block], "tool_use", counts)
        return self._reply(request, [text("done")], "end_turn", counts)

    @staticmethod
    def _reply(
        request: RecordedRequest, blocks: list[dict[str, Any]], stop: str, counts: dict[str, Any]
    ) -> Reply:
        if request.json.get("stream"):
            return StreamReply(pieces=[stream(blocks, stop, counts)])
        return JSONReply(message(blocks, stop, counts))


def settings_of(scenario: PrintScenario) -> dict[str, object]:
    """The project's settings: the allow rules, and the blocking hook."""
    settings: dict[str, object] = {}
    if scenario.allow:
        settings["permissions"] = {"allow": list(scenario.allow)}
    if scenario.block_prompt:
        hook = {"type": "command", "command": "echo STDERR-MARK >&2; exit 2"}
        settings["hooks"] = {"UserPromptSubmit": [{"hooks": [hook]}]}
    if scenario.stop_hook:
        answer = json.dumps({"continue": False, "stopReason": STOP_MARK})
        hook = {"type": "command", "command": f"echo '{answer}'"}
        settings["hooks"] = {scenario.stop_hook: [{"matcher": "Bash", "hooks": [hook]}]}
    return settings


def command(scenario: PrintScenario, claude: Path, base_url: str) -> list[str]:
    """The Claude Code command line of ``scenario``, as the unprivileged user."""
    line = [str(claude), "-p", "Run the calls.", "--output-format", scenario.output_format,
            "--tools", "Bash,Read", "--model", "claude-sonnet-4-5"]  # fmt: skip
    if scenario.output_format == "stream-json":
        line.append("--verbose")  # Claude Code refuses stream-json in print mode without it
    if scenario.max_turns is not None:
        line += ["--max-turns", str(scenario.max_turns)]
    env = {
        "HOME": str(HOME),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-oracle",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    return as_user(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *line])


def line_record(value: Any) -> dict[str, Any]:
    """One stream-json line (or transcript line) as the data file keeps it: no words."""
    if not isinstance(value, dict):
        return {"type": None, "keys": []}
    record: dict[str, Any] = {"type": value.get("type"), "keys": sorted(value)}
    if isinstance(value.get("subtype"), str):
        record["subtype"] = value["subtype"]
    inner = value.get("message")
    if isinstance(inner, dict) and isinstance(inner.get("content"), list):
        record["content"] = [block.get("type") for block in inner["content"]
                             if isinstance(block, dict)]  # fmt: skip
    return record


def result_record(result: dict[str, Any], transcript: Path | None) -> dict[str, Any]:
    """What the data file keeps of a result object."""
    record: dict[str, Any] = {
        "keys": shape(result),
        "values": {key: result[key] for key in VALUES if key in result},
    }
    if isinstance(result.get("usage"), dict):
        record["usage"] = {key: value for key, value in result["usage"].items()
                           if key.endswith("_tokens") and isinstance(value, int)}  # fmt: skip
    session = result.get("session_id")
    record["session_id_is_uuid"] = isinstance(session, str) and bool(UUID.fullmatch(session))
    record["session_id_names_transcript"] = transcript is not None and transcript.stem == session
    record["permission_denials"] = [
        {"keys": sorted(denial), "tool": denial.get("tool_name")}
        for denial in result.get("permission_denials") or []
    ]
    return record


def transcript_record(before: set[Path]) -> tuple[dict[str, Any] | None, Path | None]:
    """The session file this run wrote under ``~/.claude/projects``: its folder and lines."""
    files = [path for path in (HOME / ".claude" / "projects").glob("*/*.jsonl")
             if path not in before]  # fmt: skip
    if not files:
        return None, None
    path = max(files, key=lambda found: found.stat().st_size)
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(line_record(json.loads(raw)))
        except json.JSONDecodeError:
            lines.append({"type": None, "keys": []})
    # Claude Code writes some lines from parallel tasks, in any order: keep each kind once
    kinds = sorted({json.dumps(line, sort_keys=True) for line in lines})
    return {"folder": path.parent.name, "files": len(files),
            "records": [json.loads(kind) for kind in kinds]}, path  # fmt: skip


@dataclass
class Run:
    """What one scenario left: the outcome, and the raw output for ``--show``."""

    outcome: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""


def run_print_scenario(scenario: PrintScenario, claude: Path) -> Run:
    """Run ``scenario`` through Claude Code (inside the namespace); read its outcome."""
    lay_out(dict(FILES), settings_of(scenario), trusted=True)
    cwd = PROJECT / scenario.cwd
    cwd.mkdir(parents=True, exist_ok=True)
    for folder in [cwd, *cwd.parents]:
        if folder == PROJECT:
            break
        os.chown(folder, USER, USER)
    with PrintModel(scenario) as model:
        done = run_alone(command(scenario, claude, model.base_url), 180, cwd=cwd)
        requests = model.turns
    transcript, path = transcript_record(set())
    lines: list[Any] = []
    for raw in done.stdout.splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            lines.append(None)
    results = [line for line in lines if isinstance(line, dict) and line.get("type") == "result"]
    outcome: dict[str, Any] = {
        "exit": done.returncode,
        "stdout_lines": len(lines),
        "result": result_record(results[-1], path) if results else None,
        "requests": requests,
        "stderr_marks": [mark for mark in MARKS if mark in done.stderr],
        "result_marks": [mark for mark in MARKS if results and mark in json.dumps(results[-1])],
        "ran": (cwd / "ran.txt").exists(),
        "transcript": transcript,
    }
    if scenario.output_format == "stream-json":
        outcome["stream"] = [line_record(line) for line in lines]
    if scenario.output_format == "text":
        outcome["stdout_marks"] = [mark for mark in MARKS if mark in done.stdout]
    return Run(outcome, done.stdout, done.stderr)


PRINT_DATA = REPOSITORY / "tests" / "data" / f"claude-code-{VERSION}-print.json"
"""The print-mode recording the chapter 19 test reads."""
SESSIONS_DATA = REPOSITORY / "tests" / "data" / f"claude-code-{VERSION}-sessions.json"
"""The session recording (folders and transcript lines) the chapter 22 test reads."""
HOW = ("python -m oracle.printmode --record (network namespace with only loopback, scripted "
       "Messages server; outcomes as key names, types and flags)")  # fmt: skip


def record_tables(claude: Path, only: list[str] | None = None) -> None:
    """Record print mode's scenarios and the session folders; write both data files.

    Inside the namespace. ``only`` records just the named scenarios, merged into the files.
    """
    from oracle.record import write
    from oracle.sessions import FOLDERS, record_folder

    chosen = [s for s in SCENARIOS if not only or s.name in only]
    outcomes = {}
    for number, scenario in enumerate(chosen, 1):
        run = run_print_scenario(scenario, claude)
        outcomes[scenario.name] = {**scenario.as_record(), "outcome": run.outcome}
        print(f"\rprint scenario {number}/{len(chosen)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if outcomes:
        write(PRINT_DATA, outcomes, bool(only), HOW)
    folders = {name: record_folder(name, claude) for name in FOLDERS if not only or name in only}
    if folders:
        write(SESSIONS_DATA, folders, bool(only), HOW)


def main(argv: list[str] | None = None) -> int:
    """Run the named print-mode scenarios (or the first) and print their outcomes.

    ``--record`` records them all (or the named ones) into the data files instead.
    """
    parser = argparse.ArgumentParser(prog="python -m oracle.printmode")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--claude", type=Path, default=CLAUDE)
    arguments = parser.parse_args(argv)
    if not entered("oracle.printmode", argv):
        return 2
    if arguments.record:
        record_tables(arguments.claude, arguments.names or None)
        return 0
    chosen = [s for s in SCENARIOS if s.name in arguments.names] or SCENARIOS[:1]
    for scenario in chosen:
        run = run_print_scenario(scenario, arguments.claude)
        if arguments.show:
            print("stdout:", run.stdout[-3000:], "stderr:", run.stderr[-1500:], sep="\n")
        print(f"{scenario.name}: {json.dumps(run.outcome, indent=1)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
