"""A tiny course with two chapters, for testing the instructor checks on something small."""

import shutil
import textwrap
from pathlib import Path

from clawbook.course import stubgen, stubs
from clawbook.instructor.verify import Project

REAL_TODO = Path(__file__).resolve().parents[2] / "solution" / "todo.py"

CHAPTERS = """
[[part]]
number = 1
title = "Only part"

[[chapter]]
id = "ch01"
title = "Doubling"
part = 1
page = "ch01.md"
files = ["double.py"]
tests = { test_double_ = 2 }
minutes = 5

[[chapter]]
id = "ch02"
title = "Tripling"
part = 1
page = "ch02.md"
files = ["triple.py"]
tests = { test_triple_ = 1 }
minutes = 5
"""

DOUBLE = '''\
"""Doubling."""


def double(x: int) -> int:
    """Twice x."""
    # region ch01: add x to itself
    return x + x
    # endregion
'''

TRIPLE = '''\
"""Tripling."""

from .double import double


def triple(x: int) -> int:
    """Three times x."""
    # region ch02: double plus one more
    return double(x) + x
    # endregion
'''

TESTS = {
    "test_double_basic.py": (
        "from claw.double import double\n\n"
        "def test_double_two():\n    assert double(2) == 4\n\n"
        "def test_double_zero():\n    assert double(0) == 0\n"
    ),
    "test_triple_basic.py": (
        "from claw.triple import triple\n\ndef test_triple_two():\n    assert triple(2) == 6\n"
    ),
}

PYPROJECT = """
[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = ["-p", "clawbook.harness.pytest_plugin", "-p", "no:nbval"]
"""


def make_course(root: Path) -> Project:
    """Write the course under ``root``, with a generated, up-to-date starter."""
    (root / "clawbook").mkdir(parents=True)
    (root / "clawbook" / "chapters.toml").write_text(CHAPTERS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    solution = root / "solution"
    solution.mkdir()
    (solution / "__init__.py").write_text('"""Fake claw."""\n')
    shutil.copy(REAL_TODO, solution / "todo.py")
    (solution / "double.py").write_text(DOUBLE)
    (solution / "triple.py").write_text(TRIPLE)
    (root / "tests").mkdir()
    for name, text in TESTS.items():
        (root / "tests" / name).write_text(text)
    (root / "book").mkdir()
    (root / "book" / "ch01.md").write_text(
        "Run `clawbook check ch01` or `pytest tests/test_double_basic.py`.\n"
    )
    (root / "book" / "ch02.md").write_text(
        textwrap.dedent("""\
        ```bash
        $ pytest -k test_triple_
        ```
        """)
    )
    files = stubgen.render_tree(solution)
    stubgen.write_tree(files, root / "starter")
    project = Project(root)
    stubs.write_manifest(project.manifest, files)
    stubs.write_catalogue(project.catalogue, project.solution, files)
    return project
