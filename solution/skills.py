"""Skills: know-how in ``SKILL.md`` files, shown to the model a little at a time.

A skill is a folder, ``.claw/skills/<name>/`` in the project or ``~/.claw/skills/<name>/`` in
your home, with a ``SKILL.md`` in it: YAML front matter between two ``---`` lines, giving the
skill's ``name`` and ``description``, then a Markdown body of instructions. Files beside it
(a reference, a template, a script) belong to the skill too.

Skills are disclosed progressively. The system prompt lists every skill's name and
description, a line each, so the model knows what exists at the cost of a few tokens. The
body is loaded only when the model asks for it with the ``skill`` tool, and a file beside it
only when the model asks for that file. Forty skills cost forty lines, not forty documents.

A broken ``SKILL.md`` (no front matter, YAML that does not parse, a missing or bad name) is
a warning naming the file, and the skill is left out; it never stops claw. And a skill is
a folder: nothing the model asks for, by name or by path, is read from outside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from .errors import ClawError
from .private import claw_home
from .prompt import section
from .tools.base import ArgumentsTool, ToolArguments
from .types import ToolOutput

SKILL_FILE = "SKILL.md"
"""The file that makes a folder a skill."""

SKILLS_FOLDER = Path(".claw") / "skills"
"""Where a project's skills live, relative to its folder."""
USER_SKILLS = Path("skills")
"""Where your own skills live, relative to claw's own folder (``private.claw_home``)."""

NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A skill's name: lowercase letters and digits, words joined by single hyphens."""

MAX_NAME = 64
"""The longest name a skill may have, in characters."""

MAX_DESCRIPTION = 1024
"""The longest description a skill may have, in characters."""

MAX_SKILL_FILE_BYTES = 256_000
"""The largest ``SKILL.md`` or file beside it the ``skill`` tool reads."""

MAX_NESTING = 20
"""How deeply lists and mappings may nest in a front matter (``name: [[[...]]]``)."""

SKILL = "skill"
"""The tool's name, as the model calls it."""


class SkillError(ClawError, ValueError):
    """A ``SKILL.md`` that cannot be used; the message says what is wrong with it."""


# --8<-- [start:loader]
class FrontMatterLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader without what a front matter never needs and an attack uses.

    No aliases (``*name``): a few lines of them can stand for billions of items (the "billion
    laughs"), which any code that walks or prints the value then expands. No nesting deeper
    than ``MAX_NESTING``: PyYAML builds nested values recursively, and ten thousand ``[`` would
    end in a ``RecursionError`` instead of a ``YAMLError``.
    """

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Chapter 21's checks, then PyYAML's own composing of one node."""
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a skill's front matter", mark
            )
        if self.depth >= MAX_NESTING:
            raise yaml.composer.ComposerError(
                None, None, f"values nest more than {MAX_NESTING} levels deep", mark
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_front_matter(front: str) -> Any:
    """The YAML ``front`` holds, read safely (``FrontMatterLoader``); ``yaml.YAMLError`` if not."""
    return yaml.load(front, Loader=FrontMatterLoader)  # a SafeLoader, restricted further
# --8<-- [end:loader]


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description from the front matter, and where its file is."""

    name: str
    description: str
    path: Path
    """The ``SKILL.md`` file (absolute)."""

    @property
    def folder(self) -> Path:
        """The skill's folder: its ``SKILL.md`` and the files beside it."""
        return self.path.parent


def split_front_matter(text: str) -> tuple[str, str]:
    """``text`` split into its YAML front matter and its body.

    The first line must be ``---`` and a later line ``---`` closes the front matter (spaces
    after either are allowed, Windows line ends too). Raises ``SkillError`` otherwise.
    """
    # region ch21: first line "---", then the lines up to the next "---" line, then the body
    # more: text.splitlines(keepends=True); line.rstrip() == "---"; "".join the two parts
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise SkillError("no front matter: the first line must be ---")
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            return "".join(lines[1:end]), "".join(lines[end + 1 :])
    raise SkillError("the front matter is not closed: no line --- after the first")
    # endregion


def parse_skill(path: Path) -> Skill:
    """Read the ``SKILL.md`` at ``path``: a ``Skill``, or ``SkillError`` saying what is wrong.

    The file may be at most ``MAX_SKILL_FILE_BYTES``. The front matter is read with
    ``load_front_matter`` (``yaml.safe_load``, no Python objects built from YAML, without
    aliases or deep nesting) and must be a mapping with a ``name`` (``NAME``, at most
    ``MAX_NAME`` characters, the same as the folder's name) and a non-empty ``description``
    (at most ``MAX_DESCRIPTION``). Other keys are allowed and ignored.
    """
    # region ch21: read_limited, split, load_front_matter, check it is a mapping, name, description
    # more: except yaml.YAMLError -> SkillError; NAME.fullmatch; name == path.parent.name
    front, _body = split_front_matter(read_limited(path))
    try:
        data: Any = load_front_matter(front)
    except yaml.YAMLError as error:
        raise SkillError(f"the front matter is not valid YAML: {one_line(str(error))}") from None
    if not isinstance(data, dict):
        raise SkillError("the front matter must be a mapping with name and description")
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME:
        shown = repr(name)[:MAX_NAME + 2] if isinstance(name, str) else type(name).__name__
        raise SkillError(
            f"name must be lowercase letters, digits and single hyphens, at most {MAX_NAME} "
            f"characters, not {shown}"
        )
    if name != path.parent.name:
        raise SkillError(f"name {name!r} differs from its folder's name {path.parent.name!r}")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("description is missing or empty")
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(f"description is longer than {MAX_DESCRIPTION} characters")
    return Skill(name, " ".join(description.split()), path.absolute())
    # endregion


def one_line(text: str) -> str:
    """``text`` with its whitespace runs (newlines too) made single spaces."""
    return " ".join(text.split())


def skill_roots(cwd: Path, home: Path | None = None, *, project: bool = True) -> list[Path]:
    """Where to look for skills: the project's ``.claw/skills`` first, then your own.

    Yours are in ``skills`` in claw's own folder, ``claw_home(home)`` (``~/.claw``, or
    ``$CLAW_CONFIG_DIR``). ``project=False`` (an untrusted folder) leaves the project's out.
    """
    return ([cwd / SKILLS_FOLDER] if project else []) + [claw_home(home) / USER_SKILLS]


def discover_skills(
    roots: Iterable[Path], warn: Callable[[str], None] | None = None
) -> list[Skill]:
    """Every usable skill in ``roots``, sorted by name; the first root wins a name.

    Each folder ``<root>/<name>/`` with a ``SKILL.md`` is parsed. A ``SkillError`` is a
    warning, ``<path>: <problem>; the skill is left out``, never an exception; so is a
    ``SKILL.md`` that is, or is in, a symbolic link leading out of its root. A root that does
    not exist has no skills.
    """
    # region ch21: each root's sub-folders with a SKILL.md; parse; warn and skip; first wins
    # more: sorted(root.iterdir()) if root.is_dir(); except SkillError as e: warn(f"{path}: ...")
    found: dict[str, Skill] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            path = folder / SKILL_FILE
            if not path.is_file():
                continue
            try:
                if not path.resolve().is_relative_to(root.resolve()):
                    raise SkillError(f"it is a link to {path.resolve()}, outside {root}")
                skill = parse_skill(path)
            except SkillError as problem:
                if warn is not None:
                    warn(f"{path}: {problem}; the skill is left out")
                continue
            found.setdefault(skill.name, skill)
    return sorted(found.values(), key=lambda skill: skill.name)
    # endregion


# --8<-- [start:skills-intro]
SKILLS_INTRO = (
    "These skills hold instructions for particular tasks. When a task matches a skill's "
    "description, call the `skill` tool with its name to read the instructions first."
)
# --8<-- [end:skills-intro]


def skills_section(skills: Sequence[Skill]) -> str:
    """The system prompt's ``## Skills`` section: a line ``- `name`: description`` a skill.

    An empty string when there are no skills: then the prompt has no such section.
    """
    # region ch21: nothing without skills; else chapter 8's section with the intro and one line each
    # more: section("Skills", SKILLS_INTRO + "\n" + "\n".join(f"- `{s.name}`: {s.description}"))
    if not skills:
        return ""
    lines = [f"- `{skill.name}`: {skill.description}" for skill in skills]
    return section("Skills", "\n".join([SKILLS_INTRO, *lines]))
    # endregion


class SkillArguments(ToolArguments):
    """Which skill to load, and optionally which file beside its ``SKILL.md``."""

    name: str = Field(min_length=1, description="The skill's name, as the Skills section lists it.")
    file: str | None = Field(
        default=None,
        description=(
            "A file in the skill's folder, as a path relative to it (for example "
            "`reference.md`). Leave it out to load the skill's instructions."
        ),
    )




def beside(skill: Skill, file: str) -> Path:
    """The file ``file`` names in ``skill``'s folder; ``SkillError`` if it would leave it.

    Absolute paths, ``..`` and symbolic links that lead out of the folder are refused.
    """
    # region ch21: resolve folder / file and require it inside the resolved folder
    # more: Path(file).is_absolute(); target.resolve().is_relative_to(folder.resolve())
    folder = skill.folder.resolve()
    target = (skill.folder / file).resolve()
    if Path(file).is_absolute() or not target.is_relative_to(folder) or target == folder:
        raise SkillError(f"{file!r} is not a file inside the skill {skill.name!r}")
    return target
    # endregion


def listing(skill: Skill) -> list[str]:
    """The files beside ``skill``'s ``SKILL.md``, relative to its folder, sorted."""
    folder = skill.folder
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and path != skill.path
    )


class SkillTool(ArgumentsTool[SkillArguments]):
    """The ``skill`` tool: loads a skill's instructions, or a file beside them, on request."""

    name = SKILL
    description = (
        "Load a skill listed in the Skills section of your instructions: its full "
        "instructions, and the files that come with it. With `file`, read one of those files."
    )
    Arguments = SkillArguments
    read_only = True

    def __init__(self, skills: Iterable[Skill]) -> None:
        """A tool that can load ``skills``, and nothing else."""
        self.skills = {skill.name: skill for skill in skills}

    async def call(self, args: SkillArguments) -> ToolOutput:
        """The body of the skill (with its folder and files), or the file asked for.

        An unknown name is an error result listing the skills there are; a file outside the
        folder, missing, or too big is an error result too.
        """
        # region ch21: look the name up (never a path); body with folder and files, or a file
        # more: split_front_matter(...)[1]; beside(skill, args.file); MAX_SKILL_FILE_BYTES
        skill = self.skills.get(args.name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            return ToolOutput.error(f"no skill named {args.name!r}; the skills are: {known}")
        try:
            if args.file is None:
                _front, body = split_front_matter(read_limited(skill.path))
                files = ", ".join(listing(skill)) or "none"
                return ToolOutput.ok(
                    f"Skill {skill.name} (folder: {skill.folder})\n"
                    f"Files beside it (read them with file=...): {files}\n\n{body.strip()}"
                )
            return ToolOutput.ok(read_limited(beside(skill, args.file)))
        except SkillError as error:
            return ToolOutput.error(str(error))
        # endregion


def read_limited(path: Path) -> str:
    """The text of ``path``, or ``SkillError`` if it is missing, not text, or too big.

    The messages are the words a skill's warning puts after the file's path: ``it is larger
    than 256,000 bytes`` (the file is not read) and ``cannot read it: ...`` (the error's own).
    """
    try:
        if path.stat().st_size > MAX_SKILL_FILE_BYTES:
            raise SkillError(f"it is larger than {MAX_SKILL_FILE_BYTES:,} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SkillError(f"cannot read it: {error}") from None
