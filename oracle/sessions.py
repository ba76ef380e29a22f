"""The session folders Claude Code names (chapter 22): long paths, non-Latin paths.

Each scenario runs print mode's plain answer (``oracle.printmode``) in a folder below the
scratch project and records the name of the folder Claude Code kept the session in, under
``~/.claude/projects``, with the path it was named after. The names of paths over 200 characters
end in a short hash; the table has paths on both sides of that limit, and paths whose characters
are not ASCII, some outside the Basic Multilingual Plane (an emoji is two UTF-16 code units).

Run scenarios by hand, as root::

    python -m oracle.sessions [NAME ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from oracle import CLAUDE
from oracle.printmode import PrintScenario, run_print_scenario
from oracle.sandbox import PROJECT, entered

BASE = len(str(PROJECT)) + 1
"""The characters of the project's path and the slash before a scenario's folder."""


def padded(total: int, letter: str = "d") -> str:
    """A folder below the project whose absolute path is ``total`` characters long.

    Split into components of at most 100 characters (a component's limit is 255 bytes).
    """
    cut = ((letter * 99 + "/") * 10)[: total - BASE]
    return cut[:-1] + letter if cut.endswith("/") else cut


FOLDERS: dict[str, str] = {
    "session-folder-project": "",
    "session-folder-punctuation": "my_app.v2 (copy)",
    "session-folder-cyrillic": "Проект",
    "session-folder-cjk": "项目",
    "session-folder-emoji": "app😀x",
    "session-folder-accents": "café-naïve",
    "session-folder-length-199": padded(199),
    "session-folder-length-200": padded(200),
    "session-folder-length-201": padded(201),
    "session-folder-length-256": padded(256),
    "session-folder-length-300": padded(300),
    "session-folder-long-cyrillic": "Ж" * 90 + "/" + "Ж" * 90 + "/" + "Ж" * 40,
    "session-folder-long-emoji": "😀" * 50 + "/" + "😀" * 50 + "/x",
}
"""The folders below the project each scenario runs in."""


def record_folder(name: str, claude: Path) -> dict[str, Any]:
    """Run the plain answer in ``FOLDERS[name]``; the path and the folder name Claude Code made."""
    run = run_print_scenario(PrintScenario(name, cwd=FOLDERS[name]), claude)
    transcript = run.outcome.get("transcript")
    cwd = str(PROJECT / FOLDERS[name]) if FOLDERS[name] else str(PROJECT)
    return {
        "cwd": cwd,
        "exit": run.outcome["exit"],
        "folder": transcript["folder"] if transcript else None,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the named folder scenarios (or all) and print what they recorded."""
    parser = argparse.ArgumentParser(prog="python -m oracle.sessions")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--claude", type=Path, default=CLAUDE)
    arguments = parser.parse_args(argv)
    if not entered("oracle.sessions", argv):
        return 2
    for name in arguments.names or list(FOLDERS):
        print(f"{name}: {json.dumps(record_folder(name, arguments.claude), ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
