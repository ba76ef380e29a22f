"""Context management: keep a long session inside the model's context window.

Before each request the agent asks ``ContextWindow.prepare`` whether the history still fits.
Its size is counted without a tokenizer: the prompt tokens the provider reported for the last
request are exact, and only the messages added since are estimated, with a characters-per-token
ratio calibrated on the same reports. When the next request would pass the threshold (80 % of
the window unless told otherwise), the history is made smaller in two stages, cheap before
expensive: large tool results of older turns are trimmed to their head and tail, and only if
that is not enough are the older turns summarised by the model. The rule that shapes this
module: whatever it does, the history stays one every provider accepts (each tool call with its
result, roles in order, no character cut in half) and never grows.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .events import Compacted, StepUsage
from .types import (
    AssistantMessage,
    DeveloperMessage,
    Message,
    Provider,
    SystemMessage,
    TokenUsage,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from .loop import Agent

# --8<-- [start:defaults]
DEFAULT_THRESHOLD = 0.8
"""Compact when the next request would pass this share of the window."""
DEFAULT_KEEP = 4
"""How many of the most recent turns are kept word for word."""
DEFAULT_CHARS_PER_TOKEN = 4.0
"""The ratio used before the provider has reported anything for this model."""
CALIBRATE_CHARS = 200
"""The fewest new characters between two reports that recalibrate a ratio (fewer are noise)."""
MESSAGE_FRAMING = 16
"""Characters counted for each message's framing (role markers, separators, ids)."""
TRIM_HEAD = 2_000
"""Characters kept from the start of a trimmed tool result."""
TRIM_TAIL = 1_000
"""Characters kept from the end of a trimmed tool result."""
# --8<-- [end:defaults]


_ARGUMENTS = json.JSONEncoder(ensure_ascii=False)
"""Encodes tool-call arguments as a provider sends them; one encoder, made once, is faster."""


def message_chars(message: Message) -> int:
    """How many characters ``message`` adds to a request: its text, its calls, its framing."""
    # region ch18: the text, plus a reasoning and each tool call's id, name and JSON arguments
    # more: MESSAGE_FRAMING + len(message.text); isinstance; _ARGUMENTS.encode(call.arguments)
    size = MESSAGE_FRAMING + len(message.text)
    if isinstance(message, AssistantMessage):
        size += len(message.reasoning_content)
        for call in message.tool_calls:
            size += len(call.id) + len(call.name) + len(_ARGUMENTS.encode(call.arguments))
    elif isinstance(message, ToolResultMessage):
        size += len(message.tool_call_id)
    return size
    # endregion


def request_chars(messages: Sequence[Message]) -> int:
    """The characters of a whole history, as ``message_chars`` counts them."""
    return sum(message_chars(message) for message in messages)


def fits(messages: Sequence[Message], wanted: int) -> int:
    """``request_chars(messages)``, or a number above ``wanted`` as soon as it is one.

    Counting stops once the answer to "is there room for ``wanted`` characters?" is known,
    so a short summary of a long history does not measure all of it.
    """
    total = 0
    for message in messages:
        total += message_chars(message)
        if total > wanted:
            break
    return total


class TokenCounter:
    """Counts the prompt tokens of the next request without a tokenizer.

    The last reported count is the anchor: a request that starts with the messages of the
    request it was reported for costs that many tokens plus an estimate for the rest. The
    estimate divides characters by a ratio per model, calibrated from how much the reports
    grow as messages are added.
    """

    def __init__(self, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> None:
        """Estimate with ``chars_per_token`` until a model's first report calibrates it."""
        if chars_per_token <= 0:
            raise ValueError(f"chars_per_token must be positive, not {chars_per_token}")
        self.default = chars_per_token
        self.ratios: dict[str, float] = {}
        """Each model's calibrated characters per token (the key ``""`` when no model is named)."""
        self.sent: tuple[Message, ...] = ()
        """The messages of the last request with a report."""
        self.reported = 0
        """The prompt tokens the provider reported for ``sent``."""

    def ratio(self, model: str | None = None) -> float:
        """The characters per token to estimate with for ``model``."""
        return self.ratios.get(model or "", self.default)

    def observe(
        self, sent: Sequence[Message], prompt_tokens: int, model: str | None = None
    ) -> None:
        """The provider reported ``prompt_tokens`` for the request that sent ``sent``.

        The report becomes the anchor. If ``sent`` extends the previous anchor by at least
        ``CALIBRATE_CHARS`` characters, the difference between the two reports is what those
        new characters cost, and it calibrates the model's ratio.
        """
        # region ch18: calibrate from the growth between two reports, then anchor on this one
        # more: self.anchored(sent); new chars / (prompt_tokens - self.reported); 0 means no report
        if prompt_tokens <= 0 or not sent:
            return  # a provider that reports no usage teaches nothing
        if self.anchored(sent):
            chars = request_chars(sent[len(self.sent) :])
            tokens = prompt_tokens - self.reported
            if chars >= CALIBRATE_CHARS and tokens > 0:
                self.ratios[model or ""] = chars / tokens
        self.sent = tuple(sent)
        self.reported = prompt_tokens
        # endregion

    def anchored(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` start with the messages of the last report."""
        # region ch18: a report exists, and every message it was for starts `messages`, unchanged
        # more: compare with `is` first (cheap), then == (a copy is the same message)
        known = len(self.sent)
        return (
            0 < known <= len(messages)
            and all(a is b or a == b for a, b in zip(self.sent, messages, strict=False))
        )
        # endregion

    def estimate(self, messages: Sequence[Message], model: str | None = None) -> int:
        """The prompt tokens a request with ``messages`` will cost, as near as we can tell."""
        # region ch18: the report if messages start with what was sent, plus the new chars / ratio
        # more: self.anchored(messages); math.ceil(request_chars(rest) / self.ratio(model))
        if self.anchored(messages):
            anchor, new = self.reported, messages[len(self.sent) :]
        else:
            anchor, new = 0, messages
        return anchor + math.ceil(request_chars(new) / self.ratio(model))
        # endregion


def safe_cut(text: str, index: int) -> int:
    """The nearest position at or before ``index`` where ``text`` can be cut.

    Never between the two halves of a surrogate pair, before a combining mark, or on either
    side of a zero-width joiner: each would leave half a character on one side of the cut.
    """
    # region ch18: step back while the cut would fall inside a character or a joined sequence
    # more: 0 < index < len(text); low surrogate \udc00-\udfff; category "M"; "\u200d" on a side
    index = max(0, min(index, len(text)))
    while 0 < index < len(text) and (
        "\udc00" <= text[index] <= "\udfff"
        or unicodedata.category(text[index]).startswith("M")
        or text[index] == "\u200d"
        or text[index - 1] == "\u200d"
    ):
        index -= 1
    return index
    # endregion


def trim_note(chars: int, lines: int) -> str:
    """The line that stands where ``trim_text`` cut: how much went, and how to get it back."""
    return (
        f"[... {chars:,} characters ({lines:,} lines) cut from the middle of this tool result "
        "to save context; run the tool again to see them ...]"
    )


def trim_text(text: str, head: int = TRIM_HEAD, tail: int = TRIM_TAIL) -> str:
    """``text`` with its middle replaced by a note, keeping about ``head`` and ``tail`` characters.

    Text that would not get shorter is returned as it is.
    """
    # region ch18: keep the head and the tail, cut at safe places, say what was cut in between
    # more: start = safe_cut(text, head); end = safe_cut(text, len(text) - tail); trim_note
    if len(text) <= head + tail:
        return text
    start = safe_cut(text, head)
    end = safe_cut(text, len(text) - tail)
    cut = text[start:end]
    trimmed = f"{text[:start]}\n{trim_note(len(cut), cut.count(chr(10)))}\n{text[end:]}"
    return trimmed if len(trimmed) < len(text) else text
    # endregion


def trim_tool_results(
    messages: Sequence[Message], before: int, head: int = TRIM_HEAD, tail: int = TRIM_TAIL
) -> tuple[list[Message], int]:
    """Trim the tool results among the first ``before`` messages; also say how many changed."""
    # region ch18: a new list; each ToolResultMessage before `before` gets trim_text'ed content
    # more: message.model_copy(update={"content": ...}) keeps its id; count those that changed
    result = list(messages)
    trimmed = 0
    for index in range(min(before, len(result))):
        message = result[index]
        if isinstance(message, ToolResultMessage) and len(message.content) > head + tail:
            content = trim_text(message.content, head, tail)
            if content != message.content:
                result[index] = message.model_copy(update={"content": content})
                trimmed += 1
    return result, trimmed
    # endregion


# --8<-- [start:compaction-plan]
@dataclass(frozen=True)
class CompactionPlan:
    """Which messages a compaction keeps, and which it replaces by a summary (by position)."""

    pinned: tuple[int, ...]
    """Kept before the summary: system and developer messages, and the first user message."""
    summarized: tuple[int, ...]
    """Replaced by the summary: everything else before ``recent``."""
    recent: int
    """Where the kept turns start: from here on, every message stays as it is."""


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Where each turn starts: at a user message, or an assistant message with its tool results."""
    return [
        index
        for index, message in enumerate(messages)
        if isinstance(message, (UserMessage, AssistantMessage))
    ]
# --8<-- [end:compaction-plan]


def plan_compaction(messages: Sequence[Message], keep: int = DEFAULT_KEEP) -> CompactionPlan:
    """Plan a compaction of ``messages`` that keeps the last ``keep`` turns word for word.

    With ``keep`` turns or fewer, nothing is summarised: ``summarized`` is empty.
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1 turn, not {keep}")
    # region ch18: the last `keep` turns stay; before them, pin instructions and the first task
    # more: recent = turn_starts(...)[-keep] (0 if fewer turns); one pass over messages[:recent]
    starts = turn_starts(messages)
    recent = starts[-keep] if len(starts) >= keep else 0
    first_user = next((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), -1)
    pinned: list[int] = []
    summarized: list[int] = []
    for index in range(recent):
        message = messages[index]
        if isinstance(message, (SystemMessage, DeveloperMessage)) or index == first_user:
            pinned.append(index)
        else:
            summarized.append(index)
    return CompactionPlan(tuple(pinned), tuple(summarized), recent)
    # endregion


# --8<-- [start:summary-prompt]
SUMMARY_PROMPT = """\
You are compacting the history of a coding agent's session so that the agent can go on \
working with less context. You will read a transcript of the earlier part of the session. \
Write a summary that the agent will read in place of it, and that lets it continue as if it \
had read the whole transcript.

Keep:
- the user's requests and constraints, in their words where the wording matters;
- what has been done: files read, created or changed (with their paths), and what changed;
- commands run and what they showed: test results, errors and how each was resolved;
- decisions taken and the reasons for them;
- what remains to be done, and the next step.

Keep exact file paths, names, numbers and error messages. Leave out greetings, repetition \
and tool output that no longer matters. Do not call tools. Answer with the summary only, \
in plain text, in the language the user writes in."""
"""The instructions of the summary request (a system message before the transcript)."""
# --8<-- [end:summary-prompt]


def transcript(messages: Sequence[Message]) -> str:
    """``messages`` as plain text for the summary request: one labelled block per message."""
    blocks: list[str] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            label = "tool error" if message.is_error else "tool result"
            blocks.append(f"[{label} {message.tool_call_id}]\n{message.content}")
            continue
        if message.text:
            blocks.append(f"[{message.role}]\n{message.text}")
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                blocks.append(f"[tool call {call.id}] {call.name} {arguments}")
    return "\n\n".join(blocks)


# --8<-- [start:summary-message]
SUMMARY_NOTE = (
    "[This is a summary of the earlier part of this conversation, written by the model when "
    "claw compacted the history to fit the context window; {removed} messages were replaced "
    "by it. The messages after it are the most recent ones, word for word.]"
)
"""The line that opens the summary message, so the model knows what it is reading."""


def summary_message(summary: str, removed: int) -> UserMessage:
    """The one message that stands for the ``removed`` messages a compaction replaced."""
    return Message.user(f"{SUMMARY_NOTE.format(removed=removed)}\n\n{summary}")
# --8<-- [end:summary-message]


# --8<-- [start:summarize]
class Summarize(Protocol):
    """Writes the summary of some messages: usually ``summarize_with(provider)``."""

    async def __call__(self, messages: Sequence[Message], focus: str = "") -> str:
        """The summary of ``messages``; ``focus``, if given, says what matters most."""
        ...


def summary_prompt(focus: str = "") -> str:
    """``SUMMARY_PROMPT``, and the user's focus (``/compact focus on ...``) if there is one."""
    if not focus.strip():
        return SUMMARY_PROMPT
    return f"{SUMMARY_PROMPT}\n\nThe user asks the summary to focus on: {focus.strip()}"


def summarize_with(
    provider: Provider, count: Callable[[TokenUsage], object] | None = None
) -> Summarize:
    """A ``Summarize`` that asks ``provider`` with ``summary_prompt`` and a transcript.

    The request is not a step of the agent's, so no ``StepUsage`` reports it: ``count``, if
    given, gets its usage (the ``claw`` command's cost tracker, ``CostTracker.count_summary``).
    """

    async def summarize(messages: Sequence[Message], focus: str = "") -> str:
        request = [Message.system(summary_prompt(focus)), Message.user(transcript(messages))]
        turn = await provider.complete(request, [])
        if count is not None:
            count(turn.usage)
        return turn.text.strip()

    return summarize
# --8<-- [end:summarize]


@dataclass(frozen=True)
class Compaction:
    """What a compaction produced: the new history, and the event that reports it."""

    messages: list[Message]
    event: Compacted


# --8<-- [start:window-head]
class ContextWindow:
    """Keeps an agent's history under ``threshold`` of the model's ``window`` of tokens.

    ``window`` comes from chapter 17's model list (``ModelInfo.context_length``), or from the
    ``context`` setting that overrides it. Wire it with ``attach(agent)``.
    """

    def __init__(
        self,
        window: int,
        summarize: Summarize,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        keep: int = DEFAULT_KEEP,
        model: str | None = None,
        counter: TokenCounter | None = None,
        trim_head: int = TRIM_HEAD,
        trim_tail: int = TRIM_TAIL,
    ) -> None:
        """Compact above ``threshold * window`` tokens, keeping the last ``keep`` turns."""
        if window < 1:
            raise ValueError(f"window must be at least 1 token, not {window}")
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be above 0 and at most 1, not {threshold}")
        if keep < 1:
            raise ValueError(f"keep must be at least 1 turn, not {keep}")
        self.window = window
        self.threshold = threshold
        self.keep = keep
        self.model = model
        self.summarize = summarize
        self.counter = counter or TokenCounter()
        self.trim_head = trim_head
        self.trim_tail = trim_tail
        self.sending: tuple[Message, ...] = ()
        """The messages of the request about to go out (what the next report is for)."""

    @property
    def limit(self) -> int:
        """The most tokens a request may have before a compaction: the threshold's share."""
        return math.floor(self.window * self.threshold)

    def tokens(self, messages: Sequence[Message]) -> int:
        """The estimated prompt tokens of a request with ``messages``."""
        return self.counter.estimate(messages, self.model)

    def attach(self, agent: Agent) -> None:
        """Check ``agent``'s history before each of its requests, and learn from its reports."""
        agent.prepare = self.prepare
        agent.sink.add(self.observe)

    def observe(self, event: object) -> None:
        """An observer: a step's reported usage calibrates the counter."""
        if isinstance(event, StepUsage) and self.sending:
            self.counter.observe(self.sending, event.usage.input_tokens, self.model)
    # --8<-- [end:window-head]

    async def compact(
        self, messages: Sequence[Message], *, force: bool = False, focus: str = ""
    ) -> Compaction | None:
        """Make ``messages`` smaller: trim old tool results, then summarise old turns if needed.

        Without ``force``, the summary is asked for only if trimming did not bring the history
        under the limit; ``focus`` goes to the summary. ``None``: nothing could be smaller.
        """
        # region ch18: trim first; summarise only if still over the limit (or forced); never grow
        # more: plan_compaction; trim_tool_results(..., plan.recent, ...); pinned + summary + recent
        before = self.tokens(messages)
        plan = plan_compaction(messages, self.keep)
        trimmed, count = trim_tool_results(messages, plan.recent, self.trim_head, self.trim_tail)

        def trim_only() -> Compaction | None:
            if not count:
                return None
            event = Compacted(0, len(trimmed), before, self.tokens(trimmed), count)
            return Compaction(trimmed, event)

        if count and not force and self.tokens(trimmed) <= self.limit:
            return trim_only()
        if not plan.summarized:
            return trim_only()
        old = [m for m in trimmed[: plan.recent] if not isinstance(m, SystemMessage)]
        summary = await self.summarize(old, focus)
        removed = [trimmed[i] for i in plan.summarized]
        # The model's summary is not trusted to be short: cut it so the history never grows.
        wrapper = message_chars(summary_message("", len(removed)))
        room = fits(removed, wrapper + len(summary)) - wrapper - 1
        summary = summary[: safe_cut(summary, room)].rstrip() if room > 0 else ""
        if not summary:
            return trim_only()
        compacted = [
            *(trimmed[i] for i in plan.pinned),
            summary_message(summary, len(removed)),
            *trimmed[plan.recent :],
        ]
        after = self.tokens(compacted)
        return Compaction(
            compacted, Compacted(len(removed), len(compacted), before, after, count)
        )
        # endregion

    async def prepare(self, history: list[Message]) -> Compacted | None:
        """Before a request: compact ``history`` in place if the request would pass the limit.

        Returns the ``Compacted`` event to report, or ``None`` if nothing changed.
        """
        # region ch18: over the limit? compact, replace the list's contents; remember what goes out
        # more: self.tokens(history) > self.limit; history[:] = compaction.messages; self.sending
        event = None
        if self.tokens(history) > self.limit:
            compaction = await self.compact(history)
            if compaction is not None:
                history[:] = compaction.messages
                event = compaction.event
        self.sending = tuple(history)
        return event
        # endregion

    async def compact_now(self, agent: Agent, focus: str = "") -> Compacted | None:
        """Compact ``agent``'s history now, whatever its size (``/compact [focus]``); report it.

        ``focus`` tells the summary what matters most. Returns the event (also given to the
        agent's observers), or ``None`` when there was nothing to compact: too few turns, and
        no tool result large enough to trim.
        """
        compaction = await self.compact(agent.history, force=True, focus=focus)
        if compaction is None:
            return None
        agent.history[:] = compaction.messages
        agent.sink.emit(compaction.event)
        return compaction.event
