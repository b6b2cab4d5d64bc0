"""Retrieval quality of a memory file on a labelled set: precision@3 and recall@5.

    python scripts/memory_retrieval_bench.py MEMORY.db [tests/data/memory/labelled.jsonl]
        [--embedding-model M --api-base URL]

Each line of the labelled set is ``{"query", "relevant_action"}``: the triple whose action is
that one is the relevant one (actions are stored normalised, as ``memory show`` prints them).
Precision@3 is the share of the top 3 that is relevant, recall@5 the share of relevant
triples found in the top 5, both averaged over queries. No leakage guard: the labelled
queries were written from the same runs the memory was built from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_enconda.memory.retrieve import embedder, retrieve
from pytest_enconda.memory.store import MemoryStore


def measure(store: MemoryStore, pairs: list[dict], embed=None, model=None) -> dict[str, float]:
    precision = recall = first = 0.0
    for pair in pairs:
        relevant = {h.id for h in store.all() if h.action == pair["relevant_action"]}
        if not relevant:
            raise SystemExit(f"no triple has the action {pair['relevant_action']!r}")
        top = [h.id for h in retrieve(store, [pair["query"]], 5, (), embed, model).hits]
        precision += len(relevant & set(top[:3])) / 3
        recall += len(relevant & set(top[:5])) / len(relevant)
        first += float(bool(top) and top[0] in relevant)
    n = len(pairs)
    # With one relevant triple per query precision@3 cannot pass 1/3; hit@1 says more.
    return {"pairs": n, "precision@3": precision / n, "recall@5": recall / n, "hit@1": first / n}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("memory")
    parser.add_argument("labelled", nargs="?", default="tests/data/memory/labelled.jsonl")
    parser.add_argument("--embedding-model")
    parser.add_argument("--api-base")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in Path(args.labelled).read_text().splitlines() if line]
    with MemoryStore(args.memory) as store:
        triples = len(store.all())
        result = {"triples": triples, "bm25": measure(store, pairs)}
        if args.embedding_model:
            embed = embedder(args.embedding_model, args.api_base)
            store.embed_missing(args.embedding_model, embed)
            result["embedding"] = measure(store, pairs, embed, args.embedding_model)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
