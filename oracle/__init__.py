"""The real Claude Code as the oracle: record what the pinned version decides (issue 38).

Nothing here runs in the test suite or in CI. ``make oracle`` runs ``python -m oracle.record``
as root on a machine with npm: every scenario of the tables goes through the real program, in a
network namespace of its own that has only loopback, against a scripted model server
(``oracle.model``), and the outcomes (never the program's words) are written to the committed
data files the tests compare claw with (``tests/data/claude-code-<version>-permissions.json``
and ``-hooks.json``).

- ``oracle.model``: the scripted Anthropic-compatible Messages server.
- ``oracle.prompt``: the permission-prompt MCP tool that tells "ask" from "deny".
- ``oracle.sandbox``: the namespaces, the unprivileged user, the scratch folders (a private tmpfs
  at a fixed path, so two recorders can run at once).
- ``oracle.runner``: runs one session of scenarios through Claude Code and reads the outcomes;
  its ``run_alone`` is how every table runs Claude Code (and ends what it leaves running).
- ``oracle.permissions``: the permission scenario table (chapter 13).
- ``oracle.hooks``: the hook scenario table (chapter 15), and how one runs.
- ``oracle.settings``: the settings and trust scenario table (chapters 17 and 16), and how
  one runs.
- ``oracle.printmode``: print mode's result and stream-json shapes (chapter 19), and the
  transcript lines they leave; ``oracle.sessions``: the session folders' names (chapter 22).
- ``oracle.record``: records them all and reports what changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
"""The repository this package lives in."""

VERSION = "2.1.332"
"""The pinned Claude Code version whose decisions are recorded."""

CLAUDE = Path("/work/cc/node_modules/@anthropic-ai/claude-code/bin/claude.exe")
"""Where ``npm install @anthropic-ai/claude-code@<VERSION>`` in /work/cc put the binary
(``--claude`` on the command line of ``oracle.record`` names another)."""

# The suite's wire builders (tests/anthropic_wire.py) build the scripted model's replies.
if str(REPOSITORY / "tests") not in sys.path:
    sys.path.append(str(REPOSITORY / "tests"))
