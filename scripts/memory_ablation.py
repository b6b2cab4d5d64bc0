"""Memory ablation: the same cases without and with a memory file, side by side.

    python scripts/memory_ablation.py RUN_WITHOUT RUN_WITH

Run the second with ``--agent-option memory=FILE`` where FILE was built from runs that include
the case's own repository: the leakage guard withholds that repository's triples, so one run
is a leave-one-repository-out evaluation. Prints Pass@1 and type F1 of each run, and per case
whether memory was retrieved, used, helped (its action made the failing command pass), and
the items whose outcome changed (a pass lost with memory counts as hurt).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytest_enconda.records import RunDir


def outcomes(run: RunDir) -> dict[tuple[str, str], str]:
    read = run.results_file.read()
    return {key: row["outcome"] for key, row in read.rows.items()}


def main() -> int:
    without, with_memory = RunDir(Path(sys.argv[1])), RunDir(Path(sys.argv[2]))
    table = {}
    for name, run in (("without", without), ("with", with_memory)):
        summary = json.loads(run.summary_json.read_text())
        table[name] = {"pass@1": summary["pass_at_1"], "type_f1": summary["paper"]["type_f1"]}
    before, after = outcomes(without), outcomes(with_memory)
    counts = {"cases": 0, "retrieved": 0, "used": 0, "helped": 0, "hurt": 0, "improved": 0}
    changes = []
    for case in sorted({c for c, _ in after}):
        counts["cases"] += 1
        record_path = with_memory.case(case).agent_dir / "memory.json"
        record = json.loads(record_path.read_text()) if record_path.is_file() else {}
        counts["retrieved"] += bool(record.get("given"))
        counts["used"] += bool(record.get("used"))
        counts["helped"] += bool(record.get("helped"))
        lost = [i for (c, i), o in after.items() if c == case and before.get((c, i)) == "passed"
                and o != "passed"]  # fmt: skip
        won = [i for (c, i), o in after.items() if c == case and o == "passed"
               and before.get((c, i)) not in (None, "passed")]  # fmt: skip
        counts["hurt"] += bool(lost)
        counts["improved"] += bool(won)
        if lost or won:
            changes.append({"case": case, "lost": lost, "won": won})
    print(json.dumps({"runs": table, "counts": counts, "changes": changes}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
