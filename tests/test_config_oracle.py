"""ch17 · Settings and trust against Claude Code 2.1.332 itself: each recorded scenario in claw.

``tests/data/claude-code-2.1.332-settings.json`` holds what the real program did for each
scenario of ``oracle/settings.py``, recorded by ``make oracle``: the user's, the project's and
the local settings file, the command line, whether the project was trusted, and then, for the
calls a scripted model asked for, the decision (allow, ask, deny), the model the requests
named, whose ``PreToolUse`` hooks ran and the exit status. No Claude Code runs here: each
scenario's files are written where claw reads them (``.claude`` becomes ``.claw``; the trust
record becomes ``trusted-folders.json``), and the pieces the ``claw`` command runs before its
first request (``decide_trust``, your ``load_settings``, chapter 13's ``Permissions``) settle
the same questions.

A scenario where claw does otherwise fails its section unless it is a deliberate difference
(``DIFFERENCES``, listed with its reason on the chapter 17 page: tests/tooling/test_book_lists.py
checks that); a listed difference that stops being one fails too.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from claude_code_recording import recording as recorded

from claw.configure import command_line_options, rule_checker
from claw.hooks import Hooks
from claw.options import parse_arguments
from claw.permissions import Mode, Permissions
from claw.settings import SettingsError, load_settings
from claw.trust import TRUST_FILE, decide_trust
from claw.types import ToolCall

SCRATCH = "/tmp/claw-oracle"
"""Where the recorder's scratch folders were (the hooks' commands name it)."""
RECORDER_MODEL = "claude-sonnet-4-5"
"""The ``--model`` the recorder gives Claude Code when no file or flag of the scenario names a
model (oracle/settings.py): for claw, a command-line ``--model``."""
TOOLS = {"Bash": "bash", "Read": "read", "Write": "write"}
"""Claude Code's tool names, as claw names the same tools."""
LAYER_FILES = {"user": "home/.claw/settings.json", "project": "project/.claw/settings.json",
               "local": "project/.claw/settings.local.json"}  # fmt: skip
"""Where claw reads what Claude Code reads from ``~/.claude/settings.json``,
``.claude/settings.json`` and ``.claude/settings.local.json``."""


def recording() -> dict[str, dict[str, Any]]:
    """The recorded scenarios, by name."""
    return recorded("settings")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A home and a project, each with its ``.claw`` folder, for every scenario in turn
    (``lay_out`` replaces the files; this machine's file system is slow to make folders)."""
    base = tmp_path_factory.mktemp("oracle")
    home, project = base / "home", base / "project"
    (home / ".claw").mkdir(parents=True)
    (project / ".claw").mkdir(parents=True)
    return home, project


def lay_out(scenario: dict[str, Any], home: Path, project: Path) -> Path:
    """The scenario's files where claw reads them, replacing the last scenario's; the folder
    claw runs in (the project, or the scenario's ``cwd`` below it)."""
    texts = {layer: json.dumps(scenario[layer]) for layer in LAYER_FILES if layer in scenario}
    if "raw_project" in scenario:
        texts["project"] = scenario["raw_project"]
    trusted = {"project": [str(project)], "parent": [str(project.parent)], "none": []}
    if trusted[scenario["trust"]]:
        texts["trust"] = json.dumps({"trusted": trusted[scenario["trust"]]})
    here = project / scenario.get("cwd", "")
    (here / ".claw").mkdir(parents=True, exist_ok=True)
    for name, path in (("user", home / ".claw" / "settings.json"),
                       ("project", here / ".claw" / "settings.json"),
                       ("local", here / ".claw" / "settings.local.json"),
                       ("trust", home / ".claw" / TRUST_FILE)):  # fmt: skip
        if name in texts:  # a hook's matcher names claw's tool
            path.write_text(texts[name].replace('"matcher": "Bash"', '"matcher": "bash"'), "utf-8")
        else:
            path.unlink(missing_ok=True)
    for folder, repository in (("", project.parent), ("project", project)):  # git init's mark
        if folder in scenario.get("git", []):
            (repository / ".git").mkdir(exist_ok=True)
        elif (repository / ".git").exists():
            (repository / ".git").rmdir()
    return here


def command_line(scenario: dict[str, Any]) -> argparse.Namespace:
    """The scenario's flags (Claude Code's spellings) read by claw's own command-line parser."""
    flags = list(scenario.get("flags", []))
    named = "--model" in flags or any("model" in scenario.get(layer, {}) for layer in LAYER_FILES)
    return parse_arguments([*flags, *([] if named else ["--model", RECORDER_MODEL])])


async def no_answer() -> str:
    """Nobody at a terminal: never asked (stdin is not a terminal in a test)."""
    return ""


async def claw_did(scenario: dict[str, Any], home: Path, project: Path) -> dict[str, Any] | str:
    """What claw does with the scenario, in the recording's shape, or why it does not start."""
    arguments = command_line(scenario)
    here = lay_out(scenario, home, project)
    store = home / ".claw" / TRUST_FILE
    trusted = await decide_trust(
        here, flag=False, read_line=no_answer, out=io.StringIO(), err=io.StringIO(), store=store
    )
    try:
        loaded = load_settings(here, home=home, environ={},
                               options=command_line_options(arguments), trusted=trusted,
                               check_rule=rule_checker(),
                               settings_flag=arguments.settings)  # fmt: skip
    except SettingsError:
        return "stops before the first request (exit 1)"
    settings = loaded.settings
    rules = settings.permissions
    permissions = Permissions(here, allow=rules.allow, ask=rules.ask, deny=rules.deny,
                              mode=Mode(rules.default_mode or "default"), home=home)  # fmt: skip
    calls = []
    for number, call in enumerate(scenario["calls"]):
        tool_call = ToolCall(id=f"c{number}", name=TOOLS[call["tool"]], arguments=call["input"])
        # claw's commands get claw's own environment: no setting adds a variable to it
        calls.append({"decision": str(permissions.decide(tool_call).decision), "marks": []})
    Hooks.from_settings(settings.hooks, here)  # as the command checks them: no refusal
    hooks = json.dumps(settings.hooks.get("PreToolUse", []))
    ran = [layer for layer in ("user", "project", "local", "flag") if f"hook-{layer}" in hooks]
    return {"calls": calls, "model": settings.model, "hooks": ran, "exit": 0}


DIFFERENCES: dict[str, str] = {
    **dict.fromkeys(
        ["trust-none-project-hooks", "trust-none-local-hooks",
         "trust-none-project-mode-acceptEdits", "trust-none-local-mode-acceptEdits",
         "trust-none-project-model", "trust-parent-clone-inside-hooks"],
        "an untrusted folder's settings add only deny and ask rules",
    ),
    "trust-none-local-alone-allow": "`settings.local.json` alone waits for trust too",
    **dict.fromkeys(["env-user", "env-project", "env-project-untrusted"],
                    "no environment variable comes from a settings file"),
    **dict.fromkeys(["bad-project-not-json", "bad-project-allow-not-a-list",
                     "bad-project-unknown-mode"],
                    "a settings file claw cannot use stops it before the first request"),
}  # fmt: skip
"""Scenarios where claw deliberately does otherwise, and the words the chapter 17 page's table
of differences uses for each (several scenarios share a row)."""

SECTIONS = ["layer", "mode", "trust", "flags", "env", "bad"]
"""The sections of the table (a scenario's name starts with its section)."""


@pytest.mark.parametrize("section", SECTIONS)
def test_config_oracle_claw_settles_settings_as_claude_code(
    section: str, folders: tuple[Path, Path]
) -> None:
    """Every recorded scenario of ``section``: claw decides the calls, picks the model, keeps
    the hooks and starts (or stops) as Claude Code did, or it is a listed difference that
    still holds; a failure names each scenario that does not."""
    home, project = folders
    # Chapter 17's loader first, so the untouched starter meets its stub; on empty folders,
    # never on what the module's last scenario left (an unusable mode, in "bad").
    nowhere = project / "nowhere"
    load_settings(nowhere, home=nowhere, environ={})
    scenarios = recording()
    assert len(scenarios) >= 40
    assert {name.split("-")[0] for name in scenarios} == set(SECTIONS), "a section nobody checks"
    mine = {name: s for name, s in scenarios.items() if name.split("-")[0] == section}
    assert mine, f"no recorded scenario in {section!r}"

    async def each() -> list[dict[str, Any] | str]:
        return [await claw_did(scenario, home, project) for scenario in mine.values()]

    wrong = []
    for (name, scenario), did in zip(mine.items(), asyncio.run(each()), strict=True):
        same = did == scenario["outcome"]
        if name in DIFFERENCES and same:
            wrong.append(f"{name}: claw now does as Claude Code does: not a difference any "
                         f"more (remove it from DIFFERENCES and the page)")  # fmt: skip
        elif name not in DIFFERENCES and not same:
            wrong.append(f"{name}: claw {did}, Claude Code {scenario['outcome']}")
    assert not wrong, "\n".join(wrong)
