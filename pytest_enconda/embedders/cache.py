"""Vectors on disk, one file per (model, kind, text), shared by every run and worker.

A file is named by sha256 of the model's id, the kind and the text, and holds the vector as
little-endian float32. Writes go to a temporary file in the same folder and are renamed into
place, so a concurrent reader (another xdist worker) sees a whole vector or none. Every vector
is returned as float32 values whether it came from the model or the disk: a cold run and a warm
one rank the same.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from array import array
from collections.abc import Sequence
from pathlib import Path

from .base import Embedder, EmbedderUnavailable, Kind


def as_float32(vector: Sequence[float]) -> array[float]:
    return array("f", vector)


class VectorCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, model_id: str, kind: str, text: str) -> Path:
        digest = hashlib.sha256(
            "\x00".join((model_id, kind, text)).encode("utf-8", "surrogatepass")
        ).hexdigest()
        return self.root / digest[:2] / f"{digest}.f32"

    def get(self, path: Path) -> list[float] | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if not data or len(data) % 4:
            return None  # a damaged entry is embedded again and replaced
        values = array("f")
        values.frombytes(data)
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()

    def put(self, path: Path, vector: array[float]) -> None:
        data = array("f", vector)
        if sys.byteorder != "little":
            data.byteswap()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".f32")
        except OSError:
            return  # a read-only or full cache costs time, never a result
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data.tobytes())
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)


class CachedEmbedder:
    """``inner`` behind ``cache``: only texts without a cached vector reach the model."""

    def __init__(self, inner: Embedder, cache: VectorCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.model_id = inner.model_id
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        paths = [self.cache.path(self.model_id, kind, text) for text in texts]
        found = [self.cache.get(path) for path in paths]
        unique = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        self.hits += len(texts) - sum(1 for v in found if v is None)
        if unique:
            self.misses += len(unique)
            fresh = self.inner.embed(unique, kind)
            if len(fresh) != len(unique):
                raise EmbedderUnavailable(
                    f"embedder {self.name}: {len(fresh)} vectors for {len(unique)} texts"
                )
            by_text: dict[str, list[float]] = {}
            for text, vector in zip(unique, fresh, strict=True):
                rounded = as_float32(vector)
                self.cache.put(self.cache.path(self.model_id, kind, text), rounded)
                by_text[text] = rounded.tolist()
            found = [v if v is not None else by_text[t] for v, t in zip(found, texts, strict=True)]
        return [v for v in found if v is not None]
