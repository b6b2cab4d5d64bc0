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
from typing import TYPE_CHECKING, Any

from ..artifacts import ArtifactError, atomic_write_text, read_model, write_model
from ..aspects import DIAGNOSIS_ASPECTS
from ..records import (
    MESSAGE_CHARS,
    RunDir,
    RunInfo,
    failure_message,
    read_case_facts,
    read_json_file,
    read_run_info,
    read_summary,
)
from .compare import CompareError, load_results

if TYPE_CHECKING:
    from ..grading.verdict import ItemVerdict


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
    from ..agents.output import DIAGNOSIS
    from ..cache import default_cache_dir
    from ..cases.models import ExecutionReference, GoldenAnswer
    from ..grading.diagnosis import grade_diagnosis
    from ..grading.execution import grade_execution
    from ..grading.judges import create_judge
    from ..grading.verdict import ItemVerdict
    from ..probing.execution import ExecutionRecord
    from .summary import grade_run

    run_dir = run_dir.resolve()
    original = RunDir(run_dir)
    try:
        results = load_results(run_dir)
        info = read_run_info(original)
    except (CompareError, ArtifactError) as exc:
        raise RegradeError(str(exc)) from None
    settings = dict(info.settings) if info is not None else {}
    subset = _subset_of(original, info)
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
    refused: list[str] = []

    def ignored(folder: str, names: list[str]) -> list[str]:
        skip = [n for n in names if n in RunDir.REGENERATED] if Path(folder) == run_dir else []
        for name in names:
            entry = Path(folder, name)
            # A run directory is input: a link in it may lead to any host file or folder, and
            # a FIFO would hang the copy. Neither is copied; both are named.
            if entry.is_symlink() or not (entry.is_file() or entry.is_dir()):
                refused.append(str(entry))
                skip.append(name)
        return skip

    shutil.copytree(run_dir, out, copy_function=_link_or_copy, ignore=ignored)

    run = RunDir(out)
    kept: list[str] = [f"{path}: not copied (a link or special file)" for path in refused]
    for case in sorted({case for case, _item in results}):
        case_dir = run.case(case)
        items = {item for c, item in results if c == case}
        try:
            facts = read_case_facts(case_dir)
        except ArtifactError as exc:
            # One unreadable record costs its own case: kept as graded, and named.
            kept.append(f"{case}: kept as graded ({exc})")
            continue
        outcome_path = case_dir.agent_outcome
        regradable = facts is not None and outcome_path.is_file()
        if facts is None or not regradable:
            missing = case_dir.facts if facts is None else outcome_path
            kept.append(f"{case}: kept as graded ({missing} is missing)")
            continue
        try:
            outcome = read_model(outcome_path, AgentOutcome)
            golden = GoldenAnswer.model_validate(facts.golden)
            reference = (
                ExecutionReference.model_validate(facts.reference) if facts.reference else None
            )
        except ValueError as exc:  # ArtifactError and ValidationError alike
            kept.append(f"{case}: kept as graded ({case_dir.facts} or its outcome: {exc})")
            continue
        grade = None
        for item in sorted(items):
            row = results[(case, item)]
            verdict: ItemVerdict | None = None
            if row.get("outcome") == "skipped":
                continue  # skipped for a reason of its own (variant, unverified, --python)
            if item in DIAGNOSIS_ASPECTS:
                problem = outcome.output_problems.get(DIAGNOSIS)
                if problem is not None:
                    verdict = ItemVerdict(
                        outcome="failed",
                        message=problem,
                        numbers={"output_problem": DIAGNOSIS},
                    )
                else:
                    if grade is None:
                        grade = grade_diagnosis(golden, outcome.diagnosis, grader)
                        write_model(case_dir.diagnosis, grade)
                    verdict = grade.items.get(item)
            elif item == "execution" and case_dir.execution_record.is_file():
                try:
                    record = read_model(case_dir.execution_record, ExecutionRecord)
                except ArtifactError as exc:
                    kept.append(f"{case}::{item}: kept as graded ({exc})")
                    continue
                verdict = grade_execution(record, reference, case_dir.root)
            if verdict is None:
                kept.append(f"{case}::{item}: kept as graded (nothing saved to grade it from)")
                continue
            write_model(case_dir.grading(item), verdict)
            results[(case, item)] = {
                **row,
                "outcome": verdict.outcome,
                "message": _message(case, item, verdict),
            }
            results[(case, item)].pop("timed_out", None)
            if verdict.label == "timeout":
                results[(case, item)]["timed_out"] = True

    write_model(run.judge_stats("regrade"), grader.stats())
    run.results_file.rewrite(results.values())
    # run.json is rewritten as it was, with only what the regrade changed: its judge and place.
    raw = read_json_file(run.run_info) if info is not None else {}
    raw.setdefault("settings", {})["judge"] = judge_name
    raw["settings"]["run_dir"] = str(out)
    raw["subset"] = None if subset is None else str(subset)
    raw["regraded_from"] = {"run_dir": str(run_dir), "judge": settings.get("judge")}
    atomic_write_text(run.run_info, json.dumps(raw, indent=2) + "\n")
    summary = grade_run(
        out,
        results,
        agent=str(settings.get("agent") or "?"),
        model=settings.get("model"),
        judge=judge_name,
        subset=subset,
        extra={"regraded_from": str(run_dir)},
    )
    return out, summary, kept


def _message(case: str, item: str, verdict: ItemVerdict) -> str:
    """The row's message as the live run writes it for the same verdict."""
    if verdict.outcome == "passed":
        return ""
    if verdict.outcome == "failed":
        return failure_message(case, item, verdict.message)[-MESSAGE_CHARS:]
    return verdict.message[-MESSAGE_CHARS:]


def _subset_of(run: RunDir, info: RunInfo | None) -> Path | None:
    """The verified-subset file the run's summary used: recorded in ``run.json`` since runs
    record it, else named in the summary's ``subsets`` block (runs from before)."""
    if info is not None and "subset" in info.model_fields_set:
        return Path(info.subset) if info.subset else None
    try:
        summary = read_summary(run) or {}
    except ArtifactError as exc:
        raise RegradeError(str(exc)) from None
    block = (summary.get("subsets") or {}).get("verified") or {}
    return Path(block["file"]) if isinstance(block.get("file"), str) else None
