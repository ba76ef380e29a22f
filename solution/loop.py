"""The agent every later chapter wires into: chapter 5b's loop, with events, limits and cancel.

``Agent`` streams a turn, runs the tools it asks for, and repeats, as ``StreamingAgent`` did;
what it adds is what a real session needs. Every step is reported as an event, to the caller
and to any number of observers. Every way a run can end is a ``Finish`` value, never an
exception: done, out of steps, stuck on one failing call, a history too long, cancelled from
outside. Tool output over a size limit is cut without splitting a character. And however the
run ends, the history stays one a provider accepts: every tool call in it has a result.

The loop is deliberately closed: later chapters add abilities as tools and providers, and
watch or steer the run through four seams only: observers, a ``gate`` that may answer a
tool call before it runs, ``Agent.request_finish``, and a ``prepare`` that may shrink the
history before each provider call.
"""

from __future__ import annotations

import asyncio
import json
import time
import unicodedata
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TypeVar

from .agent import CANCELLED, DEFAULT_MAX_STEPS, AgentBase, Finish, run_tool
from .events import (
    AssistantText,
    Event,
    EventSink,
    Observer,
    RunFinished,
    StepUsage,
    ToolCalled,
    ToolResult,
)
from .streaming import StreamAccumulator, StreamProvider
from .types import (
    Message,
    TokenUsage,
    Tool,
    ToolCall,
    ToolOutput,
    ToolResultMessage,
    ToolSet,
    UserMessage,
    dump_messages,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """How far one run may go before the loop ends it."""

    max_steps: int = DEFAULT_MAX_STEPS
    """Steps (provider calls) per run; a run still asking for tools after them ends MAX_STEPS."""
    stuck_after: int = 3
    """The same call (same name, same arguments) failing this many times in a row ends STUCK."""
    max_output_bytes: int = 30_000
    """The most UTF-8 bytes of one tool result the model sees; the rest is cut, with a note."""
    max_history_chars: int = 2_000_000
    """The most characters the history may take as JSON (``dump_messages``) before a step."""

    def __post_init__(self) -> None:
        """Refuse limits that would end every run at once."""
        for name in ("max_steps", "stuck_after", "max_output_bytes", "max_history_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")


def truncation_note(cut_bytes: int, cut_lines: int) -> str:
    """The line that replaces what ``truncate_output`` cut: how much, and how to see it."""
    lines = "line" if cut_lines == 1 else "lines"
    return (
        f"[output truncated: the last {cut_bytes:,} bytes ({cut_lines:,} {lines}) are not "
        "shown. To see them, ask for a smaller part: read the file with offset and limit, "
        "or narrow the command or the search.]"
    )


def truncate_output(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` UTF-8 bytes; else a prefix that fits, a newline, a note.

    The cut never falls inside a character or between a character and the combining marks
    that follow it, and falls after the last line break that fits when that keeps at least
    half of ``limit``.
    """
    # region ch07: cut at a character boundary within limit bytes, at a line end if one is near
    # more: back up while data[cut] & 0xC0 == 0x80; line end; then never before a mark ("M")
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    cut = max(limit, 0)
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: inside a character
        cut -= 1
    kept = data[:cut].decode("utf-8", "surrogatepass")
    line_end = kept.rfind("\n") + 1
    if line_end and len(kept[:line_end].encode("utf-8", "surrogatepass")) * 2 >= limit:
        kept = kept[:line_end]
    while kept and unicodedata.category(text[len(kept)]).startswith("M"):
        kept = kept[:-1]  # keep a base character together with its combining marks
    rest = text[len(kept) :]
    cut_lines = rest.count("\n") + (not rest.endswith("\n"))
    cut_bytes = len(data) - len(kept.encode("utf-8", "surrogatepass"))
    return f"{kept}\n{truncation_note(cut_bytes, cut_lines)}"
    # endregion


class StuckDetector:
    """Notices a model that repeats one failing call instead of trying something else."""

    def __init__(self, after: int) -> None:
        """Report stuck once the same call has failed ``after`` times in a row."""
        self.after = after
        self.last: tuple[str, str] | None = None
        """The failing call counted so far, as (name, arguments as canonical JSON)."""
        self.failures = 0
        """How many times in a row ``last`` has failed."""

    @property
    def stuck(self) -> bool:
        """Whether the same call has now failed ``after`` times in a row."""
        return self.failures >= self.after

    def record(self, call: ToolCall, is_error: bool) -> None:
        """Count one finished call, in the order the model made them."""
        # region ch07: count repeats of one failing call; a success or another call starts over
        # more: key = (call.name, json.dumps(call.arguments, sort_keys=True)); success: reset
        if not is_error:
            self.last, self.failures = None, 0
            return
        key = (call.name, json.dumps(call.arguments, sort_keys=True))
        if key == self.last:
            self.failures += 1
        else:
            self.last, self.failures = key, 1
        # endregion


def history_chars(messages: Sequence[Message]) -> int:
    """How many characters ``messages`` take as JSON: what ``max_history_chars`` limits."""
    # region ch07: the size of the history as the JSON text dump_messages makes
    # more: len(dump_messages(messages)): a cheap, provider-independent proxy for tokens
    return len(dump_messages(messages))
    # endregion


# --8<-- [start:run-state]
class Interrupted(Exception):
    """Raised inside the loop when ``Agent.cancel()`` stops a stream or a tool in flight."""


Gate = Callable[[ToolCall], Awaitable[ToolOutput | None]]
"""Looks at a tool call before it runs: ``None`` lets it run, a ``ToolOutput`` answers it."""

Prepare = Callable[[list[Message]], Awaitable[Event | None]]
"""Runs before each provider call with the history itself, which it may rewrite in place
(chapter 18's compaction); returns an event that reports what it did, or ``None``."""


@dataclass
class RunState:
    """What the loop knows about the run in progress."""

    stuck: StuckDetector
    steps: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    text: str = ""
    """The last complete assistant text of this run."""
    finish: Finish | None = None
    """Set once the run must end."""

    def finished(self, reason: Finish) -> RunFinished:
        """The event that ends the run for ``reason``."""
        return RunFinished(reason, self.steps, self.text, self.usage)
# --8<-- [end:run-state]


# --8<-- [start:agent-head]
class Agent(AgentBase):
    """The agent: streams each turn, runs its tools, reports everything, ends for a reason.

    ``events(prompt)`` is an async generator of every ``Event``; ``run(prompt)`` runs to the
    end and returns the ``RunFinished``. The history lives on the agent, so a second run
    continues the conversation. Observers receive exactly the events a caller iterating
    ``events`` receives, in the same order (and a ``RunFinished`` even when the task running
    the agent is cancelled).

    Seams for later chapters (permissions, safety checks, hooks, plan mode):

    * ``gate``, if given, is awaited with each tool call before it runs. Returning ``None``
      lets the call run; returning a ``ToolOutput`` (usually ``ToolOutput.error("...")``)
      answers the call instead, and the tool never runs.
    * ``request_finish(reason)``, called by a gate or a tool, ends the run with ``reason``
      (``PERMISSION_DENIALS``, ``PLAN_PENDING``) once the current step's calls are answered.
    * ``prepare``, if given, is awaited with the history before each provider call, and may
      replace its contents (chapter 18's compaction); the event it returns is reported.
    """

    def __init__(
        self,
        provider: StreamProvider,
        tools: ToolSet | Iterable[Tool] = (),
        *,
        system: str | None = None,
        context: Sequence[Message] = (),
        limits: Limits = Limits(),
        observers: Iterable[Observer] = (),
        gate: Gate | None = None,
        concurrent: bool = False,
        prepare: Prepare | None = None,
    ) -> None:
        """An agent that streams from ``provider``, can use ``tools`` and keeps to ``limits``.

        ``concurrent=True`` runs consecutive read-only calls at the same time (chapter 12).
        ``prepare`` runs before each provider call (chapter 18).
        """
        super().__init__(tools, system=system, context=context, max_steps=limits.max_steps)
        self.provider = provider
        self.limits = limits
        self.sink = EventSink(observers)
        self.gate = gate
        self.concurrent = concurrent
        self.prepare = prepare
        self._cancel_requested = asyncio.Event()
        self._finish_requested: Finish | None = None

    def cancel(self) -> None:
        """Stop the run in progress as soon as possible; it finishes ``CANCELLED``.

        A stream or tool in flight is cancelled (the tool's task sees ``CancelledError``), and
        every tool call left without a result gets the ``CANCELLED`` result. Not thread-safe,
        like all of asyncio: from another thread, call ``loop.call_soon_threadsafe(agent.cancel)``;
        for Ctrl-C, ``loop.add_signal_handler(signal.SIGINT, agent.cancel)``.
        """
        self._cancel_requested.set()

    def request_finish(self, reason: Finish) -> None:
        """End the run with ``reason`` once the current step's tool calls are all answered."""
        self._finish_requested = reason

    async def run(self, prompt: str) -> RunFinished:
        """Run ``prompt`` to the end, passing the events only to the observers."""
        finished: RunFinished | None = None
        async with aclosing(self.events(prompt)) as events:
            async for event in events:
                if isinstance(event, RunFinished):
                    finished = event
        assert finished is not None, "events() always ends with RunFinished"
        return finished

    async def events(self, prompt: str) -> AsyncGenerator[Event, None]:
        """Add ``prompt`` to the conversation; yield every event until the run finishes.

        Each event goes to the observers first, then to you.
        """
        async with aclosing(self.loop(prompt)) as events:
            async for event in events:
                self.sink.emit(event)
                yield event
    # --8<-- [end:agent-head]

    async def race(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable``, unless ``cancel()`` is called first: then raise ``Interrupted``.

        The losing work is cancelled and waited for, so a tool's cleanup (killing a process
        group, say) has finished before the loop goes on. If the task running the loop is
        cancelled itself, the work is cancelled too, and ``CancelledError`` propagates.
        """
        # region ch07: race the work against the cancel Event; cancel and await whichever loses
        # more: ensure_future both; asyncio.wait(FIRST_COMPLETED) in try, cancel in finally
        work = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._cancel_requested.wait())
        try:
            await asyncio.wait((work, stop), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
                await asyncio.wait((work,))  # let it clean up before we go on
        if work.cancelled():
            raise Interrupted
        return work.result()
        # endregion

    async def before_request(self) -> AsyncIterator[Event]:
        """Before a provider call: let ``prepare`` (chapter 18) shrink the history; report it.

        Nothing happens without a ``prepare``. It is raced against ``cancel()`` like the stream.
        """
        if self.prepare is not None:
            event = await self.race(self.prepare(self.history))
            if event is not None:
                yield event

    async def execute(self, call: ToolCall) -> ToolOutput:
        """Answer one call: the gate may answer it instead of the tool; long output is cut."""
        # region ch07: ask the gate first; run the tool if it let the call through; truncate
        # more: output = await self.gate(call) if self.gate else None; run_tool; ToolOutput(...)
        output = await self.gate(call) if self.gate is not None else None
        if output is None:
            output = await run_tool(self.tools, call)
        content = truncate_output(output.content, self.limits.max_output_bytes)
        return ToolOutput(content=content, is_error=output.is_error)
        # endregion

    async def run_calls(
        self, step: int, calls: Sequence[ToolCall], first: int
    ) -> AsyncIterator[Event]:
        """Run ``calls`` one after another, in call order, reporting each.

        The results already stand in the history from position ``first`` on (each
        ``CANCELLED``); each is replaced by the real one as it arrives. With
        ``concurrent=True``, chapter 12's ``run_in_batches`` runs them instead, read-only
        calls side by side.
        """
        if self.concurrent:
            # Imported here, not at the top: the registry imports every tool, and a tool still
            # being written (a syntax error in chapter 9b's patch.py) must not break this loop.
            from .registry import run_in_batches

            async for event in run_in_batches(self, step, calls, first):
                yield event
            return
        # region ch07: for each call: report it, time it, race it, put its result in the history
        # more: ToolCalled; time.monotonic() around await self.race(self.execute(call)); ToolResult
        for index, call in enumerate(calls, start=first):
            yield ToolCalled(step, call.id, call.name, call.arguments)
            started = time.monotonic()
            output = await self.race(self.execute(call))
            duration = time.monotonic() - started
            self.history[index] = output.to_message(call)
            yield ToolResult(step, call.id, call.name, output.content, output.is_error, duration)
        # endregion

    async def step(self, state: RunState) -> AsyncIterator[Event]:
        """One step: stream a turn, passing each event on, then run the tools it asks for.

        Sets ``state.finish`` when the turn asks for no tool.
        """
        # region ch07: stream a turn through race, record it with CANCELLED results, run its calls
        # more: before_request() first; self.race(anext(stream, None)); AssistantText; StepUsage
        state.steps += 1
        async for event in self.before_request():
            yield event
        accumulator = StreamAccumulator()
        stream = self.provider.stream(list(self.history), self.tools.definitions())
        try:
            while (delta := await self.race(anext(stream, None))) is not None:
                accumulator.add(delta)
                yield delta
        finally:
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()  # at once, not when the garbage collector gets to it
        turn = accumulator.turn()
        state.usage += turn.usage
        state.text = turn.text
        first = len(self.history) + 1
        self.history += [turn.to_message(), *(CANCELLED.to_message(c) for c in turn.tool_calls)]
        if turn.text:
            yield AssistantText(state.steps, turn.text)
        yield StepUsage(state.steps, turn.usage)
        if not turn.tool_calls:
            state.finish = Finish.after(turn.stop_reason)
            return
        async for event in self.run_calls(state.steps, turn.tool_calls, first):
            yield event
        for call, result in zip(turn.tool_calls, self.history[first:], strict=True):
            assert isinstance(result, ToolResultMessage)
            state.stuck.record(call, result.is_error)
        # endregion

    def why_stop(self, state: RunState) -> Finish | None:
        """Between steps: the reason to end the run now, or ``None`` to take another step."""
        # region ch07: the step's own finish, cancel, a requested finish, stuck, steps, size
        # more: check in that order; steps >= max_steps is MAX_STEPS; history_chars(self.history)
        if state.finish is not None:
            return state.finish
        if self._cancel_requested.is_set():
            return Finish.CANCELLED
        if self._finish_requested is not None:
            return self._finish_requested
        if state.stuck.stuck:
            return Finish.STUCK
        if state.steps >= self.limits.max_steps:
            return Finish.MAX_STEPS
        if history_chars(self.history) > self.limits.max_history_chars:
            return Finish.HISTORY_LIMIT
        return None
        # endregion

    async def loop(self, prompt: str) -> AsyncGenerator[Event, None]:
        """The run itself: steps until ``why_stop`` gives a reason, then ``RunFinished``.

        ``cancel()`` ends it with ``RunFinished(CANCELLED)``. If the task running it is
        cancelled, the observers still get ``RunFinished(CANCELLED)``, and the
        ``CancelledError`` propagates.
        """
        # region ch07: fresh state; step until why_stop says; Interrupted and CancelledError
        # more: clear the cancel Event first; except asyncio.CancelledError: sink.emit, then raise
        self._cancel_requested.clear()
        self._finish_requested = None
        self.history.append(UserMessage(content=prompt))
        state = RunState(StuckDetector(self.limits.stuck_after))
        try:
            while (reason := self.why_stop(state)) is None:
                async for event in self.step(state):
                    yield event
        except Interrupted:
            reason = Finish.CANCELLED
        except asyncio.CancelledError:
            self.sink.emit(state.finished(Finish.CANCELLED))
            raise
        yield state.finished(reason)
        # endregion
