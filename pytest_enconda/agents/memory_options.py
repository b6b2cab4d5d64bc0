"""The memory options a run passes to its agent: ``--embedder`` and ``--embedding-api-base``,
for an agent whose memory lookups take them. Its own module: the embedders reach the agents'
model plumbing (litellm), so neither the agent registry nor the embedders may import it back."""

from __future__ import annotations

from pydantic import BaseModel, Field


class EmbedderFields(BaseModel):
    """The options ``embedder_options`` fills, for an agent config whose memory lookups embed
    (its fields are how ``embedder_options`` knows the agent takes them)."""

    embedder: str | None = Field(
        default=None,
        description="the embedder memory lookups use (--embedder): default, the one the memory "
        "file was built with; none: BM25 alone",
    )
    embedding_api_base: str | None = Field(
        default=None, description="OpenAI-compatible embeddings server (--embedding-api-base)"
    )


def embedder_options(agent: str, embedder: str | None, api_base: str | None) -> dict[str, str]:
    """``--embedder`` and ``--embedding-api-base`` as the agent's options, for an agent whose
    memory lookups take them (heuristic, swe-agent); ``ValueError`` for a bad embedder spec."""
    from ..embedders import NONE, check_spec
    from . import registry

    if embedder is not None and embedder != NONE:
        check_spec(embedder)
    model = getattr(registry.factory_of(agent), "config_model", None)
    fields = getattr(model, "model_fields", {})
    given = {"embedder": embedder, "embedding_api_base": api_base}
    return {key: value for key, value in given.items() if value is not None and key in fields}
