"""The tasks claw ships (``evals/shipped.py``) are sound: each passes with its solving script,
and every naive script but one is caught.

This checks the course's task data, given code with no learner region, not a learner's harness:
so it runs with the tooling tests (``clawbook verify``, CI), against the reference. Twenty runs,
each with a scratch repository and most with their tests, take seconds. Chapter 25's own test
runs one shipped task through the learner's harness.
"""

import asyncio
from collections.abc import Sequence
from pathlib import Path

from claw.evals.harness import Config, run_agent
from claw.evals.scratch import CheckResult, check, make_repo
from claw.evals.shipped import REFUSAL, tasks
from claw.evals.tasks import Task

HASTY_BUT_RIGHT = "claw__parse-equals"
"""The one task whose naive script's fix is the right one (the page says so)."""


async def run_together(jobs: Sequence[tuple[Task, Config]], folder: Path) -> list[CheckResult]:
    """Run each job as the worker does (scratch repository, agent, check), all at once here.

    The runs spend their time waiting for git and for their tests, so they overlap well.
    """

    async def one(n: int, task: Task, config: Config) -> CheckResult:
        repo = folder / str(n)
        base = await asyncio.to_thread(make_repo, task, repo)
        finished = await run_agent(task, config, repo)
        return await asyncio.to_thread(check, task, repo, base, finished.text)

    return await asyncio.gather(*(one(n, *job) for n, job in enumerate(jobs)))


def test_shipped_tasks_pass_with_their_solutions_and_catch_the_naive_ones(tmp_path: Path) -> None:
    shipped = tasks()
    assert len(shipped) >= 10
    assert any(task.no_changes and task.answer_pattern == REFUSAL for task in shipped)
    assert all("solve" in task.scripts for task in shipped)
    naive = [task for task in shipped if "naive" in task.scripts]
    configs = [Config(name="solve"), Config(name="naive", model="scripted:naive")]
    jobs = [(task, config) for config in configs for task in shipped]
    verdicts = asyncio.run(run_together(jobs, tmp_path))
    by = {(c.name, t.instance_id): v for (t, c), v in zip(jobs, verdicts, strict=True)}
    for task in shipped:
        assert by["solve", task.instance_id].passed, by["solve", task.instance_id].reason
    caught = [t.instance_id for t in naive if not by["naive", t.instance_id].passed]
    assert caught == [t.instance_id for t in naive if t.instance_id != HASTY_BUT_RIGHT]
