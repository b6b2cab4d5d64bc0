"""Diagnosis items through pytest: oracle, replayed predictions, summary.json, -n 2 (no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]
DIAGNOSIS = "not execution"


def _rows(run_dir: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row for row in rows}


def _outcome_line(case: str, types: list[str], fix: str = "pip install foo-e4") -> str:
    return json.dumps(
        {
            "case_id": case,
            "agent": "recorded",
            "diagnosis": [
                {"error_type": t, "error_description": "wrong path", "fix_suggestion": fix}
                for t in types
            ],
            "setup_script": "true\n",
        }
    )


def test_oracle_passes_every_diagnosis_item(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    write_case(pytester.path, "two", errors=[golden_error("E1"), golden_error("E7")])
    run = pytester.path / "run"
    result = pytester.runpytest("cases", "-k", DIAGNOSIS, "--run-dir", str(run))
    result.assert_outcomes(passed=6)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["cases"] == 2
    assert summary["agent"] == "oracle" and summary["judge_name"] == "offline"
    for key in ("type_precision", "type_recall", "type_f1", "description_acc", "fix_acc"):
        assert summary["paper"][key] == 1.0
        assert summary["per_error"][key] == 1.0
    assert summary["per_type"]["E7"]["golden"] == 1
    assert summary["pass_at_1"] is None  # no execution item ran
    assert "Main table (%)" in result.stdout.str()
    assert (run / "summary.md").read_text().count("oracle") >= 1


def test_replayed_wrong_predictions_fail_with_reasons(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    write_case(pytester.path, "two", errors=[golden_error("E1")])
    write_case(pytester.path, "three", errors=[golden_error("E2")])
    predictions = pytester.path / "predictions.jsonl"
    predictions.write_text(
        _outcome_line("one", ["E2"]) + "\n" + _outcome_line("two", ["E1", "E9"]) + "\n"
    )
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases",
        "-k",
        DIAGNOSIS,
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
        "--run-dir",
        str(run),
    )
    rows = _rows(run)
    assert rows[("one", "error_types")]["outcome"] == "failed"
    assert "E4" in rows[("one", "error_types")]["message"]
    assert rows[("two", "error_types")]["outcome"] == "failed"  # E9 is not a type
    assert rows[("two", "fixes")]["outcome"] == "failed"  # 'pip install foo-e4' fixes nothing
    for item in ("error_types", "descriptions", "fixes"):
        assert rows[("three", item)]["outcome"] == "error"
        assert "no recorded prediction for case three" in rows[("three", item)]["message"]
    summary = json.loads((run / "summary.json").read_text())
    # one: predicted {E2} vs golden {E4}; two: {E1, E9} vs {E1}: TP 1, FP 2, FN 1.
    assert summary["paper"]["type_precision"] == pytest.approx(1 / 3)
    assert summary["paper"]["type_recall"] == pytest.approx(1 / 2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
def test_parallel_diagnosis_equals_serial(pytester: pytest.Pytester) -> None:
    for index, kind in enumerate(["E1", "E2", "E4", "E6", "E7", "E8"]):
        write_case(pytester.path, f"c{index}", errors=[golden_error(kind)])
    serial, parallel = pytester.path / "serial", pytester.path / "parallel"
    pytester.runpytest_subprocess("cases", "-k", DIAGNOSIS, "--run-dir", str(serial))
    result = pytester.runpytest_subprocess(
        "cases", "-k", DIAGNOSIS, "-n", "2", "--run-dir", str(parallel)
    )
    result.assert_outcomes(passed=18)
    strip = lambda rows: {k: v["outcome"] for k, v in rows.items()}  # noqa: E731
    assert strip(_rows(parallel)) == strip(_rows(serial))
    runs = [len(p.read_text().splitlines()) for p in parallel.glob("cases/*/agent/runs.jsonl")]
    assert runs == [1] * 6


def test_resume_regrades_without_rerunning_agents(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    write_case(pytester.path, "two", errors=[golden_error("E6")])
    run = pytester.path / "run"
    pytester.runpytest("cases", "-k", DIAGNOSIS, "--run-dir", str(run))
    # As if killed after the first case: drop the second case's results and grading.
    lines = (run / "results.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["case"] == "one"]
    (run / "results.jsonl").write_text("\n".join(kept) + "\n")
    result = pytester.runpytest("cases", "-k", DIAGNOSIS, "--resume", str(run))
    result.assert_outcomes(passed=6)
    lines = (run / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(set(lines)) == 6
    runs = [len(p.read_text().splitlines()) for p in run.glob("cases/*/agent/runs.jsonl")]
    assert runs == [1, 1]


def test_resume_refuses_another_agent(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    run = pytester.path / "run"
    pytester.runpytest("cases", "-k", DIAGNOSIS, "--run-dir", str(run))
    result = pytester.runpytest("cases", "--resume", str(run), "--agent", "readme")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "the run was made with agent='oracle'" in result.stderr.str()


def test_html_report_links_artifacts_and_shows_numbers(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html", reason="pytest-html is an optional extra ('.[html]')")
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases", "-k", "error_types", "--run-dir", str(run), "--html", "report.html"
    )
    result.assert_outcomes(passed=1)
    html = (pytester.path / "report.html").read_text()
    grading = (run / "cases" / "one" / "grading" / "error_types.json").resolve().as_uri()
    assert grading in html
    assert (run / "cases" / "one" / "agent" / "outcome.json").resolve().as_uri() in html
    assert "numbers" in html


def test_unreadable_saved_outcome_is_an_error_naming_the_file(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    run = pytester.path / "run"
    pytester.runpytest("cases", "-k", DIAGNOSIS, "--run-dir", str(run))
    outcome = run / "cases" / "one" / "agent" / "outcome.json"
    outcome.write_text('{"case_id": "one"}')
    result = pytester.runpytest("cases", "-k", DIAGNOSIS, "--resume", str(run))
    result.assert_outcomes(errors=3)
    assert f"{outcome}: not a valid AgentOutcome: agent: Field required" in result.stdout.str()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_unreadable_instances_are_listed_and_the_rest_run(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    data = pytester.path / "data"
    folder = data / "instances" / "error_gen_acme_widget"
    for name, error_type in [
        ("acme_widget_error_readme_1", "E4"),
        ("acme_widget_error_readme_2", "E3"),
    ]:
        (folder / name).mkdir(parents=True)
        (folder / name / "README.md").write_text("# widget\n")
        golden = {"level": "level1", "errors": [golden_error("E4") | {"error_type": error_type}]}
        (folder / name / "README.json").write_text(json.dumps(golden))
    (data / "repo_info.jsonl").write_text('{"repository": "acme/widget", "revision": "abc123"}\n')
    result = pytester.runpytest_subprocess(
        "--cases", str(data), "-k", "error_types", *workers, "--run-dir", str(pytester.path / "run")
    )
    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    assert "enconda: instances that could not be read" in text
    assert "acme_widget_error_readme_2/README.json" in text and "E3" in text
