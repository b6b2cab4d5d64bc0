"""The review report: the paper's tables and plots on top, then every item with its evidence.

``report.html`` is written into the run directory at the end of every run (no ``--html`` needed)
as one self-contained file: CSS, the sorting script and the plots (inline SVG) are in it, and the
case files it links are relative to it. The same sections feed pytest-html's report through its
hooks (``summary_section`` and ``evidence_html``). Everything here reads the summary dict and the
run's typed records (``runrecords``), read once; nothing is graded or measured, and no case
folder is read, here.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..artifacts import atomic_write_text, safe_name
from ..records import ResultRow, RunDir
from . import tables
from .evidence import Tail
from .runrecords import CaseRecords, RunRecords

if TYPE_CHECKING:
    from ..grading.judges.base import Verdict
    from ..probing.pyramid import StageResult

Href = Callable[[Path], str]

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
]


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], table_id: str = "", numeric_from: int = 1
) -> str:
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i >= numeric_from else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def relative_href(base: Path) -> Href:
    """Links relative to the report's folder: the run directory can be moved or served."""

    def href(path: Path) -> str:
        return esc(Path(os.path.relpath(path, base)).as_posix())

    return href


def absolute_href(path: Path) -> str:
    return esc(path.resolve().as_uri())


# ----------------------------------------------------------------------------- summary


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
    ):
        entry = eff.get(key) or {}
        mean = entry.get("mean")
        if mean is None:
            shown = "-"
        elif key == "env_size_bytes":
            shown = f"{mean / 1e6:.1f}"
        elif key == "cost_usd":
            shown = f"{mean:.4f}"
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


def _pyramid_section(pyramid: Mapping[str, Any]) -> list[str]:
    """The pyramid's tables, headed by the registered stages' names (C0-C5 and any added)."""
    from ..stages import STAGES
    from .pyramid import stage_span

    stages = STAGES.values()
    parts = [
        f"<h3>Runtime pyramid {esc(stage_span())} (denominator: applicable = passed + failed)</h3>",
        _table(PYRAMID_HEADER, pyramid_rows(pyramid), "enconda-pyramid"),
    ]
    for stage in stages:
        if stage.summary == "audit":
            parts += [
                f"<h3>{esc(stage.name)} hallucinations by kind</h3>",
                _table(
                    AUDIT_HEADER,
                    audit_rows(pyramid.get(stage.name) or {}),
                    f"enconda-{stage.name.lower()}",
                    numeric_from=0,
                ),
            ]
    return parts


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
    if _has_diagnosis(summary):
        parts += [
            "<h3>Main table (%; both metric definitions)</h3>",
            _table(tables.MAIN_HEADER, tables.main_rows(summary), "enconda-main", numeric_from=3),
            "<h3>Per error type (predicted vs golden counts; P, R, F1 per-error; paper F1)</h3>",
            _table(tables.TYPE_HEADER, tables.type_rows(summary), "enconda-types"),
            "<h3>Error types by level (%)</h3>",
            _table(
                tables.LEVEL_TYPE_HEADER, tables.level_type_rows(summary), "enconda-level-types"
            ),
            "<h3>Accuracy and Pass@1 by level (%)</h3>",
            _table(tables.LEVEL_ACC_HEADER, tables.level_accuracy_rows(summary), "enconda-levels"),
            f'<p class="note">{esc(tables.judge_line(summary))}</p>',
        ]
        agreement = tables.agreement_note(summary)
        if agreement:
            parts.append(f'<p class="note judge-agreement">{esc(agreement)}</p>')
    pyramid = summary.get("pyramid")
    if pyramid:
        parts += _pyramid_section(pyramid)
    aec = summary.get("aec")
    if aec:
        from ..aec import report as aec_report

        parts += [
            "<h3>AEC results by language (success: the hybrid verdict, log first, the judge "
            "where the log is inconclusive)</h3>",
            _table(aec_report.HEADER, aec_report.rows(aec), "enconda-aec", numeric_from=1),
        ]
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


# ----------------------------------------------------------------------------- evidence


def _tail_html(name: str, tail: Tail, href: Href) -> str:
    note = (
        f"last {len(tail.text.encode('utf-8')):,} of {tail.size:,} bytes"
        if tail.truncated
        else f"{tail.size:,} bytes"
    )
    return (
        f"<details><summary>{esc(name)} ({note}) — "
        f'<a href="{href(tail.path)}">full file</a></summary>'
        f"<pre>{esc(tail.text)}</pre></details>"
    )


def _verdict(verdict: Verdict | None) -> str:
    if verdict is None:
        return "-"
    if verdict.similar is None:
        label, css = "judge error", "judgeerr"
    else:
        label, css = ("accepted", "accepted") if verdict.similar else ("rejected", "rejected")
    reason = verdict.reason or verdict.error or ""
    return f'<span class="{css}">{label}</span> {esc(reason)}'


def diagnosis_html(ev: CaseRecords) -> str:
    """The agent's diagnosis beside the golden one, with the judge's verdict per matched pair."""
    golden = ev.golden.errors if ev.golden is not None else []
    predicted = ev.outcome.diagnosis if ev.outcome is not None else []
    if not golden and not predicted:
        return ""
    grade = ev.diagnosis
    judged = {(p.golden_index, p.predicted_index): p for p in grade.judged} if grade else {}
    matched = grade.per_error.matched if grade else []
    pairs: list[tuple[int | None, int | None]] = [
        (m.golden_index, m.predicted_index) for m in matched
    ]
    used_g = {g for g, _p in pairs}
    used_p = {p for _g, p in pairs}
    pairs += [(g, None) for g in range(len(golden)) if g not in used_g]
    pairs += [(None, p) for p in range(len(predicted)) if p not in used_p]
    rows = []
    for g, p in pairs:
        gold = golden[g] if g is not None and 0 <= g < len(golden) else None
        pred = predicted[p] if p is not None and 0 <= p < len(predicted) else None
        pair = judged.get((g, p)) if g is not None and p is not None else None
        rows.append(
            "<tr>"
            f"<td>{esc(gold.error_type if gold else '')}</td>"
            f"<td>{esc(gold.error_description if gold else '')}"
            + (f"<br><i>fix:</i> {esc(gold.golden_answer)}" if gold else "")
            + f"</td><td>{esc(pred.error_type if pred else '')}</td>"
            f"<td>{esc(pred.error_description if pred else '')}"
            + (f"<br><i>fix:</i> {esc(pred.fix_suggestion)}" if pred else "")
            + f"</td><td>{_verdict(pair.description) if pair else '-'}</td>"
            f"<td>{_verdict(pair.fix) if pair else '-'}</td></tr>"
        )
    if not golden and grade is not None and grade.golden_types:
        rows.append(
            '<tr><td colspan="6" class="note">golden types '
            f"{esc(', '.join(grade.golden_types))} (the case's golden text was not "
            "saved in this run)</td></tr>"
        )
    header = "".join(
        f"<th>{h}</th>"
        for h in (
            "Golden type",
            "Golden error and fix",
            "Predicted type",
            "Agent's diagnosis and fix",
            "Description verdict",
            "Fix verdict",
        )
    )
    return (
        f'<table class="diagnosis"><thead><tr>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _execution_html(ev: CaseRecords) -> str:
    if ev.execution is None:
        return ""
    out = []
    for step in ev.execution.steps:
        failed = step.exit_code != 0
        tag = "timed out" if step.timed_out else f"exit {step.exit_code}"
        out.append(
            f"<details{' open' if failed else ''}><summary>replayed {esc(step.name)} "
            f"step: <code>{esc(step.command)}</code> — {esc(tag)}, "
            f"{step.duration:.1f} s</summary>"
            f"<pre>{esc(step.output_tail)}</pre></details>"
        )
    return "".join(out)


def trajectory_html(ev: CaseRecords) -> str:
    if not ev.steps:
        return ""
    items = []
    for number, step in enumerate(ev.steps, 1):
        command = step.command
        first = command.splitlines()[0] if command else (step.kind or "step")
        status = "" if step.exit_code is None else f" — exit {step.exit_code}"
        if step.timed_out:
            status += " (timed out)"
        body = []
        if step.thought:
            body.append(f"<p><i>thought:</i> {esc(step.thought)}</p>")
        if command:
            body.append(f"<pre>{esc(command)}</pre>")
        if step.output:
            body.append(f"<pre>{esc(step.output)}</pre>")
        items.append(
            f"<li><details><summary>{number}. <code>{esc(first[:160])}</code>{esc(status)}"
            f"</summary>{''.join(body)}</details></li>"
        )
    return (
        f"<details><summary>trajectory: {len(ev.steps)} steps</summary>"
        f'<ol class="trajectory">{"".join(items)}</ol></details>'
    )


def evidence_html(
    ev: CaseRecords,
    item: str,
    href: Href,
    case_level: bool | str = True,
    stage_name: str | None = None,
) -> str:
    """What a reviewer reads for one item of the case.

    The case's own evidence (setup script, trajectory, log tails, files) is shown where
    ``case_level`` is true; a string there is the anchor of the row that shows it, so a case with
    four items does not carry its logs four times.
    """
    parts = []
    grading = ev.gradings.get(item)
    if grading is not None:
        parts.append(
            f'<p><b>{esc(item)}</b>: <span class="outcome {esc(grading.outcome)}">'
            f"{esc(grading.outcome)}</span> {esc(grading.message)}</p>"
        )
    if ev.outcome is not None:
        parts.append(
            f'<p class="note">agent status {esc(ev.outcome.status)} {esc(ev.outcome.message)}</p>'
        )
    if ev.state is not None and ev.state.setup_timed_out:
        # "completed" above is the agent's own status; its setup, replayed, did not finish.
        parts.append(
            f'<p class="note failed">setup timed out after {ev.state.setup_seconds:.0f} s</p>'
        )
    if ev.interpreter is not None:
        rejected = "; ".join(ev.interpreter.rejected)
        parts.append(
            f'<p class="note">graded python: <code>{esc(ev.interpreter.path)}</code> '
            f"({esc(ev.interpreter.detail)})"
            + (f"; passed over: {esc(rejected)}" if rejected else "")
            + "</p>"
        )
    if ev.outcome is not None and ev.outcome.output_problems:
        parts.append(
            "<p>output problems: "
            + "; ".join(f"{esc(k)}: {esc(v)}" for k, v in ev.outcome.output_problems.items())
            + "</p>"
        )
    if item in ("error_types", "descriptions", "fixes"):
        parts.append(diagnosis_html(ev))
    if item == "execution":
        parts.append(_execution_html(ev))
    # A probe row names its pyramid stage; the stage's result file holds what the probes saw.
    stage = ev.stages.get(stage_name) if stage_name else None
    if stage is not None:
        parts.append(
            f"<p>probe {esc(stage.stage)}: {esc(stage.outcome)} "
            f"{esc(stage.message)}</p><pre>{esc(_short_numbers(stage))}</pre>"
        )
        for run in stage.runs[:5]:
            parts.append(
                f"<details><summary>probe run <code>{esc(str(run.get('command', ''))[:160])}"
                f"</code> — exit {esc(run.get('exit_code'))}</summary>"
                f"<pre>{esc(str(run.get('output', ''))[-3000:])}</pre></details>"
            )
    if isinstance(case_level, str):
        parts.append(
            f'<p class="note">setup script, trajectory, logs and files: '
            f'<a href="#{esc(case_level)}">{esc(case_level)}</a></p>'
        )
        return "".join(parts)
    if not case_level:
        return "".join(parts)
    if ev.problems:
        # An edited run: what could not be read is named, not shown as if it were absent.
        parts.append(
            '<p class="note failed">records not as the harness writes them (not shown): '
            + "; ".join(esc(problem) for problem in ev.problems)
            + "</p>"
        )
    if ev.setup_script is not None:
        parts.append(
            "<details><summary>setup script "
            f'(<a href="{href(ev.paths.setup_script)}">setup.sh</a>)</summary>'
            f"<pre>{esc(ev.setup_script)}</pre></details>"
        )
    parts.append(trajectory_html(ev))
    for name, tail in ev.logs.items():
        parts.append(_tail_html(name, tail, href))
    if ev.files:
        links = " ".join(
            f'<a href="{href(p)}">{esc(p.relative_to(ev.root).as_posix())}</a>' for p in ev.files
        )
        parts.append(f'<details><summary>case files</summary><p class="note">{links}</p></details>')
    return "".join(parts)


def _short_numbers(stage: StageResult) -> str:
    import json

    text = json.dumps(stage.numbers, indent=1, sort_keys=True, default=str)
    return text if len(text) < 4000 else text[:4000] + "\n…"


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
