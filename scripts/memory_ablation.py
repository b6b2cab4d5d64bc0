"""Memory ablation: the same cases without and with a memory file, side by side.

    python scripts/memory_ablation.py RUN_WITHOUT RUN_WITH [--json OUT]
        [--also-without RUN_DIR ...] [--also-with RUN_DIR ...]

Run the second with ``--agent-option memory=FILE`` where FILE was built from runs that include
the case's own repository: the leakage guard withholds that repository's triples, so one run
is a leave-one-repository-out evaluation. Figures per task kind, read from each case's records
(a run may hold diagnosis and AEC cases together):

- diagnosis: Pass@1 (the ``execution`` item passed, of the cases where it passed or failed) and
  the paper's type F1 (type sets per case, TP/FP/FN summed, from ``grading/diagnosis.json``);
- AEC: success rate (``aec_success`` passed, of the AEC cases), and tests run (``aec_tests_run``).

Per case: whether memory was retrieved (triples given), used (an action tried), helped (the
action made the failing step pass), and the items whose outcome changed (a pass lost with memory
counts as hurt, a pass won as improved).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_enconda.records import RunDir


def outcomes(run: RunDir) -> dict[tuple[str, str], str]:
    read = run.results_file.read()
    return {key: row.outcome for key, row in read.rows.items()}


def side(runs: list[RunDir]) -> tuple[dict[str, RunDir], dict[tuple[str, str], str]]:
    """Each case's run and the item outcomes of one side: a case in a later run directory
    (a rerun, or a case added) replaces all of its items from the earlier ones."""
    where: dict[str, RunDir] = {}
    found: dict[tuple[str, str], str] = {}
    for run in runs:
        rows = outcomes(run)
        cases = {case for case, _ in rows}
        found = {key: o for key, o in found.items() if key[0] not in cases} | rows
        where |= dict.fromkeys(cases, run)
    return where, found


def kind_of(items: set[str]) -> str:
    return "aec" if any(item.startswith("aec_") for item in items) else "diagnosis"


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def figures(
    runs: dict[str, RunDir], found: dict[tuple[str, str], str], cases: list[str]
) -> dict[str, Any]:
    """One side's figures over ``cases`` of one kind (``runs``: each case's run directory)."""
    executed = passed = tp = fp = fn = aec = success = tests_run = 0
    for case in cases:
        items = {i: o for (c, i), o in found.items() if c == case}
        if "execution" in items and items["execution"] in ("passed", "failed"):
            executed += 1
            passed += items["execution"] == "passed"
        grade_path = runs[case].case(case).diagnosis
        if grade_path.is_file():
            paper = json.loads(grade_path.read_text())["paper"]
            tp, fp, fn = tp + paper["tp"], fp + paper["fp"], fn + paper["fn"]
        if "aec_success" in items:
            aec += 1
            success += items["aec_success"] == "passed"
            tests_run += items.get("aec_tests_run") == "passed"
    out: dict[str, Any] = {"cases": len(cases)}
    if executed:
        out["pass@1"] = _ratio(passed, executed)
        out["executed"] = executed
    if tp + fp + fn:
        precision, recall = _ratio(tp, tp + fp) or 0.0, _ratio(tp, tp + fn) or 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out["type_f1"] = round(f1, 4)
        out["type_counts"] = {"tp": tp, "fp": fp, "fn": fn}
    if aec:
        out["aec_success"] = _ratio(success, aec)
        out["aec_tests_run"] = _ratio(tests_run, aec)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("without")
    parser.add_argument("with_memory")
    for name in ("without", "with"):
        parser.add_argument(
            f"--also-{name}",
            action="append",
            default=[],
            metavar="RUN_DIR",
            help=f"a later run directory {name} memory whose cases are added, or replace the "
            "same cases' results (a rerun); repeatable",
        )
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    without, before = side([RunDir(Path(p)) for p in [args.without, *args.also_without]])
    with_memory, after = side([RunDir(Path(p)) for p in [args.with_memory, *args.also_with]])
    by_kind: dict[str, list[str]] = {}
    for case in sorted({c for c, _ in after} & {c for c, _ in before}):
        kind = kind_of({i for c, i in after if c == case})
        by_kind.setdefault(kind, []).append(case)
    result: dict[str, Any] = {}
    for kind, cases in by_kind.items():
        counts = {"cases": 0, "retrieved": 0, "used": 0, "helped": 0, "hurt": 0, "improved": 0}
        changes, per_case = [], {}
        for case in cases:
            counts["cases"] += 1
            record_path = with_memory[case].case(case).agent_dir / "memory.json"
            record = json.loads(record_path.read_text()) if record_path.is_file() else {}
            flags = {name: bool(record.get(name)) for name in ("given", "used", "helped")}
            counts["retrieved"] += flags["given"]
            counts["used"] += flags["used"]
            counts["helped"] += flags["helped"]
            lost = [i for (c, i), o in after.items() if c == case and before.get((c, i)) == "passed"
                    and o != "passed"]  # fmt: skip
            won = [i for (c, i), o in after.items() if c == case and o == "passed"
                   and before.get((c, i)) not in (None, "passed")]  # fmt: skip
            counts["hurt"] += bool(lost)
            counts["improved"] += bool(won)
            per_case[case] = {**flags, "excluded": record.get("excluded", [])}
            if lost or won:
                changes.append({"case": case, "lost": lost, "won": won})
        result[kind] = {
            "without": figures(without, before, cases),
            "with": figures(with_memory, after, cases),
            "counts": counts,
            "changes": changes,
            "per_case": per_case,
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
