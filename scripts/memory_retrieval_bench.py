"""Retrieval quality of a memory file on a labelled set: BM25 alone, dense alone, hybrid (both
fused by reciprocal rank), and the data behind the heuristic agent's fused-score threshold.

    python scripts/memory_retrieval_bench.py MEMORY.db [LABELLED.jsonl]
        [--embedder local | litellm:<model> --embedding-api-base URL] [--json OUT]

A line of the labelled set is ``{"query", "relevant_action"}`` (tests/data/memory/labelled.jsonl)
or ``{"query", "relevant_actions": [...], "repository", "kind"}`` (labelled-2.jsonl): the triples
whose action is one of those (actions are stored normalised, as ``memory show`` prints them)
are the query's own answer. Reported per method: precision@3 (the share of the top 3 that is
relevant), recall@5, hit@1 and MRR (first relevant rank within 50). Pairs none of whose actions
the memory holds are counted apart, not scored.

Two settings where the pairs name their ``repository`` and ``kind``:

- ``own``: the memory includes the query's repository (no leakage guard); relevant: the
  query's own answer (finding a failure the memory has seen);
- ``guarded``: the leakage guard withholds the triples seen only on the query's repository (a
  memory without it: the realistic case); relevant: every triple left whose action some pair of
  the same ``kind`` names, i.e. a triple from another repository that fixes the same kind of
  failure. Pairs with no such triple are counted apart.

Threshold data (``own``): for each pair, the relevant triple's fused score (a failure the memory
knows: the agent should try it) and, with the relevant triples taken out of the memory, the best
remaining fused score (a failure it does not know: the agent should try nothing), for several
dense floors (``hybrid.MIN_COSINE``) and match ranks (``FUSED_MIN``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

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


METRICS: tuple[str, ...] = ("precision@3", "recall@5", "hit@1", "mrr")


class LabelledPair(BaseModel):
    """One line of a labelled set (either format)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    relevant_action: str | None = Field(default=None, min_length=1)
    relevant_actions: list[str] = Field(default_factory=list)
    repository: str | None = Field(default=None, min_length=1)
    kind: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _an_action(self) -> LabelledPair:
        if not self.relevant_action and not self.relevant_actions:
            raise ValueError("names no relevant_action or relevant_actions")
        return self


def load_pairs(path: Path) -> list[dict[str, Any]]:
    """The labelled set's pairs; a bad line stops with its file, line and field."""
    pairs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            pair = LabelledPair.model_validate_json(line)
        except ValidationError as exc:
            where = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'the line'}: {e['msg']}"
                for e in exc.errors()
            )
            raise SystemExit(f"{path}:{n}: {where}") from None
        pairs.append(pair.model_dump(exclude_none=True))
    return pairs


def actions_of(pair: dict[str, Any]) -> list[str]:
    return list(pair.get("relevant_actions") or [pair["relevant_action"]])


def kind_sets(store: Any, pairs: list[dict]) -> dict[str, set[int]]:
    """Per kind, the triples whose action a pair of that kind names."""
    ids: dict[str, set[int]] = {}
    for hit in store.all():
        ids.setdefault(hit.action, set()).add(hit.id)
    kinds: dict[str, set[int]] = {}
    for pair in pairs:
        if pair.get("kind"):
            for action in actions_of(pair):
                kinds.setdefault(pair["kind"], set()).update(ids.get(action, ()))
    return kinds


def withheld(store: Any, repository: str) -> set[int]:
    """The triples the leakage guard withholds from a case of ``repository``."""
    from pytest_enconda.memory.normalise import project_key

    key = project_key(repository)
    return {hit.id for hit in store.all() if hit.projects and set(hit.projects) <= {key}}


def measure(
    store: MemoryStore,
    pairs: list[dict],
    embedder: Any,
    floor: float | None = None,
    guarded: bool = False,
) -> dict[str, Any]:
    ids: dict[str, set[int]] = {}
    for hit in store.all():
        ids.setdefault(hit.action, set()).add(hit.id)
    kinds = kind_sets(store, pairs) if guarded else {}
    methods = {"bm25": (None, True)}
    if embedder is not None:
        methods |= {"dense": (embedder, False), "hybrid": (embedder, True)}
    totals = {m: dict.fromkeys(METRICS, 0.0) for m in methods}
    unknown = []
    positives: list[dict[str, Any]] = []
    negatives: list[dict[str, Any]] = []
    for pair in pairs:
        relevant = set().union(*(ids.get(a, set()) for a in actions_of(pair)))
        exclude: tuple[str, ...] = ()
        if guarded and relevant:
            exclude = (pair["repository"],)
            relevant = kinds.get(pair.get("kind") or "", set()) - withheld(store, exclude[0])
        if not relevant:
            unknown.append(actions_of(pair)[0])
            continue
        for method, (emb, bm25) in methods.items():
            ranked = hybrid.fuse(store, [pair["query"]], exclude, emb, bm25=bm25, min_cosine=floor)
            for key, value in scores([r.hit.id for r in ranked], relevant).items():
                totals[method][key] += value
        if embedder is not None and not guarded:
            positives.append(_evidence(store, pair["query"], embedder, relevant))
            negatives.append(_evidence(Without(store, relevant), pair["query"], embedder, None))
    n = len(pairs) - len(unknown)
    result: dict[str, Any] = {
        "setting": "guarded" if guarded else "own",
        "pairs": len(pairs),
        "scored": n,
        "repositories": len({p["repository"] for p in pairs if p.get("repository")}),
        "unscored": len(unknown),
        **{m: {k: round(v / n, 3) if n else None for k, v in t.items()} for m, t in totals.items()},
    }
    if not guarded:
        result["unknown_actions"] = sorted(set(unknown))
    if positives:
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
    pairs = load_pairs(Path(args.labelled))
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
        if all(pair.get("repository") and pair.get("kind") for pair in pairs):
            result["guarded"] = measure(store, pairs, embedder, args.min_cosine, guarded=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
