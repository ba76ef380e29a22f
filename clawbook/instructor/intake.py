"""Submission intake: reading what a learner handed in, before anything of it runs.

A submission is a folder holding a learner's ``starter/`` package, or a ``.zip`` / ``.tar.gz``
of one. ``extract`` unpacks an archive member by member after checking each (no absolute or
``..`` names, no link leading out, no device, bounded in count and size); ``find_starter``
finds the package in it; ``copy_package`` copies it without following a link. Anything that
makes a submission unreadable raises ``InvalidSubmission``, whose message becomes its row's
``invalid`` status.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_UNPACKED = 200 * 1024**2
"""An archive that unpacks to more than this is refused (a zip bomb, or a whole virtualenv)."""
MAX_MEMBERS = 20_000
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


@dataclass(frozen=True)
class Submission:
    """A learner's work: a directory or an archive, and the name its row goes under."""

    name: str
    path: Path


class InvalidSubmission(Exception):
    """The submission cannot be graded at all; the message says why, for its row."""


def submission_name(path: Path) -> str:
    """The directory's name, or the archive's without its suffix."""
    name = path.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def submissions(paths: Iterable[Path]) -> list[Submission]:
    """One ``Submission`` per path, named after it; a repeated name gets ``-2``, ``-3``..."""
    found: list[Submission] = []
    names: set[str] = set()
    for path in paths:
        base = name = submission_name(path)
        number = 1
        while name in names:
            number += 1
            name = f"{base}-{number}"
        names.add(name)
        found.append(Submission(name, path))
    return found


def _check_member(name: str) -> None:
    """Refuse a member name that would land outside the extraction directory."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or pure.is_absolute():
        raise InvalidSubmission(f"unsafe archive: member {name!r} has an absolute path")
    if ".." in pure.parts:
        raise InvalidSubmission(f"unsafe archive: member {name!r} points outside it (..)")


def _check_link(name: str, target: str) -> None:
    """Refuse a link whose target leaves the archive."""
    if target.startswith("/") or re.match(r"^[A-Za-z]:", target):
        raise InvalidSubmission(f"unsafe archive: link {name!r} points to {target!r}")
    depth = 0
    for part in (PurePosixPath(name).parent / target).parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            raise InvalidSubmission(f"unsafe archive: link {name!r} points outside it ({target})")


def extract(archive: Path, into: Path) -> None:
    """Unpack a ``.zip`` or ``.tar.gz`` into ``into``, after checking every member.

    Raises ``InvalidSubmission`` for an absolute or ``..`` member, a link pointing outside the
    archive, a device or pipe, more than ``MAX_MEMBERS`` members or more than ``MAX_UNPACKED``
    bytes, and for a file that is not such an archive at all.
    """
    into.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, into)
        else:
            _extract_tar(archive, into)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise InvalidSubmission(f"cannot read the archive: {error}") from None


def _extract_zip(archive: Path, into: Path) -> None:
    """Extract member by member, in order, each checked against what is already on disk.

    A name or a link target can stay inside the archive as written and still lead out once
    the links before it exist (``a -> .``, then ``a/a/b -> ../..``): like tarfile's ``data``
    filter, every member's real path, links resolved, must lie inside ``into``, and so must
    every link's target.
    """
    top = into.resolve()
    with zipfile.ZipFile(archive) as zipped:
        members = zipped.infolist()
        _check_sizes(len(members), sum(m.file_size for m in members))
        for member in members:
            _check_member(member.filename)
        for member in members:
            name = PurePosixPath(member.filename.replace("\\", "/"))
            if stat.S_ISLNK(member.external_attr >> 16):
                target = zipped.read(member).decode("utf-8", "replace")
                _check_link(member.filename, target)
                where = _inside(top, str(name.parent), member.filename) / name.name
                _inside(top, str(name.parent / target), member.filename, target)
                where.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    os.symlink(target, where)
                continue
            where = _inside(top, str(name), member.filename)
            if member.is_dir():
                where.mkdir(parents=True, exist_ok=True)
            else:
                where.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as source, where.open("wb") as target_file:
                    shutil.copyfileobj(source, target_file)


def _inside(top: Path, name: str, member: str, target: str | None = None) -> Path:
    """``top / name`` with every link in it resolved; refused unless it stays in ``top``."""
    real = Path(os.path.realpath(top / name))
    if real != top and top not in real.parents:
        what = f"link {member!r} points to {target!r}" if target else f"member {member!r}"
        raise InvalidSubmission(f"unsafe archive: {what}, outside it through its links")
    return real


def _extract_tar(archive: Path, into: Path) -> None:
    with tarfile.open(archive, "r:*") as tarred:
        members = tarred.getmembers()
        _check_sizes(len(members), sum(m.size for m in members))
        for member in members:
            _check_member(member.name)
            if member.issym():
                _check_link(member.name, member.linkname)
            elif member.islnk():
                _check_member(member.linkname)
            elif not (member.isfile() or member.isdir()):
                raise InvalidSubmission(
                    f"unsafe archive: {member.name!r} is a device or pipe, not a file"
                )
        tarred.extractall(into, filter="data")


def _check_sizes(count: int, size: int) -> None:
    if count > MAX_MEMBERS:
        raise InvalidSubmission(f"the archive holds {count} files (at most {MAX_MEMBERS})")
    if size > MAX_UNPACKED:
        raise InvalidSubmission(
            f"the archive unpacks to {size / 1024**2:.0f} MB (at most {MAX_UNPACKED // 1024**2})"
        )


def find_starter(root: Path) -> Path:
    """The learner's ``starter/`` package in a submission.

    It may be at the top, or one or two folders down (an archive of a folder, a whole clone),
    or the submission may be the package's own files (``__init__.py``, ``todo.py``, ...).
    Raises ``InvalidSubmission`` if there is none or there are several.
    """
    if root.name == "starter" and (root / "__init__.py").is_file():
        return root
    for depth in range(3):
        pattern = "/".join(["*"] * depth + ["starter", "__init__.py"])
        found = sorted(
            p.parent
            for p in root.glob(pattern)
            if "__MACOSX" not in p.parts and not _through_link(root, p.parent)
        )
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            places = ", ".join(str(p.relative_to(root)) for p in found)
            raise InvalidSubmission(f"more than one starter/ package: {places}")
    if (root / "__init__.py").is_file() and (root / "todo.py").is_file():
        return root  # the package's files themselves, uploaded without their folder
    raise InvalidSubmission("no starter/ package (a folder starter/ with __init__.py) in it")


def _through_link(root: Path, path: Path) -> bool:
    """True if ``path``, or a folder on the way to it from ``root``, is a link."""
    while path != root:
        if path.is_symlink():
            return True
        path = path.parent
    return False


def copy_package(package: Path, into: Path) -> None:
    """Copy a learner's package over ``into`` without following a single link.

    Files and folders are copied; caches, ``conftest.py`` files and links are not. A link is
    never followed, so one to a folder above it (``a -> .``) cannot make the copy recurse; and
    none is copied, since a chain of links that each stay inside the package can still lead
    out of it once they all exist. More than ``MAX_MEMBERS`` files or ``MAX_UNPACKED`` bytes
    make the submission invalid, as for an archive.
    """
    top = package.resolve()
    count = size = 0
    pending = [(top, into)]
    while pending:
        source, target = pending.pop()
        target.mkdir(parents=True, exist_ok=True)
        with os.scandir(source) as entries:
            for entry in entries:
                if entry.name in ("__pycache__", "conftest.py") or entry.name.endswith(".pyc"):
                    continue
                count += 1
                destination = target / entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((Path(entry.path), destination))
                elif entry.is_file(follow_symlinks=False):
                    size += entry.stat(follow_symlinks=False).st_size
                    _check_copy(count, size)
                    shutil.copyfile(entry.path, destination, follow_symlinks=False)
                _check_copy(count, size)


def _check_copy(count: int, size: int) -> None:
    if count > MAX_MEMBERS:
        raise InvalidSubmission(f"its starter/ holds more than {MAX_MEMBERS} files")
    if size > MAX_UNPACKED:
        raise InvalidSubmission(f"its starter/ holds more than {MAX_UNPACKED // 1024**2} MB")
