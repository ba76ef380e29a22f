"""The Claude Agent SDK's ``types`` module, the oracle of chapter 29's names, loaded alone.

``import claude_agent_sdk.types`` runs the package's ``__init__``, which imports its client,
the MCP SDK and anyio: seconds, for a module that needs only the standard library. This
loads ``types.py`` from the installed package by itself (nothing of the SDK runs: no
transport, no command line).
"""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def claude_agent_sdk_types() -> ModuleType:
    """``claude_agent_sdk/types.py`` of the installed package, as a module of its own."""
    name = "claude_agent_sdk_types_alone"
    if name in sys.modules:
        return sys.modules[name]
    package = importlib.util.find_spec("claude_agent_sdk")  # finds it, imports nothing
    assert package is not None, "the tests need claude-agent-sdk: pip install claude-agent-sdk"
    path = Path(package.origin or "").parent / "types.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module
