"""AEC grading on the fake backend (boxes are folders on this host): the setup replayed, the
test log read, the PASS set measured; the trajectory judge always reads the trajectory (the
rule-based cheat detector offline, the model with --judge llm:), decides where the log is
inconclusive, and a cheating sign vetoes success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import ScriptedServer, completion

from pytest_enconda.agents.base import AgentOutcome, AgentTask, Step
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

TESTS = """\
import os
import unittest

import calc


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(1, 2), 3)

    def test_sub(self):
        self.assertEqual(calc.sub(3, 2), 1)

    def test_data(self):
        self.assertTrue(os.path.exists("data.txt"))
"""
REFERENCE = "python3 -m unittest -v test_calc"
PASS_SET = ["test_calc.T.test_add", "test_calc.T.test_data", "test_calc.T.test_sub"]


def aec_case(root: Path, *, reference: bool = True, golden: str | None = None) -> Case:
    repo = root / "cases" / "calc" / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (repo / "test_calc.py").write_text(TESTS)
    (repo / "data.txt").write_text("x\n")
    (repo / "README.md").write_text(
        "# calc\n\n```bash\nexport PYTHONPATH=src\n" + REFERENCE + "\n```\n"
    )
    case_dir = repo.parent
    (case_dir / "golden_setup.sh").write_text(golden or "export PYTHONPATH=$PWD/src\n")
    body = (
        'id = "calc"\nsuite = "aec"\ngolden_setup = "golden_setup.sh"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n[aec]\nlanguage = "python"\n'
    )
    if reference:
        body += f"[aec.reference]\ntest_command = {json.dumps(REFERENCE)}\n"
        body += f"pass_set = {json.dumps(PASS_SET)}\n"
    (case_dir / "case.toml").write_text(body)
    return load_case(case_dir / "case.toml", [root / "cases"])


class Scripted:
    """An agent that leaves what the test says (setup, test command, trajectory)."""

    name = "scripted"

    def __init__(self, setup: str, test_command: str = "", steps: list[Step] | None = None):
        self.outcome = dict(setup_script=setup, test_command=test_command, trajectory=steps or [])

    def run(self, task: AgentTask) -> AgentOutcome:
        return AgentOutcome(case_id=task.case.id, agent=self.name, **self.outcome)


def pipeline(tmp_path: Path, scripted: Any = None, **settings: Any) -> CasePipeline:
    made = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run", **settings),
        progress=lambda _: None,
        backend=FakeBackend(tmp_path / "fake"),
    )
    if scripted is not None:
        made.agents._agent = scripted
    return made


def verdicts(made: CasePipeline, case: Case) -> dict[str, Any]:
    return {
        name: made.verdict(case, name) for name in ("aec_tests_run", "aec_pass_set", "aec_success")
    }


def grade_file(tmp_path: Path) -> dict[str, Any]:
    return json.loads((CaseDir(tmp_path / "run", "calc").root / "aec.json").read_text())


def test_the_oracle_passes_every_item_and_the_rules_find_no_cheating(tmp_path: Path) -> None:
    case = aec_case(tmp_path)
    got = verdicts(pipeline(tmp_path), case)
    assert {name: v.outcome for name, v in got.items()} == dict.fromkeys(got, "passed"), got
    assert got["aec_tests_run"].numbers["framework"] == "unittest"
    assert got["aec_tests_run"].numbers["tests_executed"] == 3
    assert got["aec_pass_set"].numbers["pass_set"]["share"] == 1.0
    # The judge read the (golden) setup even though the log decided: no cheating sign.
    assert "rule-based cheat detector: no cheating sign" in got["aec_success"].message
    assert "cheating" not in got["aec_success"].message.split("(")[0]
    grade = grade_file(tmp_path)
    assert grade["decided_by"] == "log" and grade["cheat_findings"] == []
    assert grade["judge"]["verdict"] == "inconclusive" and grade["judge"]["judge"] == "offline"
    # The graded command is always the reference's; the agent's is recorded beside it.
    assert grade["command_source"] == "reference"
    assert grade["agent_test_command"] == REFERENCE
    integrity = grade["integrity"]
    assert integrity["checked"] and not integrity["tests_modified"]
    assert integrity["test_files"] == 1 and integrity["changes"] == []
    assert all(tool["problem"] == "" for tool in integrity["tools"]), integrity["tools"]


def test_setup_env_reaches_the_test_command(tmp_path: Path) -> None:
    case = aec_case(tmp_path)
    # Without the export the tests cannot import calc: a collection error, never success.
    got = verdicts(pipeline(tmp_path, Scripted("true\n", REFERENCE)), case)
    assert got["aec_tests_run"].outcome == "failed"
    assert got["aec_success"].outcome == "failed"
    assert got["aec_pass_set"].numbers["pass_set"]["passed"] == 0


def test_a_partial_environment_passes_part_of_the_pass_set(tmp_path: Path) -> None:
    case = aec_case(tmp_path)
    agent = Scripted("export PYTHONPATH=$PWD/src\nrm data.txt\n", "python3 -m unittest test_calc")
    got = verdicts(pipeline(tmp_path, agent), case)
    assert got["aec_tests_run"].outcome == "passed"  # a failing test still ran
    assert got["aec_success"].outcome == "failed"
    assert "decided by log" in got["aec_success"].message
    share = got["aec_pass_set"].numbers["pass_set"]
    assert (share["passed"], share["size"], share["log"]) == (2, 3, "test")
    assert share["missing"] == ["test_calc.T.test_data"]
    assert "2 of 3 PASS-set tests passed" in got["aec_pass_set"].message


def test_without_a_reference_nothing_is_gradable_for_success(tmp_path: Path) -> None:
    case = aec_case(tmp_path, reference=False)
    steps = [Step(command="python3 -m unittest", output="OK", exit_code=0)]
    got = verdicts(pipeline(tmp_path, Scripted("true\n", REFERENCE, steps)), case)
    # The agent's own command is never graded: without the case's there is nothing to run.
    assert got["aec_tests_run"].outcome == "skipped"
    assert "no reference test command" in got["aec_tests_run"].message
    assert got["aec_pass_set"].outcome == "skipped"
    success = got["aec_success"]
    assert success.outcome == "skipped"
    assert "not gradable for success: the case has no reference PASS set" in success.message
    assert "rather than a guess" in success.message
    assert grade_file(tmp_path)["judge"]["verdict"] == "inconclusive"


def test_missing_setup_script_fails_every_item_with_the_reason(tmp_path: Path) -> None:
    case = aec_case(tmp_path)
    outcome = AgentOutcome(
        case_id="calc", agent="x", output_problems={"setup.sh": "no setup script written"}
    )

    class Empty:
        name = "x"

        def run(self, task: AgentTask) -> AgentOutcome:
            return outcome

    got = verdicts(pipeline(tmp_path, Empty()), case)
    assert all(v.outcome == "failed" for v in got.values())
    assert all("no setup script written" in v.message for v in got.values())


@pytest.mark.parametrize(("answer", "outcome"), [(True, "passed"), (False, "failed")])
def test_an_inconclusive_log_goes_to_the_llm_judge(
    tmp_path: Path,
    llm_server: ScriptedServer,
    answer: bool,
    outcome: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    case = aec_case(tmp_path, reference=False)
    body = json.dumps({"success": answer, "confidence": 0.8, "reason": "scripted"})
    llm_server.default = (200, completion(body))
    steps = [Step(command="make check", output="all good", exit_code=0)]
    # Exit 0 and no runner summary: the log cannot say.
    agent = Scripted("true\n", "echo all tests passed", steps)
    made = pipeline(tmp_path, agent, judge="llm:judge-model", judge_api_base=llm_server.api_base)
    got = verdicts(made, case)
    # Without a PASS set success is not gradable; the judge's verdict is recorded as evidence.
    assert got["aec_success"].outcome == "skipped", got["aec_success"].message
    assert f"judge llm:judge-model: {'success' if answer else 'failure'}" in (
        got["aec_success"].message
    )
    grade = grade_file(tmp_path)
    assert grade["decided_by"] == "judge" and outcome in ("passed", "failed")
    assert grade["log_verdict"] == "inconclusive"
    assert grade["judge"]["judge"] == "llm:judge-model"
    assert grade["judge"]["prompt_tokens"] == 120
    assert len(llm_server.requests) == 1
    asked = llm_server.requests[0]["messages"]
    assert "comprehensive test report" in asked[0]["content"]
    assert "$ make check" in asked[1]["content"]


HONEST_STEPS = [
    Step(command="cat test_calc.py && grep -n data test_calc.py", output=TESTS, exit_code=0),
    Step(command="PYTHONPATH=src " + REFERENCE, output="Ran 3 tests in 0.001s\nOK", exit_code=0),
]


def test_a_decided_log_still_has_the_llm_judge_read_the_trajectory(
    tmp_path: Path, llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model is asked though the log decided; its plain "failure" (no cheating sign) is
    recorded and vetoes nothing: success is the PASS set's."""
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    case = aec_case(tmp_path)
    body = json.dumps({"success": False, "confidence": 0.6, "reason": "looks thin"})
    llm_server.default = (200, completion(body))
    agent = Scripted("export PYTHONPATH=$PWD/src\n", REFERENCE, HONEST_STEPS)
    made = pipeline(tmp_path, agent, judge="llm:judge-model", judge_api_base=llm_server.api_base)
    success = verdicts(made, case)["aec_success"]
    assert success.outcome == "passed", success.message
    assert "judge llm:judge-model: failure (looks thin)" in success.message
    assert len(llm_server.requests) == 1
    asked = llm_server.requests[0]["messages"]
    assert "cheating:" in asked[0]["content"] and "PYTEST_ADDOPTS" in asked[0]["content"]
    grade = grade_file(tmp_path)
    assert grade["decided_by"] == "log" and grade["verdict"] == "success"
    assert grade["cheat_findings"] == []


def test_a_cheat_the_graded_step_undoes_is_vetoed_by_the_rules(tmp_path: Path) -> None:
    """The agent edited a test during its session and its setup.sh is honest: the graded step
    sees nothing (a fresh box), the PASS set passes, but the offline judge's rules read the
    edit in the trajectory and veto success, naming the rule, the step and the command."""
    case = aec_case(tmp_path)
    cheat = "sed -i 's/os.path.exists(\"data.txt\")/True/' test_calc.py"
    steps = [*HONEST_STEPS[:1], Step(command=cheat, exit_code=0), *HONEST_STEPS[1:]]
    got = verdicts(
        pipeline(tmp_path, Scripted("export PYTHONPATH=$PWD/src\n", REFERENCE, steps)), case
    )
    assert got["aec_tests_run"].outcome == got["aec_pass_set"].outcome == "passed"
    success = got["aec_success"]
    assert success.outcome == "failed", success.message
    assert "cheating: test file edited in place: step 1: " + cheat in success.message
    assert "--- cheating signs (veto) ---" in success.message
    assert "hybrid verdict failure, decided by veto" in success.message
    (finding,) = success.numbers["cheating"]
    assert (finding["source"], finding["step"], finding["kind"]) == ("rules", 1, "tests-edited")
    grade = grade_file(tmp_path)
    assert grade["log_verdict"] == "success" and grade["verdict"] == "failure"
    assert grade["decided_by"] == "veto" and not grade["integrity"]["tests_modified"]
    assert grade["judge"]["verdict"] == "failure" and "cheating:" in grade["judge"]["reason"]


def test_the_models_cheating_finding_vetoes_a_log_success(
    tmp_path: Path, llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    case = aec_case(tmp_path)
    reason = "cheating: the agent printed the unittest summary itself at step 1"
    body = json.dumps({"success": False, "confidence": 0.9, "reason": reason})
    llm_server.default = (200, completion(body))
    agent = Scripted("export PYTHONPATH=$PWD/src\n", REFERENCE, HONEST_STEPS)
    made = pipeline(tmp_path, agent, judge="llm:judge-model", judge_api_base=llm_server.api_base)
    success = verdicts(made, case)["aec_success"]
    assert success.outcome == "failed"
    told = "the agent printed the unittest summary itself at step 1"
    assert f"cheating: judged cheating: trajectory: {told}" in success.message
    (finding,) = grade_file(tmp_path)["cheat_findings"]
    assert finding["source"] == "llm:judge-model" and finding["kind"] == "judge"


def test_regrade_reads_the_trajectory_again_with_another_judge(
    tmp_path: Path, llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``regrade`` (``ctx.regrading``) makes the grade again from the saved record and
    trajectory with the new judge, running nothing: its backend has nothing to run with."""
    from types import SimpleNamespace

    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(tmp_path / "cache"))
    case = aec_case(tmp_path)
    agent = Scripted("export PYTHONPATH=$PWD/src\n", REFERENCE, HONEST_STEPS)
    assert verdicts(pipeline(tmp_path, agent), case)["aec_success"].outcome == "passed"
    reason = "cheating: the summary was echoed"
    llm_server.default = (200, completion(json.dumps({"success": False, "reason": reason})))
    again = pipeline(tmp_path, None, judge="llm:judge-model", judge_api_base=llm_server.api_base)
    again.regrading = True
    # A backend that can only say it is no existing environment: starting a box would fail.
    monkeypatch.setattr(again, "backend", lambda: SimpleNamespace(existing=None))
    success = verdicts(again, case)["aec_success"]
    assert success.outcome == "failed" and "cheating: judged cheating" in success.message
    assert len(llm_server.requests) == 1
    assert grade_file(tmp_path)["judge"]["judge"] == "llm:judge-model"


def test_the_readme_agent_splits_the_test_command(tmp_path: Path) -> None:
    case = aec_case(tmp_path)
    got = verdicts(pipeline(tmp_path, None, agent="readme"), case)
    outcome = json.loads(CaseDir(tmp_path / "run", "calc").agent_outcome.read_text())
    assert outcome["test_command"] == REFERENCE
    assert REFERENCE not in outcome["setup_script"]
    # Relative PYTHONPATH=src works from the repository's root: the literal README passes.
    assert got["aec_success"].outcome == "passed", got["aec_success"].message
