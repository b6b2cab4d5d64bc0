"""``summary.json`` / ``summary.md``: computed from the run's typed records (``RunRecords``:
its result rows and each case's records, read once), for the cases that ran."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..agents.output import DIAGNOSIS as DIAGNOSIS_FILE
from ..artifacts import atomic_write_text
from ..aspects import DIAGNOSIS_ASPECTS
from ..grading.aggregate import CaseResult, aggregate
from ..kinds import TASK_KINDS
from ..records import ResultRow, RunDir
from .runrecords import CaseRecords, RunRecords
from .tables import render_markdown


def _outcomes(rows: Iterable[ResultRow]) -> dict[str, dict[str, int]]:
    """Each item's counts by outcome; a timed-out failure counts as ``timeout``, not ``failed``
    (pytest's own count has it among its failures)."""
    per_item: dict[str, Counter[str]] = {}
    for row in rows:
        per_item.setdefault(row.item, Counter())[row.label] += 1
    return {item: dict(counts) for item, counts in sorted(per_item.items())}


def _case_results(records: RunRecords) -> list[CaseResult]:
    out = []
    for case, rows in records.case_rows().items():
        if not rows:
            continue
        items = {row.item: row for row in rows}
        # A grade that could not be read (an edited run) counts as ungraded: its rows still
        # carry the verdicts.
        graded = any(item in items for item in DIAGNOSIS_ASPECTS)
        diagnosis = records.cases[case].diagnosis if graded else None
        # Diagnosis items all skipped (the cost ceiling, --python): not run, not in the coverage.
        ran = any(items[i].outcome != "skipped" for i in DIAGNOSIS_ASPECTS if i in items)
        missing = ran and diagnosis is None and _diagnosis_missing(records.cases[case])
        execution = items["execution"].outcome if "execution" in items else ""
        # The case's first row says its level (every item of a case carries the same one).
        level = rows[0].level
        if level is None:
            level = len(diagnosis.golden_types) if diagnosis else 0
        out.append(
            CaseResult(
                case_id=case,
                level=level,
                diagnosis=diagnosis,
                execution_passed={"passed": True, "failed": False}.get(execution),
                diagnosis_missing=missing,
                diagnosis_ungraded=ran and diagnosis is None and not missing,
                golden_types=records.cases[case].golden_types if missing else [],
                trivial=_trivial(records.cases[case]),
            )
        )
    return out


def _trivial(case: CaseRecords) -> bool:
    """Whether the case's reference is one an empty setup passes (``case.json``'s reference)."""
    reference = case.facts.reference if case.facts is not None else None
    return bool(reference and reference.get("trivial"))


def _diagnosis_missing(case: CaseRecords) -> bool:
    """Whether the agent left no readable ``diagnosis.json`` (its saved outcome says so)."""
    return case.outcome is not None and DIAGNOSIS_FILE in case.outcome.output_problems


def run_summary(
    records: RunRecords,
    *,
    agent: str,
    model: str | None,
    judge: str,
    subset: Path | None,
) -> dict[str, Any]:
    """The summary of a run from its records, verified-subset metrics included: what the live
    run, ``--resume`` and ``regrade`` all write."""
    from .subset import add_subset

    summary = summarize(records, agent, model, judge)
    return add_subset(summary, _case_results(records), subset)


def grade_run(
    records: RunRecords,
    *,
    agent: str,
    model: str | None,
    judge: str,
    subset: Path | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``summary.json``/``summary.md`` and the exports (``results.csv``, ``tables.md``,
    ``report.html``) of a run, from its records; the summary is returned."""
    from .exports import write_exports

    summary = run_summary(records, agent=agent, model=model, judge=judge, subset=subset)
    summary.update(extra or {})
    write_summary(records.root, summary)
    write_exports(records, summary)
    return summary


def case_set_hash(results: Iterable[tuple[str, str]]) -> str:
    """The identity of what a run measured: its (case, item) pairs, order-free."""
    text = "\n".join(f"{case}\t{item}" for case, item in sorted(set(results)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def summarize(
    records: RunRecords,
    agent: str,
    model: str | None,
    judge: str,
) -> dict[str, Any]:
    """The summary of the run's rows (keyed by case and item) over its cases' records."""
    from .. import __version__

    results = records.rows
    rows = list(results.values())
    cases = _case_results(records)
    summary = aggregate(cases).to_summary_json(agent=agent, model=model, judge=records.judge(judge))
    summary["harness_version"] = __version__
    if judge.strip() == "offline":
        # How far its description/fix accuracy can be trusted: agreement with hand-written labels.
        from ..grading.judges.agreement import read_agreement

        agreement = read_agreement()
        if agreement is not None:
            summary["judge_agreement"] = agreement
    summary["case_set"] = {
        "cases": len({case for case, _item in results}),
        "items": len(results),
        "sha256": case_set_hash(results),
    }
    summary["efficiency"] = efficiency_summary(records)
    summary["timing"] = timing_summary(records)
    for key in ("agent_seconds", "harness_seconds"):
        values = [case[key] for case in summary["timing"]["cases"].values()]
        summary["efficiency"][key] = {
            "mean": sum(values) / len(values) if values else None,
            "cases": len(values),
        }
    # The slowdown each agent's wall clock was stretched by (agents.clock): its spread says how
    # loaded the machine was while the agents ran.
    timed = summary["timing"]["cases"].values()
    factors = [case["clock_factor"] for case in timed if "clock_factor" in case]
    summary["efficiency"]["clock_factor"] = {
        "mean": sum(factors) / len(factors) if factors else None,
        "max": max(factors, default=None),
        "cases": len(factors),
    }
    execution = [row for row in rows if row.item == "execution"]
    summary["items"] = _outcomes(rows)
    # Timeouts counted apart (each is also one of pytest's failures): per item, and in all.
    summary["timeouts"] = sum(row.label == "timeout" for row in rows)
    summary["execution_errors"] = sum(row.outcome == "error" for row in execution)
    if execution:
        # How many instances Pass@1 speaks for: imported ones without a verified reference skip.
        summary["execution_coverage"] = {
            "instances": len(execution),
            "covered": sum(row.outcome != "skipped" for row in execution),
            "no_verified_reference": sum(
                row.outcome == "skipped" and "no verified reference" in row.message
                for row in execution
            ),
        }
    summary["run_dir"] = str(records.root)
    summary["agent_usage"] = agent_usage(records)
    spend = run_spend(records.root, summary["agent_usage"])
    if spend is not None:
        summary["run_spend"] = spend
    pyramid = _pyramid(records)
    if pyramid is not None:
        summary["pyramid"] = pyramid
    # Each registered kind's own numbers (kinds.ReportSection.summarize): AEC's by language, and
    # any a plugin's kind adds, under the key its section reads.
    for kind in TASK_KINDS.values():
        if kind.report is not None and (value := kind.report.summary_of(records)) is not None:
            summary[kind.report.key] = value
    return summary


def _pyramid(records: RunRecords) -> dict[str, Any] | None:
    """The runtime pyramid over probe rows; each shipped stage's numbers come from its record."""
    from .pyramid import pyramid_summary

    rows = []
    for (case, _item), row in records.rows.items():
        stage = row.stage
        if not stage:
            continue
        result = records.cases[case].stages.get(stage)
        numbers: dict[str, Any] = dict(result.numbers) if result is not None else {}
        # A stage run on CPU processes (C4 under --ddp-cpu) says so in its numbers; the summary
        # counts it for the stages that declare such a fallback (``Stage.cpu_fallback``).
        if numbers.get("mode") == "cpu-gloo":
            numbers = {**numbers, "ddp_mode": "cpu"}
        rows.append({**row.to_json(), "numbers": numbers})
    if not rows:
        return None
    # Only the stage's own probe grades the stage: a user's probe marked with its name is
    # reported beside it (its own row, counted in ``user_probes``), never over it.
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    user_probes: dict[str, dict[str, int]] = {}
    for row in rows:
        if is_stage_probe(row["item"], row["stage"]):
            merged[(row["case"], row["stage"])] = row
        else:
            counts = user_probes.setdefault(row["stage"], {})
            counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    cases = sorted({case for case, _stage in merged})
    summary = pyramid_summary(
        merged.values(),
        efficiency={case: records.cases[case].efficiency() for case in cases},
    )
    if user_probes:
        summary["user_probes"] = user_probes
    return summary


# The file the stages' own probes are collected from (``probes/probe_pyramid.py``).
STAGE_PROBE_FILE = "probe_pyramid.py"


def is_stage_probe(item: object, stage: object) -> bool:
    """Whether an item is its stage's own probe, not a user's probe marked with the stage
    (either may come from pytest's untyped user properties)."""
    from ..stages import STAGES

    if not isinstance(stage, str) or stage not in STAGES:
        return False
    return item == f"{STAGE_PROBE_FILE}::{STAGES.get(stage).probe}"


def agent_usage(records: RunRecords) -> dict[str, Any]:
    """The agents' model tokens and cost over the cases that ran, from each agent's outcome.

    ``cost_usd`` is ``None`` (unknown) when any call had no price; ``priced_cost_usd`` sums the
    calls that had one.
    """
    from ..agents.base import TokenUsage

    total = TokenUsage()
    cases = unpriced = 0
    for case in records.cases.values():
        if case.outcome is None:
            continue
        usage = case.outcome.usage
        cases += 1
        unpriced += int(usage.cost_unknown)
        total = total.add(usage)
    return {
        "cases": cases,
        "calls": total.calls,
        "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens,
        "total_tokens": total.total_tokens,
        "cost_usd": None if total.cost_unknown else round(total.cost_usd, 6),
        "priced_cost_usd": round(total.cost_usd, 6),
        "cases_with_unknown_cost": unpriced,
    }


def run_spend(run_dir: Path, usage: dict[str, Any]) -> dict[str, Any] | None:
    """Every model call the run paid for, from its cost ledger (``None`` without one).

    ``agent_usage`` sums the outcomes of the cases that count; an attempt the cost ceiling cut and
    ``--resume`` ran again, a judge's calls and an agent that died before writing its outcome are
    in no outcome, yet were spent: ``outside_outcomes`` counts them, so the bill is never
    under-stated."""
    from ..agents.llm import LedgerState
    from ..records import RunDir
    from ..textio import read_bounded

    path = RunDir(run_dir).cost_ledger
    try:
        state = LedgerState.model_validate_json(read_bounded(path, 1 << 20, follow_links=False))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return {"error": f"{path.name}: unreadable ({str(exc).splitlines()[0][:200]})"}
    return {
        "calls": state.calls,
        "cost_usd": round(state.spent_usd, 6),
        "unpriced_calls": state.unpriced_calls,
        "outside_outcomes": {
            "calls": max(0, state.calls - int(usage.get("calls") or 0)),
            "cost_usd": round(
                max(0.0, state.spent_usd - float(usage.get("priced_cost_usd") or 0)), 6
            ),
        },
    }


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
    run = RunDir(run_dir)
    atomic_write_text(run.summary_json, text)
    from .subset import markdown_side_by_side

    subset = markdown_side_by_side(summary)
    markdown = render_markdown(summary) + ("\n" + subset if subset else "")
    atomic_write_text(run.summary_md, markdown)


def timing_summary(records: RunRecords) -> dict[str, Any]:
    """Agent time and harness time apart, per case and in all (``CaseRecords.timing``): a
    score must not depend on how long the harness took, and this shows that it did not."""
    cases = {
        case: records.cases[case].timing(rows) for case, rows in records.case_rows().items() if rows
    }
    return {
        "agent_seconds": round(sum(c["agent_seconds"] for c in cases.values()), 3),
        "harness_seconds": round(sum(c["harness_seconds"] for c in cases.values()), 3),
        "cases": cases,
    }


def efficiency_summary(records: RunRecords) -> dict[str, dict[str, Any]]:
    """Means of time to ready, tokens, cost and environment size over the cases that have them."""
    per_case = [case.efficiency() for case in records.cases.values()]
    out: dict[str, dict[str, Any]] = {}
    for name in ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes"):
        values = [v for row in per_case if (v := row.get(name)) is not None]
        out[name] = {"mean": sum(values) / len(values) if values else None, "cases": len(values)}
    return out
