"""Metrics on the audit's verified subset beside the full set: ``summary.json``, ``summary.md``
and the terminal, with the subset found beside the dataset or given by ``--subset``.

No Docker: only the diagnosis items run, with recorded predictions (``--agent=replay``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_enconda.cli import main

pytest_plugins = ["pytester"]

REVISION = "0123456789abcdef0123456789abcdef01234567"


def error(error_type: str, package: str) -> dict[str, object]:
    return {
        "error_type": error_type,
        "error_description": f"the package {package} does not exist",
        "correction_candidates": ["pip install good"],
        "golden_answer": "pip install good",
    }


# instance -> (README, golden errors, predicted types)
INSTANCES = {
    "1": ("```bash\npip install bad-one\n```\n", [error("E1", "bad-one")], ["E1"]),
    "2": ("```bash\npip install bad-two\n```\n", [error("E1", "bad-two")], ["E2"]),
    # No golden errors: the audit flags it, so it is outside the verified subset.
    "3": ("```bash\npip install good\n```\n", [], ["E4"]),
}


def make_dataset(root: Path) -> Path:
    root.mkdir(parents=True)
    line = json.dumps({"repository": "o/r", "revision": REVISION})
    (root / "repo_info.jsonl").write_text(line + "\n")
    for name, (readme, errors, _predicted) in INSTANCES.items():
        folder = root / "instances" / "error_gen_o_r" / f"o_r_error_readme_{name}"
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(readme)
        golden = {"level": f"level{len(errors)}", "errors": errors}
        (folder / "README.json").write_text(json.dumps(golden))
    return root


def write_predictions(folder: Path) -> Path:
    for name, (_readme, _errors, predicted) in INSTANCES.items():
        instance = f"o_r_error_readme_{name}"
        result = folder / "results" / f"o_r_{instance}"
        result.mkdir(parents=True)
        errors = [
            {"error_type": t, "error_description": "x", "fix_answer": "pip install good"}
            for t in predicted
        ]
        (result / f"{instance}_errors.json").write_text(json.dumps({"errors": errors}))
        (result / f"{instance}_setup.sh").write_text("pip install good\n")
    return folder


def run(pytester: pytest.Pytester, *extra: str, name: str = "run") -> tuple[pytest.RunResult, dict]:
    out = pytester.path / name
    result = pytester.runpytest(
        "--cases",
        "DATA",
        "--agent=replay",
        "--predictions",
        str(pytester.path / "PREDS"),
        "-k",
        "error_types",
        "--run-dir",
        str(out),
        *extra,
    )
    return result, json.loads((out / "summary.json").read_text())


def test_the_audit_subset_beside_the_dataset_is_reported_beside_the_full_set(
    pytester: pytest.Pytester,
) -> None:
    data = make_dataset(pytester.path / "DATA")
    write_predictions(pytester.path / "PREDS")
    assert main(["audit", str(data)]) == 0
    subset_file = data / "enconda-audit" / "verified-subset.txt"
    assert subset_file.read_text().splitlines()[1:] == ["o/r/error_readme_1", "o/r/error_readme_2"]

    result, summary = run(pytester)
    result.assert_outcomes(passed=1, failed=2, deselected=9)
    # Full set: TP 1 (E1), FP 2 (E2, E4), FN 1 (E1 of instance 2).
    assert (summary["paper"]["type_tp"], summary["paper"]["type_fp"]) == (1, 2)
    assert summary["paper"]["type_f1"] == pytest.approx(2 / 5)
    verified = summary["subsets"]["verified"]
    assert verified["file"] == str(subset_file)
    assert (verified["ids"], verified["cases_in_run"], verified["cases_outside_subset"]) == (
        2,
        2,
        1,
    )
    # Subset: the no-error instance's false positive is gone.
    assert (verified["paper"]["type_tp"], verified["paper"]["type_fp"]) == (1, 1)
    assert verified["paper"]["type_f1"] == pytest.approx(1 / 2)
    assert verified["cases"] == 2 and summary["cases"] == 3
    result.stdout.fnmatch_lines(
        [
            "Full set and verified subset (2 of the run's cases are in the 2 ids of *",
            "cases * 3 * 2",
            "type F1 (paper) * 40.0 * 50.0",
        ]
    )
    markdown = (pytester.path / "run" / "summary.md").read_text()
    assert "| type F1 (paper) | 40.0 | 50.0 |" in markdown


def test_an_explicit_subset_wins_and_a_bad_one_is_reported(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    write_predictions(pytester.path / "PREDS")
    (pytester.path / "one.txt").write_text("# hand-picked\no/r/error_readme_1\n")
    _result, summary = run(pytester, "--subset", "one.txt")
    verified = summary["subsets"]["verified"]
    assert (verified["cases"], verified["paper"]["type_f1"]) == (1, 1.0)

    (pytester.path / "bad.json").write_text("{not json")
    result, summary = run(pytester, "--subset", "bad.json", name="run2")
    assert "not valid JSON" in summary["subsets"]["verified"]["error"]
    result.stdout.fnmatch_lines(["verified subset not used: *bad.json: not valid JSON*"])


def test_without_a_subset_the_summary_has_none(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path / "DATA")
    write_predictions(pytester.path / "PREDS")
    result, summary = run(pytester)
    assert "subsets" not in summary
    assert "verified subset" not in result.stdout.str()


# What a regrade writes differently by design: where the run lives and where it came from.
REGRADE_CHANGES = {"run_dir", "regraded_from"}


@pytest.mark.parametrize("recorded", [True, False], ids=["run-json", "summary-only"])
def test_regrade_with_the_same_judge_reproduces_the_summary(
    pytester: pytest.Pytester, recorded: bool
) -> None:
    make_dataset(pytester.path / "DATA")
    write_predictions(pytester.path / "PREDS")
    (pytester.path / "one.txt").write_text("# hand-picked\no/r/error_readme_1\n")
    result, before = run(pytester, "--subset", "one.txt", "-k", "error_types or fixes")
    # The no-error instance's fixes item is skipped: nothing to fix.
    result.assert_outcomes(passed=2, failed=3, skipped=1, deselected=6)
    assert before["subsets"]["verified"]["cases"] == 1
    run_dir = pytester.path / "run"
    info = json.loads((run_dir / "run.json").read_text())
    assert info["subset"] == before["subsets"]["verified"]["file"] == str(pytester.path / "one.txt")
    if not recorded:
        # A run from before run.json recorded its subset: the summary's block names it.
        del info["subset"]
        (run_dir / "run.json").write_text(json.dumps(info))

    out = pytester.path / "again"
    assert main(["regrade", str(run_dir), "--judge", "offline", "--out", str(out)]) == 0

    after = json.loads((out / "summary.json").read_text())
    assert after["regraded_from"] == str(run_dir.resolve())
    assert after["run_dir"] == str(out)
    assert set(after) == set(before) | {"regraded_from"}
    kept = {key: value for key, value in before.items() if key not in REGRADE_CHANGES}
    assert {key: value for key, value in after.items() if key not in REGRADE_CHANGES} == kept
    assert (out / "summary.md").read_text() == (run_dir / "summary.md").read_text()
    assert (out / "results.jsonl").read_text() == (run_dir / "results.jsonl").read_text()
