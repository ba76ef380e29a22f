"""Run one session of scenarios through Claude Code and read each call's outcome.

A session is one run of ``claude -p --output-format json`` under one set of rules, one mode
and one trust state; the scripted model asks for each scenario's call in turn, one per turn. The
outcome of a call:

- ``ask``: the permission-prompt tool was consulted for it (print mode would have asked);
- ``deny``: it is in the result's ``permission_denials`` without a consultation, or its tool
  was never offered to the model (a bare deny rule takes a tool away);
- ``allow``: none of these, and its result is not a refusal that came before any permission
  check (a file not read first, say): it ran, whatever the tool then made of it.

A call with none of these (no result, no JSON result at the end, a refusal before the check)
gives no outcome: the recorder leaves it out and names it.

Run one scenario by hand, as root::

    python -m oracle.runner permissions NAME [--show]
    python -m oracle.runner hooks NAME [--show]

(``--show`` prints each request the scripted server received, by path and offered tools, and
the tool result Claude Code wrote, to look at; neither is ever recorded.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from oracle import CLAUDE
from oracle.model import Call, Script, ScriptedModel, result_text
from oracle.prompt import PROMPT_TOOL, PromptTool
from oracle.sandbox import HOME, PROJECT, ROOT, as_user, entered, lay_out

Outcome = Literal["allow", "ask", "deny"]

WRITERS = ("Write", "Edit")
"""Tools that refuse an existing file Claude Code has not read in the session."""
BASH_TIMEOUT = 10_000
"""Milliseconds a scenario's command may run (none should run long)."""
TOOLS = "Bash,Read,Edit,Write,Grep,Glob,WebFetch"
"""The tools Claude Code offers the scripted model (Grep and Glob only when named)."""

FILES = {
    "project/a.py": "a = 1\n",
    "project/notes.txt": "a\n",
    "project/.env": "SECRET=1\n",
    "project/config/.env": "SECRET=2\n",
    "project/config/prod/.env": "SECRET=3\n",
    "project/src/app.ts": "a\n",
    "project/src/lib/util.ts": "a\n",
    "project/docs/a.md": "a\n",
    "project/x/docs/a.md": "a\n",
    "project/secrets/token": "a\n",
    "project/a/b/secrets/key": "a\n",
    "project/vendor/pkg/src/lib.js": "a\n",
    "project/README.md": "a\n",
    "home/notes.txt": "a\n",
    "home/.ssh/id_rsa": "a\n",
    "outside/x.txt": "a\n",
    "outside/docs/a.md": "a\n",
}
"""The files every session starts with (paths under ``sandbox.ROOT``)."""


@dataclass(frozen=True)
class Scenario:
    """Rules, a mode, a trust state and one call: what Claude Code decides is the outcome."""

    name: str
    tool: str
    """Claude Code's tool name: Bash, Read, Edit, Write, Grep, Glob, WebFetch."""
    input: dict[str, Any]
    """The call's input; a file tool's ``path`` is relative to the project, ``~/...`` or
    absolute, and becomes the absolute ``file_path`` (or ``path``) Claude Code takes."""
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    mode: str = "default"
    via: Literal["project", "flags"] = "project"
    """Where the rules are: the project's ``.claude/settings.json``, or ``--allowedTools`` and
    ``--disallowedTools`` on the command line (no ask rules there)."""
    trusted: bool = True
    """Whether ``~/.claude.json`` records the project's folder as trusted."""
    note: str = ""
    """Where the case comes from, or what it probes."""

    @property
    def session(self) -> tuple[Any, ...]:
        """What scenarios must share to run in one session.

        Writes and edits go apart: a written file must not exist (or Claude Code wants it read
        first); an edited one must, and is read first.
        """
        rules = (self.allow, self.ask, self.deny)
        return (
            *rules,
            self.mode,
            self.via,
            self.trusted,
            self.tool if self.tool in WRITERS else "",
        )

    def as_record(self) -> dict[str, Any]:
        """The scenario as the data file stores it."""
        record: dict[str, Any] = {"tool": self.tool, "input": self.input}
        for key in ("allow", "ask", "deny"):
            if getattr(self, key):
                record[key] = list(getattr(self, key))
        record["mode"] = self.mode
        if self.via != "project":
            record["via"] = self.via
        if not self.trusted:
            record["trusted"] = False
        return record


def absolute(path: str) -> str:
    """A scenario's path as Claude Code's file tools take it: absolute."""
    if path.startswith("~/"):
        return str(HOME / path[2:])
    if path.startswith("/"):
        return path
    return str(PROJECT / path)


def claude_input(scenario: Scenario) -> dict[str, Any]:
    """The input Claude Code's tool takes for the scenario's call."""
    given = dict(scenario.input)
    if "path" in given and scenario.tool in ("Read", "Edit", "Write"):
        given["file_path"] = absolute(given.pop("path"))
    elif "path" in given:
        given["path"] = absolute(given["path"])
    if scenario.tool == "Bash":
        given["timeout"] = BASH_TIMEOUT
    return given


@dataclass
class Session:
    """Scenarios that share their rules, mode and trust state."""

    scenarios: list[Scenario]
    outcomes: dict[str, Outcome | None] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)


def sessions(scenarios: list[Scenario], size: int = 12) -> list[Session]:
    """``scenarios`` in sessions of at most ``size`` that share rules, mode and trust."""
    groups: dict[tuple[Any, ...], list[Scenario]] = {}
    for scenario in scenarios:
        groups.setdefault(scenario.session, []).append(scenario)
    return [
        Session(group[start : start + size])
        for group in groups.values()
        for start in range(0, len(group), size)
    ]


def command(scenario: Scenario, claude: Path, prompt: PromptTool, base_url: str) -> list[str]:
    """The Claude Code command line for the session ``scenario`` belongs to."""
    line = [
        str(claude),
        "-p",
        "Run the calls.",
        "--output-format",
        "json",
        "--permission-mode",
        scenario.mode,
        "--tools",
        TOOLS,
        "--mcp-config",
        prompt.config,
        "--permission-prompt-tool",
        PROMPT_TOOL,
        "--model",
        "claude-sonnet-4-5",
    ]
    if scenario.via == "flags":
        if scenario.allow:
            line += ["--allowedTools", ",".join(scenario.allow)]
        if scenario.deny:
            line += ["--disallowedTools", ",".join(scenario.deny)]
    env = {
        "HOME": str(HOME),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-oracle",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    }
    return as_user(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *line])


def run_alone(
    line: list[str], timeout: float, cwd: Path = PROJECT
) -> subprocess.CompletedProcess[str]:
    """Run ``line`` in ``cwd`` in a process group of its own; end what it left running.

    Every table runs Claude Code through this: a process it leaves behind would write into the
    next scenario's scratch home (a first settings recording had 11 wrong outcomes from it).
    A run past ``timeout`` seconds gives status -1 and stderr ``timed out``.
    """
    with subprocess.Popen(
        line, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    ) as process:  # fmt: skip
        try:
            out, err = process.communicate(timeout=timeout)
            status = process.returncode
        except subprocess.TimeoutExpired:
            out, err, status = "", "timed out", -1
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(line, status, out, err)


def run_session(session: Session, claude: Path, prompt: PromptTool) -> None:
    """Run ``session``'s scenarios through Claude Code; fill its outcomes."""
    first = session.scenarios[0]
    settings: dict[str, object] | None = None
    if first.via == "project":
        rules = {k: list(getattr(first, k)) for k in ("allow", "ask", "deny") if getattr(first, k)}
        settings = {"permissions": rules}
    written = {absolute(s.input["path"]) for s in session.scenarios if s.tool == "Write"}
    files = {name: text for name, text in FILES.items() if str(ROOT / name) not in written}
    recorded: list[Call] = []
    calls: list[Call] = []
    for number, scenario in enumerate(session.scenarios):
        call = Call(f"toolu_oracle_{number:03d}", scenario.tool, claude_input(scenario))
        if scenario.tool == "Edit":  # the file holds the text to replace, and is read first
            path = call.input["file_path"]
            files[str(Path(path).relative_to(ROOT))] = scenario.input["old_string"] + "\n"
            read = {"file_path": path}
            calls.append(Call(f"toolu_oracle_{number:03d}_read", "Read", read, prelude=True))
        calls.append(call)
        recorded.append(call)
    lay_out(files, settings, first.trusted)
    script = Script(calls)
    prompt.script = script
    with ScriptedModel(script) as model:
        done = run_alone(command(first, claude, prompt, model.base_url), 60 + 20 * len(calls))
        session.requests = model.seen
    prompt.script = None
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:  # no result: no call can be told allowed from denied
        result = {}
        for call in calls:
            call.result = None
    denied = {d.get("tool_use_id") for d in result.get("permission_denials") or []}
    for scenario, call in zip(session.scenarios, recorded, strict=True):
        if result and call.tool not in script.offered:
            outcome: Outcome | None = "deny"  # the rules took the tool (or every tool) away
        elif call.result is None:
            outcome = None
        elif call.asked:
            outcome = "ask"
        elif (
            call.id not in denied
            and call.result.get("is_error")
            and "<tool_use_error>" in (result_text(call.result))
        ):
            outcome = None  # refused before any permission check: not a decision
        elif call.id in denied:
            outcome = "deny"
        else:
            outcome = "allow"
        session.outcomes[scenario.name] = outcome
        session.shown[scenario.name] = (
            result_text(call.result)
            if call.result
            else (
                f"(no tool result; exit {done.returncode}; stderr {done.stderr[-400:]!r}; "
                f"stdout {done.stdout[-400:]!r})"
            )
        )


def main(argv: list[str] | None = None) -> int:
    """Run a table's named scenarios (or its first) and print their outcomes, to debug one.

    ``python -m oracle.runner permissions NAME...`` or ``python -m oracle.runner hooks NAME...``;
    ``--show`` adds the requests Claude Code sent the scripted model.
    """
    parser = argparse.ArgumentParser(prog="python -m oracle.runner")
    parser.add_argument("table", choices=["permissions", "hooks"])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--claude", type=Path, default=CLAUDE)
    arguments = parser.parse_args(argv)
    if not entered("oracle.runner", argv):
        return 2
    prompt = PromptTool().start()
    try:
        if arguments.table == "hooks":
            show_hooks(arguments.names, arguments.claude, prompt, arguments.show)
        else:
            show_permissions(arguments.names, arguments.claude, prompt, arguments.show)
    finally:
        prompt.stop()
    return 0


def show_permissions(names: list[str], claude: Path, prompt: PromptTool, show: bool) -> None:
    """Run the named permission scenarios (or the first), in sessions; print each decision."""
    from oracle.permissions import SCENARIOS

    chosen = [s for s in SCENARIOS if s.name in names] or SCENARIOS[:1]
    for session in sessions(chosen):
        run_session(session, claude, prompt)
        if show:
            print("requests:", *session.requests, sep="\n    ")
        for scenario in session.scenarios:
            print(f"{scenario.name}: {session.outcomes[scenario.name]}")
            if show:
                print("   ", session.shown[scenario.name][:300].replace("\n", " | "))


def show_hooks(names: list[str], claude: Path, prompt: PromptTool, show: bool) -> None:
    """Run the named hook scenarios (or the first), one Claude Code each; print each outcome."""
    from oracle.hooks import SCENARIOS, run_hook_scenario  # it imports this module

    for scenario in [s for s in SCENARIOS if s.name in names] or SCENARIOS[:1]:
        run = run_hook_scenario(scenario, claude, prompt)
        if show:
            print("requests:", *run.requests, sep="\n    ")
        print(f"{scenario.name}: {json.dumps(run.outcome, indent=1)}")


if __name__ == "__main__":
    raise SystemExit(main())
