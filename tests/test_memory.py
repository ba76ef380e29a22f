"""ch20 · Long-term memory: ``remember`` and ``recall`` in an SQLite database.

Both searches (FTS5, and the ``LIKE`` fallback, forced), scopes, hostile queries (and a
Hypothesis property: no query text makes ``recall`` raise), two real processes writing at
once, a writer killed with SIGKILL in mid-stream, a JSON file's lost update next to the
database's, the tools, the permissions, and the ``claw`` command remembering across runs.
"""

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from budget import examples
from claw_command import calls, run_claw, says, tool_results
from hypothesis import given, settings
from hypothesis import strategies as st

from claw import memory as memory_module
from claw.control import Controls
from claw.memory import MemoryStore, Scope, fts_query, like_pattern
from claw.permissions import Approval, Mode, Permissions
from claw.tools.memory_tools import RecallTool, RememberTool
from claw.types import ToolCall, ToolSet
from clawbook.harness.loopback import LoopbackServer

WRITER = Path(__file__).parent / "memory_writer.py"
SEARCHES = pytest.mark.parametrize("full_text", [None, False], ids=["fts5", "like"])
HOSTILE = ['"', "AND", "OR", "NOT", "*", "NEAR(", "NEAR(a b)", "a:b", "(", ")", "^x", "-x", "'",
           "%", "_", "\\", '"unclosed', "col:*", "'; DROP TABLE memories; --"]


def store_in(tmp_path: Path, full_text: bool | None, project: str = "shop") -> MemoryStore:
    (tmp_path / project).mkdir(exist_ok=True)
    return MemoryStore(tmp_path / "memory.db", project=tmp_path / project, full_text=full_text)


def texts(memories: list[memory_module.Memory]) -> list[str]:
    return [memory.text for memory in memories]


@SEARCHES
def test_memory_remember_then_recall_finds_it_best_match_first(
    tmp_path: Path, full_text: bool | None
) -> None:
    store = store_in(tmp_path, full_text)
    store.remember("  The tests need a running Postgres: make db first.\n")
    store.remember("Deploys go through the staging Postgres database on Fridays.")
    store.remember("Use ruff, never black.")

    found = store.recall("postgres tests")

    assert texts(found) == [
        "The tests need a running Postgres: make db first.",  # both words, and stripped
        "Deploys go through the staging Postgres database on Fridays.",
    ]
    assert store.recall("   ") == []
    assert texts(store.recall("RUFF")) == ["Use ruff, never black."]
    assert store.full_text is (full_text is None and memory_module.has_fts5(store.db))


def test_memory_without_fts5_the_like_fallback_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_module, "has_fts5", lambda connection: False)
    store = store_in(tmp_path, None)
    store.remember("The cache lives in /var/cache/shop.")

    assert texts(store.recall("cache")) == ["The cache lives in /var/cache/shop."]
    assert store.full_text is False
    tables = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master")}
    assert "memories" in tables and "memories_fts" not in tables


@SEARCHES
def test_memory_project_memories_are_private_user_memories_are_shared(
    tmp_path: Path, full_text: bool | None
) -> None:
    shop = store_in(tmp_path, full_text, "shop")
    blog = store_in(tmp_path, full_text, "blog")
    shop.remember("The shop's tests need Redis.")
    shop.remember("The user writes British English.", Scope.USER)
    blog.remember("The blog's tests need nothing.")

    assert sorted(texts(blog.recall("tests English"))) == [
        "The blog's tests need nothing.",
        "The user writes British English.",
    ]
    assert texts(shop.recall("tests")) == ["The shop's tests need Redis."]
    assert [(m.text, m.scope) for m in blog.all()] == [
        ("The user writes British English.", Scope.USER),
        ("The blog's tests need nothing.", Scope.PROJECT),
    ]


@SEARCHES
def test_memory_recall_gives_back_the_memory_remember_returned(
    tmp_path: Path, full_text: bool | None
) -> None:
    store = store_in(tmp_path, full_text)
    kept = store.remember("Run make db before the tests.")
    mine = store.remember("The user writes British English.", Scope.USER)

    assert store.recall("tests") == [kept], "the same id, text, scope and time"
    assert store.recall("nothing\0tests") == [kept], "a NUL separates two words"
    projects = dict(store.db.execute("SELECT id, project FROM memories").fetchall())
    assert projects[mine.id] == "" and projects[kept.id] != "", "a user memory has no project"
    assert memory_module.connect(tmp_path / "new" / "memory.db").isolation_level is None


async def test_memory_recall_tool_answers_one_line_a_memory_up_to_its_limit(
    tmp_path: Path,
) -> None:
    store = store_in(tmp_path, None)
    for n in range(3):
        store.remember(f"Note {n} about the tests.")
    recall = RecallTool(store)

    every = (await recall.run({"query": "tests"})).content.splitlines()
    one = (await recall.run({"query": "tests", "limit": 1})).content.splitlines()
    store.db.execute("DROP TABLE memories")
    broken = await recall.run({"query": "tests"})

    assert len(every) == 3 and all(line.startswith("#") for line in every)
    assert len(one) == 1 and one[0] in every
    assert broken.is_error and broken.content.startswith("the memory could not be searched: ")


@pytest.fixture(scope="module", params=[None, False], ids=["fts5", "like"])
def hostile_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MemoryStore]:
    """Four memories in one store for each search, shared by every hostile query (recall reads)."""
    store = store_in(tmp_path_factory.mktemp("hostile"), request.param)
    for text in ("salt AND pepper", "call NEAR(a b) for proximity", "50% off, first_name only",
                 "plain text here"):
        store.remember(text)
    yield store
    store.close()


@pytest.mark.parametrize("query", HOSTILE)
def test_memory_hostile_queries_are_taken_literally_and_never_crash(
    hostile_store: MemoryStore, query: str
) -> None:
    found = texts(hostile_store.recall(query))

    assert "plain text here" not in found  # no query here is a wildcard for everything
    if query in ("AND", "NEAR("):
        assert found[0] == {"AND": "salt AND pepper", "NEAR(": "call NEAR(a b) for proximity"}[
            query
        ]
    if query in ("%", "_") and hostile_store.full_text is False:
        assert found == ["50% off, first_name only"]


def test_memory_fts_query_and_like_pattern_quote_the_models_words() -> None:
    assert fts_query('salt AND "x') == '"salt" OR "AND" OR """x"'
    assert fts_query(" \x00 ") == ""
    assert fts_query("a\x00b") == "\"a\" OR \"b\""
    assert like_pattern("50%_off\\") == "%50\\%\\_off\\\\%"


@SEARCHES
def test_memory_no_query_text_makes_recall_raise(tmp_path: Path, full_text: bool | None) -> None:
    # One store for every example: recall only reads, so each query meets the same two memories.
    store = store_in(tmp_path, full_text)
    store.remember("alpha beta")
    store.remember("gamma % delta")

    @settings(max_examples=examples(50))
    @given(query=st.text(max_size=30))
    def recall_never_raises(query: str) -> None:
        found = store.recall(query)

        assert {m.text for m in found} <= {"alpha beta", "gamma % delta"}
        if not query.replace("\x00", " ").split():
            assert found == []

    recall_never_raises()


def test_memory_a_json_file_loses_an_update_the_database_does_not(tmp_path: Path) -> None:
    # Two claw processes, each keeping its memories in one JSON file: each reads the file,
    # adds its note, and writes the file back. Interleaved like this, one note is gone.
    notes = tmp_path / "memory.json"
    notes.write_text("[]")
    first = json.loads(notes.read_text())
    second = json.loads(notes.read_text())
    first.append("from the first process")
    notes.write_text(json.dumps(first))
    second.append("from the second process")
    notes.write_text(json.dumps(second))
    assert json.loads(notes.read_text()) == ["from the second process"]  # the lost update

    # The same two writers with the database: two connections, both open before either writes.
    one = store_in(tmp_path, None)
    two = store_in(tmp_path, None)
    assert one.all() == two.all() == []
    one.remember("from the first process")
    two.remember("from the second process")
    assert texts(one.all()) == ["from the first process", "from the second process"]


def start_writer(database: Path, project: Path, tag: str, count: int) -> subprocess.Popen[str]:
    """A ``memory_writer.py`` process; it has opened the database once it says ``ready``."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(database), str(project), tag, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    ready = writer.stdout.readline()
    assert ready == "ready\n", writer.communicate()[1]
    return writer


@pytest.mark.timeout(60)
def test_memory_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    store = store_in(tmp_path, None)
    store.remember("made before the writers start")
    count = 50
    writers = [start_writer(store.path, tmp_path / "shop", tag, count) for tag in ("A", "B")]
    for writer in writers:  # both are ready: they start writing together
        assert writer.stdin is not None
        writer.stdin.close()
    for writer in writers:
        assert writer.stdout is not None and writer.stderr is not None
        with writer:  # closes the pipes
            out, err = writer.stdout.read(), writer.stderr.read()  # a traceback fits in a pipe
        assert writer.wait(timeout=50) == 0, err
        assert out.split() == [str(n) for n in range(count)]

    kept = texts(store.all())

    assert len(kept) == 1 + 2 * count
    assert set(kept) == {"made before the writers start"} | {
        f"{tag} {n}" for tag in ("A", "B") for n in range(count)
    }
    assert store.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.timeout(60)
def test_memory_a_writer_killed_mid_stream_loses_no_committed_memory(tmp_path: Path) -> None:
    store = store_in(tmp_path, None)
    store.remember("made before the writer starts")
    writer = start_writer(store.path, tmp_path / "shop", "K", 0)
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.close()
    committed = []
    while len(committed) < 20:
        line = writer.stdout.readline()
        assert line, writer.stderr.read() if writer.stderr else "the writer stopped"
        committed.append(int(line))
    os.kill(writer.pid, signal.SIGKILL)  # no cleanup, no atexit, nothing flushed
    writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL

    again = store_in(tmp_path, None)
    kept = set(texts(again.all()))

    assert {f"K {n}" for n in committed} <= kept
    assert "made before the writer starts" in kept
    assert again.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    numbers = sorted(int(text.split()[1]) for text in kept if text.startswith("K "))
    assert numbers == list(range(len(numbers)))  # in order, none torn, at most one uncounted


async def test_memory_tools_keep_and_find_memories(tmp_path: Path) -> None:
    store = store_in(tmp_path, None)
    remember, recall = RememberTool(store), RecallTool(store)

    kept = await remember.run({"text": "Run make db before the tests.", "scope": "user"})
    found = await recall.run({"query": "tests"})
    missing = await recall.run({"query": "kubernetes"})
    blank = await remember.run({"text": "   "})
    bad = await remember.run({"text": "x", "scope": "team"})

    assert kept.content == "Remembered #1 (user) Run make db before the tests."
    assert found.content == "#1 (user) Run make db before the tests."
    assert (missing.is_error, missing.content) == (False, "no memory matches 'kubernetes'")
    assert blank.is_error
    assert blank.content == (
        "nothing was remembered: there is nothing to remember: the text is blank"
    )
    assert bad.is_error and bad.content.startswith("invalid arguments for remember:")
    assert len(store.all()) == 1


@pytest.mark.parametrize(
    ("mode", "asked", "runs"),
    [
        (Mode.DEFAULT, True, True),
        (Mode.ACCEPT_EDITS, False, True),
        (Mode.PLAN, False, False),
        (Mode.DONT_ASK, False, False),
        (Mode.BYPASS, False, True),
    ],
)
async def test_memory_remember_is_an_edit_to_the_permissions_recall_is_never_asked(
    tmp_path: Path, mode: Mode, asked: bool, runs: bool
) -> None:
    questions: list[str] = []

    async def approver(call: ToolCall, why: str) -> Approval:
        questions.append(call.name)
        return Approval.ONCE

    store = store_in(tmp_path, None)
    store.remember("an older memory about tests")
    tools = ToolSet([RememberTool(store), RecallTool(store)])
    gate = Controls(tools, checks=[Permissions(tmp_path, mode=mode, approve=approver).check])

    kept = await gate(ToolCall(id="c1", name="remember", arguments={"text": "new tests rule"}))
    found = await gate(ToolCall(id="c2", name="recall", arguments={"query": "tests"}))

    assert questions == (["remember"] if asked else [])
    assert kept.is_error is not runs
    assert ("new tests rule" in texts(store.all())) is runs
    assert not found.is_error and "an older memory about tests" in found.content


def test_memory_claw_command_remembers_across_runs_in_the_users_home(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, claw_config_dir: Path
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "shop"
    project.mkdir()
    server.add(
        calls("remember", {"text": "This project's tests need Redis running."}),
        says("Noted."),
        calls("recall", {"query": "redis"}, call_id="call-2"),
        says("Start Redis first."),
    )

    assert run_claw(server, project, monkeypatch, "Remember: tests need Redis.",
                    "--permission-mode", "acceptEdits") == 0
    assert run_claw(server, project, monkeypatch, "What do the tests need?") == 0

    kept, found = tool_results(server)
    assert kept == "Remembered #1 (project) This project's tests need Redis running."
    assert found == "#1 (project) This project's tests need Redis running."
    database = claw_config_dir / "memory.db"  # claw's own folder: CLAW_CONFIG_DIR, or ~/.claw
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT project FROM memories").fetchall() == [
            (os.path.realpath(project),)
        ]


def modes(*paths: Path) -> list[str]:
    """The permission bits of ``paths``, in octal: ``["700", "600"]``."""
    return [f"{stat.S_IMODE(path.stat().st_mode):03o}" for path in paths]


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """A permissive umask for the test (restored after): it must not make claw's files looser."""
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def test_memory_attack_the_database_its_logs_and_its_folder_are_private_whatever_the_umask(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int
) -> None:
    # Another user on the machine must not read what the model kept: a memory may hold what
    # a tool result showed it (a password, a token).
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    folder = tmp_path / "claw"  # claw's own folder, not made yet: claw makes it
    monkeypatch.setenv("CLAW_CONFIG_DIR", str(folder))
    project = tmp_path / "shop"
    project.mkdir()
    server.add(calls("remember", {"text": "The staging password is hunter2."}), says("Noted."))

    assert run_claw(server, project, monkeypatch, "Remember it.",
                    "--permission-mode", "acceptEdits") == 0
    store = MemoryStore(folder / "memory.db", project=project)
    store.remember("A second note, with the database open.")  # now the -wal and -shm exist

    assert modes(folder) == ["700"]
    database = folder / "memory.db"
    logs = [database.with_name(f"memory.db{suffix}") for suffix in ("-wal", "-shm")]
    assert modes(database, *logs) == ["600", "600", "600"]
    assert not database.with_name("memory.db-journal").exists()  # WAL makes none: none made
    assert "hunter2" in texts(store.recall("password"))[0]
    store.close()


def test_memory_attack_an_older_loose_database_is_made_private_saying_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "home" / ".claw"
    older = MemoryStore(folder / "memory.db", project=tmp_path)  # stays open: its -wal stays
    older.remember("The deploy key is in the vault.")
    database = folder / "memory.db"
    database.with_name("memory.db-journal").touch()  # an empty one, as a crash can leave
    logs = ("-wal", "-shm", "-journal")
    files = [database, *(database.with_name(f"memory.db{suffix}") for suffix in logs)]
    for path in files:  # as an older claw left them, readable by everyone
        path.chmod(0o644)
    folder.chmod(0o755)
    capsys.readouterr()

    store = MemoryStore(database, project=tmp_path)
    assert texts(store.recall("deploy")) == ["The deploy key is in the vault."]  # nothing lost

    assert modes(folder, *files) == ["700", "600", "600", "600", "600"]
    said = capsys.readouterr().err.splitlines()
    assert said == [
        f"claw: {path} was open to other users (mode {old}); claw made it private (mode {new})"
        for path, old, new in [(folder, "755", "700")] + [(path, "644", "600") for path in files]
    ]
    again = MemoryStore(database, project=tmp_path)
    assert again.recall("vault") and capsys.readouterr().err == ""  # said once
    for each in (older, store, again):
        each.close()
