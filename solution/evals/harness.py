"""Running tasks: each run in its own worker process and scratch repository, under limits.

``run_all`` hands every (task, configuration, run) to a pool of threads, each of which starts
one worker process (``python -m <package>.evals.harness``) and waits for it. The worker makes
the scratch repository, runs claw's real agent and tools on the task's problem statement,
checks the result and prints one ``RunResult`` as JSON. The rule that shapes this module: a
run that goes over its time limit is killed with its whole process group and recorded as
``timeout``; nothing a task does can hang the harness or leak into another run.

The agent runs guarded, as every claw does (``guard``): the user's permission rules and hooks
(``Setup.settings``), then the safety checks, which keep its tools in the scratch repository.
Nobody is there to answer a question, so it runs in ``bypassPermissions`` mode: what no rule
decides runs, and whatever would ask (an ``ask`` rule, a command claw cannot split safely) is
refused, and the model is told so. What this does not isolate: the worker is a process of
yours, with your files and your network; the safety checks see the paths a tool names and a
command's redirections, not what a program run by ``bash`` opens by itself; and a task's own
``test_command`` runs unguarded, as code you chose to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..agent import Finish
from ..events import Event, RunFinished, StepUsage
from ..loop import Agent, Limits
from ..prompt import gather_environment, system_prompt
from ..registry import default_tools
from ..settings import Settings
from ..streaming import MockStreamProvider, StreamProvider
from ..tools.bash import scrubbed_env
from ..types import AssistantTurn, TokenUsage
from .scratch import check, make_repo
from .tasks import Task

GIVE_UP = AssistantTurn(text="I cannot do this task.", usage=TokenUsage(cost=Decimal(0)))
"""What a scripted model says for a task that has no script of its name (and costs nothing)."""

Status = Literal["passed", "failed", "timeout", "error"]


class Config(BaseModel):
    """One configuration to measure: a model, an optional extra prompt, and limits."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    """What the report calls it."""
    model: str = "scripted:solve"
    """``scripted:NAME`` plays each task's script ``NAME``; ``openrouter:ID`` or
    ``anthropic:ID`` asks a real model (its key in ``Setup``, and money)."""
    prompt: str = ""
    """Added to the end of claw's system prompt."""
    max_steps: int = Field(default=30, ge=1)
    max_cost: Decimal | None = Field(default=None, gt=0)
    """US dollars one run may spend; the run ends ``budget`` once it has spent more."""
    time_limit: float | None = Field(default=None, gt=0)
    """Seconds per run, instead of each task's own ``time_limit``."""


class Setup(BaseModel):
    """What ``claw eval`` hands every worker with its job: the user's settings and the key."""

    model_config = ConfigDict(frozen=True)

    settings: Settings = Field(default_factory=Settings)
    """The settings in force where ``claw eval`` runs (chapter 17): the agent runs under their
    permission rules and hooks, and asks a real model at their ``base_url`` (``CLAW_BASE_URL``)."""
    key: str = Field(default="", repr=False)
    """The real model's API key. ``claw`` takes the keys out of its environment as it starts
    (``secrets_env``), so a worker finds none there: the key travels in the job, on stdin."""


class RunResult(BaseModel):
    """One run of one task under one configuration: one line of the results file."""

    instance_id: str
    config: str
    run: int
    status: Status
    reason: str = ""
    finish: str = ""
    """How the agent's run ended (chapter 7's ``Finish``), empty if it never ended."""
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None
    """US dollars, when every call's cost was reported; ``None`` when unknown."""
    seconds: float = 0.0
    changed: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether the run solved the task."""
        return self.status == "passed"


def provider_for(config: Config, task: Task, setup: Setup | None = None) -> StreamProvider:
    """The model ``config`` names, for ``task``: a script, or a real provider.

    A real provider gets ``setup``'s key and URL, never the environment's: ``""`` (no key)
    is refused for OpenRouter's and Anthropic's own servers.
    """
    setup = setup or Setup()
    kind, _, name = config.model.partition(":")
    if kind == "scripted":
        return MockStreamProvider(task.scripts.get(name, [GIVE_UP]))
    from ..providers.openrouter import OPENROUTER_URL, OpenRouterProvider

    url = setup.settings.base_url
    if kind == "openrouter":
        return OpenRouterProvider(name, base_url=url, api_key=setup.key)
    if kind == "anthropic":
        from ..providers.anthropic import ANTHROPIC_URL, AnthropicProvider

        url = ANTHROPIC_URL if url.rstrip("/") == OPENROUTER_URL else url
        return AnthropicProvider(name, base_url=url, api_key=setup.key)
    raise ValueError(
        f"unknown model {config.model!r}: use scripted:NAME, openrouter:ID or anthropic:ID"
    )


# --8<-- [start:guarded]
MODE = "bypassPermissions"
"""The permission mode of an evaluated agent: nobody can answer its questions (module doc)."""


class PromptBlockedError(RuntimeError):
    """A ``UserPromptSubmit`` hook of the user's blocked the task's problem statement."""


async def run_guarded(agent: Agent, repo: Path, settings: Settings, prompt: str) -> RunFinished:
    """Run ``prompt`` with chapters 13-15 in front of ``agent``'s tools in ``repo``.

    ``guard`` builds them from ``settings`` (the user's rules and hooks), in ``MODE``,
    with no approver: a call that would ask is refused, and the refusal is its result. The run
    goes through ``assemble.run_prompt``, the loop every front door of claw runs a prompt with.
    """
    from ..assemble import run_prompt
    from ..guard import guard
    from ..hooks import PromptBlocked
    from ..permissions import Mode

    guarded = guard(agent, repo, mode=Mode(MODE), settings=settings)
    ended = await run_prompt(agent, guarded, prompt, show=lambda event: None)
    if isinstance(ended, PromptBlocked):
        raise PromptBlockedError(f"a UserPromptSubmit hook blocked the task: {ended.reason}")
    return ended
# --8<-- [end:guarded]


async def run_agent(
    task: Task, config: Config, repo: Path, setup: Setup | None = None
) -> RunFinished:
    """Run claw's agent, guarded, with its default tools in ``repo``, on the task's problem."""
    setup = setup or Setup()
    provider = provider_for(config, task, setup)
    tools = default_tools(repo)
    system = system_prompt(gather_environment(repo), tools.definitions())
    if config.prompt:
        system = f"{system}\n\n{config.prompt}"
    agent = Agent(provider, tools, system=system, limits=Limits(config.max_steps), concurrent=True)
    spent = Decimal(0)

    def keep_to_budget(event: Event) -> None:
        nonlocal spent
        if isinstance(event, StepUsage) and event.usage.cost is not None:
            spent += event.usage.cost
            if config.max_cost is not None and spent > config.max_cost:
                agent.request_finish(Finish.BUDGET)

    agent.sink.add(keep_to_budget)
    # The harness stops a run that is out of time with SIGTERM: cancelling the agent stops
    # the tool in flight, and the bash tool kills its command's own process group with it.
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, agent.cancel)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if isinstance(provider, contextlib.AbstractAsyncContextManager):
                await stack.enter_async_context(provider)  # a real provider's connection
            finished = await run_guarded(agent, repo, setup.settings, task.problem_statement)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
    if finished.reason == Finish.CANCELLED:
        raise SystemExit(128 + signal.SIGTERM)  # no checks: the harness counts a timeout
    return finished


def run_here(
    task: Task,
    config: Config,
    run: int,
    repo: Path,
    repos: Path | None,
    setup: Setup | None = None,
) -> RunResult:
    """One run, in this process: scratch repository, agent, checks. What the worker does."""
    started = time.monotonic()
    base = make_repo(task, repo, repos)
    finished = asyncio.run(run_agent(task, config, repo, setup))
    verdict = check(task, repo, base, finished.text)
    return RunResult(
        instance_id=task.instance_id,
        config=config.name,
        run=run,
        status="passed" if verdict.passed else "failed",
        reason=verdict.reason,
        finish=str(finished.reason),
        steps=finished.steps,
        input_tokens=finished.usage.input_tokens,
        output_tokens=finished.usage.output_tokens,
        cost=finished.usage.cost if finished.steps else Decimal(0),
        seconds=round(time.monotonic() - started, 3),
        changed=list(verdict.changed),
    )


def worker() -> None:
    """The worker process: a job as JSON on stdin, its ``RunResult`` as JSON on stdout.

    A worker that holds a key makes itself not dumpable first (``secrets_env``): the agent's
    commands, its children, must not read the key from its memory.
    """
    job = json.loads(sys.stdin.read())
    task, config = Task.model_validate(job["task"]), Config.model_validate(job["config"])
    setup = Setup.model_validate(job.get("setup") or {})
    if setup.key:
        from ..secrets_env import forbid_memory_reads

        forbid_memory_reads()
    repos = Path(job["repos"]) if job["repos"] else None
    try:
        result = run_here(task, config, job["run"], Path(job["repo"]), repos, setup)
    except Exception as error:  # one broken run is a result, never a lost harness
        result = RunResult(
            instance_id=task.instance_id,
            config=config.name,
            run=job["run"],
            status="error",
            reason=f"{type(error).__name__}: {error}",
        )
    print(result.model_dump_json())


def worker_command() -> list[str]:
    """How to start a worker: this module, run by the interpreter running claw.

    ``-P`` keeps the current folder off the front of ``sys.path``: the package must come from
    ``PYTHONPATH`` (the folder that holds this very package), never from a ``starter/`` or
    ``solution/`` that happens to sit in the folder claw was started in.
    """
    return [sys.executable, "-P", "-m", __name__]


# --8<-- [start:stop]
GRACE = 5.0
"""Seconds a worker has, after SIGTERM, to stop its agent's commands before SIGKILL."""


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a worker and everything it started: SIGTERM, then SIGKILL after ``GRACE``.

    Both go to the worker's process group (git, the tests). The agent's bash commands run in
    groups of their own; the worker's SIGTERM handler cancels the agent, which kills them.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.communicate(timeout=GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
# --8<-- [end:stop]


def run_isolated(
    task: Task, config: Config, run: int, repos: Path | None = None, setup: Setup | None = None
) -> RunResult:
    """One run in a fresh worker process and scratch folder, killed at its time limit.

    The worker starts a session of its own (a new process group), so a timeout kills the
    agent's commands with it. The scratch folder is removed afterwards, whatever happened.
    ``setup`` (the user's settings and the key) goes to the worker in its job.
    """
    limit = config.time_limit or task.time_limit
    # region ch25: mkdtemp; Popen the worker (own session, no secrets); send the job, with a timeout
    # more: on TimeoutExpired: stop(process) (it waits for the group), then a "timeout" result
    scratch = Path(tempfile.mkdtemp(prefix=f"claw-eval-{task.instance_id[:40]}-"))
    job = {
        "task": task.model_dump(mode="json"),
        "config": config.model_dump(mode="json"),
        "run": run,
        "repo": str(scratch / "repo"),
        "repos": str(repos) if repos is not None else None,
        "setup": (setup or Setup()).model_dump(mode="json"),
    }
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    env = {**scrubbed_env(os.environ), "PYTHONPATH": path}
    started = time.monotonic()
    process = subprocess.Popen(
        worker_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(json.dumps(job), timeout=limit)
    except subprocess.TimeoutExpired:
        stop(process)
        return RunResult(
            instance_id=task.instance_id,
            config=config.name,
            run=run,
            status="timeout",
            reason=f"stopped after its time limit of {limit:g} s",
            seconds=round(time.monotonic() - started, 3),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    lines = out.strip().splitlines()
    if process.returncode != 0 or not lines:
        why = (err.strip().splitlines() or [f"exit status {process.returncode}"])[-1]
        return RunResult(
            instance_id=task.instance_id, config=config.name, run=run, status="error", reason=why
        )
    return RunResult.model_validate_json(lines[-1])
    # endregion


def run_all(
    tasks: Sequence[Task],
    configs: Sequence[Config],
    runs: int = 1,
    workers: int = 2,
    repos: Path | None = None,
    on_result: Callable[[RunResult], None] | None = None,
    setup: Setup | None = None,
) -> list[RunResult]:
    """Every task under every configuration ``runs`` times, ``workers`` runs at a time.

    Results come back in the order of the jobs (configuration, task, run), whatever order
    they finished in; ``on_result`` hears each as it finishes; every worker gets ``setup``.
    """
    jobs = [(task, config, n) for config in configs for task in tasks for n in range(1, runs + 1)]

    def one(job: tuple[Task, Config, int]) -> RunResult:
        result = run_isolated(*job, repos=repos, setup=setup)
        if on_result is not None:
            on_result(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, jobs))


def write_results(path: Path, results: Iterable[RunResult]) -> None:
    """Write ``results`` to ``path`` as JSONL: one run a line."""
    with path.open("w", encoding="utf-8") as out:
        for result in results:
            out.write(result.model_dump_json() + "\n")


def read_results(path: Path) -> list[RunResult]:
    """The runs of a JSONL results file; a bad line raises ``ValueError`` naming it."""
    # region ch25: one RunResult per non-blank line; a bad line's error names path:line
    # more: RunResult.model_validate_json(line); catch pydantic's ValidationError (a ValueError)
    results = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            results.append(RunResult.model_validate_json(line))
        except ValueError as error:
            raise ValueError(f"{path}:{number}: not a run result: {error}") from None
    return results
    # endregion


if __name__ == "__main__":
    worker()
