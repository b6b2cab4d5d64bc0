"""Which file the review report shows and links as a step's log: the one the execution record
names (an oracle's replay is the golden measurement, written under ``execution/golden/``), never a
path outside the case directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_enconda.probing.execution import ExecutionRecord, StepRecord
from pytest_enconda.records import CaseDir
from pytest_enconda.report.evidence import step_log
from pytest_enconda.report.runrecords import load_case


def _record(log: str) -> ExecutionRecord:
    step = StepRecord(
        name="setup", command="x", exit_code=0, duration=1.0, budget=9.0, output_tail="", log=log
    )
    return ExecutionRecord(case_id="c1", image="i", steps=[step])


def test_the_record_names_the_log(tmp_path: Path) -> None:
    case_dir = CaseDir(tmp_path, "c1")
    assert step_log(case_dir, _record("execution/golden/setup.log"), "setup") == (
        case_dir.root / "execution" / "golden" / "setup.log"
    )
    # A step the record does not name, or no record at all: the usual place.
    assert step_log(case_dir, _record("execution/golden/setup.log"), "test") == (
        case_dir.execution_log("test")
    )
    assert step_log(case_dir, None, "setup") == case_dir.execution_log("setup")


@pytest.mark.parametrize("log", ["../../../etc/passwd", "/etc/passwd", "execution/../../x", ""])
def test_a_log_name_leaving_the_case_directory_is_ignored(tmp_path: Path, log: str) -> None:
    case_dir = CaseDir(tmp_path, "c1")
    assert step_log(case_dir, _record(log), "setup") == case_dir.execution_log("setup")


def test_the_report_evidence_reads_the_golden_log(tmp_path: Path) -> None:
    case_dir = CaseDir(tmp_path, "c1")
    golden = case_dir.root / "execution" / "golden"
    golden.mkdir(parents=True)
    (golden / "setup.log").write_text("Successfully installed confmerge\n", encoding="utf-8")
    case_dir.execution_record.write_text(
        '{"case_id": "c1", "image": "i", "steps": [{"name": "setup", "command": "x",'
        ' "exit_code": 0, "duration": 1.0, "budget": 9.0, "output_tail": "",'
        ' "log": "execution/golden/setup.log"}]}',
        encoding="utf-8",
    )
    evidence = load_case(tmp_path, "c1")
    tail = evidence.logs["setup log"]
    assert tail.path == golden / "setup.log"
    assert tail.text == "Successfully installed confmerge\n"
    assert "test log" not in evidence.logs
