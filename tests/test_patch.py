"""ch09b · apply_patch: parse a Codex-style (V4A) patch; apply it to several files, all or none."""

import difflib
import re
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from claw.agent import Finish, SimpleAgent
from claw.mock import MockProvider
from claw.tools.patch import (
    AddFile,
    ApplyError,
    ApplyPatchTool,
    Chunk,
    Cursor,
    DeleteFile,
    PatchError,
    UpdateFile,
    apply_chunks,
    file_header,
    parse_chunk,
    parse_patch,
    parse_section,
    seek,
)
from claw.tools.read import ReadTool
from claw.tools.tracker import FileTracker
from claw.types import AssistantTurn, ToolCall, ToolOutput, ToolResultMessage, ToolSet

# ---------------------------------------------------------------- a small project to patch

CART = '''"""A shopping cart and the invoice it becomes."""

from shop.money import Money


class Cart:
    """Items a customer means to buy."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Money, int]] = []

    def total(self) -> Money:
        total = Money(0)
        for _, price, quantity in self.items:
            total += price * quantity
        return total


class Invoice:
    """A cart that has been paid for."""

    def __init__(self, cart: Cart) -> None:
        self.items = list(cart.items)

    def total(self) -> Money:
        total = Money(0)
        for _, price, quantity in self.items:
            total += price * quantity
        return total
'''

UTIL = '''"""Small helpers."""


def format_price(cents: int) -> str:
    """A price for people: 1999 is $19.99."""
    return f"${cents / 100}"
'''

LEGACY = '''"""The old checkout, kept until the new one shipped."""

def checkout(cart):
    return cart.total()
'''


def make_project(root: Path) -> Path:
    """A small shop package: cart.py, util.py, legacy.py and a README."""
    files = {
        "src/shop/cart.py": CART,
        "src/shop/util.py": UTIL,
        "src/shop/legacy.py": LEGACY,
        "README.md": "# Shop\n\nA tiny shop.\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


async def apply(tool: ApplyPatchTool, patch: str) -> ToolOutput:
    output = await tool.run({"patch": patch})
    assert isinstance(output, ToolOutput)
    return output


def patch_of(*lines: str) -> str:
    """A patch made of ``lines`` (so that a context line may be a lone space)."""
    return "\n".join(lines) + "\n"


# The patch of the chapter's example: add, update with two chunks (one anchored), move, delete.
SHOP_PATCH = patch_of(
    "*** Begin Patch",
    "*** Add File: src/shop/shipping.py",
    '+"""What delivery costs."""',
    "+",
    "+SHIPPING = 495",
    "*** Update File: src/shop/cart.py",
    "@@",
    ' """A shopping cart and the invoice it becomes."""',
    " ",
    " from shop.money import Money",
    "+from shop.shipping import SHIPPING",
    "@@ class Invoice",
    "         total = Money(0)",
    "         for _, price, quantity in self.items:",
    "             total += price * quantity",
    "-        return total",
    "+        return total + Money(SHIPPING)",
    "*** Update File: src/shop/util.py",
    "*** Move to: src/shop/formatting.py",
    "@@ def format_price",
    '     """A price for people: 1999 is $19.99."""',
    '-    return f"${cents / 100}"',
    '+    return f"${cents / 100:.2f}"',
    "*** Delete File: src/shop/legacy.py",
    "*** End Patch",
)


# ---------------------------------------------------------------- parsing


def test_patch_file_header_reads_the_three_headers_and_nothing_else():
    assert file_header("*** Add File: docs/changes.md", 2) == AddFile("docs/changes.md")
    assert file_header("*** Delete File: src/shop/legacy.py  ", 3) == DeleteFile(
        "src/shop/legacy.py"
    )
    assert file_header("*** Update File:  src/shop/cart.py", 4) == UpdateFile("src/shop/cart.py")
    for line in ("*** Move to: b.py", "*** End Patch", "@@ class Cart", "+*** Add File: x", ""):
        assert file_header(line, 5) is None
    with pytest.raises(PatchError) as caught:
        file_header("*** Update File:", 7)
    assert caught.value.line == 7
    assert str(caught.value) == "line 7: expected a path after '*** Update File:'"


def test_patch_parse_chunk_reads_anchors_and_lines_and_stops_before_what_follows():
    cursor = Cursor(
        [
            "@@ class Invoice",
            "@@ def total",
            "         total = Money(0)",
            "-        return total",
            "+        return total + Money(SHIPPING)",
            "@@ def __init__",
            "-x",
            "+y",
        ]
    )
    assert parse_chunk(cursor) == Chunk(
        ("class Invoice", "def total"),
        (
            (" ", "        total = Money(0)"),
            ("-", "        return total"),
            ("+", "        return total + Money(SHIPPING)"),
        ),
    )
    assert cursor.number == 6  # the next chunk's "@@" is left for the next call
    assert parse_chunk(cursor) == Chunk(("def __init__",), (("-", "x"), ("+", "y")))
    assert cursor.at_end()

    cursor = Cursor(["+VERSION = '1.1'", "*** End of File", "*** Delete File: a.py"])
    assert parse_chunk(cursor) == Chunk((), (("+", "VERSION = '1.1'"),), end_of_file=True)
    assert cursor.peek() == "*** Delete File: a.py"  # a header ends the chunk, untaken

    # The text after "@@" is the anchor, with or without a space; blank lines between "@@"
    # lines only separate them.
    cursor = Cursor(["@@class Invoice", "", "@@ def total", "-a", "+b"])
    assert parse_chunk(cursor) == Chunk(("class Invoice", "def total"), (("-", "a"), ("+", "b")))
    # A context-only chunk is refused at its first line, "*** End of File" or not.
    with pytest.raises(PatchError) as caught:
        parse_chunk(Cursor(["@@", " x = 1", "*** End of File"]))
    assert caught.value.line == 1
    # Any other first character is refused, at its line.
    for line in ("x = 2", "X = 2", "#", "\tx = 2"):
        with pytest.raises(PatchError) as caught:
            parse_chunk(Cursor(["@@", "-a", line]))
        assert caught.value.line == 3


def test_patch_parse_section_reads_the_body_its_header_starts():
    cursor = Cursor(["+# Changes", "+", "+- shipping", "*** Delete File: old.md", "*** End Patch"])
    assert parse_section(cursor, AddFile("CHANGES.md"), 2) == AddFile(
        "CHANGES.md", ("# Changes", "", "- shipping")
    )
    assert parse_section(cursor, DeleteFile("old.md"), 5) == DeleteFile("old.md")
    assert cursor.peek() == "*** Delete File: old.md"  # the caller takes headers

    cursor = Cursor(["*** Move to: src/shop/formatting.py", "@@", "-a", "+b", "*** End Patch"])
    assert parse_section(cursor, UpdateFile("src/shop/util.py"), 9) == UpdateFile(
        "src/shop/util.py", "src/shop/formatting.py", (Chunk((), (("-", "a"), ("+", "b"))),)
    )
    assert cursor.peek() == "*** End Patch"

    # Separating empty lines are skipped, in an Add and after a Move; "@@" in an Add is no '+'.
    cursor = Cursor(["+# Changes", "", "", "*** End Patch"])
    assert parse_section(cursor, AddFile("CHANGES.md"), 2) == AddFile("CHANGES.md", ("# Changes",))
    assert cursor.peek() == "*** End Patch"
    with pytest.raises(PatchError) as caught:
        parse_section(Cursor(["+a", "@@", "+b"]), AddFile("x.md"), 2)
    assert caught.value.line == 2
    cursor = Cursor(["  *** Move to: b.py  ", "", "@@", "-a", "+b"])
    assert parse_section(cursor, UpdateFile("a.py"), 2) == UpdateFile(
        "a.py", "b.py", (Chunk((), (("-", "a"), ("+", "b"))),)
    )
    # A Move without a path is refused at its line.
    with pytest.raises(PatchError) as caught:
        parse_section(Cursor(["*** Move to:  ", "@@", "-a", "+b"]), UpdateFile("a.py"), 2)
    assert str(caught.value) == "line 1: expected a path after '*** Move to:'"


def test_patch_parse_patch_reads_a_multi_file_patch_into_typed_operations_in_order():
    assert parse_patch(SHOP_PATCH) == [
        AddFile("src/shop/shipping.py", ('"""What delivery costs."""', "", "SHIPPING = 495")),
        UpdateFile(
            "src/shop/cart.py",
            None,
            (
                Chunk(
                    (),
                    (
                        (" ", '"""A shopping cart and the invoice it becomes."""'),
                        (" ", ""),
                        (" ", "from shop.money import Money"),
                        ("+", "from shop.shipping import SHIPPING"),
                    ),
                ),
                Chunk(
                    ("class Invoice",),
                    (
                        (" ", "        total = Money(0)"),
                        (" ", "        for _, price, quantity in self.items:"),
                        (" ", "            total += price * quantity"),
                        ("-", "        return total"),
                        ("+", "        return total + Money(SHIPPING)"),
                    ),
                ),
            ),
        ),
        UpdateFile(
            "src/shop/util.py",
            "src/shop/formatting.py",
            (
                Chunk(
                    ("def format_price",),
                    (
                        (" ", '    """A price for people: 1999 is $19.99."""'),
                        ("-", '    return f"${cents / 100}"'),
                        ("+", '    return f"${cents / 100:.2f}"'),
                    ),
                ),
            ),
        ),
        DeleteFile("src/shop/legacy.py"),
    ]


def test_patch_parse_patch_reads_nested_anchors_end_of_file_crlf_and_blank_lines():
    text = (
        "\r\n*** Begin Patch\r\n*** Update File: src/shop/cart.py\r\n"
        "@@ class Invoice\r\n@@ def total\r\n"
        "         return total\r\n+\r\n+\r\n+__all__ = [\"Cart\", \"Invoice\"]\r\n"
        "*** End of File\r\n*** End Patch\r\n\r\n"
    )
    [update] = parse_patch(text)
    assert update == UpdateFile(
        "src/shop/cart.py",
        None,
        (
            Chunk(
                ("class Invoice", "def total"),
                (
                    (" ", "        return total"),
                    ("+", ""),
                    ("+", ""),
                    ("+", '__all__ = ["Cart", "Invoice"]'),
                ),
                end_of_file=True,
            ),
        ),
    )


def test_patch_parse_patch_an_empty_line_is_context_and_a_new_at_at_starts_a_chunk():
    text = patch_of(
        "*** Begin Patch",
        "*** Update File: README.md",
        "-# Shop",
        "+# The shop",
        "",
        " A tiny shop.",
        "@@",
        "+Run `make test` to test it.",
        "*** End Patch",
    )
    [update] = parse_patch(text)
    assert isinstance(update, UpdateFile)
    assert update.chunks == (
        Chunk((), (("-", "# Shop"), ("+", "# The shop"), (" ", ""), (" ", "A tiny shop."))),
        Chunk((), (("+", "Run `make test` to test it."),)),
    )


def test_patch_parse_patch_a_rename_alone_is_an_update_without_chunks():
    text = patch_of(
        "*** Begin Patch",
        "*** Update File: src/shop/util.py",
        "*** Move to: src/shop/formatting.py",
        "*** End Patch",
    )
    assert parse_patch(text) == [UpdateFile("src/shop/util.py", "src/shop/formatting.py", ())]


BAD_PATCHES = [
    # (the patch's lines, the line number, the message after "line N: ")
    (
        ["*** Update File: a.py", "-x", "+y", "*** End Patch"],
        1,
        "expected '*** Begin Patch', got '*** Update File: a.py'",
    ),
    (
        ["*** Begin Patch", "*** Update File: a.py", "@@ def f", " x = 1", "x = 2",
         "*** End Patch"],
        5,
        "expected a line starting with ' ', '-', '+' or '@@', or a '*** ' header, got 'x = 2'",
    ),
    (
        ["*** Begin Patch", "*** Add File: notes.md", "+first note"],
        4,
        "the patch ended without '*** End Patch'",
    ),
    (
        ["*** Begin Patch", "*** Add File: notes.md", "+first note", "", ""],
        6,
        "the patch ended without '*** End Patch'",
    ),
    (
        ["*** Begin Patch", "*** Rename File: a.py", "*** End Patch"],
        2,
        "expected '*** Add File:', '*** Update File:', '*** Delete File:' or '*** End Patch', "
        "got '*** Rename File: a.py'",
    ),
    (
        ["*** Begin Patch", "*** Add File: hello.py", "+import sys", "print('hi')",
         "*** End Patch"],
        4,
        "expected a line starting with '+' (a line of the new file) or a '*** ' header, "
        "got \"print('hi')\"",
    ),
    (
        ["*** Begin Patch", "*** Delete File: a.py", "*** Move to: b.py", "*** End Patch"],
        3,
        "'*** Move to:' must come right after an '*** Update File:' line",
    ),
    (
        ["*** Begin Patch", "*** Delete File:   ", "*** End Patch"],
        2,
        "expected a path after '*** Delete File:'",
    ),
    (
        ["*** Begin Patch", "*** Add File: /etc/motd", "+hello", "*** End Patch"],
        2,
        "expected a path relative to the workspace, got '/etc/motd'",
    ),
    (
        ["*** Begin Patch", "*** Update File: a.py", "@@", " x = 1", " y = 2", "*** End Patch"],
        3,
        "the chunk changes nothing: it has no '-' or '+' line",
    ),
    (
        ["*** Begin Patch", "*** Update File: a.py", "@@ def f", "*** End Patch"],
        3,
        "expected lines starting with ' ', '-' or '+' after '@@'",
    ),
    (
        ["*** Begin Patch", "*** Update File: a.py", "*** Delete File: b.py", "*** End Patch"],
        2,
        "'*** Update File: a.py' changes nothing: expected '@@' or lines starting with "
        "' ', '-' or '+' after it",
    ),
    (
        ["*** Begin Patch", "*** Delete File: a.py", "*** End Patch", "Done, thanks!"],
        4,
        "expected nothing after '*** End Patch', got 'Done, thanks!'",
    ),
    (
        ["*** Begin Patch", "*** Update File: a.py", "-x", "+y", "*** Delete File: ./a.py",
         "*** End Patch"],
        5,
        "./a.py is already changed by this patch (line 2)",
    ),
    (["*** Begin Patch", "*** End Patch"], 2, "the patch changes no files"),
]


@pytest.mark.parametrize(
    ("lines", "number", "message"),
    BAD_PATCHES,
    ids=[
        "no-begin", "bad-chunk-line", "no-end", "no-end-after-blank-lines", "unknown-header",
        "add-without-plus", "move-out-of-place", "empty-path", "absolute-path",
        "context-only-chunk", "anchor-without-body", "update-without-changes", "text-after-end",
        "same-file-twice", "no-files",
    ],
)
def test_patch_parse_patch_errors_name_the_line_and_what_was_expected(lines, number, message):
    with pytest.raises(PatchError) as caught:
        parse_patch(patch_of(*lines))
    assert caught.value.line == number
    assert str(caught.value) == f"line {number}: {message}"


def test_patch_parse_patch_an_empty_patch_a_bare_move_and_a_move_target_named_twice():
    for text in ("", "\n\n"):
        with pytest.raises(PatchError) as caught:
            parse_patch(text)
        assert str(caught.value).endswith("expected '*** Begin Patch', got ''")
    with pytest.raises(PatchError) as caught:
        parse_patch(
            patch_of("*** Begin Patch", "*** Delete File: a.py", " *** Move to:", "*** End Patch")
        )
    assert str(caught.value) == (
        "line 3: '*** Move to:' must come right after an '*** Update File:' line"
    )
    # A Move names its target at its own line, the one after the Update header.
    move = ["*** Update File: a.py", "*** Move to: b.py", "@@", "-x", "+y"]
    add = ["*** Add File: b.py", "+z"]
    for sections, line, before in [([*move, *add], 7, 3), ([*add, *move], 5, 2)]:
        with pytest.raises(PatchError) as caught:
            parse_patch(patch_of("*** Begin Patch", *sections, "*** End Patch"))
        expected = f"line {line}: b.py is already changed by this patch (line {before})"
        assert str(caught.value) == expected


def test_patch_parse_patch_error_quotes_a_long_line_cut_to_sixty_characters():
    junk = "x" * 200
    with pytest.raises(PatchError) as caught:
        parse_patch(patch_of("*** Begin Patch", junk, "*** End Patch"))
    assert str(caught.value).endswith("got '" + "x" * 59 + "…'")
    sixty = "y" * 60  # exactly sixty characters are quoted whole
    with pytest.raises(PatchError) as caught:
        parse_patch(patch_of("*** Begin Patch", sixty, "*** End Patch"))
    assert str(caught.value).endswith(f"got '{sixty}'")


# ---------------------------------------------------------------- finding a chunk


def test_patch_seek_prefers_an_exact_match_to_an_earlier_one_with_trailing_spaces():
    lines = ["total = 0   ", "total = 0", "return total"]
    assert seek(lines, ["total = 0"], 0, False) == 1
    assert seek(lines, ["total = 0", "return total  "], 0, False) == 1  # only the fuzzy pass fits
    assert seek(lines, ["total = 0"], 2, False) is None  # starts at `start`


def test_patch_seek_forgives_trailing_whitespace_on_either_side_and_nothing_else():
    lines = ["def total(self):\t", "    return sum(self.items)  "]
    assert seek(lines, ["def total(self):", "    return sum(self.items)"], 0, False) == 0
    assert seek(["x = 1"], ["x = 1   "], 0, False) == 0
    assert seek(lines, ["def total(self):", "  return sum(self.items)"], 0, False) is None
    assert seek(lines, ["def total(self):", "\treturn sum(self.items)"], 0, False) is None
    assert seek(lines, ["def  total(self):"], 0, False) is None
    assert seek(lines, ["   def total(self):"], 0, False) is None


def test_patch_seek_at_end_of_file_tries_only_the_last_lines():
    lines = ["    return total", "", "    return total"]
    assert seek(lines, ["    return total"], 0, True) == 2
    assert seek(lines, ["    return total", ""], 0, True) is None
    assert seek(lines, ["x", "y", "z", "w"], 0, False) is None  # longer than the file


def update_chunks(text: str) -> tuple[Chunk, ...]:
    [update] = parse_patch(text)
    assert isinstance(update, UpdateFile)
    return update.chunks


CART_LINES = CART.splitlines()


def test_patch_apply_chunks_finds_each_chunk_after_the_one_before():
    # Both chunks have the same old lines: the second must change the second occurrence.
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: src/shop/cart.py",
            "@@",
            "-        return total",
            "+        return total  # the cart",
            "@@",
            "-        return total",
            "+        return total  # the invoice",
            "*** End Patch",
        )
    )
    result = apply_chunks(CART_LINES, chunks, "src/shop/cart.py")
    assert [line for line in result if "return total" in line] == [
        "        return total  # the cart",
        "        return total  # the invoice",
    ]
    assert len(result) == len(CART_LINES)


def test_patch_apply_chunks_anchors_pick_the_class_then_the_method_among_twins():
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: src/shop/cart.py",
            "@@ class Invoice",
            "@@ def total",
            "         total = Money(0)",
            "-        for _, price, quantity in self.items:",
            "-            total += price * quantity",
            "+        for _, price, quantity in self.items:",
            "+            total += price * quantity * 120 // 100  # with VAT",
            "*** End Patch",
        )
    )
    result = apply_chunks(CART_LINES, chunks, "src/shop/cart.py")
    changed = [n for n, (a, b) in enumerate(zip(CART_LINES, result, strict=True)) if a != b]
    assert changed == [CART_LINES.index("class Invoice:") + 9]
    assert result[changed[0]].endswith("# with VAT")


def test_patch_apply_chunks_a_chunk_that_only_adds_goes_after_its_anchor_or_at_the_end():
    lines = ["class Cart:", "    pass", "", "class Invoice:", "    pass"]
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: cart.py",
            "@@ class Cart",
            '+    """Items a customer means to buy."""',
            "@@",
            "+",
            "+__all__ = ['Cart', 'Invoice']",
            "*** End Patch",
        )
    )
    assert apply_chunks(lines, chunks, "cart.py") == [
        "class Cart:",
        '    """Items a customer means to buy."""',
        "    pass",
        "",
        "class Invoice:",
        "    pass",
        "",
        "__all__ = ['Cart', 'Invoice']",
    ]


def test_patch_apply_chunks_end_of_file_changes_the_last_occurrence_not_the_first():
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: src/shop/cart.py",
            "@@",
            "             total += price * quantity",
            "-        return total",
            "+        return round(total)",
            "*** End of File",
            "*** End Patch",
        )
    )
    result = apply_chunks(CART_LINES, chunks, "src/shop/cart.py")
    assert result[-1] == "        return round(total)"
    assert result[:-1] == CART_LINES[:-1]
    with pytest.raises(ApplyError) as caught:  # the last lines only: the first are no match
        apply_chunks([*CART_LINES, "# the end"], chunks, "src/shop/cart.py")
    assert "chunk 1 not found: these lines are not in the file at the end of the file:\n" in str(
        caught.value
    )


def test_patch_apply_chunks_a_chunk_not_found_names_the_file_the_chunk_and_its_lines():
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: src/shop/cart.py",
            "@@",
            " class Cart:",
            '-    """Items a customer means to buy."""',
            '+    """What a customer means to buy."""',
            "@@",
            "     def total(self) -> Money:",
            "-        total = Money(1)",
            "+        total = Money(2)",
            "*** End Patch",
        )
    )
    with pytest.raises(ApplyError) as caught:
        apply_chunks(CART_LINES, chunks, "src/shop/cart.py")
    message = str(caught.value)
    assert message.startswith("src/shop/cart.py: chunk 2 not found")
    assert "chunk 2 not found: these lines are not in the file after line 7:\n" in message
    assert "    def total(self) -> Money:" in message
    assert "        total = Money(1)" in message


def test_patch_apply_chunks_an_anchor_not_found_is_an_error_naming_it():
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: src/shop/cart.py",
            "@@ class Receipt",
            "-        return total",
            "+        return total",
            "*** End Patch",
        )
    )
    with pytest.raises(ApplyError, match="no line starting with 'class Receipt'") as caught:
        apply_chunks(CART_LINES, chunks, "src/shop/cart.py")
    assert str(caught.value).startswith("src/shop/cart.py: chunk 1 not found")


def diff_patch(path: str, old: list[str], new: list[str], context: int = 3) -> str:
    """An Update File patch that turns ``old`` into ``new``, made from difflib's opcodes."""
    lines = ["*** Begin Patch", f"*** Update File: {path}"]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        lines.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
            if tag in ("replace", "delete"):
                lines += ["-" + line for line in old[i1:i2]]
            if tag in ("replace", "insert"):
                lines += ["+" + line for line in new[j1:j2]]
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


LINE = st.text(alphabet="ab x=():#*@+-\t", max_size=10)


@st.composite
def two_texts(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A file of distinct lines, and a second version that keeps some of them and adds others."""
    old = draw(st.lists(LINE, unique=True, max_size=25))
    kept_or_new = st.one_of(st.sampled_from(old), LINE) if old else LINE
    new = draw(st.lists(kept_or_new, max_size=25).filter(lambda new: new != old))
    return old, new


@settings(max_examples=examples(150), deadline=None)
@given(two_texts())
def test_patch_apply_chunks_a_patch_made_from_a_diff_turns_one_text_into_the_other(texts):
    old, new = texts
    [update] = parse_patch(diff_patch("notes.txt", old, new))
    assert isinstance(update, UpdateFile)
    assert apply_chunks(old, update.chunks, "notes.txt") == new


# ---------------------------------------------------------------- the tool


async def test_patch_tool_applies_add_update_move_and_delete_and_says_what_it_did(tmp_path):
    root = make_project(tmp_path)
    output = await apply(ApplyPatchTool(root), SHOP_PATCH)
    assert output == ToolOutput.ok(
        "A src/shop/shipping.py\n"
        "M src/shop/cart.py\n"
        "R src/shop/util.py -> src/shop/formatting.py\n"
        "D src/shop/legacy.py"
    )
    shipping = (root / "src/shop/shipping.py").read_text()
    assert shipping == '"""What delivery costs."""\n\nSHIPPING = 495\n'
    cart, invoice = CART.split("class Invoice:")
    cart = cart.replace("Money\n", "Money\nfrom shop.shipping import SHIPPING\n", 1)
    invoice = invoice.replace("return total", "return total + Money(SHIPPING)")
    assert (root / "src/shop/cart.py").read_text() == cart + "class Invoice:" + invoice
    assert not (root / "src/shop/util.py").exists()
    assert (root / "src/shop/formatting.py").read_text() == UTIL.replace(
        "{cents / 100}", "{cents / 100:.2f}"
    )
    assert not (root / "src/shop/legacy.py").exists()
    assert (root / "README.md").read_text() == "# Shop\n\nA tiny shop.\n"


async def test_patch_tool_is_all_or_nothing_when_a_later_chunk_does_not_fit(tmp_path):
    root = make_project(tmp_path)
    before = snapshot(root)
    patch = SHOP_PATCH.replace('-    return f"${cents / 100}"', '-    return f"{cents} cents"')
    output = await apply(ApplyPatchTool(root), patch)
    assert output.is_error
    assert output.content.startswith("the patch was not applied: ")
    assert "src/shop/util.py: chunk 1 not found" in output.content
    assert '    return f"{cents} cents"' in output.content
    assert snapshot(root) == before  # cart.py unchanged, shipping.py not added, legacy.py kept


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (["*** Add File: README.md", "+# Shop"],
         "cannot add README.md: it already exists; use '*** Update File: ' to change it"),
        (["*** Update File: src/shop/orders.py", "-x", "+y"],
         "cannot update src/shop/orders.py: no such file"),
        (["*** Delete File: src/shop/orders.py"], "cannot delete src/shop/orders.py: no such file"),
        (["*** Delete File: src/shop"], "cannot delete src/shop: it is not a file"),
        (["*** Update File: src/shop", "@@", "-x", "+y"],
         "cannot update src/shop: it is not a file"),
        (["*** Update File: README.md", "*** Move to: src/shop/cart.py"],
         "cannot move README.md to src/shop/cart.py: src/shop/cart.py already exists"),
    ],
    ids=[
        "add-existing", "update-missing", "delete-missing", "delete-directory",
        "update-directory", "move-onto-file",
    ],
)
async def test_patch_tool_refuses_operations_the_files_do_not_allow_and_changes_nothing(
    tmp_path, section, message
):
    root = make_project(tmp_path)
    before = snapshot(root)
    patch = patch_of(
        "*** Begin Patch",
        "*** Add File: docs/changes.md",
        "+- shipping costs added",
        *section,
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(root), patch)
    assert output == ToolOutput.error(f"the patch was not applied: {message}")
    assert snapshot(root) == before
    assert not (root / "docs").exists()


async def test_patch_tool_refuses_to_update_a_file_that_is_not_utf8(tmp_path):
    root = make_project(tmp_path)
    (root / "legacy.txt").write_bytes(b"caf\xe9\n")
    before = snapshot(root)
    patch = patch_of(
        "*** Begin Patch", "*** Update File: legacy.txt", "-caf", "+cafe", "*** End Patch"
    )
    output = await apply(ApplyPatchTool(root), patch)
    assert output == ToolOutput.error(
        "the patch was not applied: cannot update legacy.txt: it is not UTF-8 text"
    )
    assert snapshot(root) == before


async def test_patch_tool_returns_a_parse_error_as_an_error_result(tmp_path):
    root = make_project(tmp_path)
    before = snapshot(root)
    patch = patch_of("*** Begin Patch", "*** Update File: README.md", "# Shop", "*** End Patch")
    output = await apply(ApplyPatchTool(root), patch)
    assert output == ToolOutput.error(
        "the patch was not applied: line 3: expected a line starting with ' ', '-', '+' or "
        "'@@', or a '*** ' header, got '# Shop'"
    )
    assert snapshot(root) == before


async def test_patch_tool_tolerates_trailing_spaces_and_keeps_them_on_untouched_lines(tmp_path):
    path = tmp_path / "config.py"
    path.write_bytes(b"DEBUG = True   \nPORT = 8000\t\nHOST = 'localhost'\n")
    patch = patch_of(
        "*** Begin Patch",
        "*** Update File: config.py",
        " DEBUG = True",
        "-PORT = 8000",
        "+PORT = 8080",
        " HOST = 'localhost'",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(tmp_path), patch)
    assert output == ToolOutput.ok("M config.py")
    assert path.read_bytes() == b"DEBUG = True   \nPORT = 8080\nHOST = 'localhost'\n"


async def test_patch_tool_does_not_ignore_indentation(tmp_path):
    path = tmp_path / "money.py"
    original = (
        b"class Money:\n"
        b"    def __add__(self, other):\n"
        b"        return Money(self.cents + other.cents)\n"
    )
    path.write_bytes(original)
    patch = patch_of(
        "*** Begin Patch",
        "*** Update File: money.py",
        "@@ class Money",
        " def __add__(self, other):",
        "-    return Money(self.cents + other.cents)",
        "+    return Money(self.cents + int(other))",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(tmp_path), patch)
    assert output.is_error
    assert "money.py: chunk 1 not found" in output.content
    assert path.read_bytes() == original


async def test_patch_tool_keeps_crlf_line_ends_a_missing_final_newline_and_a_bom(tmp_path):
    windows = tmp_path / "setup.cfg"
    windows.write_bytes(b"[metadata]\r\nname = shop\r\nversion = 1.0\r\n")
    bare = tmp_path / "VERSION"
    bare.write_bytes(b"1.0")
    marked = tmp_path / "prices.csv"
    marked.write_bytes(b"\xef\xbb\xbfitem,cents\nmug,799\n")
    patch = patch_of(
        "*** Begin Patch",
        "*** Update File: setup.cfg",
        " name = shop",
        "-version = 1.0",
        "+version = 1.1",
        "+license = MIT",
        "*** Update File: VERSION",
        "-1.0",
        "+1.1",
        "*** Update File: prices.csv",
        "-item,cents",
        "+item,cents,currency",
        "-mug,799",
        "+mug,799,EUR",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(tmp_path), patch)
    assert output == ToolOutput.ok("M setup.cfg\nM VERSION\nM prices.csv")
    assert windows.read_bytes() == (
        b"[metadata]\r\nname = shop\r\nversion = 1.1\r\nlicense = MIT\r\n"
    )
    assert bare.read_bytes() == b"1.1"
    assert marked.read_bytes() == b"\xef\xbb\xbfitem,cents,currency\nmug,799,EUR\n"


async def test_patch_tool_in_a_crlf_file_prefers_the_exact_match_to_an_earlier_fuzzy_one(
    tmp_path,
):
    path = tmp_path / "limits.cfg"
    path.write_bytes(b"retries = 3 \r\nretries = 3\r\n")
    patch = patch_of(
        "*** Begin Patch", "*** Update File: limits.cfg", "-retries = 3", "+retries = 5",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(tmp_path), patch)
    assert output == ToolOutput.ok("M limits.cfg")
    assert path.read_bytes() == b"retries = 3 \r\nretries = 5\r\n"


async def test_patch_tool_without_a_final_newline_keeps_crlf_and_the_last_line_as_it_was(
    tmp_path,
):
    appended = tmp_path / "hosts.txt"
    appended.write_bytes(b"alpha\r\nbeta")
    stray = tmp_path / "notes.txt"
    stray.write_bytes(b"one\ntwo\r")  # ends in a lone CR: an untouched line keeps it
    patch = patch_of(
        "*** Begin Patch",
        "*** Update File: hosts.txt",
        " beta",
        "+gamma",
        "*** End of File",
        "*** Update File: notes.txt",
        "-one",
        "+ONE",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(tmp_path), patch)
    assert output == ToolOutput.ok("M hosts.txt\nM notes.txt")
    assert appended.read_bytes() == b"alpha\r\nbeta\r\ngamma"
    assert stray.read_bytes() == b"ONE\ntwo\r"


async def test_patch_tool_creates_folders_for_added_and_moved_files(tmp_path):
    root = make_project(tmp_path)
    patch = patch_of(
        "*** Begin Patch",
        "*** Add File: tests/unit/test_cart.py",
        "+from shop.cart import Cart",
        "*** Update File: src/shop/legacy.py",
        "*** Move to: attic/2024/legacy.py",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(root), patch)
    assert output == ToolOutput.ok(
        "A tests/unit/test_cart.py\nR src/shop/legacy.py -> attic/2024/legacy.py"
    )
    assert (root / "tests/unit/test_cart.py").read_text() == "from shop.cart import Cart\n"
    assert (root / "attic/2024/legacy.py").read_text() == LEGACY
    assert not (root / "src/shop/legacy.py").exists()


README_PATCH = patch_of(
    "*** Begin Patch",
    "*** Update File: README.md",
    " # Shop",
    " ",
    "-A tiny shop.",
    "+A tiny shop, with shipping.",
    "*** End Patch",
)


async def test_patch_tool_with_a_tracker_wants_updated_files_read_and_unchanged(tmp_path):
    root = make_project(tmp_path)
    files = FileTracker()
    tool = ApplyPatchTool(root, files=files)
    output = await apply(tool, README_PATCH)
    assert output == ToolOutput.error(
        "the patch was not applied: read README.md before editing it, so the edit is made "
        "against what it holds"
    )
    assert (root / "README.md").read_text() == "# Shop\n\nA tiny shop.\n"

    await ReadTool(root, files=files).run({"path": "README.md"})
    (root / "README.md").write_text("# Shop\n\nA tiny shop!\n")  # someone saves it meanwhile
    output = await apply(tool, README_PATCH)
    assert output.is_error
    assert "README.md has changed on disk since it was last read" in output.content

    (root / "README.md").write_text("# Shop\n\nA tiny shop.\n")
    await ReadTool(root, files=files).run({"path": "README.md"})
    assert (await apply(tool, README_PATCH)) == ToolOutput.ok("M README.md")
    # The tool tells the tracker what it wrote: a second patch needs no new read.
    again = README_PATCH.replace("-A tiny shop.", "-A tiny shop, with shipping.").replace(
        "+A tiny shop, with shipping.", "+A tiny shop, with free shipping."
    )
    assert (await apply(tool, again)) == ToolOutput.ok("M README.md")
    assert (root / "README.md").read_text() == "# Shop\n\nA tiny shop, with free shipping.\n"


async def test_patch_tool_with_a_tracker_adds_and_deletes_without_a_read(tmp_path):
    root = make_project(tmp_path)
    patch = patch_of(
        "*** Begin Patch",
        "*** Add File: CHANGES.md",
        "+# Changes",
        "*** Delete File: src/shop/legacy.py",
        "*** End Patch",
    )
    output = await apply(ApplyPatchTool(root, files=FileTracker()), patch)
    assert output == ToolOutput.ok("A CHANGES.md\nD src/shop/legacy.py")


async def test_patch_tool_end_to_end_an_agent_reads_a_file_then_patches_it(tmp_path):
    root = make_project(tmp_path)
    files = FileTracker()
    tools = ToolSet([ReadTool(root, files=files), ApplyPatchTool(root, files=files)])
    provider = MockProvider(
        [
            AssistantTurn(
                text="Let me look at the utilities first.",
                tool_calls=[ToolCall(id="c1", name="read", arguments={"path": "src/shop/util.py"})],
            ),
            AssistantTurn(
                tool_calls=[
                    ToolCall(
                        id="c2",
                        name="apply_patch",
                        arguments={
                            "patch": patch_of(
                                "*** Begin Patch",
                                "*** Update File: src/shop/util.py",
                                "@@ def format_price",
                                '-    return f"${cents / 100}"',
                                '+    return f"${cents / 100:.2f}"',
                                "*** End Patch",
                            )
                        },
                    )
                ]
            ),
            "Prices now always show two decimals.",
        ]
    )
    result = await SimpleAgent(provider, tools).run("Show prices with two decimals.")
    assert result.finish is Finish.DONE
    assert result.text == "Prices now always show two decimals."
    assert 'return f"${cents / 100:.2f}"' in (root / "src/shop/util.py").read_text()
    answers = [m for m in provider.calls[2].messages if isinstance(m, ToolResultMessage)]
    assert [a.content for a in answers][-1] == "M src/shop/util.py"
    assert re.search(r"format_price", answers[0].content)


def test_patch_apply_chunks_shows_a_blank_line_it_looked_for_visibly():
    chunks = update_chunks(
        patch_of(
            "*** Begin Patch",
            "*** Update File: notes.txt",
            "@@",
            " first",
            " ",
            "-second",
            "+SECOND",
            "*** End Patch",
        )
    )
    with pytest.raises(ApplyError) as caught:
        apply_chunks(["first", "second"], chunks, "notes.txt")
    assert str(caught.value).endswith("\n    first\n    ''\n    second")


def test_patch_file_header_refuses_control_characters_in_a_path():
    for path, shown in [("a\x1b[2Jb.txt", "'\\x1b'"), ("tab\there.txt", "'\\t'"),
                        ("bell\x07.txt", "'\\x07'"), ("c1\x9b.txt", "'\\x9b'"),
                        ("del\x7f.txt", "'\\x7f'"), ("c1\x9f.txt", "'\\x9f'")]:
        with pytest.raises(PatchError, match="holds the control character") as caught:
            file_header(f"*** Add File: {path}", 4)
        assert str(caught.value).startswith("line 4: ")
        assert shown in str(caught.value)
    # A space, or a no-break space (U+00A0), is no control character.
    for path in ("my notes.md", "no\xa0break.md"):
        assert file_header(f"*** Add File: {path}", 4) == AddFile(path)
    patch = patch_of("*** Begin Patch", "*** Update File: a.txt", "*** Move to: b\x1b.txt",
                     "@@", "-a", "+b", "*** End Patch")
    with pytest.raises(PatchError, match=r"line 3: .*control character '\\x1b'"):
        parse_patch(patch)
