"""The memory file: one SQLite database with an FTS5 index (BM25), no server.

Tables: ``triples`` (the normalised text, a dedup key, counters), ``provenance`` (which case, run,
agent, model and repository each triple came from: one row per sighting), ``triples_fts`` (the
full-text index) and ``embeddings`` (vectors per embedding model, filled on demand).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .normalise import project_key, tokens

SCHEMA_VERSION = "1"
_SCHEMA = """
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
    """One memory file. ``MemoryStore(path)`` creates it if missing."""

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        import sqlite3

        self.path = Path(path)
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"no memory file at {self.path}")
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
            self.db.executescript(_SCHEMA)
            self.db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
            )
            self.db.commit()
        self.db.row_factory = sqlite3.Row

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
        row = self.db.execute("SELECT id FROM triples WHERE key = ?", (key,)).fetchone()
        new = row is None
        if new:
            cursor = self.db.execute(
                "INSERT INTO triples (key, problem, solution, action, signature, error_type, "
                "source) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, triple.problem, triple.solution, triple.action, triple.signature,
                 triple.error_type, triple.source),
            )  # fmt: skip
            triple_id = int(cursor.lastrowid or 0)
            self.db.execute(
                "INSERT INTO triples_fts (rowid, problem, solution, action, signature) "
                "VALUES (?, ?, ?, ?, ?)",
                (triple_id, triple.problem, triple.solution, triple.action, triple.signature),
            )
        else:
            triple_id = int(row[0])
        if provenance is not None:
            inserted = self.db.execute(
                "INSERT OR IGNORE INTO provenance VALUES (?, ?, ?, ?, ?, ?, ?)",
                (triple_id, provenance.case_id, provenance.run, provenance.agent,
                 provenance.model, provenance.repository, provenance.project),
            ).rowcount  # fmt: skip
            if inserted and not new:
                self.db.execute("UPDATE triples SET seen = seen + 1 WHERE id = ?", (triple_id,))
        self.db.commit()
        return triple_id, new

    def count(self, triple_ids: Iterable[int], column: str) -> None:
        """Add one to ``retrieved``, ``used`` or ``helped`` of each triple."""
        if column not in ("retrieved", "used", "helped"):
            raise ValueError(column)
        for triple_id in triple_ids:
            self.db.execute(f"UPDATE triples SET {column} = {column} + 1 WHERE id = ?",
                            (triple_id,))  # fmt: skip
        self.db.commit()

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        self.db.commit()

    # ------------------------------------------------------------------ reading

    def meta(self) -> dict[str, str]:
        return {row[0]: row[1] for row in self.db.execute("SELECT key, value FROM meta")}

    def stats(self) -> dict[str, Any]:
        one = self.db.execute
        return {
            "triples": one("SELECT count(*) FROM triples").fetchone()[0],
            "sightings": one("SELECT count(*) FROM provenance").fetchone()[0],
            "projects": [r[0] for r in one(
                "SELECT DISTINCT project FROM provenance WHERE project != '' ORDER BY project")],
            "cases": one("SELECT count(DISTINCT case_id) FROM provenance").fetchone()[0],
            "by_source": dict(one("SELECT source, count(*) FROM triples GROUP BY source")),
            "helped": one("SELECT coalesce(sum(helped), 0) FROM triples").fetchone()[0],
            "embedding_models": [r[0] for r in one("SELECT DISTINCT model FROM embeddings")],
        }  # fmt: skip

    def _projects(self, triple_id: int) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT project FROM provenance WHERE triple_id = ? AND project != ''",
            (triple_id,),
        )
        return sorted(r[0] for r in rows)

    def _hit(self, row: Any, score: float) -> Hit:
        return Hit(
            id=row["id"], problem=row["problem"], solution=row["solution"], action=row["action"],
            signature=row["signature"], error_type=row["error_type"], score=score,
            projects=self._projects(row["id"]), helped=row["helped"],
        )  # fmt: skip

    def all(self) -> list[Hit]:
        rows = self.db.execute("SELECT * FROM triples ORDER BY id").fetchall()
        return [self._hit(row, 0.0) for row in rows]

    def get(self, triple_id: int) -> Hit | None:
        row = self.db.execute("SELECT * FROM triples WHERE id = ?", (triple_id,)).fetchone()
        return None if row is None else self._hit(row, 0.0)

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
        if not query:
            return []
        exclude = {project_key(r) for r in exclude_repositories if r}
        rows = self.db.execute(
            "SELECT t.*, bm25(triples_fts, 2.0, 1.0, 1.0, 3.0) AS rank FROM triples_fts "
            "JOIN triples t ON t.id = triples_fts.rowid WHERE triples_fts MATCH ? "
            "ORDER BY rank LIMIT ?",
            (query, k + 50),
        ).fetchall()
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

    def embed_missing(self, model: str, embed: Any) -> int:
        """Embed every triple lacking a vector for ``model`` (``embed(texts) -> vectors``)."""
        rows = self.db.execute(
            "SELECT id, problem, solution, action FROM triples WHERE id NOT IN "
            "(SELECT triple_id FROM embeddings WHERE model = ?)",
            (model,),
        ).fetchall()
        if not rows:
            return 0
        vectors = embed([f"{r['problem']}\n{r['solution']}\n{r['action']}" for r in rows])
        for row, vector in zip(rows, vectors, strict=True):
            self.db.execute(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                (row["id"], model, json.dumps([float(x) for x in vector])),
            )
        self.db.commit()
        return len(rows)

    def search_vector(
        self, vector: Sequence[float], model: str, k: int = 5,
        exclude_repositories: Sequence[str] = (),
    ) -> list[Hit]:  # fmt: skip
        exclude = {project_key(r) for r in exclude_repositories if r}
        rows = self.db.execute(
            "SELECT t.*, e.vector FROM embeddings e JOIN triples t ON t.id = e.triple_id "
            "WHERE e.model = ?",
            (model,),
        ).fetchall()
        scored = sorted(
            ((_cosine(vector, json.loads(row["vector"])), row) for row in rows),
            key=lambda pair: -pair[0],
        )
        hits = []
        for score, row in scored:
            hit = self._hit(row, score)
            if not self._excluded(hit, exclude):
                hits.append(hit)
            if len(hits) >= k:
                break
        return hits


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def clean_words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
