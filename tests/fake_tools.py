"""Small tools the loop tests share: one that echoes, one that always raises."""

from typing import Any

from claw.types import ToolDefinition, ToolOutput


class Echo:
    """Answers with the text it was given, and remembers every call."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="echo", description="Repeat the text.").param(
            "text", "string", "What to repeat."
        )

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        self.seen.append(arguments["text"])
        return ToolOutput.ok(arguments["text"])


class Broken:
    """A tool named ``broken`` whose every call raises ``OSError(message)``."""

    def __init__(self, message: str = "permission denied") -> None:
        self.message = message

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="broken", description="Always raises.")

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        raise OSError(self.message)
