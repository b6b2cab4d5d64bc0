"""The AEC prompt's memory lookup with a model configured: swe-agent asks its own model for the
profile's hypothetical queries (litellm's real HTTP path to a local scripted server), counts the
call as its own, and queries a memory whose vectors came from an OpenAI-compatible embeddings
server at ``--embedding-api-base``; offline (``memory_queries=templates``) the templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import ScriptedServer, completion, prompt_text, step_of, tool_call

from pytest_enconda.agents.memory_options import embedder_options
from pytest_enconda.agents.profile import CodebaseProfile
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.embedders import create_embedder
from pytest_enconda.errors import ModelUnavailable
from pytest_enconda.memory.hybrid import embed_triples
from pytest_enconda.memory.retrieve import (
    FROM_MODEL,
    FROM_TEMPLATES,
    MODEL_GAVE_NONE,
    completer,
    profile_queries,
    template_queries,
)
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.settings import EncondaSettings

CASE = """\
id = "calc-aec"
suite = "aec"
[repository]
kind = "folder"
path = "../repos/calcpkg"
[aec]
language = "python"
[budgets]
agent_seconds = 60
setup_seconds = 30
test_seconds = 30
"""
WRITE = (
    "mkdir -p /enconda/output && echo 'true' > /enconda/output/setup.sh && "
    "echo 'python3 -m pytest -rA' > /enconda/output/test_command"
)
# The model's questions: only the second names what the libxml triple is about.
QUERIES = ["Which Python 3.10 packages does calcpkg need?", "lxml build fails: libxml2 missing"]
QUERY_TOKENS = (70, 30)


def _is_queries_request(body: dict) -> bool:
    return "knowledge base of past setup problems" in prompt_text(body)


def _embedding(body: dict) -> tuple[int, dict]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    # Texts about libxml point one way, the rest the other.
    vectors = [[1.0, 0.0] if "libxml" in t else [0.0, 1.0] for t in texts]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": 1, "total_tokens": 1}
    return 200, {"object": "list", "data": data, "model": "emb", "usage": usage}


def _responder(queries_answer: str):
    def answer(body: dict) -> tuple[int, Any]:
        if "input" in body:
            return _embedding(body)
        if _is_queries_request(body):
            return 200, completion(queries_answer, *QUERY_TOKENS)
        step = step_of(body)
        command = WRITE if step == 0 else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return 200, tool_call(command, call_id=f"c{step}")

    return answer


def _case(tmp_path: Path) -> Any:
    repo = tmp_path / "bench" / "repos" / "calcpkg"
    repo.mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "calcpkg"\nrequires-python = ">=3.10"\ndependencies = ["lxml"]\n'
    )
    (repo / "README.md").write_text("# calcpkg\n")
    (tmp_path / "bench" / "calc-aec").mkdir()
    (tmp_path / "bench" / "calc-aec" / "case.toml").write_text(CASE)
    return load_case(tmp_path / "bench" / "calc-aec" / "case.toml", [tmp_path / "bench"])


def _memory(path: Path, api_base: str, cache: Path) -> None:
    with MemoryStore(path) as store:
        store.add(
            Triple("`pip install` fails building lxml: xmlversion.h not found",
                   "lxml compiles against the system libxml2; install its headers",
                   "apt-get install -y libxml2-dev libxslt1-dev"),
            Provenance("other-e1", "r1", "heuristic", "", "elsewhere/xmltool"),
        )  # fmt: skip
        store.add(
            Triple("`make` fails: gcc: command not found", "no C compiler",
                   "apt-get install -y build-essential"),
            Provenance("other-e2", "r1", "heuristic", "", "elsewhere/ctool"),
        )  # fmt: skip
        embed_triples(store, create_embedder("litellm:emb", api_base=api_base, cache_dir=cache))


def _run(tmp_path: Path, server: ScriptedServer, **options: str) -> tuple[Any, dict]:
    case = _case(tmp_path)
    memory = tmp_path / "memory.db"
    _memory(memory, server.api_base, tmp_path / "cache")
    server.requests.clear()
    server.paths.clear()
    pipeline = CasePipeline(
        EncondaSettings(
            run_dir=tmp_path / "run",
            agent="swe-agent",
            model="scripted",
            api_base=server.api_base,
            memory=memory,
            embedding_api_base=server.api_base,
            agent_options=options,
        ),
        progress=[].append,
        backend=FakeBackend(tmp_path / "fake"),
    )
    outcome = pipeline.agent_outcome(case)
    record = tmp_path / "run" / "cases" / "calc-aec" / "agent" / "memory.json"
    return outcome, json.loads(record.read_text())


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.usefixtures("cache")
def test_the_model_writes_the_queries_and_the_embedder_is_served(
    tmp_path: Path, llm_server: ScriptedServer
) -> None:
    pytest.importorskip("minisweagent")
    llm_server.responder = _responder(json.dumps({"queries": QUERIES}))
    outcome, record = _run(tmp_path, llm_server)
    assert outcome.status == "completed", outcome.message
    asked = [body for body in llm_server.requests if _is_queries_request(body)]
    assert len(asked) == 1
    # The model was asked with the profile's AEC JSON.
    assert '"version_constraint": ">=3.10"' in prompt_text(asked[0])
    assert record["query_source"] == FROM_MODEL and record["queries"] == QUERIES
    # The file's own embedder, reached at --embedding-api-base: the queries were embedded there.
    assert record["method"] == "hybrid" and record["embedder"] == "litellm:emb"
    embedded = [b["input"] for b in llm_server.requests if "input" in b]
    assert QUERIES in embedded or any(QUERIES[1] in texts for texts in embedded)
    top = record["ranks"][0]
    assert record["given"][0]["action"] == "apt-get install -y libxml2-dev libxslt1-dev"
    assert top["dense_rank"] == 1 and top["bm25_rank"] is not None
    # The agent's prompt carries what the model's queries found.
    agent_request = next(b for b in llm_server.requests if "tools" in b)
    assert "libxml2-dev" in prompt_text(agent_request).split("## Prior knowledge", 1)[1]
    # The queries call is the run's: its tokens are in the outcome's usage.
    turns = [b for b in llm_server.requests if "tools" in b]
    assert outcome.usage.prompt_tokens == QUERY_TOKENS[0] + 300 * len(turns)
    assert outcome.usage.completion_tokens == QUERY_TOKENS[1] + 40 * len(turns)


@pytest.mark.usefixtures("cache")
def test_templates_offline_ask_no_model(tmp_path: Path, llm_server: ScriptedServer) -> None:
    pytest.importorskip("minisweagent")
    llm_server.responder = _responder(json.dumps({"queries": QUERIES}))
    outcome, record = _run(tmp_path, llm_server, memory_queries="templates")
    assert outcome.status == "completed", outcome.message
    assert not any(_is_queries_request(body) for body in llm_server.requests)
    assert record["query_source"] == FROM_TEMPLATES
    assert record["queries"] and not set(record["queries"]) & set(QUERIES)


def test_a_model_naming_no_query_gives_the_templates_and_says_so(
    llm_server: ScriptedServer,
) -> None:
    llm_server.default = (200, completion('I cannot help with that. {"queries": []}'))
    profile = CodebaseProfile(language="Python", install_command="pip install -e .")
    queries, source = profile_queries(profile, completer("q", llm_server.api_base))
    assert source == MODEL_GAVE_NONE and queries == template_queries(profile)
    assert len(llm_server.requests) == 1


def test_an_unreachable_model_stops_the_lookup(llm_server: ScriptedServer) -> None:
    llm_server.default = (401, {"error": {"message": "bad key", "type": "auth"}})
    profile = CodebaseProfile(language="Python")
    with pytest.raises(ModelUnavailable, match=r"completion at http://127\.0\.0\.1"):
        profile_queries(profile, completer("q", llm_server.api_base))


def test_swe_agent_takes_the_embedder_options() -> None:
    given = embedder_options("swe-agent", "litellm:emb", "http://127.0.0.1:9/v1")
    assert given == {"embedder": "litellm:emb", "embedding_api_base": "http://127.0.0.1:9/v1"}
