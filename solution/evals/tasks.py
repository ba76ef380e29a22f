"""The task format: one SWE-bench instance, plus what claw needs to run it offline.

A task is a JSON object, one per line of a JSONL file. SWE-bench's fields keep their names
and meanings, so a file of SWE-bench Lite instances loads as it is; claw's own fields
(``files``, ``unchanged``, ``no_changes``, ``answer_pattern``, ``test_command``,
``scripts``, limits) are all optional. The rule that shapes this module: a bad task is
refused when it is loaded, with the file, the line and the field named, never halfway
through a run. That includes a task that names a file outside its own repository (an
absolute path, a ``..``, or git's own ``.git`` folder) in ``files``, ``unchanged`` or
``test_patch``: nothing of it is written anywhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ..errors import ClawError
from ..types import AssistantTurn

DEFAULT_TEST_COMMAND = ("python", "-m", "pytest", "-q", "-p", "no:cacheprovider")
"""How a task's tests run when it names no command: pytest, given the test ids."""


class TaskError(ClawError, ValueError):
    """A task file or task that cannot be used; the message names where and which field."""


def outside(path: str) -> str | None:
    """Why ``path`` does not name a file inside a task's repository, or ``None`` if it does.

    A task's paths are relative to its repository. An absolute one, or one that climbs out
    with ``..``, would be written (or patched) outside it; and ``.git`` is git's own: a hook
    or a ``core.fsmonitor`` planted there runs as soon as the harness commits.
    """
    parts = PurePosixPath(path).parts
    if not parts or "\0" in path:
        return "names no file"
    if path.startswith("/"):
        return "is absolute"
    if ".." in parts:
        return "climbs out of the repository with '..'"
    if parts[0].lower() == ".git":
        return "is inside .git, which only git writes"
    return None


HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
"""A hunk's header in a unified diff: how many old and new lines its body holds."""

PATCH_HEADERS = ("--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ")
"""The lines of a git diff that name a file (``diff --git`` repeats them)."""


def patch_paths(patch: str) -> list[str]:
    """The paths a diff names, as ``git apply`` reads them (``a/`` and ``b/`` taken off).

    The hunks' bodies are skipped by their counts: a removed line ``-- x`` is not a header.
    """
    paths, lines = [], iter(patch.splitlines())
    for line in lines:
        hunk = HUNK.match(line)
        if hunk is not None:
            old, new = (int(count) if count is not None else 1 for count in hunk.groups())
            while old > 0 or new > 0:
                body = next(lines, None)
                if body is None:
                    break
                sign = body[:1]
                old -= sign in (" ", "-", "")
                new -= sign in (" ", "+", "")
            continue
        header = next((h for h in PATCH_HEADERS if line.startswith(h)), None)
        if header is None:
            continue
        path = line[len(header) :].split("\t")[0].strip().strip('"')
        if path == "/dev/null":
            continue
        if header in ("--- ", "+++ ") and path[:2] in ("a/", "b/"):
            path = path[2:]
        paths.append(path)
    return paths


# --8<-- [start:task]
class Task(BaseModel):
    """One task: SWE-bench's instance fields, then claw's own (all optional)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    # SWE-bench's fields, with its names.
    instance_id: str = Field(min_length=1)
    repo: str = ""
    """``owner/name`` on GitHub; a local clone is looked for under ``--repos``."""
    base_commit: str = ""
    """The commit the task starts from (a task with ``files`` gets a fresh one)."""
    problem_statement: str = Field(min_length=1)
    """The issue text: the prompt the agent is given."""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    """Tests that fail before the fix and must pass after it."""
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    """Tests that pass before and must still pass after."""
    patch: str = ""
    """The reference fix (a diff), never shown to the agent."""
    test_patch: str = ""
    """A diff that adds the tests; applied after the agent's run, before the checks."""
    version: str = ""
    environment_setup_commit: str = ""
    hints_text: str = ""
    created_at: str = ""

    # claw's fields.
    files: dict[str, str] = Field(default_factory=dict)
    """The repository's files at the base commit, path to text, for a task that brings them."""
    unchanged: list[str] = Field(default_factory=list)
    """Files the agent must leave exactly as they were."""
    no_changes: bool = False
    """The right answer changes nothing at all (a task to refuse, or to ask about)."""
    answer_pattern: str | None = None
    """A regular expression the agent's last text must match (searched, case-insensitive)."""
    test_command: list[str] = Field(default_factory=lambda: list(DEFAULT_TEST_COMMAND))
    """The command the tests run with; the test ids are added at its end."""
    test_env: dict[str, str] = Field(default_factory=dict)
    """Environment variables added for the tests (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, say)."""
    time_limit: float = Field(default=120.0, gt=0)
    """Seconds a run may take, checks included, before it is stopped and counted a timeout."""
    scripts: dict[str, list[AssistantTurn]] = Field(default_factory=dict)
    """Scripted models' turns for this task, by name (``scripted:NAME`` plays ``NAME``)."""
    # --8<-- [end:task]

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        """Accept SWE-bench's JSON-encoded string of a list as well as a list."""
        # region ch25: a string is JSON text of a list of strings: decode it; anything else as is
        # more: json.loads; a string that is not JSON, or not a list, raises ValueError saying so
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(f"not a JSON list of test ids: {error.msg}") from None
            if not isinstance(value, list):
                raise ValueError("a JSON string here must hold a list of test ids")
        return value
        # endregion

    # --8<-- [start:inside]
    @field_validator("instance_id")
    @classmethod
    def _one_name(cls, value: str) -> str:
        """Refuse an id that is not one file name: it names the run's scratch folder."""
        if "/" in value or "\0" in value or value in (".", ".."):
            raise ValueError(f"{value!r} is not one file name (no '/'): it names a scratch folder")
        return value

    @field_validator("files", "unchanged", "test_patch")
    @classmethod
    def _inside(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse a path that is not inside the task's repository (``outside``)."""
        names = patch_paths(value) if info.field_name == "test_patch" else list(value)
        for name in names:
            why = outside(name)
            if why is not None:
                task = info.data.get("instance_id", "?")
                raise ValueError(f"{name!r} {why}: task {task} may name only its own files")
        return value
    # --8<-- [end:inside]


# --8<-- [start:load]
def parse_task(data: object, where: str) -> Task:
    """Validate one task; a bad one raises ``TaskError`` naming ``where`` and the field."""
    try:
        return Task.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "the task"
        raise TaskError(f"{where}: {field}: {first['msg']}") from None


def load_tasks(path: Path) -> list[Task]:
    """Every task of a JSONL file (one object a line; blank lines skipped), or of a JSON list."""
    text = path.read_text(encoding="utf-8")
    tasks = []
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            raise TaskError(f"{path}: not JSON: {error.msg} (line {error.lineno})") from None
        tasks = [parse_task(item, f"{path}: task {n}") for n, item in enumerate(items, 1)]
    for number, line in enumerate(text.splitlines() if not tasks else [], 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskError(f"{path}:{number}: not JSON: {error.msg}") from None
        tasks.append(parse_task(data, f"{path}:{number}"))
    ids = [task.instance_id for task in tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise TaskError(f"{path}: instance_id used twice: {', '.join(repeated)}")
    return tasks
# --8<-- [end:load]
