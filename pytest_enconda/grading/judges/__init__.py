"""Judges of descriptions and fixes, chosen by ``--judge``.

``offline`` (default) and ``llm:<model>`` are built in; a third party registers a judge under the
entry-point group ``pytest_enconda.judges``: ``--judge NAME[:ARG]`` loads the entry point ``NAME``
and calls it as ``factory(ARG or None, api_base=..., cache_dir=..., concurrency=..., timeout=...,
retries=...)``; it must return an object with the ``Judge`` protocol.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

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


def available() -> list[str]:
    names = {"offline", "llm"}
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def create_judge(
    spec: str,
    *,
    api_base: str | None = None,
    cache_dir: Path | None = None,
    concurrency: int = 4,
    timeout: float = 60,
    retries: int = 3,
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
        )
    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not matches:
        raise ValueError(
            f"--judge {spec!r}: unknown judge {name!r}; available: {', '.join(available())}"
        )
    factory = matches[0].load()
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
            f"--judge {spec!r}: entry point {matches[0].value} did not return a judge "
            "(needs name, judge_many(requests) and stats())"
        )
    return judge
