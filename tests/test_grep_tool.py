"""ch11 · grep: search file contents; `path:line: text`, context, caps, binary and ignored files."""

import re
from pathlib import Path

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_tree import (
    FILES,
    emptied,
    make_project,
    no_personal_git_config,  # noqa: F401
    shared_project,  # noqa: F401
)

import claw.tools.grep as grep_module
from claw.tools.grep import (
    GrepTool,
    Line,
    find_ripgrep,
    literal_of,
    screen_of,
    search_file,
    search_lines,
)
from claw.types import ToolOutput


async def grep(root: Path, **arguments: object) -> ToolOutput:
    output = await GrepTool(root, ripgrep=False).run(arguments)
    assert isinstance(output, ToolOutput)
    return output


async def test_grep_shows_each_matching_line_as_path_line_text(project):
    output = await grep(project, pattern=r"def price_of")
    assert not output.is_error
    assert output.content == "src/shop/prices.py:4: def price_of(item):"


async def test_grep_searches_every_visible_file_and_skips_ignored_binary_and_venvs(project):
    output = await grep(project, pattern="price_of")
    files = sorted({line.split(":")[0] for line in output.content.splitlines()})
    assert files == [
        "logs/keep.log",
        "src/shop/cart.py",
        "src/shop/debug.log",
        "src/shop/prices.py",
        "tests/test_prices.py",
    ], "not .git, env/, node_modules/, build/, .env, server.log, __pycache__ or logo.png"


async def test_grep_context_lines_use_dashes_and_groups_are_separated(tmp_path):
    (tmp_path / "a.py").write_text("one\ntwo\nhit\nfour\nfive\nsix\nseven\nhit\nnine\n")
    output = await grep(tmp_path, pattern="hit", before=1, after=1)
    assert output.content.splitlines() == [
        "a.py-2- two",
        "a.py:3: hit",
        "a.py-4- four",
        "--",
        "a.py-7- seven",
        "a.py:8: hit",
        "a.py-9- nine",
    ]
    after_only = await grep(tmp_path, pattern="hit", after=1)
    assert after_only.content.splitlines() == [
        "a.py:3: hit",
        "a.py-4- four",
        "--",
        "a.py:8: hit",
        "a.py-9- nine",
    ], "after alone is context too: the groups are separated"
    before_only = await grep(tmp_path, pattern="hit", before=2)
    assert before_only.content.splitlines() == [
        "a.py-1- one",
        "a.py-2- two",
        "a.py:3: hit",
        "--",
        "a.py-6- six",
        "a.py-7- seven",
        "a.py:8: hit",
    ]


def test_grep_search_lines_overlapping_context_shows_every_line_once():
    lines = ["a", "x", "b", "x", "c", "d", "e"]
    found = list(search_lines(lines, re.compile("x"), before=2, after=2))
    assert found == [
        Line(1, "a", False),
        Line(2, "x", True),
        Line(3, "b", False),
        Line(4, "x", True),
        Line(5, "c", False),
        Line(6, "d", False),
    ]


async def test_grep_ignore_case_and_a_glob_on_names_or_on_paths(project):
    loud = await grep(project, pattern="CART", ignore_case=True, glob="*.py")
    assert {line.split(":")[0] for line in loud.content.splitlines()} == {
        "src/shop/cart.py",
        "tests/test_cart.py",
    }
    quiet = await grep(project, pattern="CART")
    assert "no matches" in quiet.content and not quiet.is_error
    regex = await grep(project, pattern="CAR[T]")
    assert "no matches" in regex.content, "without ignore_case, case matters for a regex too"
    tests_only = await grep(project, pattern="price_of", glob="tests/**/*.py")
    assert {line.split(":")[0] for line in tests_only.content.splitlines()} == {
        "tests/test_prices.py"
    }


async def test_grep_a_nul_in_the_first_8_kib_makes_a_file_binary_a_later_one_does_not(tmp_path):
    (tmp_path / "early.bin").write_bytes(b"needle\n\x00\n")
    (tmp_path / "late.txt").write_bytes(b"x" * 9000 + b"\nneedle\n\x00\n")
    output = await grep(tmp_path, pattern="needle")
    assert output.content == "late.txt:2: needle"


async def test_grep_caps_the_matches_with_a_note_that_counts_the_rest(tmp_path):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("match\n" * 30)
    output = await GrepTool(tmp_path, max_matches=25, ripgrep=False).run({"pattern": "match"})
    shown, note = output.content.split("\n\n")
    assert len(shown.splitlines()) == 25
    assert shown.splitlines()[-1] == "a.txt:25: match"
    assert "35 more" in note


async def test_grep_bad_regex_is_an_error_result_and_a_missing_path_too(tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    bad = await grep(tmp_path, pattern="(unclosed")
    assert bad.is_error
    assert "(unclosed" in bad.content
    missing = await grep(tmp_path, pattern="x", path="nowhere")
    assert missing.is_error and "not found" in missing.content


async def test_grep_crlf_bom_and_bad_utf8_match_like_plain_text(tmp_path):
    (tmp_path / "win.txt").write_bytes(b"\xef\xbb\xbfstart here\r\nend here\r\n")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 here\n")
    ends = await grep(tmp_path, pattern="here$")
    assert sorted(ends.content.splitlines()) == [
        "latin.txt:1: caf\ufffd here",
        "win.txt:1: start here",
        "win.txt:2: end here",
    ]
    starts = await grep(tmp_path, pattern="^start")
    assert starts.content == "win.txt:1: start here", "the byte-order mark is not text"
    (tmp_path / "mac.txt").write_bytes(b"one\r\nlast here\r")
    last = await grep(tmp_path, pattern="last here$")
    assert last.content == "mac.txt:2: last here", "a \\r at the very end is dropped too"


async def test_grep_a_long_line_is_cut_and_a_single_file_can_be_searched(tmp_path):
    (tmp_path / "min.js").write_text("var a=1;" + "x" * 1000 + "needle\nneedle\n")
    (tmp_path / "other.js").write_text("needle\n")
    tool = GrepTool(tmp_path, max_line_chars=20, ripgrep=False)
    output = await tool.run({"pattern": "needle", "path": "min.js"})
    assert output.content.splitlines() == ["min.js:1: var a=1;xxxxxxxxxxxx…", "min.js:2: needle"]


def test_grep_large_files_are_read_line_by_line_with_the_right_numbers(tmp_path):
    def row(n: int) -> str:
        return f"row {n} " + "." * 90  # about 100 bytes: few lines make a large file

    path = tmp_path / "big.log"
    path.write_text("".join(row(n) + "\n" for n in range(1, 11_001)))  # 1.1 MB: over 1 MiB
    assert path.stat().st_size > 1024 * 1024
    found = search_file(path, re.compile(r"^row 1099(9|8) "))
    assert found == [Line(10998, row(10998), True), Line(10999, row(10999), True)]
    context = search_file(path, re.compile(r"^row 5500 "), before=1, after=2)
    assert context == [
        Line(5499, row(5499), False),
        Line(5500, row(5500), True),
        Line(5501, row(5501), False),
        Line(5502, row(5502), False),
    ]
    odd = tmp_path / "odd.log"
    head = b"\xef\xbb\xbfstart here\r\ncaf\xe9 here\r\nold\rmac here\r\n"
    odd.write_bytes(head + (b"." * 99 + b"\n") * 10_600)  # 1.06 MB: over 1 MiB too
    assert odd.stat().st_size > 1024 * 1024
    assert search_file(odd, re.compile("^start|here$")) == [
        Line(1, "start here", True),  # the byte-order mark is not text
        Line(2, "caf\ufffd here", True),  # a byte that is not UTF-8 becomes U+FFFD
        Line(3, "old\rmac here", True),  # only \n ends a line
    ], "a large file reads like a small one"
    exact = tmp_path / "exact.txt"
    exact.write_bytes(b"x" * (1024 * 1024 - 7) + b"needle\n")  # 1 MiB, one long line
    assert [line.number for line in search_file(exact, re.compile("needle"))] == [1], (
        "a file of exactly 1 MiB is read in one piece: the whole line is searched"
    )


async def test_grep_python_engine_hands_search_file_the_literal_and_screen_and_skips_unreadable(
    tmp_path, monkeypatch
):
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("price_of\n")
    seen = []

    def spy(path, regex, literal=None, before=0, after=0, screen=None):
        seen.append((literal, screen))
        if Path(path).name == "b.txt":
            raise PermissionError(13, "Permission denied", str(path))
        return search_file(path, regex, literal, before, after, screen)

    monkeypatch.setattr(grep_module, "search_file", spy)
    output = await grep(tmp_path, pattern="price_of")
    assert output.content.splitlines() == ["a.txt:1: price_of", "c.txt:1: price_of"], (
        "a file that cannot be read is passed over; the search goes on"
    )
    assert [literal for literal, _ in seen] == [b"price_of"] * 3
    assert all(screen is not None and screen.flags & re.MULTILINE for _, screen in seen)


def test_grep_literal_of_only_for_plain_case_sensitive_patterns():
    assert literal_of("price_of", False) == b"price_of"
    assert literal_of("café", False) == "café".encode()
    assert literal_of("price_of", True) is None
    for pattern in ("a.b", "^x", "x$", "a|b", "a+", r"\d", "f(x)", "[ab]", "a{2}"):
        assert literal_of(pattern, False) is None, pattern


WORDS = st.text(alphabet="abcé \t.*(", min_size=1, max_size=4)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.dictionaries(
        st.sampled_from(["a.txt", "b.py", "src/c.py", "src/d/e.md"]),
        st.lists(st.text(alphabet="abcé .*(\t", max_size=12), max_size=8),
        min_size=1,
    ),
    needle=WORDS,
)
def test_grep_finds_exactly_what_a_brute_force_search_finds(tmp_path, files, needle):
    import asyncio

    root = emptied(tmp_path / "tree")
    for name, lines in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    pattern = re.escape(needle)
    output = asyncio.run(GrepTool(root, ripgrep=False, max_matches=1000).run({"pattern": pattern}))
    expected = sorted(
        f"{name}:{number}: {line}"
        for name, lines in files.items()
        for number, line in enumerate(lines, start=1)
        if needle in line
    )
    got = [] if "no matches" in output.content else output.content.splitlines()
    assert sorted(got) == expected


CASES = [
    {"pattern": "price_of"},
    {"pattern": "(?<=[a-z])e"},  # rg refuses look-behind: the Python engine answers, capped
    {"pattern": r"(?<=_)of\b", "before": 2},
    {"pattern": r"(?<=def )\w+", "after": 1},
    {"pattern": "def", "before": 1},
    {"pattern": r"def \w+\(", "before": 1, "after": 2},
    {"pattern": "CART", "ignore_case": True, "glob": "*.py"},
    {"pattern": "here$"},
    {"pattern": "^start"},
    {"pattern": "caf"},
    {"pattern": "(?<=def )total"},
    {"pattern": "item", "path": "src"},
]


async def test_grep_ripgrep_and_the_python_search_give_identical_results(tmp_path):
    rg = find_ripgrep()
    if rg is None:
        pytest.skip("ripgrep (rg) is not installed: `pip install ripgrep` to compare engines")
    make_project(tmp_path, {**FILES, "win.txt": b"\xef\xbb\xbfstart here\r\nend here\r\n",
                            "latin.txt": b"caf\xe9 here\n"})  # fmt: skip
    fast = GrepTool(tmp_path, max_matches=7, max_line_chars=40)
    slow = GrepTool(tmp_path, max_matches=7, max_line_chars=40, ripgrep=False)
    assert fast.rg is not None
    runs = tmp_path.parent / "rg-runs"
    wrapper = tmp_path.parent / "rg-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho run >> "{runs}"\nexec "{fast.rg}" "$@"\n')
    wrapper.chmod(0o755)
    fast.rg = str(wrapper)
    for arguments in CASES:
        assert (await fast.run(arguments)) == (await slow.run(arguments)), arguments
    assert runs.exists(), "with rg installed, rg does the searching"


def test_grep_screen_of_only_when_no_line_can_match_alone_what_the_whole_text_misses():
    assert screen_of("^def x$").flags & re.MULTILINE
    assert screen_of("x", re.IGNORECASE).flags & re.IGNORECASE
    for pattern in ("a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", r"\Ax", r"x\Z"):
        assert screen_of(pattern) is None, pattern


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(st.text(alphabet="ab \t", max_size=6), min_size=1, max_size=10),
    pattern=st.text(alphabet="ab^$.*?|() \\sS", min_size=1, max_size=6).filter(compiles),
    crlf=st.booleans(),
)
def test_grep_any_small_regex_finds_the_lines_re_search_finds(tmp_path, lines, pattern,
                                                              crlf):  # fmt: skip
    import asyncio

    root = emptied(tmp_path / "tree")
    end = "\r\n" if crlf else "\n"
    (root / "f.txt").write_bytes("".join(line + end for line in lines).encode())
    output = asyncio.run(GrepTool(root, ripgrep=False, max_matches=100).run({"pattern": pattern}))
    regex = re.compile(pattern)
    expected = [f"f.txt:{n}: {line}" for n, line in enumerate(lines, 1) if regex.search(line)]
    got = [] if "no matches" in output.content else output.content.splitlines()
    assert got == expected


def test_grep_a_huge_one_line_file_is_searched_in_little_memory(tmp_path):
    import tracemalloc

    path = tmp_path / "bundle.min.js"
    with path.open("w") as file:
        file.write("var needle=1;")
        for _ in range(32):
            file.write("x" * (512 * 1024))  # one line of 16 MiB, as minified code can be
        file.write("\nneedle again\n")
    tracemalloc.start()
    try:
        found = search_file(path, re.compile("needle"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(line.number, line.text[:13]) for line in found] == [
        (1, "var needle=1;"),
        (2, "needle again"),
    ]
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB for a 16 MiB line"


@pytest.mark.timeout(60)  # rg over two batches three times: seconds on a busy machine
async def test_grep_with_ripgrep_installed_rg_answers_without_the_python_engine(
    tmp_path, monkeypatch
):
    if find_ripgrep() is None:
        pytest.skip("ripgrep (rg) is not installed: `pip install ripgrep` to compare engines")
    monkeypatch.setattr(grep_module, "BATCH", 16)  # the 28 files take two rg runs a search
    make_project(tmp_path, {
        "win.txt": b"\xef\xbb\xbfhit on the first line\r\nsecond\r\nthird HIT\r\n",
        "late-nul.txt": b"a" * 9000 + b"\0\nhit after a late NUL\n",
        "x-1-y.txt": "".join(f"{n}:{n}- line {n}\n" for n in range(1, 12)) + "12- hit\n",
        "many.txt": "".join(f"hit {n:05} {'.' * 60}\n" for n in range(1200)),
        **{f"batch/{n:03}.txt": f"hit {n}\n" for n in range(20)},
    })  # fmt: skip
    (tmp_path / "new\nline.txt").write_text("hit in a name with a newline\n")
    (tmp_path / "ends\n").write_text("hit in a name that ends with one\n")
    (tmp_path / "z").write_text("hit in a one-letter name\n")
    (tmp_path / "mark.txt").write_text("first\n\ufeffhit: only a first line loses a BOM\n")
    slow = GrepTool(tmp_path, max_matches=5, ripgrep=False)
    cases = [{"pattern": "hit"}, {"pattern": "hit", "ignore_case": True, "before": 1, "after": 1},
             {"pattern": "^(third|hit)", "glob": "*.txt", "after": 2}]  # fmt: skip
    expected = [await slow.run(arguments) for arguments in cases]

    def python_engine(*_: object) -> None:
        raise AssertionError("rg understands the pattern: the Python engine must not run")

    monkeypatch.setattr(GrepTool, "python_results", python_engine)
    fast = GrepTool(tmp_path, max_matches=5)
    assert fast.rg is not None
    for arguments, want in zip(cases, expected, strict=True):
        assert (await fast.run(arguments)) == want, arguments
