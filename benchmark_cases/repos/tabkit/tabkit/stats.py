"""Column type inference and summary statistics."""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

from dateutil import parser as date_parser


def _is_int(value: str) -> bool:
    try:
        int(value)
    except ValueError:
        return False
    return True


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _as_date(value: str) -> datetime | None:
    # dateutil accepts the mixed spellings found in exported spreadsheets ("Jan 9 2024",
    # "2024/02/02"), which datetime.fromisoformat rejects.
    try:
        return date_parser.parse(value)
    except (ValueError, OverflowError):
        return None


def infer_type(values: list[str]) -> str:
    """``int``, ``float``, ``date`` or ``text``; empty cells are ignored."""
    present = [v for v in values if v]
    if not present:
        return "text"
    # Numbers are tested first: dateutil would happily read "12" as the 12th of this month.
    if all(_is_int(v) for v in present):
        return "int"
    if all(_is_float(v) for v in present):
        return "float"
    if all(_as_date(v) is not None for v in present):
        return "date"
    return "text"


def column_stats(values: list[str]) -> dict[str, Any]:
    present = [v for v in values if v]
    kind = infer_type(values)
    out: dict[str, Any] = {
        "type": kind,
        "count": len(present),
        "missing": len(values) - len(present),
    }
    if kind in ("int", "float"):
        numbers = [float(v) for v in present]
        out.update(min=min(numbers), max=max(numbers), mean=round(statistics.fmean(numbers), 4))
    elif kind == "date":
        dates = sorted(d for d in map(_as_date, present) if d is not None)
        out.update(min=dates[0].date().isoformat(), max=dates[-1].date().isoformat())
    else:
        out["distinct"] = len(set(present))
    return out
