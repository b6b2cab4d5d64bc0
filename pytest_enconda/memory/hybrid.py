"""Hybrid retrieval: BM25 and dense (cosine over the vectors ``memory build`` stored), each
query's two ranked lists fused by reciprocal rank (RRF, k = 60).

A triple's fused score is the sum over every list that holds it of ``1 / (RRF_K + rank)``
(rank 1 first). A dense list holds only triples whose cosine reaches ``MIN_COSINE``: e5's
cosines are compressed (unrelated texts meet at about 0.8), so an unrelated memory must not
fill the dense list and make a bare rank look like agreement.

Which embedder a memory file's vectors came from is in its ``meta`` table (``embedder``); a
query names the same one or none. Nothing falls back silently: a file without vectors is
searched by BM25 alone and the retrieval says ``bm25``; a file with vectors whose embedder is
not available here stops with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import Hit, MemoryFileError, MemoryStore

RRF_K = 60
# Candidates each list contributes to the fusion: more than any prompt takes.
DEPTH = 50
# See the module's docstring. On the labelled pairs (scripts/memory_retrieval_bench.py
# --min-cosine) the highest floor at which the dense list alone loses no relevant triple.
MIN_COSINE = 0.84
META_EMBEDDER = "embedder"


def dim_key(name: str) -> str:
    return f"embedding_dim:{name}"


def model_key(name: str) -> str:
    return f"embedding_model:{name}"


@dataclass
class Ranked:
    """One triple of a fused ranking: its best rank in each list (``None``: in none of that
    kind), its best cosine and its fused score."""

    hit: Hit
    fused: float = 0.0
    bm25_rank: int | None = None
    dense_rank: int | None = None
    cosine: float | None = None
    queries: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.hit.id,
            "fused": round(self.fused, 6),
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "cosine": None if self.cosine is None else round(self.cosine, 6),
        }


def stored_embedder(store: MemoryStore) -> str | None:
    """The embedder the file's vectors came from (``None``: it holds none)."""
    return store.meta().get(META_EMBEDDER) or None


def resolve_embedder(
    store: MemoryStore,
    spec: str | None,
    api_base: str | None = None,
    cache_dir: Path | None = None,
) -> Any:
    """The embedder to query ``store`` with: ``spec`` (``none``: BM25 only), else the one the
    file was built with, else none. A spec the file holds no vectors of is an error naming
    the ones it holds and the command that adds them."""
    from ..embedders import NONE, create_embedder

    if spec == NONE:
        return None
    built = stored_embedder(store)
    wanted = spec or built
    if wanted is None:
        return None
    embedder = create_embedder(wanted, api_base=api_base, cache_dir=cache_dir)
    held = store.stats()["embedding_models"]
    if embedder.name not in held:
        raise MemoryFileError(
            store.path,
            f"holds no vectors of embedder {embedder.name!r} (it holds "
            f"{', '.join(repr(h) for h in held) or 'none'}); query with --embedder "
            f"{built or NONE}, or add them: pytest-enconda memory build --out {store.path} "
            f"--embedder {embedder.name}",
        )
    recorded = store.meta().get(model_key(embedder.name))
    if recorded and recorded != embedder.model_id:
        raise MemoryFileError(
            store.path,
            f"its {embedder.name!r} vectors came from {recorded}, this embedder is "
            f"{embedder.model_id}: rebuild them (memory build --embedder {embedder.name} "
            "--reembed)",
        )
    return embedder


def passage_text(hit: Hit) -> str:
    """What a triple's vector embeds: the problem, its root cause and the action."""
    return "\n".join((hit.problem, hit.solution, hit.action))


def embed_triples(store: MemoryStore, embedder: Any, *, again: bool = False) -> int:
    """Embed every triple lacking a vector of ``embedder`` (every triple with ``again``) and
    record the embedder, its model and dimension in the file; how many were embedded."""
    name = embedder.name
    count = store.embed_missing(name, lambda texts: embedder.embed(texts, "passage"), again=again)
    dims = store.vector_dims(name)
    if len(dims) > 1:
        raise MemoryFileError(store.path, f"vectors of {name!r} of several lengths {dims}")
    if dims:
        store.set_meta(dim_key(name), str(dims[0]))
    store.set_meta(model_key(name), embedder.model_id)
    if not stored_embedder(store):
        store.set_meta(META_EMBEDDER, name)
    return count


def fuse(
    store: MemoryStore,
    queries: Sequence[str],
    exclude_repositories: Sequence[str] = (),
    embedder: Any = None,
    depth: int = DEPTH,
    bm25: bool = True,
    min_cosine: float | None = None,
) -> list[Ranked]:
    """Every triple any list found, best fused score first (ties: lower id first).
    ``bm25=False`` leaves the BM25 lists out (dense alone: the retrieval benchmark's baseline);
    ``min_cosine`` replaces the dense lists' floor (``MIN_COSINE``)."""
    floor = MIN_COSINE if min_cosine is None else min_cosine
    found: dict[int, Ranked] = {}
    vectors = embedder.embed(list(queries), "query") if embedder is not None and queries else []
    for n, query in enumerate(queries):
        lexical = store.search(query, depth, exclude_repositories) if bm25 else []
        for rank, hit in enumerate(lexical, 1):
            entry = found.setdefault(hit.id, Ranked(hit))
            entry.fused += 1.0 / (RRF_K + rank)
            entry.bm25_rank = min(rank, entry.bm25_rank or rank)
            entry.queries.append(n)
        if embedder is None:
            continue
        dense = store.search_vector(vectors[n], embedder.name, depth, exclude_repositories)
        dense = [hit for hit in dense if hit.score >= floor]
        for rank, hit in enumerate(dense, 1):
            entry = found.setdefault(hit.id, Ranked(hit))
            entry.fused += 1.0 / (RRF_K + rank)
            entry.dense_rank = min(rank, entry.dense_rank or rank)
            entry.cosine = max(hit.score, entry.cosine or hit.score)
            entry.queries.append(n)
    ranked = sorted(found.values(), key=lambda r: (-r.fused, r.hit.id))
    for entry in ranked:
        entry.hit.score = entry.fused
    return ranked
