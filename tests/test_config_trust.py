"""ch17 · Trust covers each settings file a repository brings, with everything chapter 17 reads.

Chapter 17 makes both of the project's files full layers: their hooks run, and their
``base_url`` receives your API key. A repository that commits either one alone is still asked
about: each row of ``brought.py`` for this chapter plants one file, and the real ``claw``
command, untrusted and without a terminal, does not do its harm, while ``--trust-project`` does.
"""

from pathlib import Path

import pytest
from brought import Row, attack, rows

from claw.settings import load_settings


@pytest.mark.parametrize("row", rows("ch17"))
def test_config_trust_covers_each_settings_file_a_repository_can_bring_alone(
    row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_settings(tmp_path, home=tmp_path, environ={})  # chapter 17's loader, before the command
    attack(row, tmp_path, monkeypatch)
