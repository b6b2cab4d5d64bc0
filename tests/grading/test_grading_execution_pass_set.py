"""Pass@1 against a PASS set: every PASS-set test must pass; tests outside are reported only."""

from __future__ import annotations

from pathlib import Path

from pytest_enconda.cases.models import ExecutionReference
from pytest_enconda.grading.execution import grade_execution
from pytest_enconda.probing.execution import ExecutionRecord, StepRecord

PASS_SET = frozenset({"t::a", "t::b"})
REFERENCE = ExecutionReference(verified=True, pass_set=PASS_SET, test_tools=("pytest",))


def junit(cases: dict[str, str]) -> str:
    body = []
    for test, outcome in cases.items():
        classname, name = test.split("::")
        child = {"passed": "", "failed": "<failure/>", "error": "<error/>"}[outcome]
        body.append(f'<testcase classname="{classname}" name="{name}">{child}</testcase>')
    return f"<testsuites><testsuite>{''.join(body)}</testsuite></testsuites>"


def record(tmp_path: Path, cases: dict[str, str] | None, test_exit: int = 1) -> ExecutionRecord:
    steps = [
        StepRecord(name="setup", command="bash setup.sh", exit_code=0, budget=60, log="s.log"),
        StepRecord(name="test", command="pytest", exit_code=test_exit, budget=60, log="t.log"),
    ]
    report = None
    if cases is not None:
        (tmp_path / "execution").mkdir(exist_ok=True)
        (tmp_path / "execution" / "junit.xml").write_text(junit(cases))
        report = "execution/junit.xml"
    return ExecutionRecord(case_id="c", image="i", steps=steps, junit=report)


def test_pass_set_passes_while_other_tests_fail(tmp_path: Path) -> None:
    rec = record(tmp_path, {"t::a": "passed", "t::b": "passed", "t::net": "failed"})
    verdict = grade_execution(rec, REFERENCE, tmp_path)
    assert verdict.outcome == "passed"
    assert verdict.numbers["pass_set"] == {"size": 2, "passed": 2}
    assert verdict.numbers["outside_pass_set"]["failed"] == 1
    assert "outside the PASS set: 1 failed" in verdict.message


def test_a_pass_set_test_that_fails_or_is_missing_fails(tmp_path: Path) -> None:
    verdict = grade_execution(record(tmp_path, {"t::a": "error"}), REFERENCE, tmp_path)
    assert verdict.outcome == "failed"
    assert "2 of 2 PASS-set tests did not pass" in verdict.message
    assert "t::a: error" in verdict.message and "t::b: not run" in verdict.message


def test_no_report_fails(tmp_path: Path) -> None:
    verdict = grade_execution(record(tmp_path, None), REFERENCE, tmp_path)
    assert verdict.outcome == "failed"
    assert verdict.message.startswith("the test command wrote no JUnit report (exited with 1)")


def test_setup_failure_still_fails_first(tmp_path: Path) -> None:
    rec = record(tmp_path, {"t::a": "passed", "t::b": "passed"})
    rec.steps[0].exit_code = 2
    verdict = grade_execution(rec, REFERENCE, tmp_path)
    assert verdict.outcome == "failed" and verdict.message.startswith("setup step exited with 2")


def test_without_reference_the_exit_code_decides(tmp_path: Path) -> None:
    rec = record(tmp_path, None, test_exit=0)
    assert grade_execution(rec).outcome == "passed"
    rec.steps[1].exit_code = 1
    assert grade_execution(rec).outcome == "failed"
