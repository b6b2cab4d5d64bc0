"""The memory file: one SQLite database with an FTS5 index (BM25), no server.

Tables: ``triples`` (the normalised text, a dedup key, counters), ``provenance`` (which case, run,
agent, model and repository each triple came from: one row per sighting), ``triples_fts`` (the
full-text index) and ``embeddings`` (vectors per embedding model, filled on demand).

A memory file is input from whoever built it: a SQLite file can hold views and triggers that run
on every read or write, and a damaged one fails deep inside sqlite3. So a file is opened only when
its schema is exactly the one below, every statement runs under a step cap, and every failure is a
``MemoryFileError`` that names the file (a harness error, never the agent's failure).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import textio
from .memory_file import (
    BUSY_SECONDS,
    FTS_SHADOWS,
    MAX_FILE_BYTES,
    MAX_ID,
    MAX_PROGRESS_CALLS,
    MAX_VALUE_BYTES,
    PROGRESS_EVERY,
    SCHEMA,
    SCHEMA_VERSION,
    STATISTICS,
    MemoryFileError,
    check_file,
    expected_schema,
    file_uri,
    squeeze,
)
from .normalise import project_key, tokens

__all__ = ["Hit", "MemoryFileError", "MemoryStore", "Provenance", "Triple", "fts_query"]


@dataclass
class Triple:
    problem: str
    solution: str
    action: str
    signature: str = ""
    error_type: str | None = None
    source: str = "offline"

    def key(self) -> str:
        """Duplicates: the same error signature (or problem) repaired by the same action."""
        what = self.signature or self.problem
        text = " ".join(t.lower() for t in tokens(what)) + "\x00" + " ".join(self.action.split())
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass
class Provenance:
    case_id: str = ""
    run: str = ""
    agent: str = ""
    model: str = ""
    repository: str = ""

    @property
    def project(self) -> str:
        return project_key(self.repository) if self.repository else ""


@dataclass
class Hit:
    id: int
    problem: str
    solution: str
    action: str
    signature: str
    error_type: str | None
    score: float
    projects: list[str] = field(default_factory=list)
    helped: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def fts_query(text: str, limit: int = 48) -> str:
    """``text`` as an FTS5 OR-query of quoted words: user text never reaches FTS5's syntax."""
    words = list(dict.fromkeys(t.lower() for t in tokens(text) if len(t) > 1))[:limit]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


class MemoryStore:
    """One memory file. ``MemoryStore(path)`` creates it if missing (``create=False``: it must
    be a memory file already); ``readonly`` opens it without ever writing (or creating) anything.
    ``MemoryFileError`` for anything that is not a memory file of this schema, and for any SQLite
    failure on it later."""

    def __init__(self, path: Path | str, *, readonly: bool = False, create: bool = True) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._steps = 0
        create = create and not readonly
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MemoryFileError(
                    self.path, f"cannot create its folder: {exc.strerror or exc}"
                ) from None
        existing = check_file(self.path, writing=not readonly, create=create)
        if not (existing or create):
            raise MemoryFileError(self.path, "an empty file; expected a memory file")
        mode = "ro" if readonly else "rwc" if create else "rw"
        try:
            self.db = sqlite3.connect(file_uri(self.path, mode), uri=True, timeout=BUSY_SECONDS)
        except sqlite3.Error as exc:
            raise MemoryFileError(self.path, f"cannot open: {exc}") from exc
        try:
            self._configure()
            if existing:
                self._check_schema(complete=not create)
            if not readonly:
                with self._guard("creating its tables"):
                    self.db.executescript(SCHEMA)
                    self.db.execute(
                        "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                        (SCHEMA_VERSION,),
                    )
                    self.db.commit()
        except BaseException:
            self.db.close()
            raise
        self.db.row_factory = sqlite3.Row

    def _progress(self) -> int:
        self._steps += 1
        return 1 if self._steps > MAX_PROGRESS_CALLS else 0

    def _configure(self) -> None:
        self.db.set_progress_handler(self._progress, PROGRESS_EVERY)
        self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self.db.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        with self._guard("reading its header"):
            # Functions with side effects never run from the file's own schema, and a damaged
            # cell is reported rather than followed.
            self.db.execute("PRAGMA trusted_schema = OFF")
            self.db.execute("PRAGMA cell_size_check = ON")
            if not self.readonly:
                page = int(self.db.execute("PRAGMA page_size").fetchone()[0])
                self.db.execute(f"PRAGMA max_page_count = {MAX_FILE_BYTES // max(page, 512)}")

    def _check_schema(self, *, complete: bool) -> None:
        """The file's objects are exactly this project's: no view or trigger (they run the
        file's own SQL on every read or write), no virtual table but the FTS5 index, and every
        table as ``SCHEMA`` creates it (so its columns and types are the ones read)."""
        with self._guard("reading its schema"):
            rows = self.db.execute("SELECT type, name, sql FROM sqlite_schema").fetchall()
        expected = expected_schema()
        found: set[str] = set()
        for kind, name, sql in rows:
            where = f"{kind} {name!r}"
            if kind in ("view", "trigger"):
                raise MemoryFileError(
                    self.path, f"holds a {kind}, {name!r}; a memory file has tables only"
                )
            if name in FTS_SHADOWS or (kind == "table" and STATISTICS.fullmatch(str(name))):
                if kind != "table" or str(sql or "").upper().startswith("CREATE VIRTUAL"):
                    raise MemoryFileError(self.path, f"{where} is not a plain table")
                continue
            if name not in expected:
                what = "a virtual table" if "VIRTUAL" in str(sql or "").upper() else f"a {kind}"
                raise MemoryFileError(self.path, f"holds {what} {name!r} of no memory file")
            if expected[name][:2] != (kind, squeeze(sql)):
                raise MemoryFileError(self.path, expected[name][2])
            found.add(name)
        missing = [n for n, (kind, *_) in expected.items() if kind == "table" and n not in found]
        if missing and (complete or found):
            raise MemoryFileError(self.path, f"not a memory file: no table {', '.join(missing)}")

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """One statement's budget; SQLite's failure as the file's."""
        self._steps = 0
        try:
            yield
        except sqlite3.Error as exc:
            if self._steps > MAX_PROGRESS_CALLS:
                reason = (
                    f"{what}: stopped after {MAX_PROGRESS_CALLS * PROGRESS_EVERY:,} SQLite "
                    "steps (a query on a memory file takes far fewer: a damaged or crafted file)"
                )
            elif "not a database" in str(exc):
                reason = "not a SQLite database"
            else:
                reason = f"{what}: {exc}"
            raise MemoryFileError(self.path, reason) from exc
        except UnicodeDecodeError as exc:
            # sqlite3 decodes TEXT as UTF-8 on the way out: a damaged page (or a crafted one)
            # holds bytes that are not, in the schema as in a triple.
            raise MemoryFileError(
                self.path, f"{what}: text that is not UTF-8 ({exc.reason})"
            ) from exc

    def _rows(self, what: str, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._guard(what):
            return self.db.execute(sql, params).fetchall()

    def _write(self, what: str, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._guard(what):
            return self.db.execute(sql, params)

    def _commit(self) -> None:
        with self._guard("saving"):
            self.db.commit()

    def _value(self, value: Any, types: tuple[type, ...], where: str) -> Any:
        """``value`` as read, if of ``types``: SQLite keeps whatever a file's writer put in a
        column, whatever its declared type."""
        if isinstance(value, types) and not isinstance(value, bool):
            return value
        names = {int: "an integer", str: "text", float: "a number", type(None): "NULL"}
        expected = " or ".join(names.get(t, t.__name__) for t in types)
        got = {int: "an integer", str: "text", float: "a number", bytes: "a blob"}
        return self._bad(f"{where} is {got.get(type(value), 'NULL')}; expected {expected}")

    def _bad(self, reason: str) -> Any:
        raise MemoryFileError(self.path, reason)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def add(self, triple: Triple, provenance: Provenance | None = None) -> tuple[int, bool]:
        """Store ``triple`` (or count a further sighting of an equal one); ``(id, new)``."""
        key = triple.key()
        problem, solution, action, signature = (
            _storable(t) for t in (triple.problem, triple.solution, triple.action,
                                   triple.signature)
        )  # fmt: skip
        error_type = None if triple.error_type is None else _storable(triple.error_type)
        rows = self._rows("reading triples", "SELECT id FROM triples WHERE key = ?", (key,))
        new = not rows
        if new:
            cursor = self._write(
                "adding a triple",
                "INSERT INTO triples (key, problem, solution, action, signature, error_type, "
                "source) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, problem, solution, action, signature, error_type, _storable(triple.source)),
            )  # fmt: skip
            triple_id = int(cursor.lastrowid or 0)
            self._write(
                "indexing a triple",
                "INSERT INTO triples_fts (rowid, problem, solution, action, signature) "
                "VALUES (?, ?, ?, ?, ?)",
                (triple_id, problem, solution, action, signature),
            )
        else:
            triple_id = self._value(rows[0][0], (int,), "triples.id")
        if provenance is not None:
            inserted = self._write(
                "adding a sighting",
                "INSERT OR IGNORE INTO provenance VALUES (?, ?, ?, ?, ?, ?, ?)",
                (triple_id, *(_storable(v) for v in (
                    provenance.case_id, provenance.run, provenance.agent, provenance.model,
                    provenance.repository, provenance.project))),
            ).rowcount  # fmt: skip
            if inserted and not new:
                self._write(
                    "counting a sighting",
                    "UPDATE triples SET seen = seen + 1 WHERE id = ?",
                    (triple_id,),
                )
        self._commit()
        return triple_id, new

    def count(self, triple_ids: Iterable[int], column: str) -> None:
        """Add one to ``retrieved``, ``used`` or ``helped`` of each triple (once per mention)."""
        if column not in ("retrieved", "used", "helped"):
            raise ValueError(column)
        times = Counter(i for i in triple_ids if _valid_id(i))
        with self._guard(f"counting {column}"):
            self.db.executemany(
                f"UPDATE triples SET {column} = {column} + ? WHERE id = ?",
                [(n, triple_id) for triple_id, n in times.items()],
            )
        self._commit()

    def known(self, triple_ids: Iterable[int]) -> set[int]:
        """Which of ``triple_ids`` are triples of this file (a record may name any number)."""
        wanted = sorted({i for i in triple_ids if _valid_id(i)})
        found: set[int] = set()
        for at in range(0, len(wanted), 500):
            chunk = wanted[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._rows("reading triples", f"SELECT id FROM triples WHERE id IN ({marks})",
                              chunk)  # fmt: skip
            found.update(r[0] for r in rows)
        return found

    def set_meta(self, key: str, value: str) -> None:
        self._write("writing meta", "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (_storable(key), _storable(value)))  # fmt: skip
        self._commit()

    # ------------------------------------------------------------------ reading

    def meta(self) -> dict[str, str]:
        return {
            self._value(key, (str,), "meta.key"): self._value(value, (str,), f"meta {key!r}")
            for key, value in self._rows("reading meta", "SELECT key, value FROM meta")
        }

    def stats(self) -> dict[str, Any]:
        def one(sql: str) -> Any:
            return self._rows("counting", sql)[0][0]

        by_source = self._rows("counting", "SELECT source, count(*) FROM triples GROUP BY source")
        projects = self._rows("counting", "SELECT DISTINCT project FROM provenance "
                              "WHERE project != '' ORDER BY project")  # fmt: skip
        models = self._rows("counting", "SELECT DISTINCT model FROM embeddings")
        return {
            "triples": one("SELECT count(*) FROM triples"),
            "sightings": one("SELECT count(*) FROM provenance"),
            "projects": [self._value(r[0], (str,), "provenance.project") for r in projects],
            "cases": one("SELECT count(DISTINCT case_id) FROM provenance"),
            "by_source": {self._value(r[0], (str,), "triples.source"): r[1] for r in by_source},
            "helped": self._value(
                one("SELECT coalesce(sum(helped), 0) FROM triples"), (int,), "sum of helped"
            ),
            "embedding_models": [self._value(r[0], (str,), "embeddings.model") for r in models],
        }

    def _projects(self, triple_id: int) -> list[str]:
        rows = self._rows(
            "reading provenance",
            "SELECT DISTINCT project FROM provenance WHERE triple_id = ? AND project != ''",
            (triple_id,),
        )
        return sorted(self._value(r[0], (str,), "provenance.project") for r in rows)

    def _hit(self, row: Any, score: float) -> Hit:
        triple_id = self._value(row["id"], (int,), "triples.id")
        where = f"triple {triple_id}"

        def text(column: str) -> str:
            return self._value(row[column], (str,), f"{where}: {column}")  # type: ignore[no-any-return]

        return Hit(
            id=triple_id, problem=text("problem"), solution=text("solution"),
            action=text("action"), signature=text("signature"),
            error_type=self._value(row["error_type"], (str, type(None)), f"{where}: error_type"),
            score=score, projects=self._projects(triple_id),
            helped=self._value(row["helped"], (int,), f"{where}: helped"),
        )  # fmt: skip

    def all(self) -> list[Hit]:
        rows = self._rows("reading triples", "SELECT * FROM triples ORDER BY id")
        return [self._hit(row, 0.0) for row in rows]

    def get(self, triple_id: int) -> Hit | None:
        if not _valid_id(triple_id):
            return None
        rows = self._rows("reading a triple", "SELECT * FROM triples WHERE id = ?", (triple_id,))
        return self._hit(rows[0], 0.0) if rows else None

    def _excluded(self, hit: Hit, exclude: set[str]) -> bool:
        """Withheld when every sighting came from an excluded project: a triple also seen on
        another repository is exactly what a memory built without the excluded one would hold
        (one key per signature and action), so leave-one-repository-out keeps it. Withholding
        it whenever the case's repository was among its sightings hid the most general
        triples (seen on many repositories) from each of the cases that met them."""
        projects = set(hit.projects)
        return bool(exclude and projects and projects <= exclude)

    def search(self, text: str, k: int = 5, exclude_repositories: Sequence[str] = ()) -> list[Hit]:
        """BM25 over problem, solution, action and signature; the leakage guard drops triples
        seen only on ``exclude_repositories``' projects."""
        query = fts_query(text)
        if not query or k < 1:
            return []
        exclude = {project_key(r) for r in exclude_repositories if r}
        rows = self._rows(
            "searching",
            "SELECT t.*, bm25(triples_fts, 2.0, 1.0, 1.0, 3.0) AS rank FROM triples_fts "
            "JOIN triples t ON t.id = triples_fts.rowid WHERE triples_fts MATCH ? "
            "ORDER BY rank LIMIT ?",
            (query, min(k, MAX_K) + 50),
        )
        hits = []
        for row in rows:
            # FTS5's bm25() is lower-is-better and negative; flipped so a larger score is better.
            hit = self._hit(row, -float(row["rank"]))
            if not self._excluded(hit, exclude):
                hits.append(hit)
            if len(hits) >= k:
                break
        return hits

    # ------------------------------------------------------------------ embeddings

    def embed_missing(self, model: str, embed: Any, *, again: bool = False) -> int:
        """Embed every triple lacking a vector for ``model`` (``embed(texts) -> vectors``;
        ``again``: every triple)."""
        rows = self._rows(
            "reading triples",
            "SELECT id, problem, solution, action FROM triples WHERE ? OR id NOT IN "
            "(SELECT triple_id FROM embeddings WHERE model = ?) ORDER BY id",
            (again, model),
        )
        if not rows:
            return 0
        hits = [self._value(r["id"], (int,), "triples.id") for r in rows]
        texts = [
            "\n".join(
                self._value(r[c], (str,), f"triple {r['id']}: {c}")
                for c in ("problem", "solution", "action")
            )
            for r in rows
        ]
        vectors = embed(texts)
        for triple_id, vector in zip(hits, vectors, strict=True):
            self._write(
                "storing an embedding",
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                (triple_id, model, json.dumps([float(x) for x in vector])),
            )
        self._commit()
        return len(rows)

    def vector_dims(self, model: str) -> list[int]:
        """The lengths of ``model``'s vectors (one, in a file this project wrote)."""
        rows = self._rows(
            "reading embeddings",
            "SELECT DISTINCT json_array_length(vector) FROM embeddings WHERE model = ?",
            (model,),
        )
        return sorted(self._value(r[0], (int,), "an embedding's length") for r in rows)

    def _vector(self, row: Any) -> list[float]:
        where = f"the embedding of triple {row['id']}"
        try:
            vector = textio.parse_json(self._value(row["vector"], (str,), where))
        except ValueError as exc:
            return self._bad(f"{where}: {exc}")  # type: ignore[no-any-return]
        if not isinstance(vector, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in vector
        ):
            return self._bad(f"{where} is not a list of numbers")  # type: ignore[no-any-return]
        return [float(x) for x in vector]

    def search_vector(
        self, vector: Sequence[float], model: str, k: int = 5,
        exclude_repositories: Sequence[str] = (),
    ) -> list[Hit]:  # fmt: skip
        exclude = {project_key(r) for r in exclude_repositories if r}
        rows = self._rows(
            "reading embeddings",
            "SELECT t.*, e.vector FROM embeddings e JOIN triples t ON t.id = e.triple_id "
            "WHERE e.model = ?",
            (model,),
        )
        scored = []
        for row in rows:
            stored = self._vector(row)
            if len(stored) != len(vector):
                self._bad(
                    f"the {model!r} embedding of triple {row['id']} has {len(stored)} "
                    f"dimensions, the query's {len(vector)}"
                )
            scored.append((_cosine(vector, stored), row))
        scored.sort(key=lambda pair: -pair[0])
        hits = []
        for score, row in scored:
            hit = self._hit(row, score)
            if not self._excluded(hit, exclude):
                hits.append(hit)
            if len(hits) >= k:
                break
        return hits


# More triples than any prompt or command could use: a larger ``k`` is this many.
MAX_K = 10_000
# Longer than any triple's text; trajectory text beyond it is cut rather than refused.
_MAX_TEXT_CHARS = 1 << 20


def _valid_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID


def _storable(text: str) -> str:
    """``text`` as SQLite can store it: JSON's escapes can spell lone surrogates, which UTF-8
    cannot encode."""
    text = str(text)[:_MAX_TEXT_CHARS]
    return text.encode("utf-8", "replace").decode("utf-8")


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def clean_words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
