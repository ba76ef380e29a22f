"""ch17 · ``claw config --explain`` shows a variable's value as the settings parse it.

A ``CLAW_*`` variable holds text; the settings model turns ``"5"`` into the number 5. What
``--explain`` shows is what claw uses: the typed value, as for the same key in a file.
"""

import json
from decimal import Decimal
from pathlib import Path

import pytest

from claw.configure import config_main
from claw.settings import SettingsError, explain, load_settings

VARIABLES = {
    "CLAW_MAX_STEPS": "5",
    "CLAW_CONTEXT_WINDOW": "8000",
    "CLAW_MAX_COST": "0.25",
    "CLAW_MODEL": "env/model",
    "CLAW_SUMMARY": "json",
}


def test_config_explain_shows_environment_values_typed_as_the_settings_parse_them(
    tmp_path: Path,
) -> None:
    loaded = load_settings(tmp_path, home=tmp_path / "home", environ=VARIABLES)
    source = "environment ($CLAW_MODEL, $CLAW_MAX_STEPS, $CLAW_MAX_COST, $CLAW_SUMMARY, "
    source += "$CLAW_CONTEXT_WINDOW)"
    assert explain(loaded, "max_steps")[0] == f"max_steps = 5  ({source})"
    assert explain(loaded, "context.window")[0] == f"context.window = 8000  ({source})"
    assert explain(loaded, "max_cost")[0] == f"max_cost = 0.25  ({source})"
    assert explain(loaded, "model")[0] == f'model = "env/model"  ({source})'
    assert explain(loaded, "summary")[0] == f'summary = "json"  ({source})'
    settings = loaded.settings
    assert (settings.max_steps, settings.max_cost, settings.context.window) == (
        5,
        Decimal("0.25"),
        8000,
    )
    # The same values from a file explain the same way.
    file = tmp_path / "project" / ".claw" / "settings.json"
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps({"max_steps": 5, "max_cost": 0.25, "context": {"window": 8000}}))
    from_file = load_settings(tmp_path / "project", home=tmp_path / "home", environ={})
    for key in ("max_steps", "max_cost", "context.window"):
        shown_env = explain(loaded, key)[0].split("  (")[0]
        assert explain(from_file, key)[0].split("  (")[0] == shown_env


def test_config_a_variable_that_does_not_parse_is_still_an_error_naming_it(
    tmp_path: Path,
) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, home=tmp_path, environ={"CLAW_CONTEXT_WINDOW": "big"})
    assert str(caught.value).startswith("$CLAW_CONTEXT_WINDOW: context.window: ")
    # A cost with more digits than a float holds is kept exactly, as text.
    digits = "0.1" + "0" * 30 + "1"
    exact = load_settings(tmp_path, home=tmp_path, environ={"CLAW_MAX_COST": digits})
    assert exact.settings.max_cost == Decimal(digits)
    assert explain(exact, "max_cost")[0].startswith(f'max_cost = "{digits}"  (')


def test_config_command_explains_a_variable_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    for name in ("CLAW_BASE_URL", "CLAW_MODEL", "CLAW_MAX_COST", "CLAW_CONTEXT_WINDOW"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAW_MAX_STEPS", "7")
    assert config_main(["--explain", "max_steps"]) == 0
    assert capsys.readouterr().out == (
        "max_steps = 7  (environment ($CLAW_MAX_STEPS))\n    overridden: null  (default)\n"
    )
