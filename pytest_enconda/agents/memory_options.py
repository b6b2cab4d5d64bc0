"""The memory options a run passes to its agent: ``--embedder`` and ``--embedding-api-base``,
for an agent whose memory lookups take them. Its own module: the embedders reach the agents'
model plumbing (litellm), so neither the agent registry nor the embedders may import it back."""

from __future__ import annotations


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
