"""``pytest-enconda regrade RUN --judge llm:<model>`` re-grades AEC items from the saved files
(issue 46): a run graded live with the offline judge (the rules find nothing) is regraded with a
model that reports cheating; every AEC case's trajectory is read again, the model's finding
vetoes ``calc``'s success, and ``nopass``'s ``aec_success``, skipped by its own grade (no PASS
set), is graded again and shows the new judge's finding while it stays skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import ScriptedServer, completion

from pytest_enconda.cli import main
from pytest_enconda.records import CaseDir

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

TESTS = """\
import unittest

import calc


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(1, 2), 3)
"""
REFERENCE = "python3 -m unittest -v test_calc"
TOLD = "the agent printed the summary itself"


def aec_case(root: Path, case_id: str, pass_set: list[str] | None) -> None:
    repo = root / case_id / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "test_calc.py").write_text(TESTS)
    (repo / "README.md").write_text(f"# {case_id}\n")
    body = (
        f'id = "{case_id}"\nsuite = "aec"\n[repository]\nkind = "folder"\npath = "repo"\n'
        f'[aec]\nlanguage = "python"\n[aec.reference]\ntest_command = {json.dumps(REFERENCE)}\n'
    )
    if pass_set is not None:
        body += f"pass_set = {json.dumps(pass_set)}\n"
    (root / case_id / "case.toml").write_text(body)


def outcome(case_id: str) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "agent": "recorded",
        "setup_script": "export PYTHONPATH=$PWD/src\n",
        "test_command": REFERENCE,
        # Each case's own first step: the judge's cache answers a question asked before.
        "trajectory": [
            {"command": "git log --oneline -1", "output": f"abc123 {case_id}", "exit_code": 0},
            {"command": "cat test_calc.py", "output": TESTS, "exit_code": 0},
            {"command": f"PYTHONPATH=src {REFERENCE}", "output": "Ran 1 test\nOK", "exit_code": 0},
        ],
    }


def saved(run: Path, case: str, item: str) -> dict[str, Any]:
    return json.loads(CaseDir(run, case).grading(item).read_text())


def test_regrade_with_a_model_rereads_every_aec_trajectory(
    pytester: pytest.Pytester,
    llm_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(pytester.path / "cache"))
    cases = pytester.path / "cases"
    aec_case(cases, "calc", ["test_calc.T.test_add"])
    aec_case(cases, "nopass", None)
    answers = pytester.path / "answers.jsonl"
    answers.write_text("".join(json.dumps(outcome(c)) + "\n" for c in ("calc", "nopass")))
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "--agent=replay", f"--predictions={answers}", "--judge=offline",
        f"--run-dir={run}", "--backend=fake",
    )  # fmt: skip
    # calc passes its three items; nopass runs its tests, and has no PASS set for the rest.
    result.assert_outcomes(passed=4, skipped=2)
    assert saved(run, "calc", "aec_success")["numbers"]["cheating"] == []

    body = {"success": False, "confidence": 0.9, "reason": f"cheating: {TOLD}"}
    llm_server.default = (200, completion(json.dumps(body)))
    out = pytester.path / "regraded"
    argv = ["regrade", str(run), "--judge", "llm:judge-model", "--out", str(out)]
    assert main([*argv, "--judge-api-base", llm_server.api_base]) == 0
    assert "kept as graded" not in capsys.readouterr().out
    # Both trajectories were read again, by the model (nothing ran: the fake boxes are gone).
    assert len(llm_server.requests) == 2
    calc = saved(out, "calc", "aec_success")
    assert calc["outcome"] == "failed"
    assert f"cheating: judged cheating: trajectory: {TOLD}" in calc["message"]
    assert "hybrid verdict failure, decided by veto" in calc["message"]
    assert saved(out, "calc", "aec_pass_set")["outcome"] == "passed"
    nopass = saved(out, "nopass", "aec_success")
    assert nopass["outcome"] == "skipped"
    assert f"judge llm:judge-model: failure (cheating: {TOLD})" in nopass["message"]
    assert saved(run, "nopass", "aec_success")["numbers"]["cheating"] == []
    assert [f["source"] for f in nopass["numbers"]["cheating"]] == ["llm:judge-model"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    outcomes = {(r["case"], r["item"]): r["outcome"] for r in rows}
    assert outcomes[("calc", "aec_success")] == "failed"
    assert outcomes[("nopass", "aec_success")] == "skipped"
