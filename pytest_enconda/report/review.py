"""The review report: the paper's tables and plots on top, then every item with its evidence.

``report.html`` is written into the run directory at the end of every run (no ``--html`` needed)
as one self-contained file: CSS, the sorting script and the plots (inline SVG) are in it, and the
case files it links are relative to it. The same sections feed pytest-html's report through its
hooks (``summary_section`` and ``evidence_html``). Everything here reads the summary dict and the
run's typed records (``runrecords``), read once; nothing is graded or measured, and no case
folder is read, here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..artifacts import atomic_write_text, safe_name
from ..kinds import TASK_KINDS
from ..records import ResultRow, RunDir
from . import tables
from .evidence_html import evidence_html
from .html_parts import Href, _table, esc, relative_href
from .runrecords import RunRecords

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.2em;
color:#212121;font-size:14px}
h1{font-size:1.5em;margin:0 0 .2em}h2{font-size:1.2em;margin:1.2em 0 .4em;
border-bottom:1px solid #ddd}h3{font-size:1em;margin:.8em 0 .3em}
table{border-collapse:collapse;margin:.3em 0 .8em}th,td{border:1px solid #ddd;padding:3px 7px;
vertical-align:top}th{background:#f5f5f5;text-align:left}td.num{text-align:right;
font-variant-numeric:tabular-nums}.meta{color:#555}.plots{display:flex;flex-wrap:wrap;gap:12px}
.plot{border:1px solid #eee;padding:4px}.plot svg{max-width:520px;height:auto}
.outcome{font-weight:600}.passed{color:#2e7d32}.failed{color:#c62828}.error{color:#ef6c00}
.skipped{color:#757575}pre{background:#fafafa;border:1px solid #eee;padding:6px;
white-space:pre-wrap;word-break:break-all;max-height:28em;overflow:auto;font-size:12px}
details{margin:.2em 0}summary{cursor:pointer}th.sortable{cursor:pointer}
th.sortable:after{content:" \\2195";color:#aaa}.note{color:#555;font-size:.9em}
.accepted{color:#2e7d32}.rejected{color:#c62828}.judgeerr{color:#ef6c00}
"""

# Sorts the item table by the clicked column (numbers numerically), nothing else.
SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th.sortable').forEach(function (th, index) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute('data-order') !== 'asc';
      th.setAttribute('data-order', asc ? 'asc' : 'desc');
      rows.sort(function (a, b) {
        var x = a.cells[index].getAttribute('data-value') || a.cells[index].textContent;
        var y = b.cells[index].getAttribute('data-value') || b.cells[index].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

ITEM_COLUMNS = [
    "Case",
    "Item",
    "Outcome",
    "Error types",
    "Level",
    "Agent",
    "Duration (s)",
    "Case agent time (s)",
    "Case harness time (s)",
    "Agent budget (s; x slowdown)",
]


# ----------------------------------------------------------------------------- summary


def _budget_cell(case_time: Mapping[str, float]) -> str:
    """The agent's wall-clock budget and the slowdown it was stretched by (``agents.clock``);
    "-" where the run recorded none."""
    budget, factor = case_time.get("agent_budget_seconds"), case_time.get("clock_factor")
    if budget is None or factor is None:
        return '<td class="num" data-value="">-</td>'
    return (
        f'<td class="num" data-value="{esc(budget)}">{float(budget):.0f} '
        f"(x{float(factor):.2f})</td>"
    )


def efficiency_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """Averages over the cases that have each number (the count says how many)."""
    eff = summary.get("efficiency") or {}
    rows = []
    for key, label in (
        ("time_to_ready_s", "time to ready (s)"),
        ("tokens", "agent tokens"),
        ("cost_usd", "agent cost (USD)"),
        ("env_size_bytes", "environment size (MB)"),
        ("agent_seconds", "agent time (s; its own clock)"),
        ("harness_seconds", "harness time (s; builds, replay, probes)"),
        ("clock_factor", "agent clock stretched by (x; this machine's slowdown)"),
    ):
        entry = eff.get(key) or {}
        mean = entry.get("mean")
        if mean is None:
            shown = "-"
        elif key == "env_size_bytes":
            shown = f"{mean / 1e6:.1f}"
        elif key == "cost_usd":
            shown = f"{mean:.4f}"
        elif key == "clock_factor":
            shown = f"{mean:.2f} (max {entry.get('max') or mean:.2f})"
        else:
            shown = f"{mean:.1f}"
        rows.append([label, shown, str(entry.get("cases", 0))])
    return rows


EFFICIENCY_HEADER = ["Average", "Mean", "Cases"]
PYRAMID_HEADER = ["Stage", "Passed", "Failed", "Skipped", "Error", "Applicable", "Rate (%)"]
AUDIT_HEADER = [
    "Audited",
    "path",
    "version",
    "capability",
    "All hallucinations",
    "Cases with any",
    "Reports missing",
    "Reports invalid",
]


def pyramid_rows(pyramid: Mapping[str, Any]) -> list[list[str]]:
    """The funnel in the stages' order: an imports stage (C0) as missing/total imports, the
    funnel stages (C1-C4 and any a plugin adds) as passed of applicable, under their titles.
    The audit (C5) has a table of its own (``audit_rows``)."""
    from ..stages import STAGES

    rows = []
    for stage in STAGES.values():
        counts = pyramid.get(stage.name) or {}
        if stage.summary == "imports":
            rows.append(_imports_row(f"{stage.name} imports missing", counts))
        elif stage.summary == "funnel":
            rows.append(_funnel_row(stage.title, counts))
    return rows


def _imports_row(label: str, c0: Mapping[str, Any]) -> list[str]:
    percent = c0.get("percent_missing")
    return [
        label,
        f"{c0.get('missing', 0)}/{c0.get('total', 0)}",
        "-",
        "-",
        str(c0.get("errors", 0)),
        str(c0.get("measured", 0)),
        "-" if percent is None else f"{percent:.1f}",
    ]


def _funnel_row(label: str, row: Mapping[str, Any]) -> list[str]:
    pct = row.get("percent")
    if row.get("cpu_mode"):
        label += f" ({row['cpu_mode']} on cpu-gloo: 2 CPU processes, not GPUs)"
    return [
        label,
        str(row.get("passed", 0)),
        str(row.get("failed", 0)),
        str(row.get("skipped", 0)),
        str(row.get("error", 0)),
        str(row.get("applicable", 0)),
        "-" if pct is None else f"{pct:.1f}",
    ]


def audit_rows(c5: Mapping[str, Any]) -> list[list[str]]:
    """An audit stage's (C5's) hallucinations by kind, from its numbers in the summary."""
    return [
        [
            str(c5.get(key, 0))
            for key in (
                "audited",
                "path",
                "version",
                "capability",
                "hallucinations",
                "with_hallucinations",
                "reports_missing",
                "reports_invalid",
            )
        ]
    ]


def title(summary: Mapping[str, Any]) -> str:
    return tables.run_title(summary)


def _has_diagnosis(summary: Mapping[str, Any]) -> bool:
    return tables.has_diagnosis(summary)


def summary_section(
    summary: Mapping[str, Any], cases: Sequence[Mapping[str, Any]], *, plots: bool = True
) -> str:
    """The tables and plots of the run (``cases``: per-case rows for the scatter plot)."""
    case_set = summary.get("case_set") or {}
    parts = [
        '<section id="enconda-summary">',
        f"<h2>{esc(title(summary))}</h2>",
        '<p class="meta">'
        f"agent <b>{esc(summary.get('agent', '?'))}</b>, "
        f"model <b>{esc(summary.get('model') or '-')}</b>, "
        f"judge <b>{esc(summary.get('judge_name') or '-')}</b>, harness "
        f"{esc(summary.get('harness_version', '?'))}, case set {esc(case_set.get('cases', '?'))} "
        f"cases / {esc(case_set.get('items', '?'))} items, sha256 "
        f"<code>{esc(str(case_set.get('sha256', '?'))[:16])}</code></p>",
    ]
    items = summary.get("items") or {}
    if items:
        rows = [
            [
                item,
                *(
                    str(counts.get(k, 0))
                    for k in ("passed", "failed", "timeout", "skipped", "error")
                ),
            ]
            for item, counts in items.items()
        ]
        parts.append("<h3>Items</h3>")
        parts.append(
            _table(
                ["Item", "Passed", "Failed", "Timeout", "Skipped", "Error"], rows, "enconda-items"
            )
        )
        parts.append(
            '<p class="meta">Timeout: failed items whose step ran out of its calibrated budget '
            "(pytest counts them as failed; Pass@1 counts them as not passed).</p>"
        )
    # Each registered kind's section in turn (kinds.ReportSection): diagnosis's main tables, the
    # research pyramid, AEC by language, then any a plugin's kind adds.
    for kind in TASK_KINDS.values():
        if kind.report is not None:
            parts += kind.report.render(summary)
    parts += [
        "<h3>Averages per case</h3>",
        _table(EFFICIENCY_HEADER, efficiency_rows(summary), "enconda-efficiency"),
    ]
    # The paper's notes and definitions speak of diagnosis metrics: not shown for research runs.
    diagnosis = _has_diagnosis(summary)
    notes = tables.notes(summary) if diagnosis else []
    definitions = (summary.get("definitions") or {}) if diagnosis else {}
    parts.append(
        '<ul class="note">'
        + "".join(f"<li>{esc(line)}</li>" for line in notes)
        + "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in definitions.items())
        + "</ul>"
    )
    if plots:
        parts.append(_plots_html(summary, cases))
    parts.append("</section>")
    return "\n".join(parts)


def _plots_html(summary: Mapping[str, Any], cases: Sequence[Mapping[str, Any]]) -> str:
    from .plots import PlotsUnavailable, all_plots

    try:
        drawn = all_plots(summary, cases)
    except PlotsUnavailable as exc:
        return f'<p class="note" id="enconda-plots">{esc(exc)}</p>'
    figures = "".join(
        f'<figure class="plot" data-title="{esc(title)}">{svg}</figure>' for title, svg in drawn
    )
    return f'<h3>Plots</h3><div class="plots" id="enconda-plots">{figures}</div>'


# ----------------------------------------------------------------------------- the page


def headline(rows: Sequence[ResultRow]) -> str:
    """A case's outcome for the scatter plot: execution's, else error_types', else any."""
    by_item = {row.item: row.outcome for row in rows}
    for item in ("execution", "error_types"):
        if item in by_item:
            return by_item[item]
    return next(iter(by_item.values()), "none")


def case_rows(records: RunRecords) -> list[dict[str, Any]]:
    """Per case: its headline outcome and efficiency numbers (the scatter plot's points)."""
    return [
        {"case": case, "headline": headline(rows), **records.cases[case].efficiency()}
        for case, rows in records.case_rows().items()
        if rows
    ]


def message_line(row: ResultRow) -> str:
    message = row.message.strip()
    return message.splitlines()[-1][:120] if message else "evidence"


def items_table(
    records: RunRecords,
    agent: str,
    href: Href,
    timing: Mapping[str, Mapping[str, float]] | None = None,
) -> str:
    """One row per item; ``timing`` is summary.json's per-case agent and harness time."""
    timing = timing or {}
    results = list(records.rows.values())
    head = "".join(f'<th class="sortable">{esc(name)}</th>' for name in ITEM_COLUMNS)
    rows = []
    # The case's own evidence goes on one row per case: execution's, else the first item's.
    primary: dict[str, str] = {}
    for row in sorted(results, key=lambda r: (r.item != "execution", r.item)):
        primary.setdefault(row.case, row.item)
    for row in sorted(results, key=lambda r: (r.case, r.item)):
        ev = records.cases[row.case]
        anchor = f"evidence-{safe_name(row.case)}"
        is_primary = primary[row.case] == row.item
        outcome = row.label
        case_time = timing.get(row.case) or {}
        times = "".join(
            f'<td class="num" data-value="{esc(case_time.get(key, ""))}">'
            + ("-" if case_time.get(key) is None else f"{float(case_time[key]):.1f}")
            + "</td>"
            for key in ("agent_seconds", "harness_seconds")
        )
        times += _budget_cell(case_time)
        types = " ".join(ev.golden_types)
        level = "" if row.level is None else row.level
        evidence_block = evidence_html(ev, row.item, href, is_primary or anchor, row.stage)
        ident = f' id="{esc(anchor)}"' if is_primary else ""
        rows.append(
            f'<tr class="item"{ident} data-case="{esc(row.case)}" '
            f'data-item="{esc(row.item)}">'
            f"<td>{esc(row.case)}</td><td>{esc(row.item)}</td>"
            f'<td class="outcome {esc(outcome)}">{esc(outcome)}</td>'
            f'<td>{esc(types)}</td><td class="num">{esc(level)}</td>'
            f"<td>{esc(agent)}</td>"
            f'<td class="num" data-value="{esc(row.duration)}">'
            f"{row.duration:.1f}</td>{times}"
            f"<td><details><summary>{esc(message_line(row))}"
            f"</summary>{evidence_block}</details></td></tr>"
        )
    return (
        '<table class="sortable" id="enconda-results"><thead><tr>'
        f"{head}<th>Evidence</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_report(records: RunRecords, summary: Mapping[str, Any]) -> str:
    run_dir = records.root
    href = relative_href(run_dir)
    run = RunDir(run_dir)
    # tables.md and results.csv are written with this page: linked before they exist.
    written_with = (run.tables_md, run.results_csv)
    exports = " · ".join(
        f'<a href="{path.name}">{path.name}</a>'
        for path in (run.summary_json, *written_with, run.results, run.run_info)
        if path.is_file() or path in written_with
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title(summary))}</title><style>{CSS}</style></head><body>"
        f"<h1>pytest-enconda review: {esc(run_dir.name)}</h1>"
        f'<p class="meta">{exports}</p>'
        f"{summary_section(summary, case_rows(records))}"
        f"<h2>Items ({len(records.rows)})</h2>"
        '<p class="note">click a column to sort; open a row for its evidence</p>'
        + items_table(
            records,
            str(summary.get("agent", "?")),
            href,
            (summary.get("timing") or {}).get("cases"),
        )
        + f"<script>{SORT_JS}</script></body></html>\n"
    )


def write_report(records: RunRecords, summary: Mapping[str, Any]) -> Path:
    path = RunDir(records.root).report_html
    atomic_write_text(path, render_report(records, summary))
    return path
