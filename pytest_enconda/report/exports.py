"""``results.csv`` (one row per item) and ``tables.md`` (the paper's tables) in the run directory.

Both come from the same summary dict and run records as ``report.html`` and the terminal, so a
number pasted from any of them is the same number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..artifacts import atomic_write_text
from ..records import RunDir
from .runrecords import CaseRecords, RunRecords

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


def _types(case: CaseRecords) -> tuple[str, str]:
    """The case's golden and predicted error types: the grade's, else the case's and the
    agent's own."""
    return " ".join(case.golden_types), " ".join(case.predicted_types)


# A message's head says what failed and its tail how the output ended: both are kept.
MAX_CSV_MESSAGE = 2000
_CSV_MESSAGE_TAIL = 600


def csv_message(message: str) -> str:
    """The whole message on one line (each line break written ``\\n``), bounded: a longer one
    keeps its head and its tail around an ellipsis, so a spreadsheet row stays one row."""
    text = "\\n".join(line.rstrip() for line in message.strip().splitlines())
    if len(text) <= MAX_CSV_MESSAGE:
        return text
    head = MAX_CSV_MESSAGE - _CSV_MESSAGE_TAIL - 3
    return f"{text[:head]} … {text[-_CSV_MESSAGE_TAIL:]}"


def results_csv(records: RunRecords, summary: Mapping[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    columns: dict[str, tuple[tuple[str, str], dict[str, Any]]] = {}
    timing = (summary.get("timing") or {}).get("cases", {})
    for row in sorted(records.rows.values(), key=lambda r: (r.case, r.item)):
        case = row.case
        if case not in columns:
            eff = records.cases[case].efficiency()
            efficiency = {k: eff[k] for k in CSV_COLUMNS if k in eff}
            columns[case] = (_types(records.cases[case]), efficiency)
        (golden, predicted), eff = columns[case]
        case_time = timing.get(case, {})
        writer.writerow(
            {
                "case": case,
                "item": row.item,
                "outcome": row.label,
                "level": "" if row.level is None else row.level,
                "stage": row.stage or "",
                "golden_types": golden,
                "predicted_types": predicted,
                "agent": summary.get("agent", ""),
                "model": summary.get("model") or "",
                "judge": summary.get("judge_name") or "",
                "duration_s": row.duration,
                # The case's agent and harness time (summary.json's ``timing``), on each row.
                **{key: case_time.get(key, "") for key in ("agent_seconds", "harness_seconds")},
                **{key: "" if value is None else value for key, value in eff.items()},
                # A test's traceback says less in a spreadsheet than its one-line cause.
                "message": row.headline or csv_message(row.message),
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


def write_exports(records: RunRecords, summary: Mapping[str, Any]) -> list[Path]:
    """``results.csv``, ``tables.md`` and ``report.html`` into the run directory."""
    from .review import write_report

    run = RunDir(records.root)
    atomic_write_text(run.results_csv, results_csv(records, summary))
    atomic_write_text(run.tables_md, tables_markdown(summary))
    return [run.results_csv, run.tables_md, write_report(records, summary)]
