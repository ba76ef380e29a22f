"""Small helpers shared by the benchmarks: statistics, timing and the result record."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Better = Literal["higher", "lower"]


@dataclass(frozen=True)
class Result:
    """One benchmark's headline number, its target, and context measured in the same run."""

    benchmark: str
    """A short name, e.g. ``"SSE throughput"``."""
    metric: str
    """What ``value`` is, e.g. ``"openai SDK time / claw time"``."""
    value: float
    unit: str
    target: float
    better: Better
    """Whether a value above (``"higher"``) or below (``"lower"``) the target passes."""
    context: dict[str, str] = field(default_factory=dict)
    """Supporting numbers, already formatted, in the order to show them."""
    raw: dict[str, float | int | list[float]] = field(default_factory=dict)
    """The same numbers unformatted, for ``--json``."""

    @property
    def passed(self) -> bool:
        """Whether ``value`` meets ``target``."""
        if self.better == "higher":
            return self.value >= self.target
        return self.value <= self.target

    @property
    def target_text(self) -> str:
        """The target as ``≥ 1.0×`` or ``≤ 100 µs``."""
        sign = "≥" if self.better == "higher" else "≤"
        if self.unit == "×":
            return f"{sign} {self.target:.1f}×"
        return f"{sign} {self.target:g} {self.unit}"


def p95(values: Sequence[float]) -> float:
    """The 95th percentile of ``values``, interpolating between ranks."""
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    """Seconds that awaiting ``action()`` takes.

    A full garbage collection runs first, outside the timing, so no garbage left by earlier
    work is collected on ``action``'s clock; the collections ``action``'s own allocations
    cause stay in, as they would in real use.
    """
    gc.collect()
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start
