"""Shared test configuration.

The plugin ``clawbook.harness.pytest_plugin`` (loaded from pyproject.toml) picks the
implementation named by ``CLAW_IMPL`` and makes it importable as ``claw``.

``tests/tooling`` tests clawbook itself, not your agent. It is slow (it starts many pytest runs)
and tells a learner nothing, so it runs only with ``--tooling`` or when named on the command line;
``clawbook verify`` always runs it.
"""

import contextlib
import gc
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from budget import QUICK, examples

from clawbook.harness.loopback import LoopbackServer

pytest_plugins = ["pytester"]

TOOLING = Path(__file__).parent / "tooling"
_profile_loaded = False


def load_hypothesis_profile() -> None:
    """Hypothesis's settings for this suite; loaded before the first test file that uses it.

    No deadline: a property test's example is never failed for taking over 200 ms, which a busy
    machine makes any example do (the per-test limit still catches a loop). Property tests that
    name no count try Hypothesis's default (100) in CI and verify, and a tenth of it in the
    learner's quick loop (``tests/budget.py``). The quick loop does not shrink either: shrinking
    a failing example to the smallest can take a minute, which a learner's tools would take for
    an endless loop; the example found first is shown as it is.
    """
    global _profile_loaded
    if _profile_loaded:
        return
    from hypothesis import Phase, settings

    settings.register_profile("suite", deadline=None)
    settings.register_profile(
        "quick",
        deadline=None,
        max_examples=examples(100),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    settings.load_profile("quick" if QUICK else "suite")
    _profile_loaded = True
    # Hypothesis draws characters from tables of all of Unicode that it builds once per clone
    # (two seconds, ten on a busy machine; kept in .hypothesis/unicode_data). Built here, while
    # the tests are collected, no property test's time limit pays for them. (Its internals:
    # should they move, the tests build the tables themselves, as before.)
    with contextlib.suppress(Exception):
        from hypothesis.internal.charmap import charmap, intervals_from_codec

        charmap()
        intervals_from_codec("utf-8")


def pytest_collection_finish(session: pytest.Session) -> None:
    # No file of this run uses Hypothesis: its plugin would import it anyway at the end of the
    # run (a fifth of a second, a quarter of a small chapter's check) to print nothing.
    if "hypothesis" not in sys.modules:
        plugin = session.config.pluginmanager.get_plugin("hypothesispytest")
        if plugin is not None:
            session.config.pluginmanager.unregister(plugin)
    # Collection made most of what the run holds on to (modules, test items): frozen, it is
    # never walked again by a garbage collection while the tests run.
    gc.collect()
    gc.freeze()


def pytest_collectstart(collector: pytest.Collector) -> None:
    # Importing Hypothesis costs a fifth to half a second, a third of a small chapter's check,
    # so it is imported only for a test file that uses it, before the file's own import (whose
    # @settings take their defaults from the profile loaded then). Only the files a run
    # collects start a collection (pytest makes a Module of every file in the folder).
    if isinstance(collector, pytest.Module) and b"hypothesis" in collector.path.read_bytes():
        load_hypothesis_profile()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tooling", action="store_true", help="also run tests/tooling, the tests of clawbook"
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path != TOOLING or config.getoption("--tooling"):
        return None
    named = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    if any(path == TOOLING or TOOLING in path.parents for path in named):
        return None
    return True


TOOLING_TIMEOUT = 600


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The tooling tests run whole pytest sessions; the 10 s limit is for the agent's tests.
    for item in items:
        if TOOLING in Path(str(item.path)).parents and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(TOOLING_TIMEOUT))


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see ``clawbook/harness/loopback.py``).

    Script replies with ``server.add(...)``; read what clients sent in ``server.requests``.
    """
    with LoopbackServer() as running:
        yield running


@pytest.fixture(scope="session")
def claw_config_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder that holds every test's ``claw_config_dir``, one per test, numbered."""
    return tmp_path_factory.mktemp("claw-config")


_config_dir_numbers = itertools.count()


@pytest.fixture(autouse=True)
def claw_config_dir(claw_config_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """claw's own folder (``CLAW_CONFIG_DIR``), fresh for each test: sessions never land in ~/.claw.

    Every ``claw`` run records a session (chapter 22); without this, the tests of any chapter
    that runs the command would write transcripts into the real home folder. (Numbered here,
    not by ``mktemp``, which lists the whole temporary folder for every test.)
    """
    folder = claw_config_dirs / str(next(_config_dir_numbers))
    folder.mkdir(mode=0o700)  # as claw makes it: private (chapter 20), so claw says nothing
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(folder))
    return folder
