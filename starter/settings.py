"""claw's settings: one pydantic model, filled from six layers, each value traceable to its layer.

From lowest to highest, the layers are: the defaults written in ``Settings``; the user's
``settings.json`` in claw's own folder (``~/.claw``, or ``$CLAW_CONFIG_DIR``); the project's
``.claw/settings.json`` (committed, shared with the team); the project's
``.claw/settings.local.json`` (personal, ignored by git); ``CLAW_*`` environment variables; and
the command line (the file or JSON text ``--settings`` gives, then the options over it, among
them ``--allowed-tools`` and ``--disallowed-tools``). A value set in a higher layer replaces the
one below it; a list (permission rules, hooks) is merged across layers instead, so a ``deny``
rule from any layer still applies.
The rule that shapes this module: every file is checked by the same model before anything runs,
and a mistake is reported with the file, the key and what was expected, never silently ignored
and never half-applied.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import SettingsError
from .private import claw_home
from .settings_file import read_json_object
from .todo import Todo

OPENROUTER_URL = "https://openrouter.ai/api/v1"
"""OpenRouter's API (the same value as ``providers.openrouter.OPENROUTER_URL``)."""

USER_SETTINGS = Path("settings.json")
"""The user's settings, relative to claw's own folder (``claw_home``)."""
PROJECT_SETTINGS = Path(".claw") / "settings.json"
"""The project's shared settings, relative to the project's root (committed)."""
LOCAL_SETTINGS = Path(".claw") / "settings.local.json"
"""The project's personal settings, relative to the project's root (ignored by git)."""


class _Section(BaseModel):
    """A part of the settings: unknown keys are reported by ``unknown_keys``, not refused."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class PermissionSettings(_Section):
    """Chapter 13's rules, shaped like Claude Code's ``permissions`` object."""

    allow: list[str] = []
    """Rules for calls that run without asking."""
    ask: list[str] = []
    """Rules for calls that always ask first."""
    deny: list[str] = []
    """Rules for calls that never run; a deny from any layer wins."""
    default_mode: (
        Literal["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"] | None
    ) = Field(default=None, alias="defaultMode")
    """The permission mode when ``--permission-mode`` is not given (Claude Code's name)."""


class ContextSettings(_Section):
    """How chapter 18 manages the model's context window."""

    window: int | None = Field(default=None, ge=1)
    """The window in tokens; ``None`` takes it from the model list (``models.ModelInfo``)."""
    compact_threshold: float = Field(default=0.8, gt=0, le=1)
    """Compact when the next request would fill more than this fraction of the window."""
    keep_turns: int = Field(default=4, ge=1)
    """How many of the most recent turns compaction keeps as they are."""


class SandboxNetworkSettings(_Section):
    """Chapter 28's network rules, shaped like Claude Code's ``sandbox.network``."""

    allowed_domains: list[str] = Field(default=[], alias="allowedDomains")
    """Hosts sandboxed commands may reach through claw's proxy (``*.example.com`` patterns);
    none: no network at all."""


class SandboxFilesystemSettings(_Section):
    """Chapter 28's file rules, shaped like Claude Code's ``sandbox.filesystem``."""

    allow_write: list[str] = Field(default=[], alias="allowWrite")
    """Paths writable in the sandbox besides the workspace (``~`` and relative paths allowed)."""
    deny_read: list[str] = Field(default=[], alias="denyRead")
    """Paths masked in the sandbox, besides the secrets claw always masks."""


class SandboxSettings(_Section):
    """Chapter 28's sandbox for bash and hook commands, shaped like Claude Code's ``sandbox``."""

    enabled: bool = False
    """Whether bash and hook commands run under bubblewrap."""
    auto_allow: bool = Field(default=True, alias="autoAllowBashIfSandboxed")
    """Whether a sandboxed bash call runs without a question when no rule asks about it."""
    network: SandboxNetworkSettings = SandboxNetworkSettings()
    """Which hosts the proxy lets through."""
    filesystem: SandboxFilesystemSettings = SandboxFilesystemSettings()
    """Which more paths are writable, which are masked."""


class Settings(_Section):
    """Everything claw can be told in a settings file, an environment variable or an option."""

    model: str = "anthropic/claude-sonnet-4.5"
    """The OpenRouter model id to use."""
    base_url: str = OPENROUTER_URL
    """The OpenAI-compatible server to talk to."""
    models_url: str | None = None
    """Where the model list with prices is read (``GET`` it): OpenRouter's when ``None`` and
    ``base_url`` is OpenRouter; no list (cost only from the response) for other servers."""
    max_steps: int | None = Field(default=None, ge=1)
    """Provider calls per run (``None``: chapter 7's default)."""
    max_cost: Decimal | None = Field(default=None, ge=0)
    """The most a session may spend, in US dollars; the run that would pass it ends ``budget``."""
    summary: Literal["line", "json", "off"] = "line"
    """How the summary after each run is printed: one line, one JSON object, or not at all."""
    web: bool = False
    """Whether claw has the ``web_fetch`` tool."""
    permissions: PermissionSettings = PermissionSettings()
    """The permission rules of chapter 13, merged across layers."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    """Chapter 15's hooks, by event, merged across layers (checked by ``Hooks.from_settings``)."""
    context: ContextSettings = ContextSettings()
    """Chapter 18's context management."""
    sandbox: SandboxSettings = SandboxSettings()
    """Chapter 28's sandbox for bash and hook commands."""


ENVIRONMENT: dict[str, str] = {
    "CLAW_MODEL": "model",
    "CLAW_BASE_URL": "base_url",
    "CLAW_MODELS_URL": "models_url",
    "CLAW_MAX_STEPS": "max_steps",
    "CLAW_MAX_COST": "max_cost",
    "CLAW_SUMMARY": "summary",
    "CLAW_PERMISSION_MODE": "permissions.defaultMode",
    "CLAW_CONTEXT_WINDOW": "context.window",
}
"""The environment variables claw reads, and the key each one sets."""


@dataclass(frozen=True)
class Layer:
    """One source of settings: its name, where it came from, and what it says (as JSON data)."""

    name: str
    """``default``, ``user``, ``project``, ``local``, ``environment`` or ``command line``."""
    source: str
    """What a person reads to find it: a file as written (``~/.claw/settings.json``), or
    the variables or options that made it."""
    data: dict[str, Any]

    @property
    def label(self) -> str:
        """The layer and its source, as ``--explain`` prints it."""
        return self.name if self.source == self.name else f"{self.name} ({self.source})"


@dataclass(frozen=True)
class Origin:
    """Which layer set a value, and the value it set there."""

    layer: Layer
    value: Any


@dataclass
class LoadedSettings:
    """The effective settings, the layers they came from, and what was worth a warning."""

    settings: Settings
    layers: list[Layer]
    warnings: list[str] = field(default_factory=list)
    origins: dict[str, list[Origin]] = field(default_factory=dict)
    """For every key path (``model``, ``permissions.allow[1]``), each layer that set it,
    lowest first: the last one is the value in force (for a list item: the first)."""


def merge(low: Mapping[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    """``high`` laid over ``low``: objects merge key by key, lists join, anything else is replaced.

    Lists join without repeats, in order (``low``'s items first), which is how a deny rule
    of any layer survives a higher layer that sets the same list.
    """
    raise Todo(
        "ch17",
        "copy low; for each key of high: merge dicts, join lists (no repeats), or replace",
    )


def key_path(location: Sequence[int | str]) -> str:
    """A pydantic error location as the key a person would write: ``permissions.allow[2]``."""
    raise Todo("ch17", "names joined by dots, list positions in brackets")


def unknown_keys(model: type[BaseModel], data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The key paths in ``data`` that ``model`` has no field for (by name or alias), nested too.

    ``hooks`` and other free-form objects are not looked into: only sections that are models.
    """
    raise Todo(
        "ch17",
        "walk data against model_fields (name or alias); recurse into model sections",
    )


def check_layer(layer: Layer) -> list[str]:
    """Validate ``layer`` with ``Settings``; return warnings for its unknown keys.

    Raises ``SettingsError`` naming the layer's source, the key path and what was expected,
    one line per mistake.
    """
    raise Todo(
        "ch17",
        "Settings.model_validate(data); each error as \"SOURCE: KEY: MESSAGE\"; unknown keys",
    )


def read_layer(name: str, path: Path, shown: str) -> Layer | None:
    """The file at ``path`` as a layer (``shown`` in its errors); ``None`` if it does not exist."""
    data = read_json_object(path, shown)
    return None if data is None else Layer(name, shown, data)


def flag_layer(value: str) -> Layer:
    """``--settings``'s value as a layer: JSON text if it starts with ``{``, else a file's path.

    Raises ``SettingsError`` for text that is not JSON and for a file that is missing or wrong.
    """
    if value.lstrip().startswith("{"):
        try:
            data = json.loads(value)
        except json.JSONDecodeError as error:
            raise SettingsError(f"--settings: not valid JSON: {error}") from error
        return Layer("command line", "--settings", cast("dict[str, Any]", data))  # it began "{"
    shown = f"--settings {value}"
    data = read_json_object(Path(value).expanduser(), shown, any_file=True)  # the user's own
    if data is None:
        raise SettingsError(f"{shown}: no such file")
    return Layer("command line", shown, data)


def check_rules(layer: Layer, check_rule: Callable[[str, str], None]) -> None:
    """Check each permission rule of the (already validated) ``layer`` with ``check_rule``.

    Raises ``SettingsError`` as ``SOURCE: permissions.LIST[i]: PROBLEM``.
    """
    permissions = layer.data.get("permissions") or {}
    for list_name in ("allow", "ask", "deny"):
        for index, rule in enumerate(permissions.get(list_name) or []):
            try:
                check_rule(list_name, rule)
            except ValueError as error:
                raise SettingsError(
                    f"{layer.source}: permissions.{list_name}[{index}]: {error}"
                ) from None


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"context.window": 8}`` as ``{"context": {"window": 8}}``."""
    data: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, last = dotted.split(".")
        place = data
        for parent in parents:
            place = place.setdefault(parent, {})
        place[last] = value
    return data


def environment_layer(environ: Mapping[str, str]) -> Layer | None:
    """The ``CLAW_*`` variables of ``ENVIRONMENT`` that are set (and not empty), as a layer."""
    found = {name: environ[name] for name in ENVIRONMENT if environ.get(name)}
    if not found:
        return None
    data = nest({ENVIRONMENT[name]: value for name, value in found.items()})
    typed = typed_values(data, [ENVIRONMENT[name] for name in found])
    return Layer("environment", ", ".join(f"${name}" for name in found), typed)


def typed_values(data: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``data`` (text, as variables hold it) with each of ``keys`` as the settings parse it.

    ``"5"`` for ``max_steps`` becomes ``5``, so ``--explain`` shows what claw uses, as it does
    for a file. Data that does not parse is left as it is: ``check_layer`` reports it, naming
    the variable. A ``Decimal`` becomes a JSON number only when the number is exactly the same.
    """
    try:
        parsed = Settings.model_validate(data)
    except ValidationError:
        return data
    plain = parsed.model_dump(by_alias=True, mode="json")
    exact = parsed.model_dump(by_alias=True)
    typed: dict[str, Any] = {}
    for key in keys:
        value, value_exact = plain, exact
        for part in key.split("."):
            value, value_exact = value[part], value_exact[part]
        if isinstance(value_exact, Decimal):
            number = float(value_exact)
            value = number if Decimal(repr(number)) == value_exact else value
        typed[key] = value
    return nest(typed)


def trace(layers: Sequence[Layer]) -> dict[str, list[Origin]]:
    """Every key path the layers set, with each layer that set it (see ``LoadedSettings``)."""
    origins: dict[str, list[Origin]] = {}
    lists: dict[str, list[Any]] = {}

    def walk(layer: Layer, data: Mapping[str, Any], prefix: str) -> None:
        for key, value in data.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(layer, value, path + ".")
            elif isinstance(value, list):
                items = lists.setdefault(path, [])
                for item in value:
                    if item not in items:
                        items.append(item)
                    origins.setdefault(f"{path}[{items.index(item)}]", []).append(
                        Origin(layer, item)
                    )
            else:
                origins.setdefault(path, []).append(Origin(layer, value))

    for layer in layers:
        walk(layer, layer.data, "")
    return origins


def home_relative(path: Path, home: Path | None = None) -> str:
    """``path`` as a person writes it: ``~/.claw/settings.json`` under the home folder, or whole.

    ``home`` is the home folder claw was given, if any (default: the user's).
    """
    home = home if home is not None else Path.home()
    return f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)


BYPASS_REFUSED = (
    "{source}: permissions.defaultMode 'bypassPermissions' is taken only from your own "
    "settings or the command line (default instead)"
)
"""The warning for a project file that asks for ``bypassPermissions``."""


def without_bypass(layer: Layer, refused: list[str]) -> Layer:
    """``layer`` with a ``bypassPermissions`` default mode turned to ``default``.

    A project's file (committed, or brought by whoever wrote the repository) does not choose
    to skip every question, as in Claude Code; the warning goes to ``refused``.
    """
    permissions = layer.data.get("permissions")
    if not isinstance(permissions, dict) or permissions.get("defaultMode") != "bypassPermissions":
        return layer
    refused.append(BYPASS_REFUSED.format(source=layer.source))
    data = {**layer.data, "permissions": {**permissions, "defaultMode": "default"}}
    return Layer(layer.name, layer.source, data)


SANDBOX_OFF_REFUSED = (
    "{source}: sandbox.enabled false is taken only from your own settings or the command line "
    "(a project's file may turn the sandbox on, not off)"
)
"""The warning for a project file that would turn off the sandbox the user turned on."""


def without_sandbox_off(layer: Layer, refused: list[str]) -> Layer:
    """``layer`` without a ``sandbox.enabled`` of ``false``.

    A repository's file must not take away the sandbox its own hooks and commands would run
    in (chapter 28); the warning goes to ``refused``.
    """
    sandbox = layer.data.get("sandbox")
    if not isinstance(sandbox, dict) or sandbox.get("enabled") is not False:
        return layer
    refused.append(SANDBOX_OFF_REFUSED.format(source=layer.source))
    kept = {key: value for key, value in sandbox.items() if key != "enabled"}
    return Layer(layer.name, layer.source, {**layer.data, "sandbox": kept})


def load_settings(
    root: Path,
    *,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
    trusted: bool = True,
    warn: Callable[[str], None] | None = None,
    check_rule: Callable[[str, str], None] | None = None,
    settings_flag: str | None = None,
) -> LoadedSettings:
    """The settings in force for the project at ``root``: every layer checked, then merged.

    The user's file is ``settings.json`` in claw's own folder, ``claw_home(home)``
    (``$CLAW_CONFIG_DIR``, else ``~/.claw``; ``home/.claw`` for a given ``home``). ``options``
    are the command line's, as key paths (``{"model": "x"}``; ``None`` values are left out).
    While the folder is not ``trusted`` (chapter 16), the project and local files may only add
    ``deny`` and ``ask`` rules: the rest of what a repository brings waits for trust. Their
    ``bypassPermissions`` default mode is taken as ``default`` (``without_bypass``). Raises
    ``SettingsError`` at the first layer that is wrong; ``warn`` (and the result's ``warnings``)
    gets each unknown key. ``check_rule(list_name, rule)``, if given, checks each
    permission rule of each file, withheld ones too, and raises ``ValueError`` for a bad one
    (chapter 13's parser, passed in by the ``claw`` command), and the command line's rules.
    ``settings_flag`` is ``--settings``'s value (``flag_layer``): part of the command line,
    under its options, trusted as they are.
    """
    user = claw_home(home) / USER_SETTINGS
    environ = environ if environ is not None else os.environ
    layers = [Layer("default", "default", Settings().model_dump(by_alias=True, mode="json"))]
    refused: list[str] = []
    for name, path, shown in (
        ("user", user, home_relative(user, home)),
        ("project", root / PROJECT_SETTINGS, PROJECT_SETTINGS.as_posix()),
        ("local", root / LOCAL_SETTINGS, LOCAL_SETTINGS.as_posix()),
    ):
        layer = read_layer(name, path, shown)
        if layer is not None:
            check_layer(layer)  # the whole file, before trust takes parts of it away
            if check_rule is not None:
                check_rules(layer, check_rule)
        if layer is not None and name != "user" and not trusted:
            permissions = layer.data.get("permissions")
            kept = {}
            if isinstance(permissions, dict):
                kept = {k: v for k, v in permissions.items() if k in ("deny", "ask")}
            layer = Layer(name, layer.source, {"permissions": kept} if kept else {})
        if layer is not None and name != "user":
            layer = without_sandbox_off(without_bypass(layer, refused), refused)
        if layer is not None:
            layers.append(layer)
    environment = environment_layer(environ)
    if environment is not None:
        layers.append(environment)
    given = {key: value for key, value in (options or {}).items() if value is not None}
    command = [flag_layer(settings_flag)] if settings_flag is not None else []
    if given:
        command.append(Layer("command line", "command line", nest(given)))
    for layer in command:
        check_layer(layer)
        if check_rule is not None:
            check_rules(layer, check_rule)
        layers.append(layer)
    warnings: list[str] = refused
    merged: dict[str, Any] = {}
    for layer in layers:
        warnings += check_layer(layer)
        merged = merge(merged, layer.data)
    for note in warnings:
        if warn is not None:
            warn(note)
    settings = Settings.model_validate(merged)
    return LoadedSettings(settings, layers, warnings, trace(layers))


def explain(loaded: LoadedSettings, key: str) -> list[str]:
    """Lines that say, for ``key`` and every key under it, the value in force and its layer.

    A value a higher layer replaced is listed after it, marked ``overridden``. Raises
    ``KeyError`` for a key the settings do not have.
    """
    raise Todo(
        "ch17",
        "the origins at key, key.x or key[i]; the last one wins, earlier ones overridden",
    )


def value_at(settings: Settings, key: str) -> Any:
    """The value of the dotted ``key`` in ``settings``; ``KeyError`` if there is no such key."""
    value: Any = settings.model_dump(by_alias=True, mode="json")
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(key)
        value = value[part]
    return value


def effective(loaded: LoadedSettings) -> str:
    """The settings in force as indented JSON, as ``claw config`` prints them."""
    return json.dumps(loaded.settings.model_dump(by_alias=True, mode="json"), indent=2)
