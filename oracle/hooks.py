"""The hook scenario table (chapter 15), and how one hook scenario runs through Claude Code.

A scenario is a settings file's ``"hooks"`` (each hook a small script of the recorder's that
writes down the JSON it read on stdin, then answers as the scenario says: an exit code, stdout,
stderr), a few tool calls the scripted model asks for, and the prompt. Its outcome is what
Claude Code then did, as shapes and flags, never its words:

- ``payloads``: per hook run, in order, the event and its input's key names with the type of
  each value, plus the values that are the scenario's own (event, tool, mode, source...);
- ``calls``: per tool call, whether it ran (a marker file), whether the permission-prompt tool
  was consulted, and the ``tool_result`` Claude Code sent back: ``is_error`` and which of the
  scenario's marks (``MARKS``) it carries;
- ``requests``: per main-loop request after the first, the blocks of its last user message
  (type, marks); and the first request's messages the same way, for context added up front;
- ``exit``, ``result`` (whether a result object was printed, its ``is_error`` and ``subtype``)
  and which marks reached Claude Code's stdout result or stderr.

The marks are words the scenario's hooks print (``STDERR-MARK`` on stderr and so on), so a
flag says where a hook's answer went without recording any text of Claude Code's.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawbook.harness.loopback import RecordedRequest, Reply
from oracle.model import Call, Script, ScriptedModel
from oracle.prompt import PromptTool
from oracle.runner import BASH_TIMEOUT, FILES, command, run_alone
from oracle.runner import Scenario as PermissionScenario
from oracle.sandbox import PROJECT, ROOT, USER, lay_out

HOOKS = ROOT / "hooks"
"""The hook script, its answers (one file per label) and its log of what it read."""
LOG = HOOKS / "log"

MARKS = ("STDERR-MARK", "STDOUT-MARK", "REASON-MARK", "CONTEXT-MARK", "STOP-MARK")
"""Words a hook prints; an outcome names the marks a message or a result carries."""

SCRIPT = """\
import json, os, sys, time
label = sys.argv[1]
with open(os.path.join(sys.argv[2], label + ".json")) as f:
    spec = json.load(f)
data = sys.stdin.read()
log = os.path.join(sys.argv[2], "log")
earlier = [n for n in os.listdir(log) if n.split("~")[0] == label]
with open(os.path.join(log, f"{label}~{time.time_ns()}~{os.getpid()}.json"), "w") as f:
    f.write(data)
if spec.get("once") and earlier:
    sys.exit(0)
sys.stdout.write(spec.get("stdout", ""))
sys.stderr.write(spec.get("stderr", ""))
sys.exit(spec.get("exit", 0))
"""
"""The hook: logs its stdin under its label, then answers as its spec says (``once``: only
the first time; later runs exit 0 silently)."""

TOUCH = {"command": "touch ran.txt"}
"""The Bash call most scenarios make: it ran if ``ran.txt`` exists afterwards."""
READ = {"path": "a.py"}


@dataclass(frozen=True)
class Answer:
    """What one hook answers."""

    exit: int = 0
    stdout: str | dict[str, Any] = ""
    """Text, or a JSON object (written as JSON)."""
    stderr: str = ""
    once: bool = False
    """Answer only the first time; later runs exit 0 silently (a Stop hook that blocks once)."""

    def as_record(self) -> dict[str, Any]:
        """The answer as the data file stores it."""
        record: dict[str, Any] = {"exit": self.exit}
        if self.stdout:
            record["stdout"] = self.stdout
        if self.stderr:
            record["stderr"] = self.stderr
        if self.once:
            record["once"] = True
        return record


@dataclass(frozen=True)
class Hook:
    """One hook of the settings: its event, matcher (None: no matcher key) and answer."""

    event: str
    answer: Answer = Answer()
    matcher: str | None = None


@dataclass(frozen=True)
class HookScenario:
    """Hooks, the calls the model asks for, and the rules: Claude Code's reaction is the outcome."""

    name: str
    hooks: tuple[Hook, ...]
    calls: tuple[tuple[str, dict[str, Any]], ...] = (("Bash", TOUCH),)
    allow: tuple[str, ...] = ("Bash(touch *)",)
    prompt: str = "Run the calls."
    note: str = ""

    def as_record(self) -> dict[str, Any]:
        """The scenario as the data file stores it (the outcome is added beside)."""
        return {
            "hooks": [
                {
                    "event": hook.event,
                    **({"matcher": hook.matcher} if hook.matcher is not None else {}),
                    **hook.answer.as_record(),
                }
                for hook in self.hooks
            ],
            "calls": [{"tool": tool, "input": given} for tool, given in self.calls],
            "allow": list(self.allow),
            "prompt": self.prompt,
        }


def j(**fields: Any) -> dict[str, Any]:
    """A JSON answer."""
    return fields


def specific(event: str, **fields: Any) -> dict[str, Any]:
    """A JSON answer with ``hookSpecificOutput`` for ``event``."""
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def _scenarios() -> list[HookScenario]:
    s: list[HookScenario] = []
    pre, post = "PreToolUse", "PostToolUse"
    ups, start, stop = "UserPromptSubmit", "SessionStart", "Stop"

    def one(name: str, event: str, answer: Answer, matcher: str | None = "Bash", **kw: Any) -> None:
        if event not in (pre, post):
            matcher = None
        s.append(HookScenario(name, (Hook(event, answer, matcher),), **kw))

    # PreToolUse: exit codes, JSON decisions
    one("pre-exit0-silent", pre, Answer())
    one("pre-exit0-plain-stdout", pre, Answer(stdout="STDOUT-MARK"))
    one("pre-exit2-stderr", pre, Answer(2, stderr="STDERR-MARK"))
    one("pre-exit2-no-stderr", pre, Answer(2))
    one("pre-exit2-stdout-only", pre, Answer(2, stdout="STDOUT-MARK"))
    one("pre-exit1-stderr", pre, Answer(1, stderr="STDERR-MARK"))
    one("pre-exit3-stderr", pre, Answer(3, stderr="STDERR-MARK"))
    one(
        "pre-json-deny",
        pre,
        Answer(
            stdout=specific(pre, permissionDecision="deny", permissionDecisionReason="REASON-MARK")
        ),
    )
    one(
        "pre-json-allow-unruled",
        pre,
        Answer(stdout=specific(pre, permissionDecision="allow")),
        allow=(),
    )
    one("pre-json-ask-allowed", pre, Answer(stdout=specific(pre, permissionDecision="ask")))
    one("pre-no-hook-answer-unruled", pre, Answer(), allow=())
    one("pre-json-decision-block", pre, Answer(stdout=j(decision="block", reason="REASON-MARK")))
    one(
        "pre-json-continue-false",
        pre,
        Answer(stdout=j(**{"continue": False, "stopReason": "REASON-MARK"})),
    )
    one(
        "pre-json-updated-input",
        pre,
        Answer(
            stdout=specific(
                pre,
                permissionDecision="allow",
                updatedInput={"command": "touch other.txt", "timeout": BASH_TIMEOUT},
            )
        ),
    )
    one("pre-json-invalid", pre, Answer(stdout="{not json STDOUT-MARK"))
    one(
        "pre-json-additional-context",
        pre,
        Answer(stdout=specific(pre, additionalContext="CONTEXT-MARK")),
    )
    one(
        "pre-json-deny-exit2",
        pre,
        Answer(
            2,
            stdout=specific(pre, permissionDecision="deny", permissionDecisionReason="REASON-MARK"),
            stderr="STDERR-MARK",
        ),
    )
    # Matchers: which of a Bash and a Read call a PreToolUse hook sees
    both = (("Bash", TOUCH), ("Read", READ))
    for label, matcher in [
        ("bash", "Bash"),
        ("read", "Read"),
        ("bar", "Bash|Read"),
        ("bar-miss", "Edit|Write"),
        ("comma", "Bash, Read"),
        ("regex-dot", "B.*"),
        ("regex-anchor", "^Re"),
        ("regex-end", "ad$"),
        ("star", "*"),
        ("empty", ""),
        ("none", None),
        ("lower", "bash"),
        ("prefix", "Bas"),
        ("mcp", "mcp__.*"),
    ]:
        s.append(HookScenario(f"matcher-{label}", (Hook(pre, Answer(), matcher),), calls=both))
    # PostToolUse
    one("post-exit0-silent", post, Answer())
    one("post-exit0-silent-read", post, Answer(), matcher="Read", calls=(("Read", READ),))
    one("post-exit0-plain-stdout", post, Answer(stdout="STDOUT-MARK"))
    one("post-exit2-stderr", post, Answer(2, stderr="STDERR-MARK"))
    one("post-exit1-stderr", post, Answer(1, stderr="STDERR-MARK"))
    one("post-json-block", post, Answer(stdout=j(decision="block", reason="REASON-MARK")))
    one(
        "post-json-additional-context",
        post,
        Answer(stdout=specific(post, additionalContext="CONTEXT-MARK")),
    )
    one(
        "post-json-continue-false",
        post,
        Answer(stdout=j(**{"continue": False, "stopReason": "REASON-MARK"})),
    )
    one(
        "post-failing-tool",
        post,
        Answer(2, stderr="STDERR-MARK"),
        calls=(("Bash", {"command": "false"}),),
        allow=("Bash(false)",),
    )
    # UserPromptSubmit
    one("ups-exit0-silent", ups, Answer())
    one("ups-exit0-plain-stdout", ups, Answer(stdout="CONTEXT-MARK"))
    one("ups-exit2-stderr", ups, Answer(2, stderr="STDERR-MARK"))
    one("ups-exit1-stderr", ups, Answer(1, stderr="STDERR-MARK"))
    one("ups-json-block", ups, Answer(stdout=j(decision="block", reason="REASON-MARK")))
    one(
        "ups-json-additional-context",
        ups,
        Answer(stdout=specific(ups, additionalContext="CONTEXT-MARK")),
    )
    one(
        "ups-json-continue-false",
        ups,
        Answer(stdout=j(**{"continue": False, "stopReason": "REASON-MARK"})),
    )
    s.append(HookScenario("ups-matcher-ignored", (Hook(ups, Answer(), "Bash"),)))
    # SessionStart
    one("start-exit0-silent", start, Answer())
    one("start-exit0-plain-stdout", start, Answer(stdout="CONTEXT-MARK"))
    one(
        "start-json-additional-context",
        start,
        Answer(stdout=specific(start, additionalContext="CONTEXT-MARK")),
    )
    one("start-exit2-stderr", start, Answer(2, stderr="STDERR-MARK"))
    one("start-exit1-stderr", start, Answer(1, stderr="STDERR-MARK"))
    # Stop
    one("stop-exit0-silent", stop, Answer())
    one("stop-exit2-once", stop, Answer(2, stderr="STOP-MARK", once=True))
    one(
        "stop-json-block-once",
        stop,
        Answer(stdout=j(decision="block", reason="STOP-MARK"), once=True),
    )
    one("stop-exit1-stderr", stop, Answer(1, stderr="STDERR-MARK"))
    one("stop-exit0-plain-stdout", stop, Answer(stdout="STDOUT-MARK"))
    # Several hooks of one event
    s.append(
        HookScenario(
            "several-pre-block-and-silent",
            (Hook(pre, Answer(2, stderr="STDERR-MARK"), "Bash"), Hook(pre, Answer(), "Bash")),
        )
    )
    context = Answer(stdout=specific(ups, additionalContext="CONTEXT-MARK"))
    s.append(
        HookScenario(
            "several-ups-contexts", (Hook(ups, context), Hook(ups, Answer(stdout="STDOUT-MARK")))
        )
    )
    s.append(
        HookScenario(
            "several-events-one-call",
            (
                Hook(start),
                Hook(ups),
                Hook(pre, matcher="Bash"),
                Hook(post, matcher="Bash"),
                Hook(stop),
            ),
        )
    )
    return s


SCENARIOS: list[HookScenario] = _scenarios()  # fmt: skip


def _marks(value: Any) -> list[str]:
    """The marks ``value`` (any JSON) carries."""
    flat = json.dumps(value, ensure_ascii=False)
    return [mark for mark in MARKS if mark in flat]


def shape(value: Any) -> Any:
    """A JSON value's shape.

    Objects by key (each key's shape), lists by their items' shapes (deduplicated), scalars by
    type name.
    """
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in value:
            if shape(item) not in shapes:
                shapes.append(shape(item))
        return shapes
    return {bool: "boolean", int: "number", float: "number", str: "string"}.get(type(value), "null")


OWN_VALUES = ("hook_event_name", "tool_name", "permission_mode", "source", "stop_hook_active",
              "prompt", "tool_input")  # fmt: skip
"""Payload keys whose values are the scenario's own (not machine-specific): recorded as is."""


def payload_record(label: str, data: dict[str, Any]) -> dict[str, Any]:
    """What the data file keeps of one hook input."""
    values = {key: data[key] for key in OWN_VALUES if key in data}
    if isinstance(values.get("tool_input"), dict):
        values["tool_input"] = {
            key: value.replace(str(ROOT), "<scratch>") if isinstance(value, str) else value
            for key, value in values["tool_input"].items()
        }
    record = {"hook": label, "keys": shape(data), "values": values}
    if isinstance(data.get("cwd"), str):
        record["cwd_is_project"] = data["cwd"] == str(PROJECT)
    if isinstance(data.get("transcript_path"), str):
        record["transcript_is_jsonl"] = data["transcript_path"].endswith(".jsonl")
    return record


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks as the data file keeps them: type, is_error, marks."""
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    kept = []
    for block in content or []:
        item: dict[str, Any] = {"type": block.get("type")}
        if block.get("type") == "tool_result":
            item["is_error"] = bool(block.get("is_error"))
        item["marks"] = _marks(block)
        kept.append(item)
    return kept


class RecordingModel(ScriptedModel):
    """The scripted model, keeping each main-loop request's body."""

    def __init__(self, script: Script) -> None:
        """Serve ``script``; ``bodies`` are the main loop's requests, in order."""
        super().__init__(script)
        self.bodies: list[dict[str, Any]] = []

    def _next_reply(self, request: RecordedRequest) -> Reply:
        main_loop = request.method == "POST" and request.path.split("?")[0].endswith("/messages")
        if main_loop and request.json.get("tools"):
            self.bodies.append(request.json)
        return super()._next_reply(request)


@dataclass
class Run:
    """What one scenario's run left: the outcome, and what ``--show`` prints."""

    outcome: dict[str, Any] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)


def settings_of(scenario: HookScenario) -> dict[str, object]:
    """The project's settings: the allow rules and the hooks, each calling the script."""
    table: dict[str, list[dict[str, Any]]] = {}
    for number, hook in enumerate(scenario.hooks):
        entry = {"type": "command", "command": f"python3 {HOOKS}/hook.py h{number} {HOOKS}"}
        group: dict[str, Any] = {"hooks": [entry]}
        if hook.matcher is not None:
            group["matcher"] = hook.matcher
        table.setdefault(hook.event, []).append(group)
    settings: dict[str, object] = {"hooks": table}
    if scenario.allow:
        settings["permissions"] = {"allow": list(scenario.allow)}
    return settings


def lay_out_hooks(scenario: HookScenario) -> None:
    """The script, one answer file per hook, the empty log; owned by the unprivileged user."""
    LOG.mkdir(parents=True)
    (HOOKS / "hook.py").write_text(SCRIPT)
    for number, hook in enumerate(scenario.hooks):
        answer = hook.answer
        stdout = answer.stdout if isinstance(answer.stdout, str) else json.dumps(answer.stdout)
        spec = {"exit": answer.exit, "stdout": stdout, "stderr": answer.stderr,
                "once": answer.once}  # fmt: skip
        (HOOKS / f"h{number}.json").write_text(json.dumps(spec))
    for top, _dirs, names in os.walk(HOOKS):
        os.chown(top, USER, USER)
        for name in names:
            os.chown(os.path.join(top, name), USER, USER)


def run_hook_scenario(scenario: HookScenario, claude: Path, prompt: PromptTool) -> Run:
    """Run ``scenario`` through Claude Code (inside the namespace); read its outcome."""
    lay_out(dict(FILES), settings_of(scenario), trusted=True)
    lay_out_hooks(scenario)
    calls = [
        Call(f"toolu_hook_{n:03d}", tool, _claude_input(tool, given))
        for n, (tool, given) in enumerate(scenario.calls)
    ]
    script = Script(calls)
    prompt.script = script
    with RecordingModel(script) as model:
        line = command(PermissionScenario("hooks", "Bash", {}), claude, prompt, model.base_url)
        line[line.index("Run the calls.")] = scenario.prompt
        done = run_alone(line, 120)
        bodies = model.bodies
        requests = model.seen
    prompt.script = None
    return Run(outcome(scenario, calls, bodies, done), requests)


def _claude_input(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    if tool == "Read":
        return {"file_path": str(PROJECT / given["path"])}
    return {**given, "timeout": BASH_TIMEOUT}


def outcome(
    scenario: HookScenario,
    calls: list[Call],
    bodies: list[dict[str, Any]],
    done: subprocess.CompletedProcess[str],
) -> dict[str, Any]:
    """What Claude Code did, as the data file keeps it."""
    logged = sorted(LOG.iterdir(), key=lambda path: int(path.name.split("~")[1]))
    payloads: list[dict[str, Any]] = []
    for path in logged:
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError:
            data = {}
        payloads.append(payload_record(path.name.split("~")[0], data))
    # the hooks of one event run in parallel: within a run of one event, order them by label
    runs: list[list[dict[str, Any]]] = []
    for payload in payloads:
        event = payload["values"].get("hook_event_name")
        if runs and runs[-1][-1]["values"].get("hook_event_name") == event:
            runs[-1].append(payload)
        else:
            runs.append([payload])
    payloads = [payload for run in runs for payload in sorted(run, key=lambda p: p["hook"])]
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = None
    printed = isinstance(result, dict) and result.get("type") == "result"
    first = bodies[0]["messages"] if bodies else []
    return {
        "payloads": payloads,
        "ran": sorted(path.name for path in PROJECT.glob("*.txt") if path.name != "notes.txt"),
        "calls": [
            {
                "tool": call.tool,
                "asked": call.asked > 0,
                "answered": call.result is not None,
                **(
                    {"is_error": bool(call.result.get("is_error")), "marks": _marks(call.result)}
                    if call.result is not None
                    else {}
                ),
            }
            for call in calls
        ],
        "first_request": [  # in a stable order: parallel hooks add theirs in any order
            {"role": message.get("role"), "blocks": sorted(blocks(message), key=json.dumps)}
            for message in first
        ],
        "later_requests": [blocks(body["messages"][-1]) for body in bodies[1:]],
        "exit": done.returncode,
        "result": (
            {
                "is_error": bool(result.get("is_error")),
                "subtype": result.get("subtype"),
                "marks": _marks(result.get("result")),
            }
            if printed and isinstance(result, dict)
            else None
        ),
        "stderr_marks": _marks(done.stderr),
    }
