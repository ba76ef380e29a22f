"""ch20 · The ``ask_user`` tool: a question for the person, answered by a pluggable handler.

The tool with scripted answers (open questions, choices picked by number, by text or in the
user's own words, no answer), the terminal handler (stderr only, escaped, one question at a
time, nothing read without a terminal), the permissions (never asked about), and the ``claw``
command, run in this process: at a terminal it asks on stderr and reads the keyboard, and its
piped standard input is never taken for an answer.
"""

import asyncio
import io
from pathlib import Path

import pytest
from claw_command import calls, run_claw, says, tool_results

from claw.control import Controls
from claw.permissions import Approval, Mode, Permissions
from claw.tools.ask import (
    NOT_INTERACTIVE,
    AskUserTool,
    Question,
    ScriptedAnswers,
    TerminalAsker,
    no_one_to_ask,
)
from claw.types import ToolCall, ToolSet
from clawbook.harness.loopback import LoopbackServer


async def test_ask_open_question_returns_the_users_answer() -> None:
    answers = ScriptedAnswers(["  Tuesday at noon  ", "Friday"])
    tool = AskUserTool(answers)

    output = await tool.run({"question": "When is the release?"})
    second = await tool.run({"question": "And the next one?"})

    assert not output.is_error
    assert output.content == "The user answered: Tuesday at noon"
    assert second.content == "The user answered: Friday"  # the script's answers, in order
    assert answers.asked == [Question("When is the release?"), Question("And the next one?")]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("2", "The user chose: SQLite"),
        ("3", "The user chose: DuckDB"),
        ("sqlite", "The user chose: SQLite"),
        ("  Postgres ", "The user chose: Postgres"),
        ("4", "The user answered in their own words: 4"),
        ("whichever is simpler", "The user answered in their own words: whichever is simpler"),
    ],
)
async def test_ask_a_choice_is_picked_by_number_or_text_else_the_own_words_count(
    reply: str, expected: str
) -> None:
    answers = ScriptedAnswers([reply])
    tool = AskUserTool(answers)

    output = await tool.run(
        {"question": "Which database?", "choices": ["Postgres", "SQLite", "DuckDB"]}
    )

    assert (output.is_error, output.content) == (False, expected)
    assert answers.asked == [Question("Which database?", ("Postgres", "SQLite", "DuckDB"))]


async def test_ask_no_one_to_ask_is_an_error_result_that_says_so() -> None:
    tool = AskUserTool(no_one_to_ask)

    output = await tool.run({"question": "Delete the old branch?", "choices": ["yes", "no"]})

    assert output.is_error
    assert output.content.startswith(NOT_INTERACTIVE)
    assert "no one can answer" in output.content
    assert "decide yourself" in output.content


async def test_ask_a_blank_reply_or_an_empty_script_is_no_answer() -> None:
    answers = ScriptedAnswers(["   "])
    tool = AskUserTool(answers)

    blank = await tool.run({"question": "Name of the new module?"})
    exhausted = await tool.run({"question": "And its package?"})

    assert blank.is_error and "the user gave no answer" in blank.content
    assert exhausted.is_error and exhausted.content == (
        "the script has no answer left. Do not ask again: decide yourself, say in your answer "
        "what you assumed, and go on."
    )
    assert len(answers.asked) == 2


async def test_ask_choices_must_be_two_or_more_distinct_and_not_blank() -> None:
    answers = ScriptedAnswers(["yes"])
    tool = AskUserTool(answers)
    assert (await tool.run({"question": "Go?", "choices": ["yes", "no"]})).content == (
        "The user chose: yes"
    )

    for choices, problem in [
        (["only"], "give at least two choices, or none"),
        (["Yes", "yes"], "the choices must differ"),
        (["ok", "  "], "a choice may not be blank"),
        ([str(n) for n in range(7)], "at most 6 items"),
    ]:
        output = await tool.run({"question": "Go?", "choices": choices})
        assert output.is_error
        assert output.content.startswith("invalid arguments for ask_user:")
        assert problem in output.content
    assert (await tool.run({"question": ""})).is_error
    assert len(answers.asked) == 1  # no invalid question reached the user


async def test_ask_terminal_asker_writes_only_to_err_escaped_and_reads_the_reply() -> None:
    err = io.StringIO()
    replies = ["1"]

    async def read_line() -> str:
        return replies.pop(0)

    asker = TerminalAsker(err, read_line, is_interactive=lambda: True)
    tool = AskUserTool(asker)

    output = await tool.run(
        {"question": "Reset the \x1b[2Jscreen?", "choices": ["keep it", "wipe\r it"]}
    )

    assert output.content == "The user chose: keep it"
    shown = err.getvalue()
    assert shown.splitlines()[0] == "? claw asks: Reset the \\x1b[2Jscreen?"
    assert shown.splitlines()[1:3] == ["  1. keep it", "  2. wipe\\r it"]
    assert shown.splitlines()[3:] == ["  (a number, or your own words; Enter alone: no answer) > "]
    assert "\x1b" not in shown and "\r" not in shown


async def test_ask_terminal_asker_enter_alone_is_no_answer_and_ctrl_c_ends_the_line() -> None:
    err = io.StringIO()
    replies = ["", "  "]

    async def read_line() -> str:
        if not replies:
            raise asyncio.CancelledError  # Ctrl-C while the question waits
        return replies.pop(0)

    tool = AskUserTool(TerminalAsker(err, read_line, is_interactive=lambda: True))
    prompt = "? claw asks: Name of the module?\n  (your answer; Enter alone: no answer) > "

    for _ in range(2):
        output = await tool.run({"question": "Name of the module?"})
        assert output.is_error and output.content.startswith("the user gave no answer. ")
        assert err.getvalue() == prompt + "\n  (no answer)\n"
        err.seek(0)
        err.truncate()
    with pytest.raises(asyncio.CancelledError):
        await tool.run({"question": "Name of the module?"})
    assert err.getvalue() == prompt + "\n"  # the next output starts on a line of its own


async def test_ask_terminal_asker_without_a_terminal_reads_nothing() -> None:
    err = io.StringIO()
    reads: list[str] = []

    async def read_line() -> str:
        reads.append("read")
        return "yes, go ahead"

    tool = AskUserTool(TerminalAsker(err, read_line, is_interactive=lambda: False))

    output = await tool.run({"question": "Push to main?"})

    assert output.is_error and output.content.startswith(NOT_INTERACTIVE)
    assert reads == []  # a line piped in is data, never an answer
    assert err.getvalue() == ""


async def test_ask_two_questions_at_once_are_asked_one_after_the_other() -> None:
    err = io.StringIO()
    reading = [asyncio.Event(), asyncio.Event()]  # set when a reply is being read
    gates = [asyncio.Event(), asyncio.Event()]  # set to let that reply come
    replies = iter(["first", "second"])
    reads = 0

    async def read_line() -> str:
        nonlocal reads
        reads += 1
        reading[reads - 1].set()
        await gates[reads - 1].wait()
        return next(replies)

    async def until(event: asyncio.Event) -> None:
        """Until ``event`` is set; if the questions end first, raise what ended them."""
        waiting = asyncio.ensure_future(event.wait())
        await asyncio.wait([waiting, both], return_when=asyncio.FIRST_COMPLETED)
        if not event.is_set():
            waiting.cancel()
            await both
            raise AssertionError("the questions ended before a reply was read")

    tool = AskUserTool(TerminalAsker(err, read_line, is_interactive=lambda: True))
    both = asyncio.gather(tool.run({"question": "One?"}), tool.run({"question": "Two?"}))
    await until(reading[0])
    for _ in range(10):  # let the second call run as far as it can without an answer
        await asyncio.sleep(0)
    assert "One?" in err.getvalue() and "Two?" not in err.getvalue()  # the second waits
    assert not reading[1].is_set()
    gates[0].set()
    await until(reading[1])
    assert "Two?" in err.getvalue()
    gates[1].set()
    first, second = await both

    assert (first.content, second.content) == (
        "The user answered: first",
        "The user answered: second",
    )


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.PLAN, Mode.DONT_ASK])
async def test_ask_needs_no_approval_in_any_mode_but_a_deny_rule_holds(
    tmp_path: Path, mode: Mode
) -> None:
    async def approver(call: ToolCall, why: str) -> Approval:
        raise AssertionError(f"asked about {call.name}: {why}")

    answers = ScriptedAnswers(["blue"])
    tools = ToolSet([AskUserTool(answers)])
    call = ToolCall(id="c1", name="ask_user", arguments={"question": "Colour?"})

    allowed = Controls(tools, checks=[Permissions(tmp_path, mode=mode, approve=approver).check])
    assert (await allowed(call)).content == "The user answered: blue"

    denying = Permissions(tmp_path, mode=mode, deny=["AskUserQuestion"], approve=approver)
    refused = await Controls(tools, checks=[denying.check])(call)
    assert refused.is_error and 'the deny rule "AskUserQuestion" matches' in refused.content
    assert len(answers.asked) == 1


def test_ask_claw_command_never_takes_piped_input_for_an_answer(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "shop"
    project.mkdir()
    server.add(
        calls("ask_user", {"question": "Which database?", "choices": ["Postgres", "SQLite"]}),
        says("I will use SQLite, the simpler one."),
    )

    status = run_claw(server, project, monkeypatch, "Set up the database.", answers="Postgres\n")

    assert status == 0
    [result] = tool_results(server)
    assert result == (
        f"Error: {NOT_INTERACTIVE}. Do not ask again: decide yourself, say in your answer what "
        "you assumed, and go on."
    )
    captured = capsys.readouterr()
    assert "? claw asks" not in captured.out + captured.err  # nobody was asked
    assert "→ ask_user(question='Which database?'" in captured.out


def test_ask_claw_command_at_a_terminal_asks_on_stderr_and_reads_the_keyboard(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "shop"
    project.mkdir()
    server.add(
        calls("ask_user", {"question": "Which database?", "choices": ["Postgres", "SQLite"]}),
        says("Using SQLite."),
    )

    status = run_claw(
        server, project, monkeypatch, "Set up the database.", answers="2\n", terminal=True
    )

    assert status == 0
    assert tool_results(server) == ["The user chose: SQLite"]
    captured = capsys.readouterr()
    [question] = [line for line in captured.err.splitlines() if "claw asks" in line]
    assert question.strip() == "? claw asks: Which database?"
    assert "  2. SQLite" in captured.err
    assert "claw asks" not in captured.out  # the question went to the terminal, not the output
    assert "Using SQLite." in captured.out
