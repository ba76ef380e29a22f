"""ch09a · write: replace files atomically, and only files the model has read."""

import errno
import os
import resource
import signal
import stat
import tempfile
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from claw.tools.read import ReadTool
from claw.tools.tracker import FileTracker
from claw.tools.write import WriteTool, atomic_write, atomic_write_at
from claw.types import ToolOutput

OLD = b"version = 1\n# the user's careful work\n"


def tools(root: Path) -> tuple[ReadTool, WriteTool]:
    files = FileTracker()
    return ReadTool(root, files=files), WriteTool(root, files=files)


async def call(tool: ReadTool | WriteTool, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)
    assert isinstance(output, ToolOutput)
    return output


def names(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


def full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# ---------------------------------------------------------------- atomic_write


def test_write_atomic_write_creates_the_file_with_exactly_the_bytes_and_nothing_else(
    tmp_path, monkeypatch
):
    created: list[int] = []
    temporary: list[str] = []
    real_open = os.open

    def spy(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT:
            created.append(flags)
            temporary.append(os.fsdecode(path))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    data = "naïve café\r\nline two".encode() + b"\xff\x00"
    atomic_write(tmp_path / "out.bin", data)
    assert (tmp_path / "out.bin").read_bytes() == data
    assert names(tmp_path) == ["out.bin"]
    # The temporary file is made only where nothing is: no file, and no link, of that name.
    assert created and all(flags & os.O_EXCL and flags & os.O_NOFOLLOW for flags in created)
    # Its name says whose it is, should a crash ever leave it behind: .out.bin.<random>.tmp
    assert all(Path(name).name.startswith(".out.bin.") for name in temporary), temporary
    assert all(name.endswith(".tmp") for name in temporary), temporary


def test_write_atomic_write_replaces_the_content_and_keeps_the_permission_bits(tmp_path):
    script = tmp_path / "deploy.sh"
    script.write_bytes(b"#!/bin/sh\necho old\n")
    script.chmod(0o750)
    atomic_write(script, b"#!/bin/sh\necho new\n")
    assert script.read_bytes() == b"#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert names(tmp_path) == ["deploy.sh"]


def test_write_atomic_write_gives_a_new_file_the_usual_permissions_not_0600(tmp_path):
    previous = os.umask(0o022)
    try:
        atomic_write(tmp_path / "notes.txt", b"hello\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "notes.txt").stat().st_mode) == 0o644


def test_write_atomic_write_syncs_the_new_bytes_before_the_rename(tmp_path, monkeypatch):
    target = tmp_path / "config.toml"
    target.write_bytes(OLD)
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            events.append("fsync file")
        real_fsync(fd)

    def replace(source: object, destination: object, **folders: object) -> None:
        events.append("replace")
        real_replace(source, destination, **folders)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    atomic_write(target, b"version = 2\n")
    assert target.read_bytes() == b"version = 2\n"
    assert "replace" in events and "fsync file" in events
    assert events.index("fsync file") < events.index("replace")


def test_write_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "config.toml"
    target.write_bytes(OLD)
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError) as caught:
        atomic_write(target, b"version = 2\n")
    assert caught.value.errno == errno.ENOSPC
    assert target.read_bytes() == OLD
    assert names(tmp_path) == ["config.toml"], "the temporary file was left behind"


def test_write_atomic_write_keeps_the_old_file_when_the_disk_fills_up_mid_write(tmp_path):
    # A real failing write: the process may not make a file bigger than 64 KiB. The old file is
    # smaller, the new one is bigger, so the write itself fails (EFBIG), however it is done.
    target = tmp_path / "data.csv"
    target.write_bytes(OLD)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = 65536 if hard == resource.RLIM_INFINITY else min(65536, hard)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        with pytest.raises(OSError):
            atomic_write(target, b"row,of,data\n" * 20_000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert target.read_bytes() == OLD
    assert names(tmp_path) == ["data.csv"], "the half-written temporary file was left behind"


def test_write_atomic_write_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real.name)
    atomic_write(link, b"new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"


def test_write_atomic_write_takes_a_name_of_255_bytes(tmp_path):
    # The longest name the system accepts; its 200th byte falls inside a two-byte "é".
    name = "a" + "é" * 125 + ".txt"
    assert len(name.encode()) == 255
    atomic_write(tmp_path / name, b"long\n")
    assert names(tmp_path) == [name]
    assert (tmp_path / name).read_bytes() == b"long\n"


def test_write_atomic_write_at_over_a_symlink_does_not_take_the_links_bits(tmp_path):
    # A link's own permission bits are 0o777. One swapped in for the target while claw works
    # is replaced by a regular file with the usual bits, not one everybody may write.
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_bytes(b"not ours\n")
    elsewhere.chmod(0o600)  # nor the bits of the file the link points to
    (tmp_path / "settings.toml").symlink_to(elsewhere.name)
    previous = os.umask(0o022)
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        atomic_write_at(folder, "settings.toml", b"new\n")
    finally:
        os.close(folder)
        os.umask(previous)
    written = os.lstat(tmp_path / "settings.toml")
    assert stat.S_ISREG(written.st_mode)
    assert stat.S_IMODE(written.st_mode) == 0o644
    assert elsewhere.read_bytes() == b"not ours\n"


@settings(max_examples=examples(30), deadline=None)
@given(old=st.one_of(st.none(), st.binary(max_size=300)), new=st.binary(max_size=300))
def test_write_atomic_write_always_leaves_exactly_the_new_bytes(old, new):
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "file.dat"
        if old is not None:
            target.write_bytes(old)
        atomic_write(target, new)
        assert target.read_bytes() == new
        assert names(Path(directory)) == ["file.dat"]


# ---------------------------------------------------------------- the write tool


async def test_write_tool_creates_a_new_file_and_its_parent_directories(tmp_path):
    _, write = tools(tmp_path)
    output = await call(write, path="src/pkg/util.py", content="def one():\n    return 1\n")
    assert not output.is_error, output.content
    assert output.content == "created src/pkg/util.py (2 lines, 24 bytes)"
    assert (tmp_path / "src/pkg/util.py").read_text() == "def one():\n    return 1\n"
    for content, size in [("x", "1 line, 1 byte"), ("ab", "1 line, 2 bytes")]:
        output = await call(write, path=f"{content}.txt", content=content)
        assert output.content == f"created {content}.txt ({size})"
    long = "n" * 200 + ".txt"  # long, but a name the system accepts
    assert not (await call(write, path=long, content="x")).is_error
    assert (tmp_path / long).read_text() == "x"


async def test_write_tool_writes_the_content_as_utf8_exactly_as_given(tmp_path):
    _, write = tools(tmp_path)
    content = "Grüße, 世界 🌍\r\nno final newline"
    output = await call(write, path="hello.txt", content=content)
    assert not output.is_error, output.content
    assert (tmp_path / "hello.txt").read_bytes() == content.encode("utf-8")
    # JSON can carry a lone surrogate, which no UTF-8 file can hold.
    lone = await call(write, path="odd.txt", content="a\ud800b")
    assert lone.is_error and "UTF-8" in lone.content, lone.content
    assert not (tmp_path / "odd.txt").exists()


async def test_write_tool_refuses_to_replace_a_file_the_model_has_not_read(tmp_path):
    (tmp_path / "notes.txt").write_bytes(OLD)
    _, write = tools(tmp_path)
    output = await call(write, path="notes.txt", content="gone\n")
    assert output.is_error
    assert "read notes.txt before editing it" in output.content
    assert (tmp_path / "notes.txt").read_bytes() == OLD


async def test_write_tool_replaces_a_file_after_reading_it(tmp_path):
    (tmp_path / "notes.txt").write_bytes(OLD)
    read, write = tools(tmp_path)
    assert not (await call(read, path="notes.txt")).is_error
    output = await call(write, path="notes.txt", content="version = 2\n")
    assert not output.is_error, output.content
    assert output.content.startswith("replaced notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "version = 2\n"


async def test_write_tool_refuses_a_file_that_changed_on_disk_since_it_was_read(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(OLD)
    read, write = tools(tmp_path)
    await call(read, path="notes.txt")
    notes.write_bytes(OLD + b"# the user added this line after the read\n")
    output = await call(write, path="notes.txt", content="version = 2\n")
    assert output.is_error
    assert "notes.txt has changed on disk since it was last read" in output.content
    assert b"the user added this line" in notes.read_bytes()
    await call(read, path="notes.txt")  # read it again: now the write may go ahead
    assert not (await call(write, path="notes.txt", content="version = 2\n")).is_error


async def test_write_tool_notices_a_change_in_time_size_or_inode_alone(tmp_path):
    notes = tmp_path / "notes.txt"
    other = tmp_path / "other.txt"

    def same_size_later(before: os.stat_result) -> None:
        # rewritten in place: same inode and size, a later time
        notes.write_bytes(OLD.replace(b"1", b"2"))
        os.utime(notes, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))

    def longer_same_time(before: os.stat_result) -> None:
        # same inode and time, another size
        notes.write_bytes(OLD + b"# more\n")
        os.utime(notes, ns=(before.st_atime_ns, before.st_mtime_ns))

    def replaced_same_size_and_time(before: os.stat_result) -> None:
        # an editor's save: only the inode tells
        other.write_bytes(OLD.replace(b"1", b"3"))
        os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(other, notes)

    for change in (same_size_later, longer_same_time, replaced_same_size_and_time):
        notes.write_bytes(OLD)
        read, write = tools(tmp_path)
        await call(read, path="notes.txt")
        change(notes.stat())
        output = await call(write, path="notes.txt", content="version = 9\n")
        assert output.is_error, change.__name__
        assert "notes.txt has changed on disk since it was last read" in output.content


async def test_write_tool_writes_where_a_directory_cannot_be_synced(tmp_path, monkeypatch):
    fsync = os.fsync

    def refuse_directories(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "cannot sync a directory here")
        fsync(fd)

    monkeypatch.setattr(os, "fsync", refuse_directories)
    _, write = tools(tmp_path)
    output = await call(write, path="notes.txt", content="version = 2\n")
    assert not output.is_error, output.content
    assert (tmp_path / "notes.txt").read_bytes() == b"version = 2\n"


async def test_write_tool_may_rewrite_a_file_it_wrote_without_reading_it_again(tmp_path):
    _, write = tools(tmp_path)
    assert not (await call(write, path="todo.md", content="- one\n")).is_error
    output = await call(write, path="todo.md", content="- one\n- two\n")
    assert not output.is_error, output.content
    assert output.content == "replaced todo.md (2 lines, 12 bytes)"


async def test_write_tool_keeps_an_executable_script_executable(tmp_path):
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\necho 1\n")
    script.chmod(0o755)
    read, write = tools(tmp_path)
    await call(read, path="run.sh")
    assert not (await call(write, path="run.sh", content="#!/bin/sh\necho 2\n")).is_error
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_write_tool_reports_a_full_disk_as_an_error_and_keeps_the_old_file(
    tmp_path, monkeypatch
):
    (tmp_path / "notes.txt").write_bytes(OLD)
    read, write = tools(tmp_path)
    await call(read, path="notes.txt")
    monkeypatch.setattr(os, "replace", full_disk)
    output = await call(write, path="notes.txt", content="version = 2\n")
    assert output.is_error
    assert "No space left on device" in output.content
    assert "notes.txt" in output.content
    assert (tmp_path / "notes.txt").read_bytes() == OLD
    assert names(tmp_path) == ["notes.txt"]


async def test_write_tool_refuses_a_directory(tmp_path):
    (tmp_path / "src").mkdir()
    _, write = tools(tmp_path)
    output = await call(write, path="src", content="x")
    assert output.is_error
    assert "src is a directory" in output.content
    assert (tmp_path / "src").is_dir()


async def test_write_tool_turns_names_the_system_rejects_into_error_results(tmp_path):
    _, write = tools(tmp_path)
    for path in ["x" * 300, "bad\x00name.txt", "docs/"]:
        output = await call(write, path=path, content="hello\n")
        assert output.is_error, path
    assert names(tmp_path) == []
