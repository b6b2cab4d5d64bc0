"""Memory files (``--memory FILE``, ``pytest-enconda memory build|show|query|credit``) made by
someone else: a SQLite file can hold views and triggers that run on every read or write, values of
any type in any column, or be no database at all. Each must end in one message naming the file
(exit status 2 on the command line, a harness error in a run), never a traceback, a hang, a
growing file, or a file created by a command that only reads."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_enconda.memory import store as memory_store
from pytest_enconda.memory.store import MemoryFileError, MemoryStore, Provenance, Triple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))

pytest_plugins = ["pytester"]

EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
EXPECTED = (MemoryFileError,)


@pytest.fixture
def command(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """This folder's ``run_command``, from its conftest as pytest loaded it (the one whose tally
    the figures report)."""
    conftest = request.config.pluginmanager.get_plugin(str(Path(__file__).with_name("conftest.py")))
    return conftest.run_command  # type: ignore[no-any-return,union-attr]


SIGNATURE = "ModuleNotFoundError: No module named 'yaml'"


def good_memory(path: Path) -> Path:
    """A memory file as ``memory build`` writes one: three triples, provenance, an embedding."""
    with MemoryStore(path) as store:
        for n, (signature, action) in enumerate(
            [
                (SIGNATURE, "pip install pyyaml"),
                ("E: Unable to locate package libmagic1", "apt-get update"),
                ("error: command 'gcc' failed", "apt-get install -y gcc"),
            ]
        ):
            triple_id, _ = store.add(
                Triple(f"`x` fails: {signature}", "Root cause: missing", action, signature, "E1"),
                Provenance(f"case-{n}", "run", "heuristic", "", f"acme/project{n}"),
            )
            store.db.execute(
                "INSERT INTO embeddings VALUES (?, 'emb', ?)", (triple_id, json.dumps([1.0, n]))
            )
        store.db.commit()
    return path


def read_everything(path: Path) -> dict[str, Any]:
    """Every read the commands and the agents make, and their results as JSON (what ``show
    --json`` prints)."""
    with MemoryStore(path, readonly=True) as store:
        found = {
            "stats": store.stats(),
            "meta": store.meta(),
            "triples": [h.to_json() for h in store.all()],
            "search": [h.to_json() for h in store.search("No module named yaml", k=3)],
            "vector": [h.to_json() for h in store.search_vector([1.0, 0.0], "emb", k=3)],
            "get": store.get(1),
        }
    json.dumps(found, default=str)
    return found


def write_into(path: Path) -> None:
    """What ``memory build`` and ``memory credit`` do to a file: add, count, set meta."""
    with MemoryStore(path) as store:
        store.add(Triple("p", "s", "a", "sig"), Provenance("c", "r", "a", "m", "x/y"))
        store.count([1, 2, 1 << 63, -1], "helped")
        store.set_meta("k", "v")


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def sql(statements: str) -> Callable[[Path, Path], None]:
    """A builder: a good memory file, then ``statements`` run on it."""

    def make(path: Path, canary: Path) -> None:
        good_memory(path)
        db = sqlite3.connect(path)
        db.executescript(statements)
        db.commit()
        db.close()

    return make


def raw(data: bytes) -> Callable[[Path, Path], None]:
    def make(path: Path, canary: Path) -> None:
        path.write_bytes(data)

    return make


def truncated(size: int) -> Callable[[Path, Path], None]:
    def make(path: Path, canary: Path) -> None:
        good_memory(path)
        with path.open("r+b") as handle:
            handle.truncate(size)

    return make


def huge_page_count(path: Path, canary: Path) -> None:
    """The header claims 4 billion pages and the file is a 4 GiB hole."""
    good_memory(path)
    with path.open("r+b") as handle:
        handle.seek(28)
        handle.write(b"\xff\xff\xff\xf0")
        handle.truncate(4 << 30)


def header_claims_huge_page_count(path: Path, canary: Path) -> None:
    good_memory(path)
    with path.open("r+b") as handle:
        handle.seek(28)
        handle.write(b"\xff\xff\xff\xf0")


def fifo(path: Path, canary: Path) -> None:
    os.mkfifo(path)


def link_to_canary(path: Path, canary: Path) -> None:
    path.symlink_to(canary)


def link_to_nothing(path: Path, canary: Path) -> None:
    path.symlink_to(path.parent / "absent.db")


def directory(path: Path, canary: Path) -> None:
    path.mkdir()


def wal_mode(path: Path, canary: Path) -> None:
    good_memory(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()


def bad_schema_text(path: Path, canary: Path) -> None:
    """A schema row SQLite cannot parse (written past its own guard)."""
    good_memory(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_schema SET sql = 'CREATE TABLE meta (((' WHERE name = 'meta'")
    db.commit()
    db.close()


RECURSIVE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS id, "
    "'' AS key, 'p' AS problem, 's' AS solution, 'a' AS action, '' AS signature, "
    "NULL AS error_type, '' AS source, 1 AS seen, 0 AS retrieved, 0 AS used, 0 AS helped FROM c"
)
TRIPLES_COLUMNS = (
    "id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, problem TEXT NOT NULL, "
    "solution TEXT NOT NULL, action TEXT NOT NULL, signature TEXT NOT NULL DEFAULT '', "
    "error_type TEXT, source TEXT NOT NULL DEFAULT 'offline', seen INTEGER NOT NULL DEFAULT 1, "
    "retrieved INTEGER NOT NULL DEFAULT 0, used INTEGER NOT NULL DEFAULT 0, "
    "helped INTEGER NOT NULL DEFAULT 0"
)

# name: (builder, the words its refusal says). ``None``: the file is good and must be read.
HOSTILE: dict[str, tuple[Callable[[Path, Path], None], str | None]] = {
    "recursive view named triples": (
        sql(f"DROP TABLE triples; CREATE VIEW triples AS {RECURSIVE};"),
        "holds a view, 'triples'",
    ),
    "view beside the tables": (sql(f"CREATE VIEW endless AS {RECURSIVE};"), "holds a view"),
    "trigger on insert": (
        sql(
            "CREATE TRIGGER grow AFTER INSERT ON provenance BEGIN "
            "INSERT INTO meta SELECT hex(randomblob(8)), zeroblob(1000000) "
            "FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT x FROM c); END;"
        ),
        "holds a trigger, 'grow'",
    ),
    "trigger on update": (
        sql(
            "CREATE TRIGGER loop AFTER UPDATE ON triples BEGIN "
            "UPDATE triples SET seen = seen + 1; END;"
        ),
        "holds a trigger, 'loop'",
    ),
    "rtree virtual table": (
        sql("CREATE VIRTUAL TABLE box USING rtree(id, a, b);"),
        "holds a virtual table 'box'",
    ),
    "fts index of other columns": (
        sql(
            "DROP TABLE triples_fts; "
            "CREATE VIRTUAL TABLE triples_fts USING fts5(problem, content='endless');"
        ),
        "table 'triples_fts' is not a memory file's",
    ),
    "fts4 index": (
        sql(
            "DROP TABLE triples_fts; "
            "CREATE VIRTUAL TABLE triples_fts USING fts4(problem, solution, action, signature);"
        ),
        "table 'triples_fts' is not a memory file's",
    ),
    "missing column": (
        sql("ALTER TABLE triples DROP COLUMN helped;"),
        "table 'triples' is not a memory file's: expected the columns id INTEGER",
    ),
    "extra column": (
        sql("ALTER TABLE provenance ADD COLUMN extra TEXT;"),
        "table 'provenance' is not a memory file's",
    ),
    "wrong column types": (
        sql(
            "DROP TABLE triples; CREATE TABLE triples ("
            + TRIPLES_COLUMNS.replace("problem TEXT", "problem BLOB")
            + ");"
        ),
        "table 'triples' is not a memory file's",
    ),
    "without rowid": (
        sql(f"DROP TABLE triples; CREATE TABLE triples ({TRIPLES_COLUMNS}) WITHOUT ROWID;"),
        "table 'triples' is not a memory file's",
    ),
    "missing table": (sql("DROP TABLE embeddings;"), "no table embeddings"),
    "extra table": (sql("CREATE TABLE notes (x);"), "holds a table 'notes'"),
    "expression index": (
        sql("CREATE INDEX slow ON triples (length(problem) * length(solution));"),
        "holds a index 'slow'",
    ),
    "fts shadow table as a view": (
        sql("DROP TABLE triples_fts_config; CREATE VIEW triples_fts_config AS SELECT 1 AS k;"),
        "holds a view, 'triples_fts_config'",
    ),
    "blob in a text column": (sql("UPDATE triples SET problem = x'00ff';"), "problem is a blob"),
    # A TEXT column stores a number as text; an INTEGER one keeps text and reals as they are.
    "text in a counter": (sql("UPDATE triples SET helped = 'many';"), "helped is"),
    "real in a counter": (sql("UPDATE triples SET helped = 1.5;"), "helped is a number"),
    "null where it may be": (sql("UPDATE triples SET error_type = NULL;"), None),
    "blob as a project": (sql("UPDATE provenance SET project = x'01';"), "is a blob"),
    "blob as meta value": (sql("UPDATE meta SET value = x'01';"), "is a blob"),
    "text too long to read": (
        sql("UPDATE triples SET problem = printf('%.*c', 20000000, 'x') WHERE id = 1;"),
        "too big",
    ),
    "counter overflow": (
        sql(f"UPDATE triples SET helped = {(1 << 63) - 1};"),
        "integer overflow",
    ),
    "vector not JSON": (sql("UPDATE embeddings SET vector = '[1,';"), "the embedding of triple"),
    "vector nested too deeply": (
        sql(f"UPDATE embeddings SET vector = '{'[' * 100_000}';"),
        "the embedding of triple",
    ),
    "vector of strings": (
        sql('UPDATE embeddings SET vector = \'["a", "b"]\';'),
        "not a list of numbers",
    ),
    "statistics table": (sql("ANALYZE;"), ""),
    "empty file": (raw(b""), "an empty file"),
    "random bytes": (raw(os.urandom(4096)), "not a SQLite database"),
    "header only": (raw(b"SQLite format 3\x00" + b"\x00" * 84), "not a SQLite database"),
    "shorter than a header": (raw(b"SQLite format 3\x00\x10"), "truncated"),
    "truncated database": (truncated(3000), "malformed"),
    "half a page": (truncated(2048), "malformed"),
    "huge page count, sparse file": (huge_page_count, "bytes, more than"),
    "header claims a huge page count": (header_claims_huge_page_count, ""),
    "fifo": (fifo, "a FIFO"),
    "link to a host file": (link_to_canary, "not a SQLite database"),
    "link to nothing": (link_to_nothing, "a symbolic link to nothing"),
    "directory": (directory, "a directory"),
    "WAL journal mode": (wal_mode, "WAL journal mode"),
    "unparseable schema": (bad_schema_text, "malformed database schema"),
}


# Files a write may use: their harm is in values only a read looks at, or in nothing.
WRITABLE = {
    "blob in a text column",
    "text in a counter",
    "real in a counter",
    "null where it may be",
    "empty file",
    "blob as a project",
    "text too long to read",
    "vector not JSON",
    "vector nested too deeply",
    "vector of strings",
    "statistics table",
    "header claims a huge page count",
    "WAL journal mode",
    "counter overflow",
    "blob as meta value",
}


def hostile(tmp_path: Path, canary: Path, name: str) -> Path:
    folder = tmp_path / "files"
    folder.mkdir(exist_ok=True)
    path = folder / "memory.db"
    HOSTILE[name][0](path, canary)
    return path


def said(error: BaseException | None, path: Path, expected: str | None) -> None:
    """Read (``expected`` empty or ``None``), or refused naming the file and saying why."""
    if expected is None or expected == "":
        if error is not None:
            # A file SQLite may read either way: refused, then by name.
            assert str(path) in str(error)
        return
    assert error is not None, "a hostile memory file was read without complaint"
    assert str(path) in str(error) and expected in str(error), str(error)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_memory_file_is_refused_by_name_and_never_written(
    attempt, tmp_path: Path, canary: Path, name: str
) -> None:
    path = hostile(tmp_path, canary, name)
    before = files_in(path.parent)
    size = path.stat().st_size if path.is_file() and not path.is_symlink() else None
    _, error = attempt("memory file: read", lambda: read_everything(path), EXPECTED)
    said(error, path, HOSTILE[name][1])
    assert files_in(path.parent) == before  # reading creates no file beside it
    _, error = attempt("memory file: write", lambda: write_into(path), EXPECTED)
    if name in WRITABLE:
        # Rows of the wrong type are what a build never reads; WAL is a writer's own mode.
        assert error is None or str(path) in str(error)
    else:
        assert error is not None and str(path) in str(error)
        # Refused before anything ran: no trigger fired, nothing grew.
        assert (path.stat().st_size if size is not None else None) == size


SHOWN = [
    "recursive view named triples",
    "trigger on insert",
    "rtree virtual table",
    "missing column",
    "wrong column types",
    "blob in a text column",
    "text too long to read",
    "view beside the tables",
    "trigger on update",
    "missing table",
    "extra column",
    "empty file",
    "random bytes",
    "truncated database",
    "huge page count, sparse file",
    "fifo",
    "link to a host file",
    "directory",
    "WAL journal mode",
    "unparseable schema",
]


@pytest.mark.parametrize("name", SHOWN)
def test_the_memory_commands_refuse_a_hostile_file_with_exit_2(
    command, tmp_path: Path, canary: Path, name: str
) -> None:
    path = hostile(tmp_path, canary, name)
    before = files_in(path.parent)
    for argv in (
        ["memory", "show", str(path), "--json"],
        ["memory", "query", str(path), "No module named yaml"],
    ):
        done = command(f"memory {argv[1]}", argv, returncodes=(2,))
        assert done.stderr.startswith(f"pytest-enconda memory {argv[1]}: error: {path}: ")
        assert files_in(path.parent) == before
    run = tmp_path / "run"
    run.mkdir()
    argv = ["memory", "build", str(run), "--out", str(path)]
    done = command("memory build", argv, returncodes=(0, 2) if name in WRITABLE else (2,))
    if done.returncode == 2:
        assert done.stderr.startswith(f"pytest-enconda memory build: error: {path}: ")
        assert files_in(path.parent) == before


def test_a_path_spelling_uri_parameters_is_a_name(command, tmp_path: Path, attempt) -> None:
    """``real.db?mode=rwc&x=`` once made the read-only ``show`` create ``real.db``."""
    for name in ("real.db?mode=rwc&x=", "real.db#frag", "real%3Fdb", "file:real.db"):
        path = tmp_path / name
        done = command("memory show", ["memory", "show", str(path)], returncodes=(2,))
        assert f"error: {path}: no such file" in done.stderr
        assert files_in(tmp_path) == []
    # And such a name that exists is the file read.
    path = good_memory(tmp_path / "real.db?mode=ro&immutable=0")
    shown, _ = attempt("memory file: read", lambda: read_everything(path), ())
    assert len(shown["triples"]) == 3 and files_in(tmp_path) == [path.name]


def test_a_locked_memory_file_is_reported_not_waited_on_forever(
    attempt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = good_memory(tmp_path / "memory.db")
    monkeypatch.setattr(memory_store, "BUSY_SECONDS", 0.2)
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        _, error = attempt("memory file: locked", lambda: read_everything(path), EXPECTED)
        assert error is not None and "locked" in str(error) and str(path) in str(error)
        _, error = attempt("memory file: locked", lambda: write_into(path), EXPECTED)
        assert error is not None and "locked" in str(error)
    finally:
        holder.rollback()
        holder.close()
    assert len(read_everything(path)["triples"]) == 3


def test_every_statement_stops_at_its_step_cap(
    attempt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever slipped past the schema check, no statement runs unbounded: the cap is what
    ended the recursive view and the trigger before the check existed."""
    path = good_memory(tmp_path / "memory.db")
    with MemoryStore(path) as store:
        for n in range(300):
            store.add(Triple(f"problem {n}", "solution", f"action {n}", f"No module named m{n}"))
    monkeypatch.setattr(memory_store, "MAX_PROGRESS_CALLS", 2)
    monkeypatch.setattr(memory_store, "PROGRESS_EVERY", 100)
    _, error = attempt("memory file: step cap", lambda: read_everything(path), EXPECTED)
    assert error is not None and "SQLite steps" in str(error) and str(path) in str(error)


def test_a_good_memory_file_reads_as_before(attempt, tmp_path: Path) -> None:
    path = good_memory(tmp_path / "memory.db")
    found, _ = attempt("memory file: read", lambda: read_everything(path), ())
    assert [t["action"] for t in found["triples"]] == [
        "pip install pyyaml",
        "apt-get update",
        "apt-get install -y gcc",
    ]
    assert [h["id"] for h in found["search"]] == [1]
    assert found["vector"][0]["id"] == 1 and found["stats"]["embedding_models"] == ["emb"]
    write_into(path)
    assert read_everything(path)["stats"]["triples"] == 4


# ---------------------------------------------------------------------------- generated files

SQL_VALUES = (
    st.none()
    | st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=30)
    | st.binary(max_size=30)
)
COLUMNS = [
    ("triples", c)
    for c in ("problem", "solution", "action", "signature", "error_type", "source", "helped")
] + [
    ("provenance", "project"),
    ("meta", "value"),
    ("embeddings", "vector"),
    ("embeddings", "model"),
]


@EXAMPLES
@given(column=st.sampled_from(COLUMNS), value=SQL_VALUES)
def test_any_value_in_any_column_is_read_or_refused_by_name(
    attempt, tmp_path_factory: pytest.TempPathFactory, column: tuple[str, str], value: Any
) -> None:
    path = good_memory(tmp_path_factory.mktemp("values") / "memory.db")
    db = sqlite3.connect(path)
    try:
        db.execute(f"UPDATE {column[0]} SET {column[1]} = ?", (value,))
        db.commit()
    except sqlite3.IntegrityError:  # NOT NULL: such a file cannot even be written
        return
    finally:
        db.close()
    found, error = attempt("memory file: values", lambda: read_everything(path), EXPECTED)
    assert (error is None and len(found["triples"]) == 3) or str(path) in str(error)


@EXAMPLES
@given(flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=12))
# Found by the generator: a byte in the schema's text that is not UTF-8 (UnicodeDecodeError).
@example(flips=[(2253, 128)])
def test_a_damaged_memory_file_is_read_or_refused_by_name(
    attempt, tmp_path_factory: pytest.TempPathFactory, flips: list[tuple[int, int]]
) -> None:
    path = good_memory(tmp_path_factory.mktemp("damaged") / "memory.db")
    data = bytearray(path.read_bytes())
    for offset, byte in flips:
        data[offset % len(data)] = byte
    path.write_bytes(bytes(data))
    found, error = attempt("memory file: damaged", lambda: read_everything(path), EXPECTED)
    assert (error is None and isinstance(found["triples"], list)) or str(path) in str(error)


@EXAMPLES
@given(data=st.binary(max_size=4096), header=st.booleans())
def test_bytes_that_are_no_database_are_refused_by_name(
    attempt, tmp_path_factory: pytest.TempPathFactory, data: bytes, header: bool
) -> None:
    path = tmp_path_factory.mktemp("bytes") / "memory.db"
    path.write_bytes((b"SQLite format 3\x00" if header else b"") + data)
    _, error = attempt("memory file: bytes", lambda: read_everything(path), EXPECTED)
    assert error is not None and str(path) in str(error)
    assert files_in(path.parent) == ["memory.db"]


OBJECTS = st.sampled_from(
    [
        "CREATE VIEW {name} AS SELECT * FROM triples",
        "CREATE TRIGGER {name} AFTER INSERT ON triples BEGIN SELECT 1; END",
        "CREATE TRIGGER {name} BEFORE DELETE ON meta BEGIN SELECT 1; END",
        "CREATE TABLE {name} (x)",
        "CREATE INDEX {name} ON provenance (case_id)",
        "CREATE VIRTUAL TABLE {name} USING fts5(x)",
        "CREATE VIRTUAL TABLE {name} USING rtree(id, a, b)",
    ]
)
NAMES = st.sampled_from(["triples_fts_extra", "sqlite_stat9", "x", "meta2", "provenance_x"]) | (
    st.text("abcdefghij_", min_size=1, max_size=12).map(lambda s: "t_" + s)
)


@EXAMPLES
@given(template=OBJECTS, name=NAMES)
def test_any_object_beside_the_schema_is_refused_by_name(
    attempt, tmp_path_factory: pytest.TempPathFactory, template: str, name: str
) -> None:
    path = good_memory(tmp_path_factory.mktemp("objects") / "memory.db")
    db = sqlite3.connect(path)
    try:
        db.execute(template.format(name=f'"{name}"'))
        db.commit()
    except sqlite3.Error:  # a name SQLite reserves for itself: no file can hold it
        return
    finally:
        db.close()
    _, error = attempt("memory file: schema", lambda: read_everything(path), EXPECTED)
    assert error is not None and str(path) in str(error) and repr(name) in str(error)


# ---------------------------------------------------------------------------- command inputs


@pytest.mark.parametrize(
    "k", ["99999999999999999999", "0", "-1", "1001", "1e3", "nan", "9" * 5000, ""]
)
def test_query_bounds_k(command, tmp_path: Path, k: str) -> None:
    path = good_memory(tmp_path / "memory.db")
    done = command("memory query --k", ["memory", "query", str(path), "yaml", "--k", k])
    assert done.returncode == 2 and "argument --k: expected" in done.stderr


def test_query_within_bounds_answers(command, tmp_path: Path) -> None:
    path = good_memory(tmp_path / "memory.db")
    done = command(
        "memory query --k", ["memory", "query", str(path), "yaml", "--k", "1000", "--json"]
    )
    assert [g["id"] for g in json.loads(done.stdout)["given"]] == [1]


def credit_run(root: Path, records: dict[str, bytes]) -> Path:
    run = root / "run"
    for case_id, data in records.items():
        agent = run / "cases" / case_id / "agent"
        agent.mkdir(parents=True)
        (agent / "memory.json").write_bytes(data)
    return run


HOSTILE_RECORDS: dict[str, bytes] = {
    "deep": b'{"given": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "deep object": b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
    "ids of 2**63": json.dumps(
        {"given": [1 << 63], "used": [1 << 64], "helped": [10**30]}
    ).encode(),
    "negative ids": json.dumps({"given": [-(1 << 63) - 1, -1, 0], "helped": [-5]}).encode(),
    "ids of other types": json.dumps(
        {"given": [True, 1.5, "1", None, {"id": "2"}, {"id": 1 << 70}, [1]]}
    ).encode(),
    "many ids": json.dumps({"given": list(range(1, 200_000)), "used": [1] * 50_000}).encode(),
    "memory with NUL": json.dumps({"memory": "a\x00b", "given": [1]}).encode(),
    "memory too long": json.dumps({"memory": "/" + "x/" * 5000, "given": [1]}).encode(),
    "not an object": b"[1, 2, 3]",
    "not UTF-8": b'{"given": [1], "x": "\xff\xfe"}',
    "lone surrogate": b'{"given": [1], "memory": "\\ud800"}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE_RECORDS))
def test_credit_reads_hostile_records_and_names_them(command, tmp_path: Path, name: str) -> None:
    path = good_memory(tmp_path / "memory.db")
    run = credit_run(tmp_path, {"bad": HOSTILE_RECORDS[name], "good": b'{"given": [2]}'})
    done = command("memory credit", ["memory", "credit", str(path), str(run)], returncodes=(0,))
    assert "1 runs credited" in done.stdout
    with MemoryStore(path, readonly=True) as store:
        retrieved = dict(store.db.execute("SELECT id, retrieved FROM triples"))
    assert retrieved[2] >= 1  # the good record counted, whatever the bad one held
    if name in ("deep", "deep object", "not an object", "not UTF-8"):
        assert str(run / "cases" / "bad" / "agent" / "memory.json") in done.stdout


def test_credit_refuses_special_records_and_hostile_memory_files(
    command, tmp_path: Path, canary: Path
) -> None:
    path = good_memory(tmp_path / "memory.db")
    run = credit_run(tmp_path, {"good": b'{"given": [2]}'})
    for case_id, make in (("fifo", os.mkfifo), ("linked", lambda p: p.symlink_to(canary))):
        (run / "cases" / case_id / "agent").mkdir(parents=True)
        make(run / "cases" / case_id / "agent" / "memory.json")
    done = command("memory credit", ["memory", "credit", str(path), str(run)], returncodes=(0,))
    assert "fifo" in done.stdout and "linked" in done.stdout
    for name in ("trigger on update", "missing column", "fifo", "random bytes"):
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        bad = hostile(folder, canary, name)
        done = command("memory credit", ["memory", "credit", str(bad), str(run)], returncodes=(2,))
        assert done.stderr.startswith(f"pytest-enconda memory credit: error: {bad}: ")
    missing = tmp_path / "absent.db"
    done = command("memory credit", ["memory", "credit", str(missing), str(run)], returncodes=(2,))
    assert f"{missing}: no such file" in done.stderr and not missing.exists()
    for not_a_run in (tmp_path / "nowhere", path):
        done = command(
            "memory credit", ["memory", "credit", str(path), str(not_a_run)], returncodes=(2,)
        )
        assert f"error: {not_a_run}: not a run directory" in done.stderr


def test_build_refuses_special_paths_by_name(command, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    fifo_path = tmp_path / "fifo"
    os.mkfifo(fifo_path)
    out = tmp_path / "memory.db"
    for argv, named in (
        ([str(run), str(fifo_path), "--out", str(out)], fifo_path),
        ([str(run), "/dev/null", "--out", str(out)], "/dev/null"),
        ([str(run), str(tmp_path / "absent"), "--out", str(out)], tmp_path / "absent"),
        ([str(run), "--out", str(fifo_path)], fifo_path),
        ([str(run), "--out", str(run)], run),
        ([str(run), "--out", "/dev/null"], "/dev/null"),
        ([str(run), "--out", str(out), "--extractor", "magic"], "--extractor"),
    ):
        done = command("memory build", ["memory", "build", *argv], returncodes=(2,))
        assert done.stderr.startswith(f"pytest-enconda memory build: error: {named}: ")
    assert not out.exists()
    # A folder with nothing to learn from is said, not passed over.
    done = command(
        "memory build", ["memory", "build", str(run), "--out", str(out)], returncodes=(0,)
    )
    assert f"skipped: {run}: no trajectory" in done.stdout


def test_an_unreachable_embedding_endpoint_is_named(command, tmp_path: Path) -> None:
    """Once litellm's traceback. ``build --embedder litellm:<model>`` (no runs: only embed the
    file's triples) calls the same embedder a query does; one command is tried, as importing
    litellm alone takes seconds."""
    from localhttp import unused_port

    path = good_memory(tmp_path / "memory.db")
    endpoint = f"http://127.0.0.1:{unused_port()}/v1"
    argv = [
        "memory",
        "build",
        "--out",
        str(path),
        "--embedder",
        "litellm:emb",
        "--embedding-api-base",
        endpoint,
    ]
    done = command("memory embedding", argv, returncodes=(2,))
    assert done.stderr.startswith(
        f"pytest-enconda memory build: error: {path}: embedder litellm:emb at {endpoint}: "
    )


# ---------------------------------------------------------------------------- in a run


def heuristic_pipeline(tmp_path: Path, memory: Path) -> tuple[Any, Any]:
    from cases_for_tests import make_case

    from pytest_enconda.backends.fake import FakeBackend
    from pytest_enconda.pipeline import CasePipeline
    from pytest_enconda.settings import EncondaSettings

    case = make_case(tmp_path / "case")
    pipeline = CasePipeline(
        EncondaSettings(
            run_dir=tmp_path / "run", agent="heuristic", agent_options={"memory": str(memory)}
        ),
        progress=lambda message: None,
        backend=FakeBackend(tmp_path / "fake"),
    )
    return pipeline, case


@pytest.mark.parametrize(
    "name", ["recursive view named triples", "trigger on insert", "random bytes", "fifo"]
)
def test_a_hostile_memory_file_is_the_harness_error_of_the_run(
    attempt, tmp_path: Path, canary: Path, name: str
) -> None:
    """Opened when the agent starts: the harness's error for every item of the case, never the
    agent's failure, and the recursive view no longer outlives the agent's budget."""
    from pytest_enconda.errors import HarnessError

    memory = hostile(tmp_path, canary, name)
    pipeline, case = heuristic_pipeline(tmp_path, memory)
    try:
        for aspect in ("execution", "error_types"):
            _, error = attempt(
                "memory file: run", lambda a=aspect: pipeline.verdict(case, a), (HarnessError,)
            )
            assert isinstance(error, MemoryFileError) and str(memory) in str(error)
    finally:
        pipeline.close()


def test_a_triple_that_fails_mid_run_is_the_harness_error_of_the_run(
    attempt, tmp_path: Path
) -> None:
    """A file whose schema is right but whose matching triple holds a blob: the failure comes
    while the agent repairs a step, and is still the harness's."""
    from pytest_enconda.errors import HarnessError

    memory = tmp_path / "memory.db"
    signature = "ERROR: Could not open requirements file: No such file or directory"
    with MemoryStore(memory) as store:
        store.add(
            Triple(signature, "create it", "touch requirements.txt", signature),
            Provenance("other", "r", "heuristic", "", "elsewhere/other"),
        )
        store.db.execute("UPDATE triples SET solution = x'00'")
        store.db.commit()
    pipeline, case = heuristic_pipeline(tmp_path, memory)
    try:
        _, error = attempt(
            "memory file: run", lambda: pipeline.verdict(case, "execution"), (HarnessError,)
        )
    finally:
        pipeline.close()
    assert isinstance(error, MemoryFileError), error
    assert str(memory) in str(error) and "solution is a blob" in str(error)


def test_a_pytest_run_reports_a_hostile_memory_file_as_errors(
    pytester: pytest.Pytester, canary: Path
) -> None:
    from fakeruns import fake_project, timed_case

    fake_project(pytester.path)
    timed_case(pytester.path, "toy", "touch ok\n")
    memory = hostile(pytester.path, canary, "recursive view named triples")
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "heuristic",
        "--memory",
        str(memory),
        "--run-dir",
        str(pytester.path / "run"),
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) >= 1 and "failed" not in outcomes, outcomes
    assert "holds a view, 'triples'" in result.stdout.str()
