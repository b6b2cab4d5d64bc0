"""A memory file on disk: the exact SQLite schema it must hold, the checks a file passes before
SQLite opens it, and the bounds every statement on it runs under (``MemoryStore`` applies them).
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from functools import cache
from pathlib import Path

from ..errors import HarnessError

SCHEMA_VERSION = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS triples (
    id INTEGER PRIMARY KEY,
    key TEXT UNIQUE NOT NULL,
    problem TEXT NOT NULL,
    solution TEXT NOT NULL,
    action TEXT NOT NULL,
    signature TEXT NOT NULL DEFAULT '',
    error_type TEXT,
    source TEXT NOT NULL DEFAULT 'offline',
    seen INTEGER NOT NULL DEFAULT 1,
    retrieved INTEGER NOT NULL DEFAULT 0,
    used INTEGER NOT NULL DEFAULT 0,
    helped INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS provenance (
    triple_id INTEGER NOT NULL REFERENCES triples(id),
    case_id TEXT, run TEXT, agent TEXT, model TEXT, repository TEXT, project TEXT,
    UNIQUE (triple_id, case_id, run)
);
CREATE INDEX IF NOT EXISTS provenance_project ON provenance(project);
CREATE VIRTUAL TABLE IF NOT EXISTS triples_fts USING fts5(problem, solution, action, signature);
CREATE TABLE IF NOT EXISTS embeddings (
    triple_id INTEGER NOT NULL REFERENCES triples(id),
    model TEXT NOT NULL,
    vector TEXT NOT NULL,
    PRIMARY KEY (triple_id, model)
);
"""

# FTS5 keeps its index in these plain tables; their CREATE text is FTS5's own and may differ
# between SQLite versions, so they are accepted by name (as plain tables, never views).
FTS_SHADOWS = frozenset(
    f"triples_fts_{part}" for part in ("data", "idx", "content", "docsize", "config")
)
# ANALYZE's statistics: they steer the query planner only, and the step cap bounds any plan.
STATISTICS = re.compile(r"sqlite_stat\d")

# SQLite's VM instructions between two calls of the progress handler, and the calls one
# statement may take: about 50 million instructions, a second or two. A real memory file's
# largest statement (every triple for ``show``) takes a small fraction of it. Without a cap a
# recursive view ran until killed, and no Python signal handler (the SIGTERM that ends an
# agent's turn) runs while SQLite's C loop does.
PROGRESS_EVERY = 1000
MAX_PROGRESS_CALLS = 50_000
# Nothing this project writes comes near these: a bigger file or value is not one of its memory
# files, and reading it whole would take the machine's memory.
MAX_FILE_BYTES = 1 << 30
MAX_VALUE_BYTES = 16 << 20
# How long a statement waits for another process's lock (a ``memory build`` writing the file)
# before the file is reported as locked, instead of waiting forever.
BUSY_SECONDS = 10.0
# SQLite ids are signed 64-bit: a larger Python int cannot even be bound as a parameter.
MAX_ID = (1 << 63) - 1
_HEADER = b"SQLite format 3\x00"


class MemoryFileError(HarnessError):
    """A memory file that cannot be used: absent, not a file, not SQLite, damaged, of another
    schema, or a query on it that ran past its bound. A harness error: the item that needed it
    is an *error*, not the agent's failure."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"memory file {path}: {reason}")


@cache
def expected_schema() -> dict[str, tuple[str, str | None, str]]:
    """``name: (type, CREATE text, what to say when it differs)`` of every object ``SCHEMA``
    makes, as SQLite itself records them."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        rows = db.execute("SELECT type, name, sql FROM sqlite_schema").fetchall()
        expected = {}
        for kind, name, sql in rows:
            if name in FTS_SHADOWS:
                continue
            said = f"{kind} {name!r} is not a memory file's"
            if kind == "table" and not sql.upper().startswith("CREATE VIRTUAL"):
                columns = db.execute(f"PRAGMA table_info({name})").fetchall()
                said += ": expected the columns " + ", ".join(f"{c[1]} {c[2]}" for c in columns)
            elif kind == "table":
                said += f": expected {squeeze(sql)}"
            expected[name] = (kind, squeeze(sql), said)
    finally:
        db.close()
    return expected


def squeeze(sql: str | None) -> str | None:
    return " ".join(sql.split()) if sql is not None else None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def check_file(path: Path, *, writing: bool, create: bool) -> bool:
    """Whether ``path`` holds a database (``False``: absent or empty, so a new one is made);
    ``MemoryFileError`` for anything but a regular SQLite file of a sane size.

    Opened without blocking and judged on the open descriptor: a FIFO never blocks this, and
    SQLite opens the file only after it passed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        if path.is_symlink():
            raise MemoryFileError(path, "a symbolic link to nothing") from None
        if create:
            return False
        raise MemoryFileError(path, "no such file") from None
    except OSError as exc:
        raise MemoryFileError(path, exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MemoryFileError(path, f"{_kind(info.st_mode)}; expected a SQLite file")
        if info.st_size == 0:
            return False
        if info.st_size > MAX_FILE_BYTES:
            raise MemoryFileError(
                path, f"{info.st_size} bytes, more than a memory file's {MAX_FILE_BYTES}"
            )
        header = os.pread(fd, 100, 0)
    finally:
        os.close(fd)
    # The bytes themselves are never quoted: the file may be any file on the host.
    if not header.startswith(_HEADER):
        raise MemoryFileError(path, "not a SQLite database (no SQLite header)")
    if len(header) < 100:
        raise MemoryFileError(path, f"truncated: {info.st_size} bytes, shorter than a header")
    if header[18] == 2 and not writing:
        # Reading a WAL file makes SQLite create its -wal and -shm files beside it; this
        # project writes rollback-journal files, so such a file is not one of its own.
        raise MemoryFileError(
            path, "in WAL journal mode; a memory file is read without writing beside it"
        )
    return True


def file_uri(path: Path, mode: str) -> str:
    """``path`` as a SQLite URI: every character of the name percent-quoted, so a name holding
    ``?mode=rwc`` or ``#`` is a name, never a parameter."""
    return f"{Path(os.path.abspath(path)).as_uri()}?mode={mode}"
