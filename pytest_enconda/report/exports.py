"""``results.csv`` (one row per item) and ``tables.md`` (the paper's tables) in the run directory.

Both come from the same summary dict and result rows as ``report.html`` and the terminal, so a
number pasted from any of them is the same number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..artifacts import atomic_write_text
from ..records import CaseDir, RunDir, case_efficiency, outcome_label
from .evidence import read_json

CSV_COLUMNS = [
    "case",
    "item",
    "outcome",
    "level",
    "stage",
    "golden_types",
    "predicted_types",
    "agent",
    "model",
    "judge",
    "duration_s",
    "agent_seconds",
    "harness_seconds",
    "time_to_ready_s",
    "tokens",
    "cost_usd",
    "env_size_bytes",
    "message",
]


def _types(run_dir: Path, case: str) -> tuple[str, str]:
    case_dir = CaseDir(run_dir, case)
    # An edited run's records may hold anything: what is not the expected shape is left out.
    facts = _mapping(read_json(case_dir.facts, run_dir))
    grade = _mapping(read_json(case_dir.diagnosis, run_dir))
    golden = _list(facts.get("error_types")) or _list(grade.get("golden_types"))
    predicted = grade.get("predicted_types")
    if not isinstance(predicted, list):
        outcome = _mapping(read_json(case_dir.agent_outcome, run_dir))
        entries = _list(outcome.get("diagnosis"))
        predicted = [p.get("error_type") for p in entries if isinstance(p, Mapping)]
    return " ".join(map(str, golden)), " ".join(map(str, predicted))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def results_csv(
    run_dir: Path, summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    cache: dict[str, tuple[tuple[str, str], dict[str, Any]]] = {}
    for row in sorted(results, key=lambda r: (str(r["case"]), str(r["item"]))):
        case = str(row["case"])
        if case not in cache:
            eff = case_efficiency(CaseDir(run_dir, case))
            cache[case] = (_types(run_dir, case), {k: eff[k] for k in CSV_COLUMNS if k in eff})
        (golden, predicted), eff = cache[case]
        message = str(row.get("message") or "").strip()
        writer.writerow(
            {
                "case": case,
                "item": row["item"],
                "outcome": outcome_label(row),
                "level": "" if row.get("level") is None else row["level"],
                "stage": row.get("stage") or "",
                "golden_types": golden,
                "predicted_types": predicted,
                "agent": summary.get("agent", ""),
                "model": summary.get("model") or "",
                "judge": summary.get("judge_name") or "",
                "duration_s": row.get("duration", ""),
                # The case's agent and harness time (summary.json's ``timing``), on each row.
                **{
                    key: timing.get(key, "")
                    for key in ("agent_seconds", "harness_seconds")
                    for timing in [(summary.get("timing") or {}).get("cases", {}).get(case, {})]
                },
                **{key: "" if value is None else value for key, value in eff.items()},
                "message": message.splitlines()[-1][:300] if message else "",
            }
        )
    return buffer.getvalue()


def tables_markdown(summary: Mapping[str, Any]) -> str:
    from .review import EFFICIENCY_HEADER, efficiency_rows
    from .tables import _markdown_table, render_markdown

    text = render_markdown(summary)
    return (
        text
        + "\n## Averages per case\n\n"
        + _markdown_table(EFFICIENCY_HEADER, efficiency_rows(summary))
        + "\n"
    )


def write_exports(
    run_dir: Path, summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
) -> list[Path]:
    """``results.csv``, ``tables.md`` and ``report.html`` into the run directory."""
    from .review import write_report

    run = RunDir(run_dir)
    atomic_write_text(run.results_csv, results_csv(run_dir, summary, results))
    atomic_write_text(run.tables_md, tables_markdown(summary))
    return [run.results_csv, run.tables_md, write_report(run_dir, summary, results)]
