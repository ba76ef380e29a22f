"""ch27 · In a git repository: bash's changes are covered too, and the user's git is untouched.

The repositories are real (``git init`` in a temporary folder); the snapshots are made by
claw's ``Checkpoints`` as each prompt starts, and bash is claw's own tool.
"""

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest
from budget import examples
from checkpointed import Workspace, git, tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BINARY = bytes([0, 1, 2, 255, 254, 13, 10]) * 3
CRLF = b"left\r\nright\r\n"


def repository(root: Path) -> None:
    """A repository with one commit: a tracked file, and a .gitignore that ignores ``*.log``."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("*.log\n")
    (root / "a.txt").write_bytes(CRLF)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")


def user_state(root: Path) -> dict[str, object]:
    """What the user's git is: index, HEAD, every ref but claw's, the stash and its log."""
    dot = root / ".git"
    refs = git(root, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    return {
        "index": (dot / "index").read_bytes(),
        "HEAD": (dot / "HEAD").read_bytes(),
        "refs": [ref for ref in refs if not ref.startswith("refs/claw/")],
        "stash": git(root, "stash", "list", "--format=%H %s"),
        "stash log": (dot / "logs" / "refs" / "stash").read_bytes(),
        "branch": git(root, "branch", "--show-current"),
    }


async def test_checkpoint_snapshots_and_rewinds_leave_the_users_git_untouched(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    repository(root)
    git(root, "branch", "feature")
    (root / "a.txt").write_text("stashed work\n")
    git(root, "stash", "push", "-q", "-m", "my stash")
    (root / "b.txt").write_text("staged\n")
    git(root, "add", "b.txt")
    (root / "b.txt").write_text("staged, then changed again\n")
    (root / "c.txt").write_text("untracked\n")
    space = Workspace(root, tmp_path / "sessions", git=True)
    before = user_state(root)
    found = tree(root)

    await space.prompt("Change things with the shell.")
    await space.call("bash", command="rm c.txt b.txt && printf 'new' > d.txt")
    await space.prompt("And again.")
    said = space.checkpoints.rewind(1, "code")

    assert tree(root) == found
    assert said.splitlines()[0] == "rewound the code to before prompt 1"
    assert user_state(root) == before
    log = git(root, "log", "--format=%s", "refs/claw/checkpoints/session-1").splitlines()
    assert log == [
        "claw checkpoint: prompt 2: And again.",
        "claw checkpoint: prompt 1: Change things with the shell.",
    ]


async def test_checkpoint_bash_changes_are_rewound_from_the_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repository(root)
    (root / "build.log").write_text("ignored, changed by write\n")
    (root / "bin.dat").write_bytes(BINARY)
    (root / "tracked.log").write_text("ignored, but tracked: in the snapshot\n")
    git(root, "add", "-f", "tracked.log")
    space = Workspace(root, tmp_path / "sessions", git=True)
    found = tree(root)

    await space.prompt("Shuffle the files.")
    await space.call(
        "bash",
        command="mv a.txt moved.txt && rm bin.dat && mkdir -p new && printf 'x\\r\\n' > new/x.txt"
        " && printf 'changed' > tracked.log",
    )
    await space.read("build.log")
    await space.call("write", path="build.log", content="replaced\n")
    said = space.checkpoints.rewind(1, "code")

    assert tree(root) == found
    assert said.splitlines() == [
        "rewound the code to before prompt 1",
        "  restored a.txt",
        "  restored bin.dat",
        "  restored build.log",
        "  removed moved.txt",
        "  removed new/x.txt",
        "  restored tracked.log",
    ]


async def test_checkpoint_git_decides_for_every_path_it_sees(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repository(root)
    (root / "huge.log").write_bytes(b"h" * 10_001)  # ignored, over the cap
    (root / "big.txt").write_bytes(b"b" * 10_001)  # over the cap, but git sees it
    space = Workspace(root, tmp_path / "sessions", git=True, limit=10_000)
    found = tree(root)

    await space.prompt("Churn.")
    await space.call("bash", command="printf 'made' > x.txt")  # after the snapshot
    await space.read("x.txt")
    await space.call("write", path="x.txt", content="changed\n")  # before-image: 'made'
    await space.call("bash", command="rm x.txt")  # absent then, absent now
    await space.call("bash", command="printf 'B' > a.txt")
    await space.read("a.txt")
    await space.call("write", path="a.txt", content="C\n")  # before-image: 'B'
    await space.call("bash", command="git show HEAD:a.txt > a.txt")  # back as it was
    for name in ("huge.log", "big.txt"):
        await space.read(name)
        await space.call("write", path=name, content="")
    said = space.checkpoints.rewind(1, "code")

    assert said.splitlines() == [
        "rewound the code to before prompt 1",
        "  restored big.txt",
        "  could not restore huge.log: it was over 10,000 bytes when it was changed, "
        "so no copy was kept",
    ]
    assert tree(root) == found | {"huge.log": b""}


async def test_checkpoint_a_snapshot_git_cannot_take_leaves_the_file_tools_covered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    repository(root)
    space = Workspace(root, tmp_path / "sessions", git=True)
    (root / ".git" / "index").write_bytes(b"not an index")  # git add refuses: CalledProcessError
    await space.prompt("One.")
    await space.call("write", path="one.txt", content="1\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # no git at all: OSError
    await space.prompt("Two.")
    await space.call("write", path="two.txt", content="2\n")

    said = space.checkpoints.rewind(1, "code")

    assert [prompt.commit for prompt in space.checkpoints.prompts] == [None, None]
    assert said.splitlines()[1:] == ["  removed one.txt", "  removed two.txt"]


NAMES = ["a.txt", "b.bin", "sub/c.txt", "notes.log"]
"""The files the property test changes (``notes.log`` is ignored by git)."""
CONTENTS = [CRLF, BINARY, b"", b"plain\n", b"no newline"]
SHELL_NAMES = NAMES[:3]
"""bash changes only files git sees: an ignored file bash changes is not covered (on the page)."""


def quoted(data: bytes) -> str:
    """``data`` as a printf format that prints exactly those bytes."""
    return "".join(f"\\{byte:03o}" for byte in data)


def change() -> st.SearchStrategy[tuple[str, ...]]:
    """One change, by a file tool or by bash: its kind and its arguments."""
    name, shell_name = st.sampled_from(NAMES), st.sampled_from(SHELL_NAMES)
    text = st.sampled_from(["one\r\ntwo\r\n", "text\n", ""])
    content = st.sampled_from(range(len(CONTENTS))).map(str)
    return st.one_of(
        st.tuples(st.just("write"), name, text),
        st.tuples(st.just("edit"), name),
        st.tuples(st.just("patch-delete"), name),
        st.tuples(st.just("patch-move"), name, name),
        st.tuples(st.just("bash-write"), shell_name, content),
        st.tuples(st.just("bash-rm"), shell_name),
        st.tuples(st.just("bash-mv"), shell_name, shell_name),
    )


async def make(space: Workspace, kind: str, *arguments: str) -> None:
    """Carry out one change (a tool may refuse it: then nothing changed, which is fine too)."""
    if kind == "write":
        await space.read(arguments[0])
        await space.call("write", path=arguments[0], content=arguments[1])
    elif kind == "edit":
        await space.read(arguments[0])
        await space.call("edit", path=arguments[0], old_string="t", new_string="T\r\n")
    elif kind == "patch-delete":
        patch = f"*** Begin Patch\n*** Delete File: {arguments[0]}\n*** End Patch"
        await space.call("apply_patch", patch=patch)
    elif kind == "patch-move":
        await space.read(arguments[0])
        patch = (
            f"*** Begin Patch\n*** Update File: {arguments[0]}\n*** Move to: {arguments[1]}\n"
            "@@\n-t\n+moved\n*** End Patch"
        )
        await space.call("apply_patch", patch=patch)
    elif kind == "bash-write":
        data = CONTENTS[int(arguments[1])]
        command = f"printf '{quoted(data)}' > {arguments[0]}"
        await space.call("bash", command=command)
    elif kind == "bash-rm":
        await space.call("bash", command=f"rm -f {arguments[0]}")
    else:
        await space.call("bash", command=f"mv {arguments[0]} {arguments[1]}")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The property test's starting repository, made once and copied for each example."""
    root = tmp_path_factory.mktemp("template") / "repo"
    repository(root)
    (root / "b.bin").write_bytes(BINARY)
    (root / "notes.log").write_bytes(CRLF)
    (root / "sub").mkdir()
    (root / "sub" / "keep.txt").write_text("the folder bash writes into\n")
    return root


@pytest.mark.timeout(120)  # 25 examples of a few git commands each, in CI on a busy machine
@settings(
    max_examples=examples(25),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    prompts=st.lists(st.lists(change(), min_size=1, max_size=2), min_size=1, max_size=3),
    data=st.data(),
)
def test_checkpoint_any_changes_then_a_rewind_give_back_the_tree_as_it_was(
    template: Path, prompts: list[list[tuple[str, ...]]], data: st.DataObject
) -> None:
    back_to = data.draw(st.integers(1, len(prompts)), label="rewind to prompt")

    async def scenario(folder: Path) -> None:
        root = folder / "repo"
        shutil.copytree(template, root, symlinks=True)
        space = Workspace(root, folder / "sessions", git=True)
        states = []
        for number, changes in enumerate(prompts, start=1):
            states.append(tree(root))
            await space.prompt(f"Prompt {number}.")
            for kind, *arguments in changes:
                await make(space, kind, *arguments)
        space.checkpoints.rewind(back_to, "code")
        assert tree(root) == states[back_to - 1]

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(scenario(Path(folder)))


@pytest.fixture(autouse=True)
def no_global_git_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The user's own git settings (a global hook path, a default branch) play no part."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
