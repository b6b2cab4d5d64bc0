"""Judges of descriptions and fixes, chosen by ``--judge``.

``offline`` (default) and ``llm:<model>`` are built in; a third party registers a judge under the
entry-point group ``pytest_enconda.judges``: ``--judge NAME[:ARG]`` loads the entry point ``NAME``
and calls it as ``factory(ARG or None, api_base=..., cache_dir=..., concurrency=..., timeout=...,
retries=...)``; it must return an object with the ``Judge`` protocol.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from ...registry import Registry
from .base import ENTRY_POINT_GROUP, Judge, JudgeRequest, JudgeStats, Verdict

__all__ = [
    "ENTRY_POINT_GROUP",
    "Judge",
    "JudgeRequest",
    "JudgeStats",
    "Verdict",
    "available",
    "create_judge",
]


# Built-ins are made in ``create_judge`` (their options differ); a third party's entry point is
# kept unloaded until its judge is chosen.
JUDGES: Registry[EntryPoint | None] = Registry(
    "judge", ENTRY_POINT_GROUP, from_entry_point=lambda entry_point: entry_point
)
JUDGES.register(None, name="offline")
JUDGES.register(None, name="llm")


def available() -> list[str]:
    return sorted(JUDGES.names())


def create_judge(
    spec: str,
    *,
    api_base: str | None = None,
    cache_dir: Path | None = None,
    concurrency: int = 4,
    timeout: float = 60,
    retries: int = 3,
    price: tuple[float, float] | None = None,
    ledger: Any = None,
) -> Judge:
    """The judge named by ``spec``; ``ValueError`` names the problem for a bad spec."""
    name, sep, arg = spec.strip().partition(":")
    if name == "offline" and not sep:
        from .offline import OfflineJudge

        return OfflineJudge()
    if name == "llm":
        if not arg:
            raise ValueError(f"--judge {spec!r}: expected llm:<model>, e.g. llm:gpt-4o-mini")
        from .llm import LlmJudge

        return LlmJudge(
            arg,
            api_base=api_base,
            cache_dir=cache_dir,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            price=price,
            ledger=ledger,
        )
    entry_point = JUDGES.get(name) if name in JUDGES else None
    if entry_point is None:
        raise ValueError(
            f"--judge {spec!r}: unknown judge {name!r}; available: {', '.join(available())}"
        )
    factory = entry_point.load()
    judge = factory(
        arg or None,
        api_base=api_base,
        cache_dir=cache_dir,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
    )
    if not isinstance(judge, Judge):
        raise ValueError(
            f"--judge {spec!r}: entry point {entry_point.value} did not return a judge "
            "(needs name, judge_many(requests) and stats())"
        )
    return judge
