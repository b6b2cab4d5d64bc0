"""scripts/memory_retrieval_bench.py on a labelled set of the second format (several relevant
actions, the query's repository and the kind of failure): the ``own`` setting scores the query's
own answer, the ``guarded`` one withholds the query's repository and counts as relevant the
triples of other repositories that pairs of the same kind name. BM25 alone: figures by hand."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "memory_retrieval_bench.py"


def _bench() -> dict[str, Any]:
    saved = sys.argv
    sys.argv = [str(SCRIPT)]
    try:
        return runpy.run_path(str(SCRIPT), run_name="bench")
    finally:
        sys.argv = saved


def _store(path: Path) -> MemoryStore:
    store = MemoryStore(path)
    for problem, action, repository in (
        ("pip install reqests fails: No matching distribution found for reqests",
         "pip install requests", "alpha/one"),
        ("pip install nmupy fails: No matching distribution found for nmupy",
         "pip install numpy", "beta/two"),
        ("python -m pytest fails: No module named pytest", "pip install pytest", "gamma/three"),
    ):  # fmt: skip
        store.add(Triple(problem, "a misspelled or missing package", action),
                  Provenance("c", "r", "heuristic", "", repository))  # fmt: skip
    return store


PAIRS = [
    {"query": "No matching distribution found for reqests", "repository": "alpha/one",
     "kind": "misspelled-package", "relevant_actions": ["pip install requests"]},
    {"query": "No matching distribution found for nmupy", "repository": "beta/two",
     "kind": "misspelled-package", "relevant_actions": ["pip install numpy"]},
    {"query": "No module named pytest", "repository": "gamma/three",
     "kind": "test-runner-missing", "relevant_actions": ["pip install pytest"]},
]  # fmt: skip


def test_own_and_guarded_settings(tmp_path: Path) -> None:
    bench = _bench()
    with _store(tmp_path / "m.db") as store:
        own = bench["measure"](store, PAIRS, None)
        guarded = bench["measure"](store, PAIRS, None, guarded=True)
    assert own["setting"] == "own" and own["scored"] == 3 and own["repositories"] == 3
    # Each query's own triple is BM25's first (its misspelling is in no other triple).
    assert own["bm25"] == {"precision@3": round(1 / 3, 3), "recall@5": 1.0, "hit@1": 1.0,
                           "mrr": 1.0}  # fmt: skip
    # Guarded: reqests' relevant triple is numpy's (same kind, another repository) and the
    # other way round; pytest's kind has no triple elsewhere, so that pair is counted apart.
    assert guarded["scored"] == 2 and guarded["unscored"] == 1
    # "No matching distribution found" ranks the other misspelling's triple first.
    assert guarded["bm25"]["hit@1"] == 1.0 and guarded["bm25"]["recall@5"] == 1.0


def test_the_guard_withholds_only_single_repository_triples(tmp_path: Path) -> None:
    bench = _bench()
    with _store(tmp_path / "m.db") as store:
        store.add(Triple("pip install nmupy fails: No matching distribution found for nmupy",
                         "a misspelled or missing package", "pip install numpy"),
                  Provenance("c2", "r", "heuristic", "", "alpha/one"))  # fmt: skip
        ids = {hit.action: hit.id for hit in store.all()}
        # numpy's triple is now seen on alpha too: it stays for alpha's case and beta's.
        assert bench["withheld"](store, "alpha/one") == {ids["pip install requests"]}
        assert bench["withheld"](store, "beta/two") == set()
        kinds = bench["kind_sets"](store, PAIRS)
    assert kinds["misspelled-package"] == {ids["pip install requests"], ids["pip install numpy"]}


def test_an_unknown_action_is_counted_apart(tmp_path: Path) -> None:
    bench = _bench()
    pairs = [{"query": "x", "relevant_action": "pip install nothing-like-it"}]
    with _store(tmp_path / "m.db") as store:
        result = bench["measure"](store, pairs, None)
    assert result["scored"] == 0 and result["unknown_actions"] == ["pip install nothing-like-it"]
    assert result["bm25"]["mrr"] is None


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"query": "q"}', "the line: Value error, names no relevant_action"),
        ('{"relevant_actions": ["a"]}', "query: Field required"),
        ('{"query": "q", "relevant_action": "a", "kinds": "x"}', "kinds: Extra inputs"),
    ],
)
def test_a_bad_line_names_its_file_line_and_field(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "labelled.jsonl"
    path.write_text('{"query": "q", "relevant_action": "a"}\n' + line + "\n")
    with pytest.raises(SystemExit, match=f"labelled.jsonl:2: {field}"):
        _bench()["load_pairs"](path)


def test_the_shipped_labelled_sets_load() -> None:
    load = _bench()["load_pairs"]
    data = SCRIPT.parents[1] / "tests" / "data" / "memory"
    for path in sorted(data.glob("labelled*.jsonl")):
        pairs = load(path)
        assert pairs and all(pair["query"].strip() for pair in pairs)
