"""The offline judge's measured agreement with the hand-written test set, as a run's report
quotes it: ``pairs.jsonl``, on which no constant of the judge was tuned (its tuning sets are
``tuning-*.jsonl``).

The figures are written by ``python -m pytest_enconda.bench judge-handwritten --json`` into
``offline_agreement.json`` beside this module (figures only, never the pairs); grading and the
report read them from here, so the report layer never imports the bench.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["AGREEMENT_FILE", "agreement_line", "read_agreement"]

AGREEMENT_FILE = Path(__file__).resolve().parent / "offline_agreement.json"


def read_agreement(path: Path = AGREEMENT_FILE) -> dict[str, Any] | None:
    """The offline judge's figures on the hand-written set, for a run's summary; ``None`` when
    the file is absent or not the bench's output."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        d, f = data["aspects"]["description"], data["aspects"]["fix"]
        return {
            "set": str(data.get("set") or "pairs.jsonl"),
            "judge": str(data["judge"]),
            "version": str(data.get("version") or ""),
            "embedder": str(data.get("embedder") or ""),
            "pairs": int(data["pairs"]),
            "description_accuracy": float(d["accuracy"]),
            "fix_accuracy": float(f["accuracy"]),
            "description_balanced": d["balanced_accuracy"],
            "fix_balanced": f["balanced_accuracy"],
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None


def agreement_line(figures: Mapping[str, Any] | None) -> str | None:
    """The one line a run's report shows for ``read_agreement``'s figures."""
    if not figures:
        return None
    try:
        judge = str(figures["judge"])
        if figures.get("version"):
            judge += f" (version {figures['version']}"
            judge += f", embedder {figures['embedder']})" if figures.get("embedder") else ")"
        where = figures.get("set") or "pairs.jsonl"
        return (
            f"{judge} judge agreement on the hand-written test set ({where}, never tuned on): "
            f"descriptions {float(figures['description_accuracy']):.2f}, fixes "
            f"{float(figures['fix_accuracy']):.2f} ({int(figures['pairs'])} pairs); "
            "use --judge llm:<model> for paper-comparable description and fix accuracy"
        )
    except (KeyError, TypeError, ValueError):
        return None
