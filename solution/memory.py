"""claw's long-term memory: short notes the model keeps across sessions, in an SQLite database.

``MemoryStore`` keeps each memory as one row of one table in one file (``~/.claw/memory.db``
for the ``claw`` command), with a scope: a **project** memory is seen only in the project that
made it, a **user** memory in every project of this user. ``recall`` finds memories by the
words they contain, with SQLite's full-text search (FTS5) when the build of SQLite has it, and
with ``LIKE`` otherwise.

The rule that shapes this module: a memory that ``remember`` reported as kept is kept, whatever
happens next. Two claw processes may write at the same moment, and either may be killed half
way; so every write is one transaction of a real database, in write-ahead-log mode, committed
to disk before ``remember`` returns. A JSON file rewritten by each process cannot promise that
(the chapter shows it losing an update).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .private import private_file, private_folder

MEMORY_FILE = Path("memory.db")
"""Where the ``claw`` command keeps the memory, relative to claw's own folder (``claw_home``)."""

SIDE_FILES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database ``memory.db``: ``memory.db-wal`` and so on."""

BUSY_TIMEOUT_MS = 30_000
"""How long a write waits for another process's write to finish before it gives up."""


class Scope(StrEnum):
    """Who a memory is for."""

    PROJECT = "project"
    """This project only (the default)."""
    USER = "user"
    """This user, in every project."""


@dataclass(frozen=True)
class Memory:
    """One remembered note."""

    id: int
    text: str
    scope: Scope
    created: float
    """Seconds since the epoch (``time.time()``) when it was remembered."""


# --8<-- [start:schema]
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memories (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL CHECK (scope IN ('project', 'user')),
        project TEXT NOT NULL,
        text TEXT NOT NULL,
        created REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS memories_by_project ON memories (scope, project)",
)
"""The table of memories. ``project`` is the project's real path; ``""`` for a user memory."""

FTS_SCHEMA = (
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts
        USING fts5(text, content='memories', content_rowid='id')""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END""",
)
"""The full-text index of the memories' text, kept up to date by triggers inside the database,
so every writer keeps it right, in the same transaction as the row."""
# --8<-- [end:schema]


def has_fts5(connection: sqlite3.Connection) -> bool:
    """Whether this build of SQLite has the FTS5 extension (most do; some are built without)."""
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    connection.execute("DROP TABLE temp.fts5_probe")
    return True


def connect(path: Path | str) -> sqlite3.Connection:
    """Open the database at ``path`` for one process: private, WAL mode, every commit on disk.

    Its folder is mode 700 and its files 600 (``private.py``): the memory is the user's alone.

    ``isolation_level=None`` leaves transactions to us (``BEGIN IMMEDIATE`` ... ``COMMIT``).
    WAL lets readers go on while one process writes; ``synchronous=FULL`` syncs the log at
    every commit, so a committed memory survives a crash of the machine too, not only of the
    process; the busy timeout makes a second writer wait its turn instead of failing.
    """
    # region ch20: private folder and files; sqlite3.connect with autocommit; WAL, FULL
    # more: private_folder(parent); private_file(path), and SIDE_FILES create=False; PRAGMAs
    database = Path(path)
    private_folder(database.parent)
    private_file(database)  # SQLite gives the -wal and -shm files it makes this file's mode
    for suffix in SIDE_FILES:  # ... but leaves one an older claw made as it is
        private_file(database.with_name(database.name + suffix), create=False)
    connection = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    return connection
    # endregion


def fts_query(text: str) -> str:
    """``text`` as an FTS5 query that matches any of its words, taken literally.

    FTS5 has a query language (``AND``, ``OR``, ``NOT``, ``NEAR(...)``, ``*``, ``^``,
    ``column:``, quotes, parentheses); the model's words must not be read as it. Each word
    becomes a string in double quotes, with a ``"`` inside doubled, and the strings are joined
    with ``OR``. So ``salt AND x`` becomes ``"salt" OR "AND" OR "x"``, and the word ``"x``
    becomes a string whose inner quote is doubled. Empty for no words.
    A NUL character ends a string for FTS5's parser ("unterminated string"), so it separates
    words, as a space does.
    """
    # region ch20: NUL as a space; split; wrap each word in double quotes, doubling any inside
    # more: '"' + word.replace('"', '""') + '"'; " OR ".join(...)
    words = text.replace("\0", " ").split()
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
    # endregion


def like_pattern(word: str) -> str:
    r"""A ``LIKE`` pattern (with ``ESCAPE '\'``) that matches text containing ``word`` as is.

    ``%`` and ``_`` are ``LIKE``'s wildcards and ``\`` is the escape character, so each of
    them in ``word`` gets a ``\`` in front: ``50%_off`` becomes ``%50\%\_off%``.
    """
    # region ch20: escape \ first, then % and _, and put the word between two %
    # more: word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
    # endregion


class MemoryStore:
    """The memories of one user, as seen from one project.

    >>> store = MemoryStore(private.claw_home() / MEMORY_FILE, project=Path.cwd())
    >>> store.remember("The tests need a running Postgres: make db first.")
    >>> [memory.text for memory in store.recall("postgres")]
    """

    def __init__(
        self, path: Path | str, *, project: Path | str, full_text: bool | None = None
    ) -> None:
        """Memories in the database file ``path``, for the project in folder ``project``.

        ``full_text`` chooses the search: ``None`` uses FTS5 when SQLite has it, ``False``
        always uses ``LIKE`` (the fallback, forced). The database is opened on first use.
        """
        self.path = Path(path)
        self.project = os.path.realpath(project)
        self.full_text = full_text
        self._connection: sqlite3.Connection | None = None
        self.lock = threading.Lock()
        """Held by whoever uses the connection from a worker thread (the memory tools)."""

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection, with the tables made if they are missing (on first use)."""
        if self._connection is None:
            connection = connect(self.path)
            if self.full_text is None:
                self.full_text = has_fts5(connection)
            connection.execute("BEGIN IMMEDIATE")  # two first uses at once make them once
            try:
                for statement in SCHEMA + (FTS_SCHEMA if self.full_text else ()):
                    connection.execute(statement)
            except BaseException:
                connection.execute("ROLLBACK")
                connection.close()
                raise
            connection.execute("COMMIT")
            self._connection = connection
        return self._connection

    def remember(self, text: str, scope: Scope = Scope.PROJECT) -> Memory:
        """Keep ``text`` in ``scope``; when this returns, the memory is committed to disk.

        The text is kept as given, without the spaces around it; blank text is a ``ValueError``.
        """
        # region ch20: strip; blank: ValueError; one INSERT in its own committed transaction
        # more: project = self.project for PROJECT, "" for USER; cursor.lastrowid is the id
        text = text.strip()
        if not text:
            raise ValueError("there is nothing to remember: the text is blank")
        project = self.project if scope is Scope.PROJECT else ""
        created = time.time()
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO memories (scope, project, text, created) VALUES (?, ?, ?, ?)",
                (str(scope), project, text, created),
            )
        assert cursor.lastrowid is not None
        return Memory(cursor.lastrowid, text, scope, created)
        # endregion

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` runs its body in one ``BEGIN IMMEDIATE`` transaction."""
        return _Transaction(self.db)

    def recall(self, query: str, limit: int = 10) -> list[Memory]:
        """The memories of this project and of the user that contain any word of ``query``.

        Best matches first: with FTS5, by its ``bm25`` rank; with ``LIKE``, by how many of the
        words a memory contains. Newer first among equals. No words: no memories.
        """
        # region ch20: no words: []; FTS5: MATCH fts_query ORDER BY rank; else LIKE per word
        # more: JOIN memories_fts ON rowid = id; WHERE (scope = 'user' OR project = ?)
        words = query.replace("\0", " ").split()  # NUL separates words, as in fts_query
        if not words:
            return []
        visible = "(m.scope = 'user' OR m.project = ?)"
        db = self.db  # opens the database, and settles full_text
        if self.full_text:
            rows = db.execute(
                "SELECT m.id, m.text, m.scope, m.created FROM memories_fts"
                " JOIN memories AS m ON m.id = memories_fts.rowid"
                f" WHERE memories_fts MATCH ? AND {visible}"
                " ORDER BY memories_fts.rank, m.id DESC LIMIT ?",
                (fts_query(query), self.project, limit),
            ).fetchall()
        else:
            hits = " + ".join(["(m.text LIKE ? ESCAPE '\\')"] * len(words))
            patterns = [like_pattern(word) for word in words]
            rows = db.execute(
                f"SELECT m.id, m.text, m.scope, m.created FROM memories AS m"
                f" WHERE ({hits}) > 0 AND {visible}"
                f" ORDER BY ({hits}) DESC, m.id DESC LIMIT ?",
                (*patterns, self.project, *patterns, limit),
            ).fetchall()
        return [Memory(id, text, Scope(scope), created) for id, text, scope, created in rows]
        # endregion

    def all(self) -> list[Memory]:
        """Every memory this project sees (its own and the user's), oldest first."""
        rows = self.db.execute(
            "SELECT id, text, scope, created FROM memories"
            " WHERE scope = 'user' OR project = ? ORDER BY id",
            (self.project,),
        ).fetchall()
        return [Memory(id, text, Scope(scope), created) for id, text, scope, created in rows]

    def close(self) -> None:
        """Close the database (it opens again on next use)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class _Transaction:
    """``BEGIN IMMEDIATE`` on entry; ``COMMIT`` on a clean exit, ``ROLLBACK`` on an exception.

    ``IMMEDIATE`` takes the write lock at the start, so two writers queue (the busy timeout)
    instead of both reading and then one failing with "database is locked" at its write.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        self.connection.execute("ROLLBACK" if kind is not None else "COMMIT")
