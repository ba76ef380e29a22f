"""ch21 · Skills: ``SKILL.md`` files listed in the prompt, loaded by the ``skill`` tool.

Front matter read with PyYAML; bad front matter a warning naming the file; the project's
skills before the user's; the prompt's section (names and descriptions only); the body and
the files beside it loaded on request; nothing read from outside a skill's folder; and the
``claw`` agent's prompt, with a project's skills left out of an untrusted folder.
"""

import os
from pathlib import Path

import pytest
from claw_command import calls, run_claw, says, tool_results

from claw.assemble import build_agent
from claw.skills import (
    SKILLS_INTRO,
    Skill,
    SkillError,
    SkillTool,
    discover_skills,
    parse_skill,
    skill_roots,
    skills_section,
    split_front_matter,
)
from claw.streaming import MockStreamProvider
from claw.tools.ask import ScriptedAnswers
from claw.types import SystemMessage
from clawbook.harness.loopback import LoopbackServer

BODY = "# Releasing\n\n1. Bump the version.\n2. Run `make release`.\n"


def write_skill(root: Path, folder: str, front: str, body: str = BODY) -> Path:
    path = root / ".claw" / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}")
    return path


def good(root: Path, name: str, description: str = "How to cut a release.") -> Path:
    return write_skill(root, name, f"name: {name}\ndescription: {description}\n")


def test_skills_split_front_matter_from_the_body() -> None:
    assert split_front_matter("---\nname: a\n---\nbody\n") == ("name: a\n", "body\n")
    assert split_front_matter("---  \r\nname: a\r\n--- \r\n# B\r\n") == ("name: a\r\n", "# B\r\n")
    assert split_front_matter("---\n---\n") == ("", "")
    assert split_front_matter("\ufeff---\nname: a\n---\nbody\n") == ("name: a\n", "body\n")
    with pytest.raises(SkillError, match="the first line must be ---"):
        split_front_matter("")
    with pytest.raises(SkillError, match="the first line must be ---"):
        split_front_matter("name: a\n---\n")
    with pytest.raises(SkillError, match="the front matter is not closed"):
        split_front_matter("---\nname: a\n")


def test_skills_parse_reads_name_and_description_with_yaml(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path,
        "release-notes",
        "name: release-notes\ndescription: >\n  Write the release notes\n  from the git log.\n"
        'allowed-tools: [Read, Grep]\nmetadata: {version: "1.0"}\n',
    )

    skill = parse_skill(path)

    assert skill == Skill("release-notes", "Write the release notes from the git log.", path)
    assert skill.folder == path.parent

    # the limits are "at most": a name of 64 characters, a description of 1024 and a file of
    # exactly 256,000 bytes are all read
    name = "a" * 64
    front = f"name: {name}\ndescription: {'d' * 1024}\n"
    largest = write_skill(tmp_path, name, front, "")
    largest.write_text(largest.read_text() + "x" * (256_000 - largest.stat().st_size))
    assert largest.stat().st_size == 256_000
    assert parse_skill(largest) == Skill(name, "d" * 1024, largest)


@pytest.mark.parametrize(
    ("folder", "front", "problem"),
    [
        ("a", "name: a\ndescription: [unclosed\n", "the front matter is not valid YAML"),
        ("b", "- name\n- description\n", "must be a mapping"),
        ("c", "name: C_Skill\ndescription: x\n", "name must be lowercase letters"),
        ("d", "name: other\ndescription: x\n", "differs from its folder's name 'd'"),
        ("e", "name: e\n", "description is missing or empty"),
        ("f", "name: f\ndescription: '   '\n", "description is missing or empty"),
        ("g", "name: g\ndescription: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
        ("h", f"name: h\ndescription: {'x' * 1025}\n", "longer than 1024"),
        ("i", "name: i--j\ndescription: x\n", "name must be lowercase letters"),
        # a name too long is quoted cut to 66 characters; a name that is no string, by its type
        ("j", f"name: {'j' * 65}\ndescription: x\n", f"not '{'j' * 65}; the skill is left out"),
        ("k", f"name: {'k' * 200}\ndescription: x\n", f"not '{'k' * 65}; the skill is left out"),
        ("m", "name: 42\ndescription: x\n", "at most 64 characters, not int;"),
    ],
)
def test_skills_bad_front_matter_is_a_warning_naming_the_file(
    tmp_path: Path, folder: str, front: str, problem: str
) -> None:
    bad = write_skill(tmp_path, folder, front)
    good(tmp_path, "release")
    warnings: list[str] = []

    found = discover_skills([tmp_path / ".claw" / "skills"], warn=warnings.append)

    assert [skill.name for skill in found] == ["release"]
    [warning] = warnings
    assert warning.startswith(f"{bad}: ")
    assert problem in warning
    assert warning.endswith("; the skill is left out")


def test_skills_without_front_matter_or_unreadable_are_warnings_too(tmp_path: Path) -> None:
    folder = tmp_path / ".claw" / "skills"
    (folder / "plain").mkdir(parents=True)
    (folder / "plain" / "SKILL.md").write_text("# Just Markdown\n")
    (folder / "binary").mkdir()
    (folder / "binary" / "SKILL.md").write_bytes(b"---\nname: binary\n\xff\xfe---\n")
    (folder / "no-skill-file").mkdir()
    (folder / "loose.md").write_text("---\nname: loose\ndescription: x\n---\n")
    warnings: list[str] = []

    assert discover_skills([folder, tmp_path / "missing"], warn=warnings.append) == []
    binary, plain = sorted(warnings)
    assert binary.startswith(f"{folder / 'binary' / 'SKILL.md'}: cannot read it: ")
    assert plain == (
        f"{folder / 'plain' / 'SKILL.md'}: no front matter: the first line must be ---; "
        "the skill is left out"
    )


def test_skills_the_projects_come_first_and_win_a_name(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    good(project, "release", "The project's way.")
    good(home, "release", "My own way.")
    good(home, "bisect", "Find the commit that broke it.")

    found = discover_skills(skill_roots(project, home))
    untrusted = discover_skills(skill_roots(project, home, project=False))
    no_folder = discover_skills(skill_roots(tmp_path / "other", home))  # no .claw/skills there

    assert [(s.name, s.description) for s in found] == [
        ("bisect", "Find the commit that broke it."),
        ("release", "The project's way."),
    ]
    assert [(s.name, s.description) for s in untrusted] == [
        ("bisect", "Find the commit that broke it."),
        ("release", "My own way."),
    ]
    assert no_folder == untrusted


def test_skills_section_lists_names_and_descriptions_only(tmp_path: Path) -> None:
    skills = [
        parse_skill(good(tmp_path, "bisect", "Find the commit that broke it.")),
        parse_skill(good(tmp_path, "release")),
    ]

    text = skills_section(skills)

    assert text == (
        f"## Skills\n\n{SKILLS_INTRO}\n"
        "- `bisect`: Find the commit that broke it.\n"
        "- `release`: How to cut a release."
    )
    assert "make release" not in text  # the body waits for the skill tool
    assert skills_section([]) == ""


async def test_skills_tool_loads_the_body_with_its_folder_and_files_only_when_asked(
    tmp_path: Path,
) -> None:
    path = good(tmp_path, "release")
    (path.parent / "checklist.md").write_text("- [ ] changelog\n")
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "bump.py").write_text("print('bump')\n")
    tool = SkillTool(discover_skills([tmp_path / ".claw" / "skills"]))

    loaded = await tool.run({"name": "release"})
    beside = await tool.run({"name": "release", "file": "scripts/bump.py"})

    assert not loaded.is_error
    assert loaded.content == (
        f"Skill release (folder: {path.parent})\n"
        "Files beside it (read them with file=...): checklist.md, scripts/bump.py\n\n"
        + BODY.strip()
    )
    assert (beside.is_error, beside.content) == (False, "print('bump')\n")
    assert tool.read_only is True
    alone = SkillTool([parse_skill(good(tmp_path, "bisect"))])
    lines = (await alone.run({"name": "bisect"})).content.splitlines()
    assert lines[1] == "Files beside it (read them with file=...): none"


async def test_skills_tool_never_reads_outside_the_skills_folder(tmp_path: Path) -> None:
    path = good(tmp_path, "release")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    os.symlink(secret, path.parent / "link.md")
    tool = SkillTool([parse_skill(path)])

    for name, file in [
        ("release", "../../../../secret.txt"),
        ("release", str(secret)),
        ("release", "link.md"),
        ("release", "."),
        ("release", "missing.md"),
        ("../../../secret.txt", None),
        ("nope", None),
    ]:
        arguments = {"name": name} if file is None else {"name": name, "file": file}
        output = await tool.run(arguments)
        assert output.is_error, (name, file)
        assert "hunter2" not in output.content
    unknown = await tool.run({"name": "nope"})
    assert unknown.content == "no skill named 'nope'; the skills are: release"
    outside = await tool.run({"name": "release", "file": "../../../../secret.txt"})
    assert outside.content == "'../../../../secret.txt' is not a file inside the skill 'release'"


def test_skills_claw_agent_lists_them_in_its_prompt_and_trust_decides_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(home / ".claw"))  # your skills: in claw's folder
    good(home, "bisect", "Find the commit that broke it.")
    good(project, "release")
    write_skill(project, "broken", "name: [\n")
    warnings: list[str] = []
    provider = MockStreamProvider()

    trusted = build_agent(provider, project, ask=ScriptedAnswers([]), warn=warnings.append)  # type: ignore[arg-type]
    untrusted = build_agent(provider, project, instructions=False, ask=ScriptedAnswers([]))  # type: ignore[arg-type]

    system = trusted.history[0]
    assert isinstance(system, SystemMessage)
    assert system.content.endswith(skills_section(discover_skills(skill_roots(project, home))))
    assert "- `release`: How to cut a release." in system.content
    assert "make release" not in system.content
    assert {"task", "skill"} <= set(trusted.tools.names)
    assert (
        [w for w in warnings if "SKILL.md" in w]
        == [w for w in warnings if w.startswith(str(project / ".claw/skills/broken/SKILL.md"))]
        != []
    )
    other = untrusted.history[0]
    assert isinstance(other, SystemMessage) and "`release`" not in other.content
    assert "- `bisect`: Find the commit that broke it." in other.content


def test_skills_claw_command_loads_a_skill_the_model_asks_for(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(tmp_path / "home" / ".claw"))  # claw's own folder
    good(tmp_path / "home", "release")
    project = tmp_path / "project"
    project.mkdir()
    server.add(calls("skill", {"name": "release"}), says("Bump, then make release."))

    status = run_claw(server, project, monkeypatch, "Cut a release.")

    assert status == 0
    system = server.requests[0].json["messages"][0]["content"]
    assert "- `release`: How to cut a release." in system and "make release" not in system
    [loaded] = tool_results(server)
    assert "2. Run `make release`." in loaded
