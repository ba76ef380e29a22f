"""ch31 · ``claw view`` on sessions the ``claw`` command really recorded (loopback model).

claw runs in this process against the loopback server (``claw_command``); its transcript is
chapter 22's, and the page ``claw view`` writes is read back with ``html.parser``.
"""

import io
import stat
from pathlib import Path

import pytest
from claw_command import calls, no_fsync, run_claw, says
from viewed import Page, assert_inert

from claw.main import main
from claw.sessions import list_sessions
from clawbook.harness.loopback import (
    LoopbackServer,
    StreamReply,
    chunk,
    sse,
    text_chunks,
    usage_body,
)

no_fsync = pytest.fixture(autouse=True)(no_fsync)


def answers(text: str, usage: dict[str, object]) -> StreamReply:
    """A streamed text answer whose last chunk reports ``usage``."""
    return StreamReply(
        pieces=[
            sse(*text_chunks(text), chunk(finish_reason="stop"), chunk(choices=False, usage=usage))
        ]
    )


def edit_run(server: LoopbackServer, project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run that reads notes.txt, edits it, and answers: the transcript it left."""
    (project / "notes.txt").write_text("buy milk\nand eggs\nand tea\n")
    server.add(
        calls("read", {"path": "notes.txt"}, usage=usage_body(100, 20, cost=0.001)),
        calls(
            "edit",
            {"path": "notes.txt", "old_string": "milk", "new_string": "bread"},
            "call-2",
            usage=usage_body(130, 30, cost=0.002),
        ),
        answers("Done: milk is now bread.", usage_body(160, 8, cost=0.0005)),
    )
    assert run_claw(server, project, monkeypatch, "Change milk to bread", "--unguarded") == 0
    [session] = list_sessions(project)
    return session.path


def view(*arguments: str) -> tuple[int, str, str]:
    """``claw view ARGUMENTS...``: its exit status, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        patch.setattr("sys.stderr", err)
        status = main(["view", *arguments])
    return status, out.getvalue(), err.getvalue()


def test_view_shows_each_prompt_answer_and_tool_call_with_its_result_folded(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = edit_run(server, tmp_path, monkeypatch)

    status, out, err = view(str(transcript), "-o", str(tmp_path / "page.html"))

    assert (status, out, err) == (0, f"{tmp_path / 'page.html'}\n", "")
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    page = assert_inert(html)
    text = page.all_text()
    assert text.index("Change milk to bread") < text.index("read(path='notes.txt')")
    assert text.index("read(path='notes.txt')") < text.index("edit(path='notes.txt'")
    assert text.index("edit(path='notes.txt'") < text.index("Done: milk is now bread.")
    lines = text.split("\n")
    answer = lines.index("Done: milk is now bread.")
    assert lines[answer - 1].startswith("step 3 · ")  # the answer, in the step that gave it
    assert lines[answer + 1] == "finished: done"
    assert f"claw session {transcript.stem}" in text and str(tmp_path.resolve()) in text
    assert len(page.elements("details")) == 2  # one per call, each folded (no "open")
    assert all("open" not in attrs for attrs in page.elements("details"))
    folded = html.split("<details>")[1].split("</details>")[0]  # the read call's fold
    assert "buy milk" in folded and "</summary>" in folded
    assert folded.index("</summary>") < folded.index("buy milk")  # the result is inside


def test_view_colours_an_edits_diff_line_by_line(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = edit_run(server, tmp_path, monkeypatch)

    assert view(str(transcript), "-o", str(tmp_path / "page.html"))[0] == 0

    lines = (tmp_path / "page.html").read_text(encoding="utf-8").split("\n")
    removed = lines.index("<del>-buy milk</del>")
    assert lines[removed + 1] == "<ins>+buy bread</ins>"
    assert '<span class="hunk">@@ -1,3 +1,3 @@</span>' in lines
    header = lines.index("--- a/notes.txt")  # the headers are not marked
    assert lines[header + 1] == "+++ b/notes.txt"
    assert " and eggs" in lines  # nor is the context


def test_view_shows_tokens_and_cost_per_step_and_the_total(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = edit_run(server, tmp_path, monkeypatch)

    assert view(str(transcript), "-o", str(tmp_path / "page.html"))[0] == 0

    text = Page.of((tmp_path / "page.html").read_text(encoding="utf-8")).all_text()
    assert "step 1 · 100 tokens in, 20 out · $0.0010" in text
    assert "step 2 · 130 tokens in, 30 out · $0.0020" in text
    assert "step 3 · 160 tokens in, 8 out · $0.0005" in text
    assert "total: 390 tokens in, 58 out · $0.0035" in text


def test_view_without_a_session_writes_the_latest_beside_its_transcript_privately(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("First."))
    assert run_claw(server, tmp_path, monkeypatch, "the first session", "--unguarded") == 0
    server.add(says("Second."))
    assert run_claw(server, tmp_path, monkeypatch, "the second session", "--unguarded") == 0
    latest = list_sessions(tmp_path)[0].path

    status, out, err = view()

    assert (status, err) == (0, "")
    assert out == f"{latest.with_suffix('.html')}\n"
    page = latest.with_suffix(".html")
    assert "the second session" in page.read_text(encoding="utf-8")
    assert "the first session" not in page.read_text(encoding="utf-8")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600  # it holds what the tools read


def test_view_finds_a_session_by_a_prefix_of_its_id(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add(says("Hello."))
    assert run_claw(server, tmp_path, monkeypatch, "say hello", "--unguarded") == 0
    [session] = list_sessions(tmp_path)

    status, out, _ = view(session.id[:8], "-o", "hello.html")

    assert (status, out) == (0, "hello.html\n")
    assert "say hello" in (tmp_path / "hello.html").read_text(encoding="utf-8")


def test_view_a_session_that_is_not_there_is_one_line_and_status_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    status, out, err = view()
    assert (status, out) == (1, "")
    assert err.startswith("claw: no session in ") and err.endswith(" yet\n")
    assert err.count("\n") == 1 and "Traceback" not in err

    status, out, err = view(str(tmp_path / "gone.jsonl"))
    assert (status, out) == (1, "")
    assert err == f"claw: {tmp_path / 'gone.jsonl'}: no such session transcript\n"
    assert list(tmp_path.iterdir()) == []  # nothing written
