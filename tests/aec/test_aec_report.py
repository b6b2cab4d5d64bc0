"""AEC results by language in summary.json and report.html, from the cases' typed grades."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_enconda.aec.cheat_rules import CheatFinding
from pytest_enconda.aec.grading import AecGrade, PassSetShare
from pytest_enconda.aec.report import aec_summary, rows
from pytest_enconda.records import CaseDir
from pytest_enconda.report.review import summary_section
from pytest_enconda.report.runrecords import load_case


def grade(case: str, share: float | None = None, **fields: Any) -> AecGrade:
    pass_set = None
    if share is not None:
        pass_set = PassSetShare(size=4, passed=round(4 * share), share=share, log="test")
    return AecGrade(case_id=case, pass_set=pass_set, **fields)


def write_grade(run: Path, case: str, **fields: Any) -> None:
    root = CaseDir(run, case).root
    root.mkdir(parents=True, exist_ok=True)
    (root / "aec.json").write_text(grade(case, **fields).model_dump_json())


def test_by_language_and_overall() -> None:
    grades = [
        grade("a", 1.0, language="go", verdict="success", tests_run=True, executed=4,
              decided_by="log", agent_seconds=10, setup_seconds=30, test_seconds=2, tokens=1000),
        grade("b", 0.5, language="go", verdict="failure", tests_run=False, executed=0,
              decided_by="log", agent_seconds=20, setup_seconds=10, test_seconds=0, tokens=3000),
        grade("c", language="rust", verdict="inconclusive", tests_run=False,
              decided_by="neither"),
        grade("d", 1.0, language="rust", verdict="failure", tests_run=True, executed=3,
              decided_by="veto", cheat_findings=[CheatFinding(
                  rule="test file deleted", kind="tests-edited", source="rules",
                  where="step 2", step=2, evidence="rm tests/test_a.rs")]),
    ]  # fmt: skip
    summary = aec_summary(grades)
    assert summary is not None
    go = summary["by_language"]["go"]
    assert (go["cases"], go["success"], go["tests_run"]) == (2, 1, 1)
    assert go["pass_set_share_mean"] == 0.75 and go["tokens_mean"] == 2000
    assert go["replay_seconds_mean"] == 21
    assert summary["overall"]["decided_by"] == {"log": 2, "judge": 0, "veto": 1, "neither": 1}
    # A vetoed case is no success, and the judge's finding is counted on its own.
    rust = summary["by_language"]["rust"]
    assert (rust["success"], rust["cheating_found"]) == (0, 1)
    table = rows(summary)
    assert [row[0] for row in table] == ["go", "rust", "all"]
    assert table[0][2] == "50.0" and table[0][5] == "75.0 (2)"
    assert table[1][6] == "0 / 0 / 1 / 1" and table[1][7] == "1" and table[2][7] == "1"
    html = summary_section({"aec": summary, "items": {}}, [], plots=False)
    assert 'id="enconda-aec"' in html and "AEC results by language" in html


def test_no_aec_cases_no_section() -> None:
    assert aec_summary([]) is None
    assert "enconda-aec" not in summary_section({"items": {}}, [], plots=False)


def test_a_linked_or_malformed_grade_is_not_read(tmp_path: Path) -> None:
    """A run directory is input: an aec.json linked to a file outside it, or one that is not a
    grade, counts as no grade (it is never followed, and never crashes the summary), and the
    case's records name it."""
    outside = tmp_path / "outside.json"
    outside.write_text(grade("l", language="host-secret", verdict="success").model_dump_json())
    run = tmp_path / "run"
    write_grade(run, "a", language="go", verdict="success")
    linked = CaseDir(run, "l").root
    linked.mkdir(parents=True)
    (linked / "aec.json").symlink_to(outside)
    listed = CaseDir(run, "n").root
    listed.mkdir(parents=True)
    (listed / "aec.json").write_text(json.dumps([1, 2]))
    cases = {case: load_case(run, case) for case in ("a", "l", "n")}
    assert cases["l"].aec is None and cases["n"].aec is None
    assert any("aec.json" in problem for problem in cases["n"].problems)
    summary = aec_summary(c.aec for c in cases.values() if c.aec is not None)
    assert summary is not None and set(summary["by_language"]) == {"go"}
