"""The exceptions claw raises. Every one of them says what went wrong and what to do about it.

Everything a user of claw can meet, at its command line or from Python, is a ``ClawError``, so
one ``except ClawError`` catches it all::

    ClawError
    ├── ProviderError                 the model could not give a turn (chapters 5a, 5b, 24)
    │   ├── ProviderConnectionError, MalformedResponseError, StreamError,
    │   │   ProviderTimeoutError, ResponseTooLargeError
    │   ├── ProviderHTTPError         BadRequestError, AuthenticationError,
    │   │                             InsufficientCreditsError, PermissionDeniedError,
    │   │                             RequestTimeoutError, RateLimitError, ServerError
    │   ├── MockProviderExhausted     (mock.py)      PlainHTTPError (providers/http.py)
    ├── ToolError                     a tool call that cannot be done; the model reads why
    │   ├── OutsideRoot (tools/fs.py) and WorkspaceError (safety.py), both PermissionErrors too
    │   ├── EditError, PatchError, ApplyError, FetchError, RipgrepFailed, NoAnswer
    │   └── WorktreeError             (subagents.py)
    ├── SettingsError                 a settings file or layer that cannot be used (a ValueError)
    │   ├── RuleError                 a permission rule that is not Tool or Tool(specifier)
    │   └── BadSettings               the project's settings, found by guard.py
    ├── UsageError                    the command line cannot work: exit status 2 (printmode.py)
    ├── UnknownCommand                a slash command that is not in the table (slash.py)
    ├── BadTrustFile, TranscriptError, SkillError, TaskError, CheckpointError
    ├── SdkError                      a misuse of claw's Python SDK (sdk/types.py)
    │   └── BadOption                 an SDK option that cannot work (a ValueError)
    └── McpError, ProtocolError, RemoteError, ConfigError    an MCP server and its settings

Not ``ClawError``s, since no user meets them: ``Todo`` (a stub of the learner's, not written
yet), the signals the loop passes to itself (``Interrupted``, ``StopBeforeRequest``), the
refusals the permission rules turn into a question (``Unsplittable``, ``BadSubject``,
``Unusable``), a hook that failed (``HookFailed``, a warning), an evaluation's blocked prompt
(``PromptBlockedError``, a result), ``PlanModeError`` (a transition the table forbids: a
bug), ``Crash`` (a test's stand-in for a crash in the middle of a rewind), ``BadRequest``
(what the sandbox's proxy answers 400 to: a command's request, not the user's), and ``RpcError``
and ``LineTooLong`` (what ``claw acp`` answers an editor with: a JSON-RPC error on the wire).
``tests/tooling/test_error_tree.py`` keeps the tree true.
"""

from __future__ import annotations


class ClawError(Exception):
    """The base class of every error claw raises on purpose."""


class ProviderError(ClawError):
    """A model provider could not produce a turn."""


class ToolError(ClawError):
    """A tool call that cannot be done; the message is written for the model, which reads it."""


class SettingsError(ClawError, ValueError):
    """A settings file or layer that is not what it should be: claw stops before any request."""


# --8<-- [start:provider-errors]
class ProviderConnectionError(ProviderError):
    """The server could not be reached, or the connection failed before a response arrived."""


class MalformedResponseError(ProviderError):
    """The server answered, but with something that is not a valid chat completion."""


class StreamError(ProviderError):
    """A streamed response failed part-way: an error event, or the stream stopped early."""


class ProviderTimeoutError(ProviderError):
    """A time limit ran out; ``setting`` names it (``deadline``, ``idle_timeout``, ``timeout``).

    Never retried: the server had the request and may still be working on it, and billing.
    """

    def __init__(self, message: str, *, setting: str, seconds: float) -> None:
        super().__init__(message)
        self.setting = setting
        self.seconds = seconds
        """The limit that ran out, in seconds."""


class ResponseTooLargeError(ProviderError):
    """The server sent more than a size cap allows; ``setting`` names the cap."""

    def __init__(self, message: str, *, setting: str, limit: int) -> None:
        super().__init__(message)
        self.setting = setting
        self.limit = limit
        """The cap that was passed (bytes of a body, characters of a stream event)."""


class ProviderHTTPError(ProviderError):
    """The server answered with an error status; ``message`` is what the server said."""

    retryable = False
    """Whether sending the same request again later may succeed."""

    def __init__(self, status: int, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.retry_after = retry_after
        """Seconds the server asked us to wait before trying again, if it said."""


class BadRequestError(ProviderHTTPError):
    """400: the request itself is wrong (a bad parameter, an unknown model, too long a prompt)."""


class AuthenticationError(ProviderHTTPError):
    """401: the API key is missing, wrong or disabled."""


class InsufficientCreditsError(ProviderHTTPError):
    """402: the account has run out of credits."""


class PermissionDeniedError(ProviderHTTPError):
    """403: not allowed, for example because moderation flagged the input."""


class RequestTimeoutError(ProviderHTTPError):
    """408: the server gave up waiting; trying again may work."""

    retryable = True


class RateLimitError(ProviderHTTPError):
    """429: too many requests; wait (``retry_after`` says how long, if known) and try again."""

    retryable = True


class ServerError(ProviderHTTPError):
    """5xx: the server or the model behind it failed; trying again may work."""

    retryable = True
# --8<-- [end:provider-errors]
