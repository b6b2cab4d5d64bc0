"""``summary.json`` / ``summary.md``: computed from the run directory, for the cases that ran."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from ..artifacts import atomic_write_text
from ..settings import EncondaSettings


def _outcomes(results: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, int]]:
    per_item: dict[str, Counter[str]] = {}
    for (_case, item), row in results.items():
        per_item.setdefault(item, Counter())[row["outcome"]] += 1
    return {item: dict(counts) for item, counts in sorted(per_item.items())}


def build_summary(
    run_dir: Path, results: dict[tuple[str, str], dict[str, Any]], settings: EncondaSettings
) -> dict[str, Any]:
    cases = sorted({case for case, _item in results})
    execution = [row for (_c, item), row in results.items() if item == "execution"]
    graded = [row for row in execution if row["outcome"] in ("passed", "failed")]
    summary: dict[str, Any] = {
        "agent": settings.agent,
        "model": settings.model,
        "judge_name": settings.judge,
        "cases": len(cases),
        "items": _outcomes(results),
        "pass_at_1": (sum(r["outcome"] == "passed" for r in graded) / len(graded))
        if graded
        else None,
        "pass_at_1_counts": {
            "passed": sum(r["outcome"] == "passed" for r in graded),
            "graded": len(graded),
            "errors": sum(r["outcome"] == "error" for r in execution),
        },
    }
    return summary


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    atomic_write_text(
        run_dir / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n"
    )
