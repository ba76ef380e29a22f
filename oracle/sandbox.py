"""Where Claude Code runs: a network namespace with only loopback, an unprivileged user.

The scratch folders are at fixed paths, so the rules of a scenario can name them.

``enter`` re-executes the recorder under ``unshare --net --mount`` (as root), brings ``lo`` up and
checks that a connection to a public address fails before anything runs, and mounts a tmpfs of
its own on ``ROOT``: two recorders at once (two tables) each see their own scratch folders at
the same fixed path, and neither can write into the other's. Claude Code then runs as
``nobody`` (it refuses ``bypassPermissions`` to root) through ``setpriv``, with a scratch
``HOME``, in the scratch project.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path("/tmp/claw-oracle")
"""The scratch folder: ``project``, ``home`` and ``outside`` are made afresh for each session."""
PROJECT = ROOT / "project"
HOME = ROOT / "home"
OUTSIDE = ROOT / "outside"
USER = 65534
"""The unprivileged user (and group) Claude Code runs as: ``nobody``."""

MARK = "CLAW_ORACLE_IN_NAMESPACE"
PUBLIC = ("1.1.1.1", 443)
"""An address outside that must be unreachable from inside."""


class SandboxError(RuntimeError):
    """The namespace cannot be made, or it leaks."""


def enter(argv: list[str]) -> None:
    """Re-execute this program in new network and mount namespaces unless already inside.

    Returns only inside the namespaces, with ``lo`` up, the outside unreachable and ``ROOT`` a
    private tmpfs (``private_scratch``); the outer process exits with the inner one's status.
    Raises ``SandboxError`` when that cannot be.
    """
    if os.environ.get(MARK) != "1":
        if os.geteuid() != 0:
            raise SandboxError("run it as root: it makes a network namespace (unshare --net)")
        command = ["unshare", "--net", "--mount", "--", sys.executable, *argv]
        status = subprocess.call(command, env={**os.environ, MARK: "1"})
        raise SystemExit(status)
    up = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, text=True)
    if up.returncode:
        raise SandboxError(f"cannot bring loopback up in the namespace: {up.stderr.strip()}")
    check_isolated()
    private_scratch()


def entered(module: str, argv: list[str] | None, doing: str = "run") -> bool:
    """``enter`` for ``python -m module ARGV`` (``sys.argv``'s when ``argv`` is ``None``).

    ``False`` once it has said on stderr why it cannot (``cannot run: ...``), for the caller's
    ``main`` to return 2.
    """
    try:
        enter(["-m", module, *(sys.argv[1:] if argv is None else argv)])
    except SandboxError as error:
        print(f"cannot {doing}: {error}", file=sys.stderr)
        return False
    return True


def private_scratch() -> None:
    """Mount a tmpfs of this namespace's own on ``ROOT`` (``unshare --mount`` keeps it private).

    Raises ``SandboxError`` when it cannot be mounted.
    """
    ROOT.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "mode=755,size=512m", "claw-oracle", str(ROOT)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode:
        raise SandboxError(f"cannot mount a private scratch folder: {mounted.stderr.strip()}")


def check_isolated() -> None:
    """Fail unless a connection to a public address fails and loopback works."""
    with socket.socket() as probe:
        probe.settimeout(3)
        try:
            probe.connect(PUBLIC)
        except OSError:
            pass
        else:
            raise SandboxError(f"{PUBLIC[0]} is reachable: not an isolated namespace")
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.connect(server.getsockname())


def lay_out(files: dict[str, str], settings: dict[str, object] | None, trusted: bool) -> None:
    """Make the scratch folders afresh.

    ``files`` (paths under ROOT), the project's ``.claude/settings.json`` and the user's
    ``~/.claude.json`` with the trust record (when ``trusted``).
    """
    shutil.rmtree(ROOT, ignore_errors=True)
    for folder in (PROJECT, HOME, OUTSIDE):
        folder.mkdir(parents=True)
    for name, content in files.items():
        path = ROOT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    if settings is not None:
        (PROJECT / ".claude").mkdir(exist_ok=True)
        (PROJECT / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    state: dict[str, object] = {"hasCompletedOnboarding": True, "numStartups": 3}
    if trusted:
        state["projects"] = {str(PROJECT): {"hasTrustDialogAccepted": True, "allowedTools": []}}
    (HOME / ".claude.json").write_text(json.dumps(state, indent=2))
    os.chmod(ROOT, 0o755)
    for top, _dirs, names in os.walk(ROOT):
        os.chown(top, USER, USER)
        for name in names:
            os.chown(os.path.join(top, name), USER, USER)


def as_user(command: list[str]) -> list[str]:
    """``command``, run as the unprivileged user with no supplementary groups."""
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", *command]
