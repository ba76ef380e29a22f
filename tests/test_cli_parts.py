"""ch19 · The pieces of the terminal app, one at a time: blocks, diffs, commands, Ctrl-C.

Each is tested alone here; ``test_cli_terminal.py`` tests them together in a real terminal.
"""

import io
import itertools
import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.markdown import Markdown

from claw.agent import Finish
from claw.events import AssistantText, RunFinished, StepUsage, ToolCalled, ToolResult
from claw.guard import guard
from claw.loop import Agent
from claw.options import parse_arguments
from claw.permissions import Mode
from claw.plan import PlanState, plan_mode_message
from claw.preview import change_preview
from claw.printmode import UsageError, event_object, read_prompt, result_object
from claw.render import BlockSplitter, MarkdownStream
from claw.repl import ExitPresses
from claw.signals import exit_status
from claw.slash import AppState, UnknownCommand, default_commands, next_mode, shown_mode
from claw.streaming import MockStreamProvider, TextDelta
from claw.types import SystemMessage, TokenUsage, ToolCall, UserMessage

ANSWER = """# Fixing the parser

The bug is in `parse`:

```python
def parse(text):

    return text.split()
```

1. Split on commas.
2. Strip spaces.

~~~
```
a fence of tildes, with a backtick fence inside
~~~

````markdown
```

not closed by three
````
Last line without a newline"""

BLOCKS = [
    "# Fixing the parser",
    "The bug is in `parse`:",
    "```python\ndef parse(text):\n\n    return text.split()\n```",
    "1. Split on commas.\n2. Strip spaces.",
    "~~~\n```\na fence of tildes, with a backtick fence inside\n~~~",
    "````markdown\n```\n\nnot closed by three\n````",
]


def test_cli_blocks_end_at_blank_lines_outside_fences_and_at_a_closing_fence() -> None:
    splitter = BlockSplitter()
    assert splitter.feed(ANSWER) == BLOCKS
    assert splitter.close() == "Last line without a newline"


def cut_points() -> Iterator[list[int]]:
    """Ways to cut ``ANSWER`` into chunks: at every single point, then at many random points."""
    for point in range(len(ANSWER) + 1):
        yield [point]
    chance = random.Random(19)  # the same cuts every run
    for _ in range(200):
        yield chance.sample(range(len(ANSWER) + 1), chance.randint(2, 30))


def test_cli_blocks_do_not_depend_on_how_the_answer_was_cut_into_chunks() -> None:
    for cuts in cut_points():
        points = sorted({0, len(ANSWER), *cuts})
        splitter = BlockSplitter()
        blocks: list[str] = []
        for start, end in itertools.pairwise(points):
            blocks += splitter.feed(ANSWER[start:end])
        assert (blocks, splitter.close()) == (BLOCKS, "Last line without a newline"), cuts


class Recorder:
    """A console, not a terminal, that records what it was asked to print."""

    is_terminal = False

    def __init__(self) -> None:
        self.printed: list[Any] = []
        self.calls: list[list[str]] = []

    def print(self, *things: Any) -> None:
        self.printed += things
        self.calls.append([thing.markup for thing in things])


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_cli_markdown_renders_each_block_once_as_soon_as_it_is_complete() -> None:
    console, clock = Recorder(), Clock()
    stream = MarkdownStream(console, clock)  # type: ignore[arg-type]
    rendered_after: list[int] = []
    for character in ANSWER:  # one character a chunk: the worst case
        clock.now += 1.0  # a slow stream: every block is printed the moment it is complete
        stream.feed(character)
        rendered_after.append(len(console.printed))
    stream.close()
    assert [block.markup for block in console.printed] == [*BLOCKS, "Last line without a newline"]
    assert console.calls == [[block] for block in [*BLOCKS, "Last line without a newline"]]
    # The heading was on screen as soon as the blank line after it arrived.
    assert rendered_after[len("# Fixing the parser\n\n") - 1] == 1
    # And the code block as soon as its closing fence's line ended.
    assert rendered_after[ANSWER.index("```\n\n1.") + len("```\n") - 1] == 3


def test_cli_a_fast_stream_prints_the_blocks_waiting_together_each_once() -> None:
    console, clock = Recorder(), Clock()
    stream = MarkdownStream(console, clock)  # type: ignore[arg-type]
    for character in ANSWER[: ANSWER.index("1. Split")]:  # no time passes: a fast stream
        stream.feed(character)
    # The heading went out at once; the next two blocks wait for PRINT_INTERVAL to pass.
    assert console.calls == [[BLOCKS[0]]]
    clock.now += 0.05
    stream.feed("1")
    assert console.calls == [[BLOCKS[0]]]
    clock.now += 0.05
    stream.feed(ANSWER[ANSWER.index("1. Split") + 1 :])
    assert console.calls == [[BLOCKS[0]], BLOCKS[1:]]  # printed together, in order
    stream.close()
    assert console.calls == [[BLOCKS[0]], BLOCKS[1:], ["Last line without a newline"]]


def test_cli_a_streamed_block_renders_exactly_as_rich_renders_it() -> None:
    # The oracle is rich's own Markdown: the shared parser must not change a single cell.
    code = [  # lines that wrap at 60 columns and lines that just fit, tabs, no known language
        "```python\nx = '" + "a" * 80 + "'\n```",
        "```python\nx = '" + "a" * 53 + "'\n```",
        "```python\nx = '" + "a" * 52 + "'\n```",
        "```\n\tindented\twith tabs\n```",
        "```no-such-language\nsome code\n```",
    ]
    others = ["| a | b |\n|---|---|\n| 1 | ~~2~~ |", "Some *em*, **strong**, `code`."]
    for block in [*BLOCKS, *code, *others]:
        ours, theirs = (
            Console(file=io.StringIO(), width=60, color_system="truecolor") for _ in "ab"
        )
        stream = MarkdownStream(ours)
        stream.feed(block + "\n\n")
        stream.close()
        theirs.print(Markdown(block))
        assert ours.file.getvalue() == theirs.file.getvalue()  # type: ignore[attr-defined]


def test_cli_an_edit_or_write_is_previewed_as_a_diff_cut_to_a_screenful(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\ny = 2\n")
    edit = ToolCall(
        id="1",
        name="edit",
        arguments={"path": "app.py", "old_string": "y = 2", "new_string": "y = 3"},
    )
    assert change_preview(edit, tmp_path) == (
        "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3"
    )
    content = "".join(f"line {n}\n" for n in range(100))
    write = ToolCall(id="2", name="write", arguments={"path": "new.py", "content": content})
    shown = change_preview(write, tmp_path, rows=40)
    assert shown is not None
    lines = shown.splitlines()
    assert len(lines) == 41 and lines[3] == "+line 0"
    assert lines[-1] == "… (63 more lines)"  # 3 header lines and 100 added lines, 40 shown
    assert (
        change_preview(ToolCall(id="3", name="bash", arguments={"command": "ls"}), tmp_path) is None
    )


def test_cli_exit_status_follows_the_documented_table() -> None:
    def finished(reason: Finish) -> RunFinished:
        return RunFinished(reason, 1, "", TokenUsage())

    assert exit_status(finished(Finish.DONE)) == 0
    assert exit_status(finished(Finish.HOOK_STOPPED)) == 0  # a hook ended it on purpose
    for reason in (Finish.MAX_STEPS, Finish.STUCK, Finish.ERROR, Finish.PERMISSION_DENIALS):
        assert exit_status(finished(reason)) == 1
    assert exit_status(None) == 1  # a hook blocked the prompt
    assert exit_status(finished(Finish.CANCELLED), 2) == 130  # Ctrl-C
    assert exit_status(finished(Finish.CANCELLED), 15) == 143  # SIGTERM


def test_cli_ctrl_c_twice_at_an_empty_prompt_exits_and_text_in_between_disarms() -> None:
    presses = ExitPresses()
    assert presses.press("") is False
    assert presses.press("") is True
    presses = ExitPresses()
    assert presses.press("") is False
    assert presses.press("half a prompt") is False  # Ctrl-C cleared the line
    assert presses.press("") is False
    presses.reset()  # a prompt was sent
    assert presses.press("") is False


def app_state(tmp_path: Path) -> AppState:
    provider = MockStreamProvider([])
    agent = Agent(provider, system="You are claw.")
    out = io.StringIO()
    return AppState(agent, out, start=list(agent.history))


async def command(state: AppState, line: str) -> str:
    """Run ``line`` as a slash command; what it wrote."""
    assert isinstance(state.out, io.StringIO)
    state.out.seek(0)
    state.out.truncate()
    assert await default_commands().dispatch(line, state) is True
    return state.out.getvalue()


async def test_cli_slash_help_clear_model_and_exit(tmp_path: Path) -> None:
    state = app_state(tmp_path)
    shown = await command(state, "/help")
    for name in ("/help", "/clear", "/model", "/permissions", "/plan", "/exit"):
        assert name in shown
    state.agent.history.append(UserMessage(content="earlier"))
    assert await command(state, "/clear") == "(conversation cleared)\n"
    assert state.agent.history == [SystemMessage(content="You are claw.")]
    state.agent.provider.model = "test/one"  # type: ignore[attr-defined]
    assert await command(state, "/model") == "model: test/one\n"
    assert await command(state, "/model test/two") == "model: test/two\n"
    assert state.agent.provider.model == "test/two"  # type: ignore[attr-defined]
    assert not state.exit_requested
    await command(state, "/exit")
    assert state.exit_requested


async def test_cli_slash_lines_that_are_not_commands(tmp_path: Path) -> None:
    state = app_state(tmp_path)
    commands = default_commands()
    assert await commands.dispatch("fix the /tmp handling", state) is False
    assert await commands.dispatch("//etc/hosts is wrong", state) is False  # "//": a prompt
    with pytest.raises(UnknownCommand, match="unknown command /nope: the commands are /help, "):
        await commands.dispatch("/nope", state)


async def test_cli_slash_permissions_and_plan_change_the_guard(tmp_path: Path) -> None:
    state = app_state(tmp_path)
    state.guarded = guard(state.agent, tmp_path, approve=None)
    assert (await command(state, "/permissions")).startswith("mode: default\n")
    assert await command(state, "/permissions acceptEdits") == "mode: acceptEdits\n"
    assert state.guarded.permissions.mode is Mode.ACCEPT_EDITS
    assert "unknown mode 'sometimes'" in await command(state, "/permissions sometimes")
    assert state.guarded.permissions.mode is Mode.ACCEPT_EDITS

    assert state.guarded.plan.state is PlanState.EXECUTING
    assert "plan mode" in await command(state, "/plan")
    assert state.guarded.plan.state is PlanState.PLANNING
    assert "plan mode" in str(state.agent.history[-1])  # the model is told it plans now
    assert "cannot enter while planning" in await command(state, "/plan")


async def test_cli_slash_permissions_shows_plan_while_planning_and_leaves_it(
    tmp_path: Path,
) -> None:
    state = app_state(tmp_path)
    assert next_mode(state) is None and shown_mode(state) is None  # --unguarded: no modes
    state.guarded = guard(state.agent, tmp_path, approve=None)
    await command(state, "/plan")
    assert (await command(state, "/permissions")).startswith("mode: plan\n")
    assert (await command(state, "/permissions acceptEdits")).startswith("mode: acceptEdits\n")
    assert state.guarded.plan.state is PlanState.EXECUTING  # plan mode is left
    assert state.guarded.permissions.mode is Mode.ACCEPT_EDITS
    assert "Plan mode is over" in str(state.agent.history[-1])  # and the model is told
    assert (await command(state, "/permissions plan")).startswith("mode: plan\n")
    assert state.guarded.plan.state is PlanState.PLANNING  # chapter 16's plan mode, entered
    assert state.agent.history[-1] == plan_mode_message()
    assert state.guarded.permissions.mode is Mode.ACCEPT_EDITS  # kept for afterwards
    # Shift+Tab: default, acceptEdits, plan, and round again; any other mode goes to default.
    assert [next_mode(state) for _ in range(4)] == ["default", "acceptEdits", "plan", "default"]
    await command(state, "/permissions bypassPermissions")
    assert next_mode(state) == "default"


async def test_cli_commands_registered_later_appear_in_help_and_run(tmp_path: Path) -> None:
    state = app_state(tmp_path)
    commands = default_commands()
    ran: list[str] = []

    @commands.register("/stats", "show some numbers about this session")
    async def stats(state: AppState, rest: str) -> None:
        ran.append(rest)

    assert await commands.dispatch("/stats  details ", state) is True
    assert ran == ["details"]
    await commands.dispatch("/help", state)
    assert "/stats" in state.out.getvalue() and "some numbers about" in state.out.getvalue()
    with pytest.raises(ValueError, match="starts with /"):
        commands.register("cost", "no slash")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["x", "--max-steps", "0"], "argument --max-steps: must be at least 1, not 0"),
        (["x", "--max-steps", "many"], "argument --max-steps: expected a whole number, not 'many'"),
        (
            ["x", "--base-url", "openrouter.ai"],
            "argument --base-url: expected an http:// or https://",
        ),
        (["x", "--model", ""], "argument --model: expected a model id"),
        (["x", "--output-format", "xml"], "argument --output-format: invalid choice: 'xml'"),
        (["x", "--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_cli_every_option_is_checked_with_a_one_line_error(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        parse_arguments(arguments)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"claw: error: {message}")
    assert err.endswith(" (see claw --help)\n")


async def test_cli_slash_cost_and_compact_work_on_the_running_session(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from claw.configure import Costs
    from claw.context import ContextWindow, summarize_with
    from claw.cost import CostTracker
    from claw.events import StepUsage
    from claw.types import AssistantMessage, TokenUsage

    state = app_state(tmp_path)
    assert "chapter 17 is not written" in await command(state, "/cost")  # no session: said so
    tracker = CostTracker("test/model")
    tracker(StepUsage(1, TokenUsage(input_tokens=1234, output_tokens=56, cost=Decimal("0.0123"))))
    state.extras["claw"] = SimpleNamespace(costs=Costs(tracker, None), context=None)
    assert await command(state, "/cost") == (
        "since claw started: 1 call(s), 1,234 tokens in, 56 out · cost $0.0123\n"
    )
    assert "no context window is known" in await command(state, "/compact")
    for n in range(6):  # six turns: enough to summarise the older ones
        state.agent.history += [UserMessage(content=f"question {n}"),
                                AssistantMessage(content=f"answer {n} " * 50)]
    before = len(state.agent.history)
    summaries = MockStreamProvider(["The user asked six questions."])
    window = ContextWindow(100_000, summarize_with(summaries), keep=2)
    state.extras["claw"].context = window
    shown = await command(state, "/compact the questions")
    assert shown.startswith("(compacted: ") and shown.endswith(" tokens)\n")
    assert len(state.agent.history) < before
    assert summaries.calls[0].messages[0].text.endswith(": the questions")  # the focus went in


def test_cli_a_preview_follows_each_argument_of_the_call(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\na = 1\na = 1\nb = None  # XXXX\n")

    def preview(name: str, rows: int = 40, **arguments: Any) -> str | None:
        return change_preview(ToolCall(id="1", name=name, arguments=arguments), tmp_path, rows)

    once = preview("edit", path="app.py", old_string="a = 1", new_string="a = 2")
    assert once is not None and once.count("+a = 2") == 1, "once without replace_all"
    every = preview("edit", path="app.py", old_string="a = 1", new_string="a = 2", replace_all=True)
    assert every is not None and every.count("+a = 2") == 3 and "-a = 1" in every
    removed = preview("edit", path="app.py", old_string="b = None  # XXXX\n")  # no new_string
    assert removed is not None and removed.splitlines()[-1] == "-b = None  # XXXX"
    assert preview("edit", path="app.py", old_string="c = 3", new_string="c = 4") is None
    assert preview("edit", path="app.py", old_string="", new_string="c = 4") is None
    assert preview("edit", path="app.py", new_string="c = 4") is None, "no old_string"
    emptied = preview("write", path="app.py")  # no content: the file written empty
    assert emptied is not None
    assert emptied.splitlines()[3:] == ["-a = 1", "-a = 1", "-a = 1", "-b = None  # XXXX"]
    assert preview("write", path=7, content="x") is None, "a path that is not text"
    patch = "*** Begin Patch\n*** Add File: new.py\n+one\n+two\n+three\n*** End Patch"
    assert preview("apply_patch", rows=2, patch=patch) == (
        "*** Begin Patch\n*** Add File: new.py\n… (4 more lines)"
    )
    assert preview("apply_patch", patch="*** Begin Patch\n*** End Patch") == (
        "*** Begin Patch\n*** End Patch"
    )
    assert preview("apply_patch", input=patch) == patch, "the patch as the argument input"
    assert preview("apply_patch") is None, "no patch at all"


class Terminal(io.StringIO):
    """Standard input at a terminal: reading it would wait for someone to type."""

    def isatty(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise AssertionError("a terminal's input was read")


def test_cli_read_prompt_reads_stdin_only_when_it_is_not_a_terminal() -> None:
    assert read_prompt("hi", Terminal()) == "hi", "nothing piped: the prompt alone"
    with pytest.raises(UsageError):
        read_prompt(None, Terminal())
    piped = read_prompt("review", io.StringIO("line one  \n\n"))
    assert piped == "review\n\n<stdin>\nline one  \n</stdin>", "only the final newlines go"


def test_cli_read_prompt_refuses_a_blank_prompt_saying_it_is_empty() -> None:
    with pytest.raises(UsageError) as refused:
        read_prompt("  ", io.StringIO("data\n"))
    assert str(refused.value) == "the prompt is empty"


def test_cli_event_and_result_objects_have_the_documented_fields() -> None:
    usage = TokenUsage(input_tokens=10, output_tokens=2, cached_input_tokens=4, reasoning_tokens=1)
    usage_fields = {
        "input_tokens": 10,
        "output_tokens": 2,
        "cached_input_tokens": 4,
        "reasoning_tokens": 1,
    }
    assert event_object(TextDelta("Hel")) == {"type": "text", "text": "Hel"}
    said = AssistantText(2, "Hello")
    assert event_object(said) == {"type": "assistant", "step": 2, "text": "Hello"}
    called = ToolCalled(1, "c1", "read", {"path": "a.py"})
    assert event_object(called) == {
        "type": "tool_use",
        "step": 1,
        "id": "c1",
        "name": "read",
        "input": {"path": "a.py"},
    }
    result = ToolResult(1, "c1", "read", "no such file", True, 0.5)
    assert event_object(result) == {
        "type": "tool_result",
        "step": 1,
        "tool_use_id": "c1",
        "name": "read",
        "content": "no such file",
        "is_error": True,
    }
    assert event_object(StepUsage(3, usage)) == {"type": "usage", "step": 3, "usage": usage_fields}
    priced = TokenUsage(input_tokens=10, output_tokens=2, cost=Decimal("0.0123"))
    stuck = result_object(RunFinished(Finish.STUCK, 4, "gave up", priced), 1500, {"extra": 1})
    assert stuck["subtype"] == "error_during_execution" and stuck["is_error"] is True
    assert stuck["total_cost_usd"] == 0.0123 and stuck["extra"] == 1
    done = result_object(RunFinished(Finish.DONE, 1, "ok", usage), 20)
    assert (done["subtype"], done["total_cost_usd"]) == ("success", None)
    assert done["usage"] == usage_fields


async def test_cli_ctrl_c_keeps_the_partial_answer_in_the_conversation_marked_interrupted(
    tmp_path: Path,
) -> None:
    import asyncio
    from collections.abc import AsyncIterator

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from claw.repl import Asker, Repl
    from claw.types import AssistantMessage

    class Stalls:
        """Streams the start of an answer; then Ctrl-C comes (``Repl.on_signal`` cancels)."""

        model = "test/model"

        async def stream(self, messages: Any, tools: Any) -> AsyncIterator[TextDelta]:
            yield TextDelta("Let me think ")
            yield TextDelta("about this")
            agent.cancel()
            await asyncio.Event().wait()  # nothing more comes

    agent = Agent(Stalls(), system="You are claw.")  # type: ignore[arg-type]
    state = AppState(agent, io.StringIO(), start=list(agent.history))
    screen = io.StringIO()
    with create_pipe_input() as typed, create_app_session(input=typed, output=DummyOutput()):
        repl = Repl(state, default_commands(), Console(file=screen), io.StringIO(), Asker())
        finished = await repl.turn("Explain everything.")
        assert finished is not None and finished.reason is Finish.CANCELLED
        assert "Let me think about this" in screen.getvalue()  # shown as it came
        # ... and kept: the next prompt is sent after it, marked as interrupted.
        kept = AssistantMessage(content="Let me think about this\n\n[interrupted by the user]")
        assert agent.history[-1] == kept
        agent.provider = MockStreamProvider(["Short: 42."])
        await repl.turn("Just the answer.")
    sent = agent.provider.calls[0].messages
    assert [type(m).__name__ for m in sent] == [
        "SystemMessage", "UserMessage", "AssistantMessage", "UserMessage"
    ]
    assert sent[2].text.startswith("Let me think about this")


async def test_cli_a_tool_running_over_a_second_gets_a_line_with_its_time_until_it_ends() -> None:
    import asyncio

    from loop_clock import LoopClock

    from claw.render import SPINNER, RunView, still_running

    assert still_running(["bash"], 1.9) == "⠙ bash running · 1 s"  # whole seconds
    assert still_running(["read", "grep"], 12.0) == f"{SPINNER[2]} 2 tools running · 12 s"
    clock = LoopClock.install()  # the loop's clock, moved by hand: no real second passes
    screen = io.StringIO()
    view = RunView(Console(file=screen, force_terminal=True, width=80, color_system=None))

    def shown() -> str:
        return screen.getvalue()

    async def later(seconds: float) -> None:
        await clock.advance(seconds)
        await asyncio.sleep(0)  # the timers now due run after this task's own wake-up

    view.show(ToolCalled(1, "b1", "bash", {"command": "make test"}))
    await later(0.9)
    assert "running" not in shown()  # under a second: only the call's own line
    await later(0.2)
    assert "bash running · 1 s" in shown()
    await later(2)
    assert "bash running · 3 s" in shown()  # redrawn in place as the time goes
    with view.waiting.held():  # a question is asked: no line, and the time starts again
        await later(5)
        assert "running · 8 s" not in shown() and view.waiting.live is None
    await later(1.1)
    assert "bash running · 1 s" in shown()[shown().rindex("3 s") :]
    view.show(ToolResult(1, "b1", "bash", "ok", False, 9.0))
    after = len(shown())
    await later(5)
    assert "running" not in shown()[after:]  # the tool ended: the line is gone for good
    assert view.waiting.timer is None and view.waiting.live is None


@pytest.mark.timeout(30)  # a claw that waited for the open pipe below would hang: fail instead
def test_cli_a_prompt_without_p_adds_what_was_piped_in_and_never_waits_for_more(
    server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from claw_command import says

    from claw.main import main

    def claw_with_stdin(fd: int, prompt: str) -> int:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
        with os.fdopen(fd) as stdin:  # a real pipe: what a shell gives `echo ... | claw`
            monkeypatch.setattr("sys.stdin", stdin)
            arguments = [prompt, "--unguarded", "--model", "test/model"]
            return main([*arguments, "--base-url", server.base_url])

    # The one-shot run uses your read_prompt, as print mode does (before this chapter, claw
    # leaves standard input alone).
    assert read_prompt("Summarize.", io.StringIO("")) == "Summarize."
    server.add(says("Two lines."), says("Hello."))
    reader, writer = os.pipe()
    os.write(writer, b"line one\nline two\n")
    os.close(writer)  # `echo` is done: the end of the input is there too
    assert claw_with_stdin(reader, "Summarize.") == 0
    sent = server.requests[0].json["messages"][-1]["content"]
    assert sent == "Summarize.\n\n<stdin>\nline one\nline two\n</stdin>"

    reader, writer = os.pipe()  # open, and nothing written: claw does not wait for it
    try:
        assert claw_with_stdin(reader, "Say hello.") == 0
    finally:
        os.close(writer)
    assert server.requests[1].json["messages"][-1]["content"] == "Say hello."

    reader, writer = os.pipe()
    os.close(writer)
    assert claw_with_stdin(reader, "  ") == 2  # a blank prompt: a usage error, as with -p
    assert len(server.requests) == 2
