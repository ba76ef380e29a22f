"""The outcomes recorded from Claude Code itself (``make oracle``, ``oracle/``), as tests read them.

Each table is ``tests/data/claude-code-VERSION-TABLE.json``: the version it was recorded from and
its scenarios by name. The tests compare claw with them; no Claude Code runs here.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

VERSION = "2.1.332"
"""The Claude Code the recordings come from."""


@cache
def recording(table: str) -> dict[str, dict[str, Any]]:
    """The scenarios of one recorded table (``permissions``, ``hooks``), by name."""
    path = Path(__file__).parent / "data" / f"claude-code-{VERSION}-{table}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["claude_code"] == VERSION, f"{path.name} was recorded from {data['claude_code']}"
    scenarios: dict[str, dict[str, Any]] = data["scenarios"]
    return scenarios
