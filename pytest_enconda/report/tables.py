"""The paper's tables for one run, from ``summary.json`` (terminal and Markdown).

Both renderers read only the summary dict, so a summary written by an earlier run (or another
machine) renders the same way. Every metric says which definition it follows: *paper*
(EnConda-Bench's published numbers) or *per-error* (stricter); see ``definitions`` in the summary.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ..error_types import ERROR_TYPES

_DASH = "-"


def _pct(value: Any) -> str:
    if value is None:
        return _DASH
    return f"{100 * float(value):.1f}"


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    current: Any = data
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _title(summary: Mapping[str, Any]) -> str:
    judge = summary.get("judge_name") or _get(summary, "judge.name") or "?"
    model = summary.get("model") or _DASH
    return (
        f"EnConda-Bench diagnosis: agent {summary.get('agent', '?')}, model {model}, "
        f"judge {judge}, {summary.get('cases', 0)} cases"
    )


def main_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """The paper's main-table row for this run, once per definition."""
    rows = []
    for key, label in (("paper", "paper"), ("per_error", "per-error")):
        rows.append(
            [
                str(summary.get("agent", "?")),
                str(summary.get("model") or _DASH),
                label,
                _pct(_get(summary, f"{key}.type_precision")),
                _pct(_get(summary, f"{key}.type_recall")),
                _pct(_get(summary, f"{key}.type_f1")),
                _pct(_get(summary, f"{key}.description_acc")),
                _pct(_get(summary, f"{key}.fix_acc")),
                _pct(summary.get("pass_at_1")),
            ]
        )
    return rows


MAIN_HEADER = [
    "Agent",
    "Model",
    "Metrics",
    "Type P",
    "Type R",
    "Type F1",
    "Desc ACC",
    "Fix ACC",
    "Pass@1",
]
TYPE_HEADER = ["Type", "Predicted", "Golden", "P", "R", "F1", "F1 paper"]
LEVEL_TYPE_HEADER = [
    "Level",
    "Cases",
    "P paper",
    "R paper",
    "F1 paper",
    "P per-err",
    "R per-err",
    "F1 per-err",
]
LEVEL_ACC_HEADER = [
    "Level",
    "Cases",
    "Desc paper",
    "Desc per-err",
    "Fix paper",
    "Fix per-err",
    "Pass@1",
]


def type_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    per_type = summary.get("per_type") or {}
    rows = []
    for error_type in ERROR_TYPES:
        entry = per_type.get(error_type) or {}
        rows.append(
            [
                error_type,
                str(entry.get("predicted", 0)),
                str(entry.get("golden", 0)),
                _pct(entry.get("precision")),
                _pct(entry.get("recall")),
                _pct(entry.get("f1")),
                _pct(_get(entry, "paper.f1")),
            ]
        )
    invalid = summary.get("invalid_types") or {}
    if invalid:
        rows.append(["invalid", str(sum(invalid.values())), "0", _DASH, _DASH, _DASH, _DASH])
    return rows


def _levels(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    levels = summary.get("by_level") or {}
    return [(str(level), levels[level]) for level in sorted(levels, key=lambda v: int(v))]


def level_type_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """Error-type precision, recall and F1 by level, both definitions."""
    return [
        [
            level,
            str(block.get("cases", 0)),
            *(
                _pct(_get(block, f"{key}.type_{metric}"))
                for key in ("paper", "per_error")
                for metric in ("precision", "recall", "f1")
            ),
        ]
        for level, block in _levels(summary)
    ]


def level_accuracy_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """Description and fix accuracy and Pass@1 by level."""
    return [
        [
            level,
            str(block.get("cases", 0)),
            _pct(_get(block, "paper.description_acc")),
            _pct(_get(block, "per_error.description_acc")),
            _pct(_get(block, "paper.fix_acc")),
            _pct(_get(block, "per_error.fix_acc")),
            _pct(block.get("pass_at_1")),
        ]
        for level, block in _levels(summary)
    ]


def judge_line(summary: Mapping[str, Any]) -> str:
    judge = summary.get("judge") or {}
    name = f"judge {judge.get('name') or summary.get('judge_name') or '?'}"
    # Which judge graded it: the offline judge's version and the model that embedded the texts.
    name += f" version {judge['version']}" if judge.get("version") else ""
    name += f" (embedder {judge['embedder']})" if judge.get("embedder") else ""
    parts = [
        name,
        f"{judge.get('calls', 0)} verdicts",
        f"{judge.get('cache_hits', 0)} from cache",
        f"{judge.get('errors', 0)} judge errors",
    ]
    tokens = int(judge.get("prompt_tokens", 0) or 0) + int(judge.get("completion_tokens", 0) or 0)
    if tokens or judge.get("requests"):
        parts.append(f"{judge.get('requests', 0)} requests ({judge.get('retries', 0)} retries)")
        parts.append(
            f"{judge.get('prompt_tokens', 0)} prompt + {judge.get('completion_tokens', 0)} "
            "completion tokens"
        )
        cost = float(judge.get("cost_usd", 0.0) or 0.0)
        unknown = int(judge.get("cost_unknown", 0) or 0)
        parts.append(
            f"${cost:.4f}" + (f" (+{unknown} responses without a price)" if unknown else "")
        )
    return ", ".join(parts)


def agreement_note(summary: Mapping[str, Any]) -> str | None:
    """The offline judge's agreement on the hand-written set, when the run was graded by it."""
    from ..grading.judges.agreement import agreement_line

    figures = summary.get("judge_agreement")
    return agreement_line(figures) if isinstance(figures, Mapping) else None


def coverage_note(summary: Mapping[str, Any]) -> str | None:
    """How many diagnosis cases the diagnosis metrics speak for, and what the rest count as."""
    coverage = summary.get("diagnosis_coverage")
    if not isinstance(coverage, Mapping) or not coverage.get("cases"):
        return None
    cases, diagnosed = coverage["cases"], coverage.get("diagnosed", 0)
    line = (
        f"diagnosis coverage: {diagnosed} of {cases} cases with a readable diagnosis.json "
        f"({_pct(coverage.get('rate'))} %)"
    )
    missing, ungraded = coverage.get("missing", 0), coverage.get("ungraded", 0)
    if missing:
        line += (
            f"; {missing} without one: per-error counts each of their golden errors as missed, "
            "paper leaves them out (as the official evaluator does)"
        )
    if ungraded:
        line += f"; {ungraded} not graded (a harness or judge error): left out of both"
    return line


def merged_note(summary: Mapping[str, Any]) -> str | None:
    """Type P/R/F1 with E1 and E2 as one type beside the official figure (label noise)."""
    parts = []
    for key, label in (("paper", "paper"), ("per_error", "per-error")):
        f1 = _get(summary, f"e1_e2_merged.{key}.type_f1")
        if f1 is None:
            continue
        parts.append(
            f"{label} P/R/F1 {_pct(_get(summary, f'e1_e2_merged.{key}.type_precision'))}/"
            f"{_pct(_get(summary, f'e1_e2_merged.{key}.type_recall'))}/{_pct(f1)} "
            f"(official F1 {_pct(_get(summary, f'{key}.type_f1'))})"
        )
    if not parts:
        return None
    return "types with E1 and E2 merged (label noise, not the official figure): " + "; ".join(parts)


def notes(summary: Mapping[str, Any]) -> list[str]:
    out = list(filter(None, [coverage_note(summary)]))
    without = _get(summary, "paper.instances_without_errors")
    if without:
        out.append(
            f"paper accuracies average {_get(summary, 'paper.instances_with_errors')} instances "
            f"with golden errors; {without} without any are left out (the official script counts "
            "them as 0)"
        )
    for aspect in ("description", "fix"):
        instances = _get(summary, f"paper.{aspect}_judge_error_instances")
        pairs = _get(summary, f"per_error.{aspect}_judge_errors")
        if instances or pairs:
            out.append(
                f"{aspect}: judge errors on {pairs or 0} matched pairs "
                f"({instances or 0} instances left out of the paper average)"
            )
    invalid = summary.get("invalid_types") or {}
    if invalid:
        listed = ", ".join(f"{name!r} ({count})" for name, count in invalid.items())
        out.append(f"predicted types that are not error types (graded wrong): {listed}")
    merged = merged_note(summary)
    if merged:
        out.append(merged)
    executed = _get(summary, "execution.run")
    if executed is not None:
        out.append(
            f"Pass@1 over {executed} executed cases ({_get(summary, 'execution.passed')} passed)"
        )
    trivial = _get(summary, "execution.trivial_run")
    if trivial:
        out.append(
            f"Pass@1 on non-trivial cases (the headline): "
            f"{_pct(summary.get('pass_at_1_non_trivial'))} over {executed - trivial}; {trivial} "
            f"trivial (an empty setup passes their reference tests; "
            f"{_get(summary, 'execution.trivial_passed')} passed) left out"
        )
    coverage = summary.get("execution_coverage") or {}
    if coverage.get("no_verified_reference"):
        out.append(
            f"Pass@1 covers {coverage['covered']} of {coverage['instances']} instances with an "
            f"execution item; {coverage['no_verified_reference']} skipped: no verified reference"
        )
    out.append("values in %; paper = EnConda-Bench's definition, per-error = stricter")
    return out


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


DIAGNOSIS_ITEMS = ("error_types", "descriptions", "fixes", "execution")


def has_diagnosis(summary: Mapping[str, Any]) -> bool:
    """Whether the run graded any EnConda-Bench diagnosis item (a research-only run did not)."""
    items = summary.get("items") or {}
    return any(item in items for item in DIAGNOSIS_ITEMS)


def run_title(summary: Mapping[str, Any]) -> str:
    """The run's heading: the paper's title for EnConda-Bench items, else the research one."""
    if has_diagnosis(summary) or not summary.get("pyramid"):
        return _title(summary)
    return (
        f"ResearchEnvBench research: agent {summary.get('agent', '?')}, model "
        f"{summary.get('model') or '-'}, {summary['pyramid'].get('cases', 0)} cases"
    )


def render_markdown(summary_json: Mapping[str, Any]) -> str:
    """``summary.md``: the diagnosis tables when diagnosis items were graded (or nothing else
    was), then the runtime pyramid when research cases were; a section without rows is left
    out, so a research-only run opens with its pyramid."""
    parts = [f"# {run_title(summary_json)}"]
    if has_diagnosis(summary_json) or not summary_json.get("pyramid"):
        parts += [
            "## Main table",
            _markdown_table(MAIN_HEADER, main_rows(summary_json)),
            "## Per error type (predicted vs golden counts; P, R, F1 per-error, and paper F1)",
            _markdown_table(TYPE_HEADER, type_rows(summary_json)),
            "## Error types by level (number of injected errors)",
            _markdown_table(LEVEL_TYPE_HEADER, level_type_rows(summary_json)),
            "## Accuracy and Pass@1 by level",
            _markdown_table(LEVEL_ACC_HEADER, level_accuracy_rows(summary_json)),
            "## Judge",
            judge_line(summary_json),
            *filter(None, [agreement_note(summary_json)]),
            "## Notes",
            "\n".join(f"- {line}" for line in notes(summary_json)),
        ]
        definitions = summary_json.get("definitions") or {}
        if definitions:
            parts.append("## Definitions")
            parts.append("\n".join(f"- **{name}**: {text}" for name, text in definitions.items()))
    if summary_json.get("pyramid"):
        from .pyramid import pyramid_table, stage_span

        parts.append(f"## Runtime pyramid ({stage_span()})")
        parts.append(pyramid_table(summary_json["pyramid"]))
    return "\n\n".join(parts) + "\n"


def render_terminal(
    summary_json: Mapping[str, Any], console_width: int, color: bool = False
) -> str:
    """Rich tables rendered to plain text (ANSI colours only with ``color=True``)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=max(40, console_width),
        force_terminal=color,
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
    )

    def table(title: str, header: list[str], rows: list[list[str]], free: int = 1) -> Table:
        # The first ``free`` columns (names) fold when the terminal is narrow; numbers never do.
        result = Table(
            title=title,
            box=box.SIMPLE_HEAD,
            title_justify="left",
            pad_edge=False,
            padding=(0, 1, 0, 0),  # one space between columns keeps 80 columns enough
        )
        for index, name in enumerate(header):
            result.add_column(
                name,
                justify="left" if index < max(free, 1) else "right",
                overflow="fold",
                no_wrap=index >= free,
                min_width=len(name),
            )
        for row in rows:
            result.add_row(*row)
        return result

    console.print(_title(summary_json), style="bold")
    console.print(table("Main table (%)", MAIN_HEADER, main_rows(summary_json), free=2))
    console.print(
        table("Per error type (%; P, R, F1 per-error)", TYPE_HEADER, type_rows(summary_json))
    )
    console.print(
        table("Error types by level (%)", LEVEL_TYPE_HEADER, level_type_rows(summary_json))
    )
    console.print(
        table(
            "Accuracy and Pass@1 by level (%)", LEVEL_ACC_HEADER, level_accuracy_rows(summary_json)
        )
    )
    console.print(judge_line(summary_json))
    agreement = agreement_note(summary_json)
    if agreement:
        console.print(agreement)
    for line in notes(summary_json):
        console.print(f"- {line}")
    return buffer.getvalue()
