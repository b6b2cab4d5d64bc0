"""summary.md of a research-only run opens with its pyramid, not with empty diagnosis tables."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_enconda.records import CaseDir, ResultRow
from pytest_enconda.report.runrecords import RunRecords
from pytest_enconda.report.summary import grade_run

C1 = "probe_pyramid.py::test_c1_entry_point_on_cpu"


def _research_run(run_dir: Path) -> dict[tuple[str, str], ResultRow]:
    paths = CaseDir(run_dir, "tiny")
    paths.pyramid("C1").parent.mkdir(parents=True)
    paths.pyramid("C1").write_text(json.dumps({"stage": "C1", "outcome": "passed"}))
    return {("tiny", C1): ResultRow(case="tiny", item=C1, stage="C1", outcome="passed")}


def _summary_md(run_dir: Path, results: dict[tuple[str, str], ResultRow]) -> str:
    records = RunRecords.load(run_dir, results)
    grade_run(records, agent="oracle", model=None, judge="offline", subset=None)
    return (run_dir / "summary.md").read_text()


def test_a_research_only_summary_has_only_sections_with_rows(tmp_path: Path) -> None:
    text = _summary_md(tmp_path, _research_run(tmp_path))
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# ResearchEnvBench research: agent oracle, model -, 1 cases",
        "## Runtime pyramid (C0-C5)",
    ]
    assert "| 0/0 | 1/1 (100.0%) |" in text
    for diagnosis in ("Main table", "Per error type", "Type P", "Pass@1", "judge offline"):
        assert diagnosis not in text


def test_a_run_with_both_suites_keeps_both(tmp_path: Path) -> None:
    results = _research_run(tmp_path)
    results[("tabkit", "execution")] = ResultRow(case="tabkit", item="execution", outcome="failed")
    text = _summary_md(tmp_path, results)
    assert text.startswith("# EnConda-Bench diagnosis: agent oracle")
    assert "## Main table" in text
    assert "## Runtime pyramid (C0-C5)" in text
