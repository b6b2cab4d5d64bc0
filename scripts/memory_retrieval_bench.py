"""Retrieval quality of a memory file on a labelled set: BM25 alone, dense alone, hybrid (both
fused by reciprocal rank), and the data behind the heuristic agent's fused-score threshold.

    python scripts/memory_retrieval_bench.py MEMORY.db [tests/data/memory/labelled.jsonl]
        [--embedder local | litellm:<model> --embedding-api-base URL] [--json OUT]

Each line of the labelled set is ``{"query", "relevant_action"}``: the triples whose action is
that one are the relevant ones (actions are stored normalised, as ``memory show`` prints them).
Reported per method: precision@3 (the share of the top 3 that is relevant; with one relevant
triple per query it cannot pass 1/3), recall@5, hit@1 and MRR (first relevant rank within 50).
Pairs whose action no triple has are counted apart, not scored. No leakage guard: the labelled
queries were written from the same runs the memory was built from.

Threshold data: for each pair, the relevant triple's fused score (a failure the memory knows:
the agent should try it) and, with the relevant triples taken out of the memory, the best
remaining fused score (a failure it does not know: the agent should try nothing), for several
dense floors (``hybrid.MIN_COSINE``) and match ranks (``FUSED_MIN``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_enconda.embedders import create_embedder
from pytest_enconda.memory import hybrid
from pytest_enconda.memory.store import MemoryStore

FLOORS = (0.0, 0.80, 0.84, 0.86, 0.88, 0.90, 0.92)
MATCH_RANKS = (1, 2, 3, 5, 10)


class Without:
    """``store`` with some triples left out of every list (a memory that never learnt them)."""

    def __init__(self, store: MemoryStore, ids: set[int]) -> None:
        self.store = store
        self.ids = ids

    def search(self, text: str, k: int, exclude: Any = ()) -> list[Any]:
        return [h for h in self.store.search(text, k + len(self.ids), exclude)
                if h.id not in self.ids][:k]  # fmt: skip

    def search_vector(self, vector: Any, model: str, k: int, exclude: Any = ()) -> list[Any]:
        hits = self.store.search_vector(vector, model, k + len(self.ids), exclude)
        return [h for h in hits if h.id not in self.ids][:k]


def scores(ranking: list[int], relevant: set[int]) -> dict[str, float]:
    first = next((n for n, i in enumerate(ranking, 1) if i in relevant), None)
    return {
        "precision@3": len(relevant & set(ranking[:3])) / 3,
        "recall@5": len(relevant & set(ranking[:5])) / len(relevant),
        "hit@1": float(bool(ranking) and ranking[0] in relevant),
        "mrr": 1 / first if first else 0.0,
    }


def measure(
    store: MemoryStore, pairs: list[dict], embedder: Any, floor: float | None = None
) -> dict[str, Any]:
    actions: dict[str, set[int]] = {}
    for hit in store.all():
        actions.setdefault(hit.action, set()).add(hit.id)
    methods = {"bm25": (None, True)}
    if embedder is not None:
        methods |= {"dense": (embedder, False), "hybrid": (embedder, True)}
    totals = {m: dict.fromkeys(("precision@3", "recall@5", "hit@1", "mrr"), 0.0) for m in methods}
    unknown = []
    positives: list[dict[str, Any]] = []
    negatives: list[dict[str, Any]] = []
    for pair in pairs:
        relevant = actions.get(pair["relevant_action"])
        if not relevant:
            unknown.append(pair["relevant_action"])
            continue
        for method, (emb, bm25) in methods.items():
            ranked = hybrid.fuse(store, [pair["query"]], (), emb, bm25=bm25, min_cosine=floor)
            for key, value in scores([r.hit.id for r in ranked], relevant).items():
                totals[method][key] += value
        if embedder is not None:
            positives.append(_evidence(store, pair["query"], embedder, relevant))
            negatives.append(_evidence(Without(store, relevant), pair["query"], embedder, None))
    n = len(pairs) - len(unknown)
    result: dict[str, Any] = {
        "pairs": len(pairs),
        "scored": n,
        "unknown_actions": sorted(set(unknown)),
        **{m: {k: round(v / n, 3) for k, v in t.items()} for m, t in totals.items()},
    }
    if embedder is not None:
        result["threshold"] = _threshold(positives, negatives)
    return result


def _evidence(store: Any, query: str, embedder: Any, relevant: set[int] | None) -> dict:
    """Per dense floor: the fused score of the relevant triple (or of the best one left)."""
    found = {}
    for floor in FLOORS:
        ranked = hybrid.fuse(store, [query], (), embedder, min_cosine=floor)
        if relevant is not None:
            ranked = [r for r in ranked if r.hit.id in relevant]
        found[floor] = ranked[0].fused if ranked else 0.0
    return found


def _threshold(positives: list[dict], negatives: list[dict]) -> list[dict[str, Any]]:
    """For each floor and match rank: the share of known failures whose relevant triple
    passes (would be tried) and of unknown ones whose best triple passes (a wrong try)."""
    rows = []
    for floor in FLOORS:
        for rank in MATCH_RANKS:
            needed = 2 / (hybrid.RRF_K + rank)
            known = sum(p[floor] >= needed for p in positives) / len(positives)
            unknown = sum(q[floor] >= needed for q in negatives) / len(negatives)
            rows.append(
                {"min_cosine": floor, "match_rank": rank,
                 "known_tried": round(known, 3), "unknown_tried": round(unknown, 3)}
            )  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("memory")
    parser.add_argument("labelled", nargs="?", default="tests/data/memory/labelled.jsonl")
    parser.add_argument("--embedder", help="default: the one the file was built with")
    parser.add_argument("--embedding-api-base")
    parser.add_argument("--json", help="also write the result here")
    parser.add_argument(
        "--min-cosine", type=float, help="the dense lists' floor (default: hybrid.MIN_COSINE)"
    )
    args = parser.parse_args()
    pairs = [json.loads(line) for line in Path(args.labelled).read_text().splitlines() if line]
    with MemoryStore(args.memory) as store:
        spec = args.embedder or hybrid.stored_embedder(store)
        embedder = None
        if spec and spec != "none":
            embedder = create_embedder(spec, api_base=args.embedding_api_base)
            hybrid.embed_triples(store, embedder)
        result = {
            "triples": len(store.all()),
            "embedder": spec,
            "min_cosine": hybrid.MIN_COSINE if args.min_cosine is None else args.min_cosine,
            **measure(store, pairs, embedder, args.min_cosine),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
