"""Where the suite's tests make their folders (``tests/conftest.py``): in memory, given room.

Every test of the agent makes a folder or two (``tmp_path``, claw's own folder), and claw writes
and syncs its session files in one; on a disk that cost milliseconds a test on a busy machine
(making, syncing, and pytest removing an old run's folders). These tests run under the suite's
own conftest, as every test of the agent does.
"""

import os
from pathlib import Path

import conftest
import pytest

SHM = Path("/dev/shm")


def _shm_has_room() -> bool:
    """A writable ``/dev/shm`` with a gigabyte free, worked out here, not by the conftest."""
    try:
        room = os.statvfs(SHM)
    except OSError:
        return False
    return os.access(SHM, os.W_OK | os.X_OK) and room.f_bavail * room.f_frsize >= 2**30


def test_a_tests_folders_are_in_memory_and_no_process_it_starts_is_told(
    tmp_path: Path, claw_config_dir: Path
) -> None:
    if not _shm_has_room():
        pytest.skip("no /dev/shm with room here: the folders stay in the system's temporary one")
    assert SHM in tmp_path.parents
    assert SHM in claw_config_dir.parents
    assert Path(os.environ["CLAW_CONFIG_DIR"]) == claw_config_dir
    # pytest was told where to make the run's folder only while it made it.
    assert "PYTEST_DEBUG_TEMPROOT" not in os.environ


def test_without_room_in_memory_the_folders_stay_where_pytest_puts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conftest, "MEMORY", tmp_path / "no-such-folder")
    assert conftest.memory_with_room() is None
    monkeypatch.setattr(conftest, "MEMORY", tmp_path)
    monkeypatch.setattr(conftest, "MEMORY_ROOM", 2**70)  # more than any disk has free
    assert conftest.memory_with_room() is None
    monkeypatch.setattr(conftest, "MEMORY_ROOM", 1)
    assert conftest.memory_with_room() == tmp_path
