"""The exchange chapter 30's page shows: the official ACP client and claw's agent, line by line.

``exchange`` runs it in this process (the loopback server is the model): the client initializes,
opens a session, and asks claw to fix a typo; claw reads the file, asks permission to edit it
(the client allows it once), edits it, and answers. Every line on the pipes, both ways, is
returned with the session id and the project's folder replaced by fixed names, so that the
lines are the same on every run. ``python -m tests.acp_transcript`` writes them to
``TRANSCRIPT``, which the page includes; ``test_acp_page_transcript_is_what_claw_sends_now``
checks that the file is what claw sends now.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import acp
import pytest

from clawbook.harness.loopback import LoopbackServer

TRANSCRIPT = Path(__file__).resolve().parent / "data" / "acp-exchange.txt"
"""The page's transcript: one line per message, ``>`` client to claw, ``<`` claw to client."""

PROJECT = "/home/you/greeter"
SESSION = "3f0c5e2a-session-id"


async def exchange(
    server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """Run the exchange in ``project``: every line, normalised, with its direction."""
    from acp_client import editor
    from claw_command import calls, says

    (project / "greet.py").write_text('print("helo, world")\n')
    edit = {"path": "greet.py", "old_string": "helo", "new_string": "hello"}
    server.add(
        calls("read", {"path": "greet.py"}, "call-1"),
        calls("edit", edit, "call-2"),
        says("Fixed: it says hello now."),
    )
    async with editor(server, monkeypatch) as (client, _, pipes):
        session = await client.new_session(cwd=str(project), mcp_servers=[])
        await client.prompt(
            session_id=session.session_id, prompt=[acp.text_block("Fix the typo in greet.py")]
        )
    lines = []
    for who, line in pipes.lines:
        line = line.replace(session.session_id, SESSION).replace(str(project), PROJECT)
        lines.append(("> " if who == "client" else "< ") + json.dumps(json.loads(line)))
    return lines


def main() -> None:
    """Write the transcript (run from the repository's root with ``CLAW_IMPL=solution``)."""
    sys.path.insert(0, str(Path(__file__).parent))
    os.environ.setdefault("CLAW_CONFIG_DIR", tempfile.mkdtemp())
    with (
        tempfile.TemporaryDirectory() as folder,
        LoopbackServer() as server,
        pytest.MonkeyPatch.context() as monkeypatch,
    ):
        monkeypatch.setattr(os, "fsync", lambda fd: None)
        lines = asyncio.run(exchange(server, Path(folder).resolve(), monkeypatch))
    TRANSCRIPT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} lines to {TRANSCRIPT}")


if __name__ == "__main__":
    main()
