"""The stub generator: regions become stubs, everything else is copied exactly."""

import ast
import textwrap

import pytest

from clawbook.course import stubgen

SOURCE = textwrap.dedent(
    '''\
    """A module."""

    from __future__ import annotations

    from .errors import Oops
    from .types import Thing


    # --8<-- [start:greet]
    def greet(name: str) -> str:
        """Say hello."""
        prefix = "Hello"
        # region ch01: join the prefix and the name
        return f"{prefix}, {name}!"
        # endregion
    # --8<-- [end:greet]


    def untouched() -> int:
        return 42
    '''
)


def test_a_region_becomes_a_todo_stub_and_the_rest_is_copied():
    out = stubgen.render(SOURCE, "greet.py")
    assert 'raise Todo("ch01", "join the prefix and the name")' in out
    assert 'return f"{prefix}, {name}!"' not in out
    assert '"""Say hello."""' in out and 'prefix = "Hello"' in out
    assert "def untouched() -> int:\n    return 42" in out
    ast.parse(out)


def test_no_marker_survives_in_the_starter():
    out = stubgen.render(SOURCE, "greet.py")
    assert "region" not in out
    assert "--8<--" not in out


def test_the_todo_import_is_inserted_in_sorted_position():
    lines = stubgen.render(SOURCE, "greet.py").splitlines()
    imports = [line for line in lines if line.startswith("from .")]
    assert imports == [
        "from .errors import Oops",
        "from .todo import Todo",
        "from .types import Thing",
    ]


def test_a_file_in_a_subpackage_imports_todo_from_the_package_root():
    out = stubgen.render(SOURCE, "tools/greet.py")
    assert "from ..todo import Todo" in out


def test_kept_chapters_stay_as_solution_code_without_markers():
    out = stubgen.render(SOURCE, "greet.py", keep={"ch01"})
    assert 'return f"{prefix}, {name}!"' in out
    assert "Todo" not in out
    assert "region" not in out


def test_the_book_copy_keeps_section_markers_but_not_regions():
    out = stubgen.render(SOURCE, "greet.py", keep={"ch01"}, for_book=True)
    assert "# --8<-- [start:greet]" in out
    assert "region" not in out


def test_a_long_hint_is_wrapped_and_stays_valid_python():
    hint = "a very long hint " * 12
    source = f"def f():\n    # region ch02: {hint.strip()}\n    return 1\n    # endregion\n"
    out = stubgen.render(source, "f.py")
    assert all(len(line) <= stubgen.LINE_LENGTH for line in out.splitlines())
    tree = ast.parse(out)
    raise_node = next(n for n in ast.walk(tree) if isinstance(n, ast.Raise))
    assert ast.literal_eval(raise_node.exc.args[1]) == hint.strip()


def test_a_generator_stays_a_generator_when_its_yields_are_stubbed():
    source = textwrap.dedent(
        """\
        async def stream():
            # region ch05a: yield the events
            for i in range(3):
                yield i
            # endregion
        """
    )
    out = stubgen.render(source, "s.py")
    func = ast.parse(out).body[-1]
    assert any(isinstance(n, ast.Yield) for n in ast.walk(func))


def test_regions_of_two_chapters_in_one_file_are_independent():
    source = textwrap.dedent(
        """\
        def a():
            # region ch01: a
            return 1
            # endregion

        def b():
            # region ch02: b
            return 2
            # endregion
        """
    )
    out = stubgen.render(source, "ab.py", keep={"ch01"})
    assert "return 1" in out
    assert 'raise Todo("ch02", "b")' in out


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f():\n    # region ch01: x\n    return 1\n", "never closed"),
        ("def f():\n    return 1\n    # endregion\n", "without a '# region'"),
        (
            "def f():\n    # region ch01: a\n    # region ch01: b\n    return 1\n"
            "    # endregion\n    # endregion\n",
            "do not nest",
        ),
        ("# region ch01: x\nX = 1\n# endregion\n", "inside a function"),
        ("def f():\n    # region ch01 no colon\n    return 1\n    # endregion\n", "malformed"),
        ("def f():\n    # region ch01: x\n    # endregion\n    return 1\n", "empty"),
    ],
)
def test_malformed_regions_are_refused_with_the_line(source, message):
    with pytest.raises(stubgen.MarkerError, match=message) as caught:
        stubgen.render(source, "bad.py")
    assert "bad.py:" in str(caught.value)


def test_regions_name_their_function(tmp_path):
    regions = stubgen.find_regions(SOURCE, "greet.py")
    assert [(r.chapter, r.function, r.hint) for r in regions] == [
        ("ch01", "greet", "join the prefix and the name")
    ]


def test_differences_reports_stale_missing_and_extra_files(tmp_path):
    stubgen.write_tree({"a.py": "A = 1\n", "b.py": "B = 1\n"}, tmp_path / "starter")
    (tmp_path / "starter" / "a.py").write_text("A = 2\n")
    (tmp_path / "starter" / "extra.py").write_text("")
    problems = stubgen.differences(
        {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": ""}, tmp_path / "starter"
    )
    assert problems == ["out of date: a.py", "missing: c.py", "not in solution/: extra.py"]


NESTED_AFTER_DOCSTRING = '''async def watch(items: list[int]) -> int:
    """Sum the items through a helper."""

    # region ch26: a helper that sums; call it
    def total() -> int:
        return sum(items)

    return total()
    # endregion
'''


def test_a_stub_right_under_a_docstring_keeps_no_blank_line_between():
    """ruff format wants a blank line between a docstring and a nested function that opens a
    region; the stub that replaces the region must not keep it (ruff's D202 in the starter)."""
    out = stubgen.render(NESTED_AFTER_DOCSTRING, "watch.py")
    assert '"""Sum the items through a helper."""\n    raise Todo(' in out
    ast.parse(out)


def test_the_book_copy_has_a_section_for_each_class_and_function_by_name():
    source = textwrap.dedent(
        '''\
        class Greeter:
            """Greets."""

            @property
            def name(self) -> str:
                return "x"

            def greet(self) -> str:
                return "hi"


        # --8<-- [start:shout]
        def shout() -> str:
            return "HI"
        # --8<-- [end:shout]


        async def later() -> None:
            pass
        '''
    )
    out = stubgen.render(source, "greet.py", for_book=True)
    ast.parse(out)
    lines = out.splitlines()

    def section(name: str) -> list[str]:
        start, end = f"# --8<-- [start:{name}]", f"# --8<-- [end:{name}]"
        first = next(i for i, line in enumerate(lines) if line.strip() == start)
        last = next(i for i, line in enumerate(lines) if line.strip() == end)
        return [line.strip() for line in lines[first + 1 : last] if "--8<--" not in line]

    assert section("greeter")[0] == "class Greeter:" and section("greeter")[-1] == 'return "hi"'
    assert section("greeter-name")[:2] == ["@property", "def name(self) -> str:"]
    assert section("greeter-greet") == ["def greet(self) -> str:", 'return "hi"']
    assert section("later") == ["async def later() -> None:", "pass"]
    assert out.count("[start:shout]") == 1  # written out in the source: left as it is
    assert "[start:" not in stubgen.render(source, "greet.py")  # the starter has none
