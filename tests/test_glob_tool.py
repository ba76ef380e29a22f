"""ch11 · glob: find files by pattern, newest first, skipping .git, venvs and ignored files."""

import fnmatch
import os
import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from search_tree import (
    VISIBLE_PY,
    make_project,
    no_personal_git_config,  # noqa: F401
    shared_project,  # noqa: F401
)

from claw.tools.glob import Found, GlobArguments, GlobTool, glob_regex, newest_first
from claw.tools.ignore import Rules, is_ignored, parse_lines, walk
from claw.types import ToolOutput


async def glob(root: Path, **arguments: object) -> ToolOutput:
    output = await GlobTool(root).run(arguments)
    assert isinstance(output, ToolOutput)
    return output


def paths(output: ToolOutput) -> list[str]:
    """The paths of an output: its lines up to the first blank one (the note follows it)."""
    return output.content.split("\n\n")[0].splitlines()


def touch(root: Path, name: str, mtime: float) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    os.utime(path, (mtime, mtime))


def test_glob_regex_star_stays_in_one_folder_and_double_star_crosses_any_number():
    top = glob_regex("*.py")
    assert top.fullmatch("setup.py")
    assert not top.fullmatch("src/setup.py")
    anywhere = glob_regex("**/*.py")
    assert all(anywhere.fullmatch(p) for p in ("a.py", "src/a.py", "src/x/y/a.py"))
    assert not anywhere.fullmatch("a.pyc")
    tests = glob_regex("src/**/test_*.py")
    assert tests.fullmatch("src/test_a.py")
    assert tests.fullmatch("src/x/y/test_b.py")
    assert not tests.fullmatch("tests/test_c.py")
    assert not tests.fullmatch("src/x/test_b.py.bak")
    assert glob_regex("src/**").fullmatch("src/x/y/z.py"), "** at the end is anything at all"


def test_glob_regex_question_mark_sets_and_dots_are_not_wildcards():
    assert glob_regex("file?.txt").fullmatch("file1.txt")
    assert not glob_regex("file?.txt").fullmatch("file/.txt")
    assert glob_regex("[ab].md").fullmatch("a.md")
    assert not glob_regex("[ab].md").fullmatch("c.md")
    assert glob_regex("[!ab].md").fullmatch("c.md")
    assert not glob_regex("[!ab].md").fullmatch("a.md")
    assert not glob_regex("a.md").fullmatch("axmd"), "a dot is a dot, not any character"
    assert glob_regex("./docs/*.md").fullmatch("docs/index.md"), "a leading ./ is dropped"
    for pattern, name in [
        ("[]a]", "a"),  # a ] right after [ is a member
        ("[ab].[cd]", "axc"),  # a set ends at its own ], not at the last one
        ("[a]", "a"),  # a set of one
        ("[ab]", "X"),
        ("[!a]", "!"),  # only the first ! negates; it is not a member
        ("[\\d]", "5"),  # a backslash in a set is a member, not an escape
        ("[\\d]", "X"),
        ("**a", "b"),  # the character after ** is still matched
        ("**", "a\nb"),  # a newline is a character like any other
        ("a[b", "a[b"),  # a [ that never closes is itself
        ("[!]a]", "]"),  # a ] right after [! is a member too
        ("[!]a]", "b"),
        ("[^a]", "^"),  # a ^ first in a set is a member, not a negation
        ("[^a]", "b"),
    ]:
        expected = fnmatch.fnmatchcase(name, pattern)
        assert bool(glob_regex(pattern).fullmatch(name)) == expected, (pattern, name)


@given(
    st.text(alphabet="ab.*?[]!^\\", min_size=1, max_size=6),
    st.text(alphabet="ab.[]!^\\", max_size=6),
)
def test_glob_regex_agrees_with_fnmatch_on_names_without_slashes(pattern, name):
    assert bool(glob_regex(pattern).fullmatch(name)) == fnmatch.fnmatchcase(name, pattern)


async def test_glob_finds_every_python_file_relative_to_root_skipping_what_is_ignored(project):
    output = await glob(project, pattern="**/*.py")
    assert not output.is_error
    assert sorted(paths(output)) == VISIBLE_PY, "no build/, env/, node_modules/ or .git/"


async def test_glob_nested_gitignore_ignores_below_it_and_its_negation_wins(project):
    everything = paths(await glob(project, pattern="**/*"))
    assert "logs/keep.log" in everything, "!keep.log re-includes it"
    assert "logs/server.log" not in everything, "*.log ignores it"
    assert "src/shop/.env" not in everything, "src/shop/.gitignore ignores .env"
    assert "src/shop/debug.log" in everything, "the deeper .gitignore's !debug.log wins"
    assert ".gitignore" in everything and "src/shop/.gitignore" in everything
    assert not [p for p in everything if p.startswith((".git/", "env/", "node_modules/"))]
    assert not [p for p in everything if "__pycache__" in p or p.startswith("build/")]
    siblings = [
        Rules("", parse_lines(b"*.tmp\n")),
        Rules("docs/", parse_lines(b"*.md\n")),
        Rules("src/", parse_lines(b"*.log\n")),
    ]
    assert is_ignored(siblings, "src/debug.log", False), "docs/'s rules do not stop src/'s"
    assert is_ignored(siblings, "src/notes.md", False) is False, "docs/'s rules stay in docs/"


def test_glob_walk_passes_over_a_folder_it_cannot_read(tmp_path):
    for name in ("a.txt", "one/x.txt", "two/y.txt"):
        touch(tmp_path, name, 1_000_000)
    files = walk(tmp_path)
    assert next(files)[0] == "a.txt"
    shutil.rmtree(tmp_path / "one")  # gone before the walk gets to it
    assert [relative for relative, _ in files] == ["two/y.txt"]


async def test_glob_newest_first_by_modification_time_then_by_path(tmp_path):
    touch(tmp_path, "old.py", 1_000_000)
    touch(tmp_path, "src/new.py", 3_000_000)
    touch(tmp_path, "b.py", 2_000_000)
    touch(tmp_path, "a.py", 2_000_000)
    output = await glob(tmp_path, pattern="**/*.py")
    assert paths(output) == ["src/new.py", "a.py", "b.py", "old.py"]


async def test_glob_shows_at_most_max_results_with_a_note_counting_the_rest(tmp_path):
    for n in range(30):
        touch(tmp_path, f"pkg/m{n:02}.py", 1_000_000 + n)
    output = await GlobTool(tmp_path, max_results=10).run({"pattern": "**/*.py"})
    assert paths(output) == [f"pkg/m{n:02}.py" for n in range(29, 19, -1)], "the 10 newest"
    note = output.content.split("\n\n", 1)[1]
    assert "20" in note and "more" in note
    exactly = await GlobTool(tmp_path, max_results=30).run({"pattern": "**/*.py"})
    assert len(paths(exactly)) == 30
    assert "\n\n" not in exactly.content, "all 30 are shown: no note"


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abcdef")), max_size=30),
       st.integers(1, 8))  # fmt: skip
def test_glob_newest_first_keeps_the_newest_and_counts_all(items, limit):
    found = [Found(f"{name}{i}", float(mtime)) for i, (mtime, name) in enumerate(items)]
    consumed = []

    def stream():
        for item in found:
            consumed.append(item)
            yield item

    best, total = newest_first(stream(), limit)
    assert total == len(found)
    assert best == sorted(found, key=lambda f: (-f.mtime, f.path))[:limit]
    assert consumed == found, "the stream is read once, in order"


async def test_glob_path_searches_a_subfolder_and_paths_stay_relative_to_the_root(tmp_path):
    make_project(tmp_path)
    output = await glob(tmp_path, pattern="*.py", path="tests")
    assert sorted(paths(output)) == ["tests/test_cart.py", "tests/test_prices.py"]
    deeper = await glob(tmp_path, pattern="**/cart.py", path="src")
    assert paths(deeper) == ["src/shop/cart.py"]
    named = await glob(tmp_path, pattern="test_c*.py", path="tests")
    assert paths(named) == ["tests/test_cart.py"], "the pattern sees the whole name below path"
    top = await glob(tmp_path, pattern="src/*/c*.py")
    assert paths(top) == ["src/shop/cart.py"], "from the root, the pattern sees the whole path"
    touch(tmp_path, "Xnotes /todo.md", 1_000_000)
    spaced = await glob(tmp_path, pattern="*.md", path="Xnotes ")
    assert paths(spaced) == ["Xnotes /todo.md"], "a folder's name is used as it is, spaces kept"


async def test_glob_no_match_is_not_an_error_and_a_missing_folder_is(project):
    none = await glob(project, pattern="**/*.rs")
    assert not none.is_error
    assert "no files match" in none.content
    missing = await glob(project, pattern="*.py", path="nowhere")
    assert missing.is_error
    assert "nowhere" in missing.content and "not found" in missing.content
    a_file = await glob(project, pattern="*.py", path="README.md")
    assert a_file.is_error
    assert "README.md" in a_file.content and "not a folder" in a_file.content.lower()


def test_glob_a_file_that_vanishes_during_the_search_is_passed_over(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        touch(tmp_path, name, 1_000_000)
    found = GlobTool(tmp_path).matches(GlobArguments(pattern="*.py"))
    assert next(found).path == "a.py"
    (tmp_path / "b.py").unlink()  # the walk has listed the folder already
    assert [item.path for item in found] == ["c.py"], "b.py is passed over, the search goes on"


def test_glob_walk_never_enters_skipped_or_ignored_folders(tmp_path, monkeypatch):
    make_project(tmp_path)
    for n in range(50):
        (tmp_path / "node_modules" / f"dep{n}").mkdir()
    scanned: list[str] = []
    real_scandir = os.scandir

    def spy(path):
        scanned.append(Path(path).relative_to(tmp_path).as_posix())
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    files = [relative for relative, _ in walk(tmp_path)]
    assert "src/shop/cart.py" in files
    for folder in ("node_modules", "env", ".git", "build", "src/shop/__pycache__"):
        assert not [s for s in scanned if s == folder or s.startswith(folder + "/")], folder


def test_glob_walk_is_a_stream_that_has_read_little_when_the_first_file_comes(
    tmp_path, monkeypatch
):
    for n in range(40):
        touch(tmp_path, f"d{n:02}/f.txt", 1_000_000)
    touch(tmp_path, "first.txt", 1_000_000)
    scans = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: scans.append(path) or real_scandir(path))
    files = walk(tmp_path)
    assert next(files)[0] == "first.txt", "a folder's files come before its subfolders'"
    assert len(scans) == 1, "only the top folder was read to find the first file"
    assert [r for r, _ in files][:2] == ["d00/f.txt", "d01/f.txt"]


async def test_glob_never_names_a_file_through_a_link_out_of_the_workspace(tmp_path):
    root, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    make_project(root, {"app.py": ""})
    make_project(elsewhere, {"secret.py": ""})
    (root / "leak.py").symlink_to(elsewhere / "secret.py")
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "alias.py").symlink_to(root / "app.py")
    assert sorted(paths(await glob(root, pattern="**/*.py"))) == ["alias.py", "app.py"]
    refused = await glob(root, pattern="*.py", path="linked")
    assert refused.is_error
    assert "outside the workspace" in refused.content


async def test_glob_withhold_hides_files_and_is_asked_about_each(tmp_path):
    make_project(tmp_path, {"a.py": "", "keys/b.py": "", "c.py": ""})

    def withhold(relative: str) -> str | None:
        return "withheld" if relative in ("keys", "c.py") else None

    output = await GlobTool(tmp_path, withhold=withhold).run({"pattern": "**/*.py"})
    assert isinstance(output, ToolOutput)
    assert paths(output) == ["a.py"]


async def test_glob_a_reversed_range_is_an_error_naming_the_pattern(project):
    output = await glob(project, pattern="src/[z-a]*.py")
    assert output.is_error
    assert "src/[z-a]*.py" in output.content and "not a valid glob pattern" in output.content


async def test_glob_each_set_ends_at_its_own_bracket_and_a_negated_one_works(tmp_path):
    make_project(tmp_path, {"a.py": "", "b.py": "", "ac.txt": "", "bd.txt": "", "]x.txt": ""})
    assert sorted(paths(await glob(tmp_path, pattern="[!a].py"))) == ["b.py"]
    assert paths(await glob(tmp_path, pattern="[]]*.txt")) == ["]x.txt"], "a ] first is a member"
    assert sorted(paths(await glob(tmp_path, pattern="[ab][cd].txt"))) == ["ac.txt", "bd.txt"]


async def test_glob_a_withheld_folder_is_refused_not_searched(tmp_path):
    make_project(tmp_path, {"keys/b.py": "", "a.py": ""})

    def withhold(relative: str) -> str | None:
        return "withheld" if relative == "keys" else None

    tool = GlobTool(tmp_path, withhold=withhold)
    everything = await tool.run({"pattern": "**/*.py"})
    assert isinstance(everything, ToolOutput)
    assert paths(everything) == ["a.py"]
    output = await tool.run({"pattern": "*.py", "path": "keys"})
    assert isinstance(output, ToolOutput)
    assert output.is_error
    assert "b.py" not in output.content


async def test_glob_withhold_is_asked_about_a_nested_path_with_slashes_never_about_the_root(
    tmp_path,
):
    make_project(tmp_path, {"keys/deep/b.py": "", "a.py": ""})
    asked = []

    def withhold(relative: str) -> str | None:
        asked.append(relative)
        return "withheld" if relative == "keys/deep" else None

    tool = GlobTool(tmp_path, withhold=withhold)
    refused = await tool.run({"pattern": "*.py", "path": "keys/deep/"})
    assert isinstance(refused, ToolOutput)
    assert refused.is_error and "b.py" not in refused.content
    everything = await tool.run({"pattern": "**/*.py", "path": "."})
    assert isinstance(everything, ToolOutput)
    assert paths(everything) == ["a.py"]
    assert "." not in asked and "" not in asked


async def test_glob_a_workspace_whose_name_ends_in_a_space_keeps_its_neighbour_out(tmp_path):
    root, neighbour = tmp_path / "work ", tmp_path / "work"
    make_project(root, {"app.py": ""})
    make_project(neighbour, {"secret.py": ""})
    (root / "leak.py").symlink_to(neighbour / "secret.py")
    (root / "alias.py").symlink_to(root / "app.py")
    assert sorted(paths(await glob(root, pattern="*.py"))) == ["alias.py", "app.py"]


async def test_glob_a_path_the_system_refuses_is_an_error_result_naming_the_error(tmp_path):
    output = await glob(tmp_path, pattern="*.py", path="x" * 300)
    assert output.is_error
    assert "too long" in output.content.lower()
