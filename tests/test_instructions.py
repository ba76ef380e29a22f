"""ch08 · The system prompt's sections and the project instructions that follow it.

No test reads the real clock, the real home directory or the git repository the suite runs in:
the date and the git facts are injected (an ``Environment`` built by hand), and instruction
files live in ``tmp_path`` trees with a ``.git`` directory (or file) marking the root. One test
runs the real ``git`` in a fresh repository under ``tmp_path``.
"""

import datetime
import os
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw.agent import SimpleAgent
from claw.instructions import (
    MAX_FILE_CHARS,
    PREAMBLE,
    InstructionFile,
    discover_instructions,
    format_instructions,
    instruction_directories,
    keep_developer_role,
    load_instructions,
    read_instruction_file,
    repository_root,
)
from claw.mock import MockProvider
from claw.prompt import (
    IDENTITY,
    MAX_STATUS_LINES,
    NO_TOOLS,
    TOOL_GUIDANCE,
    Environment,
    GitFacts,
    capped_status,
    environment_section,
    gather_environment,
    identity_section,
    opening_messages,
    section,
    system_prompt,
    tool_section,
)
from claw.providers.openrouter import OpenRouterProvider
from claw.types import (
    CacheControl,
    DeveloperMessage,
    Message,
    SystemMessage,
    ToolDefinition,
    UserMessage,
)
from clawbook.harness.loopback import MODEL, JSONReply, LoopbackServer, completion

DAY = datetime.date(2026, 3, 14)
READ = ToolDefinition(name="read", description="Read a file.").param("path", "string", "The file.")
BASH = ToolDefinition(name="bash", description="Run a command.").param(
    "command", "string", "The command."
)


def environment(git: GitFacts | None = None, cwd: str = "/work/shop") -> Environment:
    """Injected facts: a fixed date and platform, and whatever git facts the test wants."""
    return Environment(working_directory=Path(cwd), platform="Linux", today=DAY, git=git)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def repo(tmp_path: Path) -> Path:
    """A repository root (``.git`` directory) inside ``tmp_path``, one level down."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


# --- sections ---------------------------------------------------------------------------


def test_instructions_a_section_is_a_heading_a_blank_line_and_the_body():
    assert section("Notes", "Use pytest.") == "## Notes\n\nUse pytest."
    # Blank lines around the body go; indentation inside it stays.
    assert section("Notes", "\n\n  - one\n  - two\n\n") == "## Notes\n\n  - one\n  - two"


def test_instructions_the_identity_section_says_who_the_model_is():
    text = identity_section()
    assert text == f"## Identity\n\n{IDENTITY}"
    assert "You are claw" in text


def test_instructions_the_tool_section_names_every_tool_in_order():
    text = tool_section([READ, BASH])
    assert text.startswith("## Tools\n\n")
    assert "You can call these tools: `read`, `bash`." in text
    assert text.endswith(TOOL_GUIDANCE)
    assert tool_section([BASH, READ]).count("`bash`, `read`") == 1


def test_instructions_the_tool_section_without_tools_says_there_are_none():
    assert tool_section([]) == f"## Tools\n\n{NO_TOOLS}"
    assert TOOL_GUIDANCE not in tool_section([])


def test_instructions_the_environment_section_in_a_repository():
    facts = GitFacts(branch="fix-login", status=(" M app.py", "?? notes.txt"))
    assert environment_section(environment(facts)) == (
        "## Environment\n\n"
        "Working directory: /work/shop\n"
        "Platform: Linux\n"
        "Today's date: 2026-03-14\n"
        "Git repository: yes\n"
        "Current branch: fix-login\n"
        "Git status (short):\n"
        " M app.py\n"
        "?? notes.txt"
    )


def test_instructions_the_environment_section_outside_a_repository():
    text = environment_section(environment(None))
    assert text.startswith("## Environment\n\nWorking directory: /work/shop\n")
    assert text.endswith("Today's date: 2026-03-14\nGit repository: no")
    assert "branch" not in text


def test_instructions_unknown_branch_and_status_say_unknown_and_a_clean_tree_says_clean():
    unknown = environment_section(environment(GitFacts(branch=None, status=None)))
    assert unknown.endswith("Current branch: unknown\nGit status: unknown")
    clean = environment_section(environment(GitFacts(branch="main", status=())))
    assert clean.endswith("Current branch: main\nGit status: clean")


@given(st.integers(min_value=0, max_value=40), st.integers(min_value=1, max_value=15))
def test_instructions_git_status_is_capped_and_the_rest_counted(count, limit):
    lines = [f" M file{i}.py" for i in range(count)]
    shown = capped_status(lines, limit)
    if count <= limit:
        assert shown == lines
    else:
        assert shown == [*lines[:limit], f"... and {count - limit} more"]


def test_instructions_the_environment_section_caps_a_long_status():
    facts = GitFacts(branch="main", status=tuple(f"?? new{i}.txt" for i in range(25)))
    text = environment_section(environment(facts))
    assert f"?? new{MAX_STATUS_LINES - 1}.txt" in text
    assert f"?? new{MAX_STATUS_LINES}.txt" not in text
    assert text.endswith(f"... and {25 - MAX_STATUS_LINES} more")
    # Another limit, passed in: the section caps at it.
    three = environment_section(environment(facts), max_status_lines=3)
    assert three.endswith(
        "Git status (short):\n?? new0.txt\n?? new1.txt\n?? new2.txt\n... and 22 more"
    )


def test_instructions_the_system_prompt_puts_the_stable_sections_first():
    tools = [READ, BASH]
    facts = environment(GitFacts("main", ()))
    first = system_prompt(facts, tools)
    assert first == "\n\n".join(
        [identity_section(), tool_section(tools), environment_section(facts)]
    )
    # Another day, another branch: only the end of the prompt differs, so a cached prefix holds.
    later = system_prompt(
        Environment(Path("/work/shop"), "Linux", DAY + datetime.timedelta(days=1), None), tools
    )
    stable = identity_section() + "\n\n" + tool_section(tools)
    assert first.startswith(stable) and later.startswith(stable)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_instructions_gathered_facts_come_from_a_real_repository(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    run = {"cwd": work, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "trunk"], **run)
    write(work / "a.txt", "a\n")
    facts = gather_environment(work, today=DAY)
    assert facts.git == GitFacts(branch="trunk", status=("?? a.txt",))
    lines = environment_section(facts).splitlines()
    assert lines[-4:] == [
        "Git repository: yes",
        "Current branch: trunk",
        "Git status (short):",
        "?? a.txt",
    ]
    outside = tmp_path / "plain"
    outside.mkdir()
    assert environment_section(gather_environment(outside, today=DAY)).endswith(
        "Git repository: no"
    )


def test_instructions_outside_a_repository_git_is_not_even_started(tmp_path, monkeypatch):
    # claw starts in many folders that are no repository (a test suite, hundreds of times):
    # with no .git in the folder or above it, and no GIT_DIR, git cannot find one.
    started: list[list[str]] = []

    def run(arguments, **_):
        started.append(arguments)
        return subprocess.CompletedProcess(arguments, 0, "true\n", "")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.delenv("GIT_DIR", raising=False)
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    assert gather_environment(plain, today=DAY).git is None
    assert started == []
    write(tmp_path / "plain" / ".git", "gitdir: elsewhere\n")  # a worktree's .git file, above
    assert gather_environment(plain, today=DAY).git is not None
    assert started[0] == ["git", "rev-parse", "--is-inside-work-tree"]
    (tmp_path / "plain" / ".git").unlink()
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))  # git looks there instead
    started.clear()
    assert gather_environment(plain, today=DAY).git is not None
    assert started[0][:2] == ["git", "rev-parse"]


# --- discovery ---------------------------------------------------------------------------


def test_instructions_the_repository_root_is_the_nearest_directory_with_git(tmp_path):
    root = repo(tmp_path)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    assert repository_root(deep) == root
    assert repository_root(root) == root
    # A worktree or submodule has a .git *file*: its directory is a root too.
    write(root / "src" / ".git", "gitdir: ../.git/worktrees/src\n")
    assert repository_root(deep) == root / "src"
    assert repository_root(tmp_path) is None


def test_instructions_files_are_found_from_the_root_down_and_not_above_it(tmp_path):
    root = repo(tmp_path)
    above = write(tmp_path / "AGENTS.md", "Instructions of another project.")
    cwd = root / "api" / "v2"
    cwd.mkdir(parents=True)
    expected = [
        write(root / "AGENTS.md", "root agents"),
        write(root / "CLAUDE.md", "root claude"),
        write(root / "api" / "AGENTS.md", "api agents"),
        write(cwd / "CLAUDE.md", "v2 claude"),
    ]
    write(root / "web" / "AGENTS.md", "a sibling directory: not on the way up")
    assert instruction_directories(cwd) == [root, root / "api", cwd]
    assert discover_instructions(cwd) == expected
    assert above not in discover_instructions(cwd)


def test_instructions_outside_a_repository_only_the_working_directory_is_read(tmp_path):
    write(tmp_path / "AGENTS.md", "a parent of a folder that is not a repository")
    cwd = tmp_path / "scratch"
    here = write(cwd / "AGENTS.md", "here")
    assert instruction_directories(cwd) == [cwd]
    assert discover_instructions(cwd) == [here]


def test_instructions_the_user_file_comes_first_and_a_missing_one_is_skipped(tmp_path):
    root = repo(tmp_path)
    mine = write(tmp_path / "home" / ".claw" / "AGENTS.md", "I like short answers.")
    project = write(root / "AGENTS.md", "Use pytest.")
    assert discover_instructions(root, user_file=mine) == [mine, project]
    missing = tmp_path / "home" / ".claw" / "CLAUDE.md"
    assert discover_instructions(root, user_file=missing) == [project]


# --- reading and merging -----------------------------------------------------------------


def test_instructions_each_file_is_labelled_with_its_path_in_merge_order(tmp_path):
    root = repo(tmp_path)
    write(root / "AGENTS.md", "Use pytest.\n")
    write(root / "CLAUDE.md", "Write the docs in LaTeX\n\n")
    message = load_instructions(root)
    assert isinstance(message, DeveloperMessage)
    assert message.text == (
        f"{PREAMBLE}\n\n"
        f'<instructions path="{root / "AGENTS.md"}">\nUse pytest.\n</instructions>\n\n'
        f'<instructions path="{root / "CLAUDE.md"}">\nWrite the docs in LaTeX\n'
        "</instructions>"
    )
    # Only the trailing newlines go: spaces at either end of the text stay as written.
    spaced = InstructionFile(root / "notes.md", "  Indented.\nA line break follows:  \n")
    assert format_instructions([spaced]).endswith(
        f'<instructions path="{root / "notes.md"}">\n'
        "  Indented.\nA line break follows:  \n</instructions>"
    )


def test_instructions_load_instructions_cuts_each_file_at_its_limit_and_warns(tmp_path):
    root = repo(tmp_path)
    write(root / "AGENTS.md", "Use pytest for every test.\n")
    warnings: list[str] = []
    message = load_instructions(root, max_file_chars=10, warn=warnings.append)
    note = f"cut {root / 'AGENTS.md'} to its first 10 characters (the limit for one file)"
    assert warnings == [note]
    assert message is not None
    assert message.text.endswith(f"\nUse pytest\n[{note}]\n</instructions>")


def test_instructions_a_long_file_is_cut_with_a_note_saying_how_much_and_where(tmp_path):
    path = write(tmp_path / "AGENTS.md", "x" * 1_500 + "END")
    read = read_instruction_file(path, max_chars=1_000)
    assert read.path == path
    assert read.text == "x" * 1_000
    assert read.note == f"cut {path} to its first 1,000 characters (the limit for one file)"
    whole = read_instruction_file(path, max_chars=1_503)
    assert (whole.text, whole.note) == ("x" * 1_500 + "END", None)
    text = format_instructions([read])
    assert text.endswith(f"{'x' * 1_000}\n[{read.note}]\n</instructions>")
    assert MAX_FILE_CHARS == 20_000


def test_instructions_a_cut_never_splits_a_character_and_a_long_file_is_cut_by_characters(
    tmp_path,
):
    path = write(tmp_path / "AGENTS.md", "é" * 30 + "🦀" * 30)  # 2 and 4 bytes a character
    assert read_instruction_file(path, max_chars=90).note is None
    read = read_instruction_file(path, max_chars=45)
    assert read.text == "é" * 30 + "🦀" * 15
    assert read.note == f"cut {path} to its first 45 characters (the limit for one file)"


def test_instructions_only_the_start_of_a_huge_file_is_read(tmp_path):
    huge = tmp_path / "AGENTS.md"
    with huge.open("wb") as file:  # 64 MiB of NUL bytes (valid UTF-8), without using the disk
        file.truncate(64 * 2**20)
    tracemalloc.start()
    try:
        read = read_instruction_file(huge, max_chars=1_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"reading the start of a 64 MiB file took {peak:,} bytes"
    assert read.text == "\0" * 1_000
    assert read.note == f"cut {huge} to its first 1,000 characters (the limit for one file)"


def test_instructions_a_link_out_of_the_repository_is_left_out_with_a_warning(tmp_path):
    # What this process's environment block holds (where claw's OPENROUTER_API_KEY would be).
    variables = Path("/proc/self/environ").read_bytes().decode(errors="replace").split("\0")
    root = repo(tmp_path)
    outside = write(tmp_path / "elsewhere" / "notes.md", "a private note")
    (root / "AGENTS.md").symlink_to("/proc/self/environ")
    (root / "CLAUDE.md").symlink_to(outside)
    write(root / "docs" / "rules.md", "Use pytest.")
    (root / "docs" / "AGENTS.md").symlink_to(root / "docs" / "rules.md")  # inside: read
    warnings: list[str] = []

    message = load_instructions(root / "docs", warn=warnings.append)

    assert message is not None
    assert not [variable for variable in variables if variable and variable in message.text]
    assert "a private note" not in message.text
    assert "Use pytest." in message.text
    environ = Path("/proc/self/environ").resolve()
    assert warnings == [
        f"{root / 'AGENTS.md'} leads to {environ}, outside the project {root}; left out",
        f"{root / 'CLAUDE.md'} leads to {outside}, outside the project {root}; left out",
    ]
    # Each file left out is a block of its own: its path, no text, the note.
    for name, warning in zip(["AGENTS.md", "CLAUDE.md"], warnings, strict=True):
        block = f'<instructions path="{root / name}">\n[{warning}]\n</instructions>'
        assert block in message.text


def test_instructions_the_users_own_file_may_be_a_link_anywhere(tmp_path):
    root = repo(tmp_path)
    dotfiles = write(tmp_path / "dotfiles" / "AGENTS.md", "Answer in French.")
    user_file = tmp_path / "home" / ".claw" / "AGENTS.md"
    user_file.parent.mkdir(parents=True)
    user_file.symlink_to(dotfiles)
    message = load_instructions(root, user_file=user_file)
    assert message is not None and "Answer in French." in message.text
    assert os.path.islink(user_file)


def test_instructions_a_file_that_is_not_utf8_or_not_readable_gives_a_note(tmp_path):
    root = repo(tmp_path)
    bad = root / "CLAUDE.md"
    bad.write_bytes(b"Use pytest.\n\xff\xfe caf\xe9\n")
    write(root / "AGENTS.md", "Use ruff.")
    message = load_instructions(root)
    assert message is not None
    note = f"{bad} is not UTF-8 text (bad byte at offset 12); left out"
    assert f'<instructions path="{bad}">\n[{note}]\n</instructions>' in message.text
    assert "Use ruff." in message.text and "caf" not in message.text
    folder = read_instruction_file(tmp_path)  # a directory cannot be read as a file
    assert (folder.path, folder.text) == (tmp_path, "")
    with pytest.raises(OSError) as error:  # what the system says when opening it
        tmp_path.open("rb")
    assert folder.note == f"{tmp_path} could not be read ({error.value.strerror})"


def test_instructions_no_files_means_no_developer_message(tmp_path):
    root = repo(tmp_path)
    (root / "AGENTS.md").mkdir()  # a directory with the name is not a file
    assert load_instructions(root, user_file=tmp_path / "missing.md") is None
    messages = opening_messages(environment(), [READ], load_instructions(root))
    assert [type(m) for m in messages] == [SystemMessage]


def test_instructions_opening_messages_are_the_prompt_then_the_instructions():
    notes = DeveloperMessage(content="Use pytest.")
    facts = environment(GitFacts("main", ()))
    messages = opening_messages(facts, [READ], notes)
    assert messages == [SystemMessage(content=system_prompt(facts, [READ])), notes]
    mark = CacheControl()
    marked = opening_messages(facts, [READ], notes, cache_control=mark)
    assert [m.cache_control for m in marked] == [mark, mark]
    assert marked[1].text == "Use pytest."


# --- the wire and the agent ---------------------------------------------------------------


def test_instructions_keep_developer_role_changes_only_developer_messages():
    messages: list[Message] = [
        SystemMessage(content="s"),
        DeveloperMessage(content="d"),
        UserMessage(content="u"),
    ]
    wire = [
        {"role": "system", "content": "s"},
        {"role": "system", "content": "d"},
        {"role": "user", "content": "u"},
    ]
    assert keep_developer_role(messages, wire) == [
        {"role": "system", "content": "s"},
        {"role": "developer", "content": "d"},
        {"role": "user", "content": "u"},
    ]
    assert wire[1]["role"] == "system"  # the caller's list is left as it was
    with pytest.raises(ValueError):
        keep_developer_role(messages, wire[:2])


async def test_instructions_openrouter_sends_the_developer_role_only_when_asked(server):
    conversation: list[Message] = [
        SystemMessage(content="You are claw."),
        DeveloperMessage(content="Use pytest."),
        UserMessage(content="hi"),
    ]

    async def roles(server: LoopbackServer, **options: bool) -> list[str]:
        server.add(JSONReply(completion("ok")))
        async with OpenRouterProvider(
            MODEL, base_url=server.base_url, api_key="", **options
        ) as provider:
            await provider.complete(conversation, [])
        return [message["role"] for message in server.requests[-1].json["messages"]]

    assert await roles(server, developer_role=True) == ["system", "developer", "user"]
    assert await roles(server, developer_role=False) == ["system", "system", "user"]
    assert await roles(server) == ["system", "system", "user"]


async def test_instructions_an_agent_sends_the_prompt_and_one_developer_message(tmp_path):
    root = repo(tmp_path)
    write(root / "AGENTS.md", "Run the tests with pytest.")
    cwd = root / "billing"
    write(cwd / "AGENTS.md", "Money is integer cents.")
    facts = environment(GitFacts("main", ()), cwd=str(cwd))
    context = opening_messages(facts, [READ], load_instructions(cwd))
    provider = MockProvider(["Done."])
    agent = SimpleAgent(provider, context=context)
    await agent.run("Add a refund function.")
    sent = provider.calls[0].messages
    assert [m.role for m in sent] == ["system", "developer", "user"]
    assert sent[0].text == system_prompt(facts, [READ])
    developer = sent[1].text
    root_label = f'<instructions path="{root / "AGENTS.md"}">'
    cwd_label = f'<instructions path="{cwd / "AGENTS.md"}">'
    assert root_label in developer and cwd_label in developer
    assert developer.index(root_label) < developer.index("Run the tests with pytest.")
    assert developer.index("Run the tests with pytest.") < developer.index(cwd_label)
    assert developer.index(cwd_label) < developer.index("Money is integer cents.")
