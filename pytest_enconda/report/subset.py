"""Metrics on a verified subset beside the full set (``summary.json`` ``subsets`` and the
terminal).

The subset is a list of case ids: ``verified-subset.txt`` of ``pytest-enconda audit`` given with
``--subset``, or found as ``enconda-audit/verified-subset.txt`` beside a ``--cases`` dataset. The
numbers are ``grading.aggregate.aggregate_subset`` over the run's case results: the same rules,
fewer cases.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..grading.aggregate import CaseResult, aggregate_subset

SUBSET_NAME = "verified"


def subset_summary(
    results: Sequence[CaseResult], ids: Collection[str], source: str
) -> dict[str, Any]:
    """The subset's block: where it came from, how many of its ids ran, and its metrics."""
    wanted = frozenset(ids)
    ran = {result.case_id for result in results}
    summary = aggregate_subset(results, wanted)
    return {
        "file": source,
        "ids": len(wanted),
        "cases_in_run": len(ran & wanted),
        "cases_outside_subset": len(ran - wanted),
        **summary.overall.to_json(),
        "by_level": {str(level): block.to_json() for level, block in summary.by_level.items()},
    }


def resolve_subset(explicit: Path | None, datasets: Sequence[Path]) -> Path | None:
    """``--subset``, else the audit's list beside one of the ``--cases`` datasets."""
    if explicit is not None:
        return explicit
    from .audit_files import find_subset

    return find_subset(datasets)


def add_subset(
    summary: dict[str, Any], results: Sequence[CaseResult], path: Path | None
) -> dict[str, Any]:
    """``summary`` with ``subsets.verified`` when a subset file is given; a file that cannot be
    read is recorded with its error rather than stopping the summary."""
    if path is None:
        return summary
    from .audit_files import read_subset

    try:
        ids = read_subset(path)
    except ValueError as exc:
        summary["subsets"] = {SUBSET_NAME: {"file": str(path), "error": str(exc)}}
        return summary
    summary["subsets"] = {SUBSET_NAME: subset_summary(results, ids, str(path))}
    return summary


_ROWS = (
    ("cases", "cases", "count"),
    ("type F1 (paper)", "paper.type_f1", "pct"),
    ("type precision (paper)", "paper.type_precision", "pct"),
    ("type recall (paper)", "paper.type_recall", "pct"),
    ("description acc (paper)", "paper.description_acc", "pct"),
    ("fix acc (paper)", "paper.fix_acc", "pct"),
    ("type F1 (per-error)", "per_error.type_f1", "pct"),
    ("description acc (per-error)", "per_error.description_acc", "pct"),
    ("fix acc (per-error)", "per_error.fix_acc", "pct"),
    ("Pass@1", "pass_at_1", "pct"),
    ("executions run", "execution.run", "count"),
)


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    current: Any = data
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _cell(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    return str(value) if kind == "count" else f"{100 * float(value):.1f}"


def side_by_side_rows(summary: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(metric, full set, verified subset) rows; empty without a usable subset."""
    block = _get(summary, f"subsets.{SUBSET_NAME}")
    if not isinstance(block, Mapping) or "error" in block:
        return []
    return [
        (label, _cell(_get(summary, key), kind), _cell(_get(block, key), kind))
        for label, key, kind in _ROWS
    ]


def render_side_by_side(summary: Mapping[str, Any]) -> str:
    """Plain text for the terminal: the subset's source, then full set and subset in columns."""
    block = _get(summary, f"subsets.{SUBSET_NAME}")
    if not isinstance(block, Mapping):
        return ""
    if "error" in block:
        return f"verified subset not used: {block['error']}\n"
    rows = side_by_side_rows(summary)
    width = max(len(label) for label, _full, _sub in rows)
    lines = [
        f"Full set and verified subset ({block['cases_in_run']} of the run's cases are in the "
        f"{block['ids']} ids of {block['file']}; %)",
        f"{'metric':<{width}}  {'full':>8}  {'verified':>8}",
    ]
    lines += [f"{label:<{width}}  {full:>8}  {sub:>8}" for label, full, sub in rows]
    return "\n".join(lines) + "\n"


def markdown_side_by_side(summary: Mapping[str, Any]) -> str:
    """The same table in Markdown, for ``summary.md``; empty without a usable subset."""
    rows = side_by_side_rows(summary)
    if not rows:
        return ""
    block = summary["subsets"][SUBSET_NAME]
    lines = [
        "## Full set and verified subset",
        "",
        f"{block['cases_in_run']} of the run's cases are in the {block['ids']} ids of "
        f"`{block['file']}`; metrics in %.",
        "",
        "| metric | full | verified |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {label} | {full} | {sub} |" for label, full, sub in rows]
    return "\n".join(lines) + "\n"
