"""Stage 1: benchmark cases (shipped folders and imported datasets) as pydantic models."""
