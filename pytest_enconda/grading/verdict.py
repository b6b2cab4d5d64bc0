"""The outcome of grading one item: what pytest reports and what results.jsonl records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ItemVerdict(BaseModel):
    outcome: Literal["passed", "failed", "error", "skipped"]
    message: str = ""
    numbers: dict[str, Any] = Field(default_factory=dict)
