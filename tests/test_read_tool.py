"""ch02 · ReadTool: show a text file to the model like `cat -n`, a window of lines at a time."""

import asyncio
import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from claw.tools.read import ReadTool, looks_binary, number_lines, split_lines
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


async def test_read_invalid_utf8_is_an_error_naming_the_byte_offset(tmp_path):
    write(tmp_path, "latin1.txt", "café au lait".encode("latin-1"))
    output = await read(ReadTool(tmp_path), path="latin1.txt")
    assert output.is_error
    assert "latin1.txt" in output.content
    assert "utf-8" in output.content.lower()
    assert re.search(r"\b3\b", output.content), "the bad byte is at offset 3"


async def test_read_relative_paths_are_resolved_against_root_not_the_cwd(tmp_path, monkeypatch):
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "elsewhere"
    write(workspace, "docs/guide.md", "inside the workspace\n")
    write(elsewhere, "docs/guide.md", "the wrong file\n")
    monkeypatch.chdir(elsewhere)
    output = await read(ReadTool(workspace), path="docs/guide.md")
    assert numbered(output) == [(1, "inside the workspace")]


# ---------------------------------------------------------------- lines, endings, BOM


async def test_read_crlf_line_endings_leave_no_carriage_returns(tmp_path):
    write(tmp_path, "windows.txt", b"first\r\nsecond\r\n")
    output = await read(ReadTool(tmp_path), path="windows.txt")
    assert output.content == "     1\tfirst\n     2\tsecond"


async def test_read_a_trailing_newline_does_not_add_an_empty_line(tmp_path):
    write(tmp_path, "with.txt", "a\nb\n")
    write(tmp_path, "without.txt", "a\nb")
    write(tmp_path, "blank_last.txt", "a\n\n")
    tool = ReadTool(tmp_path)
    assert numbered(await read(tool, path="with.txt")) == [(1, "a"), (2, "b")]
    assert numbered(await read(tool, path="without.txt")) == [(1, "a"), (2, "b")]
    assert numbered(await read(tool, path="blank_last.txt")) == [(1, "a"), (2, "")]


def test_read_split_lines_splits_only_at_newline_like_grep_n():
    text = "page one\x0cstill line one\nline\u2028two\nodd\rreturn\r\n"
    assert split_lines(text) == ["page one\x0cstill line one", "line\u2028two", "odd\rreturn"]
    assert split_lines("\n") == [""]
    assert split_lines("") == []


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


@settings(deadline=None, max_examples=50)
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
