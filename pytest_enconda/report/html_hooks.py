"""pytest-html 4.x hooks: the review report's summary and evidence inside ``--html`` output.

Registered by the plugin only when pytest-html is active; every hook does nothing unless a
benchmark session exists, so an ordinary test run's HTML report is left as it was. This module
imports nothing heavy at load: it is imported in every pytest run that has pytest-html.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pytest

COLUMNS = [("case", "Case"), ("aspect", "Aspect"), ("types", "Error types"), ("level", "Level")]
COLUMNS += [("agent", "Agent")]
_ERROR_TYPE = re.compile(r"^E\d+$")


class HtmlHooks:
    def __init__(self, session: Callable[[], Any]) -> None:
        self._session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        active = self._session()
        if active is None or not active.summary or active.records is None:
            return
        from ..records import RunDir
        from .review import CSS, case_rows, summary_section

        report_path = RunDir(active.run_dir).report_html
        prefix.append(
            f"<style>{CSS}</style>"
            + summary_section(active.summary, case_rows(active.records))
            + f'<p class="note">full review report: <a href="{report_path.resolve().as_uri()}">'
            f"{html.escape(str(report_path))}</a></p>"
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        if self._session() is None:
            return
        cells[2:2] = [
            f'<th class="sortable" data-column-type="{key}">{label}</th>' for key, label in COLUMNS
        ]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        active = self._session()
        if active is None:
            return
        props = dict(report.user_properties)
        types = _error_types(active.run_dir, props.get("enconda_case")) or sorted(
            k for k in getattr(report, "keywords", {}) if _ERROR_TYPE.match(str(k))
        )
        values = {
            "case": props.get("enconda_case", ""),
            "aspect": props.get("enconda_item", ""),
            "types": " ".join(types),
            "level": props.get("enconda_level", "")
            if props.get("enconda_level") is not None
            else "",
            "agent": active.settings.agent if "enconda_case" in props else "",
        }
        cells[2:2] = [
            f'<td class="col-{key}">{html.escape(str(values[key]))}</td>' for key, _l in COLUMNS
        ]

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        active = self._session()
        props = dict(report.user_properties)
        if active is None or "enconda_case" not in props:
            return
        outcome_report = report.when == "call" or (report.when == "setup" and not report.passed)
        if not outcome_report:
            return
        from .evidence_html import evidence_html
        from .html_parts import absolute_href
        from .runrecords import load_case

        # Read per row as the run goes, not cached per case: a case's later items add records.
        evidence = load_case(active.run_dir, str(props["enconda_case"]))
        item = str(props.get("enconda_item", ""))
        stage = props.get("enconda_stage")
        # Logs and trajectory once per case and item kind, not on every diagnosis aspect.
        block = evidence_html(
            evidence,
            item,
            absolute_href,
            item not in ("descriptions", "fixes"),
            None if stage is None else str(stage),
        )
        data.insert(0, f'<div class="enconda-evidence">{block}</div>')


def register(config: pytest.Config, session: Callable[[], Any]) -> None:
    config.pluginmanager.register(HtmlHooks(session), "enconda-html")


def _error_types(run_dir: Any, case: Any) -> list[str]:
    """The case's golden error types from its ``case.json`` (written when it was graded)."""
    if case is None:
        return []
    from ..artifacts import ArtifactError
    from ..records import CaseDir, read_case_facts

    try:
        facts = read_case_facts(CaseDir(run_dir, str(case)))
    except ArtifactError:
        return []  # an edited record: the row's keywords name the types instead
    return list(facts.error_types) if facts is not None else []
