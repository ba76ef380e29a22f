"""The ``claw`` command's settings, cost meter, budget and run summary (chapter 17).

``assemble.py`` stays a thin builder: it asks ``configure`` for the settings in force and gives
the agent a ``CostTracker`` and a ``Budget`` with ``start_costs``; after each run, each front
door prints the ``RunSummary`` line that ``Claw.summary`` writes. Until chapter 17 is written
(a stub raises ``Todo``), ``configure`` falls back to what chapter 16's claw did: its options
and the project's own settings file, no cost, no summary. ``claw config`` is ``config_main``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import httpx

from .cost import Budget, CostTracker
from .display import terminal_text, warner, warning_line
from .errors import SettingsError
from .models import CACHE_FILE, ModelCatalog
from .private import claw_home
from .settings import (
    OPENROUTER_URL,
    LoadedSettings,
    Settings,
    effective,
    explain,
    load_settings,
    nest,
)
from .todo import Todo, if_written

if TYPE_CHECKING:
    from .context import ContextWindow

USER_INSTRUCTIONS = Path("AGENTS.md")
"""The user's own instruction file, relative to claw's own folder (``claw_home``; chapter 8)."""


@dataclass
class Configured:
    """The settings ``claw`` runs with; ``loaded`` is ``None`` before chapter 17 is written."""

    settings: Settings
    loaded: LoadedSettings | None


def command_line_options(arguments: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line, as settings key paths (``None``: not given)."""
    return {
        "model": arguments.model,
        "base_url": arguments.base_url,
        "max_steps": arguments.max_steps,
        "max_cost": arguments.max_cost,
        "summary": arguments.summary,
        "web": arguments.web,
        "permissions.defaultMode": arguments.permission_mode,
        "permissions.allow": arguments.allowed_tools,
        "permissions.deny": arguments.disallowed_tools,
    }


def configure(
    arguments: argparse.Namespace,
    root: Path,
    *,
    trusted: bool,
    err: TextIO,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    check_rule: Callable[[str, str], None] | None = None,
) -> Configured:
    """The settings for this run: all six layers, or chapter 16's options if 17 is not written.

    Raises ``SettingsError`` (a ``ClawError``) when a layer is wrong: claw stops before it
    sends anything. Each unknown key is a warning on ``err``.
    """
    environ = environ if environ is not None else os.environ
    options = command_line_options(arguments)
    loaded = if_written(
        "ch17",
        lambda: load_settings(
            root,
            home=home,
            environ=environ,
            options=options,
            trusted=trusted,
            warn=warner(err),
            check_rule=check_rule,
            settings_flag=arguments.settings,
        ),
    )
    if isinstance(loaded, Todo):  # chapter 16's claw: the options only
        given = {key: value for key, value in options.items() if value is not None}
        given.setdefault("base_url", environ.get("CLAW_BASE_URL") or OPENROUTER_URL)
        return Configured(Settings.model_validate(nest(given)), None)
    return Configured(loaded.settings, loaded)


def rule_checker() -> Callable[[str, str], None]:
    """Chapter 13's check of one rule in one list, for ``load_settings``'s ``check_rule``."""
    from .permissions import Decision, check_rule, parse_rule

    def check(list_name: str, rule: str) -> None:
        check_rule(parse_rule(rule), Decision(list_name))

    return check


def models_url(settings: Settings) -> str | None:
    """Where the model list is read: the setting, OpenRouter's for OpenRouter, else nowhere."""
    if settings.models_url:
        return settings.models_url
    if settings.base_url.rstrip("/") == OPENROUTER_URL:
        return f"{OPENROUTER_URL}/models"
    return None


@dataclass
class Costs:
    """The cost meter of a ``claw`` session, and its budget if it has one."""

    tracker: CostTracker
    budget: Budget | None


async def start_costs(
    agent: Any, settings: Settings, *, err: TextIO, home: Path | None = None
) -> Costs:
    """Give ``agent`` (a ``PreflightAgent``) a tracker, and the budget of ``settings``.

    The model list is read (or taken from its cache) when ``models_url`` says where; if it
    cannot be, claw says so and counts only the costs the provider reports.
    """
    catalog: ModelCatalog | None = None
    url = models_url(settings)
    if url is not None:
        catalog = ModelCatalog(url, claw_home(home) / CACHE_FILE)
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as client:
            await catalog.load(client)
        if catalog.problem is not None:
            err.write(warning_line(catalog.problem))
    tracker = CostTracker(settings.model, catalog)
    agent.sink.add(tracker)
    agent.sink.add(tracker.count_subagents)  # chapter 21: a child's calls are the session's
    budget = None
    if settings.max_cost is not None:
        budget = Budget(settings.max_cost, tracker)
        agent.preflight.append(budget.check)
        from .subagents import limit_children

        limit_children(agent, budget)  # chapter 21: a child stops when the session's is spent
    return Costs(tracker, budget)


def start_context(
    agent: Any, settings: Settings, provider: Any, costs: Costs
) -> ContextWindow | None:
    """Keep ``agent``'s history inside the model's window (chapter 18); ``None``: no window.

    The window is the ``context.window`` setting, or the model list's ``context_length`` for
    the model. With neither, claw has no window to keep to and does not compact.
    """
    from .context import ContextWindow, message_chars, summarize_with
    from .types import UserMessage

    if isinstance(if_written("ch18", lambda: message_chars(UserMessage(content="?"))), Todo):
        return None  # claw behaves as chapter 17's did
    info = costs.tracker.info()
    window = settings.context.window or (info.context_length if info is not None else None)
    if window is None:
        return None
    context = ContextWindow(
        window,
        summarize_with(provider, costs.tracker.count_summary),
        threshold=settings.context.compact_threshold,
        keep=settings.context.keep_turns,
        model=settings.model,
    )
    context.attach(agent)
    return context


def config_main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``claw config [--explain KEY]``: the settings in force here, or where KEY's values come from.

    0 when done, 1 when a settings layer is wrong (the message says where), 2 for a key the
    settings do not have.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    parser = argparse.ArgumentParser(
        prog="claw config", description="Show the settings claw uses in this folder."
    )
    parser.add_argument("--explain", metavar="KEY", help="which layer set each value of KEY")
    arguments = parser.parse_args(argv)
    from .trust import is_trusted, trust_file

    root = Path.cwd()
    try:
        trusted = is_trusted(root, trust_file())
        loaded = load_settings(
            root,
            trusted=trusted,
            warn=warner(err),
        )
    except SettingsError as error:
        print(f"claw: {terminal_text(str(error))}", file=err)
        return 1
    if not trusted and any(layer.name in ("project", "local") for layer in loaded.layers):
        print(
            "claw: note: this folder is not trusted: only its deny and ask rules are used",
            file=err,
        )
    if arguments.explain is None:
        out.write(effective(loaded) + "\n")
        return 0
    try:
        lines = explain(loaded, arguments.explain)
    except KeyError:
        print(f"claw: the settings have no key {arguments.explain!r}", file=err)
        return 2
    out.write("".join(terminal_text(line) + "\n" for line in lines))
    return 0
