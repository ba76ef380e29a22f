"""Shared fixtures. The plugin ``clawbook.pytest_plugin`` (loaded from pyproject.toml) picks the
implementation named by ``CLAW_IMPL`` and makes it importable as ``claw``."""

pytest_plugins = ["pytester"]
