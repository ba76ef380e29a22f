"""No module of ``solution/`` or ``clawbook/`` is over 900 lines (issue 42): one that long does
two jobs (``permissions.py`` was a shell parser and a policy; ``providers/openrouter.py`` an HTTP
client for two providers and one provider).
"""

from __future__ import annotations

from pathlib import Path

from clawbook.harness.runner import ROOT

MOST_LINES = 900


def too_long(root: Path, tree: str = "clawbook") -> dict[str, int]:
    """The modules under ``tree`` over ``MOST_LINES`` lines, with their line counts."""
    counts = {
        path.relative_to(root).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((root / tree).rglob("*.py"))
    }
    return {name: count for name, count in counts.items() if count > MOST_LINES}


def test_module_sizes_no_module_is_over_900_lines(tmp_path):
    assert too_long(ROOT) == {}
    assert too_long(ROOT, "solution") == {}
    (tmp_path / "clawbook").mkdir()
    (tmp_path / "clawbook" / "big.py").write_text("x = 1\n" * (MOST_LINES + 1))
    (tmp_path / "clawbook" / "fits.py").write_text("x = 1\n" * MOST_LINES)
    assert too_long(tmp_path) == {"clawbook/big.py": MOST_LINES + 1}
