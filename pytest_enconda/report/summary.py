"""``summary.json`` / ``summary.md``: computed from the run directory, for the cases that ran."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..artifacts import ArtifactError, atomic_write_text, read_model
from ..aspects import DIAGNOSIS_ASPECTS
from ..grading.aggregate import CaseResult, aggregate
from ..grading.diagnosis import DiagnosisGrade
from ..grading.judges.base import JudgeStats
from ..records import (
    CaseDir,
    Results,
    RunDir,
    case_efficiency,
    case_timing,
    outcome_label,
    read_json_file,
)
from .tables import render_markdown


def _outcomes(results: Results) -> dict[str, dict[str, int]]:
    """Each item's counts by outcome; a timed-out failure counts as ``timeout``, not ``failed``
    (pytest's own count has it among its failures)."""
    per_item: dict[str, Counter[str]] = {}
    for (_case, item), row in results.items():
        per_item.setdefault(item, Counter())[outcome_label(row)] += 1
    return {item: dict(counts) for item, counts in sorted(per_item.items())}


def _case_results(run_dir: Path, results: Results) -> list[CaseResult]:
    by_case: dict[str, dict[str, dict[str, Any]]] = {}
    for (case, item), row in results.items():
        by_case.setdefault(case, {})[item] = row
    out = []
    for case, rows in sorted(by_case.items()):
        diagnosis_path = CaseDir(run_dir, case).diagnosis
        diagnosis = None
        graded = any(item in rows for item in DIAGNOSIS_ASPECTS)
        if graded and diagnosis_path.is_file():
            # An edited or linked grade in a run given to compare/regrade: counted as ungraded
            # (its rows still carry the verdicts) rather than stopping the summary.
            with contextlib.suppress(ArtifactError):
                diagnosis = read_model(diagnosis_path, DiagnosisGrade)
        execution = rows.get("execution", {}).get("outcome")
        level = next((row["level"] for row in rows.values() if "level" in row), None)
        if level is None:
            level = len(diagnosis.golden_types) if diagnosis else 0
        out.append(
            CaseResult(
                case_id=case,
                level=level,
                diagnosis=diagnosis,
                execution_passed={"passed": True, "failed": False}.get(execution or ""),
            )
        )
    return out


def judge_stats(run_dir: Path, name: str) -> JudgeStats:
    """Sum the stats each process (controller or xdist worker) wrote for its judge."""
    total = JudgeStats(name=name)
    for path in sorted(RunDir(run_dir).judge_stats_dir.glob("*.json")):
        with contextlib.suppress(ArtifactError):
            total = total.merged(read_model(path, JudgeStats))
    return total


def run_summary(
    run_dir: Path,
    results: Results,
    *,
    agent: str,
    model: str | None,
    judge: str,
    subset: Path | None,
) -> dict[str, Any]:
    """The summary of a run from its saved artifacts, verified-subset metrics included: what
    the live run, ``--resume`` and ``regrade`` all write."""
    from .subset import add_subset

    summary = summarize(run_dir, results, agent, model, judge)
    return add_subset(summary, _case_results(run_dir, results), subset)


def grade_run(
    run_dir: Path,
    results: Results,
    *,
    agent: str,
    model: str | None,
    judge: str,
    subset: Path | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``summary.json``/``summary.md`` and the exports (``results.csv``, ``tables.md``,
    ``report.html``) of a run, from its results and saved artifacts; the summary is returned."""
    from .exports import write_exports

    summary = run_summary(run_dir, results, agent=agent, model=model, judge=judge, subset=subset)
    summary.update(extra or {})
    write_summary(run_dir, summary)
    write_exports(run_dir, summary, list(results.values()))
    return summary


def case_set_hash(results: Iterable[tuple[str, str]]) -> str:
    """The identity of what a run measured: its (case, item) pairs, order-free."""
    text = "\n".join(f"{case}\t{item}" for case, item in sorted(set(results)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def summarize(
    run_dir: Path,
    results: Results,
    agent: str,
    model: str | None,
    judge: str,
) -> dict[str, Any]:
    """The summary of ``results`` (rows keyed by case and item) over the run directory's files."""
    from .. import __version__

    cases = _case_results(run_dir, results)
    summary = aggregate(cases).to_summary_json(
        agent=agent, model=model, judge=judge_stats(run_dir, judge)
    )
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
    summary["efficiency"] = efficiency_summary(run_dir, results)
    summary["timing"] = timing_summary(run_dir, results)
    for key in ("agent_seconds", "harness_seconds"):
        values = [case[key] for case in summary["timing"]["cases"].values()]
        summary["efficiency"][key] = {
            "mean": sum(values) / len(values) if values else None,
            "cases": len(values),
        }
    execution = [row for (_c, item), row in results.items() if item == "execution"]
    summary["items"] = _outcomes(results)
    # Timeouts counted apart (each is also one of pytest's failures): per item, and in all.
    summary["timeouts"] = sum(outcome_label(row) == "timeout" for row in results.values())
    summary["execution_errors"] = sum(row["outcome"] == "error" for row in execution)
    if execution:
        # How many instances Pass@1 speaks for: imported ones without a verified reference skip.
        summary["execution_coverage"] = {
            "instances": len(execution),
            "covered": sum(row["outcome"] != "skipped" for row in execution),
            "no_verified_reference": sum(
                row["outcome"] == "skipped"
                and "no verified reference" in str(row.get("message", ""))
                for row in execution
            ),
        }
    summary["run_dir"] = str(run_dir)
    summary["agent_usage"] = agent_usage(run_dir, results)
    pyramid = _pyramid(run_dir, results)
    if pyramid is not None:
        summary["pyramid"] = pyramid
    from ..aec.report import aec_summary

    aec = aec_summary(run_dir, [case for case, item in results if item.startswith("aec_")])
    if aec is not None:
        summary["aec"] = aec
    return summary


def _pyramid(run_dir: Path, results: Results) -> dict[str, Any] | None:
    """The runtime pyramid over probe rows; each shipped stage's numbers come from its file."""
    from .pyramid import pyramid_summary

    rows = []
    for (case, _item), row in results.items():
        stage = row.get("stage")
        if not stage:
            continue
        path = CaseDir(run_dir, case).pyramid(stage)
        numbers: dict[str, Any] = {}
        if path.is_file():
            try:
                # Bounded and never behind a link: a run directory is input (regrade, resume).
                data = read_json_file(path, root=run_dir)
                numbers = (data.get("numbers") if isinstance(data, dict) else None) or {}
            except (OSError, ValueError):
                numbers = {}
        # A stage run on CPU processes (C4 under --ddp-cpu) says so in its numbers; the summary
        # counts it for the stages that declare such a fallback (``Stage.cpu_fallback``).
        if numbers.get("mode") == "cpu-gloo":
            numbers = {**numbers, "ddp_mode": "cpu"}
        rows.append({**row, "numbers": numbers})
    if not rows:
        return None
    # Only the stage's own probe grades the stage: a user's probe marked with its name is
    # reported beside it (its own row, counted in ``user_probes``), never over it.
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    user_probes: dict[str, dict[str, int]] = {}
    for row in rows:
        if is_stage_probe(row):
            merged[(row["case"], row["stage"])] = row
        else:
            counts = user_probes.setdefault(row["stage"], {})
            counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    cases = sorted({case for case, _stage in merged})
    summary = pyramid_summary(
        merged.values(),
        efficiency={case: case_efficiency(CaseDir(run_dir, case)) for case in cases},
    )
    if user_probes:
        summary["user_probes"] = user_probes
    return summary


# The file the stages' own probes are collected from (``probes/probe_pyramid.py``).
STAGE_PROBE_FILE = "probe_pyramid.py"


def is_stage_probe(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` is its stage's own probe, not a user's probe marked with the stage."""
    from ..stages import STAGES

    stage = row.get("stage")
    if not isinstance(stage, str) or stage not in STAGES:
        return False
    return str(row.get("item", "")) == f"{STAGE_PROBE_FILE}::{STAGES.get(stage).probe}"


def agent_usage(run_dir: Path, results: Results) -> dict[str, Any]:
    """The agents' model tokens and cost over the cases that ran, from each ``outcome.json``.

    ``cost_usd`` is ``None`` (unknown) when any call had no price; ``priced_cost_usd`` sums the
    calls that had one.
    """
    from ..agents.base import AgentOutcome, TokenUsage

    total = TokenUsage()
    cases = unpriced = 0
    for case in sorted({case for case, _item in results}):
        path = CaseDir(run_dir, case).agent_outcome
        if not path.is_file():
            continue
        try:
            usage = read_model(path, AgentOutcome).usage
        except ValueError:
            continue
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


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
    run = RunDir(run_dir)
    atomic_write_text(run.summary_json, text)
    from .subset import markdown_side_by_side

    subset = markdown_side_by_side(summary)
    markdown = render_markdown(summary) + ("\n" + subset if subset else "")
    atomic_write_text(run.summary_md, markdown)


def timing_summary(run_dir: Path, results: Results) -> dict[str, Any]:
    """Agent time and harness time apart, per case and in all (``records.case_timing``): a
    score must not depend on how long the harness took, and this shows that it did not."""
    by_case: dict[str, list[Mapping[str, Any]]] = {}
    for (case, _item), row in results.items():
        by_case.setdefault(case, []).append(row)
    cases = {
        case: case_timing(CaseDir(run_dir, case), rows) for case, rows in sorted(by_case.items())
    }
    return {
        "agent_seconds": round(sum(c["agent_seconds"] for c in cases.values()), 3),
        "harness_seconds": round(sum(c["harness_seconds"] for c in cases.values()), 3),
        "cases": cases,
    }


def efficiency_summary(run_dir: Path, results: Results) -> dict[str, dict[str, Any]]:
    """Means of time to ready, tokens, cost and environment size over the cases that have them."""
    per_case = [
        case_efficiency(CaseDir(run_dir, case)) for case in sorted({c for c, _i in results})
    ]
    out: dict[str, dict[str, Any]] = {}
    for name in ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes"):
        values = [v for row in per_case if (v := row.get(name)) is not None]
        out[name] = {"mean": sum(values) / len(values) if values else None, "cases": len(values)}
    return out
