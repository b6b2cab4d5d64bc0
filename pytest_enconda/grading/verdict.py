"""The outcome of grading one item: what pytest reports and what results.jsonl records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ItemVerdict(BaseModel):
    outcome: Literal["passed", "failed", "error", "skipped"]
    message: str = ""
    numbers: dict[str, Any] = Field(default_factory=dict)
    timed_out: bool = Field(
        default=False,
        description="a failed item whose step ran out of its (calibrated) budget: pytest counts "
        "it as failed, the records count it apart as a timeout",
    )

    @property
    def label(self) -> str:
        """The outcome as the records count it: ``timeout`` apart from plain failures."""
        return "timeout" if self.timed_out and self.outcome == "failed" else self.outcome
