"""ch09a · edit: replace an exact, unique string in a file the model has read; reply with a diff."""

import codecs
import errno
import os
import stat
from pathlib import Path

import pytest
from budget import examples
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from claw.agent import SimpleAgent
from claw.mock import MockProvider
from claw.tools.edit import (
    EditError,
    EditTool,
    TextFile,
    find_all,
    line_ending,
    most_similar,
    replace_once,
    show_diff,
)
from claw.tools.read import ReadTool
from claw.tools.tracker import FileTracker
from claw.types import AssistantTurn, ToolCall, ToolOutput, ToolResultMessage, ToolSet

APP = """\
def greet(name):
    print("hello", name)


def part(name):
    print("goodbye", name)


def main():
    greet("Ada")
    part("Ada")
"""


def tools(root: Path) -> tuple[ReadTool, EditTool]:
    files = FileTracker()
    return ReadTool(root, files=files), EditTool(root, files=files)


async def call(tool: ReadTool | EditTool, **arguments: object) -> ToolOutput:
    output = await tool.run(arguments)
    assert isinstance(output, ToolOutput)
    return output


async def read_then_edit(root: Path, path: str, **arguments: object) -> ToolOutput:
    read, edit = tools(root)
    assert not (await call(read, path=path)).is_error
    return await call(edit, path=path, **arguments)


# ---------------------------------------------------------------- the pure helpers


def test_edit_find_all_gives_every_start_overlapping_matches_included():
    assert find_all("aaa", "aa") == [0, 1]
    assert find_all("x = 1\ny = 1\n", "= 1") == [2, 8]
    assert find_all("abc", "d") == []
    assert find_all("a-a-a", "a") == [0, 2, 4]


def test_edit_line_ending_is_the_one_most_lines_use():
    assert line_ending("a\r\nb\r\nc") == "\r\n"
    assert line_ending("a\nb\nc\r\n") == "\n"
    assert line_ending("a\r\nb\r\nc\n") == "\r\n"
    assert line_ending("one line") == "\n"


def test_edit_text_file_keeps_a_byte_order_mark_and_refuses_bytes_that_are_not_utf8():
    file = TextFile.decode(codecs.BOM_UTF8 + "año\r\n".encode())
    assert (file.text, file.bom) == ("año\r\n", True)
    assert file.encode("años\r\n") == codecs.BOM_UTF8 + "años\r\n".encode()
    plain = TextFile.decode(b"plain\n")
    assert (plain.text, plain.bom) == ("plain\n", False)
    assert plain.encode("plain!\n") == b"plain!\n"
    with pytest.raises(UnicodeDecodeError):
        TextFile.decode(b"caf\xe9\n")  # Latin-1, not UTF-8


def test_edit_replace_once_replaces_the_one_match_and_nothing_else():
    after, count = replace_once(APP, 'print("hello", name)', 'print(f"hello, {name}")')
    assert count == 1
    assert after == APP.replace('print("hello", name)', 'print(f"hello, {name}")')


def test_edit_replace_once_writes_strings_sent_with_crlf_in_an_lf_files_endings():
    after, count = replace_once("a = 1\nb = 2\nc = 3\n", "a = 1\r\nb = 2", "a = 1\r\nb = 5")
    assert count == 1
    assert after == "a = 1\nb = 5\nc = 3\n"


def test_edit_replace_once_with_no_match_shows_the_most_similar_lines_numbered():
    with pytest.raises(EditError) as caught:
        replace_once(APP, 'print("goodbye", nme)', "x", shown="app.py")
    message = str(caught.value)
    assert message.startswith("old_string was not found in app.py")
    assert '     6\t    print("goodbye", name)' in message
    assert "greet" not in message
    # A CRLF file is compared and shown as read shows it: the same message as for LF, no "\r",
    # even for lines exactly at MIN_SIMILARITY.
    for text, quote in [(APP, 'print("goodbye", nme)'), ("ab\nwxyz\n", "ab\ncd")]:
        with pytest.raises(EditError) as lf:
            replace_once(text, quote, "x", shown="app.py")
        with pytest.raises(EditError) as crlf:
            replace_once(text.replace("\n", "\r\n"), quote, "x", shown="app.py")
        assert str(crlf.value) == str(lf.value)
        assert "The most similar lines are:" in str(lf.value)


def test_edit_most_similar_compares_runs_of_as_many_lines_as_the_quote():
    quote = 'def main():\n    greet("Bob")\n'
    assert most_similar(APP, quote) == '     9\tdef main():\n    10\t    greet("Ada")'
    assert most_similar(APP, "zzzzzzzzzzzzzzzzzzzzzzzzz") is None
    # The last line is a candidate too; a run cut short by the end of the file is not.
    assert most_similar("a = 1\nb = 2", "b = 3") == "     2\tb = 2"
    assert most_similar("x = 1\ny = 2", "y = 2\nz = 2") is None
    # A run is its lines joined by "\n", scored against the quote's lines joined the same way.
    assert most_similar("if x:\nelse:\n", "if x:\nx = 1") == "     1\tif x:\n     2\telse:"


def test_edit_most_similar_takes_the_quote_as_given_and_the_first_best_run():
    # Indentation and every other character of the quote count; only line breaks around it go.
    quote = "    return total\n"
    assert most_similar("return total\n    return totals\n", quote) == "     2\t    return totals"
    assert most_similar("size = MAX\nsize = MA\n", "size = MAX") == "     1\tsize = MAX"
    # Exactly MIN_SIMILARITY (here 0.5) is close enough; of equally close runs, the first.
    assert most_similar("total = sum(xs)\n", "total") == "     1\ttotal = sum(xs)"
    two = "total = sum(xs)\ntotal = sum(ys)\n"
    assert most_similar(two, "total = sum(zs)") == "     1\ttotal = sum(xs)"
    # The same letters in another order are not alike (a cheap upper bound is not the score).
    assert most_similar("pots\n", "stop") is None
    # A long quote is compared character by character, common characters included.
    right = "WEIGHTS = [" + ", ".join(["0"] * 80) + "]"
    wrong = right.replace("0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0", "0, " * 15 + "1", 4)
    assert len(wrong) > 200 and wrong.count("1") == 4
    assert most_similar(f"import math\n{right}\n", wrong) == f"     2\t{right}"


def test_edit_replace_once_with_nothing_close_says_to_read_the_file():
    with pytest.raises(EditError) as caught:
        replace_once(APP, "class Database(Connection):", "x", shown="app.py")
    assert "old_string was not found in app.py" in str(caught.value)
    assert "read the file" in str(caught.value).lower()
    assert "\t" not in str(caught.value)


def test_edit_replace_once_with_several_matches_lists_their_lines_and_suggests_a_fix():
    with pytest.raises(EditError) as caught:
        replace_once(APP, "(name)", "(who)", shown="app.py")
    message = str(caught.value)
    assert "old_string occurs 2 times in app.py (lines 1, 5)" in message
    assert "replace_all" in message
    # Lines are counted from the file's first line, even when it is empty.
    with pytest.raises(EditError) as caught:
        replace_once("\nx = 1\nx = 1\n", "x = 1", "x = 2", shown="a.py")
    assert "old_string occurs 2 times in a.py (lines 2, 3)" in str(caught.value)
    # Every match is counted; ten line numbers at most, then "…".
    for count, lines in [(3, "1, 2, 3"), (10, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10")]:
        with pytest.raises(EditError) as caught:
            replace_once("x = 1\n" * count, "x = 1", "x = 2", shown="a.py")
        assert f"old_string occurs {count} times in a.py (lines {lines})" in str(caught.value)
    with pytest.raises(EditError) as caught:
        replace_once("x = 1\n" * 11, "x = 1", "x = 2", shown="a.py")
    ten = ", ".join(str(n) for n in range(1, 11))
    assert f"old_string occurs 11 times in a.py (lines {ten}, …)" in str(caught.value)


def test_edit_replace_once_with_replace_all_replaces_every_match_and_counts_them():
    after, count = replace_once(APP, '"Ada"', '"Grace"', replace_all=True)
    assert count == 2
    assert after == APP.replace('"Ada"', '"Grace"')


LINE = st.text(st.characters(blacklist_characters="\r\n", codec="utf-8"), max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(
    lines=st.lists(LINE, min_size=1, max_size=8),
    final_newline=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    span=st.tuples(st.integers(0, 200), st.integers(1, 40)),
    new=st.text(st.characters(blacklist_characters="\r", codec="utf-8"), max_size=20),
)
@example(lines=["0"], final_newline=False, newline="\r\n", span=(0, 1), new="\n")
def test_edit_replace_once_is_str_replace_once_in_the_files_own_line_endings(
    lines, final_newline, newline, span, new
):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    start = span[0] % max(1, len(text))
    old = text[start : start + span[1]]
    assume(old and old != new and len(find_all(text, old)) == 1)
    on_disk = text.replace("\n", newline)
    after, count = replace_once(on_disk, old, new)  # the model writes "\n", as read shows it
    assert count == 1
    # A file without a single line break has no line ending of its own: new lines get "\n".
    ending = newline if "\n" in text else "\n"
    assert after == text.replace(old, new, 1).replace("\n", ending)


def test_edit_show_diff_is_a_unified_diff_named_like_git_and_capped():
    diff = show_diff("a\nb\nc\n", "a\nB\nc\n", "src/x.py")
    assert diff == "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"
    before = "".join(f"line {n}\n" for n in range(100))
    long = show_diff(before, before.upper(), "big.txt", max_lines=10)
    assert len(long.split("\n")) == 11
    assert long.split("\n")[-1] == "… (193 more lines of diff)"
    assert show_diff("a\nb\nc\n", "a\nB\nc\n", "src/x.py", max_lines=7) == diff  # not longer


# ---------------------------------------------------------------- the edit tool


async def test_edit_tool_changes_the_file_and_answers_with_the_diff(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    output = await read_then_edit(
        tmp_path, "app.py", old_string='print("goodbye", name)', new_string='print("bye", name)'
    )
    assert not output.is_error, output.content
    assert output.content.startswith("edited app.py (1 replacement)\n--- a/app.py\n+++ b/app.py")
    assert '-    print("goodbye", name)\n+    print("bye", name)' in output.content
    assert (tmp_path / "app.py").read_text() == APP.replace("goodbye", "bye")


async def test_edit_tool_refuses_a_file_the_model_has_not_read(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    _, edit = tools(tmp_path)
    output = await call(edit, path="app.py", old_string="Ada", new_string="Bob", replace_all=True)
    assert output.is_error
    assert "read app.py before editing it" in output.content
    assert (tmp_path / "app.py").read_text() == APP


async def test_edit_tool_without_a_shared_tracker_has_read_nothing(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    edit = EditTool(tmp_path)  # a tracker of its own: no read went through it
    output = await call(edit, path="app.py", old_string="Ada", new_string="Bob", replace_all=True)
    assert output.is_error
    assert "read app.py before editing it" in output.content
    assert (tmp_path / "app.py").read_text() == APP


async def test_edit_tool_refuses_a_file_changed_on_disk_since_the_read(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    read, edit = tools(tmp_path)
    await call(read, path="app.py")
    app.write_text(APP + "# saved by the user in their editor\n")
    output = await call(edit, path="app.py", old_string="hello", new_string="hi")
    assert output.is_error
    assert "app.py has changed on disk since it was last read" in output.content
    assert "read it again before editing it" in output.content
    assert app.read_text().endswith("# saved by the user in their editor\n")


async def test_edit_tool_allows_consecutive_edits_without_reading_again(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    read, edit = tools(tmp_path)
    await call(read, path="app.py")
    first = await call(edit, path="app.py", old_string="hello", new_string="hi")
    second = await call(edit, path="app.py", old_string="goodbye", new_string="bye")
    assert not first.is_error and not second.is_error, second.content
    assert (tmp_path / "app.py").read_text() == APP.replace("hello", "hi").replace("goodbye", "bye")


async def test_edit_tool_refuses_old_string_equal_to_new_string(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    output = await read_then_edit(tmp_path, "app.py", old_string="main", new_string="main")
    assert output.is_error
    assert "old_string and new_string are the same" in output.content


async def test_edit_tool_leaves_the_file_alone_when_the_match_is_not_unique(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    output = await read_then_edit(tmp_path, "app.py", old_string='"Ada"', new_string='"Bob"')
    assert output.is_error
    assert "old_string occurs 2 times in app.py (lines 10, 11)" in output.content
    assert (tmp_path / "app.py").read_text() == APP


async def test_edit_tool_keeps_crlf_endings_the_bom_and_a_missing_final_newline(tmp_path):
    data = codecs.BOM_UTF8 + b"[core]\r\n\tname = old\r\n\tcolour = auto"
    (tmp_path / "settings.ini").write_bytes(data)
    output = await read_then_edit(
        tmp_path,
        "settings.ini",
        old_string="\tname = old\n\tcolour = auto",
        new_string="\tname = new\n\tcolour = never",
    )
    assert not output.is_error, output.content
    expected = codecs.BOM_UTF8 + b"[core]\r\n\tname = new\r\n\tcolour = never"
    assert (tmp_path / "settings.ini").read_bytes() == expected
    assert "\r" not in output.content
    assert output.content.endswith(
        "@@ -1,3 +1,3 @@\n [core]\n-\tname = old\n-\tcolour = auto\n"
        "+\tname = new\n+\tcolour = never"
    )


async def test_edit_tool_keeps_a_final_newline_and_the_permission_bits(tmp_path):
    script = tmp_path / "build.sh"
    script.write_bytes(b"#!/bin/sh\nmake all\n")
    script.chmod(0o755)
    output = await read_then_edit(tmp_path, "build.sh", old_string="make all", new_string="make")
    assert not output.is_error, output.content
    assert script.read_bytes() == b"#!/bin/sh\nmake\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


async def test_edit_tool_refuses_a_file_that_is_not_utf8(tmp_path):
    data = b"# coding: latin-1\ncaf\xe9 = 1\n"
    (tmp_path / "legacy.py").write_bytes(data)
    _, edit = tools(tmp_path)
    edit.files.saw(tmp_path / "legacy.py")  # as if read: the check here is edit's own
    output = await call(edit, path="legacy.py", old_string="1", new_string="2")
    assert output.is_error
    assert "legacy.py is not UTF-8 text" in output.content
    assert "line 2" in output.content and "0xe9" in output.content  # where, and which byte
    assert (tmp_path / "legacy.py").read_bytes() == data


async def test_edit_tool_says_to_use_write_for_a_file_that_does_not_exist(tmp_path):
    _, edit = tools(tmp_path)
    output = await call(edit, path="new.py", old_string="a", new_string="b")
    assert output.is_error
    assert "new.py was not found" in output.content
    assert "use write" in output.content
    assert not (tmp_path / "new.py").exists()
    (tmp_path / "src").mkdir()
    os.mkfifo(tmp_path / "pipe")
    for path, what in [("src", "src is a directory"), ("pipe", "pipe is not a regular file")]:
        output = await call(edit, path=path, old_string="a", new_string="b")
        assert output.is_error and what in output.content, output.content
        assert "was not found" not in output.content


async def test_edit_tool_keeps_the_file_when_the_disk_is_full(tmp_path, monkeypatch):
    (tmp_path / "app.py").write_text(APP)
    read, edit = tools(tmp_path)
    await call(read, path="app.py")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full_disk)
    output = await call(edit, path="app.py", old_string="hello", new_string="hi")
    assert output.is_error
    assert "No space left on device" in output.content
    assert (tmp_path / "app.py").read_text() == APP
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.py"]


# ---------------------------------------------------------------- with an agent


def use(id: str, name: str, **arguments: object) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(id=id, name=name, arguments=arguments)])


def results(agent: SimpleAgent) -> list[ToolResultMessage]:
    return [message for message in agent.history if isinstance(message, ToolResultMessage)]


async def test_edit_an_agent_reads_then_edits_and_the_history_holds_the_diff(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    read, edit = tools(tmp_path)
    provider = MockProvider(
        [
            use("r1", "read", path="app.py"),
            use("e1", "edit", path="app.py", old_string='"hello"', new_string='"hi"'),
            "Greeting shortened.",
        ]
    )
    agent = SimpleAgent(provider, ToolSet([read, edit]))
    result = await agent.run("Make the greeting shorter.")
    assert result.text == "Greeting shortened."
    assert (tmp_path / "app.py").read_text() == APP.replace('"hello"', '"hi"')
    edited = results(agent)[1]
    assert edited.tool_call_id == "e1" and not edited.is_error
    before, after = APP.splitlines()[1], APP.splitlines()[1].replace('"hello"', '"hi"')
    assert f"\n-{before}\n+{after}\n" in edited.content
    assert edited.content.endswith(show_diff(APP, APP.replace('"hello"', '"hi"'), "app.py"))


async def test_edit_an_agent_that_edits_before_reading_is_told_to_read_and_recovers(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    read, edit = tools(tmp_path)
    change = {"old_string": "part(", "new_string": "farewell(", "replace_all": True}
    provider = MockProvider(
        [
            use("e1", "edit", path="app.py", **change),
            use("r1", "read", path="app.py"),
            use("e2", "edit", path="app.py", **change),
            "Renamed.",
        ]
    )
    agent = SimpleAgent(provider, ToolSet([read, edit]))
    await agent.run("Rename part to farewell.")
    first, _, second = results(agent)
    assert first.is_error and "read app.py before editing it" in first.content
    assert not second.is_error and second.content.startswith("edited app.py (2 replacements)")
    assert (tmp_path / "app.py").read_text() == APP.replace("part(", "farewell(")


async def test_edit_tool_turns_names_the_system_rejects_into_error_results(tmp_path):
    _, edit = tools(tmp_path)
    for path in ["x" * 300, "bad\x00name.py"]:
        output = await call(edit, path=path, old_string="a", new_string="b")
        assert output.is_error, path
