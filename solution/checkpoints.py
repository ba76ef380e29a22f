"""Checkpoints: where each prompt started, kept, so ``/rewind`` can go back to it.

Two records are kept for every prompt of a session, in a folder beside its transcript
(``<session-id>.checkpoints/``, as private as the transcript), so ``--resume`` finds them:

1. **before-images.** Just before ``write``, ``edit`` or ``apply_patch`` runs, each file the call
   names is copied as it is (its bytes, whatever they are; or *absent* if it does not exist) into
   ``objects/``, named by the SHA-256 of its bytes (the same content is kept once), and a line of
   ``log.jsonl`` says which prompt, which path, which object. A file over ``MAX_IMAGE_BYTES``
   is not copied: the line says so, and a rewind says it could not restore it.
2. **a snapshot of the work tree**, in a git repository: when a prompt starts, the whole work
   tree (what ``git add --all`` would take: ignored files not) is written as a git commit, through
   a temporary index (``GIT_INDEX_FILE``), and kept alive by the ref
   ``refs/claw/checkpoints/<session-id>``. The user's branches, index, ``HEAD`` and stash are
   never touched. This covers what ``bash`` changed, which no before-image sees.

Rewinding the code to prompt *k* puts every file back as it was when prompt *k* started: a path
git covers takes its state from prompt *k*'s snapshot, any other path its earliest before-image
taken at or after prompt *k*. The rule that shapes the restore: a crash leaves the old state or the
new, never a mix. A journal (every path, its bytes before and after) is written first; then the
``rewind`` record goes into the transcript (the moment the rewind counts); then each file is
replaced (a temporary file and ``os.replace``) or removed; then the journal goes. A journal found
later (``recover``) is finished if its record is in the transcript, and undone if not.

Rewinding the conversation appends a ``history`` record holding the messages before prompt *k*:
the transcript stays append-only, and loading the session (chapter 22) replays it.

What this does not cover: outside a git repository, and in ignored files, what ``bash`` changed;
files outside the workspace; what a command did beyond files (a database, a package installed, a
message sent); permission bits; empty folders left behind; a file over the size cap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from .display import terminal_text, warning_line
from .errors import ClawError
from .events import SubagentEvent, ToolCalled, ToolResult
from .instructions import git_could_find
from .preflight import PreflightAgent
from .private import private_folder
from .todo import Todo, if_written, if_written_async
from .tools.fs import OutsideRoot, Root
from .tools.patch import PatchError, UpdateFile, parse_patch
from .tools.write import atomic_write, atomic_write_at
from .transcript import encode, history_record
from .types import Message, UserMessage

if TYPE_CHECKING:
    from .loop import Agent
    from .sessions import SessionRecorder

MAX_IMAGE_BYTES = 5_000_000
"""The largest file whose before-image is kept; a larger one is named, not copied."""

TITLE_CHARS = 50
"""The most characters of a prompt's first line that ``/rewind`` shows."""

REF_PREFIX = "refs/claw/checkpoints/"
"""Where the snapshots' refs live: outside ``refs/heads``, so no branch is ever made or moved."""

TOO_LARGE = "too-large"
"""The ``before`` of a change whose file was over the cap: nothing was kept."""

CHANGING_TOOLS = frozenset({"write", "edit", "apply_patch"})
"""The tools whose files get a before-image before they run."""

Image = bytes | None
"""A file's state: its bytes, or ``None`` for a file that does not exist."""

What = Literal["code", "conversation", "both"]
"""What a rewind restores."""


class CheckpointError(ClawError):
    """A rewind that cannot be done as asked; the message says why, and nothing was changed."""


class Crash(BaseException):
    """Raised by tests in place of a crash: it passes every ``except Exception``."""


@dataclass(frozen=True)
class Prompt:
    """One prompt of the session, as its checkpoint keeps it."""

    number: int
    """1 for the session's first prompt, and so on; never reused."""
    text: str
    """The whole prompt, as the person typed it."""
    keep: int
    """How many messages the history held before the prompt joined it."""
    commit: str | None
    """The git snapshot of the work tree when it started; ``None`` outside git."""


@dataclass(frozen=True)
class Change:
    """A before-image: ``path`` as it was just before a tool of prompt ``prompt`` changed it."""

    prompt: int
    path: str
    before: str | None
    """The object's name (its SHA-256), ``None`` for a file that did not exist, or ``TOO_LARGE``."""
    call: str
    """The tool call's id: a failed call changed nothing, and is left out of the list."""


@dataclass
class RewindPlan:
    """What a code rewind will do: each path's state to put back, and what it cannot."""

    target: dict[str, Image] = field(default_factory=dict)
    """Each path whose state differs from the one wanted, and that state."""
    lost: list[str] = field(default_factory=list)
    """Paths over the cap when they were changed: they stay as they are."""


class Recorded(Protocol):
    """What a conversation rewind needs of chapter 22's recorder."""

    written: list[Message]


# --8<-- [start:git]
def git(root: Path, *arguments: str, env: dict[str, str] | None = None) -> bytes:
    """``git ARGUMENTS`` run in ``root``: its output; a failure is ``CalledProcessError``."""
    return subprocess.run(
        ["git", *arguments], cwd=root, capture_output=True, check=True, env=env
    ).stdout


def in_git(root: Path) -> bool:
    """Whether ``root`` is inside a git work tree (and git is installed).

    Outside any repository (``git_could_find``) git is not started: claw starts there often.
    """
    if not git_could_find(root):
        return False
    try:
        return git(root, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except (OSError, subprocess.CalledProcessError):
        return False


@cache
def index_file(root: Path) -> Path:
    """The user's index file for the work tree at ``root`` (``git rev-parse --git-path index``).

    Asked once per folder: where a repository keeps its index does not change while claw runs.
    """
    return root / git(root, "rev-parse", "--git-path", "index").decode().strip()


IDENTITY = {
    "GIT_AUTHOR_NAME": "claw",
    "GIT_AUTHOR_EMAIL": "claw@localhost",
    "GIT_COMMITTER_NAME": "claw",
    "GIT_COMMITTER_EMAIL": "claw@localhost",
}
"""Who a snapshot's commit says made it: it never depends on the user's git settings."""
# --8<-- [end:git]


# --8<-- [start:snapshot]
def snapshot_tree(root: Path) -> str:
    """The work tree under ``root`` as a git tree, made in a temporary index; the tree's id.

    The temporary index starts as a copy of the user's (so tracked files count, ignored or
    not), then ``git add --all .`` takes the work tree's state; ``GIT_INDEX_FILE`` points git
    at the copy, so the user's index is only read.
    """
    # region ch27: copy the user's index to a temporary file; add --all, write-tree through it
    # more: index_file(root); env = {**os.environ, "GIT_INDEX_FILE": copy}; shutil.copyfile
    index = index_file(root)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / index.name
        if index.is_file():
            shutil.copyfile(index, copy)
        env = {**os.environ, "GIT_INDEX_FILE": str(copy)}
        git(root, "add", "--all", ".", env=env)
        return git(root, "write-tree", env=env).decode().strip()
    # endregion


def snapshot(root: Path, ref: str, message: str, parent: str | None = None) -> str:
    """Commit the work tree under ``root`` (``snapshot_tree``) after ``parent``; the commit's id.

    ``ref`` (outside ``refs/heads``) is moved to the new commit, whose parent is the session's
    last snapshot, so every snapshot of the session stays reachable, and safe from ``git gc``.
    """
    # region ch27: commit-tree the tree (-p parent, if any) with claw's IDENTITY; update-ref
    # more: env = {**os.environ, **IDENTITY}; git(root, "commit-tree", tree, "-p", ..., "-m", ...)
    tree = snapshot_tree(root)
    parents = ["-p", parent] if parent is not None else []
    env = {**os.environ, **IDENTITY}
    commit = git(root, "commit-tree", tree, *parents, "-m", message, env=env).decode().strip()
    git(root, "update-ref", ref, commit)
    return commit
    # endregion
# --8<-- [end:snapshot]


# --8<-- [start:tree-files]
def tree_files(root: Path, tree: str) -> dict[str, str]:
    """The regular files of ``tree`` under ``root``: each path (relative to ``root``) and blob."""
    listing = git(root, "ls-tree", "-r", "-z", tree, "--", ".")
    files: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        info, name = entry.split(b"\t", 1)
        mode, kind, blob = info.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            files[os.fsdecode(name)] = blob.decode()
    return files


def blob(root: Path, name: str) -> bytes:
    """The bytes of git's blob ``name``."""
    return git(root, "cat-file", "blob", name)


def ignored(root: Path, paths: Iterable[str]) -> set[str]:
    """Those of ``paths`` that git ignores in ``root`` (``git check-ignore``)."""
    asked = list(paths)
    if not asked:
        return set()
    data = b"".join(os.fsencode(path) + b"\0" for path in asked)
    found = subprocess.run(
        ["git", "check-ignore", "-z", "--stdin"], cwd=root, input=data, capture_output=True
    )
    return {os.fsdecode(name) for name in found.stdout.split(b"\0") if name}
# --8<-- [end:tree-files]


def first_line(text: str, limit: int = TITLE_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters (with ``…``)."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def workspace_path(root: Path, path: str) -> str | None:
    """``path`` as a tool named it, relative to ``root`` and normalised; ``None`` if outside."""
    full = os.path.normpath(os.path.join(root, path))
    relative = os.path.relpath(full, root)
    return None if relative == "." or relative.startswith("..") else relative


def paths_of(name: str, arguments: dict[str, Any]) -> list[str]:
    """The paths a call of ``write``, ``edit`` or ``apply_patch`` would change.

    A patch names its files in its headers; a renamed file counts at both its paths. A patch
    that does not parse changes nothing (the tool will say why): no paths.
    """
    if name in ("write", "edit"):
        path = arguments.get("path")
        return [path] if isinstance(path, str) and path else []
    text = arguments.get("patch")
    if name != "apply_patch" or not isinstance(text, str):
        return []
    try:
        operations = parse_patch(text)
    except PatchError:
        return []
    paths = [operation.path for operation in operations]
    paths += [op.move_to for op in operations if isinstance(op, UpdateFile) and op.move_to]
    return paths


class Checkpoints:
    """A session's checkpoints: the prompts, their before-images and snapshots, and rewinds.

    It is an observer (chapter 7): a ``ToolCalled`` of a changing tool takes the before-images
    of its files; a failed ``ToolResult`` marks that call as having changed nothing. ``begin``
    is called as each prompt starts. ``transcript`` is the session's transcript, where the
    ``rewind`` records go.
    """

    def __init__(
        self,
        folder: Path,
        root: Path,
        transcript: Path,
        *,
        limit: int = MAX_IMAGE_BYTES,
        use_git: bool | None = None,
    ) -> None:
        """Keep the checkpoints of the session at ``transcript`` in ``folder``, for ``root``.

        What ``folder`` holds already (a resumed session's) is read. ``use_git`` (default:
        whether ``root`` is in a git work tree) takes a snapshot at each prompt.
        """
        self.folder = folder
        self.root = root.resolve()
        self.fs = Root(self.root)
        self.transcript = transcript
        self.limit = limit
        self.git = in_git(self.root) if use_git is None else use_git
        self.ref = REF_PREFIX + transcript.stem
        self.prompts: list[Prompt] = []
        self.changes: list[Change] = []
        self.failed: set[str] = set()
        """The ids of changing calls that ended in an error (they changed nothing)."""
        self.enabled = True
        """``False`` once a stub of chapter 27 was met: claw goes on without checkpoints."""
        private_folder(folder)
        (folder / "objects").mkdir(exist_ok=True)
        self._load()

    # --8<-- [start:store]
    @property
    def log(self) -> Path:
        """The append-only log of prompts and changes."""
        return self.folder / "log.jsonl"

    @property
    def journal(self) -> Path:
        """The journal of a rewind in progress (none between rewinds)."""
        return self.folder / "journal.json"

    def _load(self) -> None:
        if not self.log.exists():
            return
        for line in self.log.read_bytes().splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # torn by a crash: the change it began was never made
            record = json.loads(line)
            if "prompt" in record and "text" in record:
                self.prompts.append(
                    Prompt(record["prompt"], record["text"], record["keep"], record["commit"])
                )
            elif "change" in record:
                self.changes.append(
                    Change(record["change"], record["path"], record["before"], record["call"])
                )
            elif "failed" in record:
                self.failed.add(record["failed"])

    def _append(self, record: dict[str, Any]) -> None:
        with self.log.open("ab") as file:
            file.write(encode(record))
            file.flush()
            os.fsync(file.fileno())

    def keep(self, data: bytes) -> str:
        """Store ``data`` in ``objects/`` under its SHA-256 (once); that name."""
        name = hashlib.sha256(data).hexdigest()
        path = self.folder / "objects" / name
        if not path.exists():
            atomic_write(path, data)
        return name

    def stored(self, name: str) -> bytes:
        """The bytes stored as ``name``."""
        return (self.folder / "objects" / name).read_bytes()

    def current(self, path: str) -> Image:
        """The state of ``path`` in the workspace now: its bytes, or ``None`` if absent.

        A path that leads out of the workspace now (a folder swapped for a link) is a
        ``CheckpointError``: a rewind never reads or writes through it.
        """
        try:
            return self.fs.read_bytes(path)
        except FileNotFoundError:
            return None
        except OutsideRoot:
            raise CheckpointError(
                f"{path} now leads out of the workspace (through a symbolic link); "
                "nothing was changed"
            ) from None
    # --8<-- [end:store]

    # --8<-- [start:observe]
    def __call__(self, event: object) -> None:
        """Take the before-images a changing call needs; note a failed one."""
        inner = event.event if isinstance(event, SubagentEvent) else event  # a child's (ch21)
        if not self.prompts:
            return  # no prompt started (a test driving the tools by hand)
        try:
            if isinstance(inner, ToolCalled) and inner.name in CHANGING_TOOLS:
                for path in paths_of(inner.name, inner.arguments):
                    self.before_change(path, inner.id)
            elif isinstance(inner, ToolResult) and inner.is_error and inner.name in CHANGING_TOOLS:
                self.failed.add(inner.id)
                self._append({"failed": inner.id})
        except OSError:
            pass  # a before-image that cannot be taken: the tool will meet the same problem

    async def begin(self, text: str, keep: int) -> None:
        """Prompt ``text`` starts, the history holding ``keep`` messages: make its checkpoint."""
        prompt = await self.start_prompt(text, keep)
        self._append(
            {"prompt": prompt.number, "text": text, "keep": keep, "commit": prompt.commit}
        )
        self.prompts.append(prompt)
    # --8<-- [end:observe]

    async def start_prompt(self, text: str, keep: int) -> Prompt:
        """The next prompt's checkpoint: its number, and in git a snapshot of the work tree.

        The snapshot runs in a thread (it reads the whole tree), its message the prompt's first
        line, its parent the last prompt's snapshot. One git refuses leaves the prompt without
        one, as outside git.
        """
        # region ch27: number = last + 1; in git, snapshot after the last commit, in a thread
        # more: asyncio.to_thread(snapshot, ...) in contextlib.suppress(OSError, CalledProcessError)
        import asyncio

        number = self.prompts[-1].number + 1 if self.prompts else 1
        commit = None
        if self.git:
            message = f"claw checkpoint: prompt {number}: {first_line(text)}"
            last = next((p.commit for p in reversed(self.prompts) if p.commit is not None), None)
            with contextlib.suppress(OSError, subprocess.CalledProcessError):
                commit = await asyncio.to_thread(snapshot, self.root, self.ref, message, last)
        return Prompt(number, text, keep, commit)
        # endregion

    def before_change(self, path: str, call: str) -> None:
        """Keep ``path``'s before-image for the current prompt, unless it has one already.

        Only the first change of a path in a prompt matters: that is the state the prompt found.
        A path outside the workspace is left to the tool to refuse. The bytes are kept as they
        are; a file that does not exist is recorded as ``None``; one over ``limit`` bytes as
        ``TOO_LARGE``.
        """
        # region ch27: skip outside paths and ones this prompt has; keep bytes, None or too-large
        # more: workspace_path; fs.stat(path).st_size > limit; self.keep(bytes); a change line
        relative = workspace_path(self.root, path)
        number = self.prompts[-1].number
        if relative is None or any(
            change.prompt == number and change.path == relative for change in self.changes
        ):
            return
        try:
            size = self.fs.stat(relative).st_size
        except FileNotFoundError:
            before: str | None = None
        else:
            before = TOO_LARGE if size > self.limit else self.keep(self.fs.read_bytes(relative))
        change = Change(number, relative, before, call)
        self._append({"change": number, "path": relative, "before": before, "call": call})
        self.changes.append(change)
        # endregion

    def listing(self) -> str:
        """Every prompt: its number, its first line and the files its tools changed.

        One line each: ``  3. Fix the parser  [a.py, tests/test_a.py]`` (the number right-aligned
        in three places, the first line cut by ``first_line``, the paths of the calls that did
        not fail, sorted), or ``[no file changed by claw's file tools]``.
        """
        # region ch27: one line per prompt: number, first line, the sorted files of calls not failed
        # more: f"{prompt.number:>3}. {first_line(prompt.text)}  [{changed}]"; "\n".join
        if not self.prompts:
            return "no checkpoints yet: each prompt you send makes one"
        lines = []
        for prompt in self.prompts:
            files = sorted(
                {
                    change.path
                    for change in self.changes
                    if change.prompt == prompt.number and change.call not in self.failed
                }
            )
            changed = ", ".join(files) if files else "no file changed by claw's file tools"
            lines.append(f"{prompt.number:>3}. {first_line(prompt.text)}  [{changed}]")
        return "\n".join(lines)
        # endregion

    def prompt(self, number: int) -> Prompt:
        """Prompt ``number``; ``CheckpointError`` listing the numbers if there is none."""
        for prompt in self.prompts:
            if prompt.number == number:
                return prompt
        known = f"1 to {self.prompts[-1].number}" if self.prompts else "none yet"
        raise CheckpointError(f"there is no prompt {number} (the prompts are {known})")

    def plan(self, number: int) -> RewindPlan:
        """What rewinding the code to the start of prompt ``number`` must change.

        A path git covers (in either snapshot, or not ignored) takes its state from prompt
        ``number``'s snapshot; any other path changed since takes its earliest before-image
        from prompt ``number`` on. Only paths whose state differs from now are in the plan.
        """
        # region ch27: earliest before-image per path from that prompt on; git overrides; diff now
        # more: git: then = tree_files(commit), now = tree_files(snapshot_tree); ignored(...)
        start = self.prompt(number)
        wanted: dict[str, Image] = {}
        lost: list[str] = []
        seen: set[str] = set()
        for change in self.changes:
            if change.prompt < number or change.path in seen:
                continue
            seen.add(change.path)
            if change.before == TOO_LARGE:
                lost.append(change.path)
            else:
                wanted[change.path] = None if change.before is None else self.stored(change.before)
        if start.commit is not None:
            then = tree_files(self.root, start.commit)
            now = tree_files(self.root, snapshot_tree(self.root))
            changed = wanted.keys() | set(lost)
            unseen = [path for path in changed if path not in then and path not in now]
            covered = then.keys() | now.keys() | (set(unseen) - ignored(self.root, unseen))
            for path in covered:
                if path in changed or then.get(path) != now.get(path):
                    wanted[path] = blob(self.root, then[path]) if path in then else None
            lost = [path for path in lost if path not in covered]
        plan = RewindPlan(lost=sorted(lost))
        for path, image in sorted(wanted.items()):
            if self.current(path) != image:
                plan.target[path] = image
        return plan
        # endregion

    def put(self, path: str, image: Image) -> None:
        """Make ``path`` hold ``image``: written atomically (folders made), or removed."""
        if image is None:
            with contextlib.suppress(FileNotFoundError):
                self.fs.unlink(path)
            return
        with self.fs.locate(path, parents=True) as place:
            atomic_write_at(place.folder, place.name, image)

    def restore(self, number: int, plan: RewindPlan, record: dict[str, Any]) -> None:
        """Carry out ``plan`` so that a crash leaves the old state or the new, never a mix.

        1. the journal: each path with its state now and its state wanted, both kept in
           ``objects/``, written atomically;
        2. ``record`` appended to the transcript (with the journal's id): from here on the
           rewind counts;
        3. each path replaced or removed (``put``);
        4. the journal removed.
        """
        # region ch27: journal (old and new of every path), then the record, then put each, unlink
        # more: None stays None, bytes -> self.keep(bytes); atomic_write(self.journal, json bytes)
        entries = [
            {"path": path, "old": self._name(self.current(path)), "new": self._name(image)}
            for path, image in plan.target.items()
        ]
        journal = {"id": record["rewind"]["id"], "prompt": number, "files": entries}
        atomic_write(self.journal, json.dumps(journal).encode())
        with self.transcript.open("ab") as file:
            file.write(encode(record))
            file.flush()
            os.fsync(file.fileno())
        for path, image in plan.target.items():
            self.put(path, image)
        self.journal.unlink()
        # endregion

    def _name(self, image: Image) -> str | None:
        return None if image is None else self.keep(image)

    def recover(self) -> str | None:
        """Finish or undo a rewind a crash interrupted; what was done, or ``None`` if none was.

        The journal's rewind is finished (every file put to its ``new`` state) if its record
        reached the transcript, and undone (every file put back to ``old``) if not.
        """
        # region ch27: no journal: None; its id in a transcript record? new states : old states
        # more: scan the transcript's lines for record.get("rewind", {}).get("id"); put; unlink
        if not self.journal.exists():
            return None
        journal = json.loads(self.journal.read_bytes())
        done = journal["id"] in self.rewind_ids()
        side = "new" if done else "old"
        for entry in journal["files"]:
            name = entry[side]
            self.put(entry["path"], None if name is None else self.stored(name))
        self.journal.unlink()
        count = len(journal["files"])
        files = "1 file" if count == 1 else f"{count} files"
        if done:
            return (
                f"a rewind to prompt {journal['prompt']} was interrupted; it is now finished "
                f"({files})"
            )
        return (
            f"a rewind to prompt {journal['prompt']} was interrupted before it took effect; "
            f"it was undone: the files are as they were before it ({files})"
        )
        # endregion

    def rewind_ids(self) -> set[str]:
        """The ids of the rewinds the transcript records."""
        ids: set[str] = set()
        with self.transcript.open("rb") as file:
            for line in file:
                if b'"rewind"' not in line or not line.endswith(b"\n"):
                    continue
                record = json.loads(line)
                rewind = record.get("rewind") if isinstance(record, dict) else None
                if isinstance(rewind, dict) and isinstance(rewind.get("id"), str):
                    ids.add(rewind["id"])
        return ids

    def rewind(
        self,
        number: int,
        what: What,
        history: list[Message] | None = None,
        recorder: Recorded | None = None,
    ) -> str:
        """Rewind the code, the conversation or both to the start of prompt ``number``.

        The conversation is ``history`` (the agent's, changed in place to the messages before
        the prompt); ``recorder`` learns what the transcript now holds. Returns what was done,
        line by line; ``CheckpointError`` when it cannot be done (nothing was changed).
        """
        # region ch27: check the prompt is still in the history; plan; restore with the record
        # more: history[keep] must be UserMessage(prompt.text); record = history_record(kept) | ...
        prompt = self.prompt(number)
        conversation = what in ("conversation", "both")
        if conversation:
            here = history[prompt.keep] if history and prompt.keep < len(history) else None
            if not (isinstance(here, UserMessage) and here.content == prompt.text):
                raise CheckpointError(
                    f"the conversation no longer holds prompt {number} where it was (it was "
                    "compacted, rewound or replaced since); rewind the code only: "
                    f"/rewind {number} code"
                )
        plan = self.plan(number) if what in ("code", "both") else RewindPlan()
        info = {"id": str(uuid.uuid4()), "prompt": number, "what": what}
        if conversation:
            assert history is not None
            kept = history[: prompt.keep]
            record = {**history_record(kept), "rewind": info}
        else:
            record = {"type": "rewind", "rewind": info}
        self.restore(number, plan, record)
        if conversation:
            assert history is not None
            history[:] = kept
            if recorder is not None:
                recorder.written = list(history)
        return rewound_text(number, what, plan, self.limit)
        # endregion


def rewound_text(number: int, what: What, plan: RewindPlan, limit: int = MAX_IMAGE_BYTES) -> str:
    """What a rewind says it did: the files put back or removed, and those it could not."""
    restored = "code and conversation" if what == "both" else what
    lines = [f"rewound the {restored} to before prompt {number}"]
    for path, image in plan.target.items():
        lines.append(f"  {'removed' if image is None else 'restored'} {path}")
    for path in plan.lost:
        lines.append(
            f"  could not restore {path}: it was over {limit:,} bytes when it was "
            "changed, so no copy was kept"
        )
    if what != "conversation" and not plan.target and not plan.lost:
        lines.append("  (no file needed changing)")
    return "\n".join(lines)


def checkpoints_folder(transcript: Path) -> Path:
    """Where the checkpoints of the session at ``transcript`` live: beside it."""
    return transcript.with_suffix(".checkpoints")


def start_checkpoints(
    agent: Agent, recorder: SessionRecorder, root: Path, err: TextIO
) -> Checkpoints:
    """The checkpoints of ``recorder``'s session, wired into ``agent``.

    A rewind a crash interrupted is finished or undone first, and said on ``err``. Then the
    checkpoints watch the agent's events and are told of each prompt as it starts. Until
    chapter 27 is written, the first stub met turns them off, and claw runs on without them;
    so does a checkpoint that cannot be written (said once on ``err``).
    """
    checkpoints = Checkpoints(checkpoints_folder(recorder.writer.path), root, recorder.writer.path)
    note = if_written("ch27", checkpoints.recover)
    if isinstance(note, str):
        err.write(f"claw: {terminal_text(note)}\n")

    def observe(event: object) -> None:
        if checkpoints.enabled and isinstance(if_written("ch27", lambda: checkpoints(event)), Todo):
            checkpoints.enabled = False

    async def begin(text: str, keep: int) -> None:
        if checkpoints.enabled:
            try:
                if isinstance(
                    await if_written_async("ch27", lambda: checkpoints.begin(text, keep)), Todo
                ):
                    checkpoints.enabled = False
            except OSError as error:  # a full disk, say: the run goes on, without a safety net
                checkpoints.enabled = False
                err.write(warning_line(f"checkpoints are off for this session: {error}"))

    agent.sink.add(observe)
    if isinstance(agent, PreflightAgent):  # the claw command's agent always is
        agent.starting.append(begin)
    return checkpoints


REWIND_USAGE = (
    "/rewind N [code|conversation|both]: go back to before prompt N (both, if not said)"
)
"""How ``/rewind`` is used, said with its list and after a wrong use."""


async def rewind_command(
    checkpoints: Checkpoints | None,
    rest: str,
    history: list[Message],
    recorder: Recorded | None,
) -> str:
    """What ``/rewind REST`` does and says: the list, or a rewind, or why not."""
    if checkpoints is None:
        return "no checkpoints: this session is not recorded (chapter 22)"
    words = rest.split()
    if not words:
        return checkpoints.listing() + "\n" + REWIND_USAGE
    what = words[1] if len(words) > 1 else "both"
    if len(words) > 2 or not words[0].isdigit() or what not in ("code", "conversation", "both"):
        return f"not understood: /rewind {rest.strip()}\n{REWIND_USAGE}"
    try:
        note = checkpoints.recover()
        done = checkpoints.rewind(int(words[0]), what, history, recorder)  # type: ignore[arg-type]
    except (CheckpointError, OSError, subprocess.CalledProcessError) as error:
        return f"cannot rewind: {error}"
    return done if note is None else f"{note}\n{done}"


__all__ = [
    "Change",
    "CheckpointError",
    "Checkpoints",
    "Prompt",
    "RewindPlan",
    "checkpoints_folder",
    "rewind_command",
    "snapshot",
    "snapshot_tree",
    "start_checkpoints",
]

