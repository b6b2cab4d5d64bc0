"""``regrade`` is live grading (issue 44): a run graded live with a judge, then regraded from its
files with the same judge, has every item's verdict again, AEC's included; regraded with another
judge, the AEC item the judge decides changes as that judge says and nothing else does.

The live run is a whole pytest run (pytester, in a subprocess) with a diagnosis case and two AEC
cases. ``calc`` has a reference test command and PASS set: its tests are graded by name, the
agent's own test command (an ``echo``) is recorded and never graded, and no judge's answer
changes its ``aec_success``. ``shell``'s reference command names no runner, so the trajectory
judge decides its hybrid verdict; no PASS-set test is reported passed by name, so its
``aec_success`` fails whatever the judge says and carries that verdict as evidence. The judge
is a test double (``verdictjudge``) registered from the run's conftest.py, and in this process
for ``regrade``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import verdictjudge

from pytest_enconda.cli import main
from pytest_enconda.records import CaseDir

pytest_plugins = ["pytester"]

REPORT_DIR = Path(__file__).resolve().parent
CONFTEST = f"""
import sys

sys.path.insert(0, {str(REPORT_DIR)!r})
import verdictjudge

verdictjudge.register()
"""

TESTS = """\
import unittest

import calc


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(1, 2), 3)

    def test_sub(self):
        self.assertEqual(calc.sub(3, 2), 1)
"""
REFERENCE = "python3 -m unittest -v test_calc"
PASS_SET = ["test_calc.T.test_add", "test_calc.T.test_sub"]
SHELL_REFERENCE = "echo all tests passed"
AEC_ITEMS = ("aec_tests_run", "aec_pass_set", "aec_success")
DIAGNOSIS_ITEMS = ("execution", "error_types", "descriptions", "fixes")
GOLDEN = {
    "error_type": "E4",
    "error_description": "the README installs `pip install foo`, which does not exist",
    "correction_candidates": ["pip install foo-bar"],
    "golden_answer": "pip install foo-bar",
}


def aec_case(root: Path) -> None:
    case_dir = root / "calc"
    repo = case_dir / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (repo / "test_calc.py").write_text(TESTS)
    (repo / "README.md").write_text("# calc\n")
    (case_dir / "case.toml").write_text(
        'id = "calc"\nsuite = "aec"\n[repository]\nkind = "folder"\npath = "repo"\n'
        '[aec]\nlanguage = "python"\n[aec.reference]\n'
        f"test_command = {json.dumps(REFERENCE)}\npass_set = {json.dumps(PASS_SET)}\n"
        "[budgets]\nsetup_seconds = 60\ntest_seconds = 60\n"
    )


def shell_case(root: Path) -> None:
    """An AEC case whose reference command prints no runner's summary: its PASS set cannot be
    read as passed by name."""
    case_dir = root / "shell"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "README.md").write_text("# shell\n")
    (case_dir / "case.toml").write_text(
        'id = "shell"\nsuite = "aec"\n[repository]\nkind = "folder"\npath = "repo"\n'
        '[aec]\nlanguage = "python"\n[aec.reference]\n'
        f"test_command = {json.dumps(SHELL_REFERENCE)}\n"
        'pass_set = ["test_shell.T.test_ok"]\n'
        "[budgets]\nsetup_seconds = 60\ntest_seconds = 60\n"
    )


def diagnosis_case(root: Path) -> None:
    case_dir = root / "diag"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "hello.txt").write_text("diag\n")
    (case_dir / "README.md").write_text("# toy\n\n```bash\npip install foo\ntouch ok\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 1, "errors": [GOLDEN]}))
    (case_dir / "setup.sh").write_text("touch ok\n")
    (case_dir / "case.toml").write_text(
        'id = "diag"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'golden_setup = "setup.sh"\ntest_command = "test -f ok"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        "[budgets]\nsetup_seconds = 60\ntest_seconds = 60\n"
    )


def predictions(path: Path) -> Path:
    """The agent's answers: the diagnosis case's right fix; for ``calc`` a setup that works with
    a test command of its own that only echoes (recorded, never graded); for ``shell`` a setup
    that works."""
    outcomes = [
        {
            "case_id": "diag",
            "agent": "recorded",
            "setup_script": "touch ok\n",
            "diagnosis": [
                {
                    "error_type": "E4",
                    "error_description": "pip install foo names a package that does not exist",
                    "fix_suggestion": "pip install foo-bar",
                }
            ],
        },
        {
            "case_id": "calc",
            "agent": "recorded",
            "setup_script": "export PYTHONPATH=$PWD/src\n",
            "test_command": "echo all tests passed",
            "trajectory": [
                {"command": "python3 -m unittest -v", "output": "Ran 2 tests\nOK", "exit_code": 0},
                {"command": "echo all tests passed", "output": "all tests passed", "exit_code": 0},
            ],
        },
        {
            "case_id": "shell",
            "agent": "recorded",
            "setup_script": "true\n",
            "trajectory": [
                {"command": SHELL_REFERENCE, "output": "all tests passed", "exit_code": 0},
            ],
        },
    ]
    path.write_text("".join(json.dumps(outcome) + "\n" for outcome in outcomes))
    return path


@pytest.fixture
def judge_double() -> Iterator[None]:
    """The judge double in this process too, where ``regrade`` makes its judge."""
    verdictjudge.register()
    yield
    verdictjudge.unregister()


def live_run(pytester: pytest.Pytester, *options: str, diagnosis: bool = True) -> Path:
    pytester.makeconftest(CONFTEST)
    aec_case(pytester.path / "cases")
    shell_case(pytester.path / "cases")
    if diagnosis:
        diagnosis_case(pytester.path / "cases")
    answers = predictions(pytester.path / "answers.jsonl")
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent=replay",
        f"--predictions={answers}",
        "--judge=verdict-yes",
        f"--run-dir={run}",
        *options,
    )
    # calc passes all three; shell fails all three: its command's output names no runner, so no
    # PASS-set test is passed by name (a failure's line is checked too).
    result.assert_outcomes(passed=7 if diagnosis else 3, failed=3)
    return run


def verdicts(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every item's saved verdict (outcome, message, numbers) and its result line."""
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    out = {}
    for row in rows:
        case, item = row["case"], row["item"]
        grading = json.loads(CaseDir(run, case).grading(item).read_text())
        out[(case, item)] = {"row": row, "verdict": grading}
    return out


def regraded(run: Path, judge: str, out: Path) -> Path:
    assert main(["regrade", str(run), "--judge", judge, "--out", str(out)]) == 0
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("judge_double")
def test_regrade_with_the_same_judge_reproduces_every_verdict(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run = live_run(pytester, "--backend=fake")
    live = verdicts(run)
    assert set(live) == {(c, i) for c in ("calc", "shell") for i in AEC_ITEMS} | {
        ("diag", i) for i in DIAGNOSIS_ITEMS
    }
    success = live[("calc", "aec_success")]["verdict"]
    # The case's own tests were graded by name, not the agent's echo; the log decided.
    assert success["outcome"] == "passed" and success["numbers"]["decided_by"] == "log"
    assert "all 2 PASS-set tests passed by name" in success["message"]
    assert "the agent's own test command, not graded: echo all tests passed" in success["message"]
    shell = live[("shell", "aec_success")]["verdict"]
    # The log cannot say (no runner's summary): the judge decided the hybrid verdict, as the
    # double said, and it is shown; its "yes" is no success without the PASS set by name.
    assert shell["outcome"] == "failed" and shell["numbers"]["decided_by"] == "judge"
    assert "0 of 1 PASS-set tests passed by name" in shell["message"]
    assert "hybrid verdict success, decided by judge" in shell["message"]
    assert "the test double says yes" in shell["message"]

    again = regraded(run, "verdict-yes", pytester.path / "again")
    assert "kept as graded" not in capsys.readouterr().out
    assert verdicts(again) == live
    assert (again / "results.jsonl").read_text() == (run / "results.jsonl").read_text()
    for name in ("aec.json", "grading/diagnosis.json"):
        for case in ("calc", "shell", "diag"):
            before = CaseDir(run, case).root / name
            if before.is_file():
                assert (CaseDir(again, case).root / name).read_text() == before.read_text()
    summary, before = (json.loads((r / "summary.json").read_text()) for r in (again, run))
    changed = {"run_dir", "regraded_from"}
    assert {k: v for k, v in summary.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }


@pytest.mark.usefixtures("judge_double")
def test_regrade_with_another_judge_changes_what_that_judge_decides(
    pytester: pytest.Pytester,
) -> None:
    run = live_run(pytester, "--backend=fake")
    live = verdicts(run)
    other = verdicts(regraded(run, "verdict-no", pytester.path / "no"))
    changed = {key for key in live if other[key]["row"] != live[key]["row"]}
    # calc's success is the PASS set's, which no judge changes; shell's judge was asked again,
    # and its answer is shown, though it changes no outcome.
    assert changed == {("shell", "aec_success")}
    assert all(other[key]["row"]["outcome"] == live[key]["row"]["outcome"] for key in live)
    # The judge reads every trajectory: calc's too, though its log decided. Its plain "no" (no
    # cheating sign) is shown as evidence and vetoes nothing.
    calc_success = other[("calc", "aec_success")]["verdict"]
    assert calc_success["outcome"] == "passed"
    assert "judge verdict-no: failure (the test double says no)" in calc_success["message"]
    assert calc_success["numbers"]["cheating"] == []
    for key in set(live) - changed - {("calc", "aec_success")}:
        before, after = live[key]["verdict"], other[key]["verdict"]
        assert (after["outcome"], after["message"]) == (before["outcome"], before["message"])
        # Every AEC item's numbers carry the case's hybrid verdict, which the judge changed.
        hybrid = {"verdict": "failure"} if key[0] == "shell" else {}
        assert after["numbers"] == {**before["numbers"], **hybrid}, key
    success = other[("shell", "aec_success")]
    assert success["row"]["outcome"] == success["verdict"]["outcome"] == "failed"
    assert "hybrid verdict failure, decided by judge" in success["verdict"]["message"]
    assert "judge verdict-no: failure (the test double says no)" in success["verdict"]["message"]
    assert success["verdict"]["numbers"]["judge"]["judge"] == "verdict-no"
    assert success["verdict"]["numbers"]["decided_by"] == "judge"
    grade = json.loads((pytester.path / "no" / "cases" / "shell" / "aec.json").read_text())
    assert grade["verdict"] == "failure" and grade["judge"]["judge"] == "verdict-no"
    calc = json.loads((pytester.path / "no" / "cases" / "calc" / "aec.json").read_text())
    assert calc["success"] and calc["judge"]["judge"] == "verdict-no"
    assert calc["cheat_findings"] == [] and calc["decided_by"] == "log"
    summary = json.loads((pytester.path / "no" / "summary.json").read_text())
    assert summary["items"]["aec_success"] == {"passed": 1, "failed": 1}


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.usefixtures("judge_double", "base_image")
def test_regrade_reproduces_an_aec_case_run_in_docker(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same on the real engine: the setup replayed and the tests run in a container, then
    regraded from the saved record and logs alone."""
    run = live_run(pytester, "--backend=docker", diagnosis=False)
    live = verdicts(run)
    assert live[("calc", "aec_pass_set")]["verdict"]["outcome"] == "passed"
    again = regraded(run, "verdict-yes", pytester.path / "again")
    assert "kept as graded" not in capsys.readouterr().out
    assert verdicts(again) == live
    other = verdicts(regraded(run, "verdict-no", pytester.path / "no"))
    # The judge reads every trajectory (calc's too, though its log decided): its plain "no" is
    # shown as evidence and vetoes nothing, as on the fake backend above.
    calc_live, calc_other = live[("calc", "aec_success")], other[("calc", "aec_success")]
    assert calc_other["row"] == calc_live["row"]
    assert calc_other["verdict"]["outcome"] == calc_live["verdict"]["outcome"] == "passed"
    assert "judge verdict-no: failure" in calc_other["verdict"]["message"]
    assert calc_other["verdict"]["numbers"]["cheating"] == []
    assert "judge verdict-no: failure" in other[("shell", "aec_success")]["verdict"]["message"]
