"""``pytest-enconda regrade RUN_DIR [--judge …]``: grading and the report again, from saved files.

No Docker and no agent: each case's saved ``agent/outcome.json`` is graded against the golden
answer saved beside its grading (``case.json``) with the judge asked for, and execution is graded
again from ``execution/record.json``. The run is copied first (files hard-linked where the file
system allows, every rewritten file replaced, never edited in place), so the original keeps its
own grading and the two can be compared.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..artifacts import CaseDir, atomic_write_text, read_model, write_model
from ..aspects import DIAGNOSIS_ASPECTS
from .compare import load_results, run_settings
from .evidence import CASE_FACTS, read_json

# Written again by the regrade: not copied from the original.
_REGENERATED = {
    "judge-stats",
    "summary.json",
    "summary.md",
    "tables.md",
    "results.csv",
    "report.html",
}


class RegradeError(ValueError):
    """The run cannot be re-graded as asked; the message names the file and the reason."""


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def default_out(run_dir: Path, judge: str) -> Path:
    tag = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in judge)
    return run_dir.with_name(f"{run_dir.name}-regrade-{tag}")


def regrade(
    run_dir: Path,
    judge: str | None = None,
    out: Path | None = None,
    judge_api_base: str | None = None,
    concurrency: int = 4,
) -> tuple[Path, dict[str, Any], list[str]]:
    """(new run directory, its summary, notes on items kept as they were)."""
    from ..agents.base import AgentOutcome
    from ..cache import default_cache_dir
    from ..cases.models import ExecutionReference, GoldenAnswer
    from ..grading.diagnosis import grade_diagnosis
    from ..grading.execution import grade_execution
    from ..grading.judges import create_judge
    from ..grading.verdict import ItemVerdict
    from ..probing.execution import ExecutionRecord
    from .exports import write_exports
    from .summary import JUDGE_STATS_DIR, summarize, write_summary

    run_dir = run_dir.resolve()
    results = load_results(run_dir)
    settings = run_settings(run_dir)
    judge_name = judge or str(settings.get("judge") or "offline")
    out = (out or default_out(run_dir, judge_name)).resolve()
    if out == run_dir:
        raise RegradeError(f"{out}: the output must be another directory than the run's")
    if out.exists():
        raise RegradeError(f"{out} already exists: remove it or name another with --out")
    try:
        grader = create_judge(
            judge_name,
            api_base=judge_api_base or settings.get("judge_api_base"),
            cache_dir=default_cache_dir() / "judge",
            concurrency=concurrency,
        )
    except ValueError as exc:
        raise RegradeError(str(exc)) from None
    shutil.copytree(
        run_dir,
        out,
        copy_function=_link_or_copy,
        ignore=lambda folder, names: (
            [n for n in names if n in _REGENERATED] if Path(folder) == run_dir else []
        ),
    )

    kept: list[str] = []
    for case in sorted({case for case, _item in results}):
        case_dir = CaseDir(out, case)
        items = {item for c, item in results if c == case}
        facts = read_json(case_dir.root / CASE_FACTS)
        outcome_path = case_dir.agent_outcome
        regradable = facts is not None and outcome_path.is_file()
        if not regradable:
            missing = CASE_FACTS if facts is None else "agent/outcome.json"
            kept.append(f"{case}: kept as graded ({case_dir.root / missing} is missing)")
            continue
        outcome = read_model(outcome_path, AgentOutcome)
        golden = GoldenAnswer.model_validate(facts.get("golden") or {})
        grade = None
        for item in sorted(items):
            row = results[(case, item)]
            verdict: ItemVerdict | None = None
            if row.get("outcome") == "skipped":
                continue  # skipped for a reason of its own (variant, unverified, --python)
            if item in DIAGNOSIS_ASPECTS:
                problem = outcome.output_problems.get("diagnosis.json")
                if problem is not None:
                    verdict = ItemVerdict(
                        outcome="failed",
                        message=problem,
                        numbers={"output_problem": "diagnosis.json"},
                    )
                else:
                    if grade is None:
                        grade = grade_diagnosis(golden, outcome.diagnosis, grader)
                        write_model(case_dir.root / "grading" / "diagnosis.json", grade)
                    verdict = grade.items.get(item)
            elif item == "execution" and case_dir.execution_record.is_file():
                record = read_model(case_dir.execution_record, ExecutionRecord)
                reference = facts.get("reference")
                verdict = grade_execution(
                    record,
                    ExecutionReference.model_validate(reference) if reference else None,
                    case_dir.root,
                )
            if verdict is None:
                kept.append(f"{case}::{item}: kept as graded (nothing saved to grade it from)")
                continue
            write_model(case_dir.grading(item), verdict)
            results[(case, item)] = {
                **row,
                "outcome": verdict.outcome,
                "message": verdict.message[-4000:] if verdict.outcome != "passed" else "",
            }

    write_model(out / JUDGE_STATS_DIR / "regrade.json", grader.stats())
    text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in results.values())
    atomic_write_text(out / "results.jsonl", text)
    info_path = out / "run.json"
    info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
    info.setdefault("settings", {})["judge"] = judge_name
    info["settings"]["run_dir"] = str(out)
    info["regraded_from"] = {"run_dir": str(run_dir), "judge": settings.get("judge")}
    atomic_write_text(info_path, json.dumps(info, indent=2) + "\n")
    agent = str(settings.get("agent") or "?")
    summary = summarize(out, results, agent, settings.get("model"), judge_name)
    summary["regraded_from"] = str(run_dir)
    write_summary(out, summary)
    write_exports(out, summary, list(results.values()))
    return out, summary, kept
