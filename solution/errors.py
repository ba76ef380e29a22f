"""The exceptions claw raises. Every one of them says what went wrong and what to do about it."""


class ClawError(Exception):
    """The base class of every error claw raises on purpose."""


class ProviderError(ClawError):
    """A model provider could not produce a turn."""
