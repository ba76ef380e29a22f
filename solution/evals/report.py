"""Adding runs up honestly: pass rates with a Wilson interval, spreads, a comparison report.

One run of an agent on a task is one coin toss: the same model on the same task passes one
time and fails the next. So a pass rate is reported with the interval it could plausibly be
in (Wilson's score interval, which stays inside 0 to 1 and behaves for small samples and
rates near 0 or 1, where the textbook ``p ± z·√(p(1-p)/n)`` does not), and every other
number with its smallest and largest value over the runs. The report is one HTML file with
hand-written SVG charts: no plotting library, nothing to download.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..cost import format_cost
from .harness import RunResult

Z_95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""

METRICS = ("pass_rate", "steps", "tokens", "cost", "seconds")
"""The numbers the report compares, one chart each."""


def wilson(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for ``successes`` out of ``n`` trials: (low, high).

    ``n == 0`` knows nothing: ``(0.0, 1.0)``.
    """
    # region ch25: centre (p + z²/2n) / (1 + z²/n); half-width z√(p(1-p)/n + z²/4n²) / (1 + z²/n)
    # more: p = successes / n; clamp to [0, 1] against rounding; n == 0 -> (0.0, 1.0)
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
    # endregion


@dataclass(frozen=True)
class Spread:
    """A number measured over several runs: its mean, smallest and largest value."""

    mean: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        """The spread of ``values`` (all zero for none)."""
        if not values:
            return cls(0.0, 0.0, 0.0)
        return cls(sum(values) / len(values), min(values), max(values))


@dataclass(frozen=True)
class Summary:
    """The runs of one configuration, on one task or (``instance_id`` ``"all"``) on all."""

    config: str
    instance_id: str
    runs: int
    passed: int
    pass_rate: Spread
    """The rate, and its Wilson interval as low and high."""
    steps: Spread
    tokens: Spread
    cost: Spread | None
    """``None`` when some run's cost is unknown: never counted as $0."""
    seconds: Spread
    timeouts: int
    errors: int


def summarize(results: Sequence[RunResult], config: str, instance_id: str = "all") -> Summary:
    """Add up the runs of ``config`` on ``instance_id`` (``"all"``: every task)."""
    # region ch25: pick the runs; count passes; wilson for the rate; Spread.of for the rest
    # more: tokens = input + output; any cost None -> cost None; count timeouts and errors
    runs = [
        r for r in results if r.config == config and instance_id in ("all", r.instance_id)
    ]
    passed = sum(r.passed for r in runs)
    low, high = wilson(passed, len(runs))
    costs = [r.cost for r in runs]
    known = [float(c) for c in costs if c is not None]
    return Summary(
        config=config,
        instance_id=instance_id,
        runs=len(runs),
        passed=passed,
        pass_rate=Spread(passed / len(runs) if runs else 0.0, low, high),
        steps=Spread.of([r.steps for r in runs]),
        tokens=Spread.of([r.input_tokens + r.output_tokens for r in runs]),
        cost=Spread.of(known) if len(known) == len(costs) else None,
        seconds=Spread.of([r.seconds for r in runs]),
        timeouts=sum(r.status == "timeout" for r in runs),
        errors=sum(r.status == "error" for r in runs),
    )
    # endregion


def configs_of(results: Sequence[RunResult]) -> list[str]:
    """The configurations in ``results``, in the order they first appear."""
    return list(dict.fromkeys(r.config for r in results))


def tasks_of(results: Sequence[RunResult]) -> list[str]:
    """The tasks in ``results``, in the order they first appear."""
    return list(dict.fromkeys(r.instance_id for r in results))


def money(value: float) -> str:
    """Dollars to a hundredth of a cent, with chapter 17's ``format_cost``."""
    return format_cost(Decimal(str(value)))


def describe(summary: Summary) -> str:
    """One line for a terminal: pass rate with its interval, then the means."""
    rate = summary.pass_rate
    cost = "unknown" if summary.cost is None else money(summary.cost.mean)
    return (
        f"{summary.config}: {summary.passed}/{summary.runs} passed, "
        f"{rate.mean:.0%} (95% CI {rate.low:.0%}–{rate.high:.0%}) · "
        f"steps {summary.steps.mean:.1f} · tokens {summary.tokens.mean:,.0f} · "
        f"cost {cost} · {summary.seconds.mean:.2f} s per run"
        + (f" · {summary.timeouts} timeout(s)" if summary.timeouts else "")
        + (f" · {summary.errors} error(s)" if summary.errors else "")
    )


COLOURS = ("#3b6ea8", "#c2185b", "#2e7d32", "#ef6c00")


def metric(summary: Summary, name: str) -> Spread | None:
    """The spread of metric ``name`` of ``summary`` (``None`` if unknown)."""
    value: Spread | None = getattr(summary, name)
    return value


def svg_chart(
    title: str,
    rows: Sequence[tuple[str, Spread | None]],
    width: int = 520,
    show: Callable[[float], str] = "{:.3g}".format,
) -> str:
    """A horizontal bar chart: a bar at each row's mean, a whisker from its low to its high.

    Each bar's mean is written beside it with ``show``; a row whose value is unknown gets the
    word "unknown" instead of a bar.
    """
    # region ch25: scale to the largest high; per row a <text> label, a <rect>, a <line> whisker
    # more: html.escape every text; height = 30 per row + 30; an unknown row is a <text>unknown
    top = max([s.high for _, s in rows if s is not None] + [0.0]) or 1.0
    left, bar_width, height = 140, width - 220, 30 * len(rows) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(title)}">',
        f'<text x="4" y="16" font-weight="bold">{html.escape(title)}</text>',
    ]
    for index, (label, spread) in enumerate(rows):
        y = 30 + 30 * index
        colour = COLOURS[index % len(COLOURS)]
        parts.append(f'<text x="4" y="{y + 15}">{html.escape(label)}</text>')
        if spread is None:
            parts.append(f'<text x="{left}" y="{y + 15}">unknown</text>')
            continue
        scale = bar_width / top
        parts.append(
            f'<rect x="{left}" y="{y + 4}" width="{spread.mean * scale:.1f}" height="16" '
            f'fill="{colour}"><title>{spread.mean:.4g}</title></rect>'
        )
        parts.append(
            f'<line x1="{left + spread.low * scale:.1f}" y1="{y + 12}" '
            f'x2="{left + spread.high * scale:.1f}" y2="{y + 12}" stroke="black" '
            'stroke-width="2"/>'
        )
        parts.append(f'<text x="{left + bar_width + 10}" y="{y + 15}">{show(spread.mean)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
    # endregion


TITLES = {
    "pass_rate": "pass rate (bar) and 95% Wilson interval",
    "steps": "steps per run (mean, min–max)",
    "tokens": "tokens per run (mean, min–max)",
    "cost": "cost per run in US dollars (mean, min–max)",
    "seconds": "seconds per run (mean, min–max)",
}


SHOW: dict[str, Callable[[float], str]] = {
    "pass_rate": "{:.0%}".format,
    "steps": "{:.1f}".format,
    "tokens": "{:,.0f}".format,
    "cost": money,
    "seconds": "{:.2f}".format,
}
"""How each metric's mean is written beside its bar."""


def html_report(results: Sequence[RunResult], title: str = "claw eval") -> str:
    """The comparison of every configuration in ``results``: a table and one chart a metric."""
    configs = configs_of(results)
    overall = [summarize(results, config) for config in configs]
    rows = "\n".join(
        f"<tr><td>{html.escape(s.config)}</td><td>{s.passed}/{s.runs}</td>"
        f"<td>{s.pass_rate.mean:.0%} ({s.pass_rate.low:.0%}–{s.pass_rate.high:.0%})</td>"
        f"<td>{s.steps.mean:.1f}</td><td>{s.tokens.mean:,.0f}</td>"
        f"<td>{'unknown' if s.cost is None else money(s.cost.mean)}</td>"
        f"<td>{s.seconds.mean:.2f}</td><td>{s.timeouts}</td><td>{s.errors}</td></tr>"
        for s in overall
    )
    charts = "\n".join(
        f'<figure id="{name}">'
        + svg_chart(
            TITLES[name], [(s.config, metric(s, name)) for s in overall], show=SHOW[name]
        )
        + "</figure>"
        for name in METRICS
    )
    per_task = "\n".join(
        f"<tr><td>{html.escape(task)}</td>"
        + "".join(
            f"<td>{s.passed}/{s.runs}</td>"
            for s in (summarize(results, config, task) for config in configs)
        )
        + "</tr>"
        for task in tasks_of(results)
    )
    heads = "".join(f"<th>{html.escape(c)}</th>" for c in configs)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em}}</style>
</head><body>
<h1>{html.escape(title)}</h1>
<table><tr><th>configuration</th><th>passed</th><th>pass rate (95% Wilson)</th>
<th>steps</th><th>tokens</th><th>cost</th><th>seconds</th><th>timeouts</th><th>errors</th></tr>
{rows}
</table>
{charts}
<h2>Per task</h2>
<table><tr><th>task</th>{heads}</tr>
{per_task}
</table>
</body></html>
"""
