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
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from budget import QUICK, examples

from clawbook.harness.loopback import LoopbackServer

pytest_plugins = ["pytester"]

TOOLING = Path(__file__).parent / "tooling"
MEMORY = Path("/dev/shm")
"""A file system in memory (Linux), where a folder is made and removed in microseconds."""
MEMORY_ROOM = 2**30
"""The free bytes it must have to hold the tests' folders: a container's (64 MB) may not."""
TEMPROOT_ENV = "PYTEST_DEBUG_TEMPROOT"
"""Where pytest makes its ``pytest-of-<user>`` folder of runs (its ``tmp_path`` and the rest)."""


def memory_with_room() -> Path | None:
    """``MEMORY``, when this process may write there and it has ``MEMORY_ROOM`` free."""
    try:
        if not os.access(MEMORY, os.W_OK | os.X_OK):
            return None
        room = os.statvfs(MEMORY)
    except OSError:
        return None
    return MEMORY if room.f_bavail * room.f_frsize >= MEMORY_ROOM else None


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
    # never walked again by a garbage collection while the tests run. (Not collected first:
    # walking all of it once cost 0.05-0.15 s a run, to free the little garbage collection left.)
    gc.freeze()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Every test's temporary folders (``tmp_path``, claw's folder) in memory where there is one.

    Nearly every test makes a folder or two, and claw writes (and syncs) its session files in
    one: on a disk, a busy machine took 0.3-1 ms a folder, as long again for pytest to remove
    an old run's folders at the end of a later run, and about 5 ms a sync. In memory the folders
    are the same, with pytest's naming and its keeping of the last three runs; ``--basetemp``
    and ``PYTEST_DEBUG_TEMPROOT`` still choose, and without a ``/dev/shm`` with room nothing
    changes. The run's folder is made here, before any fixture can ask for it, and the
    variable is set only while it is made, so no process a test starts inherits it.
    """
    factory = getattr(session.config, "_tmp_path_factory", None)  # pytest's, as tmp_path's
    memory = memory_with_room()
    if factory is None or memory is None or TEMPROOT_ENV in os.environ:
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TEMPROOT_ENV, str(memory))
        factory.getbasetemp()


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
    # (A string's prefix, not ``Path.parents``: that cost 0.17 ms a test, every run.)
    tooling = f"{TOOLING}{os.sep}"
    for item in items:
        if str(item.path).startswith(tooling) and not item.get_closest_marker("timeout"):
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
