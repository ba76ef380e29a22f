"""ch09b · apply_patch against Codex, the reference for the V4A patch format.

Each case is written here (none is copied) from a behaviour of Codex's ``apply_patch``, read in
``openai/codex``: the parser and its unit tests (``codex-rs/apply-patch/src/parser.rs``), the
matcher (``src/seek_sequence.rs``), how an update rewrites a file (``src/lib.rs``,
``src/text_file.rs``) and the scenario fixtures (``codex-rs/apply-patch/tests/fixtures/
scenarios/NNN_name``). ``codex`` on each case names the behaviour it checks.

``AGREES`` are cases where claw must do what Codex does: the same files afterwards, or a
refusal where Codex refuses. ``DIFFERS`` are claw's deliberate differences, each listed, with
its reason, on the chapter 9b page: the test asserts what claw does, that Codex does otherwise
(so a difference that stops being one fails here), and that the page lists it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from claw.tools.patch import ApplyPatchTool
from claw.types import ToolOutput

BOOK = Path(__file__).resolve().parents[1] / "book" / "ch09b-apply-patch.md"


@dataclass(frozen=True)
class Case:
    """Files before, a patch, and the files after (``None``: the file is gone) or a refusal."""

    name: str
    codex: str
    patch: str
    before: dict[str, str | bytes] = field(default_factory=dict)
    after: dict[str, str | bytes | None] | None = None  # None: the patch is refused


@dataclass(frozen=True)
class Difference:
    """A case where claw deliberately does not do what Codex does."""

    case: Case
    codex_after: dict[str, str | bytes | None] | None  # what Codex leaves (None: refuses)
    page: str  # the words the ch09b page uses to list it


def p(*lines: str) -> str:
    """A patch from its lines, ending with a newline."""
    return "\n".join(lines) + "\n"


AGREES = [
    Case("add a file", "scenario 001_add_file",
         p("*** Begin Patch", "*** Add File: docs/todo.md", "+# Todo", "+- tests", "*** End Patch"),
         after={"docs/todo.md": "# Todo\n- tests\n"}),
    Case("add, delete and update in one patch", "scenario 002_multiple_operations",
         p("*** Begin Patch", "*** Add File: pkg/sub/fresh.txt", "+fresh",
           "*** Delete File: stale.txt", "*** Update File: keep.txt", "@@", " one", "-two",
           "+TWO", "*** End Patch"),
         before={"stale.txt": "old\n", "keep.txt": "one\ntwo\n"},
         after={"pkg/sub/fresh.txt": "fresh\n", "stale.txt": None, "keep.txt": "one\nTWO\n"}),
    Case("two chunks in one file, in order", "scenario 003_multiple_chunks",
         p("*** Begin Patch", "*** Update File: n.txt", "@@", " a", "-b", "+B", "@@", " c",
           "-d", "+D", "*** End Patch"),
         before={"n.txt": "a\nb\nc\nd\n"}, after={"n.txt": "a\nB\nc\nD\n"}),
    Case("move into a folder that does not exist yet", "scenario 004_move_to_new_directory",
         p("*** Begin Patch", "*** Update File: src/a.py", "*** Move to: lib/deep/b.py", "@@",
           "-x = 1", "+x = 2", "*** End Patch"),
         before={"src/a.py": "x = 1\n", "src/other.py": "y\n"},
         after={"src/a.py": None, "lib/deep/b.py": "x = 2\n", "src/other.py": "y\n"}),
    Case("a patch with no sections is refused", "scenario 005_rejects_empty_patch",
         p("*** Begin Patch", "*** End Patch"), before={"f.txt": "same\n"}),
    Case("a chunk whose lines are not in the file is refused",
         "scenario 006_rejects_missing_context",
         p("*** Begin Patch", "*** Update File: f.txt", "@@", "-not there", "+new",
           "*** End Patch"), before={"f.txt": "here\n"}),
    Case("deleting a missing file is refused", "scenario 007_rejects_missing_file_delete",
         p("*** Begin Patch", "*** Delete File: ghost.txt", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("an update with no chunk is refused", "scenario 008_rejects_empty_update_hunk",
         p("*** Begin Patch", "*** Update File: f.txt", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("updating a missing file is refused", "scenario 009_requires_existing_file_for_update",
         p("*** Begin Patch", "*** Update File: ghost.txt", "@@", "-a", "+b", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("deleting a folder is refused", "scenario 012_delete_directory_fails",
         p("*** Begin Patch", "*** Delete File: folder", "*** End Patch"),
         before={"folder/inside.txt": "kept\n"}),
    Case("an unknown header is refused", "scenario 013_rejects_invalid_hunk_header",
         p("*** Begin Patch", "*** Rename File: f.txt", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("a chunk that only adds, with no anchor, goes at the end",
         "scenario 016_pure_addition_update_chunk",
         p("*** Begin Patch", "*** Update File: log.txt", "@@", "+third", "+fourth",
           "*** End Patch"),
         before={"log.txt": "first\nsecond\n"},
         after={"log.txt": "first\nsecond\nthird\nfourth\n"}),
    Case("a header padded with spaces", "scenario 017_whitespace_padded_hunk_header",
         p("*** Begin Patch", "   *** Update File: f.txt", "@@", "-old", "+new", "*** End Patch"),
         before={"f.txt": "old\n"}, after={"f.txt": "new\n"}),
    Case("Begin and End padded with spaces", "scenario 018_whitespace_padded_patch_markers",
         p("  *** Begin Patch", "*** Update File: f.txt", "@@", "-old", "+new", "*** End Patch  "),
         before={"f.txt": "old\n"}, after={"f.txt": "new\n"}),
    Case("End Patch indented after a chunk", "scenario 020_whitespace_padded_patch_marker_lines",
         p("*** Begin Patch ", "*** Update File: f.txt", "@@", "-old", "+new", " *** End Patch"),
         before={"f.txt": "old\n"}, after={"f.txt": "new\n"}),
    Case("lines that are not ASCII", "scenario 019_unicode_simple",
         p("*** Begin Patch", "*** Update File: u.txt", "@@", " Grüße", "-naïve café", "+café ✓",
           "*** End Patch"),
         before={"u.txt": "Grüße\nnaïve café\n"}, after={"u.txt": "Grüße\ncafé ✓\n"}),
    Case("delete a file, keep its neighbour", "scenario 020_delete_file_success",
         p("*** Begin Patch", "*** Delete File: old.txt", "*** End Patch"),
         before={"old.txt": "bye\n", "new.txt": "hi\n"},
         after={"old.txt": None, "new.txt": "hi\n"}),
    Case("a chunk that only removes", "scenario 021_update_file_deletion_only",
         p("*** Begin Patch", "*** Update File: l.txt", "@@", " keep", "-drop", " also",
           "*** End Patch"),
         before={"l.txt": "keep\ndrop\nalso\n"}, after={"l.txt": "keep\nalso\n"}),
    Case("End of File puts the chunk at the file's end",
         "scenario 022_update_file_end_of_file_marker",
         p("*** Begin Patch", "*** Update File: t.txt", "@@", " x", "-y", "+Y", "*** End of File",
           "*** End Patch"),
         before={"t.txt": "x\ny\nx\ny\n"}, after={"t.txt": "x\ny\nx\nY\n"}),
    Case("the first chunk may start without @@", "parser.rs test_parse_patch (no @@ first chunk)",
         p("*** Begin Patch", "*** Update File: m.py", " import os", "+import re",
           "*** End Patch"),
         before={"m.py": "import os\n"}, after={"m.py": "import os\nimport re\n"}),
    Case("@@ names a line to find first", "parser.rs test_parse_patch (@@ def f():)",
         p("*** Begin Patch", "*** Update File: m.py", "@@ def g():", "-    pass",
           "+    return 2", "*** End Patch"),
         before={"m.py": "def f():\n    pass\n\ndef g():\n    pass\n"},
         after={"m.py": "def f():\n    pass\n\ndef g():\n    return 2\n"}),
    Case("an update followed by an add", "parser.rs test_parse_patch (update then add)",
         p("*** Begin Patch", "*** Update File: a.txt", "@@", "+line", "*** Add File: b.txt",
           "+content", "*** End Patch"),
         before={"a.txt": "start\n"}, after={"a.txt": "start\nline\n", "b.txt": "content\n"}),
    Case("an empty line inside a chunk is an empty context line",
         "parser.rs test_update_file_chunk (empty line)",
         p("*** Begin Patch", "*** Update File: s.txt", "@@", " a", "", "-b", "+B",
           "*** End Patch"),
         before={"s.txt": "a\n\nb\n"}, after={"s.txt": "a\n\nB\n"}),
    Case("@@ then End of File with no lines is refused",
         "parser.rs test_update_file_chunk (no lines)",
         p("*** Begin Patch", "*** Update File: f.txt", "@@", "*** End of File", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("a line with no ' ', '-' or '+' is refused", "parser.rs test_update_file_chunk ('bad')",
         p("*** Begin Patch", "*** Update File: f.txt", "@@", "bad", "*** End Patch"),
         before={"f.txt": "kept\n"}),
    Case("no Begin Patch line is refused", "parser.rs test_parse_patch ('bad')",
         p("bad"), before={"f.txt": "kept\n"}),
    Case("no End Patch line is refused", "parser.rs test_parse_patch (Begin then 'bad')",
         p("*** Begin Patch", "bad"), before={"f.txt": "kept\n"}),
    Case("a blank line before End Patch", "parser.rs blank lines; lib.rs retry without trailing ''",
         p("*** Begin Patch", "*** Update File: f.txt", "@@", "-old", "+new", "", "*** End Patch"),
         before={"f.txt": "old\nrest\n"}, after={"f.txt": "new\nrest\n"}),
    Case("a blank line after End of File", "parser.rs parse_one_hunk skips blank lines",
         p("*** Begin Patch", "*** Update File: f.txt", "@@", "-end", "+END", "*** End of File",
           "", "*** Update File: g.txt", "@@", "-g", "+G", "*** End Patch"),
         before={"f.txt": "a\nend\n", "g.txt": "g\n"},
         after={"f.txt": "a\nEND\n", "g.txt": "G\n"}),
    Case("trailing whitespace is forgiven when finding a chunk",
         "seek_sequence.rs test_rstrip_match_ignores_trailing_whitespace",
         p("*** Begin Patch", "*** Update File: w.txt", "@@", " foo", "-bar", "+baz",
           "*** End Patch"),
         before={"w.txt": "foo   \nbar\t\t\n"}, after={"w.txt": "foo   \nbaz\n"}),
    Case("lines outside the chunks keep their own line ends (mixed file)",
         "text_file.rs SourceFile (each line keeps its ending)",
         p("*** Begin Patch", "*** Update File: mixed.txt", "@@", "-two", "+TWO", "*** End Patch"),
         before={"mixed.txt": b"one\r\ntwo\r\nthree\nfour\r\n"},
         after={"mixed.txt": b"one\r\nTWO\r\nthree\nfour\r\n"}),
    Case("a CRLF file stays CRLF", "text_file.rs SourceFile (preferred ending)",
         p("*** Begin Patch", "*** Update File: w.txt", "@@", " a", "-b", "+B", "+C",
           "*** End Patch"),
         before={"w.txt": b"a\r\nb\r\n"}, after={"w.txt": b"a\r\nB\r\nC\r\n"}),
]

DIFFERS = [
    Difference(
        Case("blank lines between chunks separate them",
             "parser.rs parse_update_file_chunk (an empty line is context)",
             p("*** Begin Patch", "*** Update File: n.txt", "@@", "-a", "+A", "", "", "@@", "-c",
               "+C", "*** End Patch"),
             before={"n.txt": "a\nb\nc\n"}, after={"n.txt": "A\nb\nC\n"}),
        codex_after=None, page="blank lines between chunks"),
    Difference(
        Case("a failure after a success leaves nothing changed",
             "scenario 015_failure_after_partial_success_leaves_changes",
             p("*** Begin Patch", "*** Add File: made.txt", "+made", "*** Delete File: ghost.txt",
               "*** End Patch")),
        codex_after={"made.txt": "made\n"}, page="all or nothing"),
    Difference(
        Case("Add over an existing file is refused", "scenario 011_add_overwrites_existing_file",
             p("*** Begin Patch", "*** Add File: d.txt", "+new", "*** End Patch"),
             before={"d.txt": "old\n"}),
        codex_after={"d.txt": "new\n"}, page="no Add over an existing file"),
    Difference(
        Case("Move onto an existing file is refused",
             "scenario 010_move_overwrites_existing_destination",
             p("*** Begin Patch", "*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a",
               "+A", "*** End Patch"),
             before={"a.txt": "a\n", "b.txt": "b\n"}),
        codex_after={"a.txt": None, "b.txt": "A\n"}, page="no Move onto an existing file"),
    Difference(
        Case("a missing final newline stays missing",
             "scenario 014_update_file_appends_trailing_newline",
             p("*** Begin Patch", "*** Update File: n.txt", "@@", "-last", "+LAST",
               "*** End Patch"),
             before={"n.txt": "first\nlast"}, after={"n.txt": "first\nLAST"}),
        codex_after={"n.txt": "first\nLAST\n"}, page="a missing final newline stays missing"),
    Difference(
        Case("absolute paths are refused",
             "parser.rs test_parse_patch_accepts_relative_and_absolute_hunk_paths",
             p("*** Begin Patch", "*** Add File: /tmp/claw-codex-absolute.txt", "+x",
               "*** End Patch")),
        codex_after={"/tmp/claw-codex-absolute.txt": "x\n"}, page="absolute paths"),
    Difference(
        Case("a heredoc around the patch is refused", "parser.rs test_parse_patch_lenient",
             p("<<'EOF'", "*** Begin Patch", "*** Add File: h.txt", "+x", "*** End Patch", "EOF")),
        codex_after={"h.txt": "x\n"}, page="heredoc"),
    Difference(
        Case("indentation is not forgiven", "seek_sequence.rs test_trim_match_ignores_leading_and_"
             "trailing_whitespace",
             p("*** Begin Patch", "*** Update File: i.py", "@@", "-return 1", "+return 2",
               "*** End Patch"),
             before={"i.py": "def f():\n    return 1\n"}),
        codex_after={"i.py": "def f():\nreturn 2\n"}, page="indentation"),
    Difference(
        Case("typographic punctuation is not forgiven", "seek_sequence.rs (normalise pass)",
             p("*** Begin Patch", "*** Update File: q.md", "@@", '-say "hi" - now', "+said",
               "*** End Patch"),
             before={"q.md": "say \u201chi\u201d \u2013 now\n"}),
        codex_after={"q.md": "said\n"}, page="typographic"),
    Difference(
        Case("a chunk that only adds goes after its @@ line", "lib.rs compute_replacements "
             "(pure addition at the end)",
             p("*** Begin Patch", "*** Update File: c.py", "@@ def a():", "+    # a comment",
               "*** End Patch"),
             before={"c.py": "def a():\n    pass\ndef b():\n    pass\n"},
             after={"c.py": "def a():\n    # a comment\n    pass\ndef b():\n    pass\n"}),
        codex_after={"c.py": "def a():\n    pass\ndef b():\n    pass\n    # a comment\n"},
        page="after its `@@` line"),
    Difference(
        Case("a chunk that changes nothing is refused", "parser.rs (context-only chunk parses)",
             p("*** Begin Patch", "*** Update File: z.txt", "@@", " same", "*** End Patch"),
             before={"z.txt": "same\n"}),
        codex_after={"z.txt": "same\n"}, page="changes nothing"),
    Difference(
        Case("a Move with no chunk renames", "parser.rs test_parse_patch (empty update hunk)",
             p("*** Begin Patch", "*** Update File: r.txt", "*** Move to: s.txt", "*** End Patch"),
             before={"r.txt": "r\n"}, after={"r.txt": None, "s.txt": "r\n"}),
        codex_after=None, page="rename"),
    Difference(
        Case("an added line takes the ending most lines use", "text_file.rs preferred_ending "
             "(the first line's)",
             p("*** Begin Patch", "*** Update File: e.txt", "@@", " c", "+d", "*** End Patch"),
             before={"e.txt": b"a\nb\r\nc\r\n"}, after={"e.txt": b"a\nb\r\nc\r\nd\r\n"}),
        codex_after={"e.txt": b"a\nb\r\nc\nd\n"}, page="the ending most lines use"),
    Difference(
        Case("a context line keeps its own ending", "text_file.rs apply_replacements "
             "(a chunk's range is rewritten)",
             p("*** Begin Patch", "*** Update File: k.txt", "@@", " a", "-b", "+B",
               "*** End Patch"),
             before={"k.txt": b"a\r\nb\nx\n"}, after={"k.txt": b"a\r\nB\nx\n"}),
        codex_after={"k.txt": b"a\r\nB\r\nx\n"}, page="context lines keep their own"),
    Difference(
        Case("a padded marker ends a chunk", "parser.rs parse_update_file_chunk (' ' = context)",
             p("*** Begin Patch", "*** Update File: a.txt", "@@", "-a", "+A",
               " *** Update File: b.txt", "@@", "-b", "+B", "*** End Patch"),
             before={"a.txt": "a\n", "b.txt": "b\n"}, after={"a.txt": "A\n", "b.txt": "B\n"}),
        codex_after=None, page="padded with spaces anywhere"),
]


def lay_out(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def state(root: Path, names: set[str]) -> dict[str, str | bytes | None]:
    found: dict[str, str | bytes | None] = {}
    for name in sorted(names):
        path = root / name if not name.startswith("/") else Path(name)
        found[name] = path.read_bytes() if path.is_file() else None
    return found


def expected(root: Path, files: dict[str, str | bytes | None]) -> dict[str, str | bytes | None]:
    return {
        name: content.encode() if isinstance(content, str) else content
        for name, content in sorted(files.items())
    }


async def run(case: Case, root: Path) -> tuple[ToolOutput, dict[str, str | bytes | None]]:
    lay_out(root, case.before)
    before = expected(root, dict(case.before))
    output = await ApplyPatchTool(root).run({"patch": case.patch})
    assert isinstance(output, ToolOutput)
    names = set(case.before) | set((case.after or {}).keys())
    now = state(root, names)
    if case.after is None:  # refused: an error, and every file as it was
        assert output.is_error, output.content
        assert now == {**{name: None for name in names}, **before}
    return output, now


@pytest.mark.parametrize("case", AGREES, ids=[case.name for case in AGREES])
async def test_patch_codex_claw_agrees_with_codex(case: Case, tmp_path: Path) -> None:
    output, now = await run(case, tmp_path)
    if case.after is not None:
        assert not output.is_error, f"{case.codex}: {output.content}"
        assert now == expected(tmp_path, case.after), case.codex


@pytest.mark.parametrize("difference", DIFFERS, ids=[d.case.name for d in DIFFERS])
async def test_patch_codex_deliberate_differences_hold(
    difference: Difference, tmp_path: Path
) -> None:
    case = difference.case
    output, now = await run(case, tmp_path)
    if case.after is not None:
        assert not output.is_error, output.content
        assert now == expected(tmp_path, case.after)
    codex = difference.codex_after
    names = set(now) | set(codex or {})
    before = expected(tmp_path, dict(case.before))
    codex_files = expected(tmp_path, codex) if codex is not None else before
    codex_outcome = (codex is None, {name: codex_files.get(name) for name in names})
    claw_outcome = (output.is_error, {name: now.get(name) for name in names})
    assert claw_outcome != codex_outcome, "claw does what Codex does: no longer a difference"
    assert not Path("/tmp/claw-codex-absolute.txt").exists()
    # That the page lists each difference is checked by tests/tooling/test_book_lists.py: a
    # chapter's tests run where the book is not (a graded submission's scratch copy).
