"""The review report, exports, compare and regrade over run directories written with real models
and real grading (no Docker: these stages read files only)."""

from __future__ import annotations

import csv
import json
import shutil
import time
from pathlib import Path

import browser
import pytest
from numbers_check import assert_numbers_agree, html_tables
from runbuilder import CaseSpec, build_run, standard_specs

from pytest_enconda.agents.base import Step
from pytest_enconda.cli import main
from pytest_enconda.report.compare import CompareError, compare_runs, render_markdown
from pytest_enconda.report.regrade import RegradeError, regrade
from pytest_enconda.report.tables import render_terminal


@pytest.fixture
def run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    build_run(run_dir, standard_specs())
    return run_dir


def test_report_shows_tables_plots_and_evidence(run: Path) -> None:
    page = (run / "report.html").read_text(encoding="utf-8")
    tables = html_tables(page)
    for ident in ("enconda-main", "enconda-types", "enconda-levels", "enconda-efficiency"):
        assert ident in tables, ident
    # Both definitions, labelled.
    assert [row[2] for row in tables["enconda-main"][1:]] == ["paper", "per-error"]
    # Four plots (no pyramid in a diagnosis run), each an SVG that matplotlib wrote.
    pytest.importorskip("matplotlib")
    assert page.count("<figure") == 4
    assert page.count("<dc:creator>") == 4 and page.count("Matplotlib v") == 4
    for title in ("F1 per error type", "Predicted vs golden", "Metrics by level", "Tokens vs"):
        assert title in page
    # One row per item, with sortable columns.
    results = tables["enconda-results"]
    assert results[0][:7] == [
        "Case",
        "Item",
        "Outcome",
        "Error types",
        "Level",
        "Agent",
        "Duration (s)",
    ]
    assert len(results) == 1 + 12
    beta = next(r for r in results if r[0] == "beta-e1-e7" and r[1] == "error_types")
    assert beta[2] == "failed" and beta[3] == "E1 E7" and beta[4] == "2" and beta[5] == "scripted"
    # Evidence: diagnosis beside the golden one, the judge's reason, the replayed step, the
    # trajectory, links relative to the report.
    assert "the package needs numpy, which the README omits" in page
    assert "wrong command name" in page
    assert "no E7 prediction left to match it" in page
    assert "replayed setup step" in page and "exit 2" in page
    assert "trajectory: 2 steps" in page and "look around" in page
    assert 'href="cases/alpha-e4/agent/setup.sh"' in page
    assert (run / "cases" / "alpha-e4" / "agent" / "setup.sh").is_file()


def test_numbers_agree_across_outputs(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    terminal = render_terminal(summary, console_width=120)
    checked = assert_numbers_agree(run, terminal)
    assert checked["pass_at_1"] == pytest.approx(1 / 3)
    assert checked["agent"] == "scripted" and checked["judge_name"] == "offline"
    assert checked["harness_version"]
    assert len(checked["case_set"]["sha256"]) == 64 and checked["case_set"]["items"] == 12
    assert checked["efficiency"]["tokens"] == {"mean": pytest.approx(4600 / 3), "cases": 3}


def test_a_50_mb_log_does_not_make_a_50_mb_page(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    huge_output = "x" * (20 << 20) + "\nTHE LAST LINE OF THE STEP\n"
    specs = standard_specs()
    specs[0].steps.append(Step(command="pip install everything", output=huge_output, exit_code=1))
    build_run(run_dir, specs)
    log = run_dir / "cases" / "alpha-e4" / "agent" / "agent.log"
    with log.open("w", encoding="utf-8") as handle:
        line = "pip: downloading a very long log line " + "y" * 60 + "\n"
        while handle.tell() < 50 << 20:
            handle.write(line * 1000)
        handle.write("THE LAST LINE OF THE AGENT LOG\n")
    assert log.stat().st_size > 50 << 20
    shutil.copy(log, run_dir / "cases" / "beta-e1-e7" / "execution" / "setup.log")

    started = time.monotonic()
    out, _summary, _kept = regrade(run_dir, out=tmp_path / "again")
    elapsed = time.monotonic() - started
    page = (out / "report.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 2 << 20, len(page)
    assert "THE LAST LINE OF THE AGENT LOG" in page and "THE LAST LINE OF THE STEP" in page
    assert 'href="cases/alpha-e4/agent/agent.log">full file</a>' in page
    assert "of 52,4" in page or "bytes" in page
    assert elapsed < 60, elapsed


def test_results_csv_has_one_row_per_item(run: Path) -> None:
    with (run / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12
    assert {(r["case"], r["item"]) for r in rows} == {
        (c, i)
        for c in ("alpha-e4", "beta-e1-e7", "gamma-e6")
        for i in ("execution", "error_types", "descriptions", "fixes")
    }
    gamma = next(r for r in rows if r["case"] == "gamma-e6" and r["item"] == "execution")
    # The whole message, its line breaks written \n (issue 48: not its last line alone).
    assert gamma["outcome"] == "failed" and gamma["message"] == (
        "setup step exited with 2: bash -eo pipefail /tmp/enconda/setup.sh\\n--- last output of "
        "setup (execution/setup.log) ---\\nsetup output\\nexit 2"
    )
    assert gamma["golden_types"] == "E6" and gamma["predicted_types"] == ""


def _other_run(tmp_path: Path, name: str, specs: list[CaseSpec]) -> Path:
    run_dir = tmp_path / name
    run_dir.mkdir()
    build_run(run_dir, specs, agent=name)
    return run_dir


def test_compare_shows_the_items_that_differ(run: Path, tmp_path: Path) -> None:
    specs = standard_specs()
    specs[1].predicted = list(specs[1].golden)  # beta now diagnosed right
    better = _other_run(tmp_path, "better", specs)
    runs = compare_runs([run, better])
    text = render_markdown(runs)
    assert "| #1 | offline | 3 | scripted | - | paper | 50.0 | 25.0 | 33.3 |" in text
    assert "| #2 | offline | 3 | better | - | paper | 100.0 | 75.0 | 85.7 |" in text
    differing = text.split("Items whose outcome differs (", 1)[1]
    assert differing.startswith("1)") or differing.startswith("3)")
    assert "| beta-e1-e7 | error_types | failed | passed |" in differing
    assert "alpha-e4" not in differing


def test_compare_refuses_different_case_sets_unless_asked(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fewer = _other_run(tmp_path, "fewer", standard_specs()[:2])
    with pytest.raises(CompareError, match=r"4 items only in .*run: gamma-e6::descriptions"):
        compare_runs([run, fewer])
    assert main(["compare", str(run), str(fewer), "--out", str(tmp_path / "cmp")]) == 2
    assert "different case sets" in capsys.readouterr().err
    runs = compare_runs([run, fewer], intersection=True)
    assert [r.summary["cases"] for r in runs] == [2, 2]
    assert (
        main(["compare", str(run), str(fewer), "--intersection", "--out", str(tmp_path / "c")]) == 0
    )
    page = html_tables((tmp_path / "c" / "compare.html").read_text())
    assert [row[0] for row in page["compare-main"][1:]] == ["#1", "#1", "#2", "#2"]
    assert (tmp_path / "c" / "compare.md").is_file()


def test_regrade_recomputes_from_saved_outcomes(run: Path, tmp_path: Path) -> None:
    before = json.loads((run / "summary.json").read_text())
    out, summary, kept = regrade(run, out=tmp_path / "same")
    assert kept == []
    for key in ("paper", "per_error", "pass_at_1", "per_type", "items"):
        assert summary[key] == before[key], key
    # The agent's saved diagnosis is what is graded: a corrected one changes the grade, and the
    # original run keeps its own files (copied, not edited).
    outcome_path = run / "cases" / "beta-e1-e7" / "agent" / "outcome.json"
    outcome = json.loads(outcome_path.read_text())
    outcome["diagnosis"] = [
        {
            "error_type": "E1",
            "error_description": "numpy is missing",
            "fix_suggestion": "pip install numpy",
        },
        {
            "error_type": "E7",
            "error_description": "install before clone",
            "fix_suggestion": "clone first",
        },
    ]
    outcome_path.write_text(json.dumps(outcome))
    out, summary, _kept = regrade(run, out=tmp_path / "fixed")
    assert summary["items"]["error_types"] == {"passed": 2, "failed": 1}
    assert json.loads((run / "summary.json").read_text())["items"] == before["items"]
    assert json.loads((out / "run.json").read_text())["regraded_from"]["run_dir"] == str(run)
    for name in ("report.html", "tables.md", "results.csv", "summary.json"):
        assert (out / name).is_file()
    with pytest.raises(RegradeError, match="already exists"):
        regrade(run, out=out)
    with pytest.raises(RegradeError, match="expected llm:<model>"):
        regrade(run, judge="llm", out=tmp_path / "bad")


def test_regrade_cli(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regrade", str(run), "--out", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out
    assert "| scripted | - | paper | 50.0 | 25.0 | 33.3 | 33.3 | 33.3 | 33.3 |" in printed
    assert f"regraded run: {tmp_path / 'cli'}" in printed


def test_the_console_check_sees_errors(tmp_path: Path) -> None:
    exe = browser.chromium()
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>"
    )
    _dom, messages = browser.console_messages(exe, page)
    assert any("undefinedFunction is not defined" in m for m in messages), messages


def test_report_in_a_headless_browser(run: Path, tmp_path: Path) -> None:
    exe = browser.chromium()
    page = run / "report.html"
    _dom, messages = browser.console_messages(exe, page)
    assert messages == []
    selectors = ["#enconda-summary", "#enconda-main", "#enconda-types", "#enconda-plots svg"]
    seen = browser.visibility(exe, page, [*selectors, "#enconda-results tr.item"], tmp_path)
    for selector in selectors:
        assert seen[selector]["visible"] >= 1, (selector, seen)
    assert seen["#enconda-plots svg"]["visible"] == 4
    assert seen["#enconda-results tr.item"]["visible"] == 12
    assert seen["#enconda-main"]["top"] < 600  # the main table is on the first screen
    shot = browser.screenshot(exe, page, run / "screenshot.png")
    assert browser.non_blank(shot) > 0.05


def test_pyramid_funnel_with_denominators_and_c5_kinds() -> None:
    from pytest_enconda.report.pyramid import pyramid_summary
    from pytest_enconda.report.review import summary_section

    rows = [
        {
            "case": "a",
            "stage": "C0",
            "outcome": "passed",
            "numbers": {"missing_count": 1, "total": 40},
        },
        {"case": "a", "stage": "C1", "outcome": "passed", "numbers": {"tokens": 900}},
        {"case": "a", "stage": "C2", "outcome": "skipped", "numbers": {}},
        {
            "case": "a",
            "stage": "C5",
            "outcome": "failed",
            "numbers": {"hallucinations": [{"kind": "version"}, {"kind": "path"}]},
        },
        {"case": "b", "stage": "C1", "outcome": "failed", "numbers": {}},
        {"case": "b", "stage": "C2", "outcome": "error", "numbers": {}},
        {"case": "b", "stage": "C5", "outcome": "failed", "numbers": {"report_outcome": "missing"}},
    ]
    summary = {
        "agent": "x",
        "items": {"C1": {"passed": 1, "failed": 1}},
        "pyramid": pyramid_summary(rows),
    }
    page = summary_section(summary, [{"case": "a", "headline": "passed", "tokens": 900}])
    tables = html_tables(page)
    funnel = {row[0]: row[1:] for row in tables["enconda-pyramid"][1:]}
    assert funnel["C0 imports missing"][0] == "1/40"
    # passed, failed, skipped, error, applicable (= passed + failed), rate
    assert funnel["C1 CPU"] == ["1", "1", "0", "0", "2", "50.0"]
    assert funnel["C2 CUDA"] == ["0", "0", "1", "1", "0", "-"]
    c5 = tables["enconda-c5"]
    assert c5[0][:4] == ["Audited", "path", "version", "capability"]
    assert c5[1] == ["1", "1", "1", "0", "2", "1", "1", "0"]
    pytest.importorskip("matplotlib")
    assert "Pyramid: C0 missing 1/40 imports, C5 2 hallucinations" in page


def test_offline_judge_runs_quote_its_agreement_on_the_hand_written_set(run: Path) -> None:
    from pytest_enconda.grading.judges.agreement import agreement_line, read_agreement
    from pytest_enconda.report.tables import render_markdown as tables_markdown

    figures = read_agreement()
    assert figures is not None and figures["pairs"] >= 300
    line = agreement_line(figures)
    assert line is not None
    assert line.startswith("offline (version 2, embedder ")
    assert "judge agreement on the hand-written test set (pairs.jsonl, never tuned on): " in line
    assert f"({figures['pairs']} pairs)" in line and "--judge llm:<model>" in line
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge_name"] == "offline" and summary["judge_agreement"] == figures
    assert line in (run / "summary.md").read_text(encoding="utf-8")
    assert line in (run / "tables.md").read_text(encoding="utf-8")
    assert "judge-agreement" in (run / "report.html").read_text(encoding="utf-8")
    assert line in render_terminal(summary, console_width=400)
    # Another judge's run has no such line: the figures are the offline judge's.
    del summary["judge_agreement"]
    assert "hand-written test set" not in tables_markdown(summary)
