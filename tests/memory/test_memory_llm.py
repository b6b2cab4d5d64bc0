"""The model paths through a local scripted OpenAI-compatible server: triples extracted by the
extraction prompt, hypothetical queries from a profile, and embedding retrieval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_llm import ScriptedServer, completion, prompt_text
from test_memory_store import HEURISTIC, write_run

from pytest_enconda.cli import main
from pytest_enconda.embedders import create_embedder
from pytest_enconda.memory.hybrid import embed_triples
from pytest_enconda.memory.retrieve import completer, llm_queries, retrieve
from pytest_enconda.memory.store import MemoryStore

ANSWER = {
    "triples": [
        {
            "problem": "filesniff samples fails: ImportError: failed to find libmagic",
            "solution": "python-magic wraps the system libmagic, absent from the image; install it",
            "action": "apt-get install -y libmagic1",
        },
        {"problem": "incomplete", "solution": "", "action": "x"},
    ]
}


def test_llm_extractor_end_to_end(
    tmp_path: Path, llm_server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.default = (200, completion("Here you go:\n```json\n" + json.dumps(ANSWER) + "\n```"))
    run = write_run(tmp_path / "run", "filesniff-e1", HEURISTIC)
    out = tmp_path / "m.db"
    code = main(
        [
            "memory",
            "build",
            str(run),
            "--out",
            str(out),
            "--extractor",
            "llm:extractor",
            "--api-base",
            llm_server.api_base,
        ]
    )
    assert code == 0, capsys.readouterr().err
    [request] = llm_server.requests
    shown = prompt_text(request)
    assert "$ filesniff samples" in shown and "failed to find libmagic" in shown
    with MemoryStore(out) as store:
        [hit] = store.all()
    # The model named the repository; the store does not keep the name.
    assert hit.problem == "<project> samples fails: ImportError: failed to find libmagic"
    assert hit.action == "apt-get install -y libmagic1" and hit.projects == ["filesniff"]


def test_hypothetical_queries_come_from_the_profile(llm_server: ScriptedServer) -> None:
    llm_server.default = (
        200,
        completion(
            '{"queries": ["How to install libmagic on Debian?", "pip cannot find python-magic"]}'
        ),
    )
    profile = {"language": {"name": "Python", "version_constraint": ">=3.11"}}
    queries = llm_queries(profile, completer("q", llm_server.api_base))
    assert queries == ["How to install libmagic on Debian?", "pip cannot find python-magic"]
    assert '"version_constraint": ">=3.11"' in prompt_text(llm_server.requests[0])


def _embedding(body: dict) -> tuple[int, dict]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    # A two-word vocabulary: texts about libmagic point one way, the rest the other.
    vectors = [[1.0, 0.0] if "libmagic" in t else [0.0, 1.0] for t in texts]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return 200, {
        "object": "list",
        "data": data,
        "model": "emb",
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def test_embedding_retrieval(tmp_path: Path, llm_server: ScriptedServer) -> None:
    from pytest_enconda.memory.store import Provenance, Triple

    llm_server.responder = _embedding
    with MemoryStore(tmp_path / "m.db") as store:
        store.add(
            Triple("`a` fails: yaml missing", "extra", 'pip install -e ".[yaml]"'),
            Provenance(repository="confmerge"),
        )
        magic, _ = store.add(
            Triple(
                "`b` fails: failed to find libmagic",
                "system library",
                "apt-get install -y libmagic1",
            ),
            Provenance(repository="filesniff"),
        )
        embed = create_embedder("litellm:emb", api_base=llm_server.api_base, cache_dir=tmp_path)
        assert embed_triples(store, embed) == 2
        assert store.meta()["embedder"] == "litellm:emb"
        assert store.meta()["embedding_dim:litellm:emb"] == "2"
        found = retrieve(store, ["where is libmagic"], 1, (), embed)
        assert found.method == "hybrid" and [h.id for h in found.hits] == [magic]
        assert (found.ranked[0].bm25_rank, found.ranked[0].dense_rank) == (1, 1)
        # The other triple's cosine (0) is under the dense list's floor: it is in no list.
        assert len(retrieve(store, ["where is libmagic"], 5, (), embed).hits) == 1
        guarded = retrieve(store, ["where is libmagic"], 1, ["filesniff"], embed)
        assert [h.id for h in guarded.hits] != [magic]
