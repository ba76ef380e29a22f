"""bench.mutation's selection: a chapter id becomes the mutmut names of its regions' functions."""

import fnmatch
import json
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

# bench/ is not an installed package; it is imported from the repository, as `make mutate` does.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench import mutation

TOOL = textwrap.dedent(
    '''\
    """A tool."""


    def helper(text: str) -> str:
        """Given code: no region."""
        return text.strip()


    def split(text: str) -> list[str]:
        """A top-level function with a region."""
        # region ch10: split the text
        return text.split()
        # endregion


    def outer(text: str) -> str:
        """A region inside a nested function belongs to the outer function's mutants."""

        def inner() -> str:
            # region ch13: upper-case it
            return text.upper()
            # endregion

        return inner()


    class Runner:
        """A class with a region in one method."""

        def start(self) -> int:
            """Given."""
            return 1

        def stop(self) -> int:
            """A method with a region."""
            # region ch10: stop it
            return 0
            # endregion
    '''
)

INIT = textwrap.dedent(
    '''\
    """A package whose __init__ has a region."""


    def load() -> int:
        """Load."""
        # region ch13: load it
        return 1
        # endregion
    '''
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A fake repository: solution/tools/fake.py, solution/mcp/__init__.py, some test files."""
    package = tmp_path / "solution"
    (package / "tools").mkdir(parents=True)
    (package / "mcp").mkdir()
    (package / "__init__.py").write_text('"""The package."""\n', encoding="utf-8")
    (package / "tools" / "fake.py").write_text(TOOL, encoding="utf-8")
    (package / "mcp" / "__init__.py").write_text(INIT, encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in (
        "test_mock_provider.py",
        "test_bash_tool.py",
        "test_permissions.py",
        "test_safety.py",
        "test_hooks.py",
        "conftest.py",
        "helpers.py",
    ):
        (tests / name).write_text("", encoding="utf-8")
    return tmp_path


def test_a_chapter_becomes_the_globs_of_the_functions_holding_its_regions(tree: Path) -> None:
    package = tree / "solution"
    assert mutation.chapter_globs(package, {"ch10"}) == [
        "solution.tools.fake.x_split__mutmut_*",
        "solution.tools.fake.x\u01c1Runner\u01c1stop__mutmut_*",
    ]
    assert mutation.chapter_globs(package, {"ch13"}) == [
        "solution.mcp.x_load__mutmut_*",
        "solution.tools.fake.x_outer__mutmut_*",
    ]


def test_the_globs_match_mutmut_names_of_those_functions_only(tree: Path) -> None:
    globs = mutation.chapter_globs(tree / "solution", {"ch10"})

    def picked(name: str) -> bool:
        return any(fnmatch.fnmatch(name, glob) for glob in globs)

    assert picked("solution.tools.fake.x_split__mutmut_3")
    assert picked("solution.tools.fake.x\u01c1Runner\u01c1stop__mutmut_12")
    assert not picked("solution.tools.fake.x\u01c1Runner\u01c1start__mutmut_1")
    assert not picked("solution.tools.fake.x_helper__mutmut_1")
    assert not picked("solution.tools.fake.x_split_more__mutmut_1")


def test_a_chapter_without_regions_is_refused(tree: Path) -> None:
    with pytest.raises(SystemExit, match="ch99"):
        mutation.chapter_globs(tree / "solution", {"ch99"})


def test_a_module_is_named_in_any_of_three_spellings(tree: Path) -> None:
    package = tree / "solution"
    for spelling in ("tools/fake.py", "tools.fake", "solution.tools.fake"):
        assert mutation.module_glob(package, spelling) == "solution.tools.fake.*"
    assert mutation.module_glob(package, "mcp") == "solution.mcp.*"
    with pytest.raises(SystemExit, match="nothing"):
        mutation.module_glob(package, "nothing")


def test_a_chapter_run_uses_only_the_tests_of_the_chapters_asked_for(tree: Path) -> None:
    assert mutation.own_tests(tree, ["ch13", "ch10"]) == [
        "tests/test_bash_tool.py",
        "tests/test_permissions.py",
    ]
    selection = mutation.select(["ch10", "ch13"], [], tree / "solution")
    assert selection.tests == ("tests/test_bash_tool.py", "tests/test_permissions.py")
    assert mutation.select(["ch10"], [], tree / "solution", all_tests=True).tests is None
    assert mutation.select(["solution.tools.*"], [], tree / "solution").tests is None


def test_given_code_runs_with_the_tests_of_every_chapter_up_to_its_owner(tree: Path) -> None:
    assert mutation.chapter_tests(tree, "ch13") == [
        "tests/test_bash_tool.py",
        "tests/test_mock_provider.py",
        "tests/test_permissions.py",
    ]
    # fake.py belongs to no chapter, so every chapter's tests may hold its given code.
    selection = mutation.select(["ch10"], ["tools/fake.py"], tree / "solution")
    assert selection.tests == tuple(mutation.chapter_tests(tree, "ch25"))
    assert "tests/test_hooks.py" in selection.tests


def _mutant(name: str, chapter: str | None) -> mutation.Mutant:
    return mutation.Mutant(
        name=name, path="solution/tools/fake.py", function="f", status="killed", line=1,
        before=(), after=(), chapter=chapter,
    )  # fmt: skip


def test_the_table_counts_only_the_asked_chapters_and_given_modules(tree: Path) -> None:
    selection = mutation.select(["ch10"], ["mcp"], tree / "solution")
    assert selection.counts(_mutant("solution.tools.fake.x_split__mutmut_1", "ch10"))
    # A mutant of a ch10 function whose changed line is outside the region is given code.
    assert not selection.counts(_mutant("solution.tools.fake.x_split__mutmut_2", None))
    assert not selection.counts(_mutant("solution.tools.fake.x_outer__mutmut_1", "ch13"))
    assert selection.counts(_mutant("solution.mcp.x_load__mutmut_1", None))
    assert not selection.counts(_mutant("solution.mcp.x_load__mutmut_2", "ch13"))


def test_the_scratch_settings_select_only_the_chosen_tests(tmp_path: Path) -> None:
    settings = tmp_path / "pyproject.toml"
    settings.write_bytes((Path(mutation.ROOT) / "pyproject.toml").read_bytes())
    mutation.restrict(
        tmp_path, ["tests/test_bash_tool.py", "tests/test_safety.py"], ["solution/safety.py"]
    )
    config = tomllib.loads(settings.read_text(encoding="utf-8"))["tool"]["mutmut"]
    untraceable = [arg for test in mutation.UNTRACEABLE for arg in ("--deselect", test)]
    assert config["pytest_add_cli_args_test_selection"] == [
        "tests/test_bash_tool.py",
        "tests/test_safety.py",
        *untraceable,
    ]
    assert config["only_mutate"] == ["solution/safety.py"]
    # A test over its limit ends the run (a loop in a worker thread cannot hang the teardown).
    pytest_ini = tomllib.loads(settings.read_text(encoding="utf-8"))["tool"]["pytest"]
    assert pytest_ini["ini_options"]["timeout"] == mutation.TEST_TIMEOUT
    assert pytest_ini["ini_options"]["timeout_method"] == "thread"
    # Without a chapter, the whole suite's selection is kept, and the same tests left out.
    settings.write_bytes((Path(mutation.ROOT) / "pyproject.toml").read_bytes())
    mutation.restrict(tmp_path, None)
    config = tomllib.loads(settings.read_text(encoding="utf-8"))["tool"]["mutmut"]
    assert config["pytest_add_cli_args_test_selection"] == [
        "tests/",
        "--ignore=tests/tooling",
        *untraceable,
    ]
    assert config["source_paths"] == ["solution/"]
    pytest_options = tomllib.loads(settings.read_text(encoding="utf-8"))["tool"]["pytest"]
    assert pytest_options["ini_options"]["timeout"] == mutation.TEST_TIMEOUT


def test_a_run_mutates_only_the_files_of_what_it_counts(tree: Path) -> None:
    selection = mutation.select(["ch13"], ["tools.fake"], tree / "solution")
    assert selection.files == ("solution/mcp/__init__.py", "solution/tools/fake.py")
    assert mutation.select(["solution.tools.*"], [], tree / "solution").files == ()


QUIET_PLUGINS = (
    "-p", "no:cacheprovider", "-p", "no:nbval", "-p", "no:anyio", "-p", "no:hypothesispytest",
)  # fmt: skip
"""Plugins a bare pytest session here need not load (nbval's imports alone take seconds)."""


def test_once_timed_a_test_gets_a_limit_from_its_own_duration(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 30\n", encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    suite_hook = textwrap.dedent(
        """\
        import pytest


        def pytest_collection_modifyitems(config, items):
            for item in items:
                item.user_properties.append(("seen", "by the suite's own hook"))
                if item.name == "test_untimed":
                    item.add_marker(pytest.mark.timeout(0.3))
        """
    )
    hook = mutation.limits_hook(floor=0.3, factor=2.0)
    (tests / "conftest.py").write_text(suite_hook + hook, encoding="utf-8")
    (tests / "test_x.py").write_text(
        textwrap.dedent(
            """\
            import time

            import pytest


            @pytest.mark.timeout(30)  # its own limit gives way to the timed one
            def test_waits(request):
                assert ("seen", "by the suite's own hook") in request.node.user_properties
                time.sleep(1.5)


            def test_quick(request):
                assert ("seen", "by the suite's own hook") in request.node.user_properties


            def test_untimed():
                time.sleep(0.6)  # not in the timings: the suite's own limit holds


            @pytest.mark.timeout(0.5)  # twice its timing would be 20 s: its own limit is the cap
            def test_capped():
                time.sleep(1)
            """
        ),
        encoding="utf-8",
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rA", "tests", *QUIET_PLUGINS],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    untimed = run()  # mutmut's first run: no timings yet, so only the declared limits
    assert "2 failed, 2 passed" in untimed.stdout, untimed.stdout
    assert "FAILED tests/test_x.py::test_untimed" in untimed.stdout
    timings = {
        "tests/test_x.py::test_waits": 0.2,
        "tests/test_x.py::test_quick": 0.001,
        "tests/test_x.py::test_capped": 10.0,
    }
    (tmp_path / "mutmut-stats.json").write_text(
        json.dumps({"duration_by_test": timings}), encoding="utf-8"
    )
    timed = run()
    assert "3 failed, 1 passed" in timed.stdout, timed.stdout
    assert "FAILED tests/test_x.py::test_waits - Failed: Timeout" in timed.stdout
    assert "FAILED tests/test_x.py::test_capped - Failed: Timeout" in timed.stdout


def test_the_scratch_conftest_imports_the_preloaded_modules_when_the_tests_are_collected(
    tmp_path: Path,
) -> None:
    # mutmut's fork server only collects (`--collect-only`), then forks a child per mutant
    tests = tmp_path / "tests"
    tests.mkdir()
    mark = tmp_path / "imported"
    (tests / "slow_to_import.py").write_text(
        f"from pathlib import Path\nPath({str(mark)!r}).write_text('once')\n", encoding="utf-8"
    )
    conftest = "import sys\nsys.path.insert(0, __import__('os').path.dirname(__file__))\n"
    (tests / "conftest.py").write_text(
        conftest + mutation.preload_hook(("slow_to_import",)), encoding="utf-8"
    )
    (tests / "test_y.py").write_text("def test_y():\n    pass\n", encoding="utf-8")
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "tests", *QUIET_PLUGINS],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert mark.read_text() == "once"


def test_the_scratch_conftest_keeps_hypothesis_from_shrinking(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    helpers = shutil.ignore_patterns("test_*", "tooling")  # conftest.py and what it imports
    shutil.copytree(Path(__file__).parents[1], tests, ignore=helpers)
    with (tests / "conftest.py").open("a", encoding="utf-8") as end:
        end.write(mutation.NO_SHRINK_HOOK)
    (tests / "test_y.py").write_text(
        "from hypothesis import Phase, given, settings, strategies as st\n\n"
        "@given(st.integers())\n"
        "def test_y(n):\n"
        "    assert Phase.shrink not in settings.default.phases\n"
        "    assert Phase.generate in settings.default.phases\n"
        "    assert settings.default.deadline is None\n",
        encoding="utf-8",
    )
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests/test_y.py", *QUIET_PLUGINS],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_known_gap_in_the_survivors_file_is_not_counted_as_listed(tmp_path: Path) -> None:
    survivors = tmp_path / "survivors.md"
    survivors.write_text(
        "| mutant | change | kind | why |\n"
        "|---|---|---|---|\n"
        "| `solution.a.x_f__mutmut_1` | `+` to `-` | equivalent | zero either way |\n"
        "| `solution.a.x_f__mutmut_2` | `None` | not killed | no test reaches it yet |\n"
        "As `solution.a.x_g__mutmut_3` in prose.\n",
        encoding="utf-8",
    )
    assert mutation.listed_survivors(survivors) == {
        "solution.a.x_f__mutmut_1",
        "solution.a.x_g__mutmut_3",
    }


WORDS = textwrap.dedent(
    '''\
    """Given code around a region, and a function of given code only."""


    def split(text: str) -> list[str]:
        """Split on commas."""
        cleaned = text.strip("-")
        # region ch10: split it
        return cleaned.split(",")
        # endregion


    def join(words: list[str]) -> str:
        """Join with plus signs."""
        return "+".join(words)
    '''
)


def test_a_run_runs_only_the_mutants_its_table_counts(tmp_path: Path) -> None:
    package = tmp_path / "solution"
    package.mkdir()
    (package / "__init__.py").write_text('"""The package."""\n', encoding="utf-8")
    (package / "words.py").write_text(WORDS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mutmut]\nsource_paths = ["solution/"]\n', encoding="utf-8"
    )
    assert mutation.generate_mutants(tmp_path, 1)
    mutants = mutation.read_results(tmp_path, listed=set()).mutants
    assert all(m.status == "not checked" for m in mutants)  # written, none run
    written = {m.name for m in mutants}

    chapter = set(mutation.counted_names(tmp_path, mutation.select(["ch10"], [], package)))
    given = set(mutation.counted_names(tmp_path, mutation.select([], ["words"], package)))

    of_split = {n for n in written if "x_split__" in n}
    assert chapter and chapter < of_split  # the region's, not the line of given code above it
    assert of_split - chapter <= given  # that line is the given run's
    assert any("x_join__" in n for n in given)
    assert not chapter & given and chapter | given == written
