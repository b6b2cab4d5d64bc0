"""The built-in task kinds' sections of a run's summary and ``report.html``
(``kinds.ReportSection``): diagnosis's main tables, the research pyramid, AEC by language.

Each kind names its functions here by ``"module:function"`` (``kinds`` is in the base layer and
cannot import the report); ``review.summary_section`` shows every registered kind's section in
turn, so a plugin's kind adds its own the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import tables
from .html_parts import _table, esc
from .runrecords import RunRecords


def diagnosis_html(summary: Mapping[str, Any]) -> list[str]:
    """EnConda-Bench's main table, per error type and per level, with the judge's line."""
    if not tables.has_diagnosis(summary):
        return []
    parts = [
        "<h3>Main table (%; both metric definitions)</h3>",
        _table(tables.MAIN_HEADER, tables.main_rows(summary), "enconda-main", numeric_from=3),
        "<h3>Per error type (predicted vs golden counts; P, R, F1 per-error; paper F1)</h3>",
        _table(tables.TYPE_HEADER, tables.type_rows(summary), "enconda-types"),
        "<h3>Error types by level (%)</h3>",
        _table(tables.LEVEL_TYPE_HEADER, tables.level_type_rows(summary), "enconda-level-types"),
        "<h3>Accuracy and Pass@1 by level (%)</h3>",
        _table(tables.LEVEL_ACC_HEADER, tables.level_accuracy_rows(summary), "enconda-levels"),
        f'<p class="note">{esc(tables.judge_line(summary))}</p>',
    ]
    agreement = tables.agreement_note(summary)
    if agreement:
        parts.append(f'<p class="note judge-agreement">{esc(agreement)}</p>')
    return parts


def pyramid_html(summary: Mapping[str, Any]) -> list[str]:
    """The pyramid's tables, headed by the registered stages' names (C0-C5 and any added)."""
    from ..stages import STAGES
    from .pyramid import stage_span
    from .review import AUDIT_HEADER, PYRAMID_HEADER, audit_rows, pyramid_rows

    pyramid = summary.get("pyramid")
    if not pyramid:
        return []
    parts = [
        f"<h3>Runtime pyramid {esc(stage_span())} (denominator: applicable = passed + failed)</h3>",
        _table(PYRAMID_HEADER, pyramid_rows(pyramid), "enconda-pyramid"),
    ]
    for stage in STAGES.values():
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


def aec_summary(records: RunRecords) -> dict[str, Any] | None:
    """AEC's numbers by language over the cases with AEC items and a grade (``aec.json``)."""
    from ..aec.report import aec_summary as by_language

    cases = sorted({case for case, item in records.rows if item.startswith("aec_")})
    return by_language(grade for case in cases if (grade := records.cases[case].aec) is not None)


def aec_html(summary: Mapping[str, Any]) -> list[str]:
    from ..aec import report as aec_report

    aec = summary.get("aec")
    if not aec:
        return []
    return [
        "<h3>AEC results by language (success: the hybrid verdict, log first, the judge "
        "where the log is inconclusive)</h3>",
        _table(aec_report.HEADER, aec_report.rows(aec), "enconda-aec", numeric_from=1),
    ]
