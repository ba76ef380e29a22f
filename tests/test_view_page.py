"""ch31 · The page of a session: compactions, rewinds, subagents, damaged lines, light and dark.

Each transcript here is planted record by record (``viewed.plant``), in the shapes chapter 22's
recorder, chapter 18's compaction, chapter 21's subagents and chapter 27's rewind write.
"""

from decimal import Decimal
from pathlib import Path

from viewed import Page, assert_inert, event, plant, prompt

from claw.events import (
    AssistantText,
    Compacted,
    StepUsage,
    SubagentEvent,
    ToolCalled,
    ToolResult,
)
from claw.transcript import history_record
from claw.types import TokenUsage, UserMessage
from claw.view.model import build_view, read_records
from claw.view.page import render


def page_of(path: Path) -> str:
    """The page ``claw view`` makes of the transcript at ``path``."""
    return render(build_view(*read_records(path)))


def usage(tokens_in: int, tokens_out: int, cost: str | None = None) -> TokenUsage:
    """A step's usage, with its cost in dollars if given."""
    return TokenUsage(
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost=None if cost is None else Decimal(cost),
    )


def test_view_shows_a_compaction_where_it_happened(tmp_path: Path) -> None:
    path = plant(
        tmp_path / "s.jsonl",
        prompt("first"),
        event(StepUsage(1, usage(10, 2))),
        event(Compacted(removed=6, kept=2, tokens_before=9000, tokens_after=1200)),
        history_record([UserMessage(content="summary")]),
        event(StepUsage(2, usage(11, 3))),
    )

    text = Page.of(page_of(path)).all_text()

    note = "compacted: 6 messages summarised, 2 kept, 9,000 → 1,200 tokens"
    assert text.index("step 1 ·") < text.index(note) < text.index("step 2 ·")
    assert "summary" not in text  # the history record is not replayed as a prompt


def test_view_shows_a_rewind_between_the_prompts(tmp_path: Path) -> None:
    rewind = {"id": "r-1", "prompt": 2, "what": "both"}
    path = plant(
        tmp_path / "s.jsonl",
        prompt("Write a."),
        prompt("Write b."),
        {**history_record([UserMessage(content="Write a.")]), "rewind": rewind},  # ch27's
        {"type": "rewind", "rewind": {"id": "r-2", "prompt": 1, "what": "code"}},
        prompt("What is there?"),
    )

    text = Page.of(page_of(path)).all_text()

    first = text.index("rewound the both to before prompt 2")
    assert text.index("Write b.") < first < text.index("What is there?")
    assert first < text.index("rewound the code to before prompt 1") < text.index("What is")
    assert "prompt 3" in text  # every prompt keeps its own number


def test_view_nests_a_subagents_steps_inside_the_step_that_started_it(tmp_path: Path) -> None:
    task = ToolCalled(1, "call-1", "task", {"prompt": "look around"})
    child = [
        SubagentEvent("task-1", StepUsage(1, usage(50, 5, "0.01"))),
        SubagentEvent("task-1", ToolCalled(1, "c-1", "glob", {"pattern": "*.py"})),
        SubagentEvent("task-1", ToolResult(1, "c-1", "glob", "app.py", False, 0.1)),
    ]
    path = plant(
        tmp_path / "s.jsonl",
        prompt("explore"),
        event(StepUsage(1, usage(20, 4, "0.02"))),
        event(task),
        *[event(item) for item in child],
        event(ToolResult(1, "call-1", "task", "found app.py", False, 2.0)),
    )

    html = page_of(path)
    page = assert_inert(html)

    assert page.details_depths == [0, 1, 2]  # task; the subagent; its glob call inside it
    section = html.split('<section class="subagent">')[1]
    assert "task-1" in section and "glob" in section and "50 tokens in, 5 out" in section
    assert "total: 70 tokens in, 9 out · $0.0300" in page.all_text()  # the child's counts


def test_view_a_damaged_or_torn_line_is_a_notice_and_the_rest_is_shown(tmp_path: Path) -> None:
    path = plant(
        tmp_path / "s.jsonl",
        event(StepUsage(1, usage(3, 1))),  # before any prompt
        prompt("before"),
        b"{not json\n",
        prompt("after"),
        b'{"type":"message","message":{"role":"us',
    )

    text = Page.of(page_of(path)).all_text()

    assert text.index("(before the first prompt)") < text.index("step 1 · 3 tokens in")
    assert "before" in text and "after" in text
    assert f"{path}:4: not a JSON record" in text
    assert f"{path}:6: the last line is incomplete" in text


def test_view_is_one_file_with_light_and_dark_colours_and_no_script(tmp_path: Path) -> None:
    html = page_of(plant(tmp_path / "s.jsonl", prompt("hi")))

    page = assert_inert(html)

    [style] = [part.split("</style>")[0] for part in html.split("<style>")[1:]]
    assert "@media (prefers-color-scheme: dark)" in style
    policies = [
        m for m in page.elements("meta") if m.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policies == [
        {
            "http-equiv": "Content-Security-Policy",
            "content": "default-src 'none'; style-src 'unsafe-inline'",
        }
    ]
    assert "@import" not in style and "url(" not in style  # nothing fetched


def test_view_a_step_keeps_its_text_and_each_call_with_its_own_result(tmp_path: Path) -> None:
    wide = "x" * 500
    path = plant(
        tmp_path / "s.jsonl",
        prompt("look"),
        event(StepUsage(1, usage(10, 2, "0.001"))),
        event(AssistantText(1, "Let me look.")),
        event(ToolCalled(1, "a", "read", {"path": "a.txt"})),
        event(ToolCalled(1, "b", "grep", {"pattern": wide})),
        event(ToolResult(1, "b", "grep", "no match", True, 0.1)),
        event(ToolResult(1, "a", "read", "the text of a", False, 0.5)),
        event(ToolResult(1, "c", "bash", "ran", False, 1.0)),  # its call was not recorded
        event(StepUsage(2, usage(5, 1))),
        event(ToolCalled(2, "d", "bash", {"command": "sleep 99"})),  # the run stopped here
        event(StepUsage(3, usage(1, 1, "0.001"))),
    )

    html = page_of(path)
    page = assert_inert(html)

    folds = html.split("<details")[1:]
    assert [fold.split("</summary>")[0].split("<code>")[1] for fold in folds] == [
        "read</code>(path=&#x27;a.txt&#x27;) · 0.5 s",
        f"grep</code>(pattern=&#x27;{wide[:90]}…) · error",
        "bash</code>() · 1.0 s",
        "bash</code>(command=&#x27;sleep 99&#x27;) · 0.0 s",
    ]
    assert [attrs for attrs in page.elements("details")] == [{}, {"class": "error"}, {}, {}]
    assert html.count("<details><summary>") == 3
    assert html.count('<details class="error"><summary>') == 1
    stopped = '<p class="note">no result recorded (the run stopped first)</p></details>'
    assert html.count(stopped) == 1
    assert "the text of a" in folds[0] and "no match" in folds[1] and "ran" in folds[2]
    assert "no result recorded (the run stopped first)" in folds[3]
    text = page.all_text()
    assert text.index("step 1 · 10 tokens in") < text.index("Let me look.") < text.index("read(")
    assert "step 2 · 5 tokens in, 1 out · cost unknown" in text
    assert "total: 16 tokens in, 4 out · $0.0020 (cost unknown for 1 step(s))" in text


NOT_A_DIFF = "items:\n--- a note\nplain\n+++ other\n--- again\n- a list item\n+ not a diff"
"""A command's output with lines like a diff's, but no header line followed by its pair."""
EDITED = "edited x.py\n--- a/x.py\n+++ b/x.py\n-a\n+b\n c"
"""An ``edit`` result: a line, then a unified diff."""


def test_view_colours_a_patch_and_leaves_lines_before_a_diff_alone(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-old\n+new\n*** End Patch"
    path = plant(
        tmp_path / "s.jsonl",
        prompt("patch it"),
        event(ToolCalled(1, "p", "apply_patch", {"patch": patch})),
        event(ToolResult(1, "p", "apply_patch", NOT_A_DIFF, False, 0.1)),
        event(ToolCalled(1, "e", "edit", {"path": "x.py"})),
        event(ToolResult(1, "e", "edit", EDITED, False, 0.1)),
    )

    lines = page_of(path).split("\n")

    [named] = [number for number, line in enumerate(lines) if line.endswith("<pre>patch:")]
    assert lines[named + 1] == "*** Begin Patch"  # the patch, line by line, as itself
    assert lines[lines.index("*** Update File: a.py") + 2 :][:2] == [
        "<del>-old</del>",
        "<ins>+new</ins>",
    ]
    assert "- a list item" in lines and "+ not a diff</pre></details>" in lines
    header = lines.index("--- a/x.py")  # a unified diff: its header, then its lines
    assert lines[header + 1 : header + 4] == ["+++ b/x.py", "<del>-a</del>", "<ins>+b</ins>"]
