"""``pytest-enconda compare RUN_DIR RUN_DIR…``: runs side by side in the paper's main-table layout.

Runs are compared only over the same items (case and aspect): runs over different case sets are
refused with the difference named, unless ``intersection`` is asked for, in which case each run's
summary is recomputed over the common items from its own files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artifacts import ArtifactError, atomic_write_text
from ..records import Results, RunDir, read_run_info, read_summary
from . import tables
from .review import CSS, _table, esc

SHOWN_DIFFERENCES = 10


class CompareError(ValueError):
    """The runs cannot be compared as asked; the message says why."""


@dataclass
class Run:
    path: Path
    label: str
    agent: str
    model: str | None
    judge: str
    results: Results
    summary: dict[str, Any]


def load_results(run_dir: Path) -> Results:
    """The run's result rows; a line that cannot be read is an error naming file and line (a
    comparison over silently fewer items would compare something else)."""
    results = RunDir(run_dir).results_file
    # A link or a FIFO is there, and refused by the reader with its reason: not "missing".
    if not (results.path.is_symlink() or results.path.exists()):
        raise CompareError(f"{run_dir}: no results.jsonl (not a run directory, or nothing ran)")
    read = results.read()
    if read.problems:
        raise CompareError("; ".join(read.problems))
    return read.rows


def run_settings(run_dir: Path) -> dict[str, Any]:
    try:
        info = read_run_info(RunDir(run_dir))
    except ArtifactError as exc:
        raise CompareError(str(exc)) from None
    return dict(info.settings) if info is not None else {}


def saved_summary(run_dir: Path) -> dict[str, Any]:
    """The run's ``summary.json``, or ``{}`` when it has none (the run was interrupted)."""
    try:
        return read_summary(RunDir(run_dir)) or {}
    except ArtifactError as exc:
        raise CompareError(str(exc)) from None


def load_run(run_dir: Path, index: int) -> Run:
    from .runrecords import RunRecords
    from .summary import summarize

    results = load_results(run_dir)
    settings = run_settings(run_dir)
    summary = saved_summary(run_dir)
    agent = str(summary.get("agent") or settings.get("agent") or "?")
    model = summary.get("model", settings.get("model"))
    judge = str(summary.get("judge_name") or settings.get("judge") or "offline")
    if not summary:
        summary = summarize(RunRecords.load(run_dir, results), agent, model, judge)
    return Run(run_dir, f"#{index}", agent, model, judge, results, summary)


def _difference(runs: Sequence[Run]) -> str | None:
    first = set(runs[0].results)
    for run in runs[1:]:
        keys = set(run.results)
        if keys == first:
            continue
        only_first = sorted(first - keys)
        only_other = sorted(keys - first)

        def listed(keys: list[tuple[str, str]]) -> str:
            shown = ", ".join(f"{c}::{i}" for c, i in keys[:SHOWN_DIFFERENCES])
            more = len(keys) - SHOWN_DIFFERENCES
            return shown + (f" and {more} more" if more > 0 else "")

        parts = []
        if only_first:
            parts.append(f"{len(only_first)} items only in {runs[0].path}: {listed(only_first)}")
        if only_other:
            parts.append(f"{len(only_other)} items only in {run.path}: {listed(only_other)}")
        return "; ".join(parts)
    return None


def compare_runs(paths: Sequence[Path], intersection: bool = False) -> list[Run]:
    if len(paths) < 2:
        raise CompareError("compare needs at least two run directories")
    runs = [load_run(path, index) for index, path in enumerate(paths, 1)]
    difference = _difference(runs)
    if difference is None:
        return runs
    if not intersection:
        raise CompareError(
            f"the runs measured different case sets: {difference}. "
            "Use --intersection to compare them over the items they share"
        )
    from .runrecords import RunRecords
    from .summary import summarize

    common = set.intersection(*(set(run.results) for run in runs))
    if not common:
        raise CompareError(f"the runs share no item: {difference}")
    for run in runs:
        run.results = {key: row for key, row in run.results.items() if key in common}
        records = RunRecords.load(run.path, run.results)
        run.summary = summarize(records, run.agent, run.model, run.judge)
    return runs


def main_table(runs: Sequence[Run]) -> tuple[list[str], list[list[str]]]:
    header = ["Run", "Judge", "Cases", *tables.MAIN_HEADER]
    rows = [
        [run.label, run.judge, str(run.summary.get("cases", 0)), *row]
        for run in runs
        for row in tables.main_rows(run.summary)
    ]
    return header, rows


def item_table(runs: Sequence[Run]) -> tuple[list[str], list[list[str]]]:
    """Per run and item: passed/failed/skipped/error counts."""
    items = sorted({item for run in runs for _case, item in run.results})
    header = ["Run", *items]
    rows = []
    for run in runs:
        counts = run.summary.get("items") or {}
        row = [run.label]
        for item in items:
            c = dict(counts.get(item) or {})
            # Timeouts are failures here, as in runs from before they were counted apart.
            c["failed"] = c.get("failed", 0) + c.get("timeout", 0)
            row.append("/".join(str(c.get(k, 0)) for k in ("passed", "failed", "skipped", "error")))
        rows.append(row)
    return header, rows


def pyramid_rows(runs: Sequence[Run]) -> tuple[list[str], list[list[str]]] | None:
    if not any(run.summary.get("pyramid") for run in runs):
        return None
    from ..stages import STAGES

    stages = STAGES.values()
    # C1-C4 (and added funnel stages) by name alone: the cells say passed/applicable.
    header = ["Run", *(s.title if s.summary != "funnel" else s.name for s in stages)]
    rows = []
    for run in runs:
        p = run.summary.get("pyramid") or {}
        if not p:
            rows.append([run.label, *["-"] * len(stages)])
            continue
        row = [run.label]
        for stage in stages:
            counts = p.get(stage.name) or {}
            if stage.summary == "imports":
                row.append(f"{counts.get('missing', 0)}/{counts.get('total', 0)}")
            elif stage.summary == "audit":
                row.append(
                    f"{counts.get('path', 0)}/{counts.get('version', 0)}/"
                    f"{counts.get('capability', 0)}"
                )
            else:
                row.append(f"{counts.get('passed', 0)}/{counts.get('applicable', 0)}")
        rows.append(row)
    return header, rows


def differences(runs: Sequence[Run]) -> tuple[list[str], list[list[str]]]:
    """Items whose outcome is not the same in every run (over the items all runs have)."""
    common = sorted(set.intersection(*(set(run.results) for run in runs)))
    header = ["Case", "Item", *(run.label for run in runs)]
    rows = []
    for key in common:
        outcomes = [run.results[key].outcome for run in runs]
        if len(set(outcomes)) > 1:
            rows.append([key[0], key[1], *outcomes])
    return header, rows


def _runs_legend(runs: Sequence[Run]) -> list[str]:
    return [
        f"{run.label}: {run.path} (agent {run.agent}, model {run.model or '-'}, judge {run.judge}, "
        f"{run.summary.get('cases', 0)} cases, case set "
        f"{str((run.summary.get('case_set') or {}).get('sha256', '?'))[:12]})"
        for run in runs
    ]


def render_markdown(runs: Sequence[Run]) -> str:
    from .tables import _markdown_table

    parts = [f"# Comparison of {len(runs)} runs", "\n".join(f"- {x}" for x in _runs_legend(runs))]
    parts += ["## Main table (%)", _markdown_table(*main_table(runs))]
    parts += ["## Items (passed/failed/skipped/error)", _markdown_table(*item_table(runs))]
    pyramid = pyramid_rows(runs)
    if pyramid is not None:
        parts += ["## Runtime pyramid", _markdown_table(*pyramid)]
    header, rows = differences(runs)
    parts.append(f"## Items whose outcome differs ({len(rows)})")
    parts.append(_markdown_table(header, rows) if rows else "none")
    return "\n\n".join(parts) + "\n"


def render_html(runs: Sequence[Run]) -> str:
    body = [f"<h1>Comparison of {len(runs)} runs</h1>"]
    body.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in _runs_legend(runs)) + "</ul>")
    body += ["<h2>Main table (%)</h2>", _table(*main_table(runs), "compare-main", numeric_from=6)]
    body += ["<h2>Items (passed/failed/skipped/error)</h2>", _table(*item_table(runs))]
    pyramid = pyramid_rows(runs)
    if pyramid is not None:
        body += ["<h2>Runtime pyramid</h2>", _table(*pyramid)]
    header, rows = differences(runs)
    body.append(f"<h2>Items whose outcome differs ({len(rows)})</h2>")
    body.append(_table(header, rows, "compare-differences", numeric_from=99) if rows else "none")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>pytest-enconda '
        f"comparison</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )


def write_comparison(runs: Sequence[Run], out: Path) -> tuple[Path, Path]:
    md, page = out / "compare.md", out / "compare.html"
    atomic_write_text(md, render_markdown(runs))
    atomic_write_text(page, render_html(runs))
    return md, page
