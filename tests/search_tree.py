"""A small, realistic Python project for the search-tool tests (chapter 11) to look through.

Besides the code it holds what a real checkout holds and the tools must not show: a ``.git``
folder, a virtual environment under an unusual name (``env``, found by its ``pyvenv.cfg``),
``node_modules``, a ``.gitignore`` with a negation, a nested ``.gitignore`` that ignores a
secret and re-includes a file its parent ignored, and a binary file.
"""

import os
import shutil
from pathlib import Path

import pytest

FILES: dict[str, str | bytes] = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n__pycache__/\n",
    "README.md": "# shop\n\nRun `python -m shop` to start the shop.\n",
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\n',
    "src/shop/__init__.py": '"""The shop."""\n',
    "src/shop/cart.py": (
        "from shop.prices import price_of\n"
        "\n"
        "\n"
        "class Cart:\n"
        "    def __init__(self):\n"
        "        self.items = []\n"
        "\n"
        "    def add(self, item):\n"
        "        self.items.append(item)\n"
        "\n"
        "    def total(self):\n"
        "        return sum(price_of(item) for item in self.items)\n"
    ),
    "src/shop/prices.py": (
        "PRICES = {'apple': 3, 'pear': 4}\n"
        "\n"
        "\n"
        "def price_of(item):\n"
        "    # TODO: discounts\n"
        "    return PRICES[item]\n"
    ),
    "src/shop/.gitignore": ".env\n!debug.log\n",
    "src/shop/.env": "API_KEY=price_of-secret\n",
    "src/shop/debug.log": "price_of called\n",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n"
        "\n"
        "\n"
        "def test_total():\n"
        "    cart = Cart()\n"
        "    cart.add('apple')\n"
        "    assert cart.total() == 3\n"
    ),
    "tests/test_prices.py": (
        "from shop.prices import price_of\n\n\ndef test_price_of():\n"
        "    assert price_of('pear') == 4\n"
    ),
    "logs/server.log": "price_of failed\n",
    "logs/keep.log": "price_of kept\n",
    "build/lib/shop/cart.py": "def price_of(): pass\n",
    "src/shop/__pycache__/cart.cpython-311.pyc": b"\x00\x01price_of\x00",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR price_of",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/hooks/pre-commit.py": "price_of = 'in a hook'\n",
    "env/pyvenv.cfg": "home = /usr/bin\n",
    "env/lib/python3.11/site-packages/shop.py": "def price_of(): pass\n",
    "node_modules/left-pad/index.py": "price_of = 1\n",
}
"""Every file of the project, by path, and its content."""

VISIBLE_PY = [
    "src/shop/__init__.py",
    "src/shop/cart.py",
    "src/shop/prices.py",
    "tests/test_cart.py",
    "tests/test_prices.py",
]
"""The Python files the tools show, sorted: no build/, env/, node_modules/ or .git/."""


def make_project(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    """Write ``files`` (default: ``FILES``) under ``root``; return ``root``."""
    for name, content in (FILES if files is None else files).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
    return root


@pytest.fixture(scope="module", name="project")
def shared_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``project``: ``FILES`` in a folder written once for the tests of a module that only search
    it (import ``shared_project`` to have it)."""
    return make_project(tmp_path_factory.mktemp("project"))


def emptied(root: Path) -> Path:
    """``root``, made empty (created if need be): one folder for every example of a property test.

    claw asks git for the user's excludes file once per folder searched (chapter 11's
    ``global_excludes_file``): a new folder for each example would start git each time.
    """
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    return root


@pytest.fixture(autouse=True)
def no_personal_git_config(tmp_path_factory: pytest.TempPathFactory,
                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Keep this machine's git configuration out of the search tools' tests.

    The walk reads the user's global excludes file, as git does; a test must not depend on
    what the person running it ignores everywhere.
    """
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # one empty folder for the session (no test writes there), not a new one for each test
    empty = tmp_path_factory.getbasetemp() / "xdg-empty"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(empty))
