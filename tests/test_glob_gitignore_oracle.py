"""Chapter 11's walk against real git: random trees, random ignore files, the same files.

git is the reference for what ``.gitignore`` means. Each example writes a random tree with
random nested ``.gitignore`` files (and, at times, ``.git/info/exclude`` and a global excludes
file), runs ``git ls-files --cached --others --exclude-standard`` in it, and asserts that
``ignore.walk`` yields the same files, less what claw skips by design (the chapter lists them:
``node_modules`` and other version-control folders, virtual environments). git is isolated from
the machine's configuration (``GIT_CONFIG_GLOBAL``, ``GIT_CONFIG_NOSYSTEM``, ``HOME``,
``XDG_CONFIG_HOME``), except where a test writes that configuration on purpose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from budget import examples
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from claw.tools.ignore import ALWAYS_SKIPPED, VENV_MARKER, walk

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed: it is the reference")

DIRS = ["a", "b", "logs", "src", "node_modules"]
NAMES = ["a", "b", "x.py", "y.log", "1", "logs", ".gitkeep", "a b", "ä.py", "t\t", "z ",
         VENV_MARKER]  # fmt: skip
IDIOMS = [
    "*", "!*/", "!*.py", "logs/**", "!logs/.gitkeep", "!logs/", "logs/", "foo\\", "!",
    "[z-a].txt", "[[:digit:]]*", "[[:alpha:]].py", "[[:nope:]]", "*.log", "!y.log", "/a",
    "a/", "**/b", "a/**/x.py", "src/*", "\\!x", "\\#x", "# a comment", "", "   ", "x.py\t",
    "z\\ ", "?.py", "[!a]", "[a-c]", "[]a]", "[^x]*", "**", "*/", "/*/x.py", "a b", "ä*",
    "??.py", "[a", "logs/*.log", "!/logs", "*.py/",
]
TOKENS = ["a", "b", "x", "logs", "src", "*", "**", "?", "/", "[a-c]", "[!b]", ".py", ".log",
          "[[:digit:]]", "\\", " ", "\t", "!"]  # fmt: skip

names = st.sampled_from(NAMES)
folders = st.lists(st.sampled_from(DIRS), max_size=3).map(tuple)
patterns = st.one_of(
    st.sampled_from(IDIOMS),
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=5).map("".join),
)
ignore_files = st.tuples(
    st.lists(patterns, max_size=6),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),  # a byte-order mark
)


def ignore_text(spec: tuple[list[str], str, bool]) -> bytes:
    """The bytes of an ignore file: its lines, its line ending, perhaps a byte-order mark."""
    lines, ending, bom = spec
    return (b"\xef\xbb\xbf" if bom else b"") + "".join(
        line + ending for line in lines
    ).encode()


@contextmanager
def isolated(home: Path) -> Iterator[dict[str, str]]:
    """An environment for git and claw alike that reads no configuration of this machine.

    Nor any template: ``git init`` copies none (no sample hooks: a third of the time of it).
    """
    saved = dict(os.environ)
    os.environ.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "xdg"),
        GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR="",
    )
    try:
        yield dict(os.environ)
    finally:
        os.environ.clear()
        os.environ.update(saved)


MEMORY = Path("/dev/shm")
"""A file system in memory (Linux), where the trees below are made and removed quickly."""


def scratch() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder, in memory where the system has one (``/dev/shm``).

    The trees of this module are thousands of files and folders that git and the walk only list:
    on a disk, making and removing them took seconds on a busy machine (and pytest removes an old
    run's temporary folders in a later run); in memory, a twentieth of that.
    """
    memory = MEMORY.is_dir() and os.access(MEMORY, os.W_OK | os.X_OK)
    return tempfile.TemporaryDirectory(prefix="claw-oracle-", dir=MEMORY if memory else None)


@pytest.fixture
def home() -> Iterator[Path]:
    """A test's own temporary folder for repositories and git's configuration (``scratch``)."""
    with scratch() as folder:
        yield Path(folder)


def git_files(root: Path) -> list[str]:
    """What git lists in ``root``: tracked and untracked files it does not ignore."""
    assert GIT is not None
    subprocess.run([GIT, "init", "-q", str(root)], check=True)
    return git_lists(root)


def skipped_by_design(root: Path, relative: str) -> bool:
    """Whether claw skips ``relative`` on purpose: under ``node_modules`` and friends, or
    under a virtual environment (a folder with a ``pyvenv.cfg``)."""
    parts = relative.split("/")[:-1]
    for depth, part in enumerate(parts, start=1):
        if part in ALWAYS_SKIPPED or (root.joinpath(*parts[:depth]) / VENV_MARKER).is_file():
            return True
    return False


def build(root: Path, files: list[tuple[tuple[str, ...], str]],
          gitignores: dict[tuple[str, ...], bytes]) -> None:  # fmt: skip
    """Write the files (empty) and the ``.gitignore`` files; a name that is a folder wins."""
    folders = [folder for folder, _ in files] + list(gitignores)
    folder_paths = {folder[:depth] for folder in folders for depth in range(len(folder) + 1)}
    for folder in folder_paths:
        root.joinpath(*folder).mkdir(parents=True, exist_ok=True)
    for folder, name in files:
        if (*folder, name) not in folder_paths:
            root.joinpath(*folder, name).write_bytes(b"")
    for folder, text in gitignores.items():
        root.joinpath(*folder, ".gitignore").write_bytes(text)


@needs_git
@pytest.mark.timeout(120)  # 40 examples, three git runs each: seconds on a busy machine
# No shrinking: each try starts git three times, and a search for a smaller failing tree took
# minutes; a failing tree is shown as found (at most 20 files and 3 ignore files).
@settings(max_examples=examples(40), deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(
    files=st.lists(st.tuples(folders, names), min_size=4, max_size=20),
    gitignores=st.dictionaries(folders, ignore_files.map(ignore_text), max_size=3),
    info_exclude=st.none() | ignore_files.map(ignore_text),
    global_excludes=st.none() | ignore_files.map(ignore_text),
)
def test_glob_walk_yields_exactly_the_files_git_lists(
    files, gitignores, info_exclude, global_excludes
):
    with scratch() as folder:
        home = Path(folder)
        root = home / "repo"
        root.mkdir()
        config = home / "gitconfig"
        config.write_text("")
        if global_excludes is not None:
            (home / "excludes").write_bytes(global_excludes)
            config.write_text(f"[core]\n\texcludesFile = {home / 'excludes'}\n")
        build(root, files, gitignores)
        with isolated(home):
            expected = [name for name in git_files(root) if not skipped_by_design(root, name)]
            if info_exclude is not None:
                (root / ".git" / "info").mkdir(exist_ok=True)
                (root / ".git" / "info" / "exclude").write_bytes(info_exclude)
                expected = [
                    name for name in git_lists(root) if not skipped_by_design(root, name)
                ]
            got = sorted(relative for relative, _ in walk(root))
        assert got == expected


@needs_git
@pytest.mark.parametrize("where", ["core.excludesFile", "XDG_CONFIG_HOME", "~/.config"])
def test_glob_walk_reads_the_global_excludes_file_where_git_does(home, where):
    root = home / "repo"
    for name in ("a.py", "b.swp", "c.bak", "d.orig"):
        (root / "src").mkdir(parents=True, exist_ok=True)
        (root / "src" / name).write_text("")
    (home / "gitconfig").write_text("")
    with isolated(home):
        if where == "core.excludesFile":
            (home / "mine").write_text("*.swp\n")
            (home / "gitconfig").write_text("[core]\n\texcludesFile = ~/mine\n")
        elif where == "XDG_CONFIG_HOME":
            (home / "xdg" / "git").mkdir(parents=True)
            (home / "xdg" / "git" / "ignore").write_text("*.bak\n")
        else:
            del os.environ["XDG_CONFIG_HOME"]
            (home / ".config" / "git").mkdir(parents=True)
            (home / ".config" / "git" / "ignore").write_text("*.orig\n")
        expected = git_files(root)
        (root / ".git" / "info").mkdir()
        (root / ".git" / "info" / "exclude").write_text("src/a.py\n")
        expected_with_info = git_files(root)
        got = sorted(relative for relative, _ in walk(root))
    assert len(expected) == 3
    assert got == expected_with_info == [name for name in expected if name != "src/a.py"]


@needs_git
def test_glob_walk_reads_the_excludes_file_a_repositorys_own_configuration_names(
    home, monkeypatch
):
    outside, elsewhere = home / "outside", home / "elsewhere"
    work, bare = home / "work", home / "bare.git"
    (home / "gitconfig").write_text("")
    (home / "mine").write_text("*.swp\n")
    asked = []
    run = subprocess.run

    def counted(command, *arguments, **options):
        if command[:2] == ["git", "config"]:
            asked.append(options.get("cwd"))
        return run(command, *arguments, **options)

    with isolated(home):
        subprocess.run([GIT, "init", "-q", str(work)], check=True)
        subprocess.run([GIT, "init", "-q", "--bare", str(bare)], check=True)
        # the work tree's names a file of its own (relative: git reads it from the top)
        subprocess.run([GIT, "config", "core.excludesFile", ".swp-rules"], cwd=work, check=True)
        (work / ".swp-rules").write_text("*.swp\n")
        subprocess.run([GIT, "config", "core.excludesFile", str(home / "mine")], cwd=bare,
                       check=True)  # fmt: skip
        for folder in (outside, elsewhere, work, bare / "notes"):
            folder.mkdir(exist_ok=True)
            for name in ("a.py", "b.swp"):
                (folder / name).write_text("")
        monkeypatch.setattr(subprocess, "run", counted)
        for folder in (outside, elsewhere):
            assert sorted(relative for relative, _ in walk(folder)) == ["a.py", "b.swp"]
        assert len(asked) == 1, "git is asked once for every folder outside a repository"
        # the folders outside a repository came first: their answer is not every folder's
        assert sorted(relative for relative, _ in walk(work)) == git_lists(work)
        assert git_lists(work) == [".swp-rules", "a.py"]
        assert [relative for relative, _ in walk(bare / "notes")] == ["a.py"]


IDIOM_CASES = {
    "whitelist": {".gitignore": b"*\n!*/\n!*.py\n", "a.py": b"", "b.txt": b"", "src/c.py": b""},
    "keep-file": {".gitignore": b"logs/**\n!logs/.gitkeep\n", "logs/.gitkeep": b"",
                  "logs/a.log": b"", "logs/x/y.log": b""},
    "folder-negation-below": {".gitignore": b"*.log\n", "sub/.gitignore": b"!logs/\n",
                              "sub/logs/a.log": b"", "sub/logs/b.txt": b""},
    "excluded-parent": {".gitignore": b"build/\n!build/keep.txt\n", "build/keep.txt": b"",
                        "a.txt": b""},
    "invalid-lines": {".gitignore": b"foo\\\n!\n[z-a].txt\n[[:nope:]]\n*.tmp\n", "foo": b"",
                      "z.txt": b"", "x.tmp": b"", "y": b""},
    "bom": {".gitignore": b"\xef\xbb\xbf*.tmp\n", "x.tmp": b"", "y": b""},
    "trailing-tab-and-spaces": {".gitignore": b"a\t\nb  \nc\\ \n", "a\t": b"", "a": b"",
                                "b": b"", "c ": b"", "c": b""},
    "posix-class": {".gitignore": b"[[:digit:]]*\n", "1a": b"", "a1": b""},
    "crlf": {".gitignore": b"*.tmp\r\n/x\r\n", "a.tmp": b"", "x": b""},
    "linked-gitignore": {"real-rules": b"*.tmp\n", "x.tmp": b"", "y": b""},
    "bytes-not-characters": {".gitignore": b"?.py\n", "ä.py": b"", "a.py": b""},
}  # fmt: skip
"""Named cases from the chapter: git decides, and the walk must agree."""


@pytest.fixture(scope="module")
def idioms() -> Iterator[tuple[Path, dict[str, list[str]]]]:
    """Each case of ``IDIOM_CASES`` in a folder of its own, all in one repository, and what git
    lists in each folder. One git run serves every case: a folder's rules reach no other."""
    assert GIT is not None
    with scratch() as folder:
        yield idiom_repository(Path(folder))


def idiom_repository(home: Path) -> tuple[Path, dict[str, list[str]]]:
    """``idioms`` in ``home``: the repository, and what git lists in each case's folder."""
    root = home / "repo"
    for case, files in IDIOM_CASES.items():
        for name, content in files.items():
            (root / case / name).parent.mkdir(parents=True, exist_ok=True)
            (root / case / name).write_bytes(content)
    (root / "linked-gitignore" / ".gitignore").symlink_to(root / "linked-gitignore" / "real-rules")
    (home / "gitconfig").write_text("")
    with isolated(home):
        listed = git_files(root)
    by_case = {case: [name.split("/", 1)[1] for name in listed if name.startswith(f"{case}/")]
               for case in IDIOM_CASES}  # fmt: skip
    return root, by_case


@needs_git
@pytest.mark.parametrize("case", sorted(IDIOM_CASES))
def test_glob_gitignore_idioms_and_odd_lines_match_git(idioms, case):
    root, listed = idioms
    with isolated(root.parent):
        got = sorted(relative for relative, _ in walk(root / case))
    assert got == listed[case]


WILDMATCH_LINES = [
    # sets: negation, a ] or - first, ranges (reversed, escaped ends), escapes, classes
    b"[!a]", b"[^a]", b"[ab]", b"[Xa]", b"[a-c-e]", b"[!]a]", b"[^]]", b"[]a]", b"[]-a]", b"[]]",
    b"[-a]", b"[a-]", b"[!-]",
    b"[!!]", b"[!^]", b"[^!]", b"[!a-y]", b"[a-c]", b"[c-a]", b"[a-a]", b"[\\]]", b"[a\\-c]",
    b"[a-\\c]", b"[\\a-c]", b"[Z-\\a]", b"[[:digit:]]", b"[![:digit:]]", b"[[:digit:]-z]",
    b"[[:digit:][:upper:]]", b"[[:alpha:]]", b"[[:alnum:]]", b"[[:punct:]]", b"[[:space:]]",
    b"[[:lower:]]", b"[[:xdigit:]]", b"[[:blank:]]", b"[[:graph:]]", b"[[:print:]]",
    b"[[:cntrl:]]", b"[[:nope:]]", b"[[:]]", b"[[::]]", b"[[:a]", b"[[:]", b"[[:a]b]", b"[[x]",
    b"[[]", b"[a[]", b"[]a[:digit:]]", b"[]a[:]", b"[a", b"[\\", b"[a\\", b"[a-", b"[a-\\",
    b"[!", b"[", b"[]", b"[!]", b"[[:digit:]", b"[[:digit:]b", b"x[!a]y", b"x[]a]y",
    b"/x[!a]y", b"/x[[:punct:]]y", b"/x[!z]y",
    # stars, question marks, escapes
    b"*.py", b"*a", b"a*", b"*a*", b"?", b"??", b"x?y", b"/x?y", b"/x*y", b"**", b"***", b"a**",
    b"**a", b"x**y", b"**/y", b"***/y", b"d/**", b"d/***", b"d/**/y", b"d/**/e/y", b"**/e/y",
    b"d/**/", b"d/**y", b"d**/y", b"**\\/y", b"d/**\\/y", b"d/e**", b"/d**", b"/x**y", b"/**/y",
    b"/**", b"x/**", b"d\\**/y", b"d*/**/y", b"d*a**/y", b"?**/y", b"dX**/y", b"d/*", b"d/*/y",
    b"*/y", b"d/?",
    b"\\**", b"\\*", b"\\?", b"\\[a]", b"x\\yz", b"\\a", b"a\\", b"\\", b"x\\", b"n?l",
    # spaces, comments, negations, folders only
    b"a ", b"a  ", b"a\\ ", b"a\\  ", b"a \\ ", b"   ", b" ", b"a\\ \\ ", b"a\t", b"a \t",
    b" a", b"#", b"#a", b"\\#", b"!", b"!a", b"*\n!a", b"*\n!d/", b"d/", b"e/", b"/d", b"d/e/",
    b"*\n!*/\n!y", b"\\!", b"!\\!",
]  # fmt: skip
"""One ignore file each (a line, or a few): sets, stars, escapes and spaces as git reads them."""

WILDMATCH_FILES = [
    *(bytes([c]) for c in b"abcyzAXZ05-][!^\\:*? _#\t"),  # x is a folder
    b"\xc3\xa9", b"[]", b":]", b"]a", b"a]", b"-a", b"a-", b"ab", b"ba", b"x.py", b"xpy",
    b"a b", b"xyz", b"xyzz", b"xay", b"xby", b"x-y", b"xzy", b"x!y", b"a ", b"a  ", b"a\t",
    b"a \t", b" a", b"a\\", b"n\nl", b"**", b"#a", b"!a",
    b"x/y", b"d/y", b"d/a", b"d/e/y", b"d/e/f/y", b"d/x.py", b"d/n\nl", b"d/e/n\nl", b"dy",
    b"dd/y", b"d/ey", b"e/y", b"day", b"dXy",
]  # fmt: skip
"""The files each ignore file above is tried on (``/`` makes folders)."""


def empty_files(paths: list[str], blank: Path) -> None:
    """Make each of ``paths`` an empty file: a hard link to the empty file ``blank``.

    A new link is a name in a folder, where a new file is also an inode to allocate: on a
    journalling file system, ten thousand links take a tenth of the time (git and the walk list
    both alike: only names matter here). Where links are refused, each file is written.
    """
    blank.write_bytes(b"")
    for path in paths:
        try:
            os.link(blank, path)
        except OSError:
            Path(path).write_bytes(b"")


@needs_git
@pytest.mark.timeout(60)  # ten thousand files for git and the walk: seconds on a busy machine
def test_glob_each_pattern_of_the_wildmatch_table_ignores_what_git_ignores():
    """Every line of ``WILDMATCH_LINES`` alone in a folder's ``.gitignore``, over the same files."""
    with scratch() as folder:
        wrong = wildmatch_differences(Path(folder))
    assert not wrong, "\n".join(wrong)


def wildmatch_differences(home: Path) -> list[str]:
    """Each line of ``WILDMATCH_LINES`` where git and the walk differ, with what each lists."""
    root = home / "repo"
    names = [os.fsdecode(name) for name in WILDMATCH_FILES]
    below = sorted({os.path.dirname(name) for name in names})  # "" first, parents before children
    folders = {}
    files = []
    for number, lines in enumerate(WILDMATCH_LINES):
        folder = f"p{number:03}"
        folders[folder] = lines
        for inner in below:
            (root / folder / inner).mkdir(parents=True)
        (root / folder / ".gitignore").write_bytes(lines + b"\n")
        files += [os.path.join(root, folder, name) for name in names]
    empty_files(files, home / "blank")
    (home / "gitconfig").write_text("")
    with isolated(home):
        expected = set(git_files(root))
        got = {relative for relative, _ in walk(root)}
    git_only, claw_only = sorted(expected - got), sorted(got - expected)
    wrong = []
    for folder, lines in folders.items():
        mine = [p for p in git_only if p.startswith(folder + "/")]
        theirs = [p for p in claw_only if p.startswith(folder + "/")]
        if mine or theirs:
            wrong.append(f"{lines!r}: git lists {mine}, claw lists {theirs}")
    return wrong


def git_lists(root: Path, *pathspec: str) -> list[str]:
    """What git lists in ``root`` (an existing work tree), without initialising anything."""
    assert GIT is not None
    done = subprocess.run(
        [GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *pathspec],
        cwd=root, capture_output=True, check=True,
    )  # fmt: skip
    return sorted(os.fsdecode(name) for name in done.stdout.split(b"\0") if name)


@needs_git
def test_glob_walk_reads_the_exclude_file_of_a_linked_worktree_and_of_a_moved_git_folder(
    home,
):
    main, linked, moved = home / "main", home / "linked", home / "moved"
    (home / "gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n")
    with isolated(home):
        subprocess.run([GIT, "init", "-q", str(main)], check=True)
        (main / "kept.py").write_text("")
        subprocess.run([GIT, "add", "kept.py"], cwd=main, check=True)
        subprocess.run([GIT, "commit", "-qm", "one"], cwd=main, check=True)
        # a linked worktree: its .git file points into main/.git/worktrees/, whose commondir
        # leads back to main/.git, where info/exclude lives
        subprocess.run([GIT, "worktree", "add", "-q", str(linked)], cwd=main, check=True)
        (main / ".git" / "info").mkdir(exist_ok=True)
        (main / ".git" / "info" / "exclude").write_text("*.tmp\n")
        # a git folder moved away, named by a relative path in the .git file (no commondir)
        subprocess.run(
            [GIT, "init", "-q", "--separate-git-dir", str(home / "moved.git"), str(moved)],
            check=True,
        )
        (moved / ".git").write_text("gitdir: ../moved.git\n")
        (home / "moved.git" / "info").mkdir(exist_ok=True)
        (home / "moved.git" / "info" / "exclude").write_text("*.log\n")
        for tree in (linked, moved):
            for name in ("a.tmp", "b.log", "c.py"):
                (tree / name).write_text("")
            expected = git_lists(tree)
            # the .git file itself is listed by claw by design (the chapter says why)
            got = sorted(relative for relative, _ in walk(tree) if relative != ".git")
            assert got == expected, tree.name
    assert "a.tmp" not in git_lists(linked) and "b.log" not in git_lists(moved)


@needs_git
def test_glob_walk_from_a_subfolder_applies_every_gitignore_above_it_as_git_does(home):
    root = home / "repo"
    files = {
        ".gitignore": b"/a/b/x1\n",
        "a/.gitignore": b"b/x2\n/b/x3\n",
        "a/b/.gitignore": b"/x4\nx5\n",
        **{f"a/b/x{n}": b"" for n in range(1, 7)},
        "a/b/c/x5": b"", "a/b/c/x4": b"", "a/b/c/x2": b"",
    }  # fmt: skip
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)
    (home / "gitconfig").write_text("")
    with isolated(home):
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
        for start in ("a/b", "a/b/c"):
            expected = git_lists(root, start)
            got = sorted(relative for relative, _ in walk(root, start))
            assert got == expected, start
    assert expected == ["a/b/c/x2", "a/b/c/x4"]


@needs_git
def test_glob_walk_follows_a_change_of_the_git_configuration_between_searches(home):
    root = home / "repo"
    root.mkdir()
    for name in ("a.swp", "b.bak", "c.py"):
        (root / name).write_text("")
    for folder, pattern in (("one", "*.swp\n"), ("two", "*.bak\n")):
        (home / folder / "git").mkdir(parents=True)
        (home / folder / "dotfiles").write_text(pattern)
    (home / "one" / "git" / "ignore").write_text("*.swp\n")
    # a linked excludes file (as dotfile managers make) is read: only .gitignore links are not
    (home / "two" / "git" / "ignore").symlink_to(home / "two" / "dotfiles")
    (home / "gitconfig").write_text("")
    seen = []
    with isolated(home):
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
        for folder in ("one", "two"):
            os.environ["XDG_CONFIG_HOME"] = str(home / folder)
            expected = git_lists(root)
            assert sorted(relative for relative, _ in walk(root)) == expected, folder
            seen.append(expected)
        # another global configuration, whose core.excludesFile wins over the default place
        (home / "three").write_text("*.py\n")
        (home / "gitconfig-3").write_text(f"[core]\n\texcludesFile = {home / 'three'}\n")
        os.environ["GIT_CONFIG_GLOBAL"] = str(home / "gitconfig-3")
        expected = git_lists(root)
        assert sorted(relative for relative, _ in walk(root)) == expected, "three"
        seen.append(expected)
    assert seen == [["b.bak", "c.py"], ["a.swp", "c.py"], ["a.swp", "b.bak"]]
