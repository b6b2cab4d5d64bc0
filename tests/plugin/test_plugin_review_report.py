"""The review report of real runs: two shipped cases with the oracle and the readme agents, run by
pytest in a subprocess (real Docker, real setup scripts), then read back: report.html, pytest-html's
``--html`` output, the exports, ``compare`` and ``regrade``, and a headless browser on the page."""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

import browser
from numbers_check import assert_numbers_agree, html_tables

from pytest_enconda.cli import main

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

ROOT = Path(__file__).resolve().parents[2]
# One repository, two levels: level 1 (E1) and level 3 (E2, E4, E8).
CASES = ("confmerge-e1", "confmerge-e2-e4-e8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Both agents over the same cases: {agent: (run directory, terminal output)}."""
    import subprocess

    root = tmp_path_factory.mktemp("review")
    bench = root / "bench"
    for case in CASES:
        shutil.copytree(ROOT / "benchmark_cases" / "diagnosis" / case, bench / "diagnosis" / case)
    shutil.copytree(ROOT / "benchmark_cases" / "repos" / "confmerge", bench / "repos" / "confmerge")
    out: dict[str, tuple[Path, str]] = {}
    for agent in ("oracle", "readme"):
        run_dir = root / f"run-{agent}"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "bench/diagnosis",
                "--allow-path",
                "bench/repos",
                f"--agent={agent}",
                "--run-dir",
                str(run_dir),
                "-n",
                "2",
                "-p",
                "no:cacheprovider",
                f"--html={root / f'pytest-html-{agent}.html'}",
                "--self-contained-html",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        assert (run_dir / "summary.json").is_file(), done.stdout[-3000:] + done.stderr[-3000:]
        out[agent] = (run_dir, done.stdout)
    return out


def test_report_of_a_real_run(runs: dict[str, tuple[Path, str]]) -> None:
    run_dir, _terminal = runs["oracle"]
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    tables = html_tables(page)
    assert [row[:3] for row in tables["enconda-main"][1:]] == [
        ["oracle", "-", "paper"],
        ["oracle", "-", "per-error"],
    ]
    assert {row[0] for row in tables["enconda-levels"][1:]} == {"1", "3"}
    items = tables["enconda-results"][1:]
    assert len(items) == 8 and {row[2] for row in items} == {"passed"}
    assert page.count("<figure") == 4
    # Evidence of a real case: its golden error beside the oracle's, the replayed steps' real
    # output, links to the files that exist.
    golden = json.loads((run_dir / "cases" / "confmerge-e1" / "case.json").read_text())
    assert golden["error_types"] == ["E1"]
    assert golden["golden"]["errors"][0]["error_description"][:40] in page.replace("&#x27;", "'")
    assert "replayed setup step" in page and "Successfully installed" in page
    # The oracle's replay is the golden measurement: its logs are kept under execution/golden/.
    assert 'href="cases/confmerge-e1/execution/golden/setup.log">full file</a>' in page
    assert (run_dir / "cases" / "confmerge-e1" / "execution" / "golden" / "setup.log").is_file()


def test_numbers_agree_in_every_output(runs: dict[str, tuple[Path, str]]) -> None:
    for agent, (run_dir, terminal) in runs.items():
        summary = assert_numbers_agree(run_dir, terminal)
        assert summary["agent"] == agent and summary["judge_name"] == "offline"
        assert summary["model"] is None and summary["harness_version"]
    hashes = {
        json.loads((d / "summary.json").read_text())["case_set"]["sha256"]
        for d, _t in runs.values()
    }
    assert len(hashes) == 1  # the same case set


def test_pytest_html_output_is_enriched(runs: dict[str, tuple[Path, str]]) -> None:
    run_dir, _terminal = runs["readme"]
    page = (run_dir.parent / "pytest-html-readme.html").read_text(encoding="utf-8")
    # pytest-html escapes its table rows into a JSON blob; the summary is plain HTML.
    assert 'id="enconda-summary"' in page and 'id="enconda-main"' in page
    for header in ("Case", "Aspect", "Error types", "Level", "Agent"):
        assert f">{header}</th>" in page
    assert "col-case" in page and "confmerge-e2-e4-e8" in page
    # The row's cells sit HTML-escaped in pytest-html's JSON blob.
    assert re.search(r'col-types\\?">E2 E4 E8<', html.unescape(page))
    assert "replayed setup step" in page  # the per-row evidence


def test_compare_oracle_and_readme(
    runs: dict[str, tuple[Path, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle, readme = runs["oracle"][0], runs["readme"][0]
    assert main(["compare", str(oracle), str(readme), "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    main_rows = [line for line in text.splitlines() if line.startswith("| #")]
    oracle_paper = next(r for r in main_rows if "| oracle |" in r and "| paper |" in r)
    readme_paper = next(r for r in main_rows if "| readme |" in r and "| paper |" in r)
    assert oracle_paper.endswith("| 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |")
    # readme follows the erroneous README: setup breaks (Pass@1 0) and it diagnoses nothing.
    assert readme_paper.endswith("| 0.0 |")
    cells = [c.strip() for c in readme_paper.strip("|").split("|")]
    assert cells[-3:-1] == ["0.0", "0.0"]  # description and fix accuracy
    differing = text.split("Items whose outcome differs (", 1)[1]
    for case in CASES:
        assert f"| {case} | execution | passed | failed |" in differing
        assert f"| {case} | error_types | passed | failed |" in differing
    page = html_tables((tmp_path / "compare.html").read_text())
    assert len(page["compare-differences"]) == 1 + 8


def test_regrade_gives_the_same_numbers(runs: dict[str, tuple[Path, str]], tmp_path: Path) -> None:
    run_dir, _terminal = runs["readme"]
    before = json.loads((run_dir / "summary.json").read_text())
    assert main(["regrade", str(run_dir), "--out", str(tmp_path / "again")]) == 0
    after = json.loads((tmp_path / "again" / "summary.json").read_text())
    for key in ("paper", "per_error", "pass_at_1", "per_type", "items", "case_set"):
        assert after[key] == before[key], key


def test_report_in_a_headless_browser(runs: dict[str, tuple[Path, str]], tmp_path: Path) -> None:
    exe = browser.chromium()
    run_dir, _terminal = runs["oracle"]
    page = run_dir / "report.html"
    _dom, messages = browser.console_messages(exe, page)
    assert messages == []
    selectors = ["#enconda-main", "#enconda-types", "#enconda-levels", "#enconda-plots svg"]
    seen = browser.visibility(exe, page, selectors, tmp_path)
    for selector in selectors:
        assert seen[selector]["visible"] >= 1, (selector, seen)
    assert seen["#enconda-plots svg"]["visible"] == 4
    shot = browser.screenshot(exe, page, run_dir / "screenshot.png")
    assert browser.non_blank(shot) > 0.05
