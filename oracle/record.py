"""Record every scenario through the pinned Claude Code; write the data file; say what changed.

    sudo python -m oracle.record [--claude PATH] [--only NAME ...]

(``make oracle`` runs it.) Opt-in, never part of ``verify`` or CI: it needs root (for the
network namespace), the Claude Code binary (``npm install @anthropic-ai/claude-code@VERSION``
outside the repository) and a few minutes. The data file holds outcomes only: per scenario its
rules, mode, call and the decision (allow, ask or deny), never a word Claude Code wrote.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from oracle import CLAUDE, REPOSITORY, VERSION
from oracle.hooks import HookScenario, run_hook_scenario
from oracle.prompt import PromptTool
from oracle.runner import Scenario, run_session, sessions
from oracle.sandbox import entered

DATA = REPOSITORY / "tests" / "data" / f"claude-code-{VERSION}-permissions.json"
"""The permission recording the chapter 13 test reads."""
HOOK_DATA = REPOSITORY / "tests" / "data" / f"claude-code-{VERSION}-hooks.json"
"""The hook recording the chapter 15 test reads."""
SETTINGS_DATA = REPOSITORY / "tests" / "data" / f"claude-code-{VERSION}-settings.json"
"""The settings and trust recording the chapter 17 test reads."""


def version(claude: Path) -> str:
    """The version the binary reports (``2.1.332 (Claude Code)`` gives ``2.1.332``)."""
    done = subprocess.run([str(claude), "--version"], capture_output=True, text=True, check=True)
    return done.stdout.split()[0]


def record(scenarios: list[Scenario], claude: Path) -> tuple[dict[str, Any], list[str]]:
    """The recorded outcome of each scenario, and the names of those that gave none."""
    prompt = PromptTool().start()
    outcomes: dict[str, Any] = {}
    missing: list[str] = []
    try:
        groups = sessions(scenarios)
        for number, session in enumerate(groups, 1):
            run_session(session, claude, prompt)
            for scenario in session.scenarios:
                decision = session.outcomes[scenario.name]
                if decision is None:
                    missing.append(scenario.name)
                    continue
                outcomes[scenario.name] = {**scenario.as_record(), "decision": decision}
            print(f"\rsession {number}/{len(groups)}", end="", file=sys.stderr, flush=True)
    finally:
        prompt.stop()
        print(file=sys.stderr)
    return outcomes, missing


def record_hooks(scenarios: list[HookScenario], claude: Path) -> dict[str, Any]:
    """The recorded outcome of each hook scenario (one Claude Code run each)."""
    prompt = PromptTool().start()
    outcomes: dict[str, Any] = {}
    try:
        for number, scenario in enumerate(scenarios, 1):
            run = run_hook_scenario(scenario, claude, prompt)
            outcomes[scenario.name] = {**scenario.as_record(), "outcome": run.outcome}
            print(f"\rhook scenario {number}/{len(scenarios)}", end="", file=sys.stderr, flush=True)
    finally:
        prompt.stop()
        print(file=sys.stderr)
    return outcomes


def write(path: Path, outcomes: dict[str, Any], partial: bool, how: str) -> dict[str, Any]:
    """Write ``outcomes`` to ``path`` (merged into what it held when ``partial``).

    Says what changed; returns what is written.
    """
    before: dict[str, Any] = {}
    if path.exists():
        before = json.loads(path.read_text(encoding="utf-8")).get("scenarios", {})
    changed = [n for n, o in outcomes.items() if n in before and before[n] != o]
    new = [n for n in outcomes if n not in before]
    if partial:
        outcomes = {**before, **outcomes}
    else:
        gone = [n for n in before if n not in outcomes]
        print(f"{len(gone)} scenarios no longer in the table", *gone, sep="\n  ")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"claude_code": VERSION, "recorded_with": how,
            "scenarios": dict(sorted(outcomes.items()))}  # fmt: skip
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(outcomes)} outcomes written to {path.relative_to(REPOSITORY)}")
    print(f"{len(changed)} outcomes changed", *changed, sep="\n  ")
    print(f"{len(new)} new scenarios")
    return outcomes


def main(argv: list[str] | None = None) -> int:
    """Record, compare with the committed files, write them."""
    parser = argparse.ArgumentParser(prog="python -m oracle.record")
    parser.add_argument("--claude", type=Path, default=CLAUDE)
    parser.add_argument("--only", nargs="*", default=None, help="record only these scenarios")
    parser.add_argument(
        "--table", choices=["permissions", "hooks", "settings", "print", "all"], default="all"
    )
    arguments = parser.parse_args(argv)
    if not arguments.claude.exists():
        print(
            f"no Claude Code at {arguments.claude}: npm install "
            f"@anthropic-ai/claude-code@{VERSION} (outside the repository)",
            file=sys.stderr,
        )
        return 2
    found = version(arguments.claude)
    if found != VERSION:
        print(
            f"{arguments.claude} is Claude Code {found}, not the pinned {VERSION}", file=sys.stderr
        )
        return 2
    if not entered("oracle.record", argv, "record"):
        return 2
    logging.disable(logging.INFO)
    from oracle.hooks import SCENARIOS as HOOK_SCENARIOS
    from oracle.permissions import SCENARIOS

    if arguments.table in ("permissions", "all"):
        chosen = SCENARIOS
        if arguments.only:
            chosen = [s for s in SCENARIOS if s.name in arguments.only]
        if chosen:
            outcomes, missing = record(chosen, arguments.claude)
            write(DATA, outcomes, bool(arguments.only), "python -m oracle.record (network "
                  "namespace with only loopback, scripted Messages server, permission-prompt "
                  "MCP tool)")  # fmt: skip
            if missing:
                print(f"{len(missing)} scenarios gave no decision (not recorded)", *missing,
                      sep="\n  ")  # fmt: skip
    if arguments.table in ("hooks", "all"):
        hooks = HOOK_SCENARIOS
        if arguments.only:
            hooks = [s for s in HOOK_SCENARIOS if s.name in arguments.only]
        if hooks:
            write(HOOK_DATA, record_hooks(hooks, arguments.claude), bool(arguments.only),
                  "python -m oracle.record (network namespace with only loopback, scripted "
                  "Messages server, hook scripts that log their stdin and answer as the "
                  "scenario says)")  # fmt: skip
    if arguments.table in ("settings", "all"):
        from oracle.settings import SCENARIOS as SETTINGS_SCENARIOS
        from oracle.settings import record_settings

        layered = SETTINGS_SCENARIOS
        if arguments.only:
            layered = [s for s in SETTINGS_SCENARIOS if s.name in arguments.only]
        if layered:
            write(SETTINGS_DATA, record_settings(layered, arguments.claude), bool(arguments.only),
                  "python -m oracle.record (network namespace with only loopback, scripted "
                  "Messages server, permission-prompt MCP tool; settings files, flags and trust "
                  "record per scenario)")  # fmt: skip
    if arguments.table in ("print", "all"):  # print mode and the session folders (ch19, ch22)
        from oracle.printmode import record_tables

        record_tables(arguments.claude, arguments.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
