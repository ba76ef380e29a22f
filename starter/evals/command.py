"""``claw eval``: run tasks, write the runs as JSONL, print the summary, draw the report.

    claw eval                                   # the shipped tasks, scripted model
    claw eval lite.jsonl --repos ~/clones --model openrouter:openai/gpt-4o-mini --runs 3
    claw eval --model scripted:naive --out naive.jsonl --compare eval-results.jsonl --report r.html

A real model costs money and needs its key (``OPENROUTER_API_KEY`` or ``ANTHROPIC_API_KEY``),
which the workers get in their job (``Setup``), with the settings in force here: the rules
and hooks the evaluated agent runs under, and ``CLAW_BASE_URL``. The tests use the scripted
model, and a real one only against a server of their own on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..display import one_line, terminal_text
from ..errors import ClawError
from ..options import OneLineParser, positive_int
from .harness import Config, RunResult, Setup, read_results, run_all, write_results
from .report import configs_of, describe, html_report, summarize
from .shipped import tasks as shipped_tasks
from .tasks import Task, TaskError, load_tasks


def dollars(text: str) -> Decimal:
    """``--max-cost``: an amount of US dollars above zero."""
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an amount of dollars: {text!r}") from None
    if not amount.is_finite() or amount <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0 dollars: {text!r}")
    return amount


def seconds(text: str) -> float:
    """``--time-limit``: a number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0 seconds: {text!r}")
    return value


def setup_for(model: str, cwd: Path) -> Setup:
    """What every worker gets: the settings in force in ``cwd``, and the key ``model`` needs.

    The settings are read as ``claw`` reads them there (chapter 17's layers; the folder's
    allow rules and hooks only if you trusted it, as ``trust.py`` remembers). The key comes
    from ``secrets_env.secret``: ``claw`` took it out of the environment when it started.
    """
    from ..configure import rule_checker
    from ..providers.anthropic import API_KEY_VARIABLE as ANTHROPIC_KEY
    from ..providers.openrouter import API_KEY_VARIABLE as OPENROUTER_KEY
    from ..secrets_env import secret
    from ..settings import load_settings
    from ..trust import is_trusted, trust_file

    def warn(note: str) -> None:
        print(f"claw eval: warning: {terminal_text(note)}", file=sys.stderr)

    trusted = is_trusted(cwd, trust_file())
    loaded = load_settings(cwd, trusted=trusted, warn=warn, check_rule=rule_checker())
    variable = {"openrouter": OPENROUTER_KEY, "anthropic": ANTHROPIC_KEY}.get(
        model.partition(":")[0]
    )
    key = secret(variable) if variable is not None else None
    return Setup(settings=loaded.settings, key=key or "")


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The command line of ``claw eval``."""
    parser = OneLineParser(prog="claw eval", description="Measure claw on tasks, offline.")
    parser.add_argument("tasks", nargs="*", type=Path, help="JSONL task files (default: shipped)")
    parser.add_argument(
        "--model", default="scripted:solve", help="scripted:NAME, openrouter:ID or anthropic:ID"
    )
    parser.add_argument("--name", help="what the report calls this configuration (default: model)")
    parser.add_argument("--prompt", default="", help="text added to claw's system prompt")
    parser.add_argument("--runs", type=positive_int, default=1, help="runs of every task")
    parser.add_argument("--workers", type=positive_int, default=2, help="runs at a time")
    parser.add_argument("--max-steps", type=positive_int, default=30, help="model calls per run")
    parser.add_argument("--max-cost", type=dollars, help="US dollars per run")
    parser.add_argument(
        "--time-limit", type=seconds, help="seconds per run (default: the task's)"
    )
    parser.add_argument("--repos", type=Path, help="folder of clones (owner__name) for SWE-bench")
    parser.add_argument("--out", type=Path, default=Path("eval-results.jsonl"), help="results")
    parser.add_argument("--compare", type=Path, help="another results file to compare with")
    parser.add_argument("--report", type=Path, help="write an HTML comparison report here")
    parser.add_argument(
        "--only", action="extend", nargs="+", metavar="ID", help="run only these instance_ids"
    )
    return parser.parse_args(argv)


def only(tasks: list[Task], ids: Sequence[str]) -> list[Task]:
    """The tasks ``--only`` names, in their order; ``TaskError`` names any id no task has.

    ``--only`` takes every word up to the next option, so a task file written after it would be
    read as an id: the error then says to name task files first.
    """
    known = {task.instance_id for task in tasks}
    unknown = [name for name in ids if name not in known]
    if unknown:
        raise TaskError(
            f"--only names no task {', '.join(unknown)} (task files go before --only; "
            f"the tasks are: {', '.join(sorted(known))})"
        )
    return [task for task in tasks if task.instance_id in ids]


def main(argv: Sequence[str]) -> int:
    """``claw eval``: 0 when every run passed, 1 when some did not, 2 for bad input."""
    arguments = parse_arguments(argv)
    try:
        tasks: list[Task] = []
        for path in arguments.tasks:
            tasks.extend(load_tasks(path))
        tasks = tasks or shipped_tasks()
        if arguments.only:
            tasks = only(tasks, arguments.only)
        config = Config(
            name=arguments.name or arguments.model,
            model=arguments.model,
            prompt=arguments.prompt,
            max_steps=arguments.max_steps,
            max_cost=arguments.max_cost,
            time_limit=arguments.time_limit,
        )
        other: list[RunResult] = read_results(arguments.compare) if arguments.compare else []
        setup = setup_for(config.model, Path.cwd())
    except (OSError, TaskError, ValueError, ClawError) as error:
        print(f"claw eval: {error}", file=sys.stderr)
        return 2

    def progress(result: RunResult) -> None:
        print(one_line(f"{result.status:>7} {result.instance_id} #{result.run} {result.reason}"))

    results = run_all(
        tasks, [config], arguments.runs, arguments.workers, arguments.repos, progress, setup
    )
    write_results(arguments.out, results)
    everything = [*results, *(r for r in other if r.config != config.name)]
    for name in configs_of(everything):
        print(describe(summarize(everything, name)))
    if arguments.report:
        arguments.report.write_text(html_report(everything), encoding="utf-8")
        print(f"report: {arguments.report}")
    return 0 if all(r.passed for r in results) else 1
