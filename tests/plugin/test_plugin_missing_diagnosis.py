"""A case whose agent wrote no ``diagnosis.json`` (issue 48 items 4 and 8), through a whole run on
the fake backend with the ``command`` agent in its box:

- the summary reports the diagnosis coverage (cases with a readable diagnosis / cases run) in
  ``summary.json``, ``summary.md``, the terminal and ``report.html``;
- per-error counts each golden error of that case as missed; paper leaves the case out, as the
  official evaluator does with a prediction file it does not find;
- the command agent's cost is unknown (blank in ``results.csv``, ``null`` in the summary), never
  0.0; ``results.csv`` keeps a message's every line, on one line.
"""

from __future__ import annotations

import csv
import json

import pytest
from casefactory import golden_error, write_case
from fakeruns import fake_project

pytest_plugins = ["pytester"]

# "answered" writes a diagnosis that finds its E4 and a setup that works; "silent" writes only a
# setup script that prints two lines and fails.
COMMAND = (
    "if [ \"$ENCONDA_CASE_ID\" = answered ]; then printf 'touch ok\\n' > /enconda/output/setup.sh"
    ' && printf \'[{"error_type": "E4", "error_description": "d", "fix_suggestion": "f"}]\' >'
    " /enconda/output/diagnosis.json; else printf 'echo building\\necho Terminated\\nexit 3\\n'"
    " > /enconda/output/setup.sh; fi"
)


@pytest.mark.slow  # ~30 s: a whole run of two cases in subprocesses
def test_a_missing_diagnosis_is_counted_and_reported(pytester: pytest.Pytester) -> None:
    fake_project(pytester.path)
    write_case(pytester.path, "answered", errors=[golden_error("E4")])
    write_case(pytester.path, "silent", errors=[golden_error("E4"), golden_error("E7")])
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent", "command",
        "--agent-option", f"command={COMMAND}",
        "--agent-option", "in_container=true",
        "--run-dir", str(run),
    )  # fmt: skip
    summary = json.loads((run / "summary.json").read_text())
    assert summary["diagnosis_coverage"] == {
        "cases": 2,
        "diagnosed": 1,
        "missing": 1,
        "ungraded": 0,
        "rate": 0.5,
    }
    # Before: the silent case was left out of both definitions, so nothing was missed.
    per_error, paper = summary["per_error"], summary["paper"]
    assert (per_error["type_tp"], per_error["type_fp"], per_error["type_fn"]) == (1, 0, 2)
    assert per_error["golden_errors"] == 3 and per_error["type_recall"] == pytest.approx(1 / 3)
    assert (paper["type_tp"], paper["type_fp"], paper["type_fn"]) == (1, 0, 0)
    assert paper["instances_with_errors"] == 1
    assert summary["per_type"]["E7"]["fn"] == 1 and summary["per_type"]["E7"]["paper"]["fn"] == 0
    note = "diagnosis coverage: 1 of 2 cases with a readable diagnosis.json (50.0 %)"
    assert note in (run / "summary.md").read_text()
    assert note in (run / "report.html").read_text()
    result.stdout.fnmatch_lines([f"*{note}*"])

    # The command agent's model calls are its own: its cost is unknown, never 0.0.
    assert summary["agent_usage"]["cost_usd"] is None
    assert summary["agent_usage"]["cases_with_unknown_cost"] == 2
    assert summary["efficiency"]["cost_usd"] == {"mean": None, "cases": 0}
    outcome = json.loads((run / "cases" / "silent" / "agent" / "outcome.json").read_text())
    assert outcome["usage"]["cost_unknown"] is True
    rows = {(r["case"], r["item"]): r for r in csv.DictReader((run / "results.csv").open())}
    assert {row["cost_usd"] for row in rows.values()} == {""}
    # The whole message, every line of it, on one line of the file (before: "Terminated" alone).
    message = rows[("silent", "execution")]["message"]
    assert "::execution: setup step exited with 3: " in message and "\n" not in message, message
    assert message.endswith("building\\nTerminated"), message
    jsonl = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    full = next(r for r in jsonl if (r["case"], r["item"]) == ("silent", "execution"))
    assert message == "\\n".join(line.rstrip() for line in full["message"].strip().splitlines())
