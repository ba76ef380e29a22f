"""ch02 · ReadTool: show a text file to the model like `cat -n`, a window of lines at a time."""

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from claw.tools.read import ReadTool, looks_binary, number_lines, read_lines
from claw.types import ToolOutput

NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
NOTE = re.compile(r"offset=(\d+)")


def write(root: Path, name: str, content: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data)
    return path


def lines_of(count: int, width: int = 0) -> str:
    return "".join(f"line {n}".ljust(width) + "\n" for n in range(1, count + 1))


def numbered(output: ToolOutput) -> list[tuple[int, str]]:
    """The (number, text) pairs of the numbered lines of an output, in order."""
    pairs = []
    for line in output.content.split("\n"):
        match = NUMBERED.match(line)
        if match:
            pairs.append((int(match.group(1)), match.group(2)))
    return pairs


def continue_at(output: ToolOutput) -> int | None:
    """The offset the note at the end of an output says to read on from, if there is a note."""
    found = NOTE.findall(output.content)
    return int(found[-1]) if found else None


async def read(tool: ReadTool, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)
    assert isinstance(output, ToolOutput)
    return output


# ---------------------------------------------------------------- the cat -n format


def test_read_number_lines_right_aligns_the_number_in_six_columns_then_a_tab():
    assert number_lines(["alpha", "", "gamma"], 1) == "     1\talpha\n     2\t\n     3\tgamma"


def test_read_number_lines_counts_from_first_and_widens_past_six_digits():
    assert number_lines(["x", "y"], 99) == "    99\tx\n   100\ty"
    assert number_lines(["z"], 1234567) == "1234567\tz"


def test_read_number_lines_cuts_only_lines_longer_than_the_limit_and_marks_the_cut():
    text = number_lines(["a" * 5, "b" * 6], 1, max_line_chars=5)
    assert text == "     1\taaaaa\n     2\tbbbbb…"


async def test_read_shows_a_whole_small_file_numbered_with_no_note(tmp_path):
    write(tmp_path, "notes.txt", "buy milk\ncall mum\n")
    output = await read(ReadTool(tmp_path), path="notes.txt")
    assert not output.is_error
    assert output.content == "     1\tbuy milk\n     2\tcall mum"


async def test_read_cuts_a_very_long_line_in_the_file_with_an_ellipsis(tmp_path):
    write(tmp_path, "min.js", "short\n" + "x" * 50 + "\n")
    output = await read(ReadTool(tmp_path, max_line_chars=10), path="min.js")
    assert numbered(output) == [(1, "short"), (2, "x" * 10 + "…")]


async def test_read_a_long_line_is_cut_in_a_window_that_stops_early_too(tmp_path):
    write(tmp_path, "min.js", "x" * 50 + "\nshort\n")
    output = await read(ReadTool(tmp_path, max_line_chars=10), path="min.js", limit=1)
    assert numbered(output) == [(1, "x" * 10 + "…")]
    assert continue_at(output) == 2


# ---------------------------------------------------------------- windows and the note


async def test_read_offset_and_limit_show_a_window_numbered_by_its_place_in_the_file(tmp_path):
    write(tmp_path, "ten.txt", lines_of(10))
    output = await read(ReadTool(tmp_path), path="ten.txt", offset=4, limit=3)
    assert not output.is_error
    assert numbered(output) == [(4, "line 4"), (5, "line 5"), (6, "line 6")]
    assert continue_at(output) == 7


async def test_read_a_window_that_reaches_the_last_line_has_no_note(tmp_path):
    write(tmp_path, "ten.txt", lines_of(10))
    tool = ReadTool(tmp_path)
    exact = await read(tool, path="ten.txt", offset=8, limit=3)
    beyond = await read(tool, path="ten.txt", offset=8, limit=50)
    for output in (exact, beyond):
        assert [n for n, _ in numbered(output)] == [8, 9, 10]
        assert continue_at(output) is None


async def test_read_max_lines_caps_the_window_even_when_limit_asks_for_more(tmp_path):
    write(tmp_path, "twelve.txt", lines_of(12))
    tool = ReadTool(tmp_path, max_lines=5)
    for output in (
        await read(tool, path="twelve.txt"),
        await read(tool, path="twelve.txt", limit=100),
    ):
        assert [n for n, _ in numbered(output)] == [1, 2, 3, 4, 5]
        assert continue_at(output) == 6


async def test_read_max_chars_stops_early_and_says_where_to_continue(tmp_path):
    write(tmp_path, "big.txt", lines_of(1000, width=20))
    output = await read(ReadTool(tmp_path, max_chars=1000), path="big.txt")
    shown = [n for n, _ in numbered(output)]
    assert 1 <= len(shown) < 1000
    assert shown == list(range(1, len(shown) + 1))
    assert len(output.content) < 2 * 1000
    assert continue_at(output) == len(shown) + 1


async def test_read_max_chars_counts_each_line_plus_8_and_stops_only_past_the_budget(tmp_path):
    write(tmp_path, "twelve.txt", lines_of(10, width=12))  # each line counts 12 + 8 = 20
    exactly = await read(ReadTool(tmp_path, max_chars=100), path="twelve.txt")
    assert [n for n, _ in numbered(exactly)] == [1, 2, 3, 4, 5], "5 lines are exactly 100"
    assert continue_at(exactly) == 6
    short = await read(ReadTool(tmp_path, max_chars=99), path="twelve.txt")
    assert [n for n, _ in numbered(short)] == [1, 2, 3, 4], "a fifth line would pass 99"
    assert continue_at(short) == 5


async def test_read_by_default_shows_2000_lines_of_at_most_2000_characters(tmp_path):
    cut = number_lines(["x" * 2001, "y" * 2000], 1)
    assert cut == f"     1\t{'x' * 2000}…\n     2\t{'y' * 2000}"
    write(tmp_path, "long.txt", lines_of(2001))
    output = await read(ReadTool(tmp_path), path="long.txt")
    assert [n for n, _ in numbered(output)] == list(range(1, 2001))
    assert continue_at(output) == 2001
    write(tmp_path, "wide.txt", "x" * 2001 + "\n" + "y" * 2000 + "\n")
    wide = await read(ReadTool(tmp_path), path="wide.txt")
    assert numbered(wide) == [(1, "x" * 2000 + "…"), (2, "y" * 2000)]


async def test_read_by_default_stops_once_the_window_passes_100000_characters(tmp_path):
    write(tmp_path, "exact.txt", ("e" * 1992 + "\n") * 50)  # 50 lines of 1992 + 8 = 100,000
    exact = await read(ReadTool(tmp_path), path="exact.txt")
    assert len(numbered(exact)) == 50
    assert continue_at(exact) is None
    write(tmp_path, "over.txt", ("o" * 1992 + "\n") * 49 + "o" * 1993 + "\n")  # 100,001
    over = await read(ReadTool(tmp_path), path="over.txt")
    assert len(numbered(over)) == 49
    assert continue_at(over) == 50


async def test_read_by_default_reads_from_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path, "notes.txt", "here\n")
    monkeypatch.chdir(tmp_path)
    output = await read(ReadTool(), path="notes.txt")
    assert output == ToolOutput.ok("     1\there")


class Seen:
    """Stands in for chapter 9's ``FileTracker``: remembers each file it is told of."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def saw(self, path: Path) -> None:
        self.paths.append(path)


async def test_read_tells_files_of_each_file_it_showed_and_of_no_failed_read(tmp_path):
    write(tmp_path, "docs/guide.md", "read me\n")
    seen = Seen()
    tool = ReadTool(tmp_path, files=seen)  # type: ignore[arg-type]
    assert not (await read(tool, path="docs/guide.md")).is_error
    assert seen.paths == [tmp_path / "docs/guide.md"]
    assert (await read(tool, path="ghost.txt")).is_error
    assert (await read(tool, path="docs")).is_error
    assert seen.paths == [tmp_path / "docs/guide.md"], "a failed read showed nothing"


async def test_read_a_line_longer_than_max_chars_is_still_shown_so_reading_progresses(tmp_path):
    write(tmp_path, "wide.txt", ("w" * 100 + "\n") * 3)
    output = await read(ReadTool(tmp_path, max_chars=50), path="wide.txt", offset=2)
    assert numbered(output) == [(2, "w" * 100)]
    assert continue_at(output) == 3


async def test_read_following_the_notes_reads_every_line_exactly_once(tmp_path):
    write(tmp_path, "thirty.txt", lines_of(30))
    tool = ReadTool(tmp_path, max_lines=7)
    seen: list[tuple[int, str]] = []
    offset: int | None = 1
    while offset is not None:
        output = await read(tool, path="thirty.txt", offset=offset)
        assert not output.is_error
        seen += numbered(output)
        offset = continue_at(output)
    assert seen == [(n, f"line {n}") for n in range(1, 31)]


async def test_read_an_empty_file_is_not_an_error_and_says_it_is_empty(tmp_path):
    write(tmp_path, "empty.txt", b"")
    output = await read(ReadTool(tmp_path), path="empty.txt")
    assert not output.is_error
    assert "empty" in output.content.lower()
    assert numbered(output) == []


async def test_read_an_offset_past_the_end_is_an_error_that_gives_the_line_count(tmp_path):
    write(tmp_path, "ten.txt", lines_of(10))
    tool = ReadTool(tmp_path)
    last = await read(tool, path="ten.txt", offset=10)
    past = await read(tool, path="ten.txt", offset=11)
    assert numbered(last) == [(10, "line 10")]
    assert past.is_error
    assert re.search(r"\b10\b", past.content)


# ---------------------------------------------------------------- failures are results


async def test_read_a_missing_file_is_an_error_result_naming_the_path(tmp_path):
    output = await read(ReadTool(tmp_path), path="ghost.txt")
    assert output.is_error
    assert "ghost.txt" in output.content
    assert any(
        words in output.content.lower()
        for words in ("not found", "no such", "not exist", "doesn't exist", "missing")
    )


async def test_read_a_directory_is_an_error_result_that_says_so(tmp_path):
    (tmp_path / "src").mkdir()
    output = await read(ReadTool(tmp_path), path="src")
    assert output.is_error
    assert "directory" in output.content.lower()


async def test_read_a_binary_file_is_an_error_result(tmp_path):
    write(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    output = await read(ReadTool(tmp_path), path="logo.png")
    assert output.is_error
    assert "logo.png" in output.content
    assert "binary" in output.content.lower()


def test_read_looks_binary_only_for_nul_bytes_not_for_non_ascii_text():
    assert looks_binary(b"abc\x00def")
    assert not looks_binary("héllo wörld ✓ 日本\n".encode())
    assert not looks_binary(b"tabs\tand\r\nform feeds\x0c are text")
    assert not looks_binary(b"")


async def test_read_invalid_utf8_is_an_error_naming_the_line_and_the_byte(tmp_path):
    write(tmp_path, "latin1.txt", "menu\ncafé au lait\n".encode("latin-1"))
    output = await read(ReadTool(tmp_path), path="latin1.txt")
    assert output.is_error
    assert "latin1.txt" in output.content
    assert "utf-8" in output.content.lower()
    assert re.search(r"\bline 2\b", output.content), "the bad byte is on line 2"
    assert "0xe9" in output.content.lower(), "the bad byte is 0xe9, a Latin-1 é"


async def test_read_invalid_utf8_names_the_column_and_any_byte_from_0x80_to_0xff(tmp_path):
    write(tmp_path, "latin1.txt", "menu\ncafé au lait\n".encode("latin-1"))
    tool = ReadTool(tmp_path)
    output = await read(tool, path="latin1.txt")
    assert re.search(r"\bcolumn 4\b", output.content), "é is the 4th character of café"
    # The lowest and the highest byte that decoding turns into a stand-in are both caught.
    for byte, name in ((b"\x80", "0x80"), (b"\xff", "0xff")):
        write(tmp_path, "bad.txt", b"fine\n" + byte + b"bad\n")
        output = await read(tool, path="bad.txt")
        assert output.is_error, name
        assert re.search(r"\bline 2\b", output.content), name
        assert re.search(r"\bcolumn 1\b", output.content), name
        assert name in output.content.lower()


async def test_read_only_the_lines_shown_are_checked_for_utf8(tmp_path):
    write(tmp_path, "mixed.txt", b"one\ntwo\nthr\xe9e\nfour\n")
    tool = ReadTool(tmp_path)
    before = await read(tool, path="mixed.txt", limit=2)
    assert numbered(before) == [(1, "one"), (2, "two")]
    assert continue_at(before) == 3
    after = await read(tool, path="mixed.txt", offset=4)
    assert numbered(after) == [(4, "four")]
    at = await read(tool, path="mixed.txt", offset=3)
    assert at.is_error
    assert re.search(r"\bline 3\b", at.content)


async def test_read_relative_paths_are_resolved_against_root_not_the_cwd(tmp_path, monkeypatch):
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "elsewhere"
    write(workspace, "docs/guide.md", "inside the workspace\n")
    write(elsewhere, "docs/guide.md", "the wrong file\n")
    monkeypatch.chdir(elsewhere)
    output = await read(ReadTool(workspace), path="docs/guide.md")
    assert numbered(output) == [(1, "inside the workspace")]


async def test_read_a_name_the_system_rejects_is_an_error_result_not_an_exception(tmp_path):
    tool = ReadTool(tmp_path)
    for name in ("n" * 300 + ".txt", "nul\x00byte.txt", "twelve.txt/inside.txt"):
        output = await read(tool, path=name)
        assert output.is_error, name
    write(tmp_path, "twelve.txt", lines_of(12))
    assert (await read(tool, path="twelve.txt/inside.txt")).is_error


async def test_read_an_error_while_reading_is_an_error_result_not_an_exception():
    # /proc/self/mem is a regular file to stat, but reading its start fails (EIO).
    if not Path("/proc/self/mem").exists():
        pytest.skip("needs Linux's /proc/self/mem, a file that cannot be read")
    output = await read(ReadTool("/proc/self"), path="mem")
    assert output.is_error


# ---------------------------------------------------------------- bad input: size and kind


def bytes_read_by_this_process() -> int:
    """Bytes this process has read from files so far (Linux counts them in /proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


HOLE = 64 * 1024 * 1024
"""A sparse stretch of NUL bytes: costs no disk, and reading it all would be easy to see."""


def text_then_hole(path: Path, lines: int, after: str = "") -> None:
    """``lines`` numbered lines, then HOLE bytes of nothing (one long line), then ``after``."""
    with path.open("wb") as file:
        file.write(lines_of(lines).encode())
        file.seek(HOLE, os.SEEK_CUR)
        file.write(("\n" + after).encode())


async def test_read_stops_reading_once_the_window_is_full(tmp_path):
    if not Path("/proc/self/io").exists():
        pytest.skip("counting the bytes read needs Linux's /proc/self/io")
    text_then_hole(tmp_path / "huge.log", 20_000)
    tool = ReadTool(tmp_path)
    for offset in (1, 15_000):
        before = bytes_read_by_this_process()
        output = await read(tool, path="huge.log", offset=offset, limit=5)
        read_now = bytes_read_by_this_process() - before
        assert numbered(output) == [(n, f"line {n}") for n in range(offset, offset + 5)]
        assert continue_at(output) == offset + 5
        assert read_now < 4 * 1024 * 1024, f"read {read_now} bytes of a {HOLE}-byte file"


async def test_read_a_page_after_a_huge_line_is_numbered_by_its_place(tmp_path):
    text_then_hole(tmp_path / "huge.log", 1000, after="after one\nafter two\n")
    tool = ReadTool(tmp_path, max_line_chars=20)
    output = await read(tool, path="huge.log", offset=1000, limit=10)
    assert numbered(output) == [
        (1000, "line 1000"),
        (1001, "\x00" * 20 + "…"),
        (1002, "after one"),
        (1003, "after two"),
    ]
    assert continue_at(output) is None


async def test_read_only_the_first_8_kib_decide_whether_a_file_is_binary(tmp_path):
    text = lines_of(1000).encode()  # longer than 8 KiB
    write(tmp_path, "late_nul.txt", text[:8192] + b"\x00" + text[8192:])
    write(tmp_path, "early_nul.bin", text[:8191] + b"\x00" + text[8191:])
    tool = ReadTool(tmp_path)
    late = await read(tool, path="late_nul.txt", limit=3)
    assert numbered(late) == [(1, "line 1"), (2, "line 2"), (3, "line 3")]
    early = await read(tool, path="early_nul.bin", limit=3)
    assert early.is_error
    assert "binary" in early.content.lower()


def read_in_a_thread(tool: ReadTool, fifo: Path, **arguments: object) -> ToolOutput:
    """Read in a thread of its own; if that blocks on ``fifo``, free it and fail the test."""
    outcome: list[ToolOutput | BaseException] = []

    def work() -> None:
        try:
            outcome.append(asyncio.run(tool.run(arguments)))
        except BaseException as error:  # a stub's Todo, say: raised again below
            outcome.append(error)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(timeout=1)
    if worker.is_alive():
        # Opening the other end lets a blocked open go on; closing it is the end of the file.
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=5)
        pytest.fail("read blocked on a FIFO; check the kind of file with stat before opening it")
    [result] = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def test_read_a_fifo_is_refused_before_it_is_opened(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("this platform has no FIFOs")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    tool = ReadTool(tmp_path)
    for name in ("pipe", "link"):
        output = read_in_a_thread(tool, fifo, path=name)
        assert output.is_error
        assert "regular file" in output.content.lower()


def test_read_a_fifo_put_there_after_the_check_is_refused_without_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("this platform has no FIFOs")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "plain.txt").write_text("text\n")
    tool = ReadTool(tmp_path)
    regular = tool.fs.stat("plain.txt")
    # the check saw a regular file; by the time of the open, a FIFO is there instead
    monkeypatch.setattr(tool.fs, "stat", lambda path: regular)

    output = read_in_a_thread(tool, fifo, path="pipe")

    assert output.is_error
    assert "regular file" in output.content.lower()


DEV_ZERO = """
import asyncio, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a wrong read fails, not the machine
from claw.tools.read import ReadTool
output = asyncio.run(ReadTool("/dev").run({"path": "zero"}))
print(json.dumps([output.is_error, output.content]))
"""


async def test_read_devices_are_refused_even_endless_ones(tmp_path):
    if not Path("/dev/null").exists() or not Path("/dev/zero").exists():
        pytest.skip("this platform has no /dev/null and /dev/zero")
    output = await read(ReadTool("/dev"), path="null")
    assert output.is_error
    assert "regular file" in output.content.lower()
    # /dev/zero never ends: a read that does not stop would fill the memory, so it runs in a
    # process of its own with 1 GiB of memory and 5 seconds at most.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", DEV_ZERO], capture_output=True, text=True, timeout=5, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    is_error, content = json.loads(done.stdout)
    assert is_error
    assert "regular file" in content.lower()


# ---------------------------------------------------------------- lines, endings, BOM


async def test_read_crlf_line_endings_leave_no_carriage_returns(tmp_path):
    write(tmp_path, "windows.txt", b"first\r\nsecond\r\n")
    output = await read(ReadTool(tmp_path), path="windows.txt")
    assert output.content == "     1\tfirst\n     2\tsecond"


async def test_read_a_lone_carriage_return_does_not_end_a_line(tmp_path):
    write(tmp_path, "odd.txt", b"odd\rreturn\r\nnext\n")
    output = await read(ReadTool(tmp_path), path="odd.txt", offset=2)
    assert numbered(output) == [(2, "next")]
    whole = await read(ReadTool(tmp_path), path="odd.txt")
    assert whole.content == "     1\todd\rreturn\n     2\tnext"


async def test_read_a_trailing_newline_does_not_add_an_empty_line(tmp_path):
    write(tmp_path, "with.txt", "a\nb\n")
    write(tmp_path, "without.txt", "a\nb")
    write(tmp_path, "blank_last.txt", "a\n\n")
    tool = ReadTool(tmp_path)
    assert numbered(await read(tool, path="with.txt")) == [(1, "a"), (2, "b")]
    assert numbered(await read(tool, path="without.txt")) == [(1, "a"), (2, "b")]
    assert numbered(await read(tool, path="blank_last.txt")) == [(1, "a"), (2, "")]


def lines_in(text: str, max_line_chars: int = 100) -> list[str]:
    return list(read_lines(io.StringIO(text, newline="\n"), max_line_chars))


def test_read_read_lines_splits_only_at_newline_like_grep_n():
    text = "page one\x0cstill line one\nline\u2028two\nodd\rreturn\r\n"
    assert lines_in(text) == ["page one\x0cstill line one", "line\u2028two", "odd\rreturn"]
    assert lines_in("a\nb\n") == lines_in("a\nb") == ["a", "b"]
    assert lines_in("a\n\n") == ["a", ""]
    assert lines_in("\n") == [""]
    assert lines_in("") == []


class CountingText(io.StringIO):
    """A text file that remembers how many characters each call handed out."""

    def __init__(self, text: str) -> None:
        super().__init__(text, newline="\n")
        self.handed_out: list[int] = []

    def readline(self, size: int | None = -1, /) -> str:
        line = super().readline(size)
        self.handed_out.append(len(line))
        return line

    def read(self, size: int | None = -1, /) -> str:
        text = super().read(size)
        self.handed_out.append(len(text))
        return text

    def __next__(self) -> str:
        line = super().__next__()
        self.handed_out.append(len(line))
        return line


def test_read_read_lines_cuts_a_huge_line_without_ever_holding_it():
    file = CountingText("first\n" + "x" * 1_000_000 + "\nlast\n")
    lines = read_lines(file, 10)
    assert next(lines) == "first"
    assert next(lines) == "x" * 11, "a cut line keeps max_line_chars + 1 characters"
    assert file.handed_out, "read_lines reads the file it is given"
    assert max(file.handed_out) <= 65_536, "no call may hand out more than 64 Ki characters"
    assert list(lines) == ["last"]


async def test_read_a_form_feed_does_not_shift_the_line_numbers(tmp_path):
    write(tmp_path, "paged.txt", "one\x0cmore\ntwo\nthree\n")
    output = await read(ReadTool(tmp_path), path="paged.txt", offset=3)
    assert numbered(output) == [(3, "three")]


async def test_read_a_utf8_bom_is_dropped(tmp_path):
    write(tmp_path, "bom.txt", b"\xef\xbb\xbfhello\n")
    output = await read(ReadTool(tmp_path), path="bom.txt")
    assert output.content == "     1\thello"


# ---------------------------------------------------------------- the definition


async def test_read_definition_requires_path_and_offset_and_limit_are_optional(tmp_path):
    tool = ReadTool(tmp_path)
    definition = tool.definition
    assert definition.name == "read"
    assert definition.required == ("path",)
    assert {"path", "offset", "limit"} <= set(definition.parameters["properties"])
    write(tmp_path, "only_path.txt", "works\n")
    output = await read(tool, path="only_path.txt")
    assert not output.is_error
    assert numbered(output) == [(1, "works")]


# ---------------------------------------------------------------- property

LINE = st.text(
    alphabet=st.characters(exclude_characters="\n\r\x00\ufeff", exclude_categories=("Cs",)),
    max_size=30,
)


@settings(deadline=None, max_examples=examples(50))
@given(st.lists(LINE, min_size=1, max_size=20))
def test_read_any_lines_written_to_a_file_come_back_numbered_in_order(lines):
    async def round_trip() -> ToolOutput:
        with tempfile.TemporaryDirectory() as root:
            write(Path(root), "f.txt", "".join(line + "\n" for line in lines))
            return await ReadTool(root).run({"path": "f.txt", "limit": 1000})

    output = asyncio.run(round_trip())
    assert not output.is_error
    assert output.content.split("\n") == [
        f"{n:>6}\t{line}" for n, line in enumerate(lines, start=1)
    ]
