"""What the review report shows under one item: its grading, the agent's status and the graded
interpreter, the diagnosis verdicts, the execution steps, a probe stage's runs, and (once per
case) the setup script, the trajectory, log tails and files. Read from the run's typed records
(``runrecords``); nothing is graded here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .evidence import Tail
from .html_parts import Href, esc
from .runrecords import CaseRecords

if TYPE_CHECKING:
    from ..grading.judges.base import Verdict
    from ..probing.pyramid import StageResult


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
