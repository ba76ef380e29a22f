"""Which servers to start: ``.mcp.json`` in Claude Code's format, and the user's consent.

The file, at the project's root::

    {"mcpServers": {"fs": {"command": "python", "args": ["fs_server.py"], "env": {"ROOT": "."}}}}

A ``.mcp.json`` comes with the repository, so its commands are whoever wrote the repository's.
Starting them is running their code: claw starts none unless the user said so for this run
(``claw --mcp``), as Claude Code asks before it uses a project's servers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ClawError
from ..types import ToolSet
from .client import McpClient, McpError, ServerSpec
from .tools import NAME_PART, McpTool, claw_part

CONFIG_FILE = ".mcp.json"
"""The project's server list, where Claude Code keeps its project-scoped servers."""


class ConfigError(ClawError, ValueError):
    """A ``.mcp.json`` claw cannot use; the message names the file and the problem."""


def load_config(path: Path) -> list[ServerSpec]:
    """The stdio servers ``path`` lists, in the file's order; ``[]`` if there is no file.

    ``ConfigError`` for a file that is not JSON, has no ``mcpServers`` object, or a server
    without a ``command`` string, ``args`` that are not strings or ``env`` that is not an
    object of strings. A server with another ``type`` (``http``, ``sse``) is refused too:
    claw speaks only stdio.
    """
    # region ch23: json.loads; check every entry; build ServerSpec(name, command, tuple(args), env)
    # more: raise ConfigError(f"{path}: ...") naming the server; missing file -> []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data: Any = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"{path}: not valid JSON ({error})") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: expected an object with "mcpServers": {{...}}')
    specs = []
    for name, entry in servers.items():
        if isinstance(entry, dict) and entry.get("type", "stdio") != "stdio":
            raise ConfigError(
                f"{path}: server {name!r} is of type {entry['type']!r}; claw speaks only stdio"
            )
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            raise ConfigError(f'{path}: server {name!r} needs a "command" string')
        args = entry.get("args", [])
        env = entry.get("env", {})
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise ConfigError(f'{path}: server {name!r}: "args" must be a list of strings')
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f'{path}: server {name!r}: "env" must map names to strings')
        specs.append(ServerSpec(name, entry["command"], tuple(args), dict(env)))
    return specs
    # endregion


def project_servers(
    root: Path, *, enabled: bool, warn: Callable[[str], None]
) -> list[ServerSpec]:
    """The servers of ``root``'s ``.mcp.json`` that claw may start.

    All of them if ``enabled`` (the user ran ``claw --mcp``); otherwise none, and if the file
    names any, ``warn`` says which were not started and how to start them. A file with a
    problem raises ``ConfigError`` when enabled, and is only a warning when not.
    """
    # region ch23: load_config; if not enabled and there are servers, warn and return []
    # more: the warning names the servers and says "--mcp"; not enabled: a ConfigError is a warning
    try:
        specs = load_config(root / CONFIG_FILE)
    except ConfigError as error:
        if enabled:
            raise
        warn(f"{error}; no MCP server was started")
        return []
    if specs and not enabled:
        names = ", ".join(spec.name for spec in specs)
        warn(
            f"{CONFIG_FILE} names MCP servers ({names}); claw did not start them, since each "
            "runs a command from this folder: run claw with --mcp to start them"
        )
        return []
    return specs
    # endregion


class McpServers:
    """The running servers of one claw session, and their tools in the agent's ``ToolSet``."""

    def __init__(self, cwd: Path, warn: Callable[[str], None], **options: float) -> None:
        self.cwd = cwd
        self.warn = warn
        self.options = options
        self.clients: list[McpClient] = []
        self.tools: ToolSet | None = None
        self.parts: dict[str, dict[str, str]] = {}
        """By server: each tool's part of its claw name (``claw_part``), kept once given."""

    async def start(self, specs: list[ServerSpec], tools: ToolSet) -> None:
        """Start each server and add its tools to ``tools``.

        A server that does not start, or a tool claw cannot use, is a warning; the others go
        on. New tools a server announces later are added as they come.
        """
        self.tools = tools
        for spec in specs:
            client = McpClient(spec, self.cwd, warn=self.warn, **self.options)
            try:
                await client.start()
            except McpError as error:
                self.warn(str(error))
                continue
            self.clients.append(client)
            client.on_tools_changed = self.add_tools
            self.add_tools(client)

    def add_tools(self, client: McpClient) -> None:
        """Add the tools of ``client`` that ``tools`` does not have yet.

        A tool keeps the name part it was first given. New ones get theirs (``claw_part``)
        in two rounds: the names claw can use as they are, then the others, so a name that
        is valid as it is never gives way to a mapped one listed before it.
        """
        assert self.tools is not None
        parts = self.parts.setdefault(client.name, {})
        valid_first = sorted(client.tools, key=lambda remote: not NAME_PART.fullmatch(remote.name))
        for remote in valid_first:
            if remote.name not in parts:
                parts[remote.name] = claw_part(remote.name, set(parts.values()))
        for remote in client.tools:
            try:
                tool = McpTool(client, remote, parts[remote.name])
            except ValueError as error:
                self.warn(f"MCP server {client.name!r}: tool skipped: {error}")
                continue
            if tool.name not in self.tools:
                self.tools.add(tool)

    async def close(self) -> None:
        """Stop every server, and every process each one started."""
        for client in self.clients:
            await client.close()
        self.clients.clear()
