"""scripts/memory_ablation.py: figures per task kind (diagnosis Pass@1 and type F1, AEC success
rate) and the retrieved/used/helped/hurt counts, read from two run directories' records."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "memory_ablation.py"


def write_run(root: Path, rows: list[tuple[str, str, str]], paper: dict, memory: dict) -> Path:
    root.mkdir(parents=True)
    lines = [json.dumps({"case": c, "item": i, "outcome": o}) for c, i, o in rows]
    (root / "results.jsonl").write_text("\n".join(lines) + "\n")
    for case, counts in paper.items():
        (root / "cases" / case / "grading").mkdir(parents=True, exist_ok=True)
        (root / "cases" / case / "grading" / "diagnosis.json").write_text(
            json.dumps({"paper": counts})
        )
    for case, record in memory.items():
        (root / "cases" / case / "agent").mkdir(parents=True, exist_ok=True)
        (root / "cases" / case / "agent" / "memory.json").write_text(json.dumps(record))
    return root


def test_figures_per_kind_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paper_without = {"a-e1": {"tp": 1, "fp": 1, "fn": 0}, "b-e2": {"tp": 0, "fp": 0, "fn": 1}}
    paper_with = {"a-e1": {"tp": 1, "fp": 0, "fn": 0}, "b-e2": {"tp": 0, "fp": 0, "fn": 1}}
    without = write_run(
        tmp_path / "without",
        [("a-e1", "execution", "passed"), ("a-e1", "diagnosis", "failed"),
         ("b-e2", "execution", "failed"),
         ("aec-x", "aec_tests_run", "passed"), ("aec-x", "aec_success", "passed"),
         ("aec-y", "aec_tests_run", "failed"), ("aec-y", "aec_success", "failed")],
        paper_without, {},
    )  # fmt: skip
    with_memory = write_run(
        tmp_path / "with",
        [("a-e1", "execution", "passed"), ("a-e1", "diagnosis", "passed"),
         ("b-e2", "execution", "passed"),
         ("aec-x", "aec_tests_run", "failed"), ("aec-x", "aec_success", "failed"),
         ("aec-y", "aec_tests_run", "failed"), ("aec-y", "aec_success", "failed")],
        paper_with,
        {"b-e2": {"given": [3], "used": [3], "helped": [3], "excluded": ["b"]},
         "aec-x": {"given": [{"id": 1}], "used": [1], "helped": []},
         "aec-y": {"given": [], "used": [], "helped": []}},
    )  # fmt: skip
    out = tmp_path / "ablation.json"
    monkeypatch.setattr(sys, "argv", ["x", str(without), str(with_memory), "--json", str(out)])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert stop.value.code == 0
    result = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == result
    diagnosis, aec = result["diagnosis"], result["aec"]
    assert diagnosis["without"]["pass@1"] == 0.5 and diagnosis["with"]["pass@1"] == 1.0
    # tp 1, fp 1, fn 1: P = R = 0.5; then tp 1, fp 0, fn 1: P 1, R 0.5.
    assert diagnosis["without"]["type_f1"] == 0.5 and diagnosis["with"]["type_f1"] == 0.6667
    assert diagnosis["counts"] == {"cases": 2, "retrieved": 1, "used": 1, "helped": 1,
                                   "hurt": 0, "improved": 2}  # fmt: skip
    assert aec["without"]["aec_success"] == 0.5 and aec["with"]["aec_success"] == 0.0
    assert "type_f1" not in aec["with"] and "pass@1" not in aec["with"]
    assert aec["counts"] == {"cases": 2, "retrieved": 1, "used": 1, "helped": 0,
                             "hurt": 1, "improved": 0}  # fmt: skip
    assert aec["changes"] == [{"case": "aec-x", "lost": ["aec_tests_run", "aec_success"],
                               "won": []}]  # fmt: skip


def test_a_later_run_directory_replaces_a_case_and_adds_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case rerun (a broken mirror, say) in a second run directory replaces all its items and
    its grading on that side; a case only there is added."""
    paper = {"a": {"tp": 0, "fp": 1, "fn": 1}, "b": {"tp": 1, "fp": 0, "fn": 0}}
    first = write_run(
        tmp_path / "without",
        [("a", "execution", "failed"), ("a", "fixes", "passed"), ("b", "execution", "passed")],
        paper, {},
    )  # fmt: skip
    rerun = write_run(
        tmp_path / "without-rerun",
        [("a", "execution", "passed"), ("c", "execution", "passed")],
        {"a": {"tp": 1, "fp": 0, "fn": 0}, "c": {"tp": 1, "fp": 0, "fn": 1}}, {},
    )  # fmt: skip
    with_memory = write_run(
        tmp_path / "with",
        [("a", "execution", "passed"), ("b", "execution", "passed"), ("c", "execution", "failed"),
         ("a", "fixes", "passed")],
        {"a": {"tp": 1, "fp": 0, "fn": 0}, "b": {"tp": 1, "fp": 0, "fn": 0},
         "c": {"tp": 1, "fp": 0, "fn": 1}}, {},
    )  # fmt: skip
    out = tmp_path / "ablation.json"
    argv = ["x", str(first), str(with_memory), "--also-without", str(rerun), "--json", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit):
        runpy.run_path(str(SCRIPT), run_name="__main__")
    diagnosis = json.loads(out.read_text())["diagnosis"]
    # a's first-run failure and its `fixes` item are gone; c comes from the rerun only.
    assert diagnosis["without"]["pass@1"] == 1.0 and diagnosis["without"]["executed"] == 3
    assert diagnosis["without"]["type_counts"] == {"tp": 3, "fp": 0, "fn": 1}
    assert diagnosis["counts"]["cases"] == 3 and diagnosis["counts"]["hurt"] == 1
    assert diagnosis["changes"] == [{"case": "c", "lost": ["execution"], "won": []}]
