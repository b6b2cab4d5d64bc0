"""``pytest-enconda regrade RUN_DIR [--judge …]``: grading and the report again, from saved files.

No Docker and no agent: every item is graded by its aspect's own grade function, the one the live
run and ``--resume`` call, over the case's saved files (``savedrun.SavedRun``: the agent's outcome,
the execution record and test logs, the case as ``case.json`` kept it) with the judge asked for.
AEC's trajectory judge is asked again; an item whose files are missing, and a probe (it ran in a
final state that is gone), is kept as graded and named. The run is copied first (files
hard-linked where the file system allows, every rewritten file replaced, never edited in place),
so the original keeps its own grading and the two can be compared.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..artifacts import ArtifactError, atomic_write_text, write_model
from ..errors import EncondaError
from ..records import (
    MESSAGE_CHARS,
    ResultRow,
    RunDir,
    RunInfo,
    failure_message,
    read_json_file,
    read_run_info,
    read_summary,
)
from .compare import CompareError, load_results
from .runrecords import RunRecords
from .savedrun import NotSaved, SavedRun, SavedSettings

if TYPE_CHECKING:
    from ..cases.models import Case
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
    from ..cache import default_cache_dir
    from ..grading.judges import create_judge
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
    saved = SavedRun(out, SavedSettings.of(settings), grader)
    for case_id in sorted({case for case, _item in results}):
        items = sorted(item for c, item in results if c == case_id)
        try:
            case = saved.case(case_id)
        except NotSaved as exc:
            # One unreadable record costs its own case: kept as graded, and named.
            kept.append(f"{case_id}: kept as graded ({exc})")
            continue
        for item in items:
            key = (case_id, item)
            if results[key].outcome == "skipped" and not _graded_skip(run, case_id, item):
                continue  # skipped for a reason of its own (variant, unverified, --python)
            try:
                verdict = _grade(saved, case, item)
            except NotSaved as exc:
                kept.append(f"{case_id}::{item}: kept as graded ({exc})")
                continue
            write_model(run.case(case_id).grading(item), verdict)
            results[key] = _row(results[key], case_id, item, verdict)
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
        RunRecords.load(out, results),
        agent=str(settings.get("agent") or "?"),
        model=settings.get("model"),
        judge=judge_name,
        subset=subset,
        extra={"regraded_from": str(run_dir)},
    )
    return out, summary, kept


def _graded_skip(run: RunDir, case_id: str, item: str) -> bool:
    """An AEC item its own grade skipped (not gradable: no reference command or PASS set) is
    graded again: its evidence, the trajectory judge's, is the new judge's to give."""
    from ..aspects import ASPECTS

    if item not in ASPECTS or ASPECTS.get(item).task_kind != "aec":
        return False
    return run.case(case_id).grading(item).is_file()


def _grade(saved: SavedRun, case: Case, item: str) -> ItemVerdict:
    """The item's verdict by its aspect's own grade function, as the live run grades it; a
    harness failure while grading is the item's error, as it is live."""
    from ..aspects import ASPECTS, AspectContext
    from ..grading.verdict import ItemVerdict

    if item not in ASPECTS:
        # A probe (a stage's or a user's): pytest ran it in the final state, which is gone.
        raise NotSaved("a probe of the environment: only a live run runs probes")
    aspect = ASPECTS.get(item)
    if aspect.task_kind != case.spec.suite and not saved.has_spec(case):
        raise NotSaved(f"{saved.case_dir(case).facts} kept no case spec (a run from before)")
    try:
        return aspect.grade(AspectContext(saved, case, aspect))
    except NotSaved:
        raise
    except EncondaError as exc:
        return ItemVerdict(outcome="error", message=str(exc))


def _row(row: ResultRow, case: str, item: str, verdict: ItemVerdict) -> ResultRow:
    """The result line the live run writes for ``verdict`` (``items.CaseItem``, then
    ``session.record_report``): the same outcome, message and timeout mark."""
    update = {
        "outcome": verdict.outcome,
        "message": _message(case, item, verdict),
        "timed_out": verdict.label == "timeout",
    }
    return row.model_copy(update=update)


def _message(case: str, item: str, verdict: ItemVerdict) -> str:
    """The row's message as the live run writes it for the same verdict: a failure or an error
    named by its item, a skip as pytest words it, nothing for a pass."""
    if verdict.outcome == "passed":
        return ""
    if verdict.outcome == "skipped":
        return f"Skipped: {verdict.message}"[-MESSAGE_CHARS:]
    return failure_message(case, item, verdict.message)[-MESSAGE_CHARS:]


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
