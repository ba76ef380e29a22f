"""Safety checks (chapter 14): hard limits on what a tool call may touch, checked before it runs.

Three checks sit in front of every tool, each a layer of defence in depth:

* the **workspace check**: every path a call names must resolve (symlinks followed, ``..``
  applied, the way the operating system will) to a place inside the workspace or one of the
  extra allowed folders;
* **protected files**: inside the workspace, some files are still off limits to the changing
  tools (``.git/``, ``.env*``, the settings files, shell start-up files, private keys), and the
  ones that hold secrets are off limits to the reading tools too, unless a rule allows them;
* the **command filter**: a ``bash`` command is split into its simple commands with a shell
  lexer, and the classic destructive forms (``rm -rf /``, fork bombs, ``curl … | sh``, writing
  to a disk, ``mkfs``, force-pushing ``main``) are refused before they run.

The rule that shapes the module: compare what the operating system will open, never the text
the model wrote. A path is resolved before it is compared; a file is opened without following
links (``Workspace.open``), so a link swapped in after the check is refused, not followed.

None of this is a sandbox in the operating-system sense: ``bash`` runs any program, and a
program can do anything the user can. The checks stop the common accidents and the obvious
tricks; a container or a separate user account is what stops a determined one.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Chapter 13 already finds the bodies of $(...), <(...), >(...) and backticks; the filter
# looks inside the same ones (a process substitution runs its command too).
from .errors import ToolError
from .shell_syntax import substitution_bodies as substitutions
from .shell_syntax import take_redirections
from .tools.fs import OutsideRoot, Root
from .tools.patch import AddFile, DeleteFile, PatchError, UpdateFile, file_header, parse_patch
from .types import ToolCall, ToolOutput

PREFIX = "blocked by the safety checks"
"""How every refusal starts, so the model (and a human reading the log) knows who refused."""

READING_TOOLS = frozenset({"read", "glob", "grep", "list_dir"})
"""Tools that only look: protected files that hold no secret stay readable for them."""

PATH_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "read": ("path",),
    "write": ("path",),
    "edit": ("path",),
    "list_dir": ("path",),
    "glob": ("path",),
    "grep": ("path",),
}
"""The arguments that name a path, per tool (``glob``'s pattern and ``apply_patch`` aside)."""

DEFAULT_PATH = "."
"""What ``glob``, ``grep`` and ``list_dir`` search when the model names no path."""

MAGIC = re.compile(r"[*?\[]")
"""The characters that make a glob pattern's component a pattern rather than a name."""


class WorkspaceError(ToolError, PermissionError):
    """A path the workspace check refuses: outside it, or changed between check and open."""


# --8<-- [start:protected-rules]
@dataclass(frozen=True)
class Protected:
    """A kind of protected file: its name patterns and why it is protected.

    ``secret`` files (keys, ``.env``) may not even be read; the others may not be changed.
    """

    patterns: tuple[str, ...]
    why: str
    secret: bool = False


PROTECTED = (
    Protected((".git/*", "*/.git/*", ".git", "*/.git"), "git's own data"),
    Protected((".env", ".env.*", "*/.env", "*/.env.*"), "environment secrets", secret=True),
    Protected(
        (".claw/settings*.json", ".claude/settings*.json", "*/.claw/settings*.json",
         "*/.claude/settings*.json"),
        "claw's settings, which grant permissions",
    ),
    Protected(
        ("id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem", "*.key",
         "*/id_rsa*", "*/id_dsa*", "*/id_ecdsa*", "*/id_ed25519*", "*/*.pem", "*/*.key",
         ".ssh/*", "*/.ssh/*"),
        "a private key",
        secret=True,
    ),
    Protected(
        (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv",
         "*/.bashrc", "*/.bash_profile", "*/.profile", "*/.zshrc", "*/.zprofile", "*/.zshenv"),
        "a shell start-up file, which runs on every new shell",
    ),
)
"""The protected files, as case-insensitive patterns on the path relative to its root."""
# --8<-- [end:protected-rules]


class Workspace(Root):
    """The folders tools may touch: the workspace ``root`` and any ``extra`` allowed folders.

    A ``Root`` (``tools/fs.py``) that also checks paths before a call runs; give it to the
    file tools (``ReadTool(workspace)``…) and they open files inside the same folders.
    """

    def __init__(self, root: Path | str, extra: Iterable[Path | str] = ()) -> None:
        """Allow paths under ``root`` (resolved now) and under each folder in ``extra``."""
        super().__init__(root, extra)
        self.root = Path(os.path.realpath(root))
        self.roots = (self.root, *(Path(os.path.realpath(folder)) for folder in extra))

    def resolve(self, path: str) -> Path:
        """Where ``path`` leads, as the tools will open it: joined to the root, links followed.

        Raises ``WorkspaceError`` for a NUL byte, a path starting with ``~`` (the tools do not
        expand it), and a path that resolves outside every allowed folder.
        """
        # region ch14: refuse NUL and ~; realpath of root/path; inside one of self.roots?
        # more: os.path.realpath(os.path.join(self.root, path)); then self.root_of(resolved)
        if "\0" in path:
            raise WorkspaceError("a path cannot contain a NUL byte")
        if path.startswith("~"):
            raise WorkspaceError(
                f"{path} starts with ~, which claw's tools do not expand; "
                "name the file relative to the workspace"
            )
        try:
            resolved = Path(os.path.realpath(os.path.join(self.root, path)))
        except OSError as error:  # a link changed under realpath while it looked
            raise WorkspaceError(f"{path} changed while it was being checked: {error}") from None
        if self.root_of(resolved) is None:
            raise WorkspaceError(f"{path} resolves to a place outside the workspace")
        return resolved
        # endregion

    def root_of(self, resolved: Path) -> Path | None:
        """The allowed folder ``resolved`` (a resolved path) lies in, or ``None``.

        The comparison is by path components after ``os.path.normcase`` (which folds case on
        Windows). On a case-insensitive file system elsewhere (macOS), a spelling that differs
        from the root only in case is compared by identity (device and inode) of the folders
        that exist, so ``/Users/ME/work`` counts as inside ``/Users/me/work`` there.
        """
        # region ch14: compare components (normcase); fall back to samefile on the ancestors
        # more: resolved.parts[:len(root.parts)] == root.parts; os.path.samefile(parent, root)
        for root in self.roots:
            parts = [os.path.normcase(part) for part in resolved.parts]
            root_parts = [os.path.normcase(part) for part in root.parts]
            if parts[: len(root_parts)] == root_parts:
                return root
        for root in self.roots:
            for parent in (resolved, *resolved.parents):
                try:
                    if os.path.samefile(parent, root):
                        return root
                except OSError:
                    continue
        return None
        # endregion

    def before_open(self, resolved: Path) -> None:
        """Called between the check and the open in ``open``; does nothing.

        Tests replace it to swap a file for a link at the worst moment.
        """

    def open(self, path: str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
        """Check ``path``, then open it inside the workspace; the file descriptor.

        The check is ``resolve``; the open is ``Root.open``, the walk the file tools use: one
        component at a time, each relative to the folder before it, with ``O_NOFOLLOW``, links
        followed only by the walk. A link swapped in after the check and leading out is then
        refused (``WorkspaceError``), not followed. POSIX only (``dir_fd`` and ``O_NOFOLLOW``).
        """
        # region ch14: resolve (the check); before_open; Root.open; OutsideRoot means it changed
        # more: super().open(path, flags, mode); raise WorkspaceError(...) from the OutsideRoot
        resolved = self.resolve(path)
        self.before_open(resolved)
        try:
            return super().open(path, flags, mode)
        except OutsideRoot as error:
            raise WorkspaceError(f"{path} changed while it was being opened: {error}") from error
        # endregion


def touched_paths(call: ToolCall) -> list[str]:
    """The paths ``call`` would touch, as the model wrote them (``~`` and ``$VAR`` expanded).

    ``read``, ``write``, ``edit``: ``path``. ``list_dir``, ``glob``, ``grep``: ``path`` (``"."``
    when it is left out). ``glob`` also: the fixed folders at the start of its pattern, when the
    pattern climbs with ``..`` or is absolute. ``apply_patch``: every path in the patch
    (added, deleted, updated, and each ``*** Move to:``); a patch that does not parse is read
    line by line for its file headers. ``bash``: the target of every output redirection
    (``> x``, ``>> x``, ``2> x``, ``&> x``), but ``/dev/null``. Arguments of the wrong type are
    left to the tool.
    """
    # region ch14: PATH_ARGUMENTS (default "."); glob's pattern prefix; every path in a patch
    # more: parse_patch(text): AddFile/DeleteFile .path, UpdateFile .path and .move_to
    arguments = call.arguments
    paths: list[str] = []
    command = arguments.get("command")
    if call.name == "bash" and isinstance(command, str):
        for pipeline in split_pipelines(command):
            for words in pipeline:
                targets = take_redirections(words)[1]
                paths.extend(os.path.expanduser(os.path.expandvars(t)) for t in targets)
    for name in PATH_ARGUMENTS.get(call.name, ()):
        value = arguments.get(name, DEFAULT_PATH)
        if isinstance(value, str):
            paths.append(value)
    pattern = arguments.get("pattern")
    if call.name == "glob" and isinstance(pattern, str):
        parts = PurePosixPath(pattern).parts
        if pattern.startswith("/") or ".." in parts:
            fixed = []
            for part in parts:
                if MAGIC.search(part):
                    break
                fixed.append(part)
            base = arguments.get("path", DEFAULT_PATH)
            base = base if isinstance(base, str) else DEFAULT_PATH
            paths.append(os.path.join(base, *fixed) if fixed else base)
    patch = arguments.get("patch")
    if call.name == "apply_patch" and isinstance(patch, str):
        paths.extend(patch_paths(patch))
    return paths
    # endregion


def patch_paths(patch: str) -> list[str]:
    """Every path a patch names: through ``parse_patch``, or header by header if it fails."""
    try:
        operations = parse_patch(patch)
    except PatchError:
        paths = []
        for number, line in enumerate(patch.splitlines(), start=1):
            if line.startswith("*** Move to:"):
                paths.append(line.removeprefix("*** Move to:").strip())
                continue
            try:
                header = file_header(line, number)
            except PatchError:
                # an absolute path: the tool refuses it too, but the workspace check says why
                paths.append(line.split(":", 1)[1].strip())
                continue
            if header is not None:
                paths.append(header.path)
        return paths
    found: list[str] = []
    for operation in operations:
        if isinstance(operation, AddFile | DeleteFile | UpdateFile):
            found.append(operation.path)
        if isinstance(operation, UpdateFile) and operation.move_to:
            found.append(operation.move_to)
    return found


def protected_reason(
    relative: str, *, reading: bool, allow: Sequence[str] = ()
) -> str | None:
    """Why the file at ``relative`` is protected from this kind of call, or ``None``.

    ``relative`` is the resolved path relative to its root, with ``/``. ``None`` also when
    ``allow`` lets it through.

    Matching ignores case, on every system: on a case-insensitive file system ``.GIT/config``
    is ``.git/config``, and refusing it on Linux too costs nothing. ``allow`` holds patterns
    in the same form (``".env.example"``, ``"config/*.pem"``). A reading call is refused only
    for files that hold secrets.
    """
    # region ch14: lower-case; allow first; then each Protected, skipping non-secrets for reads
    # more: fnmatch.fnmatchcase(relative.lower(), pattern.lower()) for pattern in rule.patterns
    name = relative.lower()
    if any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in allow):
        return None
    for rule in PROTECTED:
        if reading and not rule.secret:
            continue
        if any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in rule.patterns):
            return rule.why
    return None
    # endregion


# --8<-- [start:split-constants]
SEPARATORS = frozenset(";&|()\n")
"""Characters that end a simple command: ``;``, ``&&``, ``||``, ``|``, ``&``, ``(``, ``)``,
newlines (a token made only of these is a separator)."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
"""Programs that run the text they are given as shell commands."""

WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "command", "exec", "nice", "doas"})
"""Programs that run the command after them: the filter looks past them."""
# --8<-- [end:split-constants]


def split_pipelines(command: str) -> list[list[list[str]]]:
    """``command`` as pipelines of simple commands, each a list of words (quotes removed).

    ``a && b | c; d`` gives ``[[a], [b, c], [d]]``. The words of ``$(...)`` and backtick
    substitutions, and the text given to ``sh -c``/``bash -c``/``eval``, are split too and
    added as pipelines of their own; a pipeline found twice is listed once. A command the
    lexer cannot read (an unclosed quote) is split on the separators alone, so it is still
    looked at.
    """
    # region ch14: shlex(punctuation_chars=True), newline as punctuation; split on SEPARATORS
    # more: lexer.whitespace = " \t\r"; "|" alone continues a pipeline, other separators end it
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        tokens = re.sub(r"([;&|()\n]+)", r" \1 ", command).split()
    pipelines: list[list[list[str]]] = []
    pipeline: list[list[str]] = []
    words: list[str] = []
    for token in tokens:
        if token and set(token) <= SEPARATORS:
            if words:
                pipeline.append(words)
                words = []
            if token != "|" and token != "|&" and pipeline:
                pipelines.append(pipeline)
                pipeline = []
        elif token != "$":  # the "$" of "$(": the substitution's body comes below
            words.append(token)
    if words:
        pipeline.append(words)
    if pipeline:
        pipelines.append(pipeline)
    inner: list[list[list[str]]] = []
    for body in substitutions(command):
        inner.extend(split_pipelines(body))
    for line in pipelines:
        for words in line:
            program = command_words(words)
            if program[:1] == ["eval"]:
                inner.extend(split_pipelines(" ".join(program[1:])))
            elif len(program) >= 3 and program[0] in SHELLS and program[1] == "-c":
                inner.extend(split_pipelines(program[2]))
    unique: list[list[list[str]]] = []
    for found in pipelines + inner:  # "$(x)" unquoted is found twice: by the lexer, as a body
        if found not in unique:
            unique.append(found)
    return unique
    # endregion


def command_words(words: Sequence[str]) -> list[str]:
    """``words`` without leading ``NAME=value`` settings and wrappers such as ``sudo``.

    A program run through a path (``/bin/rm``) is named by its last component.
    """
    rest = list(words)
    while rest:
        first = rest[0]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", first):
            rest.pop(0)
        elif os.path.basename(first) in WRAPPERS:
            rest.pop(0)
            while rest and rest[0].startswith("-"):
                rest.pop(0)
        else:
            break
    if rest:
        rest[0] = os.path.basename(rest[0])
    return rest


# --8<-- [start:command-targets]
EVERYTHING = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*",
                        ".", "./", "*", "./*", "..", "../", "../*"})
"""Targets that mean a whole disk, the home folder, or the whole workspace."""

SAFE_DEVICES = re.compile(r"/dev/(null|zero|stdout|stderr|stdin|tty|fd/\d+|u?random)")
"""Device files a command may write to harmlessly."""

PROTECTED_BRANCHES = frozenset({"main", "master"})
"""Branches a force push must not rewrite."""

FORK_BOMB = re.compile(r"([\w:.]+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&")
"""A function that pipes itself into itself in the background: ``:(){ :|:& };:``."""


def is_everything(target: str) -> bool:
    """Whether ``target`` is a whole disk, a top-level system folder, home, or the workspace."""
    if target in EVERYTHING:
        return True
    cleaned = target.rstrip("/*") or "/"
    return cleaned == "/" or bool(re.fullmatch(r"/[^/]+", cleaned))


def recursive(flags: Iterable[str]) -> bool:
    """Whether ``flags`` ask for recursion (``-r``, ``-R``, ``-rf``, ``--recursive``)."""
    return any(
        flag == "--recursive" or (flag.startswith("-") and not flag.startswith("--")
                                  and ("r" in flag or "R" in flag))
        for flag in flags
    )
# --8<-- [end:command-targets]


def dangerous(words: Sequence[str], next_stage: Sequence[str] | None = None) -> str | None:
    """Why the simple command ``words`` is refused, or ``None``.

    ``next_stage`` is the command its output is piped into, if any.
    """
    # region ch14: rm/chmod/chown -R on everything; devices; mkfs; dd of=; push -f; curl | sh
    # more: command_words(words); is_everything(target); the flags are the words starting "-"
    program = command_words(words)
    if not program:
        return None
    name, arguments = program[0], program[1:]
    flags = [word for word in arguments if word.startswith("-")]
    targets = [word for word in arguments if not word.startswith("-")]
    if name == "rm" and recursive(flags) and any(is_everything(t) for t in targets):
        return "rm -r of a whole disk, system folder, home folder or the workspace"
    if name in {"chmod", "chown", "chgrp"} and recursive(flags) and any(
        is_everything(t) for t in targets[1:]
    ):
        return f"{name} -R of a whole disk, system folder, home folder or the workspace"
    if name.startswith("mkfs") or name in {"mke2fs", "mkswap", "wipefs"}:
        return f"{name} formats a disk"
    if name == "dd" and any(
        word.startswith("of=/dev/") and not SAFE_DEVICES.fullmatch(word[3:]) for word in arguments
    ):
        return "dd writing to a device"
    for index, word in enumerate(program[:-1]):
        if word.lstrip("0123456789&").startswith(">"):
            target = program[index + 1]
            if target.startswith("/dev/") and not SAFE_DEVICES.fullmatch(target):
                return f"writing to the device {target}"
    if name == "git":
        rest = list(arguments)
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            if option in {"-C", "-c"} and rest:
                rest.pop(0)
        if rest[:1] == ["push"]:
            push = rest[1:]
            force = any(
                word in {"--force", "--force-with-lease"} or word.startswith("--force-with-lease=")
                or (re.fullmatch(r"-[a-zA-Z]+", word) is not None and "f" in word)
                for word in push
            )
            specs = [word for word in push if not word.startswith("-")][1:]
            plus = [spec for spec in specs if spec.startswith("+")]
            branches = {spec.lstrip("+").split(":")[-1].removeprefix("refs/heads/")
                        for spec in (plus if not force else specs)}
            if (force or plus) and (not specs or branches & PROTECTED_BRANCHES):
                return "a force push to a protected branch (main or master, or the current one)"
    if name in {"curl", "wget"} and next_stage is not None:
        runner = command_words(next_stage)
        if runner and (runner[0] in SHELLS or re.fullmatch(r"python[\d.]*|perl|ruby|node",
                                                            runner[0])):
            return f"a download piped into {runner[0]}"
    if name in SHELLS and any(re.search(r"\b(curl|wget)\b", word) for word in arguments):
        return f"a download run by {name}"
    return None
    # endregion


def check_command(command: str) -> str | None:
    """Why ``command`` is refused (the first reason found), or ``None`` to let it run.

    Every simple command of every pipeline (substitutions, ``eval`` and ``sh -c`` included)
    is looked at by ``dangerous``; a fork bomb is looked for in the whole text.
    """
    # region ch14: FORK_BOMB.search(command); then dangerous(stage, next stage) for each stage
    # more: for pipeline in split_pipelines(command): zip(pipeline, [*pipeline[1:], None])
    if FORK_BOMB.search(command):
        return "a fork bomb (a function that starts copies of itself)"
    for pipeline in split_pipelines(command):
        for stage, after in zip(pipeline, [*pipeline[1:], None], strict=True):
            reason = dangerous(stage, after)
            if reason is not None:
                return f"{reason}: {shlex.join(stage)}"
    return None
    # endregion


class SafetyChecks:
    """Chapter 14's check for ``Controls``: the workspace, protected files and the command filter.

    >>> safety = SafetyChecks(root, allow_protected=[".env.example"])
    >>> agent.gate = Controls(agent.tools, checks=[safety.check])
    """

    def __init__(
        self,
        root: Path | str,
        *,
        allowed_dirs: Iterable[Path | str] = (),
        allow_protected: Sequence[str] = (),
    ) -> None:
        """Keep tools inside ``root`` and ``allowed_dirs``.

        ``allow_protected`` lists the protected files a rule lets tools touch (patterns
        relative to the workspace, as ``protected_reason`` takes them).
        """
        self.workspace = Workspace(root, allowed_dirs)
        self.allow_protected = tuple(allow_protected)

    def refusal(self, call: ToolCall) -> str | None:
        """Why ``call`` must not run, or ``None``."""
        # region ch14: bash → check_command; else each touched path: resolve, then protected
        # more: rel = resolved.relative_to(self.workspace.root_of(resolved)).as_posix()
        if call.name == "bash":
            command = call.arguments.get("command")
            why = check_command(command) if isinstance(command, str) else None
            if why is not None:
                return why  # then its redirection targets, as the paths below
        reading = call.name in READING_TOOLS
        for path in touched_paths(call):
            try:
                resolved = self.workspace.resolve(path)
            except WorkspaceError as error:
                return str(error)
            root = self.workspace.root_of(resolved)
            assert root is not None
            relative = resolved.relative_to(root).as_posix()
            why = protected_reason(relative, reading=reading, allow=self.allow_protected)
            if why is not None:
                action = "read" if reading else "change"
                return (
                    f"{path} is protected ({why}); claw's tools may not {action} it "
                    "unless a rule allows it"
                )
        return None
        # endregion

    async def check(self, call: ToolCall) -> ToolCall | ToolOutput:
        """A ``Check`` for ``Controls``: the call itself, or an error result saying why not."""
        reason = self.refusal(call)
        if reason is None:
            return call
        return ToolOutput.error(f"{PREFIX}: {reason}")
