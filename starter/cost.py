"""What a session costs: tokens and dollars added up from each step's usage, and a budget.

``CostTracker`` is one more observer of chapter 7's events: from every ``StepUsage`` it adds
the step's tokens and its cost to the tallies of the step, the run, the session and the
model. The cost is the one OpenRouter reported in the usage when there is one; otherwise it is
computed from the model's prices in the model list (``models.py``). Money is ``Decimal``
throughout: a float cannot hold $0.1 exactly, and a thousand small errors make a wrong bill.
The rule that shapes this module: a cost claw does not know is unknown, and said to be,
never shown as $0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from .agent import Finish
from .events import Event, RunFinished, StepUsage, SubagentEvent
from .models import ModelCatalog, ModelInfo
from .todo import Todo
from .types import Message, TokenUsage, dump_messages

CENT_PLACES = Decimal("0.0001")
"""Costs are shown to a hundredth of a cent."""


@dataclass
class Tally:
    """Tokens and money of some calls: a step, a run, a session or one model's calls."""

    calls: int = 0
    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    """Completion tokens, reasoning ones included."""
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost: Decimal = Decimal(0)
    """The money of the calls whose cost is known."""
    unpriced: int = 0
    """How many calls have no known cost (not in ``cost``)."""
    delegated: int = 0
    """How many of ``calls`` a subagent made (chapter 21), not the agent itself."""
    summaries: int = 0
    """How many of ``calls`` asked for a summary of the history (chapter 18), not a step."""

    def add(self, usage: TokenUsage, cost: Decimal | None) -> None:
        """Count one call's ``usage``, which cost ``cost`` (``None``: unknown)."""
        raise Todo("ch17", "add every token count; add the cost, or count the call as unpriced")

    @property
    def known_cost(self) -> Decimal | None:
        """The cost, if every call's cost is known; ``None`` otherwise."""
        return self.cost if self.unpriced == 0 else None


def cost_of(usage: TokenUsage, model: ModelInfo | None) -> Decimal | None:
    """What the call with ``usage`` cost: the provider's own figure, else the model's prices.

    Prompt tokens read from the cache cost the cache-read price, those written to it the
    cache-write price, each the prompt price when the list has none; reasoning tokens are
    completion tokens. ``None`` when neither is known.
    """
    raise Todo(
        "ch17",
        "usage.cost if reported; else fresh x prompt + read x read + written x write + out",
    )


class CostTracker:
    """Adds up the usage of every step it sees, per step, run, session and model.

    Give it to an ``Agent`` as an observer. ``model`` is the id the calls go to; ``catalog``,
    if given (and loaded), prices the calls whose usage has no cost.
    """

    def __init__(self, model: str, catalog: ModelCatalog | None = None) -> None:
        """A tracker for calls to ``model``."""
        self.model = model
        self.catalog = catalog
        self.steps: list[Tally] = []
        """One tally per step, oldest first, over the whole session."""
        self.run = Tally()
        """The run in progress (a fresh one starts after each ``RunFinished``)."""
        self.last_run = Tally()
        """The last finished run."""
        self.session = Tally()
        self.by_model: dict[str, Tally] = {}
        self.last_prompt_tokens = 0
        """The prompt tokens the provider reported for the last call (0 before the first)."""

    def info(self) -> ModelInfo | None:
        """What the catalog knows of the model, if there is a catalog."""
        return self.catalog.lookup(self.model) if self.catalog is not None else None

    def __call__(self, event: Event) -> None:
        """Count a ``StepUsage``; close the run at ``RunFinished``; ignore other events."""
        raise Todo(
            "ch17",
            "StepUsage: cost_of, then add to a new step, the run, the session, the model",
        )

    def count_subagents(self, event: Event) -> None:
        """An observer for chapter 21: a child's step counts in the run, session and model.

        The child's ``StepUsage`` reaches the parent's observers inside a ``SubagentEvent``.
        Its money is the parent's (same provider, same key, same model), so it is added to the
        tallies of the run, the session and the model, as a ``delegated`` call; it is not a
        step of the parent's own (``steps``), and its prompt says nothing of the parent's next
        one (``last_prompt_tokens``).
        """
        if not (isinstance(event, SubagentEvent) and isinstance(event.event, StepUsage)):
            return
        usage = event.event.usage
        for tally in self.beside_steps(usage):
            tally.delegated += 1

    def count_summary(self, usage: TokenUsage) -> None:
        """Count the request that wrote a summary of the history (chapter 18's compaction).

        It goes to the provider like a step's and is paid like one, so it is added to the run,
        the session and the model (and a budget sees it), as a call of ``summaries``; it is
        not a step (``steps``), and its prompt is the old history, not the next request's
        (``last_prompt_tokens``).
        """
        for tally in self.beside_steps(usage):
            tally.summaries += 1

    def beside_steps(self, usage: TokenUsage) -> tuple[Tally, Tally, Tally]:
        """Add a call that is not one of the agent's steps to the run, the session and the model.

        Returns those three tallies, for the caller to say what kind of call it was.
        """
        cost = cost_of(usage, self.info())
        tallies = (self.run, self.session, self.by_model.setdefault(self.model, Tally()))
        for tally in tallies:
            tally.add(usage, cost)
        return tallies


def format_cost(amount: Decimal) -> str:
    """``amount`` dollars to a hundredth of a cent, rounded half up: ``$0.0123``.

    An amount above zero that would round to ``$0.0000`` is ``<$0.0001``: something was spent.
    """
    raise Todo(
        "ch17",
        "quantize to CENT_PLACES with ROUND_HALF_UP; a tiny nonzero amount is \"<$0.0001\"",
    )


def describe_cost(tally: Tally, model: str) -> str:
    """The cost of ``tally`` in words that never pass an unknown cost off as $0."""
    if tally.unpriced == 0:
        return format_cost(tally.cost)
    if tally.unpriced == tally.calls:
        return f"unknown (no price for {model})"
    missing = f"{tally.unpriced} of {tally.calls} calls without a price"
    return f"at least {format_cost(tally.cost)} ({missing})"


@dataclass(frozen=True)
class RunSummary:
    """What ``claw`` says after a run: how it ended, its tokens, its cost, how long it took."""

    finished: RunFinished
    tally: Tally
    model: str
    seconds: float
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def stopped_calls(self) -> int:
        """Calls the run started whose usage never came: stopped mid-stream (Ctrl-C, say).

        The provider may bill the tokens it had generated, so the run's cost is not known.
        """
        t = self.tally
        return max(0, self.finished.steps - (t.calls - t.delegated - t.summaries))

    def cost_words(self) -> str:
        """The run's cost in words: never $0 for a call that was stopped before its report."""
        stopped = self.stopped_calls
        if not stopped:
            return describe_cost(self.tally, self.model)
        why = f"{stopped} call(s) stopped before the provider reported their usage"
        t = self.tally
        if not t.calls:
            return f"unknown ({why})"
        if t.unpriced == t.calls:  # not one price known: "at least $0.0000" would be a guess
            return f"unknown (no price for {self.model}, and {why})"
        if t.unpriced:
            why = f"{t.unpriced} of {t.calls} calls without a price, and {why}"
        return f"at least {format_cost(t.cost)} ({why})"

    def line(self) -> str:
        """One line for a person."""
        t = self.tally
        cached = f" ({t.cached_tokens:,} cached)" if t.cached_tokens else ""
        reasoning = f" ({t.reasoning_tokens:,} reasoning)" if t.reasoning_tokens else ""
        return (
            f"[{t.input_tokens:,} tokens in{cached}, {t.output_tokens:,} out{reasoning} · "
            f"cost {self.cost_words()} · {self.seconds:.1f} s]"
        )

    def json(self) -> str:
        """One line of JSON for a program; the cost is a string (exact) or null (unknown)."""
        t = self.tally
        return json.dumps(
            {
                "finish": str(self.finished.reason),
                "steps": self.finished.steps,
                "model": self.model,
                "input_tokens": t.input_tokens,
                "output_tokens": t.output_tokens,
                "cached_tokens": t.cached_tokens,
                "reasoning_tokens": t.reasoning_tokens,
                "cost_usd": (
                    None if t.known_cost is None or self.stopped_calls else str(t.known_cost)
                ),
                "calls_without_price": t.unpriced,
                "seconds": round(self.seconds, 3),
            }
        )


def estimate_prompt_tokens(last_prompt_tokens: int, new_messages: Sequence[Message]) -> int:
    """How many tokens the next request's prompt will have, estimated.

    What the provider reported for the last one, plus a guess of four characters a token for
    what was added since.
    A placeholder for chapter 18's calibrated estimate: keep it this small, and replaceable.
    """
    raise Todo(
        "ch17",
        "the last reported prompt tokens, plus the new messages' JSON characters // 4",
    )


class Budget:
    """Ends a run before the call that would take the session's cost past ``limit`` dollars.

    Use ``check`` as a preflight of a ``PreflightAgent``: it is asked before every call, with
    the history about to be sent. The next call's cost is estimated from its prompt alone
    (the answer's length is not known before it is written).
    """

    def __init__(self, limit: Decimal, tracker: CostTracker) -> None:
        """A budget of ``limit`` dollars over what ``tracker`` counts."""
        self.limit = limit
        self.tracker = tracker
        self.sent = 0
        """How many messages of the history the last call sent (the provider counted them)."""
        self.estimate: Decimal | None = None
        """The estimated cost of the last call checked."""
        self._checked: list[Message] = []  # the history of the last check, to see a rewrite

    def next_call(self, history: Sequence[Message]) -> Decimal | None:
        """The estimated cost of sending ``history``; ``None`` when no price is known.

        If the messages sent last time are no longer the start of ``history`` (chapter 18
        compacted it), the provider's last count says nothing about it: the whole history is
        estimated afresh.
        """
        sent = self._checked[: self.sent]
        kept = len(history) >= len(sent) and all(
            a is b or a == b for a, b in zip(history, sent, strict=False)
        )
        self._checked = list(history)
        if kept:
            tokens = estimate_prompt_tokens(self.tracker.last_prompt_tokens, history[self.sent :])
        else:
            tokens = estimate_prompt_tokens(0, history)
        return self.price(tokens)

    def price(self, tokens: int) -> Decimal | None:
        """What ``tokens`` prompt tokens cost: the list's prompt price, else the last call's.

        ``None`` when neither is known. Chapter 21's children price their calls with it too.
        """
        info = self.tracker.info()
        if info is not None and info.prompt is not None:
            return tokens * info.prompt
        last = self.tracker.steps[-1] if self.tracker.steps else None
        if last is not None and last.known_cost is not None and last.input_tokens:
            # No list price: the last call's dollars per prompt token, an upper bound of the
            # prompt price since that call's cost includes its answer.
            return tokens * last.cost / last.input_tokens
        return None

    def check(self, history: Sequence[Message]) -> Finish | None:
        """``Finish.BUDGET`` if the budget is spent or the next call would pass it, else ``None``.

        The next call is ``next_call``'s estimate; an unknown estimate counts as nothing.
        """
        raise Todo(
            "ch17",
            "spent (the session tally's cost) + next_call estimate > limit -> BUDGET",
        )
