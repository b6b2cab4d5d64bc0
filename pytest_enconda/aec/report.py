"""AEC results by language, for ``summary.json`` and ``report.html``: success rate, tests run,
PASS-set share, time and tokens, and how often the log decided (the judge was needed otherwise).

Read from each case's ``aec.json`` (``aec.grading``), so a ``regrade`` or ``--resume`` reports the
same numbers as the run that made them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import textio
from ..records import CaseDir
from .grading import GRADE_FILE

MAX_GRADE_BYTES = 8 << 20

HEADER = [
    "Language",
    "Cases",
    "Success %",
    "Tests run %",
    "Tests executed (mean)",
    "PASS-set share % (cases)",
    "Decided by log / judge / neither",
    "Agent s (mean)",
    "Replay s (mean)",
    "Tokens (mean)",
]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(grades: list[dict[str, Any]]) -> dict[str, Any]:
    shares = [g["pass_set"]["share"] for g in grades if g.get("pass_set")]
    decided = {
        k: sum(g.get("decided_by") == k for g in grades) for k in ("log", "judge", "neither")
    }
    return {
        "cases": len(grades),
        "success": sum(g.get("verdict") == "success" for g in grades),
        "success_rate": _mean([float(g.get("verdict") == "success") for g in grades]),
        "tests_run": sum(bool(g.get("tests_run")) for g in grades),
        "tests_run_rate": _mean([float(bool(g.get("tests_run"))) for g in grades]),
        "tests_executed_mean": _mean([float(g.get("executed") or 0) for g in grades]),
        "pass_set_share_mean": _mean(shares),
        "pass_set_cases": len(shares),
        "decided_by": decided,
        "agent_seconds_mean": _mean([float(g.get("agent_seconds") or 0) for g in grades]),
        "replay_seconds_mean": _mean(
            [float(g.get("setup_seconds") or 0) + float(g.get("test_seconds") or 0) for g in grades]
        ),
        "tokens_mean": _mean([float(g.get("tokens") or 0) for g in grades]),
    }


def aec_summary(run_dir: Path, cases: Iterable[str]) -> dict[str, Any] | None:
    """Per language and overall, over the cases that have an ``aec.json``; None when none do."""
    grades = []
    for case in sorted(set(cases)):
        path = CaseDir(run_dir, case).root / GRADE_FILE
        if not path.is_file():
            continue
        try:
            # A run directory given to regrade or --resume is input: bounded, no link, no FIFO.
            data = textio.read_bounded(path, MAX_GRADE_BYTES, follow_links=False)
            grade = textio.parse_json(data)
        except (OSError, ValueError):
            continue
        if isinstance(grade, dict):
            grades.append(grade)
    if not grades:
        return None
    languages: dict[str, list[dict[str, Any]]] = {}
    for grade in grades:
        languages.setdefault(grade.get("language") or "unknown", []).append(grade)
    return {
        "by_language": {name: _group(rows) for name, rows in sorted(languages.items())},
        "overall": _group(grades),
    }


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def rows(aec: Mapping[str, Any]) -> list[list[str]]:
    """The table's rows: one per language, then all."""
    out = []
    groups = [*aec.get("by_language", {}).items(), ("all", aec.get("overall") or {})]
    for name, group in groups:
        decided = group.get("decided_by") or {}
        out.append(
            [
                name,
                str(group.get("cases", 0)),
                _pct(group.get("success_rate")),
                _pct(group.get("tests_run_rate")),
                _num(group.get("tests_executed_mean")),
                f"{_pct(group.get('pass_set_share_mean'))} ({group.get('pass_set_cases', 0)})",
                " / ".join(str(decided.get(k, 0)) for k in ("log", "judge", "neither")),
                _num(group.get("agent_seconds_mean")),
                _num(group.get("replay_seconds_mean")),
                _num(group.get("tokens_mean"), 0),
            ]
        )
    return out
