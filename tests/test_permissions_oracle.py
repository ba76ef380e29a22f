"""ch13 · Permissions against Claude Code 2.1.332 itself: every recorded scenario through claw.

``tests/data/claude-code-2.1.332-permissions.json`` holds what the real program decided for each
scenario of ``oracle/permissions.py`` (rules, a mode, one call), recorded by ``make oracle``
(``oracle/record.py``): Claude Code in a network namespace with only loopback, a scripted model
asking for the call, a permission-prompt tool telling "ask" from "deny". No Claude Code runs
here: each test reads the recording and asks your ``Permissions.decide`` the same question.

A scenario where claw decides otherwise fails its group, unless it is a deliberate difference
(``DIFFERENCES``: the test asserts it still is one; the chapter 13 page lists it with its
reason, which tests/tooling/test_book_lists.py checks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_code_recording import recording as recorded

from claw.permissions import Mode, Permissions, RuleError
from claw.types import ToolCall

SCRATCH = "/tmp/claw-oracle"
"""Where the recorder's scratch folders were: ``project``, ``home``, ``outside``."""

TOOLS = {"Bash": "bash", "Read": "read", "Write": "write", "Edit": "edit", "Grep": "grep",
         "Glob": "glob", "WebFetch": "web_fetch"}  # fmt: skip
"""Claude Code's tool names, as claw names the same tools."""


def recording() -> dict[str, dict[str, Any]]:
    """The recorded scenarios, by name."""
    return recorded("permissions")


def here(text: str, base: Path) -> str:
    """``text`` with the recorder's scratch folder replaced by this test's."""
    return text.replace(SCRATCH, str(base))


def claw_call(scenario: dict[str, Any], base: Path) -> ToolCall:
    """The scenario's call, as claw's tool takes it."""
    arguments = {
        key: here(value, base) if isinstance(value, str) else value
        for key, value in scenario["input"].items()
    }
    path = arguments.get("path")
    if isinstance(path, str) and path.startswith("~/"):
        arguments["path"] = str(base / "home" / path[2:])
    if scenario["tool"] == "Edit":
        arguments["old"], arguments["new"] = (
            arguments.pop("old_string"),
            arguments.pop("new_string"),
        )
    return ToolCall(id="c1", name=TOOLS[scenario["tool"]], arguments=arguments)


def claw_decides(scenario: dict[str, Any], base: Path) -> str:
    """What claw decides: ``allow``, ``ask`` or ``deny``, or why it takes no decision."""
    try:
        mode = Mode(scenario["mode"])
    except ValueError:
        return f"no mode {scenario['mode']!r}"
    try:
        rules = Permissions(
            base / "project",
            **{
                kind: [here(rule, base) for rule in scenario.get(kind, [])]
                for kind in ("allow", "ask", "deny")
            },
            mode=mode,
            home=base / "home",
        )
    except RuleError:
        return "refuses the rule"
    return str(rules.decide(claw_call(scenario, base)).decision)


PLANNED = ["cp", "make", "mkdir", "mkdir-outside", "npm-test", "redirect-inside",
           "redirect-outside", "rm-build", "sed-i", "touch", "write-home", "write-inside",
           "write-outside"]  # fmt: skip
"""The calls of the table that plan mode no rule allows for (each a `mode-plan-` scenario)."""

SPELLINGS = "a deny rule holds through `bash -c`, `eval`, `find -exec`"
DIFFERENCES: dict[str, str] = {
    **dict.fromkeys(
        ["doc-deny-bash-c-rm", "doc-deny-eval-rm", "doc-deny-find-execdir-rm",
         "doc-deny-xargs-flags-rm", "wrapper-deny-find-exec", "wrapper-deny-sh-c",
         "doc-read-deny-past-xargs-options", "doc-words-after-a-redirection"],
        SPELLINGS,
    ),
    **dict.fromkeys(["doc-git-c-alias", "doc-git-exec-path"],
                    "`Bash(git *)` does not cover `git -c` or `--exec-path`"),
    **dict.fromkeys(["rule-Glob-rule-deny", "rule-Write-rule-allow", "rule-Write-rule-deny"],
                    "`Write(path)` and `Glob(path)` rules are refused at start-up"),
    "rule-allow-Bash(npm test)-npm  test": "extra spaces between words change nothing",
    **dict.fromkeys(
        ["doc-plan-command", "doc-plan-write", "rule-allow-Edit-plan", "edit-allow-Edit-plan",
         "edit-mode-plan-home", "edit-mode-plan-inside", "edit-mode-plan-outside",
         *(f"mode-plan-{call}" for call in PLANNED)],
        "plan mode denies an edit or a command no rule allows",
    ),
    "rule-bare-Read-deny-cat": "a bare `Read` deny also stops commands that read files",
}  # fmt: skip
"""Scenarios where claw deliberately decides otherwise, and the words the chapter 13 page's
table of differences uses for each (several scenarios share a row)."""

GROUPS = ["doc", "mode", "rule", "compound", "wrapper", "redirect", "readonly", "flags",
          "webfetch", "edit"]  # fmt: skip
"""The sections of the table (a scenario's name starts with its section)."""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch folder claw decides in: ``project``, ``home`` and ``outside`` (deciding
    never writes, so one serves every scenario)."""
    folder = tmp_path_factory.mktemp("oracle")
    for name in ("project", "home", "outside"):
        (folder / name).mkdir()
    return folder


@pytest.mark.parametrize("group", GROUPS)
def test_permissions_oracle_claw_decides_as_claude_code(group: str, base: Path) -> None:
    """Every recorded scenario of ``group``: claw decides as Claude Code did, or it is a listed
    difference that still holds; a failure names each scenario that does not."""
    scenarios = recording()
    assert len(scenarios) >= 300
    assert {name.split("-")[0] for name in scenarios} == set(GROUPS), "a section nobody checks"
    mine = {name: s for name, s in scenarios.items() if name.split("-")[0] == group}
    assert mine, f"no recorded scenario in {group!r}"
    wrong = []
    for name, scenario in mine.items():
        decided = claw_decides(scenario, base)
        if name in DIFFERENCES:
            if decided == scenario["decision"]:
                wrong.append(
                    f"{name}: claw now decides {decided} as Claude Code does: not a "
                    f"difference any more (remove it from DIFFERENCES and the page)"
                )
        elif decided != scenario["decision"]:
            wrong.append(f"{name}: claw {decided}, Claude Code {scenario['decision']}")
    assert not wrong, "\n".join(wrong)

