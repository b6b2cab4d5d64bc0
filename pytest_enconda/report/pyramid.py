"""The pyramid summary of a run: per-stage funnel counts, C0's missing imports, C5's audit and
the efficiency means, as a table for the terminal and the reports.

Read from the stage registry (a conftest.py's or plugin's stages included), so a stage added
there has its column without a change here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..grading.pyramid import KINDS
from ..stages import STAGES, Stage
from ..stages.base import SummaryKind

# The efficiency columns, as ``efficiency.efficiency`` names them.
_EFFICIENCY = ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes", "prefix_bytes")


def _stage_table() -> list[Stage]:
    """The registered stages, in order (a conftest.py's or plugin's included)."""
    return STAGES.values()


def _funnel_stages() -> list[str]:
    """Stages summarised as passed of applicable (C1-C4 and most added stages)."""
    return [stage.name for stage in _stage_table() if stage.summary == "funnel"]


def stage_span() -> str:
    """The registered stages as a range for headings: ``C0-C5`` (``C0-C9`` with a plugin's)."""
    stages = _stage_table()
    return f"{stages[0].name}-{stages[-1].name}" if stages else ""


def summary_stages(kind: SummaryKind) -> list[Stage]:
    """The stages whose rows a summary of ``kind`` counts (C0's imports, C5's audit): each
    keeps its numbers under its own name in the pyramid summary."""
    return [stage for stage in _stage_table() if stage.summary == kind]


def _stage(row: Mapping[str, Any]) -> str | None:
    names = {stage.name.upper(): stage.name for stage in _stage_table()}
    for key in ("stage", "level", "aspect"):
        value = row.get(key)
        if isinstance(value, str) and value.upper() in names:
            return names[value.upper()]
    # A row without its stage: the name as a word (``C2``) or a probe's ``test_c2_`` prefix.
    item = str(row.get("item", ""))
    spelled = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    if not spelled:
        return None
    match = re.search(rf"\b({spelled})\b|test_({spelled})_", item, re.IGNORECASE)
    if match:
        return names[(match.group(1) or match.group(2)).upper()]
    return None


def _numbers(row: Mapping[str, Any]) -> dict[str, Any]:
    numbers = row.get("numbers")
    merged = dict(numbers) if isinstance(numbers, Mapping) else {}
    for key, value in row.items():
        merged.setdefault(key, value)
    return merged


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def pyramid_summary(
    rows: Iterable[Mapping[str, Any]],
    efficiency: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The paper's main table from result rows ``{case, item, level|stage, outcome, numbers}``.

    C0: missing/total summed over the cases it measured (and per case); an error row counts in
    ``errors`` and in no sum. C1-C4: passed / applicable, where a skipped row leaves the
    denominator and a failed row counts against the agent; an error row (the harness failed:
    repository unavailable, Docker) is counted in ``error`` and leaves the denominator too, as
    harness errors leave Pass@1's: the agent is not blamed for them. C5: hallucinations by kind
    (from ``numbers.hallucinations``: a list of ``{kind}`` or a ``{kind: count}`` map), audited
    cases, missing and invalid reports. Efficiency: per-case values averaged over the cases that
    have them, taken from ``efficiency`` (case -> ``efficiency.efficiency``, computed from the
    case's saved artifacts) when given, else from the rows' numbers.
    """
    stages: dict[str, dict[str, Any]] = {
        stage: {"passed": 0, "failed": 0, "error": 0, "skipped": 0} for stage in _funnel_stages()
    }
    imports = {stage.name: _imports_counts() for stage in summary_stages("imports")}
    audits = {stage.name: _audit_counts() for stage in summary_stages("audit")}
    cpu_runs = {stage.name: 0 for stage in _stage_table() if stage.cpu_fallback}
    per_case: dict[str, dict[str, float]] = {}
    cases: set[str] = set()
    for row in rows:
        case = str(row.get("case", ""))
        cases.add(case)
        numbers = _numbers(row)
        if efficiency is None:
            for name in _EFFICIENCY:
                value = _number(numbers.get(name))
                if value is not None:
                    per_case.setdefault(case, {}).setdefault(name, value)
        stage = _stage(row)
        outcome = str(row.get("outcome", ""))
        if stage is None:
            continue
        if stage in imports:
            _count_imports(imports[stage], case, outcome, numbers)
        elif stage in audits:
            _count_c5(audits[stage], outcome, numbers)
        else:
            key = outcome if outcome in ("passed", "failed", "skipped") else "error"
            stages[stage][key] += 1
            if stage in cpu_runs and numbers.get("ddp_mode") == "cpu" and key != "skipped":
                cpu_runs[stage] += 1
    summary: dict[str, Any] = {"cases": len(cases)}
    for name, c0 in imports.items():
        c0["percent_missing"] = _percent(c0["missing"], c0["total"])
        summary[name] = c0
    for stage, counts in stages.items():
        applicable = counts["passed"] + counts["failed"]
        summary[stage] = {
            **counts,
            "applicable": applicable,
            "percent": _percent(counts["passed"], applicable),
        }
    for stage, runs in cpu_runs.items():
        if stage in summary:
            summary[stage]["cpu_mode"] = runs
    summary.update(audits)
    if efficiency is not None:
        per_case = {
            case: {
                name: value
                for name in _EFFICIENCY
                if (value := _number(values.get(name))) is not None
            }
            for case, values in efficiency.items()
        }
    summary["efficiency"] = {
        name: _mean([values[name] for values in per_case.values() if name in values])
        for name in _EFFICIENCY
    }
    return summary


def _imports_counts() -> dict[str, Any]:
    return {"missing": 0, "total": 0, "measured": 0, "errors": 0, "per_case": {}}


def _audit_counts() -> dict[str, Any]:
    return {
        **{kind: 0 for kind in KINDS},
        "hallucinations": 0,
        "audited": 0,
        "with_hallucinations": 0,
        "reports_missing": 0,
        "reports_invalid": 0,
        "errors": 0,
        "inconclusive": 0,
    }


def _count_imports(c0: dict[str, Any], case: str, outcome: str, numbers: Mapping[str, Any]) -> None:
    missing, total = _number(numbers.get("missing_count")), _number(numbers.get("total"))
    if outcome in ("passed", "failed") and missing is not None and total is not None:
        c0["missing"] += int(missing)
        c0["total"] += int(total)
        c0["measured"] += 1
        c0["per_case"][case] = {"missing": int(missing), "total": int(total)}
    elif outcome != "skipped":
        c0["errors"] += 1
        c0["per_case"][case] = {"missing": None, "total": None, "outcome": outcome}


def _count_c5(c5: dict[str, Any], outcome: str, numbers: Mapping[str, Any]) -> None:
    report = numbers.get("report_outcome") or numbers.get("report")
    if report == "missing":
        c5["reports_missing"] += 1
        return
    if report == "invalid":
        c5["reports_invalid"] += 1
        return
    if outcome not in ("passed", "failed"):
        if outcome != "skipped":
            c5["errors"] += 1
        return
    c5["audited"] += 1
    found = numbers.get("hallucinations") or []
    counts: dict[str, int] = {}
    if isinstance(found, Mapping):
        counts = {str(k): int(v) for k, v in found.items() if _number(v) is not None}
    elif isinstance(found, list):
        for entry in found:
            kind = entry.get("kind") if isinstance(entry, Mapping) else entry
            counts[str(kind)] = counts.get(str(kind), 0) + 1
    total = 0
    for kind in KINDS:
        c5[kind] += counts.get(kind, 0)
        total += counts.get(kind, 0)
    c5["hallucinations"] += total
    c5["with_hallucinations"] += 1 if total else 0
    inconclusive = numbers.get("inconclusive")
    c5["inconclusive"] += len(inconclusive) if isinstance(inconclusive, list) else 0


def _mean(values: list[float]) -> dict[str, Any]:
    return {"mean": sum(values) / len(values) if values else None, "cases": len(values)}


def pyramid_table(summary: Mapping[str, Any]) -> str:
    """The summary as a Markdown table in the paper's column order."""
    cells: list[str] = []
    for stage in _stage_table():
        if stage.name not in summary:  # a summary written before this stage was registered
            cells.append("-")
        elif stage.summary == "imports":
            c0 = summary[stage.name]
            errors = f" ({c0['errors']} err)" if c0["errors"] else ""
            cells.append(f"{c0['missing']}/{c0['total']}" + errors)
        elif stage.summary == "audit":
            c5 = summary[stage.name]
            cells.append(
                f"{c5['path']}/{c5['version']}/{c5['capability']}"
                + (
                    f" (+{c5['reports_missing']} missing, {c5['reports_invalid']} invalid)"
                    if c5["reports_missing"] or c5["reports_invalid"]
                    else ""
                )
            )
        else:
            row = summary[stage.name]
            shown = f"{row['passed']}/{row['applicable']}"
            shown += f" ({row['percent']:.1f}%)" if row["percent"] is not None else ""
            shown += f" ({row['error']} err)" if row["error"] else ""
            if row.get("cpu_mode"):
                # --ddp-cpu: not the paper's C4 (GPUs on NCCL), said where the number is.
                shown += f" [{row['cpu_mode']} on cpu-gloo]"
            cells.append(shown)
    efficiency = summary["efficiency"]
    for name in ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes"):
        mean = efficiency[name]["mean"]
        if mean is None:
            cells.append("-")
        elif name == "env_size_bytes":
            cells.append(f"{mean / 1e9:.2f} GB")
        elif name == "cost_usd":
            cells.append(f"${mean:.2f}")
        else:
            cells.append(f"{mean:.0f}" + (" s" if name == "time_to_ready_s" else ""))
    titles = [stage.title for stage in _stage_table()]
    header = "| " + " | ".join([*titles, "time", "tokens", "cost", "size"]) + " |"
    return "\n".join([header, "|" + " --- |" * len(cells), "| " + " | ".join(cells) + " |"])
