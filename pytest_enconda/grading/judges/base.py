"""What a judge is asked, what it answers, and the protocol every judge implements.

A judge decides whether a predicted error description (or fix) says the same thing as the golden
one. Its answer carries a reason so a failed item can say *why*, and a judge that could not answer
says so (``similar is None``): grading reports that as a judge error, never as "not similar".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

ENTRY_POINT_GROUP = "pytest_enconda.judges"

Aspect = Literal["description", "fix"]


class JudgeRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    aspect: Aspect
    golden: str = Field(description="the golden error description, or the golden fix")
    candidates: list[str] = Field(
        default_factory=list,
        description="the golden error's correction_candidates (plausible fixes, one is right)",
    )
    predicted: str
    context: str = Field(default="", description="what else helps a judge: the error type, ...")

    def key(self) -> tuple[str, str, str]:
        """Two requests with the same key get the same verdict within a case."""
        return (self.aspect, self.golden, self.predicted)


class Verdict(BaseModel):
    similar: bool | None = Field(description="None: the judge failed (a judge error)")
    confidence: float = 0.0
    reason: str = ""
    error: str | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    judge: str | None = Field(
        default=None,
        description="the judge and version that gave it (offline judges: offline/2, "
        "offline-rules/1)",
    )
    embedder: str | None = Field(
        default=None, description="the embedding model whose similarity decided it, if one did"
    )

    @property
    def is_error(self) -> bool:
        return self.similar is None

    @classmethod
    def judge_error(cls, error: str) -> Verdict:
        return cls(similar=None, confidence=0.0, reason=f"judge error: {error}", error=error)


class JudgeStats(BaseModel):
    name: str
    version: str = Field(default="", description="the judge's version, where it has one")
    embedder: str = Field(default="", description="the embedding model it used (its model id)")
    calls: int = Field(default=0, description="verdicts asked of the judge (cache hits included)")
    requests: int = Field(default=0, description="requests sent to a model, retries included")
    cache_hits: int = 0
    errors: int = Field(default=0, description="verdicts the judge could not give")
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = Field(default=0, description="responses whose price litellm does not know")

    def merged(self, other: JudgeStats) -> JudgeStats:
        """Sum of two stats (xdist workers each have their own judge)."""
        data = self.model_dump()
        for key, value in other.model_dump().items():
            if isinstance(value, str):
                data[key] = data[key] or value  # the same judge in every process
            else:
                data[key] = data[key] + value
        return JudgeStats(**data)


@runtime_checkable
class Judge(Protocol):
    name: str

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        """One verdict per request, in order; never raises for a single failed request."""
        ...

    def stats(self) -> JudgeStats: ...
