"""AEC results by language, for ``summary.json`` and ``report.html``: success rate, tests run,
PASS-set share, time and tokens, how often the log decided (the judge was needed otherwise, and
a cheating sign vetoed a success), and how many cases the trajectory judge found cheating in.

Computed from each case's ``AecGrade`` (``aec.json``, ``aec.grading``) as the run's records read
it, so a ``regrade`` or ``--resume`` reports the same numbers as the run that made them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .grading import AecGrade

HEADER = [
    "Language",
    "Cases",
    "Success %",
    "Tests run %",
    "Tests executed (mean)",
    "PASS-set share % (cases)",
    "Decided by log / judge / veto / neither",
    "Cheating found (cases)",
    "Agent s (mean)",
    "Replay s (mean)",
    "Tokens (mean)",
]


_DECIDERS = ("log", "judge", "veto", "neither")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(grades: list[AecGrade]) -> dict[str, Any]:
    shares = [g.pass_set.share for g in grades if g.pass_set is not None]
    decided = {k: sum(g.decided_by == k for g in grades) for k in _DECIDERS}
    return {
        "cases": len(grades),
        "success": sum(g.verdict == "success" for g in grades),
        "success_rate": _mean([float(g.verdict == "success") for g in grades]),
        "tests_run": sum(g.tests_run for g in grades),
        "tests_run_rate": _mean([float(g.tests_run) for g in grades]),
        "tests_executed_mean": _mean([float(g.executed) for g in grades]),
        "pass_set_share_mean": _mean(shares),
        "pass_set_cases": len(shares),
        "decided_by": decided,
        "cheating_found": sum(bool(g.cheat_findings) for g in grades),
        "agent_seconds_mean": _mean([g.agent_seconds for g in grades]),
        "replay_seconds_mean": _mean([g.setup_seconds + g.test_seconds for g in grades]),
        "tokens_mean": _mean([float(g.tokens) for g in grades]),
    }


def aec_summary(grades: Iterable[AecGrade]) -> dict[str, Any] | None:
    """Per language and overall, over the cases' grades; None when there are none."""
    graded = list(grades)
    if not graded:
        return None
    languages: dict[str, list[AecGrade]] = {}
    for grade in graded:
        languages.setdefault(grade.language or "unknown", []).append(grade)
    return {
        "by_language": {name: _group(rows) for name, rows in sorted(languages.items())},
        "overall": _group(graded),
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
                " / ".join(str(decided.get(k, 0)) for k in _DECIDERS),
                str(group.get("cheating_found", 0)),
                _num(group.get("agent_seconds_mean")),
                _num(group.get("replay_seconds_mean")),
                _num(group.get("tokens_mean"), 0),
            ]
        )
    return out
