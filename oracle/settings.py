"""The settings and trust scenarios (chapters 17 and 16): layers, modes, trust, one run each.

A scenario is what the files and the command line say: the user's ``~/.claude/settings.json``,
the project's ``.claude/settings.json`` and ``.claude/settings.local.json``, command-line flags
(``--permission-mode``, ``--allowedTools``, ``--disallowedTools``, ``--settings``), and whether
``~/.claude.json`` records the project (or the folder that holds it) as trusted. The scripted
model then asks for the scenario's calls, one per turn. Its outcome, recorded as flags and
names only:

- ``calls``: per call, the decision (``allow``, ``ask`` or ``deny``, told apart as
  ``oracle.runner`` does) and which of the scenario's marks (``MARKS``) its result carries;
- ``model``: the model the main loop's requests named (a scalar from the winning layer);
- ``hooks``: which layers' ``PreToolUse`` hooks ran (each touches a file named for its layer);
- ``exit``: Claude Code's exit status.

Sections: ``layer-`` (which layer's rule or value counts, lists joined, deny first), ``mode-``
(``defaultMode`` from each layer, against the command line's), ``trust-`` (what an untrusted
project's files still do, and which folders a trust record covers: a folder below the trusted
one, with and without git, and a clone inside a trusted folder), ``flags-`` (the command line's
rules and ``--settings``), ``env-`` (``env`` from settings) and ``bad-`` (a file Claude Code
cannot use).

Run one scenario by hand, as root::

    python -m oracle.settings NAME [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from oracle import CLAUDE
from oracle.hooks import RecordingModel
from oracle.model import Call, Script, result_text
from oracle.prompt import PromptTool
from oracle.runner import FILES, Scenario, claude_input, command, run_alone
from oracle.sandbox import HOME, PROJECT, ROOT, USER, entered, lay_out

MARKS = ("ENV-MARK",)
"""Words a scenario's commands may print: where they arrive is part of the outcome."""
LAYERS = ("user", "project", "local", "flag")
"""Where settings come from: ``flag`` is ``--settings`` on the command line."""
Trust = Literal["project", "parent", "none"]

CallSpec = tuple[str, dict[str, Any]]


def sh(command_line: str) -> CallSpec:
    """A Bash call."""
    return ("Bash", {"command": command_line})


MAKE = sh("make")
"""A command no mode but ``bypassPermissions`` runs unasked."""
NPM = sh("npm test")
WRITE = ("Write", {"path": "new.txt", "content": "x\n"})
"""A new file in the project: ``acceptEdits`` writes it, ``default`` asks."""
READ_ENV = ("Read", {"path": ".env"})
PROBES = (WRITE, MAKE)
"""The two calls that tell the modes apart: (ask, ask) default, (allow, ask) acceptEdits,
(allow, allow) bypassPermissions, (deny, deny) dontAsk."""


@dataclass(frozen=True)
class SettingsScenario:
    """Files, flags and trust: what Claude Code decides for the calls is the outcome."""

    name: str
    user: dict[str, Any] | None = None
    project: dict[str, Any] | None = None
    local: dict[str, Any] | None = None
    flags: tuple[str, ...] = ()
    """Command-line flags after the fixed ones (no ``--permission-mode`` unless here)."""
    trust: Trust = "project"
    """``project``: the trust record names the project; ``parent``: the folder holding it."""
    cwd: str = ""
    """A folder below the project where Claude Code runs and the project's two settings files
    are (empty: the project itself)."""
    git: tuple[str, ...] = ()
    """Folders (relative to the scratch root: ``""`` is the folder holding the project,
    ``project`` the project) made git repositories with ``git init``."""
    calls: tuple[CallSpec, ...] = PROBES
    raw_project: str | None = None
    """The project file's text when it is not JSON (``project`` is then ignored)."""
    note: str = ""

    def as_record(self) -> dict[str, Any]:
        """The scenario as the data file stores it (the outcome goes beside it)."""
        record: dict[str, Any] = {}
        for layer in ("user", "project", "local"):
            if getattr(self, layer) is not None:
                record[layer] = getattr(self, layer)
        if self.raw_project is not None:
            record["raw_project"] = self.raw_project
        if self.flags:
            record["flags"] = list(self.flags)
        record["trust"] = self.trust
        if self.cwd:
            record["cwd"] = self.cwd
        if self.git:
            record["git"] = list(self.git)
        record["calls"] = [{"tool": tool, "input": given} for tool, given in self.calls]
        return record


def allow(*rules: str) -> dict[str, Any]:
    """Settings with these allow rules."""
    return {"permissions": {"allow": list(rules)}}


def deny(*rules: str) -> dict[str, Any]:
    """Settings with these deny rules."""
    return {"permissions": {"deny": list(rules)}}


def ask(*rules: str) -> dict[str, Any]:
    """Settings with these ask rules."""
    return {"permissions": {"ask": list(rules)}}


def mode(name: str) -> dict[str, Any]:
    """Settings whose ``defaultMode`` is ``name``."""
    return {"permissions": {"defaultMode": name}}


def model(name: str) -> dict[str, Any]:
    """Settings that name a model."""
    return {"model": name}


def hook(layer: str) -> dict[str, Any]:
    """Settings with a ``PreToolUse`` hook for Bash that touches ``hook-LAYER`` (it ran)."""
    entry = {"type": "command", "command": f"touch {ROOT}/hook-{layer}"}
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [entry]}]}}


def env(value: str = "ENV-MARK") -> dict[str, Any]:
    """Settings whose ``env`` sets ``ORACLE_ENV``."""
    return {"env": {"ORACLE_ENV": value}}


def both(*parts: dict[str, Any]) -> dict[str, Any]:
    """Settings made of several parts (``permissions`` objects joined)."""
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged


MODELS = tuple(f"claude-oracle-{layer}" for layer in LAYERS)
"""Model names the layers set (one per layer); the scripted server answers any."""
PRINTENV = sh("printenv ORACLE_ENV")


def _scenarios() -> list[SettingsScenario]:
    s: list[SettingsScenario] = []

    def add(name: str, **fields: Any) -> None:
        assert all(x.name != name for x in s), name
        s.append(SettingsScenario(name, **fields))

    user_m, project_m, local_m, flag_m = MODELS
    # layer-: which layer counts ------------------------------------------------------------
    add("layer-user-allow", user=allow("Bash(make)"))
    add("layer-project-allow", project=allow("Bash(make)"))
    add("layer-local-allow", local=allow("Bash(make)"))
    add("layer-allow-lists-join", user=allow("Bash(make)"), project=allow("Bash(npm test)"),
        local=allow("Write"), calls=(MAKE, NPM, WRITE))  # fmt: skip
    add("layer-user-deny-beats-project-allow", user=deny("Bash(make)"), project=allow("Bash(make)"))
    add("layer-user-deny-beats-local-allow", user=deny("Bash(make)"), local=allow("Bash(make)"))
    add("layer-project-deny-beats-local-allow", project=deny("Bash(make)"),
        local=allow("Bash(make)"))  # fmt: skip
    add("layer-local-deny-beats-user-allow", user=allow("Bash(make)"), local=deny("Bash(make)"))
    add("layer-project-deny-beats-user-allow", user=allow("Bash(make)"),
        project=deny("Bash(make)"))  # fmt: skip
    add("layer-local-deny-beats-project-allow", project=allow("Bash(make)"),
        local=deny("Bash(make)"))  # fmt: skip
    add("layer-user-ask-beats-project-allow", user=ask("Bash(make)"), project=allow("Bash(make)"))
    add("layer-project-ask-beats-local-allow", project=ask("Bash(make)"), local=allow("Bash(make)"))
    add("layer-local-ask-beats-user-allow", user=allow("Bash(make)"), local=ask("Bash(make)"))
    add("layer-project-read-deny-beats-user-allow", user=allow("Read"),
        project=deny("Read(./.env)"), calls=(READ_ENV,))  # fmt: skip
    add("layer-user-bare-deny-beats-local-allow", user=deny("Write"), local=allow("Write"),
        calls=(WRITE,))  # fmt: skip
    add("layer-model-user", user=model(user_m))
    add("layer-model-project-over-user", user=model(user_m), project=model(project_m))
    add("layer-model-local-over-project", user=model(user_m), project=model(project_m),
        local=model(local_m))  # fmt: skip
    add("layer-model-flag-over-local", user=model(user_m), project=model(project_m),
        local=model(local_m), flags=("--model", flag_m))  # fmt: skip
    add("layer-model-user-kept-when-others-set-rules", user=model(user_m),
        project=allow("Bash(make)"), local=allow("Write"))  # fmt: skip
    add("layer-hooks-join", user=hook("user"), project=hook("project"), local=hook("local"),
        calls=(MAKE,))  # fmt: skip
    add("layer-unknown-key-ignored", project=both(allow("Bash(make)"), {"colour": "blue"}))
    add("layer-unknown-permissions-key-ignored",
        project={"permissions": {"allow": ["Bash(make)"], "alow": ["Write"]}})  # fmt: skip

    # mode-: defaultMode from each layer, and the command line --------------------------
    for name in ("acceptEdits", "dontAsk", "bypassPermissions"):
        add(f"mode-user-{name}", user=mode(name))
        add(f"mode-project-{name}", project=mode(name))
        add(f"mode-local-{name}", local=mode(name))
    add("mode-local-over-project", project=mode("dontAsk"), local=mode("acceptEdits"))
    add("mode-project-over-user", user=mode("dontAsk"), project=mode("acceptEdits"))
    add("mode-flag-default-over-user", user=mode("acceptEdits"),
        flags=("--permission-mode", "default"))  # fmt: skip
    add("mode-flag-over-local", local=mode("acceptEdits"), flags=("--permission-mode", "dontAsk"))
    add("mode-flag-bypass", flags=("--permission-mode", "bypassPermissions"))
    add("mode-project-bypass-over-user-acceptEdits", user=mode("acceptEdits"),
        project=mode("bypassPermissions"))  # fmt: skip
    add("mode-user-bypass-under-project-acceptEdits", user=mode("bypassPermissions"),
        project=mode("acceptEdits"))  # fmt: skip
    add("mode-settings-flag-bypass", flags=("--settings", json.dumps(mode("bypassPermissions"))))
    add("mode-bypass-deny-still-holds", user=both(mode("bypassPermissions"), deny("Bash(make)")))
    add("mode-bypass-ask-rule", user=both(mode("bypassPermissions"), ask("Bash(make)")))

    # trust-: an untrusted project's files --------------------------------------------------
    add("trust-none-project-allow", project=allow("Bash(make)", "Write"), trust="none")
    add("trust-none-project-deny", project=deny("Bash(make)"), user=allow("Bash(make)"),
        trust="none")  # fmt: skip
    add("trust-none-project-ask", project=ask("Bash(make)"), user=allow("Bash(make)"),
        trust="none")  # fmt: skip
    add("trust-none-local-alone-allow", local=allow("Bash(make)", "Write"), trust="none")
    add("trust-none-local-deny", local=deny("Bash(make)"), user=allow("Bash(make)"), trust="none")
    add("trust-none-user-allow", user=allow("Bash(make)", "Write"), trust="none")
    add("trust-none-project-mode-acceptEdits", project=mode("acceptEdits"), trust="none")
    add("trust-none-local-mode-acceptEdits", local=mode("acceptEdits"), trust="none")
    add("trust-none-project-model", user=model(user_m), project=model(project_m), trust="none")
    add("trust-none-project-hooks", user=hook("user"), project=hook("project"), trust="none",
        calls=(MAKE,))  # fmt: skip
    add("trust-none-local-hooks", local=hook("local"), trust="none", calls=(MAKE,))
    add("trust-parent-project-allow", project=allow("Bash(make)", "Write"), trust="parent")
    add("trust-project-allow", project=allow("Bash(make)", "Write"))
    # a folder inside a trusted one: is the trust record for the exact folder only?
    make = (MAKE,)
    add("trust-parent-subfolder-allow", project=allow("Bash(make)"), cwd="sub", calls=make)
    add("trust-parent-git-subfolder-allow", project=allow("Bash(make)"), cwd="sub",
        git=("project",), calls=make)  # fmt: skip
    add("trust-parent-git-deep-subfolder-allow", project=allow("Bash(make)"), cwd="src/lib",
        git=("project",), calls=make)  # fmt: skip
    add("trust-parent-git-folder-allow", project=allow("Bash(make)"), trust="parent", git=("",),
        calls=make)  # fmt: skip
    add("trust-parent-git-clone-inside-allow", project=allow("Bash(make)"), trust="parent",
        git=("", "project"), calls=make)  # fmt: skip
    add("trust-parent-clone-inside-hooks", project=both(allow("Bash(make)"), hook("project")),
        trust="parent", git=("project",), calls=make)  # fmt: skip

    # flags-: rules on the command line ----------------------------------------------------
    add("flags-allowedTools-joins-project-allow", project=allow("Write"),
        flags=("--allowedTools", "Bash(make)"))  # fmt: skip
    add("flags-disallowedTools-beats-local-allow", local=allow("Bash(make)"),
        flags=("--disallowedTools", "Bash(make)"))  # fmt: skip
    add("flags-allowedTools-under-user-deny", user=deny("Bash(make)"),
        flags=("--allowedTools", "Bash(make)"))  # fmt: skip
    add("flags-settings-allow", flags=("--settings", json.dumps(allow("Bash(make)"))))
    add("flags-settings-deny-beats-project-allow", project=allow("Bash(make)"),
        flags=("--settings", json.dumps(deny("Bash(make)"))))  # fmt: skip

    # env-: environment variables from settings ---------------------------------------------
    run_env = (PRINTENV,)
    add("env-user", user=both(env(), allow("Bash(printenv *)")), calls=run_env)
    add("env-project", project=both(env(), allow("Bash(printenv *)")), calls=run_env)
    add("env-project-untrusted", user=allow("Bash(printenv *)"), project=env(), trust="none",
        calls=run_env)  # fmt: skip

    # bad-: a file Claude Code cannot use -------------------------------------------------------
    add("bad-project-not-json", user=allow("Write"), raw_project="{not json",
        calls=(WRITE,))  # fmt: skip
    add("bad-project-allow-not-a-list", user=allow("Write"),
        project={"permissions": {"allow": "Bash(make)"}})  # fmt: skip
    add("bad-project-unknown-mode", user=allow("Write"), project=mode("yolo"))
    return s


SCENARIOS = _scenarios()
"""Every settings and trust scenario, in the order they run."""


def lay_out_settings(scenario: SettingsScenario) -> None:
    """The scratch folders with the scenario's files and trust record, owned by the user."""
    for _ in range(50):  # a process of the last run may still be writing its files there
        shutil.rmtree(ROOT, ignore_errors=True)
        if not ROOT.exists() or not any(ROOT.iterdir()):
            break
        time.sleep(0.1)
    here = PROJECT / scenario.cwd
    lay_out(dict(FILES), None, scenario.trust == "project")
    if scenario.project is not None:
        (here / ".claude").mkdir(parents=True, exist_ok=True)
        (here / ".claude" / "settings.json").write_text(json.dumps(scenario.project, indent=2))
    if scenario.raw_project is not None:
        (here / ".claude").mkdir(parents=True, exist_ok=True)
        (here / ".claude" / "settings.json").write_text(scenario.raw_project)
    if scenario.user is not None:
        (HOME / ".claude").mkdir(exist_ok=True)
        (HOME / ".claude" / "settings.json").write_text(json.dumps(scenario.user, indent=2))
    if scenario.local is not None:
        (here / ".claude").mkdir(parents=True, exist_ok=True)
        (here / ".claude" / "settings.local.json").write_text(json.dumps(scenario.local))
    for folder in scenario.git:
        subprocess.run(["git", "init", "-q", str(ROOT / folder)], check=True)
    if scenario.trust == "parent":
        state = json.loads((HOME / ".claude.json").read_text())
        state["projects"] = {str(ROOT): {"hasTrustDialogAccepted": True, "allowedTools": []}}
        (HOME / ".claude.json").write_text(json.dumps(state, indent=2))
    for top, _dirs, names in os.walk(ROOT):
        os.chown(top, USER, USER)
        for name in names:
            os.chown(os.path.join(top, name), USER, USER)


def settings_command(
    scenario: SettingsScenario, claude: Path, prompt: PromptTool, base_url: str
) -> list[str]:
    """Claude Code's command line: the recorder's, without a mode unless the scenario gives one."""
    line = command(Scenario(scenario.name, "Bash", {}), claude, prompt, base_url)
    at = line.index("--permission-mode")
    del line[at : at + 2]
    at = line.index("--model")
    if "--model" in scenario.flags or any(scenario_sets_model(scenario)):
        del line[at : at + 2]
    return line + list(scenario.flags)


def scenario_sets_model(scenario: SettingsScenario) -> list[str]:
    """The layers whose settings name a model."""
    return [
        layer
        for layer in ("user", "project", "local")
        if isinstance(getattr(scenario, layer), dict) and "model" in getattr(scenario, layer)
    ]


def run_settings_scenario(
    scenario: SettingsScenario, claude: Path, prompt: PromptTool
) -> tuple[dict[str, Any], list[str]]:
    """Run ``scenario`` through Claude Code (inside the namespace): its outcome, what it showed."""
    lay_out_settings(scenario)
    calls = [
        Call(f"toolu_settings_{n:03d}", tool, claude_input(Scenario("call", tool, given)))
        for n, (tool, given) in enumerate(scenario.calls)
    ]
    script = Script(calls)
    prompt.script = script
    with RecordingModel(script) as server:
        line = settings_command(scenario, claude, prompt, server.base_url)
        done = run_alone(line, 60 + 20 * len(calls), cwd=PROJECT / scenario.cwd)
        bodies = server.bodies
    prompt.script = None
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = {}
    denied = {d.get("tool_use_id") for d in result.get("permission_denials") or []}
    decided: list[dict[str, Any]] = []
    shown: list[str] = []
    for call in calls:
        text = result_text(call.result) if call.result else ""
        decision: str | None
        if bodies and call.tool not in script.offered:
            decision = "deny"
        elif call.result is None:
            decision = None
        elif call.asked:
            decision = "ask"
        elif call.id in denied:
            decision = "deny"
        elif call.result.get("is_error") and "<tool_use_error>" in text:
            decision = None
        else:
            decision = "allow"
        decided.append({"decision": decision, "marks": [m for m in MARKS if m in text]})
        shown.append(text[:300])
    models = sorted({str(body.get("model")) for body in bodies})
    ran = [layer for layer in LAYERS if (ROOT / f"hook-{layer}").exists()]
    outcome = {"calls": decided, "model": models[0] if len(models) == 1 else models,
               "hooks": ran, "exit": done.returncode}  # fmt: skip
    if not bodies:
        shown.append(f"(no request; exit {done.returncode}; stderr {done.stderr[-300:]!r})")
    return outcome, shown


def record_settings(scenarios: list[SettingsScenario], claude: Path) -> dict[str, Any]:
    """The recorded outcome of each scenario (one Claude Code run each)."""
    prompt = PromptTool().start()
    outcomes: dict[str, Any] = {}
    try:
        for number, scenario in enumerate(scenarios, 1):
            outcome, _shown = run_settings_scenario(scenario, claude, prompt)
            outcomes[scenario.name] = {**scenario.as_record(), "outcome": outcome}
            print(f"\rsettings scenario {number}/{len(scenarios)}", end="", file=sys.stderr,
                  flush=True)  # fmt: skip
    finally:
        prompt.stop()
        print(file=sys.stderr)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    """Run the named scenarios (default: the first) and print their outcomes."""
    parser = argparse.ArgumentParser(prog="python -m oracle.settings")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--claude", type=Path, default=CLAUDE)
    arguments = parser.parse_args(argv)
    if not entered("oracle.settings", argv):
        return 2
    chosen = [s for s in SCENARIOS if s.name in arguments.names] or SCENARIOS[:1]
    prompt = PromptTool().start()
    try:
        for scenario in chosen:
            outcome, shown = run_settings_scenario(scenario, arguments.claude, prompt)
            print(f"{scenario.name}: {json.dumps(outcome)}")
            for line in shown:
                print("   ", line.replace("\n", " | "))
    finally:
        prompt.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
