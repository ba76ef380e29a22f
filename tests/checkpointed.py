"""Helpers for chapter 27's tests: a workspace with claw's file tools and its checkpoints.

``Workspace`` runs a tool call the way the loop does for the checkpoints: a ``ToolCalled`` to
the observers, the tool, a ``ToolResult``; ``prompt`` starts a prompt as ``PreflightAgent``
does. ``tree`` reads a folder's files as bytes (``.git`` left out), to compare whole states.
"""

import itertools
import os
import subprocess
from pathlib import Path

from claw.checkpoints import Checkpoints
from claw.events import ToolCalled, ToolResult
from claw.registry import default_tools
from claw.sessions import header
from claw.transcript import encode
from claw.types import Message, ToolOutput, UserMessage

GIT_USER = ["-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
"""Who the tests' own commits are by (the machine may have no git identity)."""


def git(root: Path, *arguments: str) -> str:
    """Run git in ``root`` as the user would; its output."""
    done = subprocess.run(
        ["git", *GIT_USER, *arguments], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (``.git`` left out), by its relative path, with its bytes."""
    found: dict[str, bytes] = {}
    for folder, names, files in os.walk(root):
        names[:] = [name for name in names if name != ".git"]
        for name in files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


class Workspace:
    """A workspace folder, claw's tools in it, and the checkpoints of one session."""

    def __init__(
        self, root: Path, sessions: Path, *, git: bool, limit: int | None = None
    ) -> None:
        """Tools in ``root``; the session's transcript and checkpoints in ``sessions``.

        ``git`` says whether ``root`` is a repository, so that a temporary folder that happens
        to lie inside one cannot change what a test checks.
        """
        self.root = root
        self.git = git
        self.tools = default_tools(root)
        sessions.mkdir(parents=True, exist_ok=True)
        self.transcript = sessions / "session-1.jsonl"
        if not self.transcript.exists():
            self.transcript.write_bytes(encode(header("session-1", root)))
        self.limit = limit
        self.checkpoints = self.reopen()
        self.history: list[Message] = []
        self.ids = itertools.count(1)

    def reopen(self) -> Checkpoints:
        """The checkpoints as a new claw would find them (after a crash, or on --resume)."""
        folder = self.transcript.with_suffix(".checkpoints")
        if self.limit is None:
            return Checkpoints(folder, self.root, self.transcript, use_git=self.git)
        return Checkpoints(folder, self.root, self.transcript, limit=self.limit, use_git=self.git)

    async def prompt(self, text: str) -> None:
        """Start prompt ``text``, as the agent does, and put it in the history."""
        await self.checkpoints.begin(text, len(self.history))
        self.history.append(UserMessage(content=text))

    async def call(self, name: str, **arguments: object) -> ToolOutput:
        """One call of tool ``name``, seen by the checkpoints as the loop shows it."""
        call_id = f"call-{next(self.ids)}"
        self.checkpoints(ToolCalled(1, call_id, name, dict(arguments)))
        output = await self.tools[name].run(dict(arguments))
        self.checkpoints(ToolResult(1, call_id, name, output.content, output.is_error, 0.0))
        return output

    async def read(self, path: str) -> None:
        """``read`` the file, as the model must before it replaces or edits it."""
        if (self.root / path).exists():
            await self.tools["read"].run({"path": path})
